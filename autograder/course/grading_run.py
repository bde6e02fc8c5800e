"""`tvm-course grade ASSIGNMENT`: the instructor's whole grading run.

    find the submissions that need grading (all of them with force)
    ─► autograde each in a worker process, against its own copy of the gradebook
       (nbgrader + the trusted re-grade)
    ─► merge each autograded submission into the course's gradebook, here, one at a time,
       as soon as its autograde is done (before its feedback)
    ─► feedback without hidden tests, in the worker
    ─► check that no submission was modified, then a table and a CSV of every submission
       (flagging for review what a submission changed in the released notebook: tampering.py)

Running it again grades only what is new (or everything with force), updating the same
gradebook rows: the table and the CSV always cover every submission of the assignment. A
submission whose grading failed at any step (autograde, recording the grades, feedback, its
deadline) loses its autograded copy and feedback, so the next run grades it again.
"""
from __future__ import annotations

import os
import shutil
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from nbgrader.api import Gradebook, MissingEntry

from ..engine import confine
from ..nbgrader_ext.plan import PlanError, load_plan
from ..problems import get_problem
from .course_dir import CourseError, course_directory, find_course_root, load_course_config
from .gradebook_sync import copy_gradebook, merge_submission, sqlite_path, sqlite_url
from .submissions import fingerprint, find_submissions, graded_directory, needs_grading, recorded_submissions
from .summary import Row, collect_rows, write_csv
from .tampering import ReleasedAssignment
from .workers import Job, JobOutcome, WorkerSetup, run_jobs


@dataclass
class GradingOptions:
    assignment: str
    course: str | Path | None = None
    workers: int = 1
    students: list[str] | None = None  # only these (default: every submission)
    force: bool = False
    feedback: bool = True
    cell_timeout: float | None = None  # overrides the course's Execute.timeout (where notebooks are run)
    submission_timeout_s: float = 900.0  # a whole submission: trusted grading (and the kernel, if the course runs notebooks)
    grader_settings: dict = field(default_factory=dict)  # GraderConfig fields (rpc_tracker, timing_rounds, ...)
    csv_path: Path | None = None  # default: COURSE/ASSIGNMENT-grades.csv
    progress: TextIO | None = sys.stderr
    # Grade even where student code cannot be confined (no Landlock or seccomp): it then runs
    # with the grader's access to this machine, less root. Off: such a run refuses to start.
    allow_unconfined: bool = False


@dataclass
class RunReport:
    course_root: Path
    rows: list[Row]
    graded: list[str]  # graded in this run
    skipped: list[str]  # already graded and unchanged
    failures: dict[str, str]  # student -> why grading failed
    csv_path: Path
    feedback_dir: Path | None
    seconds: float
    warnings: list[str] = field(default_factory=list)


def grade_assignment(options: GradingOptions) -> RunReport:
    """Grade an assignment; everything the run creates is readable by its owner only."""
    confinement = confine.available()
    if not confinement.complete and not options.allow_unconfined:
        raise CourseError(
            f"refusing to grade: student code cannot be confined here ({confinement.reason or 'missing'}; "
            f"not enforced: {', '.join(confinement.missing())}). Grade on Linux with Landlock and libseccomp, "
            "or pass --allow-unconfined to grade anyway (student code then reads what the grading user can)"
        )
    unconfined = [] if confinement.complete else [
        f"grading without full confinement (--allow-unconfined): {', '.join(confinement.missing())} not enforced"
    ]
    previous = os.umask(0o077)
    try:
        return _grade_assignment(options, unconfined)
    finally:
        os.umask(previous)


