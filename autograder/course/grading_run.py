"""`tvm-course grade ASSIGNMENT`: the instructor's whole grading run, as stages (_grade_assignment),
each a function below that takes and returns plain data:

    open_course      the course's root, nbgrader's config, its course directory
    check            before anyone is graded: the assignment and its settings, this machine (the
                     preflight); what other users of the machine could read; a source edited
                     after release (source_edits.py: a warning, and the run grades on)
    find             the assignment's submissions (with --collect, the exchange's newer ones first)
    decide           which to grade, and why (submissions.grading_decision; all of them with force)
    announce         what the run will do
    grade            autograde each in a worker process (workers.py) or on a Dask cluster
                     (cluster.py), against its own copy of the gradebook (nbgrader + the trusted
                     re-grade), then feedback without hidden tests; each autograded submission is
                     merged into the course's gradebook here, one at a time, as soon as its
                     autograde is done, before its feedback (Merging); then once more the timings
                     that ran on a disturbed core (retime.py)
    check_unchanged  a submission whose files changed while it was graded fails
    summarise        a row for every submission (flagging for review what a submission changed in
                     the released notebook: tampering.py)
    export           the CSV and the grader faults' log

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

import errno
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from sqlalchemy.exc import OperationalError
from traitlets.config import Config

from ..engine import confine
from ..engine.pipeline import GraderUnusable, PreflightPassed, preflight
from ..nbgrader_ext.preprocessors import TrustedGrader
from ..nbgrader_ext.plan import PlanError, load_plan
from ..problems import get_problem
from .course_dir import CourseError, course_directory, find_course_root, load_course_config, require_trusted_steps
from .gradebook_sync import copy_gradebook, merge_rows, merge_submission, share_engines, sqlite_path, sqlite_url
from .submissions import (
    Decision, RunAbilities, Submission, fingerprint, find_submissions, graded_directory, grading_decision, record_graded,
    recorded_submissions, submission_digest,
)
from .retime import DISTURBED_FRACTION, disturbed, earlier_speeds, measured_peaks, retimed_notes
from . import grading_marker, source_edits
from .summary import Row, collect_rows, mark_stale, write_csv, write_fault_log
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
    except OperationalError as error:
        if "disk is full" in str(error) or "disk I/O error" in str(error):
            raise CourseError(
                f"the disk is full (the gradebook could not be written: {str(error).splitlines()[0][:200]}): this run stopped. "
                "Nothing graded is lost: sqlite rolled the unfinished write back, the gradebook keeps every submission "
                "merged before it, and the next run grades the rest (the CSV says stale where grading had begun). Free "
                f"some space, then run `tvm-course grade {options.assignment}` again") from None
        if "locked" not in str(error) and "busy" not in str(error):
            raise
        raise CourseError(
            "the gradebook is locked by another program (the formgrader saving a grade, or another nbgrader or tvm-course "
            "command): this run stopped there. Nothing is lost: every submission merged before it is in the gradebook, and "
            "the next run grades the rest (the CSV says stale where grading had begun). Finish or close what holds it, then run "
            f"`tvm-course grade {options.assignment}` again") from None
    except OSError as error:
        if error.errno not in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
            raise
        raise CourseError(
            f"the disk is full ({error.strerror}: {error.filename or 'writing'}): this run stopped. Nothing graded is lost: "
            "the gradebook keeps every submission merged before it, a grading cut short is graded again by the next run, and "
            f"the CSV is marked stale until then. Free some space, then run `tvm-course grade {options.assignment}` again") from None
    finally:
        os.umask(previous)


def _grade_assignment(options: GradingOptions, warnings: list[str]) -> RunReport:
    """The run, stage by stage; each stage takes and returns plain data (the dataclasses below)."""
    started = time.monotonic()
    share_engines()  # the course's gradebook is opened for every merge and row
    course = open_course(options)
    checked = check(course, options)
    csv_path = options.csv_path or course.root / f"{options.assignment}-grades.csv"
    grading_marker.start(course.root, options.assignment)  # removed once the run ends with its CSV written
    marker = grading_marker.read(course.root, options.assignment)
    mark_stale(csv_path, f"a grading run started {marker.started if marker else 'just now'} and has not "
               f"finished: grades may be missing or out of date; run `tvm-course grade {options.assignment}` again if it was stopped")
    found = find(course, options)
    decided = decide(course, options, found, checked)
    warnings = warnings + checked.warnings + found.warnings
    progress = announce(options, decided, warnings)
    graded = grade(course, options, decided, progress, checked.preflight)  # each submission merged as soon as its autograde ends
    graded = check_unchanged(course, options, decided, graded)
    rows = summarise(course, options, found, decided, graded)
    exported = export(course, options, rows, graded)
    grading_marker.finish(course.root, options.assignment)
    return RunReport(course.root, rows, [s.student for s in decided.todo], decided.skipped, graded.failures,
                     exported.csv_path, exported.feedback_dir, time.monotonic() - started, warnings, decided.decisions,
                     exported.fault_log, graded.retried, graded.machines, graded.costs)


# ---------------------------------------------------------------- the stages' data

@dataclass
class Course:
    """The nbgrader course a run grades."""

    root: Path
    config: Config  # nbgrader's, as this run loads it (course_dir.load_course_config)
    coursedir: CourseDirectory  # its db_url is the course's gradebook


@dataclass
class Checked:
    warnings: list[str] = field(default_factory=list)
    gpu: str | None = None  # where this run runs GPU code (None: nowhere, or the assignment has none)
    preflight: PreflightPassed | None = None  # this machine graded its own schedule: the local workers need not again


@dataclass
class Found:
    submissions: list[Submission]  # every submission of the assignment
    chosen: list[Submission]  # the ones this run is about (--student; default: all)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Decided:
    decisions: dict[str, Decision]  # student -> why graded or not, for each chosen submission
    todo: list[Submission]  # to grade
    skipped: list[str]  # not graded in this run


@dataclass
class Graded:
    """What grading left besides the gradebook's rows and the graded copies."""

    fingerprints: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> the submission's files before its grading
    failures: dict[str, str] = field(default_factory=dict)  # student -> why its grading failed
    retried: dict[str, str] = field(default_factory=dict)  # student -> why it was graded more than once
    machines: dict[str, str] = field(default_factory=dict)  # student -> the machine that graded it (cluster)
    costs: dict[str, list[float]] = field(default_factory=dict)  # step -> seconds, per submission

    def took(self, step: str, began: float) -> None:
        self.costs.setdefault(step, []).append(time.monotonic() - began)

    def retry(self, student: str, why: str) -> None:
        """Adds why a submission was graded more than once; an earlier reason is kept (a worker
        lost while grading it, then its timing disturbed: the instructor reads both)."""
        earlier = self.retried.get(student)
        self.retried[student] = f"{earlier}; then {why}" if earlier else why


