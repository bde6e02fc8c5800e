"""A Dask worker's grading process: long-lived, warm, and stopped at each submission's deadline.

A Dask task runs in a thread of the worker, and a thread cannot be stopped: a submission whose
grading hangs (in nbgrader, in a kernel the course runs) would hold the worker for good, and
one that crashes the process would take the worker down. So the task hands the grading to a
process of its own (one per worker, started on the first task and kept, with nbgrader imported
and its fork server warm), waits for it at most the run's --submission-timeout, and on a miss
kills it with everything under it and starts a new one for the next task. A process the grading
crashed is replaced the same way; the task's reply says what happened, and is graded again by
nobody: the instructor's run records the failure and regrades it next time. In that process the
submission is graded in a scratch course of its own (`grade_in_scratch`), built from the task alone.

It is a subprocess and not a multiprocessing child, because Dask's worker processes are
daemonic and may not have those. The two ends speak multiprocessing's Connection over a socket
pair, trusted on both sides: both are our code, in the course's environment.
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from multiprocessing.connection import Connection
from pathlib import Path, PurePosixPath

from .workers import kill_tree

_lock = threading.Lock()
_process: "GradingProcess | None" = None


class GradingProcess:
    def __init__(self) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "autograder.course.cluster_worker", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, start_new_session=True,
        )
        theirs.close()
        self.connection = Connection(ours.detach())

    def grade(self, course: dict, student: str, files: dict[str, bytes], timeout_s: float, refused: dict[str, str]) -> dict:
        """The reply of grade_in_scratch, or one saying why there is none."""
        try:
            self.connection.send((course, student, files, refused))
            if not self.connection.poll(timeout_s):
                self.stop()
                return {"error": f"grading took longer than {timeout_s:g} s and was stopped"}
            return self.connection.recv()
        except (EOFError, OSError):
            code = self.process.poll()
            self.stop()
            how = f"exit code {code}" if code is not None and code >= 0 else f"signal {-(code or 9)}"
            return {"error": f"the grading process on this worker died ({how}): a crash in what the "
                             "submission made the grader run, or the worker's memory ran out"}

    @property
    def alive(self) -> bool:
        return self.process.poll() is None and not self.connection.closed

    def stop(self) -> None:
        kill_tree(self.process.pid)
        self.process.wait()
        self.connection.close()


def grade(course: dict, student: str, files: dict[str, bytes], timeout_s: float, refused: dict[str, str] | None = None) -> dict:
    """Grade one submission in this worker's grading process (started, or replaced, as needed).
    `refused`: notebook entry -> why the instructor's machine refused it (cluster.submission_files)."""
    global _process
    with _lock:  # a worker runs one grading at a time (--nthreads 1); a second would wait here
        if _process is None or not _process.alive:
            _process = GradingProcess()
        reply = _process.grade(course, student, files, timeout_s, dict(refused or {}))
        if not _process.alive:
            _process = None
        return reply


# ---------------------------------------------------------------- in the grading process

def grade_in_scratch(course: dict, student: str, files: dict[str, bytes], refused: dict[str, str] | None = None) -> dict:
    """In the worker's grading process: the submission graded in a private scratch course."""
    reply: dict = {}
    os.umask(0o077)
    scratch = Path(tempfile.mkdtemp(prefix="tvm-course-worker-"))
    try:
        reply.update(_grade_in_scratch(scratch, course, student, files, dict(refused or {})))
    except Exception as error:  # noqa: BLE001 - our bug or nbgrader's, reported against this submission
        reply["error"] = f"the grading on the worker failed: {error.__class__.__name__}: {error}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return reply


