"""`tvm-course grade ASSIGNMENT`: the instructor's whole grading run.

    find the submissions that need grading (all of them with force)
    ─► autograde each in a worker process, against its own copy of the gradebook
       (nbgrader + the trusted re-grade)
    ─► merge each autograded submission into the course's gradebook, here, one at a time,
       as soon as its autograde is done (before its feedback)
    ─► feedback without hidden tests, in the worker
    ─► check that no submission was modified, then a table and a CSV of every submission
       (flagging for review what a submission changed in the released notebook: tampering.py)

Running it again grades only what changed, by content (submissions.py: a digest of what was
graded is recorded beside each graded copy), what failed, and what was pending and can be
scored now (a grader fault; points that needed a GPU, when this run has one); or everything
with force. It updates the same gradebook rows: the table and the CSV always cover every
submission of the assignment, each with the reason it was or was not graded. A submission whose
grading failed at any step (autograde, recording the grades, feedback, its deadline) loses its
autograded copy and feedback, so the next run grades it again. Before grading through an RPC
tracker the run asks the device what it is (a CUDA GPU of the architecture compiled for, where
the assignment needs one) and stops with what to do when it is not.
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
from ..engine.pipeline import GraderUnusable, preflight
from ..nbgrader_ext.preprocessors import TrustedGrader
from ..nbgrader_ext.plan import PlanError, load_plan
from ..problems import get_problem
from .course_dir import CourseError, course_directory, find_course_root, load_course_config
from .gradebook_sync import copy_gradebook, merge_rows, merge_submission, share_engines, sqlite_path, sqlite_url
from .submissions import (
    Decision, RunAbilities, fingerprint, find_submissions, graded_directory, grading_decision, record_graded,
    recorded_submissions, submission_digest,
)
from .retime import DISTURBED_FRACTION, disturbed, earlier_speeds, measured_peaks, retimed_notes
from .summary import Row, collect_rows, write_csv, write_fault_log
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
    # A Dask scheduler's address (tcp://HOST:8786): grade on its workers (course/cluster.py)
    # instead of the local pool; the gradebook stays here.
    scheduler: str | None = None
    exchange: str | None = None  # nbgrader's exchange root, where it is not the course's Exchange.root
    collect: bool = False  # first `nbgrader collect --update ASSIGNMENT`: resubmissions in the exchange replace what was collected
    # A timed grading whose FMA peak is under this fraction of the class's median on the same
    # machine and CPU ran on a disturbed core: it is graded again, once (retime.py). 0: never.
    retime_below: float = DISTURBED_FRACTION


@dataclass
class RunReport:
    course_root: Path
    rows: list[Row]
    graded: list[str]  # graded in this run
    skipped: list[str]  # not graded in this run (unchanged, or pending what this run cannot give)
    failures: dict[str, str]  # student -> why grading failed
    csv_path: Path
    feedback_dir: Path | None
    seconds: float
    warnings: list[str] = field(default_factory=list)
    decisions: dict[str, Decision] = field(default_factory=dict)  # student -> why graded or not, this run
    fault_log: Path | None = None  # the grader's faults in full, for the instructor (None: there were none)
    retried: dict[str, str] = field(default_factory=dict)  # student -> why it was graded more than once (cluster)
    machines: dict[str, str] = field(default_factory=dict)  # student -> the machine that graded it (cluster)
    # What each graded submission cost outside the trusted grading, step -> seconds per submission
    # (the workers' nbgrader steps; here: the gradebook copy, the merge, the record and its row)
    costs: dict[str, list[float]] = field(default_factory=dict)


def grade_assignment(options: GradingOptions) -> RunReport:
    """Grade an assignment; everything the run creates is readable by its owner only."""
    find_course_root(options.course)  # first: without a course, that is what to say (a student who tried it)
    confinement = confine.available()
    if not confinement.isolated and not options.allow_unconfined:
        raise CourseError(
            f"refusing to grade: student code cannot be confined here, each grading apart from the others "
            f"({confinement.reason or 'missing'}; not enforced: {', '.join(confinement.missing())}). Grade on Linux "
            "with Landlock, libseccomp and user namespaces (or Landlock ABI 6), or pass --allow-unconfined to grade "
            "anyway (student code then reads what the grading user can, or reaches other gradings)"
        )
    unconfined = [] if confinement.isolated else [
        f"grading without full confinement (--allow-unconfined): {', '.join(confinement.missing())} not enforced"
    ]
    previous = os.umask(0o077)
    try:
        return _grade_assignment(options, unconfined)
    finally:
        os.umask(previous)


def _grade_assignment(options: GradingOptions, warnings: list[str]) -> RunReport:
    started = time.monotonic()
    share_engines()  # the course's gradebook is opened for every merge and row
    root = find_course_root(options.course)
    config = load_course_config(root, cell_timeout=options.cell_timeout, grader_settings=options.grader_settings)
    coursedir = course_directory(config)
    main_url = coursedir.db_url
    checked = _check_assignment(coursedir, options.assignment, main_url, dict(config.TrustedGrader.get("settings", {})))
    try:  # before anyone is graded: this machine grades its own known-good schedule, confined
        preflight(TrustedGrader(config=config).grader_config())
    except (GraderUnusable, ValueError) as error:
        raise CourseError(str(error)) from None
    warnings = warnings + checked.warnings
    sqlite_path(main_url).chmod(0o600)
    warnings += readable_by_others(root, coursedir, sqlite_path(main_url))
    warnings += ReleasedAssignment.load(coursedir, options.assignment).warnings  # without a release, no tampering is flagged
    from .exchange import collect_update, uncollected

    if options.collect:
        warnings += collect_update(root, options.assignment, options.exchange)
    waiting = uncollected(config, coursedir, options.assignment, options.exchange)
    if waiting:
        exchange = f" --Exchange.root={options.exchange}" if options.exchange else ""
        warnings.append(f"the exchange holds newer submissions than were collected, from {', '.join(waiting)}: this run "
                        f"grades the ones collected before; run `nbgrader collect --update {options.assignment}{exchange}` "
                        f"in {root} (or grade with --collect), then `tvm-course grade {options.assignment}` again")
    submissions = find_submissions(coursedir, options.assignment)
    if not submissions:
        where = coursedir.format_path(coursedir.submitted_directory, "*", options.assignment)
        raise CourseError(f"no submissions of {options.assignment!r} in {where}: collect them first "
                          "(tvm-course collect, nbgrader collect or nbgrader zip_collect)")
    unknown = sorted(set(options.students or []) - {s.student for s in submissions})
    if unknown:
        raise CourseError(f"no submission of {options.assignment!r} from {', '.join(unknown)}")
    chosen = [s for s in submissions if not options.students or s.student in options.students]
    recorded = recorded_submissions(coursedir, options.assignment)
    abilities = RunAbilities(gpu=checked.gpu)
    decisions = {s.student: grading_decision(coursedir, options.assignment, s, recorded, abilities, options.force) for s in chosen}
    todo = [s for s in chosen if decisions[s.student].grade]
    skipped = [s.student for s in chosen if not decisions[s.student].grade]
    say = _Progress(options.progress, len(todo))
    where = f"on the Dask cluster at {options.scheduler}" if options.scheduler else f"with {options.workers} worker(s)"
    say.line(f"Grading {len(todo)} submission(s) of {options.assignment} {where}"
             + (f"; not grading {len(skipped)}" if skipped else ""))
    for student in skipped:
        say.line(f"  {student}: {decisions[student]}")
    for submission in todo:
        say.line(f"  {submission.student}: {decisions[submission.student]}")
    for warning in warnings:
        say.line(f"warning: {warning}")

    failures: dict[str, str] = {}
    retried: dict[str, str] = {}
    machines: dict[str, str] = {}
    before = {s.student: fingerprint(s.directory) for s in todo}
    # The speed of the gradings already made of these very submissions: a re-timing keeps its band
    # unless it decides otherwise (nbgrader_ext/steady.py). Read before the graded copies are replaced.
    earlier = earlier_speeds(coursedir, options.assignment, todo)
    digests = {s.student: submission_digest(s.directory) for s in todo}
    costs: dict[str, list[float]] = {}

    def cost(step: str, began: float) -> None:
        costs.setdefault(step, []).append(time.monotonic() - began)

    with tempfile.TemporaryDirectory(prefix="tvm-course-grading-") as scratch:
        merged: set[str] = set()

        def hand_out(job: Job) -> None:
            began = time.monotonic()
            merged.discard(job.student)
            copy_gradebook(sqlite_path(main_url), job.gradebook)
            cost("gradebook copy", began)

        def record(job: Job) -> None:
            """Merge as soon as autograde is done, so a failure in feedback cannot lose the grades."""
            if job.student in merged or job.student in failures:
                return
            try:
                began = time.monotonic()
                merge_submission(main_url, sqlite_url(job.gradebook), options.assignment, job.student, coursedir.course_id)
                merged.add(job.student)
                cost("gradebook merge", began)
            except Exception as error:  # a broken merge loses this submission's grades, not the run
                failures[job.student] = f"could not record the grades: {error.__class__.__name__}: {error}"

        def finished(outcome: JobOutcome) -> None:
            for step, seconds in outcome.steps.items():
                costs.setdefault(f"nbgrader {step}", []).append(seconds)
            began = time.monotonic()
            if outcome.ok:
                record(Job(outcome.student, Path(scratch) / f"{outcome.student}.db"))
            elif outcome.student in failures:
                failures[outcome.student] += f"; then {outcome.error}"
            else:
                failures[outcome.student] = outcome.error
            if outcome.student in failures:
                _forget_graded_copy(coursedir, options.assignment, outcome.student, failures)
            else:  # finished: what was graded is recorded, so the next run knows whether it changed
                try:
                    record_graded(graded_directory(coursedir, options.assignment, outcome.student), digests[outcome.student])
                except OSError as error:
                    failures[outcome.student] = f"could not record what was graded: {error}"
                    _forget_graded_copy(coursedir, options.assignment, outcome.student, failures)
            row = collect_rows(coursedir, options.assignment, [outcome.student], failures)[0]
            cost("record and row", began)
            say.done(outcome, row, failures.get(outcome.student))

        def grade(these: list, earlier: dict) -> None:
            if options.scheduler:
                cluster_run = _grade_on_cluster(options, root, coursedir, these, Path(scratch), merged, failures, finished,
                                                earlier)
                lost = {s: f"started on {len(w)} workers ({', '.join(w)}): a worker was lost while grading it"
                        for s, w in cluster_run.retried.items()}
                retried.update(lost)
                machines.update(cluster_run.machines)
                for student, why in lost.items():
                    say.line(f"retried: {student}: {why}")
            else:
                setup = WorkerSetup(root, options.assignment, options.cell_timeout, dict(options.grader_settings), options.feedback,
                                    earlier)
                jobs = [Job(s.student, Path(scratch) / f"{s.student}.db") for s in these]
                run_jobs(setup, jobs, options.workers, options.submission_timeout_s, hand_out, finished, autograded=record)

        if todo:
            grade(todo, earlier)
            # Once more, for a timing that ran on a disturbed core (retime.py): its credit is the second grading's.
            again = disturbed(measured_peaks({s.student: graded_directory(coursedir, options.assignment, s.student)
                                              for s in todo if s.student not in failures}), options.retime_below)
            if again:
                say.total += len(again)
                for student, why in again.items():
                    retried[student] = f"timed again: {why}"
                    say.line(f"timing again: {student}: {why}")
                merged.difference_update(again)
                # Not steadied: this run's first timing of them is known to be wrong.
                grade([s for s in todo if s.student in again], {})
            for student, note in retimed_notes({s: graded_directory(coursedir, options.assignment, s) for s in earlier
                                                if s not in failures and s not in again}).items():
                retried[student] = f"{decisions[student]}, the same submission: {note}"

    for submission in todo:
        if fingerprint(submission.directory) != before[submission.student]:
            failures[submission.student] = "the submission's files changed while it was graded: grade it again"
            _forget_graded_copy(coursedir, options.assignment, submission.student, failures)
    students = [s.student for s in submissions]
    rows = collect_rows(coursedir, options.assignment, students, failures, decisions)
    csv_path = options.csv_path or root / f"{options.assignment}-grades.csv"
    write_csv(rows, csv_path)
    csv_path.chmod(0o600)
    fault_log = write_fault_log(rows, failures, root / f"{options.assignment}-grader-faults.log")
    feedback = Path(coursedir.format_path(coursedir.feedback_directory, ".", ".")) if options.feedback else None
    return RunReport(root, rows, [s.student for s in todo], skipped, failures, csv_path, feedback, time.monotonic() - started,
                     warnings, decisions, fault_log, retried, machines, costs)


def _grade_on_cluster(options: GradingOptions, root: Path, coursedir, todo, scratch: Path, merged: set[str],
                      failures: dict[str, str], finished, earlier: dict):
    """Grade `todo` on the Dask cluster; each reply is checked (cluster.accept) before its notebooks,
    feedback and gradebook rows are written here, once per submission."""
    from . import cluster

    main_url = coursedir.db_url
    seed = cluster.seed_gradebook(sqlite_path(main_url), scratch / "seed.db", coursedir.course_id)
    course = cluster.course_payload(root, coursedir, options.assignment, seed, options.cell_timeout,
                                    options.grader_settings, options.feedback, options.allow_unconfined,
                                    options.submission_timeout_s, earlier)
    notebooks = {s.student: s.notebooks for s in todo}
    directories = {s.student: s.directory for s in todo}
    machines: dict[str, str] = {}

    def deliver(student: str, reply, error: str) -> None:
        seconds = 0.0
        if reply is not None:
            try:
                accepted = cluster.accept(reply, student, notebooks[student], main_url, options.assignment, coursedir.course_id)
            except cluster.Rejected as why:
                error = f"the worker's reply was rejected: {why}"
            else:
                seconds, machines[student] = accepted.seconds, accepted.machine
                error = accepted.error
                if accepted.rows is not None and student not in merged:
                    try:
                        _install_graded(coursedir, options.assignment, student, directories[student], accepted)
                        merge_rows(main_url, options.assignment, student, coursedir.course_id, accepted.rows)
                        merged.add(student)
                    except Exception as problem:  # noqa: BLE001 - loses this submission's grades, not the run
                        failures[student] = f"could not record the grades: {problem.__class__.__name__}: {problem}"
                if accepted.ok and not error:
                    finished(JobOutcome(student, True, seconds))
                    return
        finished(JobOutcome(student, False, seconds, error or "the cluster returned nothing for this submission"))

    run = cluster.run_on_cluster(options.scheduler, course, todo, deliver)
    run.machines = machines
    return run


def _install_graded(coursedir, assignment: str, student: str, submitted: Path, accepted) -> None:
    """The autograded copy as nbgrader leaves it: the submission's other files from here, the
    graded notebooks (checked) from the worker; and the feedback pages."""
    graded = graded_directory(coursedir, assignment, student)
    if graded.exists():
        shutil.rmtree(graded)
    shutil.copytree(submitted, graded, ignore=shutil.ignore_patterns("*.ipynb"), symlinks=False)
    for name, data in accepted.notebooks.items():
        (graded / name).write_bytes(data)
    if accepted.feedback:
        feedback = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
        if feedback.exists():
            shutil.rmtree(feedback)
        feedback.mkdir(parents=True)
        for name, data in accepted.feedback.items():
            (feedback / name).write_bytes(data)


def readable_by_others(root: Path, coursedir, gradebook: Path) -> list[str]:
    """Warnings for what other users of this machine could read: the solutions, the quiz keys,
    the gradebook, the variants' secret. (Sandboxed student code cannot read them either way: Landlock.)"""
    from ..problems.variants import SECRET_FILE

    places = [Path(coursedir.format_path(coursedir.source_directory, ".", ".")), root.parent / "quizzes", gradebook,
              root / SECRET_FILE]
    # the students' work: `nbgrader collect` leaves submitted/STUDENT/ASSIGNMENT 777 with 644 files
    places += [Path(coursedir.format_path(d, ".", ".")) for d in (coursedir.submitted_directory, coursedir.autograded_directory,
                                                                  coursedir.feedback_directory)]
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