@dataclass
class Exported:
    csv_path: Path
    fault_log: Path | None  # None: there were no grader faults
    feedback_dir: Path | None  # None: no feedback in this run


# ---------------------------------------------------------------- the stages, in order

def open_course(options: GradingOptions) -> Course:
    root = find_course_root(options.course)
    config = load_course_config(root, cell_timeout=options.cell_timeout, grader_settings=options.grader_settings)
    return Course(root, config, course_directory(config))


def check(course: Course, options: GradingOptions) -> Checked:
    """Before anyone is graded: the assignment, its settings and this machine (each failure says
    what to do), then what other users of this machine could read."""
    require_trusted_steps(course.root, course.config)  # first: nothing is graded by stock nbgrader
    main_url = course.coursedir.db_url
    checked = _check_assignment(course.coursedir, options.assignment, main_url,
                                dict(course.config.TrustedGrader.get("settings", {})))
    checked.warnings += source_edited(course, options.assignment)
    checked.warnings += not_the_named_machine(course.config)
    try:  # this machine grades its own known-good schedule, confined
        checked.preflight = preflight(TrustedGrader(config=course.config).grader_config())
    except (GraderUnusable, ValueError) as error:
        raise CourseError(str(error)) from None
    sqlite_path(main_url).chmod(0o600)
    checked.warnings += readable_by_others(course.root, course.coursedir, sqlite_path(main_url))
    checked.warnings += ReleasedAssignment.load(course.coursedir, options.assignment).warnings  # without a release, no tampering is flagged
    return checked


