"""Views of TensorIR for reading: loop nests without the noise, their diff, buffer sizes after compaction.

The compaction view applies four of the passes that TVM's own pipeline runs early
(`LowerInitBlock`, `PlanAndUpdateBufferAllocationLocation`, `ConvertBlocksToOpaque`,
`CompactBufferAllocation`; in `get_tir_pipeline("s_tir")` `CanonicalizeLoop` and
`LowerCrossThreadReduction` run before them and two thread-binding passes between, which change
nothing on a CPU schedule: lesson 2 checks it): an intermediate allocated under a tile loop
shrinks to the region one iteration of that loop touches. That is the evidence that a schedule
made a buffer tile-sized.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

import numpy as np

from ..engine.checks import COMPACTION_PASSES, compacted_module  # noqa: F401  (re-exported for the lessons)
from .tables import Table, human_bytes

_INT64 = re.compile(r"T\.int64\((-?\d+)\)")
_LOOP = re.compile(r"^(\s*)for (.+?) in (.+):$")
_BLOCK = re.compile(r'^(\s*)with T\.sblock\("([^"]*)"\):$')
_BIND = re.compile(r'T\.thread_binding\((\d+), thread="([^"]+)"\)')


def _script(func_or_mod) -> str:
    return _INT64.sub(r"\1", func_or_mod.script())


def loop_nest(func_or_mod) -> str:
    """Only the loops and the blocks they run, indented as in the TVMScript.

    `T.grid(a, b)` loops keep their extents; a bound loop shows its thread axis.
    """
    lines = []
    for line in _script(func_or_mod).splitlines():
        loop, block = _LOOP.match(line), _BLOCK.match(line)
        if loop:
            indent, names, domain = loop.groups()
            bound = _BIND.search(domain)
            if bound:
                domain = f"{bound.group(2)} ({bound.group(1)})"
            lines.append(f"{indent}for {names} in {domain}:")
        elif block and block.group(2) != "root":
            lines.append(f"{block.group(1)}block {block.group(2)}")
    common = min((len(line) - len(line.lstrip()) for line in lines), default=0)
    return "\n".join(line[common:] for line in lines)


def diff(before: str, after: str, before_label: str = "before", after_label: str = "after") -> str:
    """A unified diff of two texts (for example two loop nests)."""
    old, new = before.splitlines(), after.splitlines()
    context = max(len(old), len(new))  # whole nests: a loop nest reads badly in fragments
    return "\n".join(difflib.unified_diff(old, new, before_label, after_label, lineterm="", n=context))


@dataclass(frozen=True)
class Allocation:
    buffer: str
    shape: tuple[int, ...]
    scope: str
    nbytes: int
    inside: str  # the loops the allocation sits under, outermost first ("" at function level)


def allocations(func, target) -> list[Allocation]:
    """The intermediate buffers `func` allocates after compaction, with where they live."""
    text = _script(compacted_module(func, target)["main"])
    found, loops = [], []
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        loops = [(depth, names) for depth, names in loops if depth < indent]
        loop = _LOOP.match(line)
        if loop:
            loops.append((indent, loop.group(2)))
            continue
        alloc = re.search(r"(\w+) = T\.sblock_alloc_buffer\(\(([^)]*)\)(.*)\)$", line)
        if alloc:
            name, dims, rest = alloc.groups()
            shape = tuple(int(d) for d in dims.split(",") if d.strip())
            dtype = re.search(r'"(float\d+|int\d+|uint\d+|bfloat16)"', rest)
            scope = re.search(r'scope="([^"]+)"', rest)
            itemsize = np.dtype(dtype.group(1) if dtype else "float32").itemsize
            found.append(
                Allocation(
                    name,
                    shape,
                    scope.group(1) if scope else "global",
                    int(np.prod(shape, dtype=np.int64)) * itemsize,
                    ", ".join(names for _, names in loops),
                )
            )
    return found


def allocation_table(func, target, title: str = "") -> Table:
    rows = [
        (a.buffer, " x ".join(map(str, a.shape)), a.scope, human_bytes(a.nbytes), f"under `for {a.inside}`" if a.inside else "whole function")
        for a in allocations(func, target)
    ]
    return Table.of(("buffer", "shape after compaction", "scope", "bytes", "allocated"), rows, title)


def compare_allocations(funcs: dict, target, title: str = "") -> Table:
    """Bytes of each intermediate buffer, one column per scheduled function ('-' where it is gone)."""
    sizes = {label: {a.buffer: a.nbytes for a in allocations(f, target)} for label, f in funcs.items()}
    buffers = list(dict.fromkeys(b for per in sizes.values() for b in per))
    rows = [(b, *(human_bytes(per[b]) if b in per else "-" for per in sizes.values())) for b in buffers]
    rows.append(("total", *(human_bytes(sum(per.values())) for per in sizes.values())))
    return Table.of(("intermediate buffer", *sizes), rows, title)


def excerpt(text: str, start_pattern: str, lines: int) -> str:
    """`lines` lines of `text` from the first line matching `start_pattern`."""
    all_lines = text.splitlines()
    for index, line in enumerate(all_lines):
        if re.search(start_pattern, line):
            return "\n".join(all_lines[index : index + lines])
    raise ValueError(f"no line matches {start_pattern!r}")


def lowered_excerpt(func, target, start_pattern: str, lines: int = 12) -> str:
    """A few lines of the compacted TVMScript, starting at the first line matching `start_pattern`."""
    return excerpt(_script(compacted_module(func, target)["main"]), start_pattern, lines)
