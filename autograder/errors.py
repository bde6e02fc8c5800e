"""The package's one error root and the `tvm-course` exit codes, in one place.

Every error the package raises on purpose derives from `TvmCourseError`, beside the built-in base
it always had (`ValueError`, `RuntimeError`, `OSError`, ...), so that code catching the built-in
still catches it. Each carries the exit code `tvm-course` ends with when a command lets it through:
`cli.main` prints its message and returns that code; anything else (a bug) keeps its traceback.

This module leans on nothing of the package, so any room may import it.
"""
from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """What `tvm-course` exits with (docs/students.md, docs/instructors.md): scripts read these."""

    OK = 0
    # The command ran but the result is not a success: a submission graded but not passed, some
    # students' gradings failed, an LMS download collected in part, the course map has problems.
    FAILED = 1
    NOT_PASSED = 1
    SOME_FAILED = 1
    PARTLY = 1
    PROBLEMS = 1
    # What the caller asked for cannot be done as asked: a missing file, a bad option, a course
    # folder that is not one; the message says what to change.
    USAGE_ERROR = 2
    INTERRUPTED = 130  # Ctrl-C: 128 + SIGINT, as a shell reports it


class TvmCourseError(Exception):
    """An error the package raises on purpose, with a message for the person who ran it.

    `exit_code` is what `tvm-course` exits with when no command caught it: FAILED by default
    (what an uncaught exception exited with before), USAGE_ERROR where the caller's input is wrong.
    """

    exit_code: ExitCode = ExitCode.FAILED


class UsageError(TvmCourseError, ValueError):
    """What the caller asked for cannot be done as asked; the message says what to change."""

    exit_code = ExitCode.USAGE_ERROR
