"""A schedule's trace as a short canonical outline: one line per instruction that changes the
program, written so that two copies of one schedule read the same on different workload shapes.

The outline is kept in the Result (and so in the autograded notebook's metadata) for the
instructor's similarity hints (similarity.py). It is made from a trace that
trace_schema.validate_trace accepted, in the grader's own process: plain Python, no TVM, and
bounded (MAX_LINES lines, MAX_LINE_CHARS characters a line, MAX_CHARS in all) whatever the
trace holds.

Normalisation, rule by rule:
1. Look-ups are dropped (get_sblock, get_loops, get_child_blocks, get_producers,
   get_consumers, get_output_blocks): they change nothing. What they return is named by how it
   was found, so the names do not depend on the order of the look-ups, on how often a schedule
   repeats one, or on TVM's numbering of random variables (b0, l1, ...):
   a block by its name (`conv2d_nchw`); a loop by its block and position (`conv2d_nchw[3]`);
   the outputs of a split `L.0`, `L.1`, ... (outermost first); of a fuse `fuse(A,B)`; a block a
   primitive creates by the primitive and its operands (`cache_read(conv2d_nchw,1)`,
   `init(conv2d_nchw)` for decompose_reduction's); a sampled variable by its sampler
   (`tile(L)[0]`, `choice2`). A name longer than MAX_NAME_CHARS is replaced by a digest of it.
   (The Python names a student gives loops never reach a trace at all.)
2. The factors of a split (and loop_partition) that follow from the loop's extent are written
   `*`: the one given as None and, when every factor is given, the outermost one. So
   `[None, 16]`, `[14, 16]` (224 pixels) and `[12, 16]` (192 pixels) are all `*, 16`, while
   `[14, None]` stays `14, *` (which factor a schedule fixes is its own decision). Likewise the
   outermost factor of a sampled tiling's decision.
3. Consecutive loop and buffer marks (parallel, vectorize, unroll, bind, annotate,
   storage_align, set_scope) are sorted: the order in which a schedule writes down marks of
   different loops is not a decision it makes.
4. Flags are written 0/1 (TVM writes some as true/false); every other attribute as given.

What is kept is every other instruction, in order, with its operands and decisions: two
different schedules differ in the outline. A line reads `primitive(operands; attributes)`.
"""
from __future__ import annotations

import hashlib
import json

from .trace_schema import primitive_name

MAX_LINES = 64
MAX_LINE_CHARS = 240
MAX_CHARS = 4096  # the whole outline, the last line's note included
MAX_NAME_CHARS = 48
NOTE_CHARS = 48  # "... N more instructions (digest)"

LOOKUPS = frozenset({"GetSBlock", "GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers", "GetOutputBlocks"})
MARKS = frozenset({"Parallel", "Vectorize", "Unroll", "Bind", "Annotate", "StorageAlign", "SetScope"})
SPLITS = frozenset({"Split", "LoopPartition"})
DERIVED = "*"


def outline_trace(trace: list) -> list[str]:
    """The canonical outline of a validated trace `[instructions, decisions]`."""
    instructions, decisions = trace
    decided = {index: value for index, value in decisions}
    names: dict[str, str] = {}
    counters: dict[str, int] = {}
    lines: list[str] = []
    marks: list[str] = []
    for index, (kind, inputs, attrs, outputs) in enumerate(instructions):
        operands = [_operand(value, names) for value in inputs]
        _name_outputs(kind, operands, attrs, outputs, names, counters)
        if kind in LOOKUPS:
            continue
        line = _line(kind, inputs, operands, attrs, decided.get(index))
        if kind in MARKS:
            marks.append(line)
            continue
        lines.extend(sorted(marks))
        marks.clear()
        lines.append(line)
    lines.extend(sorted(marks))
    return bounded(lines)


def outline_lines(value) -> list[str] | None:
    """An outline another process sent (the evaluator's schedule outline), if it is one: a
    list of strings, bounded here whatever it holds; None otherwise."""
    if not isinstance(value, list) or len(value) > 4 * MAX_LINES or not all(isinstance(line, str) for line in value):
        return None
    return bounded(value)


