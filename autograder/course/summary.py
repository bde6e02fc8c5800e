"""The grading run's results: one row per submission, as a table and as CSV.

Scores come from the gradebook (so a manual score an instructor entered shows); the schedule's
status and speedup come from the trusted grader's record in the autograded notebook. The two
are kept apart: `status` is the assignment's (full marks, points lost, pending, not graded,
grading-failed), `schedule` is the schedule's Result status (passed, failed, error, ...), so a
schedule that passed in a submission that lost the arithmetic's points reads "points lost,
passed". Whenever points were lost, `lost` says which cells lost how many, and why, from the
same verdicts the feedback shows. What a submission changed in the released notebook
(tampering.py) flags it for review, and so does a notebook refused as not a notebook (scored 0:
the note says why). A grader fault (the grader failed, not the student) leaves
its parts pending; the student's feedback says only that, and the full messages go to the
instructor: the notes, and ASSIGNMENT-grader-faults.log beside the CSV.
"""
from __future__ import annotations

import csv
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

from nbgrader.api import Gradebook, MissingEntry

from ..engine.report import Result
from ..engine.untrusted_text import visible
from ..nbgrader_ext.normalise import refusal_text
from ..nbgrader_ext.plan import GradingPlan, PlanError, load_plan
from ..nbgrader_ext.released_names import stand_in_note
from ..nbgrader_ext.trusted import graded_record
from .submissions import graded_directory
from .tampering import ReleasedAssignment

# The assignment's status (Row.status): what the CSV's and the LMS export's `status` column says.
AssignmentStatus = Literal["full marks", "points lost", "pending", "not graded", "grading-failed"]
FULL: Final = "full marks"
LOST: Final = "points lost"
PENDING: Final = "pending"
NOT_GRADED: Final = "not graded"
FAILED: Final = "grading-failed"


@dataclass
class Row:
    student: str
    score: float | None = None  # points in the gradebook, before any late penalty; None: nothing scored yet
    max_score: float = 0.0
    status: AssignmentStatus = NOT_GRADED
    speedup: float | None = None
    parts: dict[str, float | None] = field(default_factory=dict)  # grade cell -> points (None: pending)
    needs_manual_grade: bool = False
    review: bool = False
    note: str = ""
    changes: str = ""  # what the submission changed in the released notebook (tampering.py); flagged for review
    # the schedule's Result.status (several, comma-separated, for several schedules; "?": unreadable);
    # a cost model's: each part's share of its points, or "failed" or "pending" (_cost_model_status)
    schedule: str = "-"
    lost: str = ""  # which points were lost and why
    out_of: dict[str, float] = field(default_factory=dict)  # grade cell -> its points
    late_penalty: float = 0.0
    grader_faults: list[str] = field(default_factory=list)  # the grader's own failures, in full (instructor only)
    run: str = ""  # why this run graded it or not (submissions.Decision)
    run_reason: str = ""  # the decision's short code

    @property
    def pending(self) -> list[str]:
        return [name for name, points in self.parts.items() if points is None]

    @property
    def final_score(self) -> float | None:
        """The score the LMS gets: after the late penalty; None while anything is pending."""
        if self.score is None or self.pending or self.status == FAILED:
            return None
        return max(0.0, self.score - self.late_penalty)