def not_the_named_machine(config: Config) -> list[str]:
    """A warning where this host is not the grading machine the course names (c.GradingMachine.cpu,
    which every release tells students and their self-checks compare with): the speed points are
    timed here all the same, but not on the CPU the students were told. A warning, not a refusal:
    a machine may be replaced mid-term; the instructor then names the new one and releases again."""
    from ..nbgrader_ext.grading_machine import this_cpu

    named = config.GradingMachine.get("cpu") if "GradingMachine" in config else None
    if not named:
        return []
    here = this_cpu()
    if here == named:
        return []
    return [f"the course names its grading machine's CPU {named!r} (c.GradingMachine.cpu), and every release tells "
            f"students their speed points are timed on it, but this machine's CPU is {here!r}: speed is graded here, "
            f"where the ratio to the yardstick may differ. Grade on the named machine, or set c.GradingMachine.cpu = "
            f"{here!r} (and its description) in nbgrader_config.py and release the assignment again "
            "(nbgrader generate_assignment --force, then release_assignment --force where there is an exchange)"]


def source_edited(course: Course, assignment: str) -> list[str]:
    """A warning where the assignment's source was edited after it was generated and released
    (source_edits.py): what changed and what to run. The run grades on, against the gradebook's
    cells as they are, as it always does: no grade is lost or changed by it."""
    try:
        said = source_edits.warning(source_edits.compare(course.coursedir, course.config, assignment), course.root)
    except Exception as error:  # noqa: BLE001 - a comparison that fails must not cost the class its grading
        said = (f"the source of {assignment} could not be compared with its release and gradebook "
                f"({error.__class__.__name__}: {str(error)[:200]}): an edit after release would go unsaid")
    return [said] if said else []


def find(course: Course, options: GradingOptions) -> Found:
    """The assignment's submissions (with --collect, the exchange's newer ones collected first),
    and those this run is about."""
    from .exchange import collect_update, uncollected

    found = Found([], [])
    if options.collect:
        found.warnings += collect_update(course.root, options.assignment, options.exchange)
    waiting = uncollected(course.config, course.coursedir, options.assignment, options.exchange)
    if waiting:
        exchange = f" --Exchange.root={options.exchange}" if options.exchange else ""
        found.warnings.append(f"the exchange holds newer submissions than were collected, from {', '.join(waiting)}: this run "
                              f"grades the ones collected before; run `nbgrader collect --update {options.assignment}{exchange}` "
                              f"in {course.root} (or grade with --collect), then `tvm-course grade {options.assignment}` again")
    found.submissions = find_submissions(course.coursedir, options.assignment)
    if not found.submissions:
        where = course.coursedir.format_path(course.coursedir.submitted_directory, "*", options.assignment)
        raise CourseError(f"no submissions of {options.assignment!r} in {where}: collect them first "
                          "(tvm-course collect, nbgrader collect or nbgrader zip_collect)")
    unknown = sorted(set(options.students or []) - {s.student for s in found.submissions})
    if unknown:
        raise CourseError(f"no submission of {options.assignment!r} from {', '.join(unknown)}")
    found.chosen = [s for s in found.submissions if not options.students or s.student in options.students]
    return found


def decide(course: Course, options: GradingOptions, found: Found, checked: Checked) -> Decided:
    """Which chosen submissions to grade, and why (submissions.grading_decision)."""
    recorded = recorded_submissions(course.coursedir, options.assignment)
    abilities = RunAbilities(gpu=checked.gpu)
    decisions = {s.student: grading_decision(course.coursedir, options.assignment, s, recorded, abilities, options.force)
                 for s in found.chosen}
    return Decided(decisions, [s for s in found.chosen if decisions[s.student].grade],
                   [s.student for s in found.chosen if not decisions[s.student].grade])


