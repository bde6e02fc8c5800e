"""nbgrader's exchange, as on JupyterHub, with the course as shipped: release_assignment,
fetch_assignment, submit, collect, then the course's own grading run on what was collected.

A local exchange directory stands in for JupyterHub's /srv/nbgrader/exchange, as nbgrader's
own tests do it (`--Exchange.root=DIR`; each student with an exchange cache of their own,
`--Exchange.cache`). nbgrader names a submitter by their OS user (on a hub whose users are all
`jovyan`, by $JUPYTERHUB_USER), so the student here is whoever runs the tests, answering as
the sample `ada` does. The instructor's commands run in the course root with its
nbgrader_config.py; the student's in their home folder with nbgrader's defaults only, as on a hub.
"""
from __future__ import annotations

import csv
import os
import pwd
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.rehearsal.samples import build_submission, load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment, release_leaks
from autograder.problems.variants import TABLE_FILE, course_secret, student_variant, variant_for

from .conftest import COURSE

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
COURSE_ID = "tvm-course"
ASSIGNMENT = "tiling"
STUDENT = pwd.getpwuid(os.getuid()).pw_name  # nbgrader.utils.get_osusername
SAMPLE = "ada"


def nbgrader(args: list[str], cwd: Path, home: Path, exchange: Path, cache: Path | None = None) -> str:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(home)}
    for name in ("TVM_COURSE_STUDENT", "JUPYTERHUB_USER", "JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR"):
        env.pop(name, None)
    command = [str(BIN / "nbgrader"), *args, "--course", COURSE_ID, f"--Exchange.root={exchange}"]
    if cache is not None:
        command.append(f"--Exchange.cache={cache}")
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


@pytest.fixture(scope="module")
def round_trip(tmp_path_factory):
    base = tmp_path_factory.mktemp("exchange")
    root = copy_course(COURSE, base / "instructor" / "course")
    exchange = base / "srv-nbgrader-exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)  # as nbgrader's docs set it up on a hub
    release_assignment(root, ASSIGNMENT, students=[STUDENT, "ben"])
    instructor_home = base / "instructor"
    log = {"release": nbgrader(["release_assignment", ASSIGNMENT], root, instructor_home, exchange)}
    sample = {s.student: s for s in load_samples(root, ASSIGNMENT)}[SAMPLE]
    home = base / "home" / STUDENT
    home.mkdir(parents=True)
    cache = home / ".nbgrader-cache"
    log["fetch"] = nbgrader(["fetch_assignment", ASSIGNMENT], home, home, exchange, cache)
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    nbformat.write(build_submission(nbformat.read(fetched, as_version=4), sample), fetched)
    log["submit"] = nbgrader(["submit", ASSIGNMENT], home, home, exchange, cache)
    log["collect"] = nbgrader(["collect", ASSIGNMENT], root, instructor_home, exchange)
    return root, exchange, {STUDENT: home}, log


def test_a_student_fetches_the_release_with_their_variants_table_and_no_answers(round_trip):
    root, _, homes, _ = round_trip
    secret = course_secret(root)
    for student, home in homes.items():
        fetched = home / ASSIGNMENT
        assert sorted(p.name for p in fetched.iterdir()) == sorted([f"{ASSIGNMENT}.ipynb", TABLE_FILE])
        assert release_leaks(fetched) == []
        found, variant = student_variant(student, fetched / TABLE_FILE, environ={})
        assert found == student and variant == variant_for(student, secret)
        for path in fetched.rglob("*"):
            assert secret not in path.read_bytes()


def test_collect_brings_each_submission_into_submitted(round_trip):
    root, _, homes, log = round_trip
    for student, home in homes.items():
        collected = root / "submitted" / student / ASSIGNMENT
        assert (collected / "timestamp.txt").is_file(), log["collect"]
        assert (collected / f"{ASSIGNMENT}.ipynb").read_bytes() == (home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_bytes()


def test_the_course_grades_what_the_exchange_collected(round_trip):
    root, *_ = round_trip
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run([str(BIN / "tvm-course"), "grade", ASSIGNMENT, "--course", str(root), "--workers", "1",
                           "--student", STUDENT], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(root / f"{ASSIGNMENT}-grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}
    sample = {s.student: s for s in load_samples(root, ASSIGNMENT)}[SAMPLE]
    row = rows[STUDENT]
    assert row["schedule"] == sample.expected_status and float(row["correctness"]) == 4, row
    assert row["review"] in ("", "0") and not row["changes"], row  # fetched, answered, submitted: nothing flagged


def test_a_resubmission_through_the_exchange_is_not_graded_as_the_old_one(round_trip):
    """nbgrader collect skips a newer submission of a student already collected ("use --update"):
    `tvm-course grade` says so, with the command to run, and then grades the new one."""
    root, exchange, homes, _ = round_trip
    home = homes[STUDENT]
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    dev = {s.student: s for s in load_samples(root, ASSIGNMENT)}["dev"]  # a different answer, graded quickly
    nbformat.write(build_submission(nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4), dev), fetched)
    nbgrader(["submit", ASSIGNMENT], home, home, exchange, home / ".nbgrader-cache")
    skipped = nbgrader(["collect", ASSIGNMENT], root, base_home(root), exchange)
    assert "--update" in skipped  # nbgrader's own words: it kept the old one
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    grade = [str(BIN / "tvm-course"), "grade", ASSIGNMENT, "--course", str(root), "--workers", "1", "--student", STUDENT,
             "--exchange", str(exchange)]
    done = subprocess.run(grade, cwd=root, env=env, capture_output=True, text=True, timeout=600)
    said = done.stdout + done.stderr
    assert f"newer submissions than were collected, from {STUDENT}" in said, said
    assert f"`nbgrader collect --update {ASSIGNMENT} --Exchange.root={exchange}`" in said
    assert "readable by every user of this machine" in said and "submitted" in said  # nbgrader collect's 777 folders
    done = subprocess.run([*grade, "--collect"], cwd=root, env=env, capture_output=True, text=True, timeout=600)
    said = done.stdout + done.stderr
    assert "1 graded (changed 1)" in said and "newer submissions" not in said, said
    with open(root / f"{ASSIGNMENT}-grades.csv", newline="", encoding="utf-8") as handle:
        row = {r["student"]: r for r in csv.DictReader(handle)}[STUDENT]
    assert float(row["correctness"]) == 0, row  # dev's answers now: the schedule scores nothing


def base_home(root: Path) -> Path:
    return root.parent  # the instructor's home in round_trip
