"""The student edition (`make student-edition`): what is in it, and nothing students must not get.

The edition here is built as `make student-edition` builds it (the real lessons, quizzes,
assignments and wheel), except that its website is the tests' tiny course, which builds in
seconds (the real site executes the lessons; `make student-edition-check` builds that one and
checks it the same way). Every file is opened, and each member of the wheel.

The fresh-venv test (a new virtual environment with only the wheel: import, a lesson, a
grading, a fetched assignment's self-check) takes minutes; it runs with TVM_COURSE_FRESH_VENV=1,
which `make student-edition-check` sets.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest
import yaml

from autograder.edition import build as student_edition
from autograder.rehearsal.samples import build_submission, load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment, release_leaks
from autograder.problems.variants import TABLE_FILE, course_secret, table_key
from autograder.quiz.loading import is_released_data

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
COURSE = ROOT / "course"
SITE_TESTS = ROOT / "tests" / "site"  # where the tiny test course's writer lives
WHEEL_URL = "https://example.org/tvm-course/tvm_course-0.1.0-py3-none-any.whl"
ASSIGNMENTS = ("tiling", "gpu-tiling", "cost-model")
LESSONS = sorted(p.name for p in (ROOT / "lessons").glob("*.ipynb"))
# What a released quiz must not carry as keys (tests/quiz/test_release.py)
SECRET_KEYS = {"correct", "answer", "tolerance", "mistakes", "patterns", "solution"}


@pytest.fixture(scope="module")
def edition(tmp_path_factory):
    if str(SITE_TESTS) not in sys.path:
        sys.path.insert(0, str(SITE_TESTS))
    from site_test_course import write_tiny_course

    tiny = write_tiny_course(tmp_path_factory.mktemp("tiny-course"))
    cache = tmp_path_factory.mktemp("executed-cache")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVM_COURSE_CACHE", str(cache))
        patch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
        patch.delenv("TVM_COURSE_SECRET", raising=False)
        built = student_edition.build(tmp_path_factory.mktemp("build") / "student-edition", wheel_url=WHEEL_URL,
                                      site_syllabus=tiny)
    return built


def every_file(root: Path):
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_the_edition_has_the_wheel_lessons_quizzes_assignments_site_and_readme(edition):
    out = edition.out
    assert edition.wheel == out / student_edition.wheel_name() and edition.wheel.is_file()
    assert sorted(p.name for p in (out / "lessons").iterdir()) == LESSONS
    assert sorted(p.name for p in (out / "quizzes").iterdir()) == sorted(p.name for p in (ROOT / "quizzes").glob("*.yaml"))
    for assignment in ASSIGNMENTS:
        assert (out / "assignments" / assignment / f"{assignment}.ipynb").is_file()
    assert (out / "site" / "index.html").is_file()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert readme.startswith(student_edition.README_TITLE)
    assert f"pip install {edition.wheel.name}" in readme and "jupyter lab" in readme and WHEEL_URL in readme


def test_the_readmes_paths_work_from_where_each_is_used(edition):
    """A terminal runs in the edition's folder, a lesson's notebook in lessons/."""
    import re

    readme = (edition.out / "README.md").read_text(encoding="utf-8")
    shown = re.findall(r'quiz\.show\("([^"]+)"\)', readme)
    taken = re.findall(r"tvm-course quiz take (\S+?)`", readme)
    assert shown and taken
    assert all((edition.out / "lessons" / path).resolve().is_file() for path in shown), shown
    assert all((edition.out / path).is_file() for path in taken), taken
    assert "`site/index.html`" in readme and (edition.out / "site" / "index.html").is_file()


def test_the_readme_says_what_to_do_as_root_and_how_long_the_install_takes(edition):
    readme = " ".join((edition.out / "README.md").read_text(encoding="utf-8").split())
    assert "jupyter lab --allow-root" in readme and "as a normal user" in readme
    assert "a few minutes" in readme and "about a minute" not in readme  # 3 min 53 s measured: student_edition.INSTALL_TIME


def test_without_the_site_the_readme_does_not_mention_it():
    edition = student_edition.Edition(out=Path("edition"), wheel=Path("edition") / student_edition.wheel_name())
    with_site = student_edition.student_readme(edition, wheel_url=None, site=True)
    without = student_edition.student_readme(edition, wheel_url=None, site=False)
    assert "site/" in with_site and "site/" not in without


def test_no_site_is_in_the_help_and_the_makefile(capsys):
    with pytest.raises(SystemExit):
        student_edition.main(["--help"])
    assert "--no-site" in capsys.readouterr().out
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert "$(if $(NO_SITE),--no-site)" in makefile
    assert "NO_SITE=1" in (ROOT / "docs" / "instructors.md").read_text(encoding="utf-8")


def test_the_maps_refusal_points_to_what_the_edition_has(edition, tmp_path, capsys):
    """`tvm-course map` checks the repository's course/syllabus.yaml (paths students do not have):
    from the wheel it refuses, sending students to the README and the site's index, which must hold the map."""
    import argparse

    from autograder import syllabus
    from autograder.commands.course_map import course_map
    from autograder.errors import ExitCode

    missing = tmp_path / "course" / "syllabus.yaml"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(syllabus, "DEFAULT_PATH", missing)
        code = course_map(argparse.Namespace(syllabus=str(missing), root=None, json=False))
    said = capsys.readouterr().err
    assert code == ExitCode.USAGE_ERROR and "README.md beside the lessons" in said and "website's index" in said
    readme = (edition.out / "README.md").read_text(encoding="utf-8")
    assert "`lessons/`" in readme and "`quizzes/`" in readme and "`assignments/`" in readme
    index = (edition.out / "site" / "index.html").read_text(encoding="utf-8")
    assert "tiny.html" in index  # the (tiny) course's map, with its lessons
    students = (ROOT / "docs" / "students.md").read_text(encoding="utf-8")
    assert "`.venv/bin/tvm-course map` prints the whole course map" not in students


