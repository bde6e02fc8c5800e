"""Worker processes that autograde submissions, one at a time each, against their own gradebook.

A worker imports nbgrader once (a few seconds) and then takes jobs over a pipe: autograde one
submission with `NbGraderAPI` and write its feedback, using the gradebook copy the job names.
As soon as autograde has succeeded the worker says so (`Autograded`), before it starts the
feedback, so that the grades can be recorded whatever becomes of the feedback. The pool gives
each job a deadline; a worker that misses it, or dies, is killed with every process under it
(the grading sandboxes, and the student's kernel where the course runs notebooks) and replaced, and the job is reported as failed:
the other submissions carry on.
"""
from __future__ import annotations

import multiprocessing
import os
import re
import time
from collections import deque
from dataclasses import dataclass, field
from functools import partial
from multiprocessing.connection import wait
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import psutil

from ..engine.wire import Fields, MalformedMessage
from ..errors import TvmCourseError

if TYPE_CHECKING:
    from ..engine.pipeline import PreflightPassed

LOG_TAIL_CHARS = 3000


@dataclass(frozen=True)
class Job:
    student: str
    gradebook: Path  # this job's own copy of the gradebook


@dataclass(frozen=True)
class JobOutcome:
    student: str
    ok: bool
    seconds: float
    error: str = ""
    steps: dict[str, float] = field(default_factory=dict)  # nbgrader step -> seconds it took (autograde, feedback)

    @classmethod
    def from_wire(cls, message: object, job: Job | None) -> "JobOutcome":
        """A worker's outcome of `job`, checked field by field (it came over a pipe from another
        process): MalformedMessage where it is not one, or is another job's."""
        fields = _fields_of(message, cls, "a worker's job outcome")
        if job is None or fields.text("student") != job.student:
            fields.fail("student", f"is {fields.text('student')!r}, not the student of the job the worker has "
                                   f"({job.student if job else 'none'})")
        return cls(job.student, fields.boolean("ok"), fields.number("seconds", minimum=0.0), fields.text("error"),
                   fields.number_map("steps", minimum=0.0))


@dataclass(frozen=True)
class Autograded:
    """Sent by a worker when a job's autograde succeeded: its gradebook copy holds the grades."""

    student: str

    @classmethod
    def from_wire(cls, message: object) -> "Autograded":
        return cls(_fields_of(message, cls, "a worker's autograde notice").text("student"))


@dataclass(frozen=True)
class WorkerFailed:
    """A worker could not start (nbgrader or the course config does not load)."""

    reason: str


class WorkersUnusable(RuntimeError, TvmCourseError):
    pass


def _fields_of(message: object, kind: type, record: str) -> Fields:
    """The fields of a message a worker sent, which must be a `kind` (a dataclass of this module)."""
    if not isinstance(message, kind):
        raise MalformedMessage(record, "(the message)", f"is {type(message).__name__}, not {kind.__name__}")
    return Fields(dict(vars(message)), record)


@dataclass(frozen=True)
class WorkerSetup:
    """What every job of a run shares: picklable, sent to each worker once."""

    course_root: Path
    assignment: str
    cell_timeout: float | None
    grader_settings: dict
    feedback: bool
    earlier: dict = field(default_factory=dict)  # student -> answer -> the speed of an earlier grading (steady.py)
    preflight: PreflightPassed | None = None  # the class run's, on this machine: a worker with the same settings need not grade the journal again


def grade_submission(api_for, setup: WorkerSetup, job: Job, autograded: Callable[[], None] = lambda: None) -> JobOutcome:
    """Autograde (and write feedback for) one submission; nbgrader's errors become the outcome.
    `autograded()` is called once autograde has succeeded, before the feedback."""
    started = time.monotonic()
    api = api_for(job.gradebook)
    steps = [("autograde", lambda: api.autograde(setup.assignment, job.student, force=True, create=True))]
    if setup.feedback:
        steps.append(("feedback", lambda: api.generate_feedback(setup.assignment, job.student, force=True)))
    took: dict[str, float] = {}
    for name, step in steps:
        began = time.monotonic()
        outcome = step()
        took[name] = time.monotonic() - began
        if not outcome.get("success"):
            return JobOutcome(job.student, False, time.monotonic() - started, failure(name, outcome), took)
        if name == "autograde":
            autograded()
    return JobOutcome(job.student, True, time.monotonic() - started, steps=took)


