"""The grading run's results: one row per submission, as a table and as CSV.

Scores come from the gradebook (so a manual score an instructor entered shows); the status and
speedup of a schedule come from the trusted grader's record in the autograded notebook.
What a submission changed in the released notebook (tampering.py) flags it for review.
"""
from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from ..engine.untrusted_text import visible
from ..nbgrader_ext.plan import METADATA_KEY
from .submissions import graded_directory
from .tampering import ReleasedAssignment


@dataclass
class Row:
    student: str
    score: float | None = None
    max_score: float = 0.0
    status: str = "not graded"
    speedup: float | None = None
    parts: dict[str, float | None] = field(default_factory=dict)  # grade cell -> points (None: pending)
    needs_manual_grade: bool = False
    review: bool = False
    note: str = ""
    changes: str = ""  # what the submission changed in the released notebook (tampering.py); flagged for review


def collect_rows(coursedir, assignment: str, students: list[str], failures: dict[str, str]) -> list[Row]:
    rows = []
    released = ReleasedAssignment.load(coursedir, assignment)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        for student in students:
            row = Row(student)
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                submission = None
            if submission is not None:
                row.max_score = float(submission.max_score)
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        ungraded = grade.auto_score is None and grade.manual_score is None
                        row.parts[grade.name] = None if ungraded else float(grade.score)
                known = [p for p in row.parts.values() if p is not None]
                row.score = float(sum(known)) if known or not row.parts else None
                row.needs_manual_grade = bool(submission.needs_manual_grade)
            _read_trusted_record(row, graded_directory(coursedir, assignment, student))
            row.changes = released.changes(Path(coursedir.format_path(coursedir.submitted_directory, student, assignment)))
            row.review = row.review or bool(row.changes)
            if student in failures:
                row.status, row.note = "grading-failed", visible(failures[student].strip().splitlines()[0])
            rows.append(row)
    return rows


def _read_trusted_record(row: Row, graded: Path) -> None:
    statuses = []
    for path in sorted(graded.glob("*.ipynb")):
        try:
            record = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(METADATA_KEY, {})
        except (OSError, ValueError):
            continue
        for result in record.get("results", {}).values():
            statuses.append(result.get("status", "?"))
            if row.speedup is None and result.get("speedup") is not None:
                row.speedup = float(result["speedup"])
            row.review = row.review or bool(result.get("review"))
            if not row.note and result.get("status") != "passed":
                row.note = _reason(result)
    if statuses:
        row.status = ",".join(statuses)


def _reason(result: dict) -> str:
    """The first failed check's message, or else the first message: why a schedule fell short."""
    failed = [f"{c['name']}: {c['message']}" for c in result.get("checks", []) if not c.get("passed")]
    reasons = failed + list(result.get("messages", []))
    return visible(" ".join(str(reasons[0]).split())[:300]) if reasons else ""


def format_table(rows: list[Row]) -> str:
    header = ("student", "score", "status", "speedup", "notes")
    lines = [header]
    for row in rows:
        score = "-" if row.score is None else f"{row.score:g} / {row.max_score:g}"
        if row.score is not None and any(p is None for p in row.parts.values()):
            score += " + pending"
        notes = "; ".join(filter(None, ["needs manual grading" if row.needs_manual_grade else "", _review_note(row), row.note]))
        lines.append((row.student, score, row.status, "-" if row.speedup is None else f"{row.speedup:.2f}x", notes[:90]))
    widths = [max(len(line[i]) for line in lines) for i in range(4)]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line[:4], widths)) + "  " + line[4] for line in lines]
    text.insert(1, "-" * min(120, max(len(t) for t in text)))
    return "\n".join(t.rstrip() for t in text)


def write_csv(rows: list[Row], path: Path) -> None:
    parts = sorted({name for row in rows for name in row.parts})
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "score", "max_score", "status", "speedup", *parts, "needs_manual_grade", "review", "note", "changes"])
        for row in rows:
            writer.writerow(
                [row.student, _number(row.score), _number(row.max_score), row.status, _number(row.speedup)]
                + [_number(row.parts.get(name)) for name in parts]
                + [int(row.needs_manual_grade), int(row.review), row.note, row.changes]
            )


def _review_note(row: Row) -> str:
    if not row.review:
        return ""
    return f"flagged for review ({row.changes})" if row.changes else "flagged for review"


def _number(value) -> str:
    return "" if value is None else f"{value:g}"
