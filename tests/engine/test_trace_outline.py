"""trace_outline.py: one schedule reads the same on every workload shape; different ones differ.

The traces are real: each schedule is applied by TVM to the workload at the default shape
(224x224, 16 channels) and at a variant's (192x256, 12 channels), as the student's child does.
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from autograder.engine.trace_outline import MAX_CHARS, MAX_LINE_CHARS, MAX_LINES, outline_trace
from autograder.engine.trace_schema import validate_trace
from autograder.problems.workload import ConvShape

SAMPLES = Path(__file__).resolve().parents[2] / "course" / "samples" / "tiling"
VARIANT = ConvShape(height=192, width=256, out_channels=12)


def traced(schedule, shape: ConvShape = ConvShape(), target: str = "cpu") -> list:
    """The trace of `schedule` on the workload of `shape`, as JSON that passed the schema."""
    from tvm import s_tir

    from autograder.engine.replay import trace_to_json
    from autograder.problems.workload import fused_primfunc

    sch = s_tir.Schedule(fused_primfunc(shape))
    schedule(sch)
    trace = json.loads(json.dumps(trace_to_json(sch.trace)))
    validate_trace(trace, target)
    return trace


def outline(schedule, shape: ConvShape = ConvShape(), target: str = "cpu") -> list[str]:
    return outline_trace(traced(schedule, shape, target))


def sample(name: str):
    namespace: dict = {}
    exec(yaml.safe_load((SAMPLES / f"{name}.yaml").read_text())["answers"]["schedule"], namespace)
    return namespace["schedule"]


def journal_with_factors(height: int, width: int, *, lookups_first: bool = False):
    """The journal's tiling with every factor written out for one shape (224 = 14 x 16): what
    a student copying it onto another variant would adapt."""

    def schedule(sch):
        if lookups_first:  # the same instructions, the blocks looked up first, and twice
            sch.get_sblock("T_add"), sch.get_sblock("compute")
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        yo, yi = sch.split(yy, factors=[height // 16, 16])
        xo, xi = sch.split(xx, factors=[width // 16, 16])
        sch.reorder(yo, xo, yi, xi)
        sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
        sch.reverse_compute_at(sch.get_sblock("compute"), xo)

    return schedule


def blocked(channels: int | None, *, marks_reversed: bool = False):
    """ada's register blocking, the channel split written [None, 4] or [channels // 4, 4]."""

    def schedule(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        fo, fi = sch.split(ff, factors=[None if channels is None else channels // 4, 4])
        xo, xi = sch.split(xx, factors=[None, 16])
        sch.reorder(nn, fo, yy, xo, rc, ry, rx, fi, xi)
        sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
        sch.reverse_compute_at(sch.get_sblock("compute"), xo)
        marks = [lambda: sch.vectorize(xi), lambda: sch.unroll(fi), lambda: sch.unroll(rx), lambda: sch.unroll(ry)]
        for mark in reversed(marks) if marks_reversed else marks:
            mark()
        sch.decompose_reduction(conv, rc)
        for name in ("T_add", "compute"):
            sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])

    return schedule


def test_a_copy_adapted_to_another_shape_reads_the_same():
    journal = outline(sample("ben"))
    assert journal == outline(sample("ben"), VARIANT)
    # the outer factor follows from the extent: 14 x 16 on 224, 12 x 16 on 192, 16 x 16 on 256
    assert outline(journal_with_factors(224, 224)) == journal
    assert outline(journal_with_factors(192, 256), VARIANT) == journal
    assert outline(journal_with_factors(192, 256, lookups_first=True), VARIANT) == journal
    assert outline(blocked(16)) == outline(blocked(None)) == outline(blocked(12), VARIANT) == outline(sample("ada"))
    assert outline(blocked(12, marks_reversed=True), VARIANT) == outline(sample("ada"))


def test_the_outline_reads_as_the_schedule_without_tvms_numbering():
    assert outline(sample("ben")) == [
        "split(conv2d_nchw[2], *, 16; 1, 0)",
        "split(conv2d_nchw[3], *, 16; 1, 0)",
        "reorder(conv2d_nchw[2].0, conv2d_nchw[3].0, conv2d_nchw[2].1, conv2d_nchw[3].1)",
        "reverse_compute_at(T_add, conv2d_nchw[3].0; 0, -1)",
        "reverse_compute_at(compute, conv2d_nchw[3].0; 0, -1)",
    ]


def test_different_schedules_differ():
    from autograder.problems.yardsticks import bound_pixels, vectorised_tiles

    def journal_32(sch):  # the journal with 32-pixel rows: a decision of its own
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        yo, yi = sch.split(yy, factors=[None, 16])
        xo, xi = sch.split(xx, factors=[None, 32])
        sch.reorder(yo, xo, yi, xi)
        sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
        sch.reverse_compute_at(sch.get_sblock("compute"), xo)

    def journal_at_inner(sch):  # Add and ReLU computed at another loop
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        yo, yi = sch.split(yy, factors=[None, 16])
        xo, xi = sch.split(xx, factors=[None, 16])
        sch.reorder(yo, xo, yi, xi)
        sch.reverse_compute_at(sch.get_sblock("T_add"), yi)
        sch.reverse_compute_at(sch.get_sblock("compute"), yi)

    outlines = {
        "journal": outline(sample("ben")), "cleo": outline(sample("cleo")), "ada": outline(sample("ada")),
        "yardstick": outline(vectorised_tiles), "journal_32": outline(journal_32),
        "journal_at_inner": outline(journal_at_inner), "bound_pixels": outline(bound_pixels, target="cuda"),
        "nothing": outline(lambda sch: None),
    }
    assert len({tuple(o) for o in outlines.values()}) == len(outlines)
    assert outlines["nothing"] == []


def inst(kind, inputs=(), attrs=(), outputs=()):
    return [kind, list(inputs), list(attrs), list(outputs)]


def test_the_outline_is_bounded_whatever_the_trace_holds():
    long_name = "b" * 64
    head = [inst("GetSBlock", [], [long_name, "main"], ["b0"]), inst("GetLoops", ["b0"], [], [f"l{i}" for i in range(1, 8)])]
    fused = inst("Fuse", [f"l{i}" for i in range(1, 8)], [1], ["l8"])
    body = [inst("Annotate", ["l8", n % 4096], ["pragma_auto_unroll_max_step"]) for n in range(990)]
    trace = [head + [fused] + body, []]
    validate_trace(trace)
    lines = outline_trace(trace)
    assert len(lines) <= MAX_LINES and all(len(line) <= MAX_LINE_CHARS for line in lines)
    assert sum(map(len, lines)) <= MAX_CHARS and len(json.dumps(lines)) < 6000
    assert lines[-1].startswith("... ") and "more instructions" in lines[-1]
    changed = [head + [fused] + body[:-1] + [inst("Annotate", ["l8", 7], ["pragma_auto_unroll_max_step"])], []]
    assert outline_trace(changed) != lines  # what was cut still counts, by its digest


def test_a_sampled_tiling_keeps_its_decision_up_to_the_shape():
    def sampled(sch):
        conv = sch.get_sblock("conv2d_nchw")
        loops = sch.get_loops(conv)
        tile = sch.sample_perfect_tile(loops[3], n=2, decision=[14, 16])
        sch.split(loops[3], tile)

    trace = traced(sampled)
    lines = outline_trace(trace)
    assert lines == ["sample_perfect_tile(conv2d_nchw[3]; 2, 16 -> [*,16])", "split(conv2d_nchw[3], tile(conv2d_nchw[3])[0], tile(conv2d_nchw[3])[1]; 1, 0)"]
    other = json.loads(json.dumps(trace))
    other[1][0][1] = [7, 32]
    assert outline_trace(other) != lines
