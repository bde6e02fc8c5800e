"""build_site on a tiny course: the pages, the assets, links that resolve, nothing remote, the cache
reused on a rebuild, and failures that leave the previous site alone."""
from __future__ import annotations

import re
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import nbformat
import pytest
from nbformat.v4 import new_code_cell

from autograder.site.build import MARKER, OutputFolderError, SiteBuildError, build_site
from autograder.site.executed import LessonExecutionError

from site_test_course import write_tiny_course


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        for name in ("href", "src"):
            if attrs.get(name):
                self.urls.append(attrs[name])


def _parse(path: Path) -> _Links:
    links = _Links()
    links.feed(path.read_text(encoding="utf-8"))
    return links


def test_the_site_has_a_map_a_lesson_page_the_released_quiz_and_assets(tiny_site):
    files = sorted(p.relative_to(tiny_site).as_posix() for p in tiny_site.rglob("*") if p.is_file())
    assert files == [MARKER, "assets/favicon.svg", "assets/quiz-hashing.js", "assets/quiz.js", "assets/search-index.js",
                     "assets/site.css", "assets/site.js", "guides/grading.html", "guides/students.html",
                     "index.html", "lessons/figures/tiny-1.png",
                     "lessons/figures/tiny-next-1.png", "lessons/tiny-next.html", "lessons/tiny.html",
                     "notebooks/tiny-next.ipynb", "notebooks/tiny-next.ipynb.js", "notebooks/tiny.ipynb",
                     "notebooks/tiny.ipynb.js", "quizzes/tiny-next.released.yaml", "quizzes/tiny.released.yaml"]
    assert ".highlight" in (tiny_site / "assets" / "site.css").read_text()  # Pygments colours appended
    lesson = (tiny_site / "lessons" / "tiny.html").read_text(encoding="utf-8")
    assert "tiles per axis: 14" in lesson and 'src="figures/tiny-1.png"' in lesson
    assert 'id="check-yourself"' in lesson
    assert '<link rel="icon" href="../assets/favicon.svg"' in lesson


def test_the_map_counts_the_questions_the_page_scores(tiny_site):
    # The tiny quiz has 6 questions the page checks and scores, and 1 code question it does not.
    index = (tiny_site / "index.html").read_text(encoding="utf-8")
    assert "Check yourself: 6 questions, plus 1 to check with the grader</a>" in index
    lesson = (tiny_site / "lessons" / "tiny.html").read_text(encoding="utf-8")
    assert "0 / 6 correct" in lesson


@pytest.mark.parametrize("scored,code,text", [
    (10, 1, "10 questions, plus 1 to check with the grader"),
    (3, 2, "3 questions, plus 2 to check with the grader"),
    (1, 0, "1 question"),
    (0, 1, "1 question to check with the grader"),
])
def test_quiz_link_text(scored, code, text):
    from autograder.site.course_map import QuizCount

    assert QuizCount(scored, code).link_text() == text


def test_a_lesson_page_says_where_and_when_its_numbers_were_measured(tiny_site):
    import platform
    from html import unescape

    from autograder.site.executed import _version, cpu_model

    lesson = unescape(re.sub(r"\s+", " ", (tiny_site / "lessons" / "tiny.html").read_text(encoding="utf-8")))
    banner = lesson[lesson.index('<aside class="measured-on"'):lesson.index("</aside>")]
    assert "Measured on the machine that built this site, not on yours." in banner
    assert f"{cpu_model()} ({platform.machine()})" in banner  # the tests build on this machine
    assert f"TVM {_version('apache-tvm')}, one TVM thread" in banner
    assert re.search(r"at build time, on \d{4}-\d{2}-\d{2} \(UTC\)", banner)
    assert lesson.index('<aside class="measured-on"') < lesson.index('<article class="notebook">')
    # what to run is what every reader has: students get no Makefile (the student edition)
    assert "make " not in banner and "lessons/" in banner and "download it above" in banner


def test_the_banner_survives_a_run_that_recorded_nothing():
    from nbformat.v4 import new_notebook

    from autograder.site import pages
    from autograder.site.executed import MeasuredOn

    unknown = MeasuredOn.of(new_notebook())
    assert unknown == MeasuredOn(None, None, None, None)
    from autograder.site.navigation import CourseNav, NavLesson, NavUnit, Pager
    from autograder.site.notebook_links import NotebookLinks

    lesson = NavLesson(1, "l", "L", "lessons/l.html", 1)
    nav = CourseNav((NavUnit(1, "u", "U", "index.html#unit-u", (lesson,), ()),))
    html = pages.render("lesson.html", root="../", course="c", nav=nav, current="l", unit=nav.units[0],
                        nav_lesson=lesson, pager=Pager(None, None), title="L", toc=[],
                        links=NotebookLinks("notebooks/l.ipynb", "l.ipynb"), lesson={"title": "L"},
                        notebook_html="", quiz_html="", assignments=[], measured_on=unknown)
    assert "a CPU the build did not record" in html and "TVM (version not recorded)" in html


