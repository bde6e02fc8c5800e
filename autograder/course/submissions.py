"""The submissions of an assignment, and which of them need (re)grading, and why.

nbgrader keeps a collected submission in submitted/STUDENT/ASSIGNMENT/ and its graded copy in
autograded/STUDENT/ASSIGNMENT/. Whether a submission needs grading is decided by its content,
never by file times or timestamp.txt dates: when a grading has finished (its grades are in the
course's gradebook, its feedback written) the run records, beside the graded copy, a sha256 of
each submitted notebook and of timestamp.txt (GRADED_RECORD). A submission is graded again when
those differ (edited in place, resubmitted, a notebook added or removed), when there is no
graded copy or no record (never graded, or its last grading failed and was removed), when a
notebook is missing from the graded copy, when the gradebook does not hold the submission, and
when some of its points are pending and this run can score them: a grader fault is retried by
every run, points pending for want of a GPU by a run that has one (--rpc, or a local GPU).
Every decision carries the reason the run's summary shows.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

GRADED_RECORD = ".tvm-course-graded.json"  # in autograded/STUDENT/ASSIGNMENT/, written after a finished grading
RECORD_FORMAT = "tvm-course-graded/1"
TIMESTAMP_FILE = "timestamp.txt"


@dataclass(frozen=True)
class Submission:
    student: str
    directory: Path  # submitted/STUDENT/ASSIGNMENT
    notebooks: tuple[str, ...]  # notebook names without .ipynb


@dataclass(frozen=True)
class Recorded:
    """What the course's gradebook holds of one student's submission."""

    timestamp: datetime | None
    pending: tuple[str, ...] = ()  # grade cells with neither an automatic nor a manual score
    notebooks: tuple[str, ...] = ()  # the assignment's notebooks (their released names, without .ipynb)


@dataclass(frozen=True)
class Decision:
    grade: bool
    reason: str  # a short code: new, changed, forced, pending-gpu, grader-fault, unchanged, ...
    detail: str  # what the summary says, in words

    def __str__(self) -> str:
        return self.detail


@dataclass(frozen=True)
class RunAbilities:
    """What this run can score that an earlier one perhaps could not."""

    gpu: str | None = None  # where GPU code runs in this run ("RPC device 'h100' via HOST:PORT", "this machine"), or None


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


def submission_digest(directory: Path) -> dict[str, str]:
    """sha256 of each submitted notebook (each entry named *.ipynb) and of timestamp.txt: the content that is graded."""
    directory = Path(directory)
    try:  # every entry that claims to be a notebook, hidden ones too: which are there decides what is graded
        from ..nbgrader_ext.released_names import notebook_entries  # here: it imports nbgrader (1 s)

        entries = notebook_entries(os.listdir(directory))
    except OSError:
        entries = []
    names = entries + ([TIMESTAMP_FILE] if (directory / TIMESTAMP_FILE).is_file() else [])
    return {name: content_digest(directory / name) for name in names}


def content_digest(path: Path) -> str:
    """sha256 of a regular file's bytes; of anything else (a symbolic link, a directory, a pipe,
    a file that cannot be read), of what it is: the run refuses to grade such a "notebook" and
    says why (nbgrader_ext/notebook_file.py), so it must never fail, block or follow a link here."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            return hashlib.sha256(b"symbolic link to " + os.fsencode(os.readlink(path))).hexdigest()
        if not stat.S_ISREG(info.st_mode):
            return hashlib.sha256(f"not a regular file ({stat.S_IFMT(info.st_mode):o})".encode()).hexdigest()
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError as error:
        return hashlib.sha256(f"cannot be read ({error.strerror or error.__class__.__name__})".encode()).hexdigest()


