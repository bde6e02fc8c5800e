"""The student edition: everything students receive, built into one folder, and checked.

`make student-edition` (or `python -m autograder.edition.build -o DIR`) writes

    tvm_course-VERSION-py3-none-any.whl   the package (the self-check, the lessons' helpers, quizzes)
    lessons/*.ipynb                      the lessons, outputs stripped
    quizzes/*.yaml                       the quizzes released: answers as salted hashes
    assignments/ASSIGNMENT/              nbgrader's release: no solutions, hidden tests or key
    site/                                the course website
    README.md                            for students: how to install and start

and then opens every file in it (the wheel's members too) and refuses the edition if any
holds a solution, a hidden test, an answer key or the course secret (`find_leaks`).

The repository is the instructor's edition: course/source/ (the solutions), course/solutions/,
quizzes/ (the keys) and the course secret never go in. The wheel is built from a clean copy
of autograder/, jupyter-config/ and pyproject.toml (never from a build folder that might hold stale modules),
with this README as its description.

Assignments: the instructor's own release (course/release/ASSIGNMENT/, what students fetch
and what tampering is checked against) when there is one; else nbgrader generate_assignment
in a scratch copy of the course, with the instructor's secret and gradebook when the course
has them (then variants.json lists the class), without them no variants.json (the README says
how the instructor adds it). The instructor's course is never written to.
"""
from __future__ import annotations

import argparse
import io
import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from ..errors import TvmCourseError

REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = REPO_ROOT / "build" / "student-edition"
README_TITLE = "# tvm-course: the student edition"
PACKAGE = "autograder"
# The Jupyter settings the wheel installs into {sys.prefix}/etc/jupyter (pyproject.toml's data-files).
JUPYTER_CONFIG = "jupyter-config"
# A copy of this many consecutive lines of a reference solution, anywhere, is the solution.
SOLUTION_WINDOW = 6
# Quiz and answer-key texts shorter than this are too common to call a leak (a name, a number).
MIN_KEY_TEXT = 40
PRIVATE_NAMES = ("variant-secret", "gradebook.db")
PRIVATE_PARTS = ("course/source/", "course/solutions/", "solutions/", "source/")  # folders: autograder/course/source_edits.py is the package's
# The quizzes as a notebook in lessons/ reaches them (a notebook runs in its own folder).
QUIZ_FROM_LESSONS = "../quizzes/"
# What installing the wheel into a fresh venv takes, pip fetching every dependency from PyPI: 3 min 53 s
# measured on a busy two-core AMD EPYC VM (load average 7-9); more on a slow link, less from pip's cache.
INSTALL_TIME = "a few minutes"


class EditionError(RuntimeError, TvmCourseError):
    """The edition cannot be built, or what was built holds something students must not get."""


@dataclass
class Edition:
    out: Path
    wheel: Path
    lessons: list[Path] = field(default_factory=list)
    quizzes: list[Path] = field(default_factory=list)
    assignments: dict[str, str] = field(default_factory=dict)  # assignment -> where its release came from
    variants: dict[str, bool] = field(default_factory=dict)  # assignment -> variants.json included
    site: Path | None = None


# ---------------------------------------------------------------------------------------------
# The notebooks' first cells


def install_cell_source(wheel_url: str) -> str:
    """The cell a lesson or assignment opens with when the edition is built with a wheel URL
    (Colab, or any kernel without the course package)."""
    return ("# Colab, or any Jupyter without the course package: install it (a few minutes). If Colab asks to\n"
            "# restart the session, do, then run on from the next cell.\n"
            f"%pip install --quiet {wheel_url}")


def _install_cell(wheel_url: str):
    import nbformat

    cell = nbformat.v4.new_code_cell(install_cell_source(wheel_url))
    cell.metadata["tags"] = ["install"]
    return cell


def student_notebook(path: Path, wheel_url: str | None = None):
    """A notebook as students get it: no outputs, no execution counts, the install cell first
    when there is a wheel URL."""
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    if wheel_url:
        notebook.cells.insert(0, _install_cell(wheel_url))
    return notebook


# ---------------------------------------------------------------------------------------------
# Building