# The last exception line of a traceback: "nbgrader.nbgraderformat.common.ValidationError: ..."
_EXCEPTION_LINE = re.compile(r"^\s*((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)\b(?::.*)?)$")


def failure(step: str, outcome: dict) -> str:
    """What a failed nbgrader step says: its cause on the first line (the summary's CSV and table
    show that line), then the log's tail. nbgrader logs the real traceback and returns as its
    error only its own NbGraderException ("Please see the above traceback"), so the cause is
    the last exception that its log names before that one."""
    log, error = outcome.get("log") or "", outcome.get("error") or ""
    causes = [m.group(1) for line in log.splitlines() if (m := _EXCEPTION_LINE.match(line)) and "NbGraderException" not in line]
    cause = causes[-1] if causes else next((line.strip() for line in reversed(error.splitlines()) if line.strip()), "no log")
    detail = (log + ("\n" + error if error else ""))[-LOG_TAIL_CHARS:]
    return f"nbgrader {step} failed: {cause[:300]}\n{detail or 'no log'}"


def behind_timings(grader) -> None:
    """How a process that grades a class starts (a local worker, or a Dask worker before each
    submission): its fork server first, at this process's priority, so that the runners it
    leads to keep that priority (TVM imported once, for every submission it grades); then its
    own work (nbgrader's steps, feedback, the gradebook, students' code) steps back behind every
    timing in the class run (engine/priority.py). Both steps are idempotent. A fork server that
    dies later is started again at the lower priority, and its runners with it: they then
    share the cores on equal terms, as they did before this step existed."""
    from ..engine.forkserver import shared_server
    from ..engine.priority import to_background

    if grader.warm_start:
        shared_server()
    to_background(grader.background_nice)


def _worker_main(connection, setup: WorkerSetup) -> None:
    os.setsid()  # Ctrl-C reaches the grading run, which stops the workers itself
    # nbgrader's log comes back in each job's outcome; what the kernels print to the terminal
    # (ipykernel's start-up warnings) would only bury the progress lines.
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)
    os.dup2(quiet, 2)
    try:
        # nbgrader's API, its autograde grading every released notebook whatever name it was handed in under
        from ..nbgrader_ext.released_names import ReleasedNamesAPI as NbGraderAPI
        from .course_dir import course_directory, load_course_config
        from .gradebook_sync import share_engines, sqlite_url

        share_engines()
        load_course_config(setup.course_root)
    except Exception as error:
        connection.send(WorkerFailed(f"{error.__class__.__name__}: {error}"))
        return
    try:
        from ..engine.pipeline import GraderUnusable, preflight
        from ..nbgrader_ext.preprocessors import TrustedGrader

        grader = TrustedGrader(config=load_course_config(setup.course_root, grader_settings=setup.grader_settings)).grader_config()
        behind_timings(grader)
        preflight(grader, vouched=setup.preflight)  # now: not on the clock of the first submission this worker grades
    except (GraderUnusable, ValueError) as error:
        connection.send(WorkerFailed(str(error)))
        return

    def api_for(gradebook: Path):
        config = load_course_config(setup.course_root, cell_timeout=setup.cell_timeout, grader_settings=setup.grader_settings,
                                    earlier=setup.earlier)
        config.CourseDirectory.db_url = sqlite_url(gradebook)
        return NbGraderAPI(coursedir=course_directory(config), config=config)

    connection.send("ready")
    while True:
        try:
            job = connection.recv()
        except (EOFError, OSError):
            return
        try:
            outcome = grade_submission(api_for, setup, job, partial(connection.send, Autograded(job.student)))
        except Exception as error:  # our bug or nbgrader's: report it against this job, keep serving
            outcome = JobOutcome(job.student, False, 0.0, f"the grading process failed: {error.__class__.__name__}: {error}")
        connection.send(outcome)