def _grade_assignment(options: GradingOptions, warnings: list[str]) -> RunReport:
    started = time.monotonic()
    root = find_course_root(options.course)
    config = load_course_config(root, cell_timeout=options.cell_timeout, grader_settings=options.grader_settings)
    coursedir = course_directory(config)
    main_url = coursedir.db_url
    warnings = warnings + _check_assignment(coursedir, options.assignment, main_url, dict(config.TrustedGrader.get("settings", {})))
    sqlite_path(main_url).chmod(0o600)
    warnings += readable_by_others(root, coursedir, sqlite_path(main_url))
    warnings += ReleasedAssignment.load(coursedir, options.assignment).warnings  # without a release, no tampering is flagged
    submissions = find_submissions(coursedir, options.assignment)
    if not submissions:
        where = coursedir.format_path(coursedir.submitted_directory, "*", options.assignment)
        raise CourseError(f"no submissions of {options.assignment!r} in {where}: collect them first (nbgrader collect)")
    unknown = sorted(set(options.students or []) - {s.student for s in submissions})
    if unknown:
        raise CourseError(f"no submission of {options.assignment!r} from {', '.join(unknown)}")
    chosen = [s for s in submissions if not options.students or s.student in options.students]
    recorded = recorded_submissions(coursedir, options.assignment)
    todo = [s for s in chosen if options.force or needs_grading(coursedir, options.assignment, s, recorded)]
    skipped = [s.student for s in chosen if s not in todo]
    say = _Progress(options.progress, len(todo))
    say.line(
        f"Grading {len(todo)} submission(s) of {options.assignment} with {options.workers} worker(s)"
        + (f"; {len(skipped)} already graded and unchanged (--force regrades them)" if skipped else "")
    )
    for warning in warnings:
        say.line(f"warning: {warning}")

    failures: dict[str, str] = {}
    before = {s.student: fingerprint(s.directory) for s in todo}
    with tempfile.TemporaryDirectory(prefix="tvm-course-grading-") as scratch:
        merged: set[str] = set()

        def hand_out(job: Job) -> None:
            merged.discard(job.student)
            copy_gradebook(sqlite_path(main_url), job.gradebook)

        def record(job: Job) -> None:
            """Merge as soon as autograde is done, so a failure in feedback cannot lose the grades."""
            if job.student in merged or job.student in failures:
                return
            try:
                merge_submission(main_url, sqlite_url(job.gradebook), options.assignment, job.student, coursedir.course_id)
                merged.add(job.student)
            except Exception as error:  # a broken merge loses this submission's grades, not the run
                failures[job.student] = f"could not record the grades: {error.__class__.__name__}: {error}"

        def finished(outcome: JobOutcome) -> None:
            if outcome.ok:
                record(Job(outcome.student, Path(scratch) / f"{outcome.student}.db"))
            elif outcome.student in failures:
                failures[outcome.student] += f"; then {outcome.error}"
            else:
                failures[outcome.student] = outcome.error
            if outcome.student in failures:
                _forget_graded_copy(coursedir, options.assignment, outcome.student, failures)
            row = collect_rows(coursedir, options.assignment, [outcome.student], failures)[0]
            say.done(outcome, row, failures.get(outcome.student))

        setup = WorkerSetup(root, options.assignment, options.cell_timeout, dict(options.grader_settings), options.feedback)
        jobs = [Job(s.student, Path(scratch) / f"{s.student}.db") for s in todo]
        if jobs:
            run_jobs(setup, jobs, options.workers, options.submission_timeout_s, hand_out, finished, autograded=record)

    for submission in todo:
        if fingerprint(submission.directory) != before[submission.student]:
            failures[submission.student] = "the submission's files changed while it was graded: grade it again"
            _forget_graded_copy(coursedir, options.assignment, submission.student, failures)
    students = [s.student for s in submissions]
    rows = collect_rows(coursedir, options.assignment, students, failures)
    csv_path = options.csv_path or root / f"{options.assignment}-grades.csv"
    write_csv(rows, csv_path)
    csv_path.chmod(0o600)
    feedback = Path(coursedir.format_path(coursedir.feedback_directory, ".", ".")) if options.feedback else None
    return RunReport(root, rows, [s.student for s in todo], skipped, failures, csv_path, feedback, time.monotonic() - started, warnings)


def readable_by_others(root: Path, coursedir, gradebook: Path) -> list[str]:
    """Warnings for what other users of this machine could read: the solutions, the quiz keys,
    the gradebook, the variants' secret. (Sandboxed student code cannot read them either way: Landlock.)"""
    from ..problems.variants import SECRET_FILE

    places = [Path(coursedir.format_path(coursedir.source_directory, ".", ".")), root.parent / "quizzes", gradebook,
              root / SECRET_FILE]
    warnings = []
    for place in places:
        if not place.exists():
            continue
        exposed = next((p for p in [place, *(place.rglob("*") if place.is_dir() else [])] if p.stat().st_mode & 0o004), None)
        if exposed is not None:
            warnings.append(f"{exposed} is readable by every user of this machine: chmod -R go-rwx {place}")
    return warnings


