"""trace_schema.py: every field of every instruction typed; what is not declared is rejected.

The attacks here are payloads an allowed primitive can carry (an expression graph with a
call in it, a string TVM would parse as an object, an unsafe flag, a loop nest deep enough to
exhaust a walk), built by hand and by real TVM. Each is rejected before TVM sees it.
"""
from __future__ import annotations

import json

import pytest

from autograder.engine.trace_schema import (
    ANNOTATIONS,
    MAX_NEW_LOOPS,
    REFUSED_KINDS,
    SCHEMAS,
    TraceRejected,
    replayable,
    validate_trace,
)

from . import tuned_trace


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


def _traced(source: str) -> list:
    """The JSON trace of `source`'s schedule(sch) on the course's workload, as the grader gets it."""
    from tvm import s_tir

    from autograder.engine.replay import trace_to_json
    from autograder.problems.workload import fused_primfunc

    namespace: dict = {}
    exec(compile(source, "submission.py", "exec"), namespace)
    schedule = s_tir.Schedule(fused_primfunc())
    namespace["schedule"](schedule)
    return json.loads(json.dumps(trace_to_json(schedule.trace)))


def test_a_trace_metaschedule_printed_is_accepted_as_pasted_with_its_hints():
    recorded = _traced(tuned_trace.submission())
    summary = validate_trace(recorded)
    assert summary.dropped == () and {"Annotate", "Unannotate", "EnterPostproc", "SampleCategorical"} <= set(summary.kinds)
    hints = {i[2][0] for i in recorded[0] if i[0] == "Annotate"}
    assert {"meta_schedule.tiling_structure", "meta_schedule.unroll_explicit", "meta_schedule.parallel"} <= hints
    assert replayable(recorded) == recorded


HINT = "meta_schedule.tiling_structure"


@pytest.mark.parametrize(
    "key, value",
    [
        (HINT, '"SSRSRS\\"; system(\\"id\\")"'),  # a string that is not only S and R
        (HINT, "SSRSRS"),  # unquoted: TVM would look it up as a variable's name
        (HINT, '{"root_index": 0, "nodes": [{"type": "None"}]}'),  # an object TVM would parse
        (HINT, 3),
        ("meta_schedule.parallel", '"16"'),
        ("meta_schedule.parallel", 0),
        ("meta_schedule.vectorize", 1.5),
        ("meta_schedule.unroll_explicit", "v99"),  # a variable nobody defined
        ("meta_schedule.unroll_explicit", "l4"),  # a loop, not a sampled value
        ("meta_schedule.unroll_explicit", 10**6),
        ("meta_schedule.cooperative_fetch", [4]),
        ("meta_schedule.random_compute_producer", 2),
        ("meta_schedule.thread_extent_low_inclusive", {"x": 1}),
    ],
)
def test_a_tuning_hints_value_is_typed_by_its_key(key, value):
    assert rejected(trace(inst("Annotate", ["b0", value], [key]))).startswith("instruction 2 (annotate): input 1 (value)")


def test_tuning_hints_are_accepted_with_plain_values_and_unannotated():
    sample = inst("SampleCategorical", [], [[0, 16, 64], [0.25, 0.25, 0.5]], ["v8"])
    summary = validate_trace(trace(
        inst("Annotate", ["b0", '"SSRSRS"'], [HINT]),
        sample,
        inst("Annotate", ["b0", "v8"], ["meta_schedule.unroll_explicit"]),
        inst("Annotate", ["l4", 4], ["meta_schedule.cooperative_fetch"]),
        inst("Unannotate", ["b0"], [HINT]),
        decisions=[[3, 1]],
    ))
    assert summary.dropped == ()
    assert "key" in rejected(trace(inst("Annotate", ["b0", 1], ["pragma_import_c"])))  # not a hint: refused
    assert "key" in rejected(trace(inst("Unannotate", ["b0"], ["pragma_import_c"])))


