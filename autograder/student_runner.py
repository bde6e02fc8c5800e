"""Child process: run a student's `schedule(sch)` on a fresh workload and send back its trace.

Usage (by the grader only): python -m autograder.student_runner FD PROBLEM SOURCE_FILE MEMORY_MB

Everything the student's code can touch lives in this process and dies with it: patching
numpy, TVM or the clock here cannot reach the process that checks and times. What leaves is
the schedule's trace, which the trusted side validates and replays on its own copy.
"""
from __future__ import annotations

import linecache
import os
import re
import sys
import traceback

SUBMISSION = "submission.py"


def student_frames(error: BaseException) -> list[str]:
    """Where in the student's own file the error came from, innermost last."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename == SUBMISSION]
    return [f"line {f.lineno}, in {f.name}: {f.line}" for f in frames[-3:]]


def student_traceback(error: BaseException) -> str:
    """The error as the student should see it: their own frames and the exception text."""
    detail = "".join(traceback.format_exception_only(type(error), error)).strip()
    return "\n".join(student_frames(error) + [detail])


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
    from .sandbox import limit_memory, open_channel

    send = open_channel(argv[0])
    problem_name, source_path, memory_mb = argv[1], argv[2], int(argv[3])
    source = open(source_path, encoding="utf-8").read()
    os.unlink(source_path)  # the student's code has no business reading the file back

    from tvm import s_tir

    from .problems import get_problem
    from .replay import trace_to_json

    schedule = s_tir.Schedule(get_problem(problem_name).workload())
    limit_memory(memory_mb)
    send({"kind": "stage", "stage": "student"})

    namespace = {"__name__": "submission", "__file__": SUBMISSION}
    # So tracebacks can quote the student's lines: the file itself is gone.
    linecache.cache[SUBMISSION] = (len(source), None, source.splitlines(True), SUBMISSION)
    try:
        exec(compile(source, SUBMISSION, "exec"), namespace)
        student_schedule = namespace.get("schedule")
        if not callable(student_schedule):
            send({"kind": "missing", "message": "the submission does not define a function schedule(sch)"})
            os._exit(0)
        student_schedule(schedule)
    except MemoryError:
        send({"kind": "memory", "message": "your code ran out of memory (the grader's memory limit)"})
        os._exit(0)
    except s_tir.ScheduleError as error:
        send({"kind": "schedule_error", "message": schedule_error_text(error), "where": student_frames(error)})
        os._exit(0)
    except BaseException as error:  # SystemExit and KeyboardInterrupt too: the student's code raised them
        send({"kind": "exception", "message": student_traceback(error)})
        os._exit(0)

    try:
        trace = trace_to_json(schedule.trace)
    except Exception as error:  # the student's code broke the schedule object itself
        send({"kind": "exception", "message": f"could not read the schedule's trace: {error}"})
        os._exit(0)
    sys.stdout.flush()
    send({"kind": "trace", "trace": trace})
    # Leave at once: threads the student started must not keep the grader waiting.
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1:])
