"""The cost-model assignment graded on a Dask worker (course/cluster.py): the worker's grading
process measures the candidate table itself, into its own machine's private tables folder, and
grades against it; the instructor's machine measures nothing. One student, one worker, the tiny
table (`c.TrustedGrader.cost_model_grid = "tiny"`), so this costs about a class run's minute."""
from __future__ import annotations

import json

import pytest

from autograder.course.cluster import LocalCluster
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.nbgrader_ext.plan import METADATA_KEY
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

from .conftest import COURSE

pytestmark = pytest.mark.slow

ASSIGNMENT = "cost-model"
TABLES_ENV = "TVM_COURSE_TABLES"  # costmodel/table.py: where a machine keeps its tables


def test_a_worker_grades_a_cost_model_on_a_table_of_its_own_machine(tmp_path, monkeypatch):
    root = copy_course(COURSE, tmp_path / "course")
    with open(root / "nbgrader_config.py", "a", encoding="utf-8") as config:
        config.write('\nc.TrustedGrader.cost_model_grid = "tiny"  # the test\'s: 24 candidates\n')
    release_assignment(root, ASSIGNMENT, students=["ada"])
    samples = submit_samples(root, ASSIGNMENT, only=["ada"])
    worker_tables, instructor_tables = tmp_path / "worker-tables", tmp_path / "instructor-tables"
    monkeypatch.setenv(TABLES_ENV, str(worker_tables))  # what the worker, started now, inherits as its own
    with LocalCluster(1, log=tmp_path / "dask.log") as dask:
        monkeypatch.setenv(TABLES_ENV, str(instructor_tables))  # the instructor's run, from here on
        report = grade_assignment(GradingOptions(ASSIGNMENT, course=root, scheduler=dask.address, progress=None))
    assert report.failures == {}, (tmp_path / "dask.log").read_text()[-3000:]
    (row,) = report.rows
    # the instructor's model graded against itself: full points, or the search pending where this
    # tiny table cannot tell it from random (tests/course/test_cost_model_term.py says the same)
    assert row.parts["ranking"] == samples["ada"].expected["ranking"][0] and row.parts["search"] in (4.0, None), row
    graded = json.loads((root / "autograded" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text())
    (record,) = graded["metadata"][METADATA_KEY]["cost_models"].values()
    # the table the grade was computed on is the one in the worker's folder, and only there
    tables = [json.loads(p.read_text()) for p in worker_tables.glob("*.json") if not p.name.startswith("bar-")]
    assert [t["key"] for t in tables] == [record["table_key"]], tables
    assert record["table_key"]["grid"] == "tiny"
    assert not instructor_tables.exists() or not any(instructor_tables.iterdir())
    assert worker_tables.stat().st_mode & 0o077 == 0  # private, as on the instructor's machine
    assert (root / "feedback" / "ada" / ASSIGNMENT / f"{ASSIGNMENT}.html").is_file()  # and its feedback came back
