"""`nbgrader generate_assignment` with the course's config: what students get, and what they don't.

The answer key of the tile arithmetic is in the source notebooks' `tvm_course` metadata; the
released notebooks must carry none of it (nor solutions, nor hidden tests).
"""
from __future__ import annotations

import json
import re

import pytest

from autograder.rehearsal.samples import load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment, release_leaks
from autograder.problems.variants import SECRET_FILE, TABLE_FILE, course_secret, student_variant, table_key, variant_for
from autograder.nbgrader_ext.plan import load_plan

from .conftest import ASSIGNMENTS, COURSE

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    root = copy_course(COURSE, tmp_path_factory.mktemp("release") / "course")
    return root, {assignment: release_assignment(root, assignment) for assignment in ASSIGNMENTS}


def test_the_release_carries_no_answer_key(released, assignment):
    root, releases = released
    (questions,) = [a for a in load_plan(root / "source" / assignment / f"{assignment}.ipynb").answers.values() if a.kind == "questions"]
    text = (releases[assignment] / f"{assignment}.ipynb").read_text(encoding="utf-8")
    assert release_leaks(releases[assignment]) == []
    assert '"tvm_course":' not in text  # the plan metadata key (the wheel's name, tvm_course-*.whl, may appear)
    for question in questions.key:
        assert question.explanation not in text
    for line in questions.solution.splitlines():
        if "=" in line:  # the solution's formulas are gone with the solution
            assert line.split("=", 1)[1].strip() not in text, line
    notebook = json.loads(text)
    assert not any("tvm_course" in cell["metadata"] for cell in notebook["cells"])


def test_the_release_keeps_the_visible_format_check(released, assignment):
    _, releases = released
    notebook = json.loads((releases[assignment] / f"{assignment}.ipynb").read_text(encoding="utf-8"))
    sources = ["".join(cell["source"]) for cell in notebook["cells"]]
    assert any("check_answer_format(" in source for source in sources)
    assert not any("question_points" in source for source in sources)  # the hidden test is gone


def test_the_source_notebook_keeps_its_key(released, assignment):
    root, _ = released
    plan = load_plan(root / "source" / assignment / f"{assignment}.ipynb")
    assert any(a.key for a in plan.answers.values())


def test_the_release_lists_each_enrolled_students_variant_under_a_digest_and_not_the_secret(released, assignment):
    root, releases = released
    table = json.loads((releases[assignment] / TABLE_FILE).read_text(encoding="utf-8"))
    students = [s.student for s in load_samples(root, assignment)]
    secret = course_secret(root)
    assert set(table["variants"]) >= {table_key(s) for s in students}  # and the other enrolled students
    assert all(re.fullmatch("[0-9a-f]{20}", key) for key in table["variants"])  # no names: digests
    for student in students:
        found, variant = student_variant(student, releases[assignment] / TABLE_FILE, environ={})
        assert found == student and variant == variant_for(student, secret)
    for path in releases[assignment].rglob("*"):
        if path.is_file():
            assert secret not in path.read_bytes(), path
    assert not (releases[assignment] / SECRET_FILE).exists()

