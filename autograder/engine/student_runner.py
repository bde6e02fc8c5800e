"""Child process: run a student's `schedule(sch)` on a fresh workload and send back its trace.

Usage (by the grader only): python -m autograder.engine.student_runner FD PROBLEM SHAPE MEMORY_MB, in a
directory holding the submission as submission.py.

Everything the student's code can touch lives in this process and dies with it: patching
numpy, TVM or the clock here cannot reach the process that checks and times. What leaves is
the schedule's trace, which the trusted side validates and replays on its own copy, or why
there is none: messages.StudentStarted before the student's code runs, then one
messages.StudentReport (which the student's code could forge: the parent trusts no field of it).
"""
from __future__ import annotations

import re
import sys

from . import submission_child

SUBMISSION = "submission.py"

# Imported before the student's code runs: afterwards Landlock lets it read the interpreter's
# files, but a module imported from them then is the student's own business (and time).
PREIMPORTED = (
    "bisect", "cmath", "collections", "contextlib", "copy", "dataclasses", "datetime", "decimal",
    "enum", "fractions", "functools", "heapq", "html", "inspect", "itertools", "json", "math",
    "numbers", "operator", "pprint", "random", "re", "statistics", "string", "textwrap", "typing",
    "warnings", "numpy", "tvm", "tvm.s_tir", "tvm.tirx",
    # A notebook's answer cell may import the course's own helpers (and is graded as written).
    "autograder", "autograder.engine.report", "autograder.notebook_api",
)


GRADED_ALONE = (
    "\n(your schedule is graded alone, in a fresh process: a name that only another cell of your notebook "
    "defines, or that only your kernel has, is not there. Define {name} in the schedule cell, or move "
    "the line that uses it to another cell)"
)


def student_frames(error: BaseException) -> list[str]:
    """Where in the student's own file the error came from, innermost last."""
    return submission_child.student_frames(error, SUBMISSION)


def student_traceback(error: BaseException) -> str:
    """The error as the student should see it: their own frames and the exception text."""
    return submission_child.student_traceback(error, SUBMISSION)


def schedule_error_text(error: BaseException) -> str:
    """TVM's explanation of a failed primitive, without the IR dump and C++ stack around it."""
    text = str(error)
    primitive = re.search(r"error occurred in the schedule primitive '([^']+)'", text)
    if "Error message:" in text:
        detail = text.split("Error message:", 1)[1].strip()
    else:
        detail = text.strip().splitlines()[-1] if text.strip() else type(error).__name__
    return f"{primitive.group(1)}: {detail}" if primitive else detail


def main(argv: list[str]) -> None:
    from .messages import StudentReport, StudentStarted

    # Behind every timing on the machine (engine/priority.py): a schedule() that spins for its
    # whole limit must not stretch another student's timing. Then a world of its own, the channel,
    # the submission read (submission_child.py: the start every child running a submission shares).
    child = submission_child.SubmissionChild(argv[0], int(argv[4]), SUBMISSION)
    send, leave = child.send, submission_child.leave
    problem_name, shape_spec, memory_mb = argv[1], argv[2], int(argv[3])

    from tvm import s_tir

    from ..problems import get_problem
    from ..problems.workload import ConvShape
    from .replay import trace_to_json

    schedule = s_tir.Schedule(get_problem(problem_name).with_shape(ConvShape.from_spec(shape_spec)).workload())
    send(StudentStarted(child.confine(PREIMPORTED, memory_mb)).to_wire())

    try:
        namespace = child.run("submission")
        student_schedule = namespace.get("schedule")
        if not callable(student_schedule):
            send(StudentReport("missing", "the submission does not define a function schedule(sch)").to_wire())
            leave()
        student_schedule(schedule)
    except MemoryError:
        send(StudentReport("memory", "your code ran out of memory (the grader's memory limit)").to_wire())
        leave()
    except s_tir.ScheduleError as error:
        send(StudentReport("schedule_error", schedule_error_text(error), where=tuple(student_frames(error))).to_wire())
        leave()
    except ImportError as error:
        note = (
            f"\n(the grader's sandbox could not import {error.name!r}; modules a schedule can rely on: "
            f"{', '.join(PREIMPORTED)})"
        )
        send(StudentReport("exception", student_traceback(error) + note, import_error=error.name).to_wire())
        leave()
    except NameError as error:  # most often a name that only another cell of the notebook defines
        missing = repr(error.name) if getattr(error, "name", None) else "that name"
        send(StudentReport("exception", student_traceback(error) + GRADED_ALONE.format(name=missing)).to_wire())
        leave()
    except BaseException as error:  # SystemExit and KeyboardInterrupt too: the student's code raised them
        send(StudentReport("exception", student_traceback(error)).to_wire())
        leave()

    try:
        trace = trace_to_json(schedule.trace)
    except Exception as error:  # the student's code broke the schedule object itself
        send(StudentReport("exception", f"could not read the schedule's trace: {error}").to_wire())
        leave()
    send(StudentReport("trace", trace=trace).to_wire())
    leave()


if __name__ == "__main__":
    main(sys.argv[1:])
