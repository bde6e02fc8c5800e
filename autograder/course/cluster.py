"""Grading a class on a Dask cluster: `tvm-course grade ASSIGNMENT --scheduler ADDRESS`.

How the course travels. Nothing is shared between the instructor's machine and the workers but
the scheduler's address. Each task carries, as plain data:

- the course's part of the grading, once per run (a task that returns it, `send_course`): nbgrader_config.py,
  the assignment's source folder (the grading plan, with its answer key), the variant secret
  (every student is graded on their own workload), and a gradebook holding the assignment but
  no student (so it stays small whatever the class size);
- the submission: the files of submitted/STUDENT/ASSIGNMENT, its notebooks as autograde reads
  them here (outputs dropped; a file the reader refuses, by name and why), so that the worker's
  verdict is this machine's (`submission_files`); one that cannot be sent fails alone.

The worker builds a scratch course from them in a private temporary folder, autogrades the one
submission there with nbgrader and the trusted grader (student code confined as on one machine:
the worker refuses to grade where it cannot confine it, unless the run allows it), writes the
feedback, and sends back the autograded notebooks, the feedback pages and the submission's
gradebook rows, as bytes and numbers, with the machine that timed it. Here, on the instructor's
machine, the reply is untrusted data (a worker runs student code): `accept` checks every name,
size, type and score against the main gradebook before anything is written, and only this
process writes to the gradebook, one submission at a time, at most once per run each.

What this does not cover: Dask's own protocol trusts its peers (a client still unpickles the
exception and result type a worker reports, whatever its deserializers), and its scheduler runs
what any client submits. The client here accepts task results as msgpack only, and student code
cannot become a peer: on the worker it runs confined (no network, no exec). Run the scheduler
on a network only the course's machines reach, or with TLS (a `tls://` address and Dask's
`Security`).

Faults. Dask reruns a task whose worker died (up to the scheduler's allowed-failures, then
KilledWorker): a task records each start as a scheduler event, so the summary names what was
retried, and the workers the scheduler lost are read from its events. The course's part is a task
the cluster can compute again, so a worker lost with it costs no submission (`send_course`); a
task the cluster cancels all the same, its scheduler still there, is sent again (`RESUBMITS`).
A result that comes back twice is merged once. A lost scheduler ends the run: what was merged
stays, the rest is reported failed, and the next run grades only those.

Load changes none of this, so no Dask setting is changed for it: the scheduler removes a worker
when its connection closes (the process died) or after `distributed.scheduler.worker-ttl` (5
minutes) without a heartbeat, far beyond any stall of a loaded machine; `distributed.comm.timeouts`
(30 s) count bytes the peer's kernel has not acknowledged, which it does whatever the load; and
`allowed-failures` (3) counts workers that died, not slow ones. What failed at load 4-11 (issue 43)
was the course's part, lost with a worker: load only made that likely, by reading and sending the
submissions more slowly than Dask's Active Memory Manager drops a broadcast's extra copies.
Workers should run one task at a time, each on a quiet core:
`dask worker ADDRESS --nthreads 1 --resources grading=1`; tasks ask for the `grading` resource.
"""
from __future__ import annotations

import itertools
import json
import math
import os
import stat
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..errors import TvmCourseError

RESOURCE = "grading"
EVENT_TOPIC = "tvm-course-grading"
MAX_FILE_BYTES = 32 * 1024 * 1024
MAX_SUBMISSION_BYTES = 64 * 1024 * 1024
MAX_TEXT = 20000
DEFAULT_SUBMISSION_TIMEOUT_S = 900.0  # as grading_run.GradingOptions.submission_timeout_s


class ClusterError(RuntimeError, TvmCourseError):
    pass


# ---------------------------------------------------------------- instructor side: what is sent

