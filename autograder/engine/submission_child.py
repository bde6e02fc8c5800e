"""The start every child that runs a submission shares: the schedule's (student_runner.py) and
the cost model's learner (costmodel/learner_runner.py).

In this order, which is the confinement: behind every timing on the machine (priority.py; before
the world, while /proc is the machine's), then a world of its own (world.py: nothing of the
machine is seen from here on), the channel, the submission read and its file removed (the
student's code has no business reading it back). The caller then prepares what the submission
works on (a workload, a pool of candidates) and calls `confine`: the modules a submission may
rely on imported, the memory limit set, Landlock and seccomp applied, and only then does `run`
execute the submission, under a file name its tracebacks quote from `linecache` (the file
itself is gone). `leave` ends the child at once, whatever threads the student's code started.
"""
from __future__ import annotations

import importlib
import linecache
import os
import sys
import traceback
from typing import Any, Callable, NoReturn


class SubmissionChild:
    def __init__(self, channel_fd: str, nice: int, submission: str):
        from .confine import Policy, enter_world
        from .priority import to_background
        from .sandbox import open_channel

        to_background(nice)
        self.policy = Policy(private_dir=os.getcwd())
        self._entered = enter_world(self.policy)  # first: nothing of the machine is seen from here on
        self.send: Callable[[dict], None] = open_channel(channel_fd)
        self.filename = submission
        with open(submission, encoding="utf-8") as handle:
            self.source = handle.read()
        os.unlink(submission)  # the student's code has no business reading the file back

    def confine(self, preimported: tuple[str, ...], memory_mb: int) -> str:
        """Import what a submission may rely on (afterwards Landlock lets it read the
        interpreter's files, but a module imported from them then is the student's own business
        and time), set the memory limit, confine. Returns what was applied, for the stage message."""
        from .confine import confine
        from .sandbox import limit_memory

        for name in preimported:
            importlib.import_module(name)
        limit_memory(memory_mb)
        return ", ".join(self._entered + confine(self.policy))

    def run(self, module_name: str) -> dict[str, Any]:
        """Execute the submission as module `module_name`; its namespace. What it raises is the caller's to report."""
        namespace: dict[str, Any] = {"__name__": module_name, "__file__": self.filename}
        # So tracebacks can quote the student's lines: the file itself is gone.
        linecache.cache[self.filename] = (len(self.source), None, self.source.splitlines(True), self.filename)
        exec(compile(self.source, self.filename, "exec"), namespace)
        return namespace


def student_frames(error: BaseException, filename: str) -> list[str]:
    """Where in the student's own file the error came from, innermost last."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == filename]
    return [f"line {f.lineno}, in {f.name}: {f.line}" for f in frames[-3:]]


def student_traceback(error: BaseException, filename: str) -> str:
    """The error as the student should see it: their own frames and the exception text."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    return "\n".join(student_frames(error, filename) + [detail])


def leave(code: int = 0) -> NoReturn:
    """Flush what the student's code printed (the parent keeps its tail), then exit at once:
    threads the student started must not keep the grader waiting."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001  (the student's code may have replaced or closed them)
            pass
    os._exit(code)
