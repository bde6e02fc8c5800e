"""What a schedule does, as a short outline of the loop nest it leaves: the instructor's
similarity hints (similarity.py) compare this, not the instructions that made it.

Instructions that change nothing leave the same loop nest: a one-loop `fuse`, `reorder` or
`merge`, a split by 1 (`[None, 1]` or `[1, None]`), `add_unit_loop`, `annotate` then
`unannotate`, a `set_scope` to the scope a buffer already has, a `compute_at` to where a block
already is, `reorder_block_iter_var`, a sampled variable nothing uses, a tuning hint the compiler
never reads. So a copy padded with any of them reads the same here, whichever they are: the
outline is made from the scheduled function, by these rules:

1. It is made on the problem's default workload, so that copies of one schedule on different
   students' variants meet: the trace is replayed there with each split's outermost factor left
   for TVM to infer when every factor is given (`[14, 16]` on a 224-pixel row and `[12, 16]` on
   192 pixels both become `[None, 16]`; which factor a schedule fixes is its own decision, so
   `[14, None]` stays). A sampled tiling's decision is a perfect tiling of the variant's extent
   only (replayed on another extent, TVM draws a new one): its factors are written into the
   instructions that use them, as given factors, and follow the same rule. Where the variant is
   the default workload, the graded replay serves. A trace the default workload cannot replay
   is outlined on the variant, its first line naming the variant's shape.
2. A loop of one iteration is left out, whatever it is marked: it runs its body once. Its
   variable reads 0 wherever a block uses it.
3. Loops are named by their depth among the loops kept (`d0` outermost): the names TVM derives
   from instructions (`xx_0`, `xx_fused`) never show.
4. A loop's line: its extent, kind (parallel, vectorized, unrolled, or the GPU thread it is bound
   to) and the annotations the compiler reads (`pragma_*`); `meta_schedule.*` hints are read only
   by MetaSchedule's own rules and left out.
5. A block's line: its name, each iterator's binding simplified in the depth names (sorted by
   iterator), its predicate where not always true, its storage alignments (an alignment to a
   factor of 1 changes nothing and is left out). A block that only wraps others shows through
   its content.
6. A buffer's line: name, shape, scope, where it is allocated.

Lines are indented by depth. The outline is bounded as trace outlines are
(trace_outline.bounded).
"""
from __future__ import annotations

import re

from .trace_outline import bounded

SPLITS = ("Split", "LoopPartition")
SAMPLED_TILINGS = ("SamplePerfectTile", "SamplePartitionedTile")
_INT = re.compile(r"T\.int(?:32|64)\((-?\d+)\)")


def default_factors(trace: list) -> list:
    """Rule 1: the trace with each sampled tiling's decided factors written where they are
    used, and every split's outermost factor left to TVM where all are given."""
    instructions, decisions = trace
    decided = {index: value for index, value in decisions}
    sampled: dict[str, int] = {}  # a sampled tiling's variable -> the factor decided for it
    rewritten: list = []
    renumbered: dict[int, int] = {}
    for index, (kind, inputs, attrs, outputs) in enumerate(instructions):
        decision = decided.get(index)
        if kind in SAMPLED_TILINGS and isinstance(decision, list) and len(decision) == len(outputs):
            sampled.update(zip(outputs, decision))
            continue
        inputs = [sampled.get(value, value) if isinstance(value, str) else value for value in inputs]
        if kind in SPLITS and all(isinstance(f, int) and not isinstance(f, bool) for f in inputs[1:]):
            inputs = [inputs[0], "None", *inputs[2:]]
        renumbered[index] = len(rewritten)
        rewritten.append([kind, inputs, attrs, outputs])
    return [rewritten, [[renumbered[index], value] for index, value in decisions if index in renumbered]]


def schedule_outline(problem, trace: list, graded_schedule) -> list[str]:
    """The outline of a validated trace that replayed on the student's workload
    (`graded_schedule`), made on the problem's default workload where it replays there."""
    from ..problems import get_problem
    from .replay import replay

    default = get_problem(problem.name)
    if problem.shape == default.shape:
        return outline_function(graded_schedule.mod["main"])
    try:
        on_default = replay(default.workload(), default_factors(trace), problem.target)
    except Exception:  # noqa: BLE001  (what fits only the variant is outlined there)
        on_default = None
    if on_default is None:
        shape = problem.shape
        header = f"on the variant {shape.height}x{shape.width}, {shape.out_channels} channels"
        return bounded([header, *outline_function(graded_schedule.mod["main"])])
    return outline_function(on_default.mod["main"])