def _forget_graded_copy(coursedir, assignment: str, student: str, failures: dict[str, str]) -> None:
    """Remove a failed grading's autograded copy and feedback: without them the next run grades
    the submission again (else it would look graded and unchanged, with missing or old grades)."""
    feedback = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
    for directory in (graded_directory(coursedir, assignment, student), feedback):
        if directory.exists():
            try:
                shutil.rmtree(directory)
            except OSError as error:
                failures[student] += f"; and {directory} could not be removed ({error}): remove it, or use --force, to grade this submission again"


def _check_assignment(coursedir, assignment: str, main_url: str, settings: dict) -> list[str]:
    """Fail early, with what to do, on what would otherwise fail once per submission."""
    if settings.get("mcpu"):
        from ..engine.cpus import UnknownCPU, cpu_target

        try:
            cpu_target(settings["mcpu"])
        except UnknownCPU as error:
            raise CourseError(f"--mcpu: {error}") from None
    if settings.get("rpc_tracker"):
        _check_tracker(settings["rpc_tracker"], settings.get("rpc_key"))
    from ..problems.variants import VariantError, course_secret

    try:  # every student is graded on their own variant, derived from it
        course_secret(coursedir.root)
    except VariantError as error:
        raise CourseError(f"refusing to grade: {error}") from None
    release_first = f"release it first (`nbgrader generate_assignment {assignment}` in {coursedir.root})"
    if not sqlite_path(main_url).exists():  # opening a gradebook would create an empty one
        raise CourseError(f"there is no gradebook at {sqlite_path(main_url)}: {release_first}")
    try:
        with Gradebook(main_url, coursedir.course_id) as gradebook:
            notebooks = [n.name for n in gradebook.find_assignment(assignment).notebooks]
    except MissingEntry:
        raise CourseError(f"{assignment!r} is not in the gradebook: {release_first}") from None
    warnings = []
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    for name in notebooks:
        try:
            plan = load_plan(source / f"{name}.ipynb")
        except PlanError as error:
            raise CourseError(str(error)) from None
        for answer in plan.answers.values():
            if answer.kind == "schedule" and get_problem(answer.name).target == "cuda" and not settings.get("rpc_tracker"):
                from ..engine.runners import gpu_present

                if not gpu_present():
                    warnings.append(
                        f"{answer.name} runs on a GPU and there is none here: correctness and speed stay pending "
                        "(needs manual grading) until graded on a GPU host or with --rpc HOST:PORT --key KEY"
                    )
    return warnings


def _check_tracker(tracker: str, key: str | None) -> None:
    """The tracker answers and knows the key: better said once here than once per submission."""
    host, _, port = tracker.rpartition(":")
    if not host or not port.isdigit():
        raise CourseError(f"--rpc wants HOST:PORT, got {tracker!r}")
    if not key:
        raise CourseError("--rpc needs --key: the device key to request from the tracker")
    try:  # TVM itself retries an unreachable tracker for a minute
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise CourseError(f"cannot reach the RPC tracker at {tracker}: {error}") from None
    from tvm import rpc

    try:
        summary = rpc.connect_tracker(host, int(port)).summary()
    except Exception as error:
        raise CourseError(f"cannot reach the RPC tracker at {tracker}: {str(error).strip().splitlines()[-1]}") from None
    if key not in summary.get("queue_info", {}):
        known = ", ".join(sorted(summary.get("queue_info", {}))) or "none"
        raise CourseError(f"the RPC tracker at {tracker} has no device with key {key!r} (keys: {known})")


class _Progress:
    def __init__(self, stream: TextIO | None, total: int):
        self.stream, self.total, self.count, self.started = stream, total, 0, time.monotonic()

    def line(self, text: str) -> None:
        if self.stream is not None:
            print(text, file=self.stream, flush=True)

    def done(self, outcome: JobOutcome, row: Row, failure: str | None) -> None:
        self.count += 1
        elapsed = time.monotonic() - self.started
        left = elapsed / self.count * (self.total - self.count)
        if failure is None:
            score = "pending" if row.score is None else f"{row.score:g}/{row.max_score:g}"
            verdict = f"{score} {row.status}" + (f" {row.speedup:.2f}x" if row.speedup is not None else "")
        else:
            verdict = "FAILED: " + failure.strip().splitlines()[0][:100]
        eta = f", about {left:.0f} s left" if self.count < self.total else ""
        self.line(f"[{self.count:>{len(str(self.total))}}/{self.total}] {outcome.student}: {verdict} ({outcome.seconds:.1f} s{eta})")