def announce(options: GradingOptions, decided: Decided, warnings: list[str]) -> _Progress:
    """Say what the run will do, and why; the progress then tells each submission's end."""
    say = _Progress(options.progress, len(decided.todo))
    where = f"on the Dask cluster at {options.scheduler}" if options.scheduler else f"with {options.workers} worker(s)"
    say.line(f"Grading {len(decided.todo)} submission(s) of {options.assignment} {where}"
             + (f"; not grading {len(decided.skipped)}" if decided.skipped else ""))
    for student in decided.skipped:
        say.line(f"  {student}: {decided.decisions[student]}")
    for submission in decided.todo:
        say.line(f"  {submission.student}: {decided.decisions[submission.student]}")
    for warning in warnings:
        say.line(f"warning: {warning}")
    return say


def grade(course: Course, options: GradingOptions, decided: Decided, progress: _Progress,
          vouched: PreflightPassed | None = None) -> Graded:
    """Grade what was decided, on local workers or the Dask cluster, each submission merged into the
    course's gradebook as soon as its autograde ends (Merging); then once more the timings that ran
    on a disturbed core (retime.py). `vouched`: the check stage's preflight, handed to local workers."""
    todo = decided.todo
    graded = Graded(fingerprints={s.student: fingerprint(s.directory) for s in todo})
    # The speed of the gradings already made of these very submissions: a re-timing keeps its band
    # unless it decides otherwise (nbgrader_ext/steady.py). Read before the graded copies are replaced.
    earlier = earlier_speeds(course.coursedir, options.assignment, todo)
    digests = {s.student: submission_digest(s.directory) for s in todo}
    with tempfile.TemporaryDirectory(prefix="tvm-course-grading-") as scratch:
        merging = Merging(course, options.assignment, Path(scratch), {s.student: s for s in todo}, digests, progress, graded)
        if todo:
            _grade(course, options, todo, earlier, merging, vouched)
            again = _grade_again_disturbed(course, options, todo, merging, vouched)
            for student, note in retimed_notes({s: graded_directory(course.coursedir, options.assignment, s) for s in earlier
                                                if s not in graded.failures and s not in again}).items():
                graded.retry(student, f"{decided.decisions[student]}, the same submission: {note}")
    return graded


def check_unchanged(course: Course, options: GradingOptions, decided: Decided, graded: Graded) -> Graded:
    """A submission whose files changed while it was graded fails: the next run grades it again."""
    for submission in decided.todo:
        if fingerprint(submission.directory) != graded.fingerprints[submission.student]:
            graded.failures[submission.student] = "the submission's files changed while it was graded: grade it again"
            _forget_graded_copy(course.coursedir, options.assignment, submission.student, graded.failures)
    return graded


def summarise(course: Course, options: GradingOptions, found: Found, decided: Decided, graded: Graded) -> list[Row]:
    """A row for every submission of the assignment, graded in this run or not (summary.py)."""
    return collect_rows(course.coursedir, options.assignment, [s.student for s in found.submissions], graded.failures,
                        decided.decisions)


def export(course: Course, options: GradingOptions, rows: list[Row], graded: Graded) -> Exported:
    """The CSV (the owner's only) and the grader faults' log, in the course's root."""
    csv_path = options.csv_path or course.root / f"{options.assignment}-grades.csv"
    write_csv(rows, csv_path)
    csv_path.chmod(0o600)
    fault_log = write_fault_log(rows, graded.failures, course.root / f"{options.assignment}-grader-faults.log")
    feedback = Path(course.coursedir.format_path(course.coursedir.feedback_directory, ".", ".")) if options.feedback else None
    return Exported(csv_path, fault_log, feedback)


# ---------------------------------------------------------------- grading, and merging as each submission ends