@dataclass
class _Checked:
    warnings: list[str] = field(default_factory=list)
    gpu: str | None = None  # where this run runs GPU code (None: nowhere, or the assignment has none)


def _check_assignment(coursedir, assignment: str, main_url: str, settings: dict) -> _Checked:
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
    checked = _Checked()
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    gpu_problems = []
    for name in notebooks:
        try:
            plan = load_plan(source / f"{name}.ipynb")
        except PlanError as error:
            raise CourseError(str(error)) from None
        gpu_problems += [a.name for a in plan.answers.values() if a.kind == "schedule" and get_problem(a.name).target == "cuda"]
    if settings.get("rpc_tracker"):
        checked.gpu = _check_rpc_device(settings["rpc_tracker"], settings["rpc_key"], gpu_problems,
                                        settings.get("cuda_arch") or _default_cuda_arch())
    elif gpu_problems:
        from ..engine.runners import gpu_present

        if gpu_present():
            checked.gpu = "this machine's GPU"
        else:
            checked.warnings.append(
                f"{', '.join(sorted(set(gpu_problems)))} runs on a GPU and there is none here: its kernels run on the "
                "OpenCL device for correctness and fusion, and the speed stays pending (needs manual grading) until graded "
                "on a GPU host or with --rpc HOST:PORT --key KEY; a later run that has a GPU grades them without --force"
            )
    return checked