def outline_function(func) -> list[str]:
    """The outline of a scheduled PrimFunc (rules 2-6), bounded."""
    from tvm import tirx
    from tvm.sym import Analyzer

    analyzer = Analyzer()
    lines: list[str] = []
    depth_vars: list = []
    stack = [(func.body, 0, None)]
    while stack:
        node, depth, _ = stack.pop()
        kind = type(node).__name__
        children: list = []
        if kind == "For":
            extent = node.extent
            if hasattr(extent, "value") and int(extent.value) == 1:
                analyzer.bind(node.loop_var, tirx.const(0, str(node.loop_var.ty)))
                children = [(node.body, depth)]
            else:
                while len(depth_vars) <= depth:
                    depth_vars.append({})
                dtype = str(node.loop_var.ty)
                name = depth_vars[depth].setdefault(dtype, tirx.Var(f"d{depth}", dtype))
                analyzer.bind(node.loop_var, name)
                lines.append("  " * depth + f"for {name} in {_text(extent)}{_loop_kind(node)}{_annotations(node.annotations)}")
                children = [(node.body, depth + 1)]
        elif kind == "SBlockRealize":
            block = node.block
            for buffer in block.alloc_buffers:
                lines.append("  " * depth + f"alloc {buffer.name} {_shape(buffer)} {buffer.scope()}")
            if _is_leaf(block) or block.name_hint == "root":
                if block.name_hint != "root":
                    lines.append("  " * depth + _block_line(block, node, analyzer))
            children = [(block.body, depth)]
        elif kind == "SBlock":  # a root without a realize
            for buffer in node.alloc_buffers:
                lines.append("  " * depth + f"alloc {buffer.name} {_shape(buffer)} {buffer.scope()}")
            children = [(node.body, depth)]
        elif kind == "SeqStmt":
            children = [(child, depth) for child in node.seq]
        elif kind == "IfThenElse":
            lines.append("  " * depth + f"if {_simplified(node.condition, analyzer)}")
            children = [(node.then_case, depth + 1)] + ([(node.else_case, depth + 1)] if node.else_case is not None else [])
        elif kind in ("BufferStore", "Evaluate"):
            continue
        else:
            body = getattr(node, "body", None)
            lines.append("  " * depth + kind)
            children = [(body, depth + 1)] if body is not None else []
        stack.extend((child, child_depth, None) for child, child_depth in reversed(children) if child is not None)
    return bounded(lines)


def _is_leaf(block) -> bool:
    """A block that computes (no block inside it), rather than one that only wraps others."""
    inner: list = []
    from .checks import walk

    walk(block.body, lambda n: inner.append(n) if type(n).__name__ == "SBlock" else None)
    return not inner


def _block_line(block, realize, analyzer) -> str:
    bindings = sorted(
        f"{iter_var.var.name}={_simplified(value, analyzer)}" for iter_var, value in zip(block.iter_vars, realize.iter_values)
    )
    line = f"block {block.name_hint}: {', '.join(bindings)}"
    predicate = _simplified(realize.predicate, analyzer)
    if predicate not in ("T.bool(True)", "True"):
        line += f" where {predicate}"
    alignments = block.annotations.get("buffer_dim_align") if block.annotations else None
    if alignments is not None:
        # (buffer index, axis, factor, offset) each
        kept = sorted("/".join(str(int(v)) for v in entry) for entry in alignments if int(entry[2]) > 1)
        if kept:
            line += f" align {' '.join(kept)}"
    return line + _annotations(block.annotations, skip=("buffer_dim_align",))


def _loop_kind(loop) -> str:
    from tvm import tirx

    if loop.kind == tirx.ForKind.THREAD_BINDING and loop.thread_binding is not None:
        return f" bound {loop.thread_binding.thread_tag}"
    names = {tirx.ForKind.PARALLEL: "parallel", tirx.ForKind.VECTORIZED: "vectorized", tirx.ForKind.UNROLLED: "unrolled"}
    return f" {names[loop.kind]}" if loop.kind in names else ""


def _annotations(annotations, skip=()) -> str:
    """Rule 4: what the compiler reads; MetaSchedule's own hints left out."""
    if not annotations:
        return ""
    kept = sorted(f"{key}={_text(value)}" for key, value in annotations.items()
                  if key not in skip and not str(key).startswith("meta_schedule."))
    return f" [{', '.join(kept)}]" if kept else ""


def _shape(buffer) -> str:
    return "x".join(_text(extent) for extent in buffer.shape)


def _simplified(expr, analyzer) -> str:
    return _text(analyzer.simplify(expr))


def _text(value) -> str:
    """TVMScript's text of a value, with integer literals plain (T.int64(16) -> 16)."""
    text = value.script() if hasattr(value, "script") else str(value)
    return _INT.sub(r"\1", " ".join(text.split()))