@dataclass
class Merging:
    """The run's side of the grading: its methods are what the workers (workers.run_jobs) or the
    cluster (cluster.run_on_cluster) call as each submission is handed out and ends."""

    course: Course
    assignment: str
    scratch: Path  # each job's copy of the gradebook, STUDENT.db
    submissions: dict[str, Submission]  # student -> what is graded
    digests: dict[str, dict[str, str]]  # student -> what is graded, as submissions.record_graded records it
    progress: _Progress
    graded: Graded
    merged: set[str] = field(default_factory=set)  # merged into the course's gradebook in this round
    notebooks: tuple[str, ...] = ()  # the assignment's notebooks, what a cluster reply may name (read at the first)

    def hand_out(self, job: Job) -> None:
        began = time.monotonic()
        self.merged.discard(job.student)
        copy_gradebook(sqlite_path(self.course.coursedir.db_url), job.gradebook)
        self.graded.took("gradebook copy", began)

    def merge(self, job: Job) -> None:
        """Merge as soon as autograde is done, so a failure in feedback cannot lose the grades."""
        failures = self.graded.failures
        if job.student in self.merged or job.student in failures:
            return
        coursedir = self.course.coursedir
        try:
            began = time.monotonic()
            merge_submission(coursedir.db_url, sqlite_url(job.gradebook), self.assignment, job.student, coursedir.course_id)
            self.merged.add(job.student)
            self.graded.took("gradebook merge", began)
        except Exception as error:  # a broken merge loses this submission's grades, not the run
            failures[job.student] = f"could not record the grades: {error.__class__.__name__}: {error}"

    def finished(self, outcome: JobOutcome) -> None:
        """A submission's grading ended: merged and recorded as graded, or failed; its row shown."""
        coursedir, failures, student = self.course.coursedir, self.graded.failures, outcome.student
        for step, seconds in outcome.steps.items():
            self.graded.costs.setdefault(f"nbgrader {step}", []).append(seconds)
        began = time.monotonic()
        if outcome.ok:
            self.merge(Job(student, self.scratch / f"{student}.db"))
        elif student in failures:
            failures[student] += f"; then {outcome.error}"
        else:
            failures[student] = outcome.error
        if student in failures:
            _forget_graded_copy(coursedir, self.assignment, student, failures)
        else:  # finished: what was graded is recorded, so the next run knows whether it changed
            try:
                record_graded(graded_directory(coursedir, self.assignment, student), self.digests[student])
            except OSError as error:
                failures[student] = f"could not record what was graded: {error}"
                _forget_graded_copy(coursedir, self.assignment, student, failures)
        row = collect_rows(coursedir, self.assignment, [student], failures)[0]
        self.graded.took("record and row", began)
        self.progress.done(outcome, row, failures.get(student))

    def deliver(self, student: str, reply, error: str) -> None:
        """A cluster worker's reply, checked (cluster.accept) before its notebooks, feedback and
        gradebook rows are written here, once per submission."""
        from . import cluster

        coursedir, failures = self.course.coursedir, self.graded.failures
        seconds = 0.0
        if reply is not None:
            try:
                if not self.notebooks:
                    self.notebooks = cluster.assignment_notebooks(coursedir.db_url, self.assignment, coursedir.course_id)
                accepted = cluster.accept(reply, student, self.notebooks, coursedir.db_url,
                                          self.assignment, coursedir.course_id)
            except cluster.Rejected as why:
                error = f"the worker's reply was rejected: {why}"
            else:
                seconds, self.graded.machines[student] = accepted.seconds, accepted.machine
                error = accepted.error
                if accepted.rows is not None and student not in self.merged:
                    try:
                        _install_graded(coursedir, self.assignment, student, self.submissions[student].directory, accepted)
                        merge_rows(coursedir.db_url, self.assignment, student, coursedir.course_id, accepted.rows)
                        self.merged.add(student)
                    except Exception as problem:  # noqa: BLE001 - loses this submission's grades, not the run
                        failures[student] = f"could not record the grades: {problem.__class__.__name__}: {problem}"
                if accepted.ok and not error:
                    self.finished(JobOutcome(student, True, seconds))
                    return
        self.finished(JobOutcome(student, False, seconds, error or "the cluster returned nothing for this submission"))