def _default_cuda_arch() -> str:
    from ..engine.config import GraderConfig

    return GraderConfig().cuda_arch


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


def _check_rpc_device(tracker: str, key: str, gpu_problems: list[str], cuda_arch: str) -> str | None:
    """Ask the device behind the key what it is, before any submission is handed to it: a CUDA
    GPU of the architecture the schedules are compiled for, where the assignment needs one.
    Returns where GPU code runs in this run (None: the assignment has no GPU problem)."""
    from ..engine.runners import probe_device

    try:
        device = probe_device(tracker, key)
    except ConnectionError as error:
        raise CourseError(f"{error}: is its server busy or gone? (python -m tvm.exec.query_rpc_tracker --port PORT lists them)") from None
    if not gpu_problems:
        if not device.cpu:
            raise CourseError(f"the {device.where} answers but has no CPU device to run on")
        return None
    needs = ", ".join(sorted(set(gpu_problems)))
    if not device.cuda:
        raise CourseError(
            f"refusing to grade {needs} on the {device.where}: it is not a CUDA device ({device.problem}). Start the "
            f"server on the GPU host (python -m tvm.exec.rpc_server --tracker {tracker} --key {key}), where TVM sees the GPU"
        )
    if device.arch and device.arch != cuda_arch:
        raise CourseError(
            f"the {device.where} is {device.arch} ({device.name or 'a CUDA GPU'}), but the schedules would be compiled for "
            f"{cuda_arch}: pass --cuda-arch {device.arch}"
        )
    return f"{device.where} ({device.name or 'CUDA'}, {device.arch or cuda_arch})"


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
            if row.pending and row.score is not None:
                score += " + pending"
            verdict = f"{score} ({row.status}), schedule {row.schedule}" + (f" {row.speedup:.2f}x" if row.speedup is not None else "")
        else:
            verdict = "FAILED: " + failure.strip().splitlines()[0][:100]
        eta = f", about {left:.0f} s left" if self.count < self.total else ""
        self.line(f"[{self.count:>{len(str(self.total))}}/{self.total}] {outcome.student}: {verdict} ({outcome.seconds:.1f} s{eta})")