def collect_rows(coursedir, assignment: str, students: list[str], failures: dict[str, str], decisions: dict | None = None) -> list[Row]:
    rows = []
    released = ReleasedAssignment.load(coursedir, assignment)
    plans = _plans(coursedir, assignment)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        for student in students:
            row = Row(student)
            try:
                submission = gradebook.find_submission(assignment, student)
            except MissingEntry:
                submission = None
            if submission is not None:
                row.max_score = float(submission.max_score)
                row.late_penalty = float(submission.late_submission_penalty or 0.0)
                for notebook in submission.notebooks:
                    for grade in notebook.grades:
                        ungraded = grade.auto_score is None and grade.manual_score is None
                        row.parts[grade.name] = None if ungraded else float(grade.score)
                        row.out_of[grade.name] = float(grade.max_score)
                known = [p for p in row.parts.values() if p is not None]
                row.score = float(sum(known)) if known or not row.parts else None
                row.needs_manual_grade = bool(submission.needs_manual_grade)
            record = _read_trusted_record(row, graded_directory(coursedir, assignment, student))
            row.changes = released.changes(Path(coursedir.format_path(coursedir.submitted_directory, student, assignment)))
            row.review = row.review or bool(row.changes)
            if submission is not None:
                full = row.score is not None and row.score - row.late_penalty >= row.max_score - 1e-9
                row.status = PENDING if row.pending else (FULL if full else LOST)
                row.lost = _lost_points(row, plans, record)
            if row.grader_faults:
                row.note = f"grader fault (pending; in full in {assignment}-grader-faults.log): {row.grader_faults[0].splitlines()[0][:200]}"
            if student in failures:
                row.status, row.note = FAILED, visible(failures[student].strip().splitlines()[0])
            if decisions and student in decisions:
                decision = decisions[student]
                row.run = ("graded: " if decision.grade else "not graded: ") + decision.detail
                row.run_reason = decision.reason
            rows.append(row)
    return rows


def _plans(coursedir, assignment: str) -> GradingPlan:
    """The grading plan of the assignment's source notebooks, merged (empty where unreadable)."""
    merged = GradingPlan()
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    for path in sorted(source.glob("*.ipynb")):
        try:
            plan = load_plan(path)
        except (PlanError, OSError, ValueError):
            continue
        merged.answers.update(plan.answers)
        merged.scored.update(plan.scored)
        merged.reports.update(plan.reports)
    return merged


def _read_trusted_record(row: Row, graded: Path) -> dict:
    statuses: list[str] = []
    refused: list[str] = []
    recovered: list[str] = []
    merged: dict[str, dict] = {"results": {}, "questions": {}, "cost_models": {}}
    for path in sorted(graded.glob("*.ipynb")):
        record = graded_record(path)
        if record is None:
            continue
        cause = record["submission"].get("refused")
        if cause is not None:  # scored 0 without being graded: the instructor should know why
            refused.append(f"{path.name} {refusal_text(cause)}")
        named = record["submission"].get("released_name")
        if cause is None and named is not None and named.get("stand_in"):  # graded from a file of another name: look
            recovered.append(stand_in_note(named))
        for grade_id, how in sorted(record["submission"].get("recovered", {}).items()):  # a guess, however good: look
            recovered.append(f"answer cell '{grade_id}' recovered: {how}")
        recovered.extend(why for _, why in sorted(record["submission"].get("unidentified", {}).items()))
        merged["results"].update(record["results"])
        merged["questions"].update(record["questions"])
        merged["cost_models"].update(record["cost_models"])
        for grade_id, found in record["results"].items():
            result = _result(found)
            if result is None:  # the grader's own record, through nbgrader and a disk: unreadable is its fault, never a zero
                statuses.append("?")
                row.grader_faults.append(visible(f"the grading record of answer '{grade_id}' in {path.name} does not read as a Result"))
                continue
            statuses.append(result.status)
            if row.speedup is None and result.speedup is not None:
                row.speedup = result.speedup
            row.review = row.review or result.review
            if result.grader_fault:
                row.grader_faults.append(visible("\n".join(result.messages) or result.status))
            elif not row.note and result.status != "passed":
                row.note = _reason(result)
        for cost_model in record.get("cost_models", {}).values():  # a part the grader could not score: its why, for the log
            parts = cost_model.get("parts") if isinstance(cost_model.get("parts"), dict) else {}
            for name, part in sorted(parts.items()):
                if isinstance(part, dict) and part.get("fraction") is None:
                    row.grader_faults.append(visible(f"{name}: " + " ".join(str(line) for line in part.get("lines", []))))
            statuses.append(_cost_model_status(parts))
            if not row.note:
                row.note = _cost_model_failure(parts)
    if statuses:
        row.schedule = ",".join(statuses)
    if recovered:
        row.note, row.review = visible("; ".join(recovered + ([row.note] if row.note else []))), True
    if refused:
        row.note, row.review = visible("; ".join(refused)), True
    return merged