def _files(directory: Path, limit: int = MAX_SUBMISSION_BYTES) -> dict[str, bytes]:
    files, total = {}, 0
    for path in sorted(Path(directory).rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            total += len(data)
            if total > limit:
                raise ClusterError(f"{directory} holds more than {limit >> 20} MiB")
            files[path.relative_to(directory).as_posix()] = data
    return files


class SubmissionUnsendable(ValueError, TvmCourseError):
    """One submission cannot be sent to the cluster: it fails, with this message; the others are graded."""


@dataclass
class SentSubmission:
    """A submission's folder as a task carries it (see `submission_files`)."""

    files: dict[str, bytes]  # relative path -> bytes
    refused: dict[str, str]  # notebook entry -> why it is no notebook, as the local reader said


def submission_files(directory: Path, ignore=(), limit: int = MAX_SUBMISSION_BYTES) -> SentSubmission:
    """A submission's folder, to be graded on a worker with the verdict it gets on this machine:

    - each top-level entry named *.ipynb (what autograde grades; hidden ones too) is read here as
      autograde reads it (nbgrader_ext/notebook_file.py: up to 256 MiB, outputs dropped, in a
      memory-limited child when large) and sent as that JSON, a few MiB at most whatever its
      outputs held; or, where the reader refuses it (a symbolic link, not a regular file, over
      256 MiB, no notebook), by name with the reader's words, so the worker refuses it alike;
    - the other files autograde copies beside the graded notebooks (nbgrader's find_all_files,
      less the course's ignore patterns and *.ipynb), regular files by content, anything else
      (a link, a pipe) as an empty file, and any other top-level entry by name (an empty file),
      so the worker lists the folder as it is here.

    Raises SubmissionUnsendable where what is sent would be over `limit` or cannot be read."""
    from nbgrader.utils import find_all_files

    from ..nbgrader_ext.notebook_file import NotANotebook, read_json_file
    from ..nbgrader_ext.released_names import notebook_entries

    directory = Path(directory)
    try:
        entries = sorted(os.listdir(directory))
    except OSError as error:
        raise SubmissionUnsendable(f"its folder {directory} cannot be listed ({error.strerror})") from None
    sent, total = SentSubmission({}, {}), 0

    def add(name: str, data: bytes) -> None:
        nonlocal total
        total += len(data)
        if total > limit:
            raise SubmissionUnsendable(
                f"its folder {directory} holds more than the {limit >> 20} MiB a submission may send to the cluster "
                "(its notebooks counted without their outputs, as they are graded): not graded; look at what else is "
                "in it, or grade it on this machine (without --scheduler)")
        sent.files[name] = data

    for name in notebook_entries(entries):
        try:
            add(name, json.dumps(read_json_file(directory / name)).encode("ascii"))
        except NotANotebook as why:
            sent.refused[name] = str(why)
        except (RuntimeError, OSError, ValueError) as error:  # the reader itself failed: this submission only
            raise SubmissionUnsendable(f"{name} could not be read here to send it to the cluster: {error}") from None
    for path in find_all_files(str(directory), list(ignore) + ["*.ipynb"]):
        relative = Path(path).relative_to(directory).as_posix()
        try:
            regular = stat.S_ISREG(os.lstat(path).st_mode)
            add(relative, Path(path).read_bytes() if regular else b"")
        except OSError as error:
            raise SubmissionUnsendable(f"{relative} could not be read here to send it to the cluster ({error.strerror})") from None
    listed = {name.split("/", 1)[0] for name in sent.files} | set(sent.refused)
    for name in entries:
        if name not in listed:
            add(name, b"")
    return sent


def seed_gradebook(main_path: Path, destination: Path, course_id: str) -> bytes:
    """The main gradebook without any student (nor their submissions): what every task starts from."""
    from nbgrader.api import Gradebook

    from .gradebook_sync import copy_gradebook, sqlite_url

    copy_gradebook(main_path, destination)
    with Gradebook(sqlite_url(destination), course_id) as gradebook:
        for student in list(gradebook.students):
            gradebook.remove_student(student.id)
    import sqlite3

    connection = sqlite3.connect(destination)
    try:
        connection.execute("VACUUM")
    finally:
        connection.close()
    return destination.read_bytes()


def course_payload(root: Path, coursedir, assignment: str, seed: bytes, cell_timeout, grader_settings: dict,
                   feedback: bool, allow_unconfined: bool,
                   submission_timeout_s: float = DEFAULT_SUBMISSION_TIMEOUT_S, earlier: dict | None = None) -> dict:
    from ..problems.variants import course_secret
    from .course_dir import CONFIG_FILE

    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    return {
        "run": uuid.uuid4().hex,
        "assignment": assignment,
        "config": (Path(root) / CONFIG_FILE).read_bytes(),
        "source": _files(source),
        "secret": course_secret(root),  # as the local run reads it: $TVM_COURSE_SECRET first
        "gradebook": seed,
        "cell_timeout": cell_timeout,
        "grader_settings": dict(grader_settings),
        "earlier": dict(earlier or {}),
        "feedback": feedback,
        "allow_unconfined": allow_unconfined,
        "submission_timeout_s": float(submission_timeout_s),
    }


# ---------------------------------------------------------------- worker side: the task (cluster_worker grades)

def grade_on_worker(course: dict, student: str, files: dict[str, bytes], refused: dict[str, str] | None = None) -> dict:
    """A Dask task: grade one submission in a scratch course; returns plain data (see `accept`).
    `files` and `refused`: the submission, as `submission_files` sends it."""
    started = time.monotonic()
    try:
        from distributed import get_worker

        worker = get_worker()
        worker.log_event(EVENT_TOPIC, {"run": course["run"], "student": student, "worker": worker.address})
    except Exception:  # noqa: BLE001 - outside a worker (the tests call it directly)
        pass
    from ..engine import confine
    from ..engine.pipeline import grading_machine
    from ..engine.config import GraderConfig

    reply = {"student": student, "ok": False, "error": "", "notebooks": {}, "feedback": {}, "rows": None, "machine": "",
             "seconds": 0.0}
    confinement = confine.available()
    if not confinement.isolated and not course["allow_unconfined"]:
        reply["error"] = (f"refusing to grade on this worker: student code cannot be confined here "
                          f"({confinement.reason or 'missing'}; not enforced: {', '.join(confinement.missing())})")
        return reply
    try:
        reply["machine"] = grading_machine(GraderConfig(**{k: v for k, v in course["grader_settings"].items() if k in ("rpc_tracker", "rpc_key")}))
    except Exception:  # noqa: BLE001
        reply["machine"] = "?"
    from .cluster_worker import grade

    reply.update(grade(course, student, files, float(course.get("submission_timeout_s") or DEFAULT_SUBMISSION_TIMEOUT_S),
                       dict(refused or {})))
    reply["seconds"] = time.monotonic() - started
    return reply


# ---------------------------------------------------------------- instructor side: what comes back

@dataclass
class Accepted:
    """A worker's reply, checked: safe to write into the course and the gradebook."""

    student: str
    ok: bool
    error: str
    notebooks: dict[str, bytes]
    feedback: dict[str, bytes]
    rows: dict | None
    machine: str
    seconds: float


class Rejected(ValueError, TvmCourseError):
    pass


def _text(value, what: str, limit: int = MAX_TEXT) -> str:
    from ..engine.untrusted_text import visible

    if not isinstance(value, str):
        raise Rejected(f"{what} is not text")
    return visible(value[:limit])


def _number(value, what: str, low: float, high: float, allow_none: bool = True):
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not low <= value <= high:
        raise Rejected(f"{what} is not a number in [{low:g}, {high:g}]: {value!r}"[:300])
    return float(value)


def accept(reply, student: str, notebooks: tuple[str, ...], main_url: str, assignment: str, course_id: str) -> Accepted:
    """Check a worker's reply for `student` before anything of it is used: the notebook and
    feedback names are the assignment's `notebooks` (released names: every one is graded under
    its name, whatever the files handed in are named), each notebook is valid nbformat, sizes are bounded,
    and the gradebook rows name exactly the assignment's grade cells, with scores within their
    points. Raises Rejected saying what is wrong."""
    import nbformat
    from nbgrader.api import Gradebook, MissingEntry

    if not isinstance(reply, dict):
        raise Rejected("the reply is not a mapping")
    if reply.get("student") != student:
        raise Rejected(f"the reply is for {str(reply.get('student'))[:80]!r}, not for {student!r}")
    ok = reply.get("ok")
    if not isinstance(ok, bool):
        raise Rejected("'ok' is not a flag")
    error = _text(reply.get("error", ""), "the error")
    machine = _text(reply.get("machine", ""), "the machine", 300)
    seconds = _number(reply.get("seconds", 0.0), "the seconds", 0, 1e6, allow_none=False)

    def named_files(key: str, suffix: str) -> dict[str, bytes]:
        found = reply.get(key) or {}
        if not isinstance(found, dict):
            raise Rejected(f"{key} is not a mapping")
        allowed = {f"{n}{suffix}" for n in notebooks}
        for name, data in found.items():
            if name not in allowed:
                raise Rejected(f"{key}: {str(name)[:80]!r} is not one of the assignment's notebooks")
            if not isinstance(data, bytes) or len(data) > MAX_FILE_BYTES:
                raise Rejected(f"{key}: {name} is not bytes, or larger than {MAX_FILE_BYTES >> 20} MiB")
        return dict(found)

    graded = named_files("notebooks", ".ipynb")
    for name, data in graded.items():
        try:
            nbformat.validate(nbformat.reads(data.decode("utf-8"), as_version=4))
        except Exception as problem:  # noqa: BLE001 - whatever is wrong with it
            raise Rejected(f"notebooks: {name} is not a valid notebook: {str(problem)[:200]}") from None
    feedback = named_files("feedback", ".html")
    for name, data in feedback.items():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            raise Rejected(f"feedback: {name} is not UTF-8") from None

    rows = reply.get("rows")
    if rows is not None:
        rows = _accept_rows(rows, main_url, assignment, course_id, Gradebook, MissingEntry)
    if ok and (rows is None or set(graded) != {f"{n}.ipynb" for n in rows["notebooks"]}):
        raise Rejected("the reply says graded but lacks the graded notebooks or their gradebook rows")
    return Accepted(student, ok, error, graded, feedback, rows, machine, seconds)


def _accept_rows(rows, main_url: str, assignment: str, course_id: str, Gradebook, MissingEntry) -> dict:
    from datetime import datetime

    if not isinstance(rows, dict) or not isinstance(rows.get("notebooks"), dict):
        raise Rejected("rows: not a mapping of notebooks")
    timestamp = rows.get("timestamp")
    if timestamp is not None:
        try:
            datetime.fromisoformat(_text(timestamp, "rows: the timestamp", 64))
        except ValueError:
            raise Rejected("rows: the timestamp is not ISO 8601") from None
    clean: dict = {"timestamp": timestamp, "notebooks": {}}
    with Gradebook(main_url, course_id) as main:
        expected = {n.name: n for n in main.find_assignment(assignment).notebooks}
        if set(rows["notebooks"]) != set(expected):
            raise Rejected(f"rows: notebooks {sorted(map(str, rows['notebooks']))[:5]} are not the assignment's {sorted(expected)}")
        for name, notebook in rows["notebooks"].items():
            if not isinstance(notebook, dict) or not isinstance(notebook.get("grades"), dict) or not isinstance(notebook.get("comments"), dict):
                raise Rejected(f"rows: {name} is not a notebook's rows")
            cells = {g.name: g for g in expected[name].grade_cells}
            comments = {c.name for c in expected[name].solution_cells}
            if set(notebook["grades"]) != set(cells):
                raise Rejected(f"rows: {name}'s grades are not its grade cells")
            if not set(notebook["comments"]) <= comments:
                raise Rejected(f"rows: {name} has comments on cells it does not have")
            grades = {}
            for grade_name, grade in notebook["grades"].items():
                if not isinstance(grade, dict) or not isinstance(grade.get("needs_manual_grade"), bool):
                    raise Rejected(f"rows: {name}/{grade_name} is not a grade")
                score = _number(grade.get("auto_score"), f"rows: {name}/{grade_name} auto_score", 0, cells[grade_name].max_score)
                grades[grade_name] = {"auto_score": score, "needs_manual_grade": grade["needs_manual_grade"]}
            clean["notebooks"][name] = {
                "late_submission_penalty": _number(notebook.get("late_submission_penalty"), f"rows: {name} late penalty", 0, 1e6),
                "grades": grades,
                "comments": {c: (None if v is None else _text(v, f"rows: {name}/{c} comment")) for c, v in notebook["comments"].items()},
            }
    return clean


def assignment_notebooks(main_url: str, assignment: str, course_id: str) -> tuple[str, ...]:
    """The assignment's notebooks in the gradebook (released names, without .ipynb): what a reply may name."""
    from nbgrader.api import Gradebook

    with Gradebook(main_url, course_id) as gradebook:
        return tuple(sorted(n.name for n in gradebook.find_assignment(assignment).notebooks))


# ---------------------------------------------------------------- the run

# How this run answers a submission's task that did not come back, by what the cluster says:
# - the scheduler is gone (the client lost it, or it restarted): the run ends; what was merged
#   stays, the rest fails and the next run grades only those;
# - KilledWorker: Dask itself gave up after more workers than the scheduler's allowed-failures
#   died with the task on them; where it ran on the last of them, the submission is the likely
#   cause, so it is failed, not retried;
# - the cluster's doing, the scheduler still there: cancelled (a worker died holding what the task
#   needed: "lost dependencies", "already forgotten"), or KilledWorker for a task only queued on
#   the worker that died: sent again, at most RESUBMITS times, each time saying why
#   (`_why_send_again`).
# A worker that dies while it runs the task is Dask's to retry (allowed-failures), not this run's.
CLUSTER_GONE = ("scheduler-connection-lost", "scheduler-restart")
RESUBMITS = 2


@dataclass
class LostWorker:
    """A worker the scheduler removed without being asked to (it died, or stopped answering)."""

    address: str
    grading: list[str]  # the students whose tasks it was running or held queued


@dataclass
class ClusterRun:
    retried: dict[str, list[str]] = field(default_factory=dict)  # student -> the workers that started it
    machines: dict[str, str] = field(default_factory=dict)  # student -> the machine that timed it
    lost_scheduler: bool = False
    resubmitted: dict[str, list[str]] = field(default_factory=dict)  # student -> why each resubmission
    lost_workers: list[LostWorker] = field(default_factory=list)


def connect(address: str, timeout_s: float = 10.0):
    """A client that takes only msgpack from the cluster: a reply can never be a pickle."""
    from distributed import Client

    try:
        client = Client(address, timeout=timeout_s, set_as_default=False, deserializers=["msgpack", "error"])
    except (OSError, TimeoutError) as error:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {error}") from None
    workers = client.scheduler_info().get("workers", {})
    if not any(w.get("resources", {}).get(RESOURCE) for w in workers.values()):
        client.close()
        raise ClusterError(
            f"no worker of the Dask scheduler at {address} offers the {RESOURCE!r} resource: start them with "
            f"`dask worker {address} --nthreads 1 --resources {RESOURCE}=1` from the course's environment"
        )
    return client


def course_part(course: dict) -> dict:
    """A Dask task: the course's part of the grading, as the run sent it (see `send_course`)."""
    return course


def send_course(client, course: dict, sending: int = 0):
    """The course's part of the grading, once per run, as a future every submission's task takes.

    A task that returns it, and not data scattered to the workers: the scheduler keeps a task's
    inputs, so a result lost with the last worker that held it is computed again on another, while
    scattered data lost so is gone for good, and every task that needs it is cancelled. Even
    scattered to every worker (broadcast), it is soon held by one: the scheduler's Active Memory
    Manager (on by default, every 2 s) drops the replicas no task waits on yet, and under load the
    submissions are read and sent more slowly than that. A worker killed then took the only copy
    and the whole class was cancelled with it (issue 43). The run's own key: no other course's
    run on the same scheduler shares it."""
    return client.submit(course_part, course, key=f"tvm-course-{course['run']}-course-{sending}", pure=False)


def run_on_cluster(address: str, course: dict, submissions: list, deliver: Callable[[str, object, str], None],
                   retries: int = 0, ignore=()) -> ClusterRun:
    """Grade every submission on the cluster; `deliver(student, reply_or_None, error)` runs here
    once per submission, in the order they finish (a submission that cannot be sent, first).
    `ignore`: the course's CourseDirectory.ignore, what autograde does not copy."""
    from distributed import as_completed

    client = connect(address)
    run = ClusterRun()
    delivered: set[str] = set()
    students: dict[str, str] = {}  # task key -> student, every task this run submitted
    try:
        sendings = itertools.count()
        shared = send_course(client, course, next(sendings))
        futures = {}

        def submit(submission, attempt: int = 0):
            nonlocal shared
            if shared.status in ("cancelled", "lost", "error"):  # gone with what cancelled the task: sent again
                shared = send_course(client, course, next(sendings))
            # Sent as they are now, read again: holding every submission's files for a resubmission
            # would hold the class in memory
            sent = submission_files(submission.directory, ignore)
            key = f"tvm-course-{course['run']}-{attempt}-{submission.student}"  # the run's own: see send_course
            future = client.submit(grade_on_worker, shared, submission.student, sent.files, sent.refused,
                                   key=key, resources={RESOURCE: 1}, retries=retries, pure=False)
            futures[future] = submission
            students[key] = submission.student
            return future

        for submission in submissions:
            try:
                submit(submission)
            except SubmissionUnsendable as why:  # this submission only: the others are graded
                delivered.add(submission.student)
                deliver(submission.student, None, f"not sent to the cluster: {why}")
        finished = as_completed(list(futures), loop=client.loop)
        while True:
            try:
                future = next(finished)
            except StopIteration:
                break
            except Exception as problem:  # noqa: BLE001 - the scheduler went away
                run.lost_scheduler = True
                for submission in futures.values():
                    if submission.student not in delivered:
                        delivered.add(submission.student)
                        deliver(submission.student, None, f"lost the Dask scheduler at {address} before this submission "
                                                          f"came back ({problem.__class__.__name__}): grade again, only these are regraded")
                break
            submission = futures[future]
            student = submission.student
            if student in delivered:
                continue
            try:
                reply, error = future.result(), ""
            except Exception as problem:  # noqa: BLE001 - KilledWorker, a task error, a lost connection
                reply, error = None, _task_error(problem)
                if client.status != "running" or getattr(problem, "reason", None) in CLUSTER_GONE:
                    run.lost_scheduler = True
                    error = (f"lost the Dask scheduler at {address} before this submission came back: "
                             "grade again, only these are regraded")
                else:
                    again = _why_send_again(client, course["run"], student, problem)
                    if again and len(run.resubmitted.get(student, [])) < RESUBMITS:
                        try:
                            finished.add(submit(submission, len(run.resubmitted.get(student, [])) + 1))
                            run.resubmitted.setdefault(student, []).append(again)
                            continue
                        except SubmissionUnsendable as unsendable:
                            error = f"{error}; not sent again: {unsendable}"
                    elif again:
                        error = (f"the cluster lost this submission's grading {RESUBMITS + 1} times, never by its fault "
                                 f"(last: {again}): not graded; grade again")
            delivered.add(student)
            deliver(student, reply, error)
        if not run.lost_scheduler:
            run.retried = _retried(client, course["run"])
            run.lost_workers = _lost_workers(client, students)
    finally:
        try:
            client.close(timeout=5)
        except Exception:  # noqa: BLE001
            pass
    return run


def _why_send_again(client, run_id: str, student: str, problem: Exception) -> str:
    """Why a task that did not come back, its scheduler still there, is to be sent again (empty:
    it is not). Not for what the submission may have done: a task error, or KilledWorker where
    the task ran on the worker that died last. For what the cluster did: a cancellation (a worker
    died holding what the task needed), or KilledWorker for a task that was only queued on that
    worker (Dask counts every task assigned to a dying worker, run or not, against the
    allowed-failures; a submission that never started there did not kill it)."""
    if _cancelled(problem):
        return f"cancelled: {_cancel_reason(problem)}"
    if problem.__class__.__name__ == "KilledWorker":
        last = str(getattr(getattr(problem, "last_worker", None), "address", "") or "")
        if last and last not in _starts(client, run_id).get(student, []):
            return f"queued on worker {last} when it died, never started there"
    return ""


def _cancelled(problem: Exception) -> bool:
    return problem.__class__.__name__ in ("CancelledError", "FutureCancelledError")


def _cancel_reason(problem: Exception) -> str:
    reason = str(getattr(problem, "reason", "") or "no reason given")
    meaning = {"lost dependencies": "what it needed was lost with a worker",
               "already forgotten": "the scheduler had forgotten it, with what it needed, when a worker was lost"}
    return f"{reason}: {meaning[reason]}" if reason in meaning else reason


def _task_error(problem: Exception) -> str:
    name = problem.__class__.__name__
    if name == "KilledWorker":
        return ("this submission's grading killed every worker that took it (Dask's allowed-failures): "
                "not graded; look at it by hand (tvm-course grade-schedule) before grading it again")
    if _cancelled(problem):
        return f"the cluster cancelled this submission's grading ({_cancel_reason(problem)}): grade again"
    return f"the grading task failed on the cluster: {name}: {str(problem)[:500]}"


def _starts(client, run_id: str) -> dict[str, list[str]]:
    """student -> the workers that started grading it in this run, as their tasks told the scheduler."""
    starts: dict[str, list[str]] = {}
    try:
        for _, event in client.get_events(EVENT_TOPIC):
            if isinstance(event, dict) and event.get("run") == run_id:
                starts.setdefault(str(event.get("student")), []).append(str(event.get("worker")))
    except Exception:  # noqa: BLE001 - the scheduler went away meanwhile: none known
        return {}
    return starts


def _retried(client, run_id: str) -> dict[str, list[str]]:
    return {student: workers for student, workers in _starts(client, run_id).items() if len(workers) > 1}


def _lost_workers(client, students: dict[str, str]) -> list[LostWorker]:
    """The workers the scheduler removed unasked while they held this run's tasks (its events)."""
    lost = []
    try:
        for _, event in client.get_events("all"):
            if not isinstance(event, dict) or event.get("action") != "remove-worker" or event.get("expected"):
                continue
            grading = sorted({students[key] for key in event.get("processing-tasks") or () if key in students})
            if grading:
                lost.append(LostWorker(str(event.get("worker")), grading))
    except Exception:  # noqa: BLE001 - the summary only
        return []
    return lost


class LocalCluster:
    """A Dask scheduler and `workers` grading workers on 127.0.0.1, as real processes started with
    the `dask` command of this environment (for the benchmark and a one-machine try-out)."""

    def __init__(self, workers: int, log: Path | None = None):
        import socket
        import subprocess
        import sys

        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        self.address = f"tcp://127.0.0.1:{port}"
        dask = str(Path(sys.executable).parent / "dask")
        out = open(log or os.devnull, "w")
        self.processes = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                                           stdout=out, stderr=subprocess.STDOUT)]
        self.processes += [subprocess.Popen([dask, "worker", self.address, "--nthreads", "1", "--no-dashboard",
                                             "--resources", f"{RESOURCE}=1"], stdout=out, stderr=subprocess.STDOUT)
                           for _ in range(workers)]
        out.close()
        try:
            from distributed import Client

            deadline = time.monotonic() + 60
            while True:
                try:
                    with Client(self.address, timeout=5, set_as_default=False) as client:
                        client.wait_for_workers(workers, timeout=60)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        from .workers import kill_tree

        for process in reversed(self.processes):
            if process.poll() is None:
                kill_tree(process.pid)
            process.wait(timeout=10)

    def __enter__(self) -> "LocalCluster":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
