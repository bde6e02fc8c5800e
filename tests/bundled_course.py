"""The bundled course (course/) and its assignments' source notebooks, for the tests of every room
that reads them (tests/course, tests/nbgrader_ext)."""
from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COURSE = REPO / "course"
ASSIGNMENTS = ("tiling", "gpu-tiling")


def source_notebook(assignment: str) -> Path:
    return COURSE / "source" / assignment / f"{assignment}.ipynb"