def test_hints_that_could_change_the_computation_are_dropped_with_a_note_and_never_reach_tvm():
    payload = '{"root_index": 0, "nodes": [{"type": "None"}]}'
    hinted = trace(
        inst("Annotate", ["b0", '"dot_16x4_vnni"'], ["meta_schedule.auto_tensorize"]),
        inst("SampleCategorical", [], [[1, 2], [0.5, 0.5]], ["v8"]),
        inst("Annotate", ["b0", payload], ["meta_schedule.layout_rewrite_preproc"]),  # its value is never read
        inst("Annotate", ["l4", 1], ["meta_schedule.some_future_hint"]),
        inst("Unannotate", ["b0"], ["meta_schedule.auto_tensorize"]),
        inst("Split", ["l4", "None", "v8"], [True, False], ["l9", "l10"]),
        decisions=[[3, 1]],
    )
    summary = validate_trace(hinted)
    assert len(summary.dropped) == 4
    assert "instruction 2 (annotate of the tuning hint 'meta_schedule.auto_tensorize')" in summary.dropped[0]
    assert "tensor intrinsic" in summary.dropped[0] and "does not know it" in summary.dropped[2]
    plain = trace(inst("SampleCategorical", [], [[1, 2], [0.5, 0.5]], ["v8"]),
                  inst("Split", ["l4", "None", "v8"], [True, False], ["l9", "l10"]), decisions=[[2, 1]])
    assert replayable(hinted) == plain
    assert payload not in json.dumps(replayable(hinted))
    # A dropped hint still names a block or loop that exists, and defines nothing.
    assert "block_or_loop" in rejected(trace(inst("Annotate", ["b9", 1], ["meta_schedule.auto_tensorize"])))
    assert "outputs" in rejected(trace(inst("Annotate", ["b0", 1], ["meta_schedule.auto_tensorize"], ["v8"])))
    # Replayed by real TVM: the same program as without the dropped lines.
    from autograder.engine.replay import replay
    from autograder.problems.workload import fused_primfunc

    import tvm

    func = fused_primfunc()
    tvm.ir.assert_structural_equal(replay(func, hinted).mod, replay(func, plain).mod)


def test_the_accepted_hints_compile_to_the_same_code_as_without_them():
    """What makes a hint harmless: tvm.compile without MetaSchedule's post-processors ignores it,
    on blocks and on loops alike (the LLVM IR is the same, but for the addresses in its names)."""
    import re

    import tvm
    from tvm import s_tir

    from autograder.problems.workload import fused_primfunc

    values = {"meta_schedule.tiling_structure": "SSRSRS", "meta_schedule.random_compute_producer": 1}

    def llvm_ir(annotate: bool) -> str:
        sch = s_tir.Schedule(fused_primfunc())
        conv = sch.get_sblock("conv2d_nchw")
        loops = sch.get_loops(conv)
        outer, inner = sch.split(loops[2], [None, 16])
        if annotate:
            sampled = sch.sample_categorical([0, 16, 64], [0.25, 0.25, 0.5], decision=2)
            for key in ANNOTATIONS:
                if key.startswith("meta_schedule."):
                    for where in (sch.get_sblock("root"), conv, outer, inner):
                        sch.annotate(where, key, values.get(key, sampled if "unroll" in key else 16))
            assert "meta_schedule.cooperative_fetch" in sch.mod.script()
        source = tvm.compile(sch.mod, target=tvm.target.Target("llvm")).mod.inspect_source("ll")
        return re.sub(r"0x[0-9a-f]+", "0x", source)

    assert llvm_ir(True) == llvm_ir(False)


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


# ---- a GPU schedule as MetaSchedule prints it: software pipelining, cooperative fetches --------