def test_no_file_students_receive_holds_an_answer(edition):
    assert student_edition.find_leaks(edition.out, course=COURSE) == []
    for assignment in ASSIGNMENTS:
        assert release_leaks(edition.out / "assignments" / assignment) == []
    names = [p.relative_to(edition.out).as_posix() for p in every_file(edition.out)]
    assert not [n for n in names if "solutions" in n or "source" in n or n.endswith(("variant-secret", "gradebook.db"))]


def test_the_quizzes_are_released_copies_with_salted_hashes(edition):
    from quiz.test_release import all_keys  # tests/quiz is a package; pytest puts tests/ on the path

    for path in (edition.out / "quizzes").iterdir():
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        assert is_released_data(data), path
        assert not SECRET_KEYS & set(all_keys(data)), path


def test_the_wheel_is_the_package_alone_described_by_the_students_readme(edition):
    with zipfile.ZipFile(edition.wheel) as wheel:
        names = wheel.namelist()
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    tops = {n.split("/", 1)[0] for n in names}
    assert tops == {"autograder", "tvm_course-0.1.0.dist-info", "tvm_course-0.1.0.data"}, tops
    # the one data file: kernels over Unix sockets in the environment's Jupyter servers (tests/test_kernel_transport.py)
    assert [n for n in names if n.startswith("tvm_course-0.1.0.data/")] == [
        "tvm_course-0.1.0.data/data/etc/jupyter/jupyter_server_config.d/tvm-course.json"]
    assert "autograder/__init__.py" in names and "autograder/quiz/quiz.schema.json" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    assert "tvm-course = autograder.cli:main" in entry_points
    assert student_edition.README_TITLE in metadata and "For instructors" not in metadata
    # the SPDX string form (a license table warns "deprecated" at every build and install)
    assert "License-Expression: Apache-2.0" in metadata


def test_the_license_is_an_spdx_string_for_a_setuptools_that_reads_it():
    import re
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["license"] == "Apache-2.0"
    (setuptools,) = [r for r in project["build-system"]["requires"] if r.startswith("setuptools")]
    minimum = re.fullmatch(r"setuptools>=(\d+)(\.\d+)*", setuptools)
    assert minimum and int(minimum.group(1)) >= 77, setuptools  # the first to read license = "SPDX"


def _first_code_cell(path: Path) -> str:
    notebook = nbformat.read(path, as_version=4)
    return next(cell.source for cell in notebook.cells if cell.cell_type == "code")


def test_with_a_wheel_url_every_notebook_opens_by_installing_it(edition):
    notebooks = [*(edition.out / "lessons").glob("*.ipynb"), *(edition.out / "assignments").glob("*/*.ipynb"),
                 *(edition.out / "site" / "notebooks").glob("*.ipynb")]
    assert len(notebooks) == len(LESSONS) + len(ASSIGNMENTS) + 2  # the tiny site's two lessons
    for path in notebooks:
        notebook = nbformat.read(path, as_version=4)
        assert notebook.cells[0].cell_type == "code" and f"%pip install --quiet {WHEEL_URL}" in notebook.cells[0].source, path
        assert all(not cell.get("outputs") and cell.get("execution_count") is None for cell in notebook.cells if cell.cell_type == "code"), path


