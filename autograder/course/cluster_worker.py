"""A Dask worker's grading process: long-lived, warm, and stopped at each submission's deadline.

A Dask task runs in a thread of the worker, and a thread cannot be stopped: a submission whose
grading hangs (in nbgrader, in a kernel the course runs) would hold the worker for good, and
one that crashes the process would take the worker down. So the task hands the grading to a
process of its own (one per worker, started on the first task and kept, with nbgrader imported
and its fork server warm), waits for it at most the run's --submission-timeout, and on a miss
kills it with everything under it and starts a new one for the next task. A process the grading
crashed is replaced the same way; the task's reply says what happened, and is graded again by
nobody: the instructor's run records the failure and regrades it next time.

It is a subprocess and not a multiprocessing child, because Dask's worker processes are
daemonic and may not have those. The two ends speak multiprocessing's Connection over a socket
pair, trusted on both sides: both are our code, in the course's environment.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import threading
from multiprocessing.connection import Connection

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

    def grade(self, course: dict, student: str, files: dict[str, bytes], timeout_s: float) -> dict:
        """The reply of cluster.grade_in_scratch, or one saying why there is none."""
        try:
            self.connection.send((course, student, files))
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


def grade(course: dict, student: str, files: dict[str, bytes], timeout_s: float) -> dict:
    """Grade one submission in this worker's grading process (started, or replaced, as needed)."""
    global _process
    with _lock:  # a worker runs one grading at a time (--nthreads 1); a second would wait here
        if _process is None or not _process.alive:
            _process = GradingProcess()
        reply = _process.grade(course, student, files, timeout_s)
        if not _process.alive:
            _process = None
        return reply


def main(argv: list[str]) -> None:
    from .cluster import grade_in_scratch
    from .gradebook_sync import share_engines

    share_engines()  # nbgrader's dozen Gradebook opens a submission compile their SQL once
    # Its worker gone, the socket closes and this ends after the grading at hand (bounded by the
    # grader's own limits). Not PR_SET_PDEATHSIG: that fires when the *thread* that started this
    # process ends, and Dask's task threads come and go.
    connection = Connection(int(argv[0]))
    while True:
        try:
            course, student, files = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(grade_in_scratch(course, student, files))


if __name__ == "__main__":
    main(sys.argv[1:])