def _grade(course: Course, options: GradingOptions, these: list[Submission], earlier: dict, merging: Merging,
           vouched: PreflightPassed | None = None) -> None:
    if options.scheduler:
        _grade_on_cluster(course, options, these, earlier, merging)
    else:
        setup = WorkerSetup(course.root, options.assignment, options.cell_timeout, dict(options.grader_settings), options.feedback,
                            earlier, vouched)
        jobs = [Job(s.student, merging.scratch / f"{s.student}.db") for s in these]
        run_jobs(setup, jobs, options.workers, options.submission_timeout_s, merging.hand_out, merging.finished,
                 autograded=merging.merge)


def _grade_on_cluster(course: Course, options: GradingOptions, these: list[Submission], earlier: dict,
                      merging: Merging) -> None:
    """Grade `these` on the Dask cluster; each reply comes back through Merging.deliver."""
    from . import cluster

    if options.scheduler is None:  # called only where one is named
        raise CourseError("no Dask scheduler was named (--scheduler)")

    coursedir = course.coursedir
    seed = cluster.seed_gradebook(sqlite_path(coursedir.db_url), merging.scratch / "seed.db", coursedir.course_id)
    payload = cluster.course_payload(course.root, coursedir, options.assignment, seed, options.cell_timeout,
                                     options.grader_settings, options.feedback, options.allow_unconfined,
                                     options.submission_timeout_s, earlier)
    run = cluster.run_on_cluster(options.scheduler, payload, these, merging.deliver, ignore=list(coursedir.ignore))
    for worker in run.lost_workers:
        merging.progress.line(f"the cluster lost worker {worker.address} while it held the grading of {', '.join(worker.grading)}")
    lost = {s: f"started on {len(w)} workers ({', '.join(w)}): a worker was lost while grading it" for s, w in run.retried.items()}
    for student, whys in run.resubmitted.items():
        sent = f"sent again {len(whys)} time(s) ({'; '.join(whys)})"
        lost[student] = f"{lost[student]}; {sent}" if student in lost else sent
    for student, why in lost.items():
        merging.graded.retry(student, why)
        merging.progress.line(f"retried: {student}: {why}")


def _grade_again_disturbed(course: Course, options: GradingOptions, todo: list[Submission], merging: Merging,
                           vouched: PreflightPassed | None = None) -> dict[str, str]:
    """Once more, for a timing that ran on a disturbed core (retime.py): its credit is the second
    grading's. Returns student -> why."""
    graded = merging.graded
    again = disturbed(measured_peaks({s.student: graded_directory(course.coursedir, options.assignment, s.student)
                                      for s in todo if s.student not in graded.failures}), options.retime_below)
    if again:
        merging.progress.total += len(again)
        for student, why in again.items():
            graded.retry(student, f"timed again: {why}")
            merging.progress.line(f"timing again: {student}: {why}")
        merging.merged.difference_update(again)
        # Not steadied: this run's first timing of them is known to be wrong.
        _grade(course, options, [s for s in todo if s.student in again], {}, merging, vouched)
    return again


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


def _check_assignment(coursedir, assignment: str, main_url: str, settings: dict) -> Checked:
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
    checked = Checked()
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
    from ..engine.runners import check_tracker_reachable, parse_tracker

    try:
        host, port = parse_tracker(tracker)
    except ValueError as error:
        raise CourseError(f"--rpc: {error}") from None
    if not key:
        raise CourseError("--rpc needs --key: the device key to request from the tracker")
    try:  # TVM itself retries an unreachable tracker for a minute
        check_tracker_reachable(tracker)
    except ConnectionError as error:
        raise CourseError(str(error)) from None
    from tvm import rpc

    try:
        summary = rpc.connect_tracker(host, port).summary()
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
