"""A student dropped from the class stays dropped (issue 36): removed with nbgrader's own
`nbgrader db student remove ID --force` after a grading, their submission is reported as from a
student not in the class, and never graded again, re-created in the gradebook or exported.
Real commands (tvm-course, nbgrader) on a scratch course, with nbgrader's real gradebook.
"""
from __future__ import annotations

import csv

import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

from .conftest import COURSE
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow


def in_gradebook(root, student: str) -> bool:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        try:
            gradebook.find_student(student)
        except MissingEntry:
            return False
        return True


def test_a_student_removed_from_the_gradebook_stays_removed(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling", students=["ada", "ben"])
    submit_samples(root, "tiling", only=["ada", "ben"])
    grade = ["tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS]
    first = command(*grade)
    assert "2 graded" in first.stdout, first.stdout + first.stderr
    removed = command("nbgrader", "db", "student", "remove", "ben", "--force", cwd=root)
    assert removed.returncode == 0 and not in_gradebook(root, "ben")

    for again in (command(*grade), command(*grade, "--force")):
        assert again.returncode == 0, again.stdout + again.stderr
        said = again.stdout + again.stderr
        assert "ben: from a student not in the class" in said and "nbgrader db student add ID" in said
        assert not in_gradebook(root, "ben")
    assert "1 graded" in again.stdout  # ada, forced

    exported = command("tvm-course", "export", "tiling", "--format", "csv", "-o", str(tmp_path / "grades.csv"), "--course", str(root))
    assert exported.returncode == 0 and "ben" in exported.stdout  # said: left out
    with open(tmp_path / "grades.csv", newline="", encoding="utf-8") as handle:
        assert [row["student"] for row in csv.DictReader(handle)] == ["ada"]
    assert not in_gradebook(root, "ben")