def kill_tree(pid: int) -> None:
    """SIGKILL a process and everything it started (kernels and sandboxes run in other sessions)."""
    try:
        root = psutil.Process(pid)
        processes = root.children(recursive=True) + [root]
    except psutil.Error:
        return
    for process in processes:
        try:
            process.kill()
        except psutil.Error:
            pass
    # Until each is dead: a zombie is. A killed grandchild (the fork server) stays a zombie
    # until the machine's init reaps it, which in a container can take seconds: psutil's
    # wait_procs waited for that, 1-2 s per worker at the end of every run.
    deadline = time.monotonic() + 5
    while not all(_dead(process) for process in processes) and time.monotonic() < deadline:
        time.sleep(0.005)


def _dead(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE
    except psutil.Error:  # gone, reaped
        return True


class _Worker:
    def __init__(self, context, setup: WorkerSetup):
        self.connection, child_end = context.Pipe()
        self.process = context.Process(target=_worker_main, args=(child_end, setup), daemon=True)
        self.process.start()
        child_end.close()
        self.job: Job | None = None
        self.deadline = 0.0
        self.started = 0.0

    def give(self, job: Job, timeout_s: float) -> None:
        self.job, self.started, self.deadline = job, time.monotonic(), time.monotonic() + timeout_s
        self.connection.send(job)

    def stop(self) -> None:
        kill_tree(self.process.pid)
        self.process.join(timeout=1)  # killed: reaped at once
        self.connection.close()


def run_jobs(setup: WorkerSetup, jobs: list[Job], workers: int, job_timeout_s: float,
             before: Callable[[Job], None], done: Callable[[JobOutcome], None],
             autograded: Callable[[Job], None] = lambda job: None) -> None:
    """Run every job on `workers` processes; `before(job)` runs here just before a job is handed
    out (to copy the gradebook), `autograded(job)` when its autograde has succeeded (its
    feedback still to come: to record the grades), `done(outcome)` as each one finishes."""
    context = multiprocessing.get_context("spawn")
    queue = deque(jobs)
    pool = [_Worker(context, setup) for _ in range(max(1, min(workers, len(jobs))))]
    idle: list[_Worker] = []
    deaths_without_a_job = 0
    try:
        while queue or any(w.job for w in pool):
            for worker in idle:
                if queue:
                    job = queue.popleft()
                    before(job)
                    worker.give(job, job_timeout_s)
            idle = []
            ready = wait([w.connection for w in pool], timeout=0.5)
            for worker in list(pool):
                if worker.connection in ready:
                    try:
                        message = worker.connection.recv()
                    except (EOFError, OSError):
                        message = None
                    if message == "ready":
                        idle.append(worker)
                        continue
                    if isinstance(message, WorkerFailed):
                        raise WorkersUnusable(f"a grading worker could not start: {message.reason}")
                    # The rest are the worker's word on its job, each read field by field: one that
                    # does not read fails the job as the grader's failure (never a score).
                    try:
                        if isinstance(message, Autograded):
                            notice = Autograded.from_wire(message)
                            if worker.job is not None and worker.job.student == notice.student:
                                autograded(worker.job)
                            continue
                        if isinstance(message, JobOutcome):
                            outcome = JobOutcome.from_wire(message, worker.job)
                            worker.job = None
                            done(outcome)
                            idle.append(worker)
                            continue
                        reason = "the grading process died" if message is None else \
                            f"the grading process sent {type(message).__name__}, which is not a message of a worker"
                    except MalformedMessage as error:
                        reason = f"the grading process sent a message that does not read: {error}"
                elif worker.job and time.monotonic() > worker.deadline:
                    reason = f"grading took longer than {job_timeout_s:g} s and was stopped"
                else:
                    continue
                lost, seconds = worker.job, time.monotonic() - worker.started
                worker.stop()
                pool.remove(worker)
                replacement = _Worker(context, setup)
                pool.append(replacement)
                if lost is not None:
                    done(JobOutcome(lost.student, False, seconds, reason))
                else:
                    deaths_without_a_job += 1
                    if deaths_without_a_job > 3:
                        raise WorkersUnusable("grading workers keep dying before they take a job (out of memory?)")
    finally:
        for worker in pool:
            worker.stop()
