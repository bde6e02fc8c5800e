"""replay.py: the allow-list (no TVM needed) and replaying a real trace."""
from __future__ import annotations

import json

import pytest

from autograder import examples
from autograder.engine.replay import ALLOWED_KINDS, REFUSED_KINDS, TraceRejected, validate_trace


def inst(kind, inputs=(), attrs=(), outputs=()):
    return [kind, list(inputs), list(attrs), list(outputs)]


def test_every_listed_kind_is_a_real_tvm_instruction():
    from tvm.s_tir.schedule import InstructionKind

    for kind in sorted(ALLOWED_KINDS | set(REFUSED_KINDS)):
        assert InstructionKind.get(kind).name == kind


def test_a_plain_trace_is_accepted_and_summarised():
    trace = [[inst("GetSBlock", [], ["conv2d_nchw", "main"], ["b0"]), inst("GetLoops", ["b0"], [], ["l1"])], []]
    summary = validate_trace(trace)
    assert summary.instructions == 2
    assert summary.kinds == ("GetSBlock", "GetLoops")


@pytest.mark.parametrize(
    "kind, expected",
    [("UnsafeSetDType", "unsafe_set_dtype is not allowed"), ("UnsafeHideBufferAccess", "unsafe_hide_buffer_access is not allowed")],
)
def test_unsafe_primitives_are_refused_by_their_python_name(kind, expected):
    with pytest.raises(TraceRejected, match=expected):
        validate_trace([[inst(kind)], []])


def test_an_unknown_kind_is_refused_and_the_allowed_ones_are_listed():
    with pytest.raises(TraceRejected, match=r"my_primitive is not one of .*reverse_compute_at"):
        validate_trace([[inst("MyPrimitive")], []])


def test_annotations_that_inject_code_are_refused():
    with pytest.raises(TraceRejected, match="pragma_import_c"):
        validate_trace([[inst("Annotate", ["b0", "\"int x;\""], ["pragma_import_c"])], []])
    validate_trace([[inst("Annotate", ["l1", 16], ["pragma_auto_unroll_max_step"])], []])


def test_bind_only_to_gpu_thread_axes():
    with pytest.raises(TraceRejected, match="not a GPU thread axis"):
        validate_trace([[inst("Bind", ["l1"], ["pipeline"])], []])
    validate_trace([[inst("Bind", ["l1"], ["threadIdx.x"])], []])


@pytest.mark.parametrize("trace", [None, {}, [[], [], []], [[["Split"]], []], [[], [["x", 1]]], "[]"])
def test_malformed_traces_are_rejected_not_crashed_on(trace):
    with pytest.raises(TraceRejected, match="malformed"):
        validate_trace(trace)


def test_overlong_traces_are_rejected():
    with pytest.raises(TraceRejected, match="at most"):
        validate_trace([[inst("GetSBlock", [], ["compute", "main"], [f"b{i}"]) for i in range(1001)], []])


def journal_trace():
    from tvm import s_tir

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import trace_to_json

    schedule = s_tir.Schedule(fused_primfunc())
    namespace: dict = {}
    exec(examples.source("journal"), namespace)
    namespace["schedule"](schedule)
    return schedule, trace_to_json(schedule.trace)


def test_a_trace_survives_json_and_replays_to_the_same_program():
    import tvm

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import replay

    original, trace = journal_trace()
    trace = json.loads(json.dumps(trace))  # what travels between processes
    validate_trace(trace)
    replayed = replay(fused_primfunc(), trace)
    tvm.ir.assert_structural_equal(replayed.mod["main"], original.mod["main"])


def test_a_trace_naming_a_missing_block_fails_to_replay_with_tvms_reason():
    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import replay

    trace = [[inst("GetSBlock", [], ["conv2d_nhwc", "main"], ["b0"])], []]
    validate_trace(trace)
    with pytest.raises(Exception, match="conv2d_nhwc"):
        replay(fused_primfunc(), trace)


@pytest.mark.parametrize(
    "trace",
    [
        [[inst("Annotate", ["l1", 16], [["pragma_auto_unroll_max_step"]])], []],  # unhashable key
        [[inst("Bind", ["l1"], [{"axis": "threadIdx.x"}])], []],
        [[["Split", "l1", [], []]], []],  # inputs not a list
        [[inst("Split", [[[[["l1"]]]]])], []],  # nested deeper than any real trace
        [[inst("GetLoops", [{"b0": 1}])], []],
        [[], [[0, [[[[1]]]]]]],
    ],
)
def test_hostile_shapes_are_rejected_without_crashing_the_checker(trace):
    with pytest.raises(TraceRejected):
        validate_trace(trace)


def test_every_example_schedule_trace_passes_the_shape_checks():
    from tvm import s_tir

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import trace_to_json

    for name in examples.names():
        schedule = s_tir.Schedule(fused_primfunc())
        namespace: dict = {}
        exec(examples.source(name), namespace)
        namespace["schedule"](schedule)
        validate_trace(json.loads(json.dumps(trace_to_json(schedule.trace))))