def test_every_page_is_a_complete_responsive_document(tiny_site):
    for page in ("index.html", "lessons/tiny.html"):
        html = (tiny_site / page).read_text(encoding="utf-8")
        assert html.startswith("<!DOCTYPE html>") and '<html lang="en">' in html
        assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in html
        assert re.search(r"<title>[^<]+</title>", html)
        assert '<main id="main"' in html and 'class="skip-link" href="#main"' in html


def test_links_resolve_inside_the_site_and_nothing_is_remote(tiny_site):
    for page in tiny_site.rglob("*.html"):
        links = _parse(page)
        for url in links.urls:
            parts = urlsplit(url)
            assert parts.scheme in ("", "data"), f"{page.name} links outside the site: {url}"
            if parts.scheme == "data":
                continue
            if parts.path:
                target = (page.parent / unquote(parts.path)).resolve()
                assert target.is_file(), f"{page.name}: {url} does not resolve"
                assert tiny_site.resolve() in target.parents
            else:
                target = page
            if parts.fragment:
                assert parts.fragment in _parse(target).ids, f"{page.name}: no #{parts.fragment} in {target.name}"
    for asset in (tiny_site / "assets").iterdir():
        assert not re.search(r"https?://(?!www\.w3\.org)", asset.read_text(encoding="utf-8")), asset.name


def test_a_rebuild_reuses_the_executed_lesson(use_cache, tiny_course, tiny_site, tmp_path):
    started = time.monotonic()
    report = build_site(tmp_path / "again", tiny_course)
    assert report.executed == [] and report.from_cache == ["lessons/tiny.ipynb", "lessons/tiny-next.ipynb"]
    assert time.monotonic() - started < 10
    assert report.pages == ["index.html", "lessons/tiny.html", "lessons/tiny-next.html",
                            "guides/students.html", "guides/grading.html"]
    assert (report.out / "lessons" / "tiny.html").read_text(encoding="utf-8").count("tiles per axis: 14") == 1


def test_rebuilding_replaces_the_previous_site(use_cache, tiny_course, tmp_path):
    out = tmp_path / "site"
    build_site(out, tiny_course)
    (out / "stale.html").write_text("from an old build")
    build_site(out, tiny_course)
    assert not (out / "stale.html").exists() and (out / "index.html").is_file()
    assert [p.name for p in tmp_path.iterdir()] == ["site"]  # no staging or old folders left behind


def test_refuses_to_replace_a_folder_it_did_not_build(use_cache, tiny_course, tmp_path):
    out = tmp_path / "my-notes"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    with pytest.raises(OutputFolderError, match="not a site built by tvm-course"):
        build_site(out, tiny_course)
    assert (out / "thesis.tex").read_text() == "precious"


def test_a_lesson_that_fails_leaves_the_previous_site_alone(use_cache, tmp_path):
    syllabus = write_tiny_course(tmp_path / "course-root")
    out = tmp_path / "site"
    build_site(out, syllabus)
    before = (out / "lessons" / "tiny.html").read_text(encoding="utf-8")
    notebook_path = tmp_path / "course-root" / "lessons" / "tiny.ipynb"
    notebook = nbformat.read(notebook_path, as_version=4)
    notebook.cells.append(new_code_cell("raise RuntimeError('the lesson broke')"))
    nbformat.write(notebook, notebook_path)
    with pytest.raises(LessonExecutionError, match="tiny.ipynb.*the lesson broke"):
        build_site(out, syllabus)
    assert (out / "lessons" / "tiny.html").read_text(encoding="utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["course-root", "site"]


def test_a_course_map_with_a_missing_file_is_refused(use_cache, tmp_path):
    syllabus = write_tiny_course(tmp_path / "course-root")
    (tmp_path / "course-root" / "quizzes" / "tiny.yaml").unlink()
    with pytest.raises(SiteBuildError, match="quizzes/tiny.yaml does not exist"):
        build_site(tmp_path / "site", syllabus)
    assert not (tmp_path / "site").exists()


def test_an_unreadable_course_map_is_refused(tmp_path):
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "syllabus.yaml").write_text("units: [")
    with pytest.raises(SiteBuildError, match="cannot read the course map"):
        build_site(tmp_path / "site", tmp_path / "course" / "syllabus.yaml")