def bounded(lines: list[str]) -> list[str]:
    """At most MAX_LINES lines of at most MAX_LINE_CHARS, MAX_CHARS in all; what is cut is
    summarised by a digest, so outlines that differ only past the cut still differ."""
    lines = [_shorten(line, MAX_LINE_CHARS) for line in lines]
    kept: list[str] = []
    total = 0
    for position, line in enumerate(lines):
        more = position < len(lines) - 1  # then room is kept for the note that may follow
        if len(kept) + 1 + more > MAX_LINES or total + len(line) + more * NOTE_CHARS > MAX_CHARS:
            rest = lines[position:]
            kept.append(f"... {len(rest)} more instructions ({_digest(chr(10).join(rest))})")
            return kept
        kept.append(line)
        total += len(line)
    return kept


def _name_outputs(kind: str, operands: list[str], attrs: list, outputs: list, names: dict, counters: dict) -> None:
    first = operands[0] if operands else ""
    if kind == "GetSBlock":
        derived = [str(attrs[0])]
    elif kind == "GetLoops":
        derived = [f"{first}[{i}]" for i in range(len(outputs))]
    elif kind in ("GetChildBlocks", "GetProducers", "GetConsumers", "GetOutputBlocks"):
        derived = [f"{primitive_name(kind)[4:]}({first})[{i}]" for i in range(len(outputs))]
    elif kind in SPLITS:
        mark = "." if kind == "Split" else ".p"
        derived = [f"{first}{mark}{i}" for i in range(len(outputs))]
    elif kind in ("Fuse", "Merge"):
        derived = [f"{kind.lower()}({','.join(operands)})"]
    elif kind == "AddUnitLoop":
        derived = [f"unit({first})"]
    elif kind in ("CacheRead", "CacheWrite"):
        derived = [f"{primitive_name(kind)}({first},{attrs[0]})"]
    elif kind == "DecomposeReduction":
        derived = [f"init({first})"]
    elif kind == "DecomposePadding":
        derived = [f"pad_init({first})"]
    elif kind == "RFactor":
        derived = [f"rfactor({first})"]
    elif kind == "SampleComputeLocation":
        derived = [f"location({first})"]
    elif kind in ("SamplePerfectTile", "SamplePartitionedTile"):
        sampler = "tile" if kind == "SamplePerfectTile" else "ptile"
        derived = [f"{sampler}({first})[{i}]" for i in range(len(outputs))]
    else:  # SampleCategorical, and any kind with outputs not named above
        counters[kind] = counters.get(kind, 0) + 1
        derived = [f"{primitive_name(kind).replace('sample_', '')}{counters[kind]}.{i}" for i in range(len(outputs))]
    for rv, name in zip(outputs, derived):
        names[rv] = _shorten_name(name)


def _operand(value, names: dict) -> str:
    """An input as it reads in the outline: a random variable by its derived name."""
    if isinstance(value, str) and value in names:
        return names[value]
    if isinstance(value, list):
        return "[" + ",".join(_operand(v, names) for v in value) + "]"
    return _value(value)


def _line(kind: str, inputs: list, operands: list[str], attrs: list, decision) -> str:
    if kind in SPLITS:
        operands = [operands[0], *_derived_factors(inputs[1:], operands[1:])]
    parts = ", ".join(operands)
    if attrs:
        parts += "; " + ", ".join(_value(a) for a in attrs)
    if decision is not None:
        if kind in ("SamplePerfectTile", "SamplePartitionedTile") and isinstance(decision, list) and decision:
            decision = [DERIVED, *decision[1:]]
        parts += " -> " + _value(decision)
    return f"{primitive_name(kind)}({parts})"


def _derived_factors(factors: list, written: list[str]) -> list[str]:
    """Rule 2: the factor TVM infers (None), or else the outermost, follows from the extent."""
    if "None" in factors:
        return [DERIVED if f == "None" else w for f, w in zip(factors, written)]
    if all(isinstance(f, int) for f in factors):
        return [DERIVED, *written[1:]]
    return written  # sampled factors: their decision says how the loop is tiled


def _value(value) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, (int, float)):
        return f"{value:g}" if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return value if value == DERIVED else _shorten_name(value)
    if isinstance(value, list):
        return "[" + ",".join(_value(v) for v in value) + "]"
    return _shorten_name(json.dumps(value, sort_keys=True, default=str))


def _shorten_name(name: str) -> str:
    return name if len(name) <= MAX_NAME_CHARS else "~" + _digest(name)


def _shorten(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[: limit - 16] + "...~" + _digest(line)


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=6).hexdigest()