def _result(found: dict) -> Result | None:
    """A graded notebook's record of one schedule (Result.to_dict, by this version or an earlier
    one), or None where it does not read as one."""
    try:
        return Result.from_dict(found)
    except (TypeError, ValueError):
        return None


def _reason(result: Result) -> str:
    """The first failed check's message, or else the first message: why a schedule fell short."""
    reasons = [f"{c.name}: {c.message}" for c in result.checks if not c.passed] + result.messages
    return visible(" ".join(reasons[0].split())[:300]) if reasons else ""


def _cost_model_status(parts: dict) -> str:
    """A cost model's entry in the schedule column: each part's share of its points, or that the
    learner failed in it, or that it is pending: "ranking 100% / search failed"."""
    said = []
    for name, part in sorted(parts.items()):
        if not isinstance(part, dict):
            continue
        fraction = part.get("fraction")
        if fraction is None:
            word = "pending"
        elif part.get("failed") is True:
            word = "failed"
        else:
            word = f"{fraction:.0%}" if type(fraction) in (int, float) else "?"
        said.append(f"{name} {word}")
    return visible(" / ".join(said)) or "?"


def _cost_model_failure(parts: dict) -> str:
    """Why the learner failed, from the first part it failed in ("" if none): the notes' reason."""
    for _, part in sorted(parts.items()):
        lines = part.get("lines") if isinstance(part, dict) and part.get("failed") is True else None
        if isinstance(lines, list) and lines:
            return visible(" ".join(str(lines[0]).split())[:300])
    return ""


def _lost_points(row: Row, plan: GradingPlan, record: dict) -> str:
    """Which cells lost points, how many, and why: "speed -3 of 3 (0.31x the speed of the yardstick)"."""
    groups: dict[str, list[tuple[str, float, float]]] = {}  # why -> [(cell, lost, out of)]: parts lost for one reason go together
    for name, points in row.parts.items():
        out_of = row.out_of.get(name, 0.0)
        if points is None or points >= out_of - 1e-9:
            continue
        groups.setdefault(_why_lost(name, plan, record), []).append((name, out_of - points, out_of))
    said = []
    for why, cells in groups.items():
        names = ", ".join(name for name, _, _ in cells)
        lost, out_of = sum(c[1] for c in cells), sum(c[2] for c in cells)
        said.append(f"{names} -{lost:g} of {out_of:g}" + (f" ({why})" if why else ""))
    if row.late_penalty:
        said.append(f"late -{row.late_penalty:g}")
    return visible("; ".join(said))


def _why_lost(grade_id: str, plan: GradingPlan, record: dict) -> str:
    from ..nbgrader_ext.credit import score_part

    cell = plan.scored.get(grade_id)
    if cell is None or cell.answer not in plan.answers:
        return ""
    answer = plan.answers[cell.answer]
    try:
        if answer.kind == "schedule":
            result = record["results"].get(answer.grade_id)
            if result is None:
                return ""
            message = score_part(Result.from_dict(result), cell.part).message
            return _short(message.split("; ", 1)[1] if "; " in message else message)
        if answer.kind == "cost-model":  # the part's numbers, or why the learner failed in it (costmodel/grade.py)
            part = ((record.get("cost_models", {}).get(answer.grade_id) or {}).get("parts") or {}).get(cell.part) or {}
            return visible(str(part.get("gist") or ""))
        marks = record["questions"].get(answer.grade_id) or {}
        lines = [str(line) for line in marks.get("lines", [])]
        wrong = [re.split(r"[ =:]", line, maxsplit=1)[0] for line in lines if re.match(r"^[A-Z_][A-Z0-9_]* ", line) and ": right" not in line]
        return f"wrong: {', '.join(wrong)}" if wrong else _short(lines[0]) if lines else ""
    except (KeyError, TypeError, ValueError, AttributeError):  # a record of another version: say nothing rather than fail
        return ""