def _gpu_traced(source: str) -> list:
    from tvm import s_tir

    from autograder.engine.replay import trace_to_json
    from autograder.problems import get_problem

    namespace: dict = {}
    exec(compile(source, "submission.py", "exec"), namespace)
    schedule = s_tir.Schedule(get_problem("gpu-fused-conv").workload())
    namespace["schedule"](schedule)
    return json.loads(json.dumps(trace_to_json(schedule.trace)))


def test_a_gpu_design_space_metaschedule_printed_is_accepted_with_its_software_pipeline():
    recorded = _gpu_traced(tuned_trace.submission(tuned_trace.GPU_DESIGN_SPACE))
    summary = validate_trace(recorded, "cuda")
    keys = {i[2][0] for i in recorded[0] if i[0] == "Annotate"}
    assert {"software_pipeline_stage", "software_pipeline_order", "software_pipeline_async_stages",
            "meta_schedule.cooperative_fetch"} <= keys
    assert summary.dropped == () and replayable(recorded) == recorded
    # never post-processed: its cooperative fetches are not bound to threads, and the note says how to
    (note,) = summary.notes
    assert "'meta_schedule.cooperative_fetch') kept, and doing nothing here" in note and "threadIdx.x" in note


@pytest.mark.parametrize("key", ["software_pipeline_stage", "software_pipeline_order", "software_pipeline_async_stages"])
@pytest.mark.parametrize("value", [[0, 0, 9**9], [-1], [], '"0, 0, 2"', '{"root_index": 0, "nodes": [{"type": "None"}]}', [0.5], 3])
def test_a_software_pipelines_values_are_small_integer_lists(key, value):
    message = rejected(trace(inst("Annotate", ["l4", value], [key])), "cuda")
    assert message.startswith("instruction 2 (annotate): input 1 (value) must be a list of")


def test_a_pipeline_tvm_cannot_lower_safely_is_the_students_error_with_tvms_reason(fast_config):
    """TVM checks the annotation against the loop it pipelines: a stage list of the wrong length,
    or stages that would read a fetch before it is made, is refused when the schedule is lowered."""
    from autograder.engine.pipeline import grade_source

    source = tuned_trace.submission(tuned_trace.GPU_DESIGN_SPACE)
    for wrong, why in (("ann_val=[0, 0, 2]", "ann_val=[0, 0]"), ("ann_val=[0, 0, 2]", "ann_val=[2, 2, 0]")):
        result = grade_source("gpu-fused-conv", source.replace(*((wrong, why))), fast_config)
        assert result.status in ("error", "rejected") and result.score == 0 and not result.grader_fault, result.to_text()


@pytest.mark.opencl
def test_a_gpu_design_space_metaschedule_printed_grades_correct_on_the_opencl_device(fast_config):
    from autograder.engine.pipeline import grade_source
    from autograder.engine.runners import gpu_present

    if gpu_present():
        pytest.skip("a GPU is present: there the kernels run on it")
    result = grade_source("gpu-fused-conv", tuned_trace.submission(tuned_trace.GPU_DESIGN_SPACE), fast_config)
    assert result.status == "needs-gpu" and result.correct is True, result.to_text()
    assert any("cooperative_fetch') kept, and doing nothing here" in m for m in result.messages)


def test_a_refused_annotation_says_which_line_to_remove_and_what_the_schedule_loses():
    message = rejected(trace(inst("Annotate", ["l4", 1], ["pragma_import_c"])))
    assert message.startswith("instruction 2 (annotate): the annotation 'pragma_import_c' is not one this grader accepts")
    assert 'Remove the line sch.annotate(block_or_loop=l4, ann_key="pragma_import_c", ann_val=...)' in message
    assert "links C source into the build" in message and "software_pipeline_stage" in message
    unknown = rejected(trace(inst("Unannotate", ["b0"], ["some_pass_hint"])))
    assert 'Remove the line sch.unannotate(block_or_loop=b0, ann_key="some_pass_hint")' in unknown
    assert "without it the schedule computes the same" in unknown
