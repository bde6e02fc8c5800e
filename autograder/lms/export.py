"""`tvm-course export ASSIGNMENT --format canvas|moodle|csv`: grades back into the LMS.

One row per student in the gradebook (the csv format: and per submission from anyone else; the
LMS formats leave those out, and say so: a stranger is never written into the LMS). The score is the
gradebook's, after nbgrader's late penalty. A score that is not final is never written as a
number: pending points (a GPU part graded without a GPU, a grader fault, a cell for manual
grading), a submission not graded yet or changed since it was graded, and no submission at
all leave the cell empty, and the csv format says why (`status`, `pending`).

The files, and what each LMS does with them (read in their source):

- canvas: the columns of Canvas's gradebook export, which its gradebook import reads back
  (lib/gradebook_importer.rb): "Student", "ID", "SIS User ID", "SIS Login ID", "Section", then
  one column for the assignment. The importer finds each student by ID (the Canvas user id)
  first, then by SIS ids, then by name; a blank cell (or "-") changes nothing. The assignment
  column is matched by the "(id)" at the end of its title, as Canvas's export writes it
  ("Tiling (123456)"), else by its exact title; any other title creates a new assignment. So
  pass --column with the header of Canvas's own export. ID is the student's lms_user_id (what
  `tvm-course roster --from canvas` and `tvm-course collect --from canvas` record), or the
  student id itself when it is all digits. No "Points Possible" row: it would change the
  Canvas assignment's points.
- moodle: a file for the gradebook's CSV import (grade/import/csv, whose load_data.php maps a
  column to the user through "Map from" / "Map to": userid, useridnumber, useremail or
  username, as docs.moodle.org's "Grade import" page describes): "Email address",
  "First name", "Last name", the grade column, and "Status". At import, map "Email address" to
  the user's email (Moodle's "Identify user by": useremail) and the grade column to the
  assignment's grade item; leave "Status" on Ignore. Moodle reads an empty cell (or "-") as "no
  grade": it clears a grade already there, so with --omit-pending those rows are left out.
  The email is the student's email in the gradebook, or the student id when it is one (Moodle
  students are collected under their email: lms/download.py).
- csv: everything, for a spreadsheet or another tool: student, lms_user_id, email, names,
  score, max_score, status, pending, lost, note.
"""
from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..course import grading_marker
from ..course.course_dir import CourseError
from ..course.submissions import dropped, find_submissions, graded_directory, grading_decision, recorded_submissions
from ..course.summary import FAILED, NOT_GRADED, PENDING, Row, collect_rows

FORMATS = ("canvas", "moodle", "csv")
CANVAS_STUDENT_COLUMNS = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_COLUMNS = ["Email address", "First name", "Last name"]


@dataclass
class ExportReport:
    path: Path
    rows: int
    scored: int
    empty: dict[str, list[str]]  # why -> students whose cell was left empty
    omitted: list[str]
    not_enrolled: Sequence[str] = ()  # submitted without being in the gradebook: left out of an LMS file
    max_score: float = 0.0  # the assignment's points: the LMS assignment's maximum must be the same
    unfinished: str | None = None  # a grading run of the assignment under way or interrupted (grading_marker)


@dataclass(frozen=True)
class _Student:
    id: str
    first_name: str
    last_name: str
    email: str
    lms_user_id: str
    enrolled: bool = True