def _short(text: str, limit: int = 100) -> str:
    """The gist of a verdict: parentheticals dropped, up to the first ': ' or '. '."""
    text = " ".join(re.sub(r"\s*\([^()]*\)", "", text).split())
    text = re.split(r": |\. ", text, maxsplit=1)[0]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def format_table(rows: list[Row]) -> str:
    header = ("student", "score", "status", "schedule", "speedup", "this run", "notes")
    lines = [header]
    for row in rows:
        score = "-" if row.score is None else f"{row.score:g} / {row.max_score:g}"
        if row.score is not None and row.pending:
            score += " + pending"
        run = ("graded" if row.run.startswith("graded") else "skipped") + f" ({row.run_reason})" if row.run_reason else ""
        notes = "; ".join(filter(None, [
            _review_note(row), f"lost {row.lost}" if row.lost else "", "needs manual grading" if row.needs_manual_grade else "", row.note,
        ]))
        lines.append((row.student, score, row.status, row.schedule, "-" if row.speedup is None else f"{row.speedup:.2f}x", run, notes[:140]))
    widths = [max(len(line[i]) for line in lines) for i in range(6)]
    text = ["  ".join(cell.ljust(width) for cell, width in zip(line[:6], widths)) + "  " + line[6] for line in lines]
    text.insert(1, "-" * min(140, max(len(t) for t in text)))
    return "\n".join(t.rstrip() for t in text)


def write_csv(rows: list[Row], path: Path) -> None:
    parts = sorted({name for row in rows for name in row.parts})
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["student", "score", "max_score", "status", "speedup", "schedule", "lost", "late_penalty", "this_run",
                         *parts, "needs_manual_grade", "review", "note", "changes"])
        for row in rows:
            writer.writerow(
                [row.student, _number(row.score), _number(row.max_score), row.status, _number(row.speedup), row.schedule,
                 row.lost, _number(row.late_penalty), row.run]
                + [_number(row.parts.get(name)) for name in parts]
                + [int(row.needs_manual_grade), int(row.review), row.note, row.changes]
            )


def mark_stale(path: Path, why: str) -> None:
    """Say in every row of an existing CSV (its this_run column) that it is stale: a grading run
    has started, and until it ends with the CSV written again, the rows may be out of date (an
    interrupted run, Ctrl-C or a full disk, leaves it so, saying so)."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        return
    if not rows or "this_run" not in rows[0]:
        return
    column = rows[0].index("this_run")
    for row in rows[1:]:
        if len(row) > column:
            row[column] = f"STALE: {why}"
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows(rows)
    temporary.chmod(0o600)
    os.replace(temporary, path)


def write_fault_log(rows: list[Row], failures: dict[str, str], path: Path) -> Path | None:
    """Every grader fault and failed grading of the assignment, in full, for the instructor (the
    students' feedback says only that the grader failed). Rewritten each run from what is
    recorded now; removed when there is nothing to say."""
    blocks = []
    for row in rows:
        entries = [f"grader fault (its parts pending until regraded):\n{fault}" for fault in row.grader_faults]
        if row.student in failures:
            entries.append(f"grading failed:\n{visible(failures[row.student].strip())}")
        if entries:
            blocks.append(f"== {row.student} ==\n" + "\n\n".join(entries))
    path = Path(path)
    if not blocks:
        path.unlink(missing_ok=True)
        return None
    path.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    path.chmod(0o600)
    return path


def _review_note(row: Row) -> str:
    if not row.review:
        return ""
    return f"flagged for review ({row.changes})" if row.changes else "flagged for review"


def _number(value) -> str:
    return "" if value is None else f"{value:g}"
