"""What a student's trace may contain, and replaying it on a freshly built workload.

TensorIR's schedule primitives keep a program's meaning (they reject a transformation they
cannot prove safe); the few that can change it, or that reach outside the loop nest, are not
on the list below. So a trace that passes `validate_trace` and replays cleanly computes the
same function as the workload, however the student's code was written or what it patched.
`validate_trace` is plain Python (no TVM), so the untrusted JSON is checked before TVM sees it.
"""
from __future__ import annotations

from dataclasses import dataclass

ALLOWED_KINDS = frozenset(
    {
        # Look-ups
        "GetSBlock", "GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers", "GetOutputBlocks",
        # Loop transformations
        "Split", "Fuse", "Merge", "Reorder", "AddUnitLoop", "ReorderBlockIterVar", "LoopPartition",
        "Parallel", "Vectorize", "Unroll", "Bind",
        # Where blocks are computed
        "ComputeAt", "ReverseComputeAt", "ComputeInline", "ReverseComputeInline",
        "DecomposeReduction", "DecomposePadding", "RFactor",
        # Memory
        "CacheRead", "CacheWrite", "ReindexCacheRead", "ReindexCacheWrite", "SetScope", "StorageAlign",
        "Annotate", "Unannotate",
        # Sampling (design spaces), as MetaSchedule traces contain
        "SamplePerfectTile", "SamplePartitionedTile", "SampleCategorical", "SampleComputeLocation",
        "EnterPostproc",
    }
)

# Why the rest are refused, for the message a student sees.
REFUSED_KINDS = {
    "UnsafeSetDType": "unsafe_set_dtype changes what the program computes",
    "UnsafeHideBufferAccess": "unsafe_hide_buffer_access hides accesses from TVM's safety checks",
    "AnnotateBufferAccess": "annotate_buffer_access overrides the accesses TVM's safety checks rely on",
    "TransformLayout": "transform_layout can change the function's interface; the exercise keeps layouts",
    "TransformBlockLayout": "transform_block_layout is outside this exercise",
    "Tensorize": "tensorize is outside this exercise",
    "Blockize": "blockize is outside this exercise",
}

# Annotations the compiler acts on that cannot change results.
ALLOWED_ANNOTATIONS = frozenset({"pragma_auto_unroll_max_step", "pragma_unroll_explicit"})

ALLOWED_THREAD_AXES = frozenset(
    f"{kind}.{axis}" for kind in ("blockIdx", "threadIdx", "vthread") for axis in "xyz"
)

MAX_INSTRUCTIONS = 1000
# Lists inside an instruction nest at most this deep in real traces (CacheRead's consumer list,
# a decision's factors); deeper nesting only serves to stress TVM's JSON reader.
MAX_NESTING = 3


class TraceRejected(ValueError):
    """The trace uses something the grader does not allow; the message says what and why."""


@dataclass(frozen=True)
class TraceSummary:
    instructions: int
    kinds: tuple[str, ...]  # distinct kinds used, in order of first use


def validate_trace(trace: object) -> TraceSummary:
    """Check the JSON shape and every instruction kind; raise TraceRejected with a reason."""
    if not (isinstance(trace, list) and len(trace) == 2 and all(isinstance(p, list) for p in trace)):
        raise TraceRejected("the schedule's trace is malformed (expected [instructions, decisions])")
    instructions, decisions = trace
    if len(instructions) > MAX_INSTRUCTIONS:
        raise TraceRejected(f"the schedule has {len(instructions)} instructions; at most {MAX_INSTRUCTIONS} are allowed")
    kinds: list[str] = []
    for index, inst in enumerate(instructions):
        if not (
            isinstance(inst, list)
            and len(inst) == 4
            and isinstance(inst[0], str)
            and all(isinstance(part, list) and _plain_json(part, MAX_NESTING) for part in inst[1:])
        ):
            raise TraceRejected(f"instruction {index} of the trace is malformed")
        kind, inputs, attrs, _outputs = inst
        if kind in REFUSED_KINDS:
            raise TraceRejected(f"{_primitive_name(kind)} is not allowed: {REFUSED_KINDS[kind]}")
        if kind not in ALLOWED_KINDS:
            raise TraceRejected(
                f"{_primitive_name(kind)} is not one of the primitives this exercise allows "
                f"({', '.join(sorted(_primitive_name(k) for k in ALLOWED_KINDS))})"
            )
        if kind == "Annotate":
            key = attrs[0] if attrs else None
            if not isinstance(key, str) or key not in ALLOWED_ANNOTATIONS:
                raise TraceRejected(
                    f"annotation {key!r} is not allowed; allowed annotations: {', '.join(sorted(ALLOWED_ANNOTATIONS))}"
                )
        if kind == "Bind":
            axis = attrs[0] if attrs else None
            if not isinstance(axis, str) or axis not in ALLOWED_THREAD_AXES:
                raise TraceRejected(f"bind to {axis!r} is not a GPU thread axis ({', '.join(sorted(ALLOWED_THREAD_AXES))})")
        if kind not in kinds:
            kinds.append(kind)
    for decision in decisions:
        if not (isinstance(decision, list) and len(decision) == 2 and isinstance(decision[0], int) and _plain_json(decision, MAX_NESTING)):
            raise TraceRejected("a sampling decision in the trace is malformed")
    return TraceSummary(instructions=len(instructions), kinds=tuple(kinds))


def _plain_json(value, depth: int) -> bool:
    """Scalars, or lists of them nested at most `depth` deep."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return True
    if isinstance(value, list) and depth > 0:
        return all(_plain_json(v, depth - 1) for v in value)
    return False


def _primitive_name(kind: str) -> str:
    """'ReverseComputeAt' -> 'reverse_compute_at', the name students call."""
    special = {"GetSBlock": "get_sblock", "RFactor": "rfactor", "UnsafeSetDType": "unsafe_set_dtype"}
    if kind in special:
        return special[kind]
    out = []
    for i, ch in enumerate(kind):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


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


def replay(func, trace_json: list):
    """A new Schedule of `func` with the trace applied; TVM's ScheduleError explains failures."""
    from tvm import s_tir

    schedule = s_tir.Schedule(func)
    s_tir.Trace.apply_json_to_schedule(trace_json, schedule)
    return schedule
