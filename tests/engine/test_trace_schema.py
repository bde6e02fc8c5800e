"""trace_schema.py: every field of every instruction typed; what is not declared is rejected.

The attacks here are payloads an allowed primitive can carry (an expression graph with a
call in it, a string TVM would parse as an object, an unsafe flag, a loop nest deep enough to
exhaust a walk), built by hand and by real TVM. Each is rejected before TVM sees it.
"""
from __future__ import annotations

import json

import pytest

from autograder.engine.trace_schema import (
    MAX_NEW_LOOPS,
    REFUSED_KINDS,
    SCHEMAS,
    TraceRejected,
    validate_trace,
)


def inst(kind, inputs=(), attrs=(), outputs=()):
    return [kind, list(inputs), list(attrs), list(outputs)]


CONV = inst("GetSBlock", [], ["conv2d_nchw", "main"], ["b0"])
LOOPS = inst("GetLoops", ["b0"], [], ["l1", "l2", "l3", "l4", "l5", "l6", "l7"])


def trace(*instructions, decisions=()):
    return [[CONV, LOOPS, *instructions], list(decisions)]


def rejected(trace_json, target="cpu") -> str:
    with pytest.raises(TraceRejected) as caught:
        validate_trace(trace_json, target)
    return str(caught.value)


def test_every_declared_kind_is_a_real_tvm_instruction():
    from tvm.s_tir.schedule import InstructionKind

    for kind in sorted(set(SCHEMAS) | set(REFUSED_KINDS)):
        assert InstructionKind.get(kind).name == kind


def test_a_plain_trace_is_accepted_and_summarised():
    summary = validate_trace(trace(inst("Split", ["l4", "None", 16], [True, False], ["l8", "l9"])))
    assert summary.instructions == 3
    assert summary.kinds == ("GetSBlock", "GetLoops", "Split")


# What real TVM writes for each allowed primitive must pass: the schema follows TVM's format.
def _every_primitive(sch):
    conv = sch.get_sblock("conv2d_nchw")
    n, f, y, x, rc, ry, rx = sch.get_loops(conv)
    tile = sch.sample_perfect_tile(x, n=2)
    xo, xi = sch.split(x, tile)
    yo, yi = sch.split(y, [None, 16], preserve_unit_iters=False)
    sch.reorder(yo, xo, yi, xi)
    sch.sample_categorical([1, 2, 4], [0.25, 0.25, 0.5])
    sch.sample_compute_location(sch.get_sblock("pad_temp"))
    sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
    sch.reverse_compute_at(sch.get_sblock("compute"), xo, preserve_unit_loops=True)
    sch.compute_at(sch.get_sblock("pad_temp"), xo)
    sch.cache_read(conv, 1, "local")
    sch.set_scope(conv, 0, "global")
    sch.storage_align(conv, 0, 1, 16, 1)
    sch.parallel(sch.fuse(n, f))
    sch.vectorize(xi)
    sch.unroll(rx)
    sch.annotate(ry, "pragma_auto_unroll_max_step", 16)
    sch.annotate(ry, "pragma_unroll_explicit", 1)
    sch.unannotate(ry, "pragma_unroll_explicit")
    sch.decompose_reduction(conv, rc)
    sch.get_child_blocks(sch.get_sblock("root"))
    sch.get_producers(conv)
    sch.get_consumers(conv)
    sch.add_unit_loop(sch.get_sblock("compute"))
    sch.enter_postproc()


def test_the_trace_real_tvm_writes_for_every_allowed_primitive_is_accepted():
    from tvm import s_tir

    from autograder.engine.replay import trace_to_json
    from autograder.problems.workload import fused_primfunc

    schedule = s_tir.Schedule(fused_primfunc())
    _every_primitive(schedule)
    recorded = json.loads(json.dumps(trace_to_json(schedule.trace)))
    summary = validate_trace(recorded)
    assert len(summary.kinds) >= 20


def test_an_expression_holding_call_extern_is_rejected_wherever_the_trace_puts_it():
    """The attack that forged PASSED: an input string TVM parses into an expression graph with a
    call_extern("system", ...) in it, compiled into the schedule and run by the grader."""
    import tvm
    from tvm import s_tir, tirx

    from autograder.engine.replay import trace_to_json
    from autograder.problems.workload import fused_primfunc

    call = tvm.ir.save_json(tirx.call_extern("int32", "system", "id > /tmp/pwned"))
    schedule = s_tir.Schedule(fused_primfunc())
    schedule.reindex_cache_read(schedule.get_sblock("conv2d_nchw"), 0, "local",
                                lambda n, f, y, x, rc, ry, rx: (n, rc, y + ry, x + rx))
    index_map = json.loads(json.dumps(trace_to_json(schedule.trace)))
    index_map[0][1][1][1] = call  # the map's JSON string, swapped for the call's
    assert "reindex_cache_read is not allowed" in rejected(index_map)
    assert "factor" in rejected(trace(inst("Split", ["l4", call, 16], [True, False], ["l8", "l9"])))
    assert "value" in rejected(trace(inst("Annotate", ["l4", call], ["pragma_auto_unroll_max_step"])))


