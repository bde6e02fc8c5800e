"""The submissions of an assignment, and which of them need (re)grading.

nbgrader keeps a collected submission in submitted/STUDENT/ASSIGNMENT/ and its graded copy in
autograded/STUDENT/ASSIGNMENT/. A submission needs grading when it has no graded copy, when a
notebook is missing from the graded copy, or when it was submitted again since (its
timestamp.txt is newer): the same rule `nbgrader autograde` applies without --force. And,
since the graded copy is written before the grades reach the course's gradebook, also when the
gradebook does not hold this submission with the timestamp it was submitted at.
"""
from __future__ import annotations

import glob
import hashlib
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path


@dataclass(frozen=True)
class Submission:
    student: str
    directory: Path  # submitted/STUDENT/ASSIGNMENT
    notebooks: tuple[str, ...]  # notebook names without .ipynb


def find_submissions(coursedir, assignment: str) -> list[Submission]:
    pattern = coursedir.format_path(coursedir.submitted_directory, "*", assignment)
    excluded = set(filter(None, (coursedir.student_id_exclude or "").split(",")))
    found = []
    for directory in sorted(glob.glob(pattern)):
        student = Path(directory).parent.name
        notebooks = tuple(sorted(Path(p).stem for p in glob.glob(os.path.join(directory, "*.ipynb"))))
        if student not in excluded and notebooks:
            found.append(Submission(student, Path(directory), notebooks))
    return found


def graded_directory(coursedir, assignment: str, student: str) -> Path:
    return Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))


def recorded_submissions(coursedir, assignment: str) -> dict[str, datetime | None]:
    """student -> the timestamp of the submission of `assignment` the course's gradebook holds."""
    from nbgrader.api import Gradebook

    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return {}  # opening it would create an empty gradebook
    with Gradebook(url, coursedir.course_id) as gradebook:
        return {s.student_id: s.timestamp for s in gradebook.assignment_submissions(assignment)}


def needs_grading(coursedir, assignment: str, submission: Submission, recorded: dict[str, datetime | None] | None = None) -> bool:
    """`recorded`: recorded_submissions(coursedir, assignment), read here when not given."""
    graded = graded_directory(coursedir, assignment, submission.student)
    if not all((graded / f"{name}.ipynb").exists() for name in submission.notebooks):
        return True
    submitted_at = coursedir.get_existing_timestamp(str(submission.directory))
    graded_at = coursedir.get_existing_timestamp(str(graded))
    if submitted_at is not None and graded_at is not None and submitted_at > graded_at:
        return True
    if recorded is None:
        recorded = recorded_submissions(coursedir, assignment)
    # The grades of this very submission are in the gradebook (not missing, not an earlier one's;
    # without a timestamp.txt there is no telling which one it holds).
    if submission.student not in recorded:
        return True
    return submitted_at is not None and recorded[submission.student] != submitted_at


def fingerprint(directory: Path) -> dict[str, str]:
    """sha256 of every file under `directory`, by relative path (to show nothing changed them)."""
    return {
        str(path.relative_to(directory)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(Path(directory).rglob("*"))
        if path.is_file()
    }