def _grade_in_scratch(root: Path, course: dict, student: str, files: dict[str, bytes], refused: dict[str, str]) -> dict:
    from ..problems.variants import SECRET_ENV, SECRET_FILE
    from .course_dir import CONFIG_FILE

    assignment = course["assignment"]
    _safe_relative(student), _safe_relative(assignment)
    (root / CONFIG_FILE).write_bytes(course["config"])
    (root / SECRET_FILE).write_bytes(course["secret"])
    _write_tree(root / "source" / assignment, course["source"])
    submitted = root / "submitted" / student / assignment
    _write_tree(submitted, files)
    # A notebook the instructor's machine refused (a link, over the size limit): an empty file of
    # its name, which the reader refuses with the instructor's machine's words
    refused_files = {}
    for name, why in refused.items():
        if len(_safe_relative(name).parts) != 1:
            raise ValueError(f"unsafe file name {name!r}")
        (submitted / name).write_bytes(b"")
        refused_files[os.path.abspath(submitted / name)] = str(why)
    gradebook = root / "gradebook.db"
    gradebook.write_bytes(course["gradebook"])
    # The instructor's secret, not whatever this worker's environment holds: the same variants as
    # a local run. (Untrusted children get none of the environment; sandbox.SAFE_ENV_KEYS.)
    previous = os.environ.get(SECRET_ENV)
    os.environ[SECRET_ENV] = course["secret"].decode("utf-8")
    try:
        return _autograde(root, course, student, gradebook, refused_files)
    finally:
        if previous is None:
            os.environ.pop(SECRET_ENV, None)
        else:
            os.environ[SECRET_ENV] = previous


def _autograde(root: Path, course: dict, student: str, gradebook: Path, refused_files: dict[str, str]) -> dict:
    from ..nbgrader_ext.released_names import ReleasedNamesAPI as NbGraderAPI  # every released notebook graded

    from .course_dir import course_directory, load_course_config
    from .gradebook_sync import sqlite_url, submission_rows
    from ..nbgrader_ext.preprocessors import TrustedGrader
    from .workers import Job, WorkerSetup, behind_timings, grade_submission

    assignment = course["assignment"]
    earlier = {student: course["earlier"][student]} if student in course.get("earlier", {}) else {}
    config = load_course_config(root, cell_timeout=course["cell_timeout"], grader_settings=course["grader_settings"],
                                earlier=earlier)
    config.CourseDirectory.db_url = sqlite_url(gradebook)
    config.SubmissionExporter.refused_files = refused_files
    coursedir = course_directory(config)
    setup = WorkerSetup(root, assignment, course["cell_timeout"], course["grader_settings"], course["feedback"], earlier)
    behind_timings(TrustedGrader(config=config).grader_config())
    outcome = grade_submission(lambda db: NbGraderAPI(coursedir=coursedir, config=config), setup, Job(student, gradebook))
    reply: dict = {"ok": outcome.ok, "error": outcome.error}
    graded = Path(coursedir.format_path(coursedir.autograded_directory, student, assignment))
    if graded.is_dir():
        reply["notebooks"] = {p.name: p.read_bytes() for p in sorted(graded.glob("*.ipynb"))}
        try:
            reply["rows"] = submission_rows(sqlite_url(gradebook), assignment, student, coursedir.course_id)
        except Exception as error:  # noqa: BLE001 - autograde failed before it recorded anything
            reply["ok"], reply["error"] = False, reply["error"] or f"no grades were recorded: {error}"
    feedback = Path(coursedir.format_path(coursedir.feedback_directory, student, assignment))
    if feedback.is_dir():
        reply["feedback"] = {p.name: p.read_bytes() for p in sorted(feedback.glob("*.html"))}
    return reply


def _safe_relative(name: str) -> PurePosixPath:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or any(part in ("", ".", "..") for part in path.parts) or "\\" in name:
        raise ValueError(f"unsafe file name {name!r}")
    return path


def _write_tree(directory: Path, files: dict[str, bytes]) -> None:
    for name, data in files.items():
        target = directory / _safe_relative(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def main(argv: list[str]) -> None:
    from .gradebook_sync import share_engines

    share_engines()  # nbgrader's dozen Gradebook opens a submission compile their SQL once
    # Its worker gone, the socket closes and this ends after the grading at hand (bounded by the
    # grader's own limits). Not PR_SET_PDEATHSIG: that fires when the *thread* that started this
    # process ends, and Dask's task threads come and go.
    connection = Connection(int(argv[0]))
    while True:
        try:
            course, student, files, refused = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(grade_in_scratch(course, student, files, refused))


if __name__ == "__main__":
    main(sys.argv[1:])
