"""`tvm-course site build`: the static course website, from the project's own sources.

    _site/index.html                         the map (course/syllabus.yaml)
    _site/lessons/<lesson id>.html           a lesson: where its numbers were measured (the
                                             machine that executed it, when, which TVM), its
                                             notebook executed, then its quiz
    _site/lessons/figures/<lesson id>-<n>.*  the lesson's figures (SVG, or PNG at twice their size)
    _site/notebooks/<notebook>.ipynb         each lesson's notebook to download, outputs stripped
    _site/notebooks/<notebook>.ipynb.js      the same as a script: from file://, where a browser shows
                                             a linked .ipynb as text, site.js downloads this one
    _site/quizzes/<quiz id>.released.yaml    the released quiz, for checking code answers locally
    _site/guides/<name>.html                 a guide from the repository's docs/ (guides.py: which
                                             ones; a course without docs/ has none)
    _site/assets/                            the stylesheet, the page and quiz scripts, the icon, and
                                             search-index.js (search.py)

Every page has the course map (a sidebar, or a menu on a narrow screen), a search box, previous /
next links and, on a lesson page, a table of contents (on the right of a wide screen, following
the reader's place); see navigation.py, page_structure.py and search.py. With a
`repository` (the course's public GitHub repository), lesson pages also link Colab and Binder.

The slow part, executing the lessons, goes through executed.executed_notebook and its cache,
so a rebuild with unchanged sources only re-renders. The site is built in a staging folder
next to OUT and moved into place when complete, so a failed build leaves the old site intact.
OUT is only ever replaced when it is a site this command built (it holds MARKER).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from autograder import syllabus as syllabus_module

from . import DEFAULT_OUT, course_map, guides, pages, search
from .executed import MeasuredOn, cached_path, executed_notebook
from .navigation import NavGuide, course_nav
from .notebook_html import render_notebook
from .notebook_links import REPO_URL_ENV, Repository, links_for, stripped_notebook
from .page_structure import TocEntry
from .quiz_html import released_document, released_yaml, render_quiz
from ..errors import TvmCourseError

MARKER = ".tvm-course-site"
STATIC_DIR = Path(__file__).resolve().parent / "static"
STATIC_FILES = ("site.css", "site.js", "quiz-hashing.js", "quiz.js", "favicon.svg")
HIGHLIGHT_STYLE = "default"
HIGHLIGHT_STYLE_DARK = "github-dark"


class SiteBuildError(RuntimeError, TvmCourseError):
    """The site cannot be built; the message says what to fix."""


class OutputFolderError(SiteBuildError):
    """The output folder cannot be used: it holds something other than a site this command built,
    or its parent folder cannot be written to."""


@dataclass
class BuildReport:
    out: Path
    pages: list[str] = field(default_factory=list)  # relative to out
    executed: list[str] = field(default_factory=list)  # notebooks run by a kernel in this build
    from_cache: list[str] = field(default_factory=list)  # notebooks whose executed copy was reused
    seconds: float = 0.0

    @property
    def index(self) -> Path:
        return self.out / "index.html"


def build_site(out: str | Path = DEFAULT_OUT, syllabus_path: str | Path = syllabus_module.DEFAULT_PATH, *,
               refresh: bool = False, repo_url: str | None = None, repo_branch: str = "main",
               log: Callable[[str], None] = lambda message: None) -> BuildReport:
    """Build the whole site into `out`; SiteBuildError (or LessonExecutionError) when it cannot.

    `repo_url` (default: $TVM_COURSE_REPO_URL) is the course's public GitHub repository: with it,
    lesson pages link Colab and Binder for their notebook on `repo_branch`."""
    started = time.monotonic()
    out = Path(out).resolve()
    _check_replaceable(out)
    repo_url = repo_url if repo_url is not None else os.environ.get(REPO_URL_ENV) or None
    repository = Repository.parse(repo_url, repo_branch) if repo_url else None  # RepositoryURLError
    try:
        syllabus = syllabus_module.load(syllabus_path)
    except syllabus_module.SyllabusError as err:
        raise SiteBuildError(f"cannot read the course map: {err}") from None
    root = syllabus_module.course_root(syllabus)
    missing = syllabus_module.problems(syllabus, root)
    if missing:
        raise SiteBuildError("the course map has problems (see `tvm-course map`):\n"
                             + "\n".join(f"  - {problem}" for problem in missing))

    report = BuildReport(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.building-", dir=out.parent))
    except OSError as err:
        raise OutputFolderError(f"cannot build the site in {out.parent} ({err.strerror or err}); "
                                "choose a folder you can write to with -o") from None
    try:
        _write_assets(staging)
        rendered_guides = guides.render_guides(root, repository)
        nav = course_nav(syllabus, tuple(NavGuide(g.name, g.nav_title, g.page) for g in rendered_guides))
        # A link to another lesson's notebook goes to its page (pages are side by side in lessons/).
        lesson_pages = {Path(lesson.notebook).name: f"{lesson.id}.html"
                        for unit in syllabus.units for lesson in unit.lessons}
        question_counts: dict[str, course_map.QuizCount] = {}
        released: dict[str, dict] = {}  # lesson id -> its released quiz
        index: list[dict] = []
        for unit in syllabus.units:
            for lesson in unit.lessons:
                notebook_path = root / lesson.notebook
                cached = not refresh and cached_path(notebook_path).is_file()
                log(f"{lesson.notebook}: {'executed copy from the cache' if cached else 'executing (this takes a while)'}")
                notebook = executed_notebook(notebook_path, refresh=refresh)
                (report.from_cache if cached else report.executed).append(lesson.notebook)
                document = released_document(root / lesson.quiz)
                question_counts[lesson.id] = course_map.QuizCount.of(document)
                released[lesson.id] = document
                page = course_map.lesson_page(lesson.id)
                released_file = f"quizzes/{document['id']}.released.yaml"
                _write(staging / released_file, released_yaml(document))
                rendered = render_notebook(notebook, notebook_path.parent, figure_prefix=lesson.id,
                                           lesson_pages=lesson_pages)
                for figure in rendered.figures:
                    _write_bytes(staging / Path(page).parent / figure.file, figure.data)
                links = links_for(lesson.notebook, repository)
                notebook_text = stripped_notebook(notebook_path)
                _write(staging / links.download, notebook_text)
                _write(staging / (links.download + ".js"), notebook_script(links.download_name, notebook_text))
                quiz_html = render_quiz(document, released_file=f"../{released_file}")
                assignments = [a for a in unit.assignments if a.after == lesson.id]
                toc = [*rendered.toc, TocEntry(2, "check-yourself", "Check yourself")]
                if assignments:
                    toc.append(TocEntry(2, "next-up", "Next: the assignment" + ("s" if len(assignments) > 1 else "")))
                html = pages.render(
                    "lesson.html", root="../", course=syllabus.course, nav=nav, current=lesson.id,
                    unit=nav.unit_of(lesson.id), nav_lesson=nav.lesson(lesson.id), pager=nav.pager(lesson.id),
                    title=rendered.title or lesson.title, toc=toc, links=links,
                    lesson=lesson, notebook_html=rendered.body_html,
                    quiz_html=quiz_html, assignments=assignments, measured_on=MeasuredOn.of(notebook))
                _write(staging / page, html)
                report.pages.append(page)
                lesson_title = rendered.title or lesson.title
                index += search.lesson_entries(lesson_title, page, rendered.body_html)
                index += search.quiz_entries(lesson_title, page, document)
        for guide, nav_guide in zip(rendered_guides, nav.guides):
            html = pages.render(
                "guide.html", root="../", course=syllabus.course, nav=nav, current=nav_guide.current,
                pager=nav.guide_pager(guide.name), title=guide.title, nav_title=guide.nav_title,
                toc=guide.toc, body_html=guide.body_html)
            _write(staging / guide.page, html)
            report.pages.append(guide.page)
            index += search.lesson_entries(guide.title, guide.page, guide.body_html)
        index += search.map_entries(course_map.map_entries(syllabus, question_counts))
        _write(staging / "assets" / "search-index.js", search.index_script(index))
        _write(staging / "index.html", course_map.render_map(syllabus, question_counts, released, nav=nav))
        report.pages.insert(0, "index.html")
        _write(staging / MARKER, "Built by `tvm-course site build`; the next build replaces this folder.\n")
        _replace(out, staging)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.seconds = time.monotonic() - started
    return report


def notebook_script(name: str, text: str) -> str:
    """The notebook as a script that hands its text to site.js (a page on file:// can load it)."""
    return f"window.TvmCourseNotebook && window.TvmCourseNotebook({pages.script_json(name)}, {pages.script_json(text)});\n"


def _check_replaceable(out: Path) -> None:
    if out.exists() and not (out / MARKER).is_file() and (not out.is_dir() or any(out.iterdir())):
        raise OutputFolderError(f"{out} exists and is not a site built by tvm-course (no {MARKER} in it); "
                             "choose a new or empty folder with -o")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _write_bytes(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def _write_assets(staging: Path) -> None:
    from pygments.formatters import HtmlFormatter

    assets = staging / "assets"
    assets.mkdir(parents=True)
    for name in STATIC_FILES:
        shutil.copyfile(STATIC_DIR / name, assets / name)
    # Code in lessons is highlighted by nbconvert with Pygments classes under .highlight; the
    # block's background is the stylesheet's (--code-bg), so that both styles sit on a colour
    # their contrast was checked against.
    light = HtmlFormatter(style=HIGHLIGHT_STYLE).get_style_defs(".highlight")
    dark = HtmlFormatter(style=HIGHLIGHT_STYLE_DARK).get_style_defs(".highlight")
    with open(assets / "site.css", "a", encoding="utf-8") as stream:
        stream.write("\n/* Pygments '" + HIGHLIGHT_STYLE + "' style, for highlighted code */\n" + light + "\n"
                     "/* Pygments '" + HIGHLIGHT_STYLE_DARK + "' style, where the reader prefers dark */\n"
                     "@media (prefers-color-scheme: dark) {\n" + dark + "\n}\n"
                     ".highlight, .highlight pre { background: transparent; }\n")


def _replace(out: Path, staging: Path) -> None:
    """Move the finished staging folder to `out`, removing the previous build."""
    staging.chmod(0o755)  # mkdtemp makes it private; a website folder is meant to be read
    old = None
    if out.exists():
        old = out.with_name(f".{out.name}.old-{int(time.time() * 1000)}")
        out.rename(old)
    staging.rename(out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