NOTEBOOKS = [ROOT / "lessons" / name for name in LESSONS] + [COURSE / "source" / a / f"{a}.ipynb" for a in ASSIGNMENTS]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_without_the_package_a_notebooks_first_cell_says_what_to_run(path, monkeypatch):
    source = _first_code_cell(path)
    for name in [m for m in sys.modules if m == "autograder" or m.startswith("autograder.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "autograder", None)  # `import autograder` now fails as if not installed
    with pytest.raises(ModuleNotFoundError) as raised:
        exec(compile(source, str(path), "exec"), {})
    message = str(raised.value)
    assert "%pip install" in message and "tvm_course-" in message and "restart the kernel" in message


def test_without_a_class_there_is_no_variants_table_and_the_readme_says_how_to_add_it(edition):
    for assignment in ASSIGNMENTS:
        assert not (edition.out / "assignments" / assignment / TABLE_FILE).exists()
        assert edition.variants[assignment] is False
    readme = " ".join((edition.out / "README.md").read_text(encoding="utf-8").split())
    assert "No `variants.json`" in readme and "tvm-course variants init" in readme and "make student-edition" in readme


def test_with_the_instructors_roster_and_secret_the_release_lists_the_class_but_not_the_secret(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.delenv("TVM_COURSE_SECRET", raising=False)
    instructor = copy_course(COURSE, tmp_path / "course")  # an instructor's course: a secret of its own
    from nbgrader.api import Gradebook

    from autograder.course.course_dir import course_directory, load_course_config

    coursedir = course_directory(load_course_config(instructor))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        for student in ("ada", "ben"):
            gradebook.update_or_create_student(student)
    out = tmp_path / "assignments"
    origins, variants = student_edition.release_assignments(instructor, ["tiling"], out, log=lambda m: None)
    assert variants == {"tiling": True} and "2 students" in origins["tiling"]
    table = json.loads((out / "tiling" / TABLE_FILE).read_text(encoding="utf-8"))
    assert set(table["variants"]) == {table_key("ada"), table_key("ben")}
    secret = course_secret(instructor)
    assert all(secret not in p.read_bytes() for p in every_file(out))
    assert not (instructor / "release").exists()  # the instructor's course is not written to
    # once the instructor has released it, the edition hands out that very release
    released = release_assignment(instructor, "tiling", students=[])
    again = tmp_path / "again"
    origins, _ = student_edition.release_assignments(instructor, ["tiling"], again, log=lambda m: None)
    assert "the instructor's release" in origins["tiling"]
    assert (again / "tiling" / "tiling.ipynb").read_bytes() == (released / "tiling.ipynb").read_bytes()


def _add_member(wheel: Path, name: str, text: str) -> None:
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr(name, text)


def test_the_check_finds_each_kind_of_leak(edition, tmp_path, monkeypatch):
    """Not vacuous: plant each thing students must not get in a copy of the edition."""
    monkeypatch.delenv("TVM_COURSE_SECRET", raising=False)
    course = copy_course(COURSE, tmp_path / "course")  # with a secret
    copy = tmp_path / "edition"
    shutil.copytree(edition.out, copy, ignore=shutil.ignore_patterns("site"))
    solution = (COURSE / "solutions" / "blocked_vectorized.py").read_text(encoding="utf-8")
    gpu_solution = (COURSE / "solutions" / "gpu_bound.py").read_text(encoding="utf-8")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(solution)])
    nbformat.write(notebook, copy / "lessons" / "extra.ipynb")
    shutil.copy2(COURSE / "source" / "tiling" / "tiling.ipynb", copy / "assignments" / "tiling" / "tiling.ipynb")
    shutil.copy2(ROOT / "quizzes" / "two-levels.yaml", copy / "quizzes" / "two-levels.yaml")
    _add_member(copy / edition.wheel.name, "autograder/examples/fast.py", gpu_solution)
    from autograder.nbgrader_ext.plan import load_plan  # the cost model's bar, as the class run reads it

    bar = next(a.solution for a in load_plan(COURSE / "source" / "cost-model" / "cost-model.ipynb").answers.values()
               if a.kind == "cost-model")
    _add_member(copy / edition.wheel.name, "autograder/costmodel/reference.py", bar.replace("### BEGIN SOLUTION\n", ""))
    (copy / "notes.txt").write_bytes(course_secret(course))
    (copy / "gradebook.db").write_bytes(b"")
    leaks = "\n".join(student_edition.find_leaks(copy, course=course))
    assert "lessons/extra.ipynb (cells): 6 lines of course/solutions/blocked_vectorized.py" in leaks
    assert f"{edition.wheel.name}!autograder/examples/fast.py: 6 lines of course/solutions/gpu_bound.py" in leaks
    assert f"{edition.wheel.name}!autograder/costmodel/reference.py: 6 lines of cost-model.ipynb: the cost model's solution" in leaks
    assert "assignments/tiling/tiling.ipynb: BEGIN SOLUTION" in leaks
    assert "assignments/tiling/tiling.ipynb: BEGIN HIDDEN TESTS" in leaks
    assert "'tvm_course' metadata (the grading plan and answer key)" in leaks
    assert "tiling.ipynb: key of" in leaks  # the tile arithmetic's explanations
    assert "quizzes/two-levels.yaml: quiz two-levels" in leaks
    assert "notes.txt: the course secret" in leaks
    assert "gradebook.db: an instructor's file" in leaks


# ---------------------------------------------------------------------------------------------
# A fresh virtual environment with only the wheel (TVM_COURSE_FRESH_VENV=1; minutes)

fresh = pytest.mark.skipif(os.environ.get("TVM_COURSE_FRESH_VENV") != "1",
                           reason="a fresh venv installs the wheel with all its dependencies (a few minutes) and runs a "
                                  "lesson (minutes): `make student-edition-check` runs it (TVM_COURSE_FRESH_VENV=1)")


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory, edition):
    """A new venv with nothing but the edition's wheel (pip brings its dependencies: from the
    index pip is configured with, or offline with PIP_NO_INDEX=1 PIP_FIND_LINKS=DIR of wheels)."""
    built = Path(os.environ.get("TVM_COURSE_EDITION", "")) if os.environ.get("TVM_COURSE_EDITION") else edition.out
    # In a folder only its owner may enter (what `mktemp -d` makes, what /root is): the grader's
    # confined children keep the grader's user, so they read the venv wherever it is.
    folder = Path(tempfile.mkdtemp(prefix="tvm-course-fresh-venv-"))
    assert folder.stat().st_mode & 0o077 == 0
    venv = folder / "venv"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        wheel = next(built.glob("tvm_course-*.whl"))
        done = subprocess.run([str(venv / "bin" / "pip"), "install", "--quiet", str(wheel)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        yield venv, built
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _clean_env(venv: Path, **extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TVM_COURSE_", "VIRTUAL_ENV", "PYTHON", "JUPYTER"))}
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"
    env.update(extra)
    return env


@fresh
def test_a_fresh_venv_with_only_the_wheel_imports_the_package_and_grades_a_schedule(fresh_venv, tmp_path):
    venv, _ = fresh_venv
    script = (
        "import autograder, json, sys\n"
        "assert 'site-packages' in autograder.__file__, autograder.__file__\n"
        "from autograder import examples\n"
        "result = autograder.check('tile-fused-conv', examples.source('journal'))\n"
        "print(json.dumps({'status': result.status, 'correct': result.correct, 'text': result.to_text()}))\n"
    )
    done = subprocess.run([str(venv / "bin" / "python"), "-c", script], cwd=tmp_path, env=_clean_env(venv),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["status"] in ("passed", "failed") and result["correct"] is True, result["text"]
    assert "confined" in result["text"]


@fresh
def test_a_fresh_venv_with_only_the_wheel_runs_a_lesson(fresh_venv, tmp_path):
    venv, built = fresh_venv
    lesson = tmp_path / LESSONS[0]
    notebook = nbformat.read(built / "lessons" / LESSONS[0], as_version=4)
    notebook.cells = [c for c in notebook.cells if "install" not in c.metadata.get("tags", [])]  # installed already
    nbformat.write(notebook, lesson)
    done = subprocess.run([str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--output", "ran.ipynb",
                           "--ExecutePreprocessor.timeout=900", str(lesson)], cwd=tmp_path, env=_clean_env(venv),
                          capture_output=True, text=True, timeout=1500)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = nbformat.read(tmp_path / "ran.ipynb", as_version=4)
    errors = [o for c in ran.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert errors == []


@fresh
def test_a_fetched_assignments_self_check_works_with_only_the_wheel(fresh_venv, tmp_path):
    """The instructor releases to an exchange (their own environment); the student fetches with the
    nbgrader the wheel brought, answers, and runs the notebook in the fresh venv's kernel."""
    venv, _ = fresh_venv
    student = "ada"
    course = copy_course(COURSE, tmp_path / "course")
    release_assignment(course, "tiling", students=[student])
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    instructor_env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "release_assignment", "tiling", "--course", "tvm-course",
                    f"--Exchange.root={exchange}"], cwd=course, env=instructor_env, check=True, capture_output=True)
    home = tmp_path / "home"
    home.mkdir()
    env = _clean_env(venv, HOME=str(home), TVM_COURSE_STUDENT=student)
    done = subprocess.run([str(venv / "bin" / "nbgrader"), "fetch_assignment", "tiling", "--course", "tvm-course",
                           f"--Exchange.root={exchange}", f"--Exchange.cache={home / 'cache'}"], cwd=home, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    fetched = home / "tiling" / "tiling.ipynb"
    sample = {s.student: s for s in load_samples(course, "tiling")}["ben"]
    nbformat.write(build_submission(nbformat.read(fetched, as_version=4), sample), fetched)
    done = subprocess.run([str(venv / "bin" / "jupyter"), "nbconvert", "--to", "notebook", "--execute", "--allow-errors",
                           "--output", "ran.ipynb", "--ExecutePreprocessor.timeout=600", str(fetched)], cwd=fetched.parent,
                          env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = nbformat.read(fetched.parent / "ran.ipynb", as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in ran.cells}
    first = next(c for c in ran.cells if c.cell_type == "code")
    assert f"Student {student}:" in "".join(o.get("text", "") for o in first.outputs), first.outputs
    shown = json.dumps(cells["self-check"].outputs)
    assert "tile-fused-conv" in shown and "error" not in [o.output_type for o in cells["self-check"].outputs], shown[:3000]


# Every command the students' README shows, or a student may try, from the wheel alone: it works,
# or it says in one line that it is an instructor's command; never a traceback.
STUDENT_COMMANDS = [
    ["--help"],
    ["quiz", "validate", "{edition}/quizzes/two-levels.yaml"],
    ["quiz", "check", "{edition}/quizzes/two-levels.yaml", "answers.yaml"],
    ["grade-schedule", "tile-fused-conv", "my_schedule.py", "--json"],
    ["doctor"],
    ["demo"],
]
INSTRUCTOR_COMMANDS = [
    ["grade", "tiling"],
    ["roster", "class.csv", "--from", "canvas"],
    ["collect", "tiling", "download.zip", "--from", "canvas"],
    ["export", "tiling", "--format", "canvas"],
    ["variants", "init"],
    ["variants", "show", "ada"],
    ["similar", "tiling"],
    ["map"],
    ["site", "build", "-o", "my-site"],
]


@fresh
def test_every_command_works_from_the_wheel_or_says_in_one_line_it_is_the_instructors(fresh_venv, tmp_path):
    venv, built = fresh_venv
    from autograder import examples

    (tmp_path / "my_schedule.py").write_text(examples.source("journal"), encoding="utf-8")
    (tmp_path / "answers.yaml").write_text("{}\n", encoding="utf-8")
    (tmp_path / "class.csv").write_text("Student,ID\n\"Lovelace, Ada\",1001\n", encoding="utf-8")
    failed = []
    for args in STUDENT_COMMANDS + INSTRUCTOR_COMMANDS:
        args = [a.format(edition=built) for a in args]
        done = subprocess.run([str(venv / "bin" / "tvm-course"), *args], cwd=tmp_path, env=_clean_env(venv),
                              capture_output=True, text=True, timeout=1200)
        said = done.stdout + done.stderr
        if "Traceback" in said:
            failed.append(f"tvm-course {' '.join(args)}: a traceback:\n{said[-2000:]}")
        elif args in [[a.format(edition=built) for a in c] for c in STUDENT_COMMANDS]:
            if done.returncode not in (0, 1):
                failed.append(f"tvm-course {' '.join(args)} exited {done.returncode}:\n{said[-2000:]}")
        elif done.returncode != 2 or "instructor" not in done.stderr or len(done.stderr.strip().splitlines()) != 1:
            failed.append(f"tvm-course {' '.join(args)} (an instructor's command) exited {done.returncode} saying:\n{said[-2000:]}")
    assert not failed, "\n\n".join(failed)
    served = subprocess.Popen([str(venv / "bin" / "tvm-course"), "site", "serve", "-d", str(built / "site"), "--port", "0"],
                              cwd=tmp_path, env=_clean_env(venv), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = served.stdout.readline()
        assert "http://127.0.0.1:" in line, line
    finally:
        served.terminate()
        served.wait(timeout=30)
