"""The cost-model tests' table: the tiny space (24 candidates of a small shape), measured on this
machine once per session by the grader's own child, into a private folder of the session's."""
from __future__ import annotations

import pytest

from autograder.costmodel import space, table


@pytest.fixture(scope="session")
def tables_folder(tmp_path_factory):
    return tmp_path_factory.mktemp("cost-model-tables")


@pytest.fixture(scope="session")
def tiny_table(tables_folder) -> table.Table:
    return table.measure(space.TINY_SHAPE, "tiny", folder=tables_folder)
