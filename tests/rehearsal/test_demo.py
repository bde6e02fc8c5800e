"""`make demo`'s instructor half (rehearsal/demo.py): a scratch course of its own per run, private,
gone at the end unless kept, and no warning about its own copy. The grading itself is stood in
for (the class run has its own tests); the release and the hand-in are nbgrader's, for real."""
from __future__ import annotations

import io
import stat
import tempfile
from pathlib import Path

import pytest

from autograder.rehearsal import demo
from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.gradebook_sync import sqlite_path
from autograder.course.grading_run import RunReport, readable_by_others

pytestmark = pytest.mark.slow  # nbgrader generate_assignment, twice a run


@pytest.fixture
def graded(monkeypatch):
    """Each run's scratch course, and what the class run would warn about it, as grading starts."""
    seen = []

    def grade_assignment(options):
        root = Path(options.course)
        coursedir = course_directory(load_course_config(root))
        gradebook = sqlite_path(coursedir.db_url)
        seen.append({"root": root, "folder": root.parent, "mode": stat.S_IMODE(root.parent.stat().st_mode),
                     "warnings": readable_by_others(root, coursedir, gradebook)})
        return RunReport(course_root=root, rows=[], graded=[], skipped=[], failures={}, csv_path=root / "grades.csv",
                         feedback_dir=root / "feedback", seconds=0.0)

    monkeypatch.setattr(demo, "grade_assignment", grade_assignment)
    return seen


def test_each_run_works_in_a_private_folder_of_its_own_removed_at_the_end_without_warnings(graded):
    said = [io.StringIO(), io.StringIO()]
    assert demo.run_instructor_demo(out=said[0]) == 0
    assert demo.run_instructor_demo(out=said[1]) == 0
    folders = {run["folder"] for run in graded}
    assert len(folders) == 2, folders  # two runs (two users) never share a folder
    for run in graded:
        assert run["folder"].parent == Path(tempfile.gettempdir()) and run["folder"].name.startswith(demo.DEMO_PREFIX)
        assert run["mode"] == 0o700
        assert run["warnings"] == []  # nothing of its own copy is readable by other users
        assert not run["folder"].exists()
    for text, folder in zip((s.getvalue() for s in said), sorted(folders, key=lambda f: [r["folder"] for r in graded].index(f))):
        assert f"removed the scratch course {folder}" in text and "--keep" in text
        assert "readable by every user" not in text


def test_keep_keeps_the_folder_and_says_where(graded):
    said = io.StringIO()
    try:
        assert demo.run_instructor_demo(out=said, keep=True) == 0
        folder = graded[0]["folder"]
        assert folder.is_dir() and (folder / "course" / "nbgrader_config.py").is_file()
        assert f"kept the scratch course: {folder}" in said.getvalue()
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700  # kept, still its owner's alone
    finally:
        import shutil

        shutil.rmtree(graded[0]["folder"], ignore_errors=True)


def test_the_command_passes_keep_on(monkeypatch):
    from autograder.cli import build_parser

    args = build_parser().parse_args(["demo", "--keep"])
    assert args.keep is True and build_parser().parse_args(["demo"]).keep is False
