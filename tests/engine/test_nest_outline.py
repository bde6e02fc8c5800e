"""nest_outline.py: what a schedule does, the same on every student's variant and whatever
instructions that change nothing surround it; different schedules differ."""
from __future__ import annotations

import json

import pytest

from autograder.engine.nest_outline import default_factors, outline_function, schedule_outline
from autograder.engine.replay import replay, trace_to_json
from autograder.problems import get_problem
from autograder.problems.workload import ConvShape

VARIANT = ConvShape(height=192, width=160, out_channels=8)


def journal_with_literal_factors(sch):
    """The journal's tiling written for the workload at hand, each split's factors spelt out."""
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, *_ = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[int(sch.get(yy).extent) // 16, 16])
    x_outer, x_inner = sch.split(xx, factors=[int(sch.get(xx).extent) // 16, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)


def graded(problem, function):
    """As the evaluator has it: the trace as JSON, replayed on the problem's own workload."""
    from tvm import s_tir

    schedule = s_tir.Schedule(problem.workload())
    function(schedule)
    trace = json.loads(json.dumps(trace_to_json(schedule.trace)))
    return trace, replay(problem.workload(), trace, problem.target)


@pytest.fixture(scope="module")
def problem():
    return get_problem("tile-fused-conv")


def test_a_copy_on_another_variant_reads_as_on_the_default_workload(problem):
    on_default = schedule_outline(problem, *graded(problem, journal_with_literal_factors))
    variant = problem.with_shape(VARIANT)
    on_variant = schedule_outline(variant, *graded(variant, journal_with_literal_factors))
    assert on_variant == on_default
    assert "  for d1 in 14" in on_default and "    for d2 in 14" in on_default  # 224 / 16 tiles, whatever the variant's
    assert any(line.strip().startswith("block conv2d_nchw: ") and "v_xx=d2 * 16 + d4" in line for line in on_default)


def test_a_split_whose_outer_factor_the_schedule_fixes_keeps_it(problem):
    trace = [[["GetSBlock", [], ["T_add", "main"], ["b0"]], ["GetLoops", ["b0"], [], ["l1", "l2", "l3", "l4"]],
              ["Split", ["l4", 10, 16], [True, False], ["l5", "l6"]], ["Split", ["l3", 12, "None"], [True, False], ["l7", "l8"]]], []]
    [*_, (_, given, _, _), (_, fixed, _, _)] = default_factors(trace)[0]
    assert given == ["l4", "None", 16] and fixed == ["l3", 12, "None"]


def test_a_sampled_tiling_reads_as_the_split_it_decided_on_every_variant(problem):
    """A sampled tiling's decision fits only the extent it was sampled on (on another, TVM would
    draw a new one): its factors are taken as given, so [10, 16] sampled on 160 pixels reads as
    split(..., [None, 16]), the same on the default workload every time."""
    variant = problem.with_shape(VARIANT)

    def sampled(sch):
        loops = sch.get_loops(sch.get_sblock("T_add"))
        sch.split(loops[3], sch.sample_perfect_tile(loops[3], n=2, decision=[10, 16]))
        sch.sample_perfect_tile(loops[2], n=2, decision=[12, 16])  # one nothing uses: dropped

    def given(sch):
        loops = sch.get_loops(sch.get_sblock("T_add"))
        sch.split(loops[3], [None, 16])

    on_variant = schedule_outline(variant, *graded(variant, sampled))
    assert on_variant == schedule_outline(problem, *graded(problem, given))
    assert "    for d2 in 14" in on_variant  # 224 / 16 on the default workload
    trace, _ = graded(variant, sampled)
    instructions, decisions = default_factors(trace)
    assert [kind for kind, *_ in instructions] == ["GetSBlock", "GetLoops", "Split"] and decisions == []


def test_different_schedules_differ(problem):
    from autograder.lessons import schedules

    shown = [schedules.journal_steps(step) for step in range(5)] + [schedules.journal_with_vectorized_tail, schedules.pad_inlined]
    outlines = [tuple(outline_function(schedules.apply(problem.workload(), function).mod["main"])) for function in shown]
    assert len(set(outlines)) == len(outlines)
    unscheduled = outlines[0]
    assert unscheduled[0] == "alloc pad_temp 1x3x226x226 global" and len(unscheduled) <= 64
