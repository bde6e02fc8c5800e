"""The course tests' names for the bundled course (tests/bundled_course.py; its fixtures,
`assignment` and `notebook`, are tests/conftest.py's)."""
from __future__ import annotations

from bundled_course import ASSIGNMENTS, COURSE, REPO, source_notebook

__all__ = ["ASSIGNMENTS", "COURSE", "REPO", "source_notebook"]
