"""Releasing feedback before grading has finished (issue 36, item 1): `nbgrader release_feedback`
and the formgrader's Release Feedback (NbGraderAPI.release_feedback) refuse, naming each student
and what to run, and release nothing, until the feedback is finished; a grading run under way or
interrupted stops it too; `--CourseReleaseFeedback.partial=True` releases only the finished ones
and says who was left out; success is never reported for nothing released.

The user's path with nbgrader's real commands and gradebook: a scratch course, the exchange in a
local folder (as test_exchange.py), one student submitting through it (whoever runs the tests, as
on a hub) and one whose submission came from an LMS download (no submission_secret.txt).
"""
from __future__ import annotations

import os

import nbformat
import pytest

from autograder.course import grading_marker
from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.samples import build_submission, load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

from .conftest import COURSE
from .test_exchange import ASSIGNMENT, STUDENT, nbgrader
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow


def release(root, exchange, *options):
    return command("nbgrader", "release_feedback", ASSIGNMENT, f"--Exchange.root={exchange}", *options, cwd=root)


def released(exchange) -> list[str]:
    folder = exchange / "tvm-course" / "feedback"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def formgrader_release(root, exchange) -> dict:
    """What the formgrader's Release Feedback button runs, with the course's config."""
    from nbgrader.apps.api import NbGraderAPI

    config = load_course_config(root)
    config.Exchange.root = str(exchange)
    return NbGraderAPI(coursedir=course_directory(config), config=config).release_feedback(ASSIGNMENT)


def test_feedback_is_released_only_when_finished(tmp_path):
    root = copy_course(COURSE, tmp_path / "instructor" / "course")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    release_assignment(root, ASSIGNMENT, students=[STUDENT, "ada"])
    instructor = tmp_path / "instructor"

    nothing = release(root, exchange)
    assert nothing.returncode == 1 and "Nothing released: there is no feedback on tiling to release." in nothing.stderr, nothing.stderr
    assert released(exchange) == []

    # the student fetches, answers (as the sample dev), submits; ada's comes from an LMS download
    nbgrader(["release_assignment", ASSIGNMENT], root, instructor, exchange)
    home = tmp_path / "home"
    home.mkdir()
    cache = home / ".nbgrader-cache"
    nbgrader(["fetch_assignment", ASSIGNMENT], home, home, exchange, cache)
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    dev = {s.student: s for s in load_samples(root, ASSIGNMENT)}["dev"]
    nbformat.write(build_submission(nbformat.read(fetched, as_version=4), dev), fetched)
    nbgrader(["submit", ASSIGNMENT], home, home, exchange, cache)
    nbgrader(["collect", ASSIGNMENT], root, instructor, exchange)
    submit_samples(root, ASSIGNMENT, only=["ada"])

    early = release(root, exchange)
    assert early.returncode == 1, early.stdout + early.stderr
    said = early.stderr
    assert "Nothing released: feedback on tiling unfinished for 2 student(s):" in said, said
    assert f"{STUDENT}: not graded yet" in said and "ada: not graded yet" in said
    assert "tvm-course grade tiling" in said and released(exchange) == []
    button = formgrader_release(root, exchange)
    assert button["success"] is False and "Nothing released" in button["log"] and "ada: not graded yet" in button["log"], button
    assert released(exchange) == []
    # The formgrader's error dialog shows the log in a box 80 columns wide (longer lines are cut off
    # there), then the traceback: each student's command whole on a line of its own, the traceback's
    # last line only the headline (the hub check, tests/hub, reads the same dialog in Chromium).
    lines = button["log"].rstrip("\n").splitlines()
    assert lines[0] == "[CRITICAL] Nothing released: feedback on tiling unfinished for 2 student(s):", lines
    assert all(len(line) <= 80 for line in lines), [line for line in lines if len(line) > 80]
    for student in ("ada", STUDENT):  # (the log's formatter indents a message's further lines by 4)
        assert f"tvm-course grade tiling --student {student}" in [line.strip() for line in lines], lines
    assert button["error"].rstrip().splitlines()[-1].endswith(lines[0].removeprefix("[CRITICAL] ")), button["error"]

    graded = command("tvm-course", "grade", ASSIGNMENT, "--course", str(root), "--student", STUDENT, *GRADE_OPTIONS)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    half = release(root, exchange)
    assert half.returncode == 1 and "unfinished for 1 student(s)" in half.stderr and "ada: not graded yet" in half.stderr
    assert "--CourseReleaseFeedback.partial=True" in half.stderr and released(exchange) == []

    # a grading run under way (this process stands for it), then one that was interrupted (a pid no process has)
    grading_marker.start(root, ASSIGNMENT)
    running = release(root, exchange, "--CourseReleaseFeedback.partial=True")
    assert running.returncode == 1 and "under way" in running.stderr and released(exchange) == [], running.stderr
    marker = grading_marker.marker_path(root, ASSIGNMENT)
    marker.write_text(marker.read_text().replace(f'"pid": {os.getpid()}', '"pid": 999999999'))
    interrupted = release(root, exchange, "--CourseReleaseFeedback.partial=True")
    assert interrupted.returncode == 1 and "was interrupted" in interrupted.stderr and released(exchange) == [], interrupted.stderr
    marker.unlink()

    partial = release(root, exchange, "--CourseReleaseFeedback.partial=True")
    assert partial.returncode == 0, partial.stderr
    assert f"Released feedback on tiling to 1 student(s): {STUDENT}" in partial.stderr
    assert "Not released to ada: not graded yet" in partial.stderr
    assert len(released(exchange)) == 1
    page = exchange / "tvm-course" / "feedback" / released(exchange)[0]
    assert page.stat().st_mode & 0o777 == 0o644  # the course writes it owner-only; its student (another user on a hub) reads it
    nbgrader(["fetch_feedback", ASSIGNMENT], home, home, exchange, cache)
    assert list((home / ASSIGNMENT / "feedback").glob("*/tiling.html"))

    graded = command("tvm-course", "grade", ASSIGNMENT, "--course", str(root), "--student", "ada", *GRADE_OPTIONS)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    lms = release(root, exchange)
    assert lms.returncode == 1 and "ada: not submitted through the exchange" in lms.stderr, lms.stderr
    assert "through the LMS" in lms.stderr and "Grade first" not in lms.stderr
    mine = release(root, exchange, "--student", STUDENT)
    assert mine.returncode == 0 and f"to 1 student(s): {STUDENT}" in mine.stderr, mine.stderr
    assert len(released(exchange)) == 1  # the same feedback, released again in place