def record_graded(graded: Path, digest: dict[str, str]) -> None:
    """Say, beside the graded copy, what content was graded (after a grading that finished)."""
    record = {"format": RECORD_FORMAT, "sha256": digest, "graded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (Path(graded) / GRADED_RECORD).write_text(json.dumps(record, indent=1, sort_keys=True), encoding="utf-8")


def graded_record(graded: Path) -> dict[str, str] | None:
    """The digest recorded when `graded` was made, or None (no record, or not one of ours)."""
    try:
        record = json.loads((Path(graded) / GRADED_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT or not isinstance(record.get("sha256"), dict):
        return None
    return {str(k): str(v) for k, v in record["sha256"].items()}


def recorded_submissions(coursedir, assignment: str) -> dict[str, Recorded]:
    """student -> what the course's gradebook holds of their submission of `assignment`."""
    from nbgrader.api import Gradebook

    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return {}  # opening it would create an empty gradebook
    found = {}
    with Gradebook(url, coursedir.course_id) as gradebook:
        for submission in gradebook.assignment_submissions(assignment):
            pending = tuple(sorted(
                grade.name for notebook in submission.notebooks for grade in notebook.grades
                if grade.auto_score is None and grade.manual_score is None
            ))
            found[submission.student_id] = Recorded(submission.timestamp, pending,
                                                    tuple(sorted(notebook.name for notebook in submission.notebooks)))
    return found


def pending_cause(graded: Path) -> str | None:
    """Why the graded copy's pending points are pending, from the trusted grader's record:
    "grader-fault" (the grader failed: retry), "needs-gpu" (no GPU was there), or None."""
    from ..nbgrader_ext.trusted import graded_record as trusted_record  # the record as every reader of it reads it

    causes = set()
    for path in sorted(Path(graded).glob("*.ipynb")):
        for result in ((trusted_record(path) or {}).get("results") or {}).values():
            if result.get("grader_fault"):
                causes.add("grader-fault")
            elif result.get("status") == "needs-gpu":
                causes.add("needs-gpu")
    return "grader-fault" if "grader-fault" in causes else ("needs-gpu" if causes else None)


def grading_decision(coursedir, assignment: str, submission: Submission, recorded: dict[str, Recorded] | None = None,
                     abilities: RunAbilities = RunAbilities(), force: bool = False) -> Decision:
    """Whether `submission` is graded in this run, and why. `recorded`:
    recorded_submissions(coursedir, assignment), read here when not given."""
    graded = graded_directory(coursedir, assignment, submission.student)
    if recorded is None:
        recorded = recorded_submissions(coursedir, assignment)
    if submission.student not in recorded and dropped(coursedir, submission.student, graded):
        return Decision(False, "not-in-class", DROPPED)  # before --force: a dropped student stays dropped
    if force:
        return Decision(True, "forced", "graded again (--force)")
    if not graded.is_dir():
        return Decision(True, "new", "not graded yet (or its last grading failed)")
    # every released notebook is graded under its name, whatever the files handed in are named
    # (nbgrader_ext/released_names.py): a notebook of another name has no graded copy of its own
    held = recorded.get(submission.student)
    expected = held.notebooks if held is not None and held.notebooks else submission.notebooks
    missing = [f"{name}.ipynb" for name in expected if not (graded / f"{name}.ipynb").exists()]
    if missing:
        return Decision(True, "incomplete", f"its graded copy lacks {', '.join(missing)}")
    was = graded_record(graded)
    if was is None:
        return Decision(True, "no-record", "no record of what was graded (graded by an earlier version, or the grading did not finish)")
    now = submission_digest(submission.directory)
    if now != was:
        return Decision(True, "changed", f"changed since it was graded: {_changes(was, now)}")
    if recorded is None:
        recorded = recorded_submissions(coursedir, assignment)
    held = recorded.get(submission.student)
    if held is None:
        return Decision(True, "not-recorded", "its grades are not in the gradebook")
    if held.pending:
        cause = pending_cause(graded)
        cells = ", ".join(held.pending)
        if cause == "grader-fault":
            return Decision(True, "grader-fault", f"the grader failed on it last time ({cells} pending): graded again")
        if cause == "needs-gpu" and abilities.gpu:
            return Decision(True, "pending-gpu", f"{cells} pending for want of a GPU: graded on {abilities.gpu}")
        if cause == "needs-gpu":
            return Decision(False, "pending-gpu", f"unchanged; {cells} pending until a run with a GPU (--rpc HOST:PORT --key KEY, or on a GPU host)")
        return Decision(False, "pending-manual", f"unchanged; {cells} need manual grading")
    return Decision(False, "unchanged", "unchanged since it was graded (same content)")


DROPPED = ("from a student not in the class: graded before, then removed from the gradebook (`nbgrader db student "
           "remove`); not graded, not exported (to take them back: `nbgrader db student add ID`, then grade)")


def dropped(coursedir, student: str, graded: Path) -> bool:
    """Whether `student` was dropped from the class: a grading of theirs was recorded (the record is
    written only once their grades were in the gradebook), and the gradebook holds them no more.
    A student who submitted without ever being graded or enrolled is graded (and enrolled) as before."""
    if graded_record(graded) is None:
        return False
    enrolled = enrolled_students(coursedir)
    return bool(enrolled) and student not in enrolled  # an empty (lost, new) gradebook drops no one


def enrolled_students(coursedir) -> set[str]:
    """The student ids in the course's gradebook."""
    from nbgrader.api import Gradebook

    url = coursedir.db_url
    if url.startswith("sqlite:///") and not Path(url[len("sqlite:///"):]).exists():
        return set()
    with Gradebook(url, coursedir.course_id) as gradebook:
        return {student.id for student in gradebook.students}


def needs_grading(coursedir, assignment: str, submission: Submission, recorded: dict[str, Recorded] | None = None) -> bool:
    return grading_decision(coursedir, assignment, submission, recorded).grade


def _changes(was: dict[str, str], now: dict[str, str]) -> str:
    said = [f"{name} edited" for name in sorted(set(was) & set(now)) if was[name] != now[name]]
    said += [f"{name} added" for name in sorted(set(now) - set(was))]
    said += [f"{name} removed" for name in sorted(set(was) - set(now))]
    return ", ".join(said)


def fingerprint(directory: Path) -> dict[str, str]:
    """sha256 of every file under `directory`, by relative path (to show nothing changed them)."""
    return {
        str(path.relative_to(directory)): content_digest(path)
        for path in sorted(Path(directory).rglob("*"))
        if path.is_file() or path.is_symlink()
    }
