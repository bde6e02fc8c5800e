"""A schedule's trace as plain JSON, and replaying one on a freshly built workload.

Replay is for traces that `trace_schema.validate_trace` accepted: TensorIR's primitives keep
a program's meaning (they reject a transformation they cannot prove safe) as long as their
inputs are plain, which is what the schema makes sure of before TVM parses anything.
"""
from __future__ import annotations


def trace_to_json(trace) -> list:
    """A schedule's trace as plain JSON (TVM leaves IntImm objects among the attributes)."""
    return _plain(trace.as_json())


def _plain(value):
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    kind = type(value).__name__
    if kind == "IntImm":
        return int(value.value)
    if kind == "FloatImm":
        return float(value.value)
    if isinstance(value, (list, tuple)) or type(value).__name__ == "Array":
        return [_plain(v) for v in value]
    return str(value)


def replay(func, trace_json: list, target: str = "cpu"):
    """A new Schedule of `func` with the trace applied; TVM's ScheduleError explains failures.

    The trace is checked against the schema here too, so no caller can hand TVM's parser an
    unchecked one (TraceRejected says what is wrong); the tuning hints the schema drops
    (`trace_schema.DROPPED_HINTS`) are left out of what TVM replays.
    """
    from tvm import s_tir

    from .trace_schema import replayable, validate_trace

    validate_trace(trace_json, target)
    schedule = s_tir.Schedule(func)
    s_tir.Trace.apply_json_to_schedule(replayable(trace_json), schedule)
    return schedule