def package_version(root: Path = REPO_ROOT) -> str:
    found = re.search(r'^version\s*=\s*"([^"]+)"', (root / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    if not found:
        raise EditionError(f"no version in {root / 'pyproject.toml'}")
    return found.group(1)


def wheel_name(root: Path = REPO_ROOT) -> str:
    return f"tvm_course-{package_version(root)}-py3-none-any.whl"


def build_wheel(root: Path, out: Path, readme: str, log: Callable[[str], None]) -> Path:
    """The package's wheel, built by pip from a clean copy of autograder/, jupyter-config/ and pyproject.toml
    with `readme` as its README (the description pip and PyPI show)."""
    with tempfile.TemporaryDirectory(prefix="tvm-course-wheel-") as scratch:
        source = Path(scratch) / "tvm-course"
        source.mkdir()
        shutil.copytree(root / PACKAGE, source / PACKAGE, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints"))
        shutil.copy2(root / "pyproject.toml", source / "pyproject.toml")
        shutil.copytree(root / JUPYTER_CONFIG, source / JUPYTER_CONFIG)  # pyproject's data-files
        (source / "README.md").write_text(readme, encoding="utf-8")
        log("building the wheel (pip wheel --no-deps)")
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "--disable-pip-version-check",
                               "-w", str(out), str(source)], capture_output=True, text=True)
        if done.returncode != 0:
            raise EditionError(f"pip wheel failed:\n{(done.stdout + done.stderr)[-3000:]}")
    wheel = out / wheel_name(root)
    if not wheel.is_file():
        raise EditionError(f"pip wheel did not write {wheel.name}: {sorted(p.name for p in out.iterdir())}")
    return wheel


def _course_has_class(course: Path) -> tuple[bytes | None, list[str]]:
    """The instructor's secret (or None) and the students in the course's gradebook."""
    from ..problems.variants import VariantError, course_secret

    try:
        secret = course_secret(course)
    except VariantError:
        secret = None
    students: list[str] = []
    if (course / "gradebook.db").is_file():
        from nbgrader.api import Gradebook

        from ..course.course_dir import course_directory, load_course_config

        coursedir = course_directory(load_course_config(course))
        with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
            students = [s.id for s in gradebook.students]
    return secret, students


def release_assignments(course: Path, assignments: list[str], out: Path, log: Callable[[str], None]) -> tuple[dict[str, str], dict[str, bool]]:
    """Each assignment's release into out/ASSIGNMENT/: the instructor's own release when the
    course has one, else nbgrader generate_assignment in a scratch copy of the course."""
    from ..problems.variants import SECRET_FILE, TABLE_FILE
    from ..rehearsal.scratch_course import copy_course, release_assignment, release_leaks

    origins, variants = {}, {}
    secret, students = _course_has_class(course)
    with tempfile.TemporaryDirectory(prefix="tvm-course-release-") as scratch:
        root = None
        for assignment in assignments:
            existing = course / "release" / assignment
            if existing.is_dir() and any(existing.glob("*.ipynb")):
                released, origins[assignment] = existing, f"the instructor's release ({existing})"
            else:
                if root is None:
                    root = copy_course(course, Path(scratch) / "course")
                    if secret and students:  # the class's variants, as the instructor's own release would list them
                        (root / SECRET_FILE).write_bytes(secret)
                        shutil.copy2(course / "gradebook.db", root / "gradebook.db")
                log(f"releasing {assignment} (nbgrader generate_assignment, in a scratch copy of the course)")
                released = release_assignment(root, assignment, students=[])
                origins[assignment] = "nbgrader generate_assignment" + (f" for the {len(students)} students in the gradebook" if secret and students else "")
            leaks = release_leaks(released)
            if leaks:
                raise EditionError(f"the release of {assignment} holds what students must not get: " + "; ".join(leaks))
            target = out / assignment
            shutil.copytree(released, target, ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
            table = target / TABLE_FILE
            listed = table.is_file() and bool(json.loads(table.read_text(encoding="utf-8")).get("variants"))
            if table.is_file() and not listed:
                table.unlink()  # a scratch secret's empty table: useless to students, and misleading
            variants[assignment] = listed
    return origins, variants


def build(out: str | Path = DEFAULT_OUT, *, root: str | Path = REPO_ROOT, syllabus: str | Path | None = None,
          course: str | Path | None = None, wheel_url: str | None = None, repo_url: str | None = None,
          site: bool = True, site_syllabus: str | Path | None = None,
          log: Callable[[str], None] = lambda message: None) -> Edition:
    """Build the student edition into `out` (replaced), then check it with `find_leaks`.
    `site_syllabus`: build the website from another course map (the tests' tiny course)."""
    from .. import syllabus as syllabus_module
    from ..quiz.loading import load_instructor
    from ..quiz.release import release, write_released

    import nbformat

    root = Path(root).resolve()
    course = Path(course).resolve() if course else root / "course"
    syllabus_path = Path(syllabus).resolve() if syllabus else root / "course" / "syllabus.yaml"
    plan = syllabus_module.load(syllabus_path)
    content_root = syllabus_module.course_root(plan)
    out = Path(out).resolve()
    _check_replaceable(out)
    staging = out.with_name(out.name + ".partial")
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir(parents=True)

    lessons = [lesson for unit in plan.units for lesson in unit.lessons]
    assignments = [a.id for unit in plan.units for a in unit.assignments]
    edition = Edition(out=out, wheel=out / wheel_name(root))

    for lesson in lessons:
        target = staging / "lessons" / Path(lesson.notebook).name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(student_notebook(content_root / lesson.notebook, wheel_url), target)
        edition.lessons.append(out / "lessons" / target.name)
    log(f"{len(lessons)} lessons, outputs stripped")

    for lesson in lessons:
        quiz, _ = load_instructor(content_root / lesson.quiz)
        target = staging / "quizzes" / Path(lesson.quiz).name
        write_released(release(quiz), target)
        edition.quizzes.append(out / "quizzes" / target.name)
    log(f"{len(edition.quizzes)} quizzes released (salted hashes)")

    if assignments:
        edition.assignments, edition.variants = release_assignments(course, assignments, staging / "assignments", log)
        if wheel_url:
            for notebook_path in sorted((staging / "assignments").glob("*/*.ipynb")):
                notebook = nbformat.read(notebook_path, as_version=4)
                notebook.cells.insert(0, _install_cell(wheel_url))
                nbformat.write(notebook, notebook_path)

    readme = student_readme(edition, wheel_url=wheel_url, root=root, site=site)
    edition.wheel = build_wheel(root, staging, readme, log)
    edition.wheel = out / edition.wheel.name
    (staging / "README.md").write_text(readme, encoding="utf-8")

    if site:
        from ..site.build import build_site

        log("building the website (tvm-course site build)")
        build_site(staging / "site", Path(site_syllabus) if site_syllabus else syllabus_path, repo_url=repo_url, log=log)
        edition.site = out / "site"
        if wheel_url:  # the site's "Download the notebook" copies open with the install cell too
            for notebook_path in sorted((staging / "site" / "notebooks").glob("*.ipynb")):
                nbformat.write(student_notebook(notebook_path, wheel_url), notebook_path)

    leaks = find_leaks(staging, course=course, quizzes=[content_root / lesson.quiz for lesson in lessons])
    if leaks:
        raise EditionError("the student edition holds what students must not get (not written):\n  " + "\n  ".join(leaks[:40]))
    if out.exists():
        shutil.rmtree(out)
    staging.rename(out)
    return edition


def _check_replaceable(out: Path) -> None:
    if out.exists() and any(out.iterdir()):
        readme = out / "README.md"
        if not (readme.is_file() and readme.read_text(encoding="utf-8", errors="replace").startswith(README_TITLE)):
            raise EditionError(f"{out} exists and is not a student edition: not replacing it (remove it, or choose another -o)")


# ---------------------------------------------------------------------------------------------
# The students' README


def student_readme(edition: Edition, *, wheel_url: str | None, root: Path = REPO_ROOT, site: bool = True) -> str:
    wheel = wheel_name(root)
    install = f"pip install {wheel_url}" if wheel_url else f"pip install {wheel}"
    lines = [
        README_TITLE,
        "",
        "Lessons, quizzes and assignments of the TVM unit, and the package that runs them",
        "(`autograder`: the lessons' helpers, the quizzes and the same schedule grader your",
        "instructor uses). Needs Python 3.10-3.12; the package brings TVM 0.27, Jupyter and nbgrader.",
        "",
        "## Install (one line)",
        "",
        "- **Your laptop** (Linux, macOS, Windows with WSL), in this folder:",
        "",
        "  ```",
        f"  python3 -m venv .venv && .venv/bin/pip install {wheel}",
        "  .venv/bin/jupyter lab",
        "  ```",
        "",
        f"  pip fetches TVM, Jupyter and nbgrader: {INSTALL_TIME}. As root (in a container, say),",
        "  `jupyter lab` refuses to start (\"Running as root is not recommended\"): run it as a normal user,",
        "  or start it with `.venv/bin/jupyter lab --allow-root`.",
        "",
        "- **JupyterHub**: your instructor installs the package on the hub; nothing to do. If a",
        f"  notebook says the course package is missing, run `%pip install {wheel_url or wheel}` in it",
        "  and restart the kernel.",
        "- **Google Colab**: " + (f"each notebook's first cell installs the package (`%pip install {wheel_url}`);"
                                 " run it, then the rest." if wheel_url else
                                 f"upload `{wheel}` to the session and run `%pip install {wheel}` in a first cell"
                                 " (your instructor may give you a link to it instead)."),
        "",
        "Every notebook checks at its top that the package is there, and says what to run if not.",
        "",
        "GPU assignments are checked without a GPU by running their kernels on an OpenCL device on your",
        "CPU: the package brings PoCL and, for CPUs too new for it (an AMD Zen 5, say), the slower Oclgrind",
        "simulator (x86-64 Linux). `.venv/bin/tvm-course doctor` says which works here. On Debian or",
        "Ubuntu, `sudo apt-get install pocl-opencl-icd` gives a fast one on any x86-64 CPU; elsewhere (a Mac,",
        "ARM) such checks stay pending, never a zero, and your instructor grades them on a GPU.",
        "",
        "## What is here",
        "",
        f"- `{wheel}`: the course package (`{install}`).",
        "- `lessons/`: the lesson notebooks, to run top to bottom; every number is measured on your",
        "  machine as it runs.",
        "- `quizzes/`: each lesson's self-check quiz (answers as salted hashes). In a terminal, in this",
        "  folder: `.venv/bin/tvm-course quiz take quizzes/two-levels.yaml`; in a lesson's notebook (which",
        f"  runs in `lessons/`): `from autograder import quiz; quiz.show(\"{QUIZ_FROM_LESSONS}two-levels.yaml\")`.",
    ]
    if site:
        lines.append("- `site/`: the course website: open `site/index.html` (or `tvm-course site serve -d site`).")
    if edition.assignments:
        lines += [
            "- `assignments/`: the assignments as nbgrader releases them. On JupyterHub fetch them in the",
            "  Assignments tab (or `nbgrader fetch_assignment ASSIGNMENT --course tvm-course`) and submit there.",
            "  Elsewhere open `assignments/ASSIGNMENT/ASSIGNMENT.ipynb` and hand it in as your instructor says.",
            "  The notebook's first cell prints your own workload: it needs your student id (on JupyterHub your",
            "  user name; elsewhere `%env TVM_COURSE_STUDENT=your-id` in a cell first) and the `variants.json`",
            "  beside the notebook. Your id is the one your course's LMS uses: on Canvas your Canvas user id, a",
            "  number (open Account > Profile, or People and your own name: the page's address ends",
            "  `/users/NUMBER`), on Moodle your email address.",
        ]
        missing = sorted(a for a, listed in edition.variants.items() if not listed)
        if missing:
            lines += [
                "",
                f"**No `variants.json` in {', '.join(f'`assignments/{a}/`' for a in missing)}**: this edition was built",
                "without the class's roster and the course secret. Instructor: enrol the class and create the secret",
                "(`tvm-course roster ...`, `tvm-course variants init` in `course/`), then run `make student-edition`",
                "again, or copy `course/release/ASSIGNMENT/variants.json` from `nbgrader generate_assignment` into",
                "`assignments/ASSIGNMENT/`. Students: your instructor hands it out with the assignment.",
            ]
    lines += [
        "",
        "## Check your work",
        "",
        "```python",
        "import autograder",
        "autograder.check(\"tile-fused-conv\", schedule)   # PASSED/FAILED, score, checks, speedup",
        "```",
        "",
        "or from a shell, on a file that defines `schedule(sch)`:",
        "`.venv/bin/tvm-course grade-schedule tile-fused-conv my_schedule.py`.",
        "",
    ]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Checking: nothing students receive holds an answer


def _normalised_lines(text: str) -> list[str]:
    """Lines as the six-line check compares them (tests/test_no_answers_in_the_open.py)."""
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith(("#", '"""'))]


def _windows(lines: list[str], size: int = SOLUTION_WINDOW) -> set[tuple[str, ...]]:
    return {tuple(lines[i : i + size]) for i in range(len(lines) - size + 1)}


def _texts(name: str, data: bytes) -> Iterator[tuple[str, str]]:
    """(where, text) for a file, and for each member of an archive; a notebook's cell sources
    and outputs and a page's visible text are read as a student would see them, besides the raw text."""
    if name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for member in archive.namelist():
                if not member.endswith("/"):
                    yield from ((f"{name}!{where}", text) for where, text in _texts(f"{member}", archive.read(member)))
        return
    text = data.decode("utf-8", errors="replace")
    yield name, text
    if name.endswith(".ipynb"):
        try:
            cells = json.loads(text).get("cells", [])
        except ValueError:
            return
        parts = []
        for cell in cells:
            parts.append(_joined(cell.get("source", "")))
            for output in cell.get("outputs", []):
                parts.append(_joined(output.get("text", "")))
                parts += [_joined(value) for key, value in output.get("data", {}).items() if key.startswith("text/")]
        yield f"{name} (cells)", "\n".join(parts)
    elif name.endswith((".html", ".htm")):
        from bs4 import BeautifulSoup

        yield f"{name} (as shown)", BeautifulSoup(text, "html.parser").get_text("\n")


def _joined(value) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def answer_texts(course: Path, quizzes: list[Path]) -> tuple[dict[str, set], list[tuple[str, str]]]:
    """What must not appear: each reference solution's six-line windows (the cost model's
    solution cell's too: it is the full-credit bar), and the plain texts of the quizzes' keys and
    the tile arithmetic's key (explanations, solutions, feedback)."""
    from ..nbgrader_ext.plan import load_plan
    from ..quiz.loading import load_instructor

    solutions = {f"course/solutions/{path.name}": _windows(_normalised_lines(path.read_text(encoding="utf-8")))
                 for path in sorted((course / "solutions").glob("*.py"))}
    keys: list[tuple[str, str]] = []
    for path in quizzes:
        quiz, _ = load_instructor(path)
        for q in quiz.questions:
            texts = [q.solution] if q.type == "code" else [q.explanation]
            texts += [c.feedback for c in q.choices if c.feedback] + [m.feedback for m in q.mistakes]
            keys += [(f"quiz {quiz.id}, {q.id}", t) for t in texts if t and len(t.strip()) >= MIN_KEY_TEXT]
    for notebook in sorted((course / "source").glob("*/*.ipynb")):
        plan = load_plan(notebook)
        for answer in plan.answers.values():
            for question in answer.key or []:
                explanation = getattr(question, "explanation", "")
                if explanation and len(explanation) >= MIN_KEY_TEXT:
                    keys.append((f"{notebook.name}: key of {getattr(question, 'name', '?')}", explanation))
            if answer.kind == "cost-model" and answer.solution:  # the full-credit bar: run by the class run, never shipped
                solutions[f"{notebook.name}: the cost model's solution"] = _windows(_normalised_lines(answer.solution))
            if answer.kind == "questions" and answer.solution:  # the tile arithmetic's formulas
                for line in answer.solution.splitlines():
                    if "=" in line and not line.strip().startswith("#"):
                        formula = line.split("=", 1)[1].strip()
                        if len(formula) >= 12:
                            keys.append((f"{notebook.name}: solution formula", formula))
    return solutions, keys


def find_leaks(edition: str | Path, *, course: str | Path = REPO_ROOT / "course", quizzes: list[Path] | None = None) -> list[str]:
    """Every file of `edition` (each member of a wheel too) that holds what students must not
    get: solution or hidden-test markers, the grading plan's metadata (the answer key), six
    consecutive lines of a reference solution, a quiz's or the tile arithmetic's key in plain
    text, the course secret, a measured cost-model table, or a file from course/source/,
    course/solutions/ or the gradebook."""
    from ..nbgrader_ext.plan import METADATA_KEY
    from ..problems.variants import VariantError, course_secret
    from ..rehearsal.scratch_course import LEAK_MARKERS
    from ..costmodel.table import TABLE_FORMAT as COST_TABLE_FORMAT

    edition, course = Path(edition), Path(course)
    if quizzes is None:  # the instructor copies beside the course root (the repository's quizzes/)
        quizzes = sorted((course.parent / "quizzes").glob("*.yaml")) or sorted((REPO_ROOT / "quizzes").glob("*.yaml"))
    solutions, keys = answer_texts(course, quizzes)
    try:
        secret = course_secret(course)
    except VariantError:
        secret = None
    flat_keys = [(where, " ".join(text.split())) for where, text in keys]
    leaks = []
    for path in sorted(p for p in edition.rglob("*") if p.is_file()):
        relative = path.relative_to(edition).as_posix()
        data = path.read_bytes()
        if secret and secret in data:
            leaks.append(f"{relative}: the course secret")
        for where, text in _texts(relative, data):
            member = where.split("!", 1)[-1]
            if member.split(" (", 1)[0].rsplit("/", 1)[-1] in PRIVATE_NAMES or any(part in member for part in PRIVATE_PARTS):
                leaks.append(f"{where}: an instructor's file")
            if secret and secret.decode(errors="replace") in text:
                leaks.append(f"{where}: the course secret")
            leaks += [f"{where}: {marker}" for marker in LEAK_MARKERS if marker in text and not member.endswith(".py")]
            if COST_TABLE_FORMAT in text and not member.endswith(".py"):
                leaks.append(f"{where}: a measured cost-model table (the grader's, private)")
            if member.endswith(".ipynb") and not where.endswith("(cells)"):
                leaks += [f"{where}: {problem}" for problem in _notebook_leaks(text, METADATA_KEY)]
            lines = _windows(_normalised_lines(text))
            leaks += [f"{where}: {SOLUTION_WINDOW} lines of {name}" for name, chunks in solutions.items() if lines & chunks]
            flat = " ".join(text.split())
            leaks += [f"{where}: {what} in plain text" for what, key in flat_keys if key in flat]
    return sorted(set(leaks))


def _notebook_leaks(text: str, metadata_key: str) -> list[str]:
    try:
        notebook = json.loads(text)
    except ValueError:
        return []
    problems = []
    if metadata_key in notebook.get("metadata", {}):
        problems.append(f"'{metadata_key}' notebook metadata")
    for index, cell in enumerate(notebook.get("cells", [])):
        if metadata_key in cell.get("metadata", {}):
            problems.append(f"cell {index}: '{metadata_key}' metadata (the grading plan and answer key)")
        if "question_points(" in _joined(cell.get("source", "")):
            problems.append(f"cell {index}: a hidden test (question_points)")
    return problems


# ---------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m autograder.edition.build", description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", default=str(DEFAULT_OUT), metavar="DIR", help="where to write it (default build/student-edition/)")
    parser.add_argument("--course", default=None, metavar="DIR", help="the nbgrader course root (default course/)")
    parser.add_argument("--wheel-url", default=None, metavar="URL",
                        help="where the wheel will be hosted: the notebooks then open with a cell that installs it (Colab)")
    parser.add_argument("--repo-url", default=None, metavar="URL", help="the course's public GitHub repository, for the site's Colab / Binder links")
    parser.add_argument("--no-site", action="store_true",
                        help="leave the website (site/) out, and the README's line about it: building it executes the lessons, "
                             "minutes without the cache (make student-edition NO_SITE=1)")
    parser.add_argument("--check", metavar="DIR", default=None, help="only check an existing edition for leaks")
    args = parser.parse_args(argv)

    def log(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if args.check:
        leaks = find_leaks(args.check, course=Path(args.course) if args.course else REPO_ROOT / "course")
        print("\n".join(leaks) or f"{args.check}: nothing students must not get")
        return 1 if leaks else 0
    try:
        edition = build(args.output, course=args.course, wheel_url=args.wheel_url, repo_url=args.repo_url,
                        site=not args.no_site, log=log)
    except EditionError as error:
        print(f"student edition: {error}", file=sys.stderr)
        return 1
    print(f"wrote {edition.out}: {edition.wheel.name}, {len(edition.lessons)} lessons, {len(edition.quizzes)} quizzes, "
          f"{len(edition.assignments)} assignments" + (", the website" if edition.site else ""))
    for assignment, origin in edition.assignments.items():
        print(f"  {assignment}: {origin}" + ("" if edition.variants.get(assignment) else "; no variants.json (see README.md)"))
    print("checked: no solution, hidden test, answer key or course secret in any file (wheel members included)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
