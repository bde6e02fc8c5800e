"""Shared fixtures for the course tests: the bundled course and its source notebooks."""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[2]
COURSE = REPO / "course"
ASSIGNMENTS = ("tiling", "gpu-tiling")


def source_notebook(assignment: str) -> Path:
    return COURSE / "source" / assignment / f"{assignment}.ipynb"


@pytest.fixture(params=ASSIGNMENTS)
def assignment(request) -> str:
    return request.param


@pytest.fixture
def notebook(assignment):
    return nbformat.read(source_notebook(assignment), as_version=4)
