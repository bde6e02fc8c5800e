"""`nbgrader generate_assignment` with the course's config: what students get, and what they don't.

The answer key of the tile arithmetic is in the source notebooks' `tvm_course` metadata; the
released notebooks must carry none of it (nor solutions, nor hidden tests).
"""
from __future__ import annotations

import json

import pytest

from autograder.course.scratch_course import copy_course, release_assignment, release_leaks
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
    assert "tvm_course" not in text
    for question in questions.key:
        assert question.explanation not in text
        assert f'"expected": {question.expected}' not in text
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
