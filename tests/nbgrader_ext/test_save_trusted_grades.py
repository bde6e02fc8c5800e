"""SaveTrustedGrades on a test cell outside the grading plan: no points for a notebook nobody ran.

nbgrader scores a code test cell from its output, and an empty output (no error) earns full
marks. Autograde no longer runs the notebook by default, so such a cell is left for manual
grading instead; where the course runs notebooks (ResilientExecute), nbgrader's rule applies.
In a file refused as no notebook (normalise.py) it scores 0 either way.
"""
from __future__ import annotations

import shutil

import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.api import Gradebook

from autograder.course.course_dir import put_environment_tools_on_path
from autograder.nbgrader_ext.preprocessors import EXECUTED_KEY, RESOURCE_KEY, SaveTrustedGrades

# nbgrader's own add_submission trips SQLAlchemy's autoflush warnings
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.fixture(scope="module")
def empty_submission(tmp_path_factory):
    """A gradebook with one submission of a one-notebook assignment, not graded yet."""
    put_environment_tools_on_path()  # nbgrader creates the gradebook with `alembic`
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(f"sqlite:///{path}") as gradebook:
        gradebook.add_assignment("a")
        gradebook.add_notebook("n", "a")
        gradebook.add_grade_cell("extra", "n", "a", max_score=2, cell_type="code")
        gradebook.add_student("s")
        gradebook.add_submission("a", "s")
    return path


def grade_an_unplanned_test_cell(empty_submission, tmp_path, executed: bool, refused: str | None = None):
    url = f"sqlite:///{shutil.copy(empty_submission, tmp_path / 'gradebook.db')}"
    cell = new_code_cell("assert answer == 42")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True, "grade_id": "extra", "points": 2, "schema_version": 3}
    resources = {"nbgrader": {"notebook": "n", "assignment": "a", "student": "s", "db_url": url}, RESOURCE_KEY: None}
    if executed:
        resources[EXECUTED_KEY] = True
    notebook = new_notebook(cells=[cell])
    if refused:  # as normalise.py marks a file that was no notebook
        notebook.metadata["tvm_course"] = {"submission": {"refused": refused}}
    SaveTrustedGrades().preprocess(notebook, resources)
    with Gradebook(url) as gradebook:
        grade = gradebook.find_grade("extra", "n", "a", "s")
        return grade.auto_score, grade.needs_manual_grade


def test_a_test_cell_nobody_ran_is_left_for_manual_grading(empty_submission, tmp_path):
    assert grade_an_unplanned_test_cell(empty_submission, tmp_path, executed=False) == (None, True)


def test_a_test_cell_the_kernel_ran_is_scored_from_its_output(empty_submission, tmp_path):
    assert grade_an_unplanned_test_cell(empty_submission, tmp_path, executed=True) == (2.0, False)


def test_a_test_cell_of_a_refused_file_scores_zero(empty_submission, tmp_path):
    for executed in (False, True):
        assert grade_an_unplanned_test_cell(empty_submission, tmp_path, executed, refused="not a notebook") == (0.0, False)