@pytest.mark.parametrize(
    "payload",
    [
        '{"root_index": 1, "nodes": [{"type": "None"}, {"type": "tirx.Call", "data": {"op": "tirx.call_extern"}}]}',
        '"int x; system(\\"id\\");"',  # a string literal TVM would make of a quoted input
        "l99",  # a variable nobody defined
        "b0",  # a block where a loop is needed
        -3,
        0,
        1 << 40,
        1.5,
        True,
        [16],
        {"factor": 16},
    ],
)
def test_a_split_factor_is_a_positive_integer_none_or_a_sampled_variable(payload):
    message = rejected(trace(inst("Split", ["l4", payload, 16], [True, False], ["l8", "l9"])))
    assert message.startswith("instruction 2 (split): input 1 (factor)")


def test_every_string_that_tvm_would_parse_as_an_object_is_rejected_wherever_it_appears():
    payload = '{"root_index": 0, "nodes": [{"type": "None"}]}'
    attempts = [
        inst("Annotate", ["l4", payload], ["pragma_auto_unroll_max_step"]),
        inst("Fuse", ["l1", payload], [True], ["l8"]),
        inst("CacheRead", ["b0", [payload]], [0, "local"], ["b8"]),
        inst("ComputeAt", [payload, "l4"], [False, -1]),
        inst("GetSBlock", [], [payload, "main"], ["b8"]),
        inst("SetScope", ["b0"], [0, payload]),
    ]
    for attempt in attempts:
        assert "must" in rejected(trace(attempt))


def test_disable_predication_is_refused_with_the_reason():
    message = rejected(trace(inst("Split", ["l4", "None", 16], [True, True], ["l8", "l9"])))
    assert "disable_predication" in message and "incorrect code" in message


@pytest.mark.parametrize("kind", sorted(REFUSED_KINDS))
def test_refused_primitives_say_why_by_their_python_name(kind):
    message = rejected(trace(inst(kind, ["b0"])))
    assert "is not allowed" in message


def test_an_unknown_kind_is_refused_and_the_allowed_ones_are_listed():
    assert "my_primitive" in rejected(trace(inst("MyPrimitive")))
    assert "reverse_compute_at" in rejected(trace(inst("MyPrimitive")))


def test_only_the_listed_annotations_with_values_in_their_range():
    assert "key" in rejected(trace(inst("Annotate", ["b0", 1], ["pragma_import_c"])))
    assert "value" in rejected(trace(inst("Annotate", ["l4", 5], ["pragma_unroll_explicit"])))
    assert "value" in rejected(trace(inst("Annotate", ["l4", 10**6], ["pragma_auto_unroll_max_step"])))
    validate_trace(trace(inst("Annotate", ["l4", 64], ["pragma_auto_unroll_max_step"])))


def test_an_absurd_storage_alignment_is_rejected_before_it_allocates():
    assert "factor" in rejected(trace(inst("StorageAlign", ["b0"], [0, 1, 1 << 30, 1])))
    assert "offset" in rejected(trace(inst("StorageAlign", ["b0"], [0, 1, 16, 1 << 20])))


def test_bind_is_for_gpu_problems_and_only_to_thread_axes():
    bind = inst("Bind", ["l1"], ["threadIdx.x"])
    assert "compiled for the CPU" in rejected(trace(bind), "cpu")
    validate_trace(trace(bind), "cuda")
    assert "thread_axis" in rejected(trace(inst("Bind", ["l1"], ["pipeline"])), "cuda")


def test_outputs_must_be_fresh_names_of_the_right_kind():
    assert "redefines" in rejected(trace(inst("Split", ["l4", "None", 16], [True, False], ["l8", "l1"])))
    assert "new loop name" in rejected(trace(inst("Split", ["l4", "None", 16], [True, False], ["l8", "b9"])))
    assert "outputs" in rejected(trace(inst("Split", ["l4", "None", 16], [True, False], ["l8"])))


def test_a_trace_that_builds_a_loop_nest_deeper_than_any_schedule_is_rejected():
    """Hundreds of splits nest loops deep enough to exhaust recursive IR walks downstream."""
    instructions, loop = [], "l4"
    for index in range(MAX_NEW_LOOPS):
        outer, inner = f"l{100 + 2 * index}", f"l{101 + 2 * index}"
        instructions.append(inst("Split", [loop, "None", 1], [True, False], [outer, inner]))
        loop = inner
    assert "creates more than" in rejected(trace(*instructions))


def test_decisions_belong_to_sampling_instructions_and_are_typed():
    sample = inst("SamplePerfectTile", ["l4"], [2, 16], ["v8", "v9"])
    validate_trace(trace(sample, decisions=[[2, [14, 16]]]))
    assert "does not belong" in rejected(trace(sample, decisions=[[0, [14, 16]]]))
    assert "decision" in rejected(trace(sample, decisions=[[2, [0, 16]]]))
    assert "does not belong" in rejected(trace(sample, decisions=[[True, [14, 16]]]))


@pytest.mark.parametrize(
    "malformed",
    [None, {}, [[], [], []], [[["Split"]], []], [[], [["x", 1]]], "[]", [[["Split", "l1", [], []]], []]],
)
def test_malformed_traces_are_rejected_not_crashed_on(malformed):
    with pytest.raises(TraceRejected, match="malformed|sampling decisions"):
        validate_trace(malformed)


def test_deeply_nested_values_are_rejected_and_shown_shallowly():
    deep: list = [16]
    for _ in range(10_000):
        deep = [deep]
    message = rejected(trace(inst("Split", ["l4", deep, 16], [True, False], ["l8", "l9"])))
    assert len(message) < 300


def test_overlong_traces_are_rejected():
    many = [inst("GetSBlock", [], ["compute", "main"], [f"b{i}"]) for i in range(1001)]
    assert "at most" in rejected([many, []])
