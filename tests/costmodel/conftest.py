"""The cost-model tests' table: the tiny space (24 candidates of a small shape), measured on this
machine once per session by the grader's own child, into a private folder of the session's; and
the full-credit bar, the instructor's solution, read from the course's source notebook as the
class run reads it (nbgrader_ext/plan.py)."""
from __future__ import annotations

import pytest

from autograder.costmodel import space, table
from autograder.nbgrader_ext.plan import load_plan

from bundled_course import source_notebook


def solution_source() -> str:
    """The source notebook's cost-model solution cell, as the class run's plan keeps it."""
    plan = load_plan(source_notebook("cost-model"))
    return next(a.solution for a in plan.answers.values() if a.kind == "cost-model")


@pytest.fixture(scope="session")
def tables_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cost-model-tables")


@pytest.fixture(scope="session")
def tiny_table(tables_folder) -> table.Table:
    return table.measure(space.TINY_SHAPE, "tiny", folder=tables_folder)