def export_grades(coursedir, assignment: str, fmt: str, path: Path, *, column: str | None = None,
                  omit_pending: bool = False) -> ExportReport:
    if fmt not in FORMATS:
        raise CourseError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    students = _students(coursedir, assignment)
    rows = {row.student: row for row in collect_rows(coursedir, assignment, sorted(students), {})}
    stale = _stale(coursedir, assignment)
    scores: dict[str, tuple[float | None, str]] = {}
    for student, row in rows.items():
        scores[student] = _score(row, stale.get(student))
    header_column = column or assignment
    records: list[list[str]] = []
    empty: dict[str, list[str]] = {}
    omitted: list[str] = []
    problems: list[str] = []
    not_enrolled: list[str] = []
    for student in sorted(students):
        info, row = students[student], rows[student]
        if not info.enrolled and (fmt != "csv" or dropped(coursedir, student, graded_directory(coursedir, assignment, student))):
            not_enrolled.append(student)  # a stranger, an LMS test student or a dropped student is never written to the LMS
            continue
        score, why = scores[student]
        if score is None:
            if omit_pending:
                omitted.append(student)
                continue
            empty.setdefault(why, []).append(student)
        value = "" if score is None else f"{score:g}"
        if fmt == "canvas":
            canvas_id = info.lms_user_id or (student if student.isdigit() else "")
            if not canvas_id:
                problems.append(student)
                continue
            name = f"{info.last_name}, {info.first_name}" if info.last_name or info.first_name else student
            records.append([name, canvas_id, "", "", "", value])
        elif fmt == "moodle":
            email = info.email or (student if "@" in student else "")
            if not email:
                problems.append(student)
                continue
            records.append([email, info.first_name, info.last_name, value, why if score is None else row.status])
        else:
            records.append([student, info.lms_user_id, info.email, info.last_name, info.first_name, value, f"{row.max_score:g}",
                            why if score is None else row.status, ",".join(row.pending), row.lost, row.note])
    if problems:
        needs = "a Canvas user id (nbgrader's lms_user_id, or an all-digit student id)" if fmt == "canvas" else "an email address"
        raise CourseError(
            f"no {fmt} identity for {', '.join(problems[:10])}{' ...' if len(problems) > 10 else ''}: each row needs {needs}; "
            f"import the class from the LMS (`tvm-course roster --from {fmt} FILE`), or set it with "
            "`nbgrader db student add ID --lms-user-id=... --email=...`"
        )
    header = {
        "canvas": CANVAS_STUDENT_COLUMNS + [header_column],
        "moodle": MOODLE_COLUMNS + [header_column, "Status"],
        "csv": ["student", "lms_user_id", "email", "last_name", "first_name", "score", "max_score", "status", "pending", "lost", "note"],
    }[fmt]
    previous = os.umask(0o077)
    try:
        with open(path, "w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(records)
    finally:
        os.umask(previous)
    Path(path).chmod(0o600)
    scored = sum(1 for s in students if scores[s][0] is not None and s not in omitted and s not in not_enrolled)
    max_score = max((r.max_score for r in rows.values()), default=0.0)
    marker = grading_marker.read(Path(coursedir.root), assignment)
    return ExportReport(Path(path), len(records), scored, empty, omitted, not_enrolled, max_score,
                        None if marker is None else marker.describe())


def _students(coursedir, assignment: str) -> dict[str, _Student]:
    """Every student of the gradebook, and anyone who submitted without being in it."""
    from nbgrader.api import Gradebook

    found = {}
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        for s in gradebook.students:
            found[s.id] = _Student(s.id, s.first_name or "", s.last_name or "", s.email or "", str(s.lms_user_id or ""))
    for submission in find_submissions(coursedir, assignment):
        found.setdefault(submission.student, _Student(submission.student, "", "", "", "", enrolled=False))
    return found


def _stale(coursedir, assignment: str) -> dict[str, str]:
    """student -> why the gradebook's score for them is not the one of their submission as it is now."""
    recorded = recorded_submissions(coursedir, assignment)
    stale = {}
    for submission in find_submissions(coursedir, assignment):
        decision = grading_decision(coursedir, assignment, submission, recorded)
        if decision.grade:
            stale[submission.student] = f"not graded: {decision.detail}"
    return stale


def _score(row: Row, stale: str | None) -> tuple[float | None, str]:
    """(the score to write, or None and why not)."""
    if stale:
        return None, stale
    if row.status == NOT_GRADED:
        return None, "no graded submission"
    if row.status == FAILED:
        return None, "grading failed"
    if row.status == PENDING:
        return None, f"pending: {', '.join(row.pending)}"
    return row.final_score, row.status
