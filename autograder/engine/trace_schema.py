"""What a student's trace may contain, field by field, checked before TVM sees any of it.

A trace is `[instructions, decisions]`; an instruction is `[kind, inputs, attrs, outputs]`.
Its kind says which schedule primitive ran, but its inputs are what TVM rebuilds on replay:
a string input that starts with `{` is parsed as a whole TVM object (an index map, an
expression that may hold `call_extern`), one that starts with `"` becomes a string. So
checking kinds is not enough: every field of every instruction accepted here has a declared
type (an integer in a range, a flag, a string from a fixed set, a reference to a block, loop
or variable an earlier instruction defined), and anything else is rejected, naming the
instruction and the field. No field accepts a TVM object or an expression: the exercises
need no index map (`reindex_cache_*`, `transform_*` are refused for that reason), and TVM's
primitives keep a program's meaning only while their inputs are plain.

Plain Python, no TVM, no recursion: the walk is bounded by the sizes below.
"""
from __future__ import annotations

import math
import re
import reprlib
from dataclasses import dataclass, field

from ..errors import TvmCourseError

# A real schedule has tens of instructions and creates a few dozen loops.
MAX_INSTRUCTIONS = 1000
MAX_LIST = 64  # factors of one split, loops of one reorder, candidates of one sample
MAX_NEW_LOOPS = 256  # loops created by split/partition/add_unit_loop, over the whole trace
MAX_EXTENT = 1 << 20  # no loop of the workloads is longer
MAX_NAME = 64

BLOCK, LOOP, VAR = "block", "loop", "variable"
_PREFIX = {BLOCK: "b", LOOP: "l", VAR: "v"}
_RV_NAME = re.compile(r"[blv][0-9]{1,6}")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_.]{0,%d}" % (MAX_NAME - 1))

GPU_THREAD_AXES = tuple(f"{kind}.{axis}" for kind in ("blockIdx", "threadIdx") for axis in "xyz")
VIRTUAL_THREAD_AXES = tuple(f"vthread.{axis}" for axis in "xyz")
STORAGE_SCOPES = ("global", "shared", "shared.dyn", "local")


# Why the rest are refused, for the message a student sees.
REFUSED_KINDS = {
    "UnsafeSetDType": "unsafe_set_dtype changes what the program computes",
    "UnsafeHideBufferAccess": "unsafe_hide_buffer_access hides accesses from TVM's safety checks",
    "AnnotateBufferAccess": "annotate_buffer_access overrides the accesses TVM's safety checks rely on",
    "TransformLayout": "transform_layout takes an index map (an expression) and can change the function's interface",
    "TransformBlockLayout": "transform_block_layout takes an index map (an expression); this exercise accepts none",
    "ReindexCacheRead": "reindex_cache_read takes an index map (an expression); this exercise accepts none: use cache_read",
    "ReindexCacheWrite": "reindex_cache_write takes an index map (an expression); this exercise accepts none: use cache_write",
    "Tensorize": "tensorize is outside this exercise",
    "Blockize": "blockize is outside this exercise",
}


class TraceRejected(ValueError, TvmCourseError):
    """The trace holds something the grader does not accept; the message says what and where."""


@dataclass(frozen=True)
class TraceSummary:
    instructions: int
    kinds: tuple[str, ...]  # distinct kinds used, in order of first use
    dropped: tuple[str, ...] = ()  # one note per instruction dropped before replay (DROPPED_HINTS)
    notes: tuple[str, ...] = ()  # accepted hints that do nothing here, and what to do instead


# ---- field types: each checks one JSON value and says what it expected --------------------


@dataclass(frozen=True)
class Ref:
    """A random variable an earlier instruction defined: a block, a loop or a sampled variable."""

    kinds: tuple[str, ...]
    name: str

    def check(self, value, scope: "_Scope") -> str | None:
        if not isinstance(value, str) or value not in scope.defined:
            return f"must name a {' or '.join(self.kinds)} defined by an earlier instruction, got {_show(value)}"
        if scope.defined[value] not in self.kinds:
            return f"must be a {' or '.join(self.kinds)}, but {value} is a {scope.defined[value]}"
        return None


@dataclass(frozen=True)
class RefList:
    kinds: tuple[str, ...]
    name: str
    max_len: int = MAX_LIST

    def check(self, value, scope):
        if not isinstance(value, list) or len(value) > self.max_len:
            return f"must be a list of at most {self.max_len} {self.kinds[0]}s, got {_show(value)}"
        item = Ref(self.kinds, self.name)
        return next((f"item {i} {e}" for i, v in enumerate(value) if (e := item.check(v, scope))), None)


@dataclass(frozen=True)
class Int:
    lo: int
    hi: int
    name: str

    def check(self, value, scope):
        if isinstance(value, bool) or not isinstance(value, int) or not self.lo <= value <= self.hi:
            return f"must be an integer from {self.lo} to {self.hi}, got {_show(value)}"
        return None


@dataclass(frozen=True)
class IntOrVar:
    """An integer in a range, or a variable an earlier sampling instruction defined (MetaSchedule
    annotates the unroll step it sampled)."""

    lo: int
    hi: int
    name: str

    def check(self, value, scope):
        if isinstance(value, str) and value in scope.defined:
            return Ref((VAR,), self.name).check(value, scope)
        if Int(self.lo, self.hi, self.name).check(value, scope) is None:
            return None
        return f"must be an integer from {self.lo} to {self.hi} or a sampled variable, got {_show(value)}"


@dataclass(frozen=True)
class Word:
    """A string value, as TVM writes one into a trace: quoted, so replay makes it a string and
    never parses it. Only the letters `pattern` allows may sit between the quotes."""

    pattern: str
    name: str

    def check(self, value, scope):
        if not (isinstance(value, str) and len(value) >= 2 and value[0] == value[-1] == '"'
                and re.fullmatch(self.pattern, value[1:-1])):
            return f"must be a quoted string matching {self.pattern}, got {_show(value)}"
        return None


@dataclass(frozen=True)
class Flag:
    """true/false (TVM writes some flags as 0/1); `required` pins the only accepted value."""

    name: str
    required: bool | None = None
    why: str = ""

    def check(self, value, scope):
        if value not in (True, False, 0, 1) or isinstance(value, float):
            return f"must be true or false, got {_show(value)}"
        if self.required is not None and bool(value) != self.required:
            return f"must be {str(self.required).lower()}: {self.why}"
        return None


@dataclass(frozen=True)
class Choice:
    values: tuple[str, ...]
    name: str

    def check(self, value, scope):
        if not isinstance(value, str) or value not in self.values:
            return f"must be one of {', '.join(self.values)}; got {_show(value)}"
        return None


@dataclass(frozen=True)
class Identifier:
    """A block's name: looked up by TVM, never parsed."""

    name: str

    def check(self, value, scope):
        if not isinstance(value, str) or not _IDENTIFIER.fullmatch(value):
            return f"must be a plain name (letters, digits, _ and ., at most {MAX_NAME}), got {_show(value)}"
        return None


@dataclass(frozen=True)
class Factor:
    """One factor of a split: a positive integer, None (inferred), or a sampled variable."""

    name: str = "factor"

    def check(self, value, scope):
        if value == "None":
            return None
        if isinstance(value, str) and value in scope.defined:
            return Ref((VAR,), self.name).check(value, scope)
        if Int(1, MAX_EXTENT, self.name).check(value, scope) is None:
            return None
        return f"must be a positive integer up to {MAX_EXTENT}, None, or a sampled variable; got {_show(value)}"


@dataclass(frozen=True)
class Numbers:
    """A list of numbers: integers in a range, or finite non-negative floats (probabilities)."""

    name: str
    lo: float
    hi: float
    integers: bool = True
    min_len: int = 1
    max_len: int = MAX_LIST

    def check(self, value, scope):
        kind = "integers" if self.integers else "numbers"
        ok = isinstance(value, list) and self.min_len <= len(value) <= self.max_len and all(
            not isinstance(v, bool)
            and isinstance(v, (int,) if self.integers else (int, float))
            and (self.integers or math.isfinite(v))
            and self.lo <= v <= self.hi
            for v in value
        )
        if not ok:
            return f"must be a list of {self.min_len} to {self.max_len} {kind} from {self.lo:g} to {self.hi:g}, got {_show(value)}"
        return None


# Annotations, by key, and the values each may take. Two kinds are accepted:
# - what the compiler acts on and cannot change results with: unrolling;
# - MetaSchedule's tuning hints, which its printed traces hold (`sch.annotate(...,
#   ann_key="meta_schedule.tiling_structure", ...)`). In TVM 0.27 only MetaSchedule's own schedule
#   rules and post-processors read them (src/s_tir/meta_schedule/, and s_tir's
#   HasBeenMultiLevelTiled, which only those rules call); `tvm.compile`'s lowering reads none, and
#   the grader never runs those post-processors, so they change nothing in what is graded
#   (tests/engine/test_trace_schema.py compiles with and without them: the same LLVM IR). What
#   the post-processors made of them is in the trace as plain primitives after
#   `enter_postproc()`: parallel, vectorize, the unroll pragmas.
ANNOTATIONS = {
    "pragma_auto_unroll_max_step": Int(0, 4096, "value"),
    "pragma_unroll_explicit": Int(0, 1, "value"),
    "meta_schedule.tiling_structure": Word("[SR]{1,16}", "value"),  # e.g. "SSRSRS"
    "meta_schedule.random_compute_producer": Int(0, 1, "value"),
    "meta_schedule.parallel": Int(1, MAX_EXTENT, "value"),  # jobs: cores x jobs per core
    "meta_schedule.vectorize": Int(1, MAX_EXTENT, "value"),  # the longest loop to vectorise
    "meta_schedule.unroll_explicit": IntOrVar(0, 4096, "value"),
    "meta_schedule.unroll_implicit": IntOrVar(0, 4096, "value"),
    "meta_schedule.cooperative_fetch": IntOrVar(1, 1024, "value"),  # a GPU load's vector length
    "meta_schedule.thread_extent_low_inclusive": Int(1, 1 << 16, "value"),
    "meta_schedule.thread_extent_high_inclusive": Int(1, 1 << 16, "value"),
    # Software pipelining, as MetaSchedule's GPU design spaces annotate a reduction loop whose body
    # fetches into shared memory and computes: TVM's InjectSoftwarePipeline rewrites the loop so the
    # next iterations' fetches (into more buffers) overlap this one's compute; on CUDA sm_80+ the
    # async stages' copies become cp.async. Its values are plain integer lists, and TVM itself
    # refuses what it cannot lower safely (a list whose length is not the loop body's statements, a
    # stage that would read what a later stage writes: the student's error, with TVM's reason);
    # what it lowers is run and its outputs checked like any schedule. Lowered for OpenCL (no GPU
    # here) the pipeline is the same and its copies synchronous, so that run checks the stages and
    # the order; CUDA's async waits are TVM's code generation, which only a GPU run checks.
    # (tests/engine/test_trace_schema.py: a MetaSchedule design space graded with them.)
    "software_pipeline_stage": Numbers("value", 0, 8),
    "software_pipeline_order": Numbers("value", 0, MAX_LIST - 1),
    "software_pipeline_async_stages": Numbers("value", 0, 8),
}

# Annotations refused, with what a schedule loses by leaving them out (the refusal says so and
# which line to remove). Any other key not in ANNOTATIONS gets the general sentence.
REFUSED_ANNOTATIONS = {
    "pragma_import_c": "it links C source into the build, code the grader cannot check; without it the "
                       "schedule computes the same",
    "pragma_import_llvm": "it links LLVM IR into the build, code the grader cannot check; without it the "
                          "schedule computes the same",
    "double_buffer_scope": "it asks TVM to double-buffer a shared buffer; without it fetches do not overlap "
                           "compute (the software_pipeline_stage / _order annotations, accepted here, do that)",
}

# MetaSchedule's hints that are not harmless: their instruction is dropped from the trace before
# TVM replays it (nothing of it reaches TVM), and the result says so. A `meta_schedule.` key this
# table does not know is dropped the same way; any other unlisted key is refused.
DROPPED_HINTS = {
    "meta_schedule.auto_tensorize": "it names a tensor intrinsic that MetaSchedule's post-processing "
                                    "puts in place of the block's computation",
    "meta_schedule.auto_tensorize_init": "it names a tensor intrinsic that MetaSchedule's post-processing "
                                         "puts in place of the block's initialisation",
    "meta_schedule.layout_rewrite_preproc": "it marks a block that MetaSchedule's build removes "
                                            "(RemoveWeightLayoutRewriteBlock)",
}
_HINT_PREFIX = "meta_schedule."


def _dropped_hint(kind: str, attrs: list) -> str | None:
    """Why this instruction is dropped (an annotate or unannotate of a hint not accepted), or None."""
    if kind not in ("Annotate", "Unannotate") or len(attrs) != 1:
        return None
    key = attrs[0]
    if not (isinstance(key, str) and key.startswith(_HINT_PREFIX) and _IDENTIFIER.fullmatch(key)) or key in ANNOTATIONS:
        return None
    return DROPPED_HINTS.get(key, "this grader does not know it, and only what it knows reaches TVM")


@dataclass(frozen=True)
class Spec:
    """One instruction kind: its fixed inputs, then optional repeated ones, its attrs and outputs.

    `outputs`: the kind of RV each output is; `count` is a fixed number, "inputs" (one per
    repeated input, as a split's loops), "n" (attribute 0, as a sampled tiling's factors), or
    None (any number up to MAX_LIST, as get_loops).
    """

    inputs: tuple = ()
    repeated: object = None
    min_repeated: int = 0
    attrs: tuple = ()
    outputs: str | None = None
    count: int | str | None = 0
    new_loops: bool = False  # its outputs are loops that did not exist before
    decision: object = None  # sampling instructions: the decision's type
    cuda_only: bool = False

    def output_count(self, repeated: int, attrs: list) -> tuple[int, int]:
        if self.count == "inputs":
            return repeated, repeated
        if self.count == "n":
            return int(attrs[0]), int(attrs[0])
        if self.count is None:
            return 0, MAX_LIST
        if not isinstance(self.count, int):
            raise ValueError(f"a primitive's output count is a number, 'inputs', 'n' or None, not {self.count!r}")
        return self.count, self.count


BLOCK_OR_LOOP = (BLOCK, LOOP)
_block, _loop = Ref((BLOCK,), "block"), Ref((LOOP,), "loop")
_buffer_index = Int(0, 16, "buffer_index")
_scope = Choice(STORAGE_SCOPES, "storage_scope")
_tile = Numbers("decision", 1, MAX_EXTENT)

SCHEMAS: dict[str, Spec] = {
    # Look-ups
    "GetSBlock": Spec(attrs=(Identifier("name"), Choice(("main",), "func_name")), outputs=BLOCK, count=1),
    "GetLoops": Spec(inputs=(_block,), outputs=LOOP, count=None),
    "GetChildBlocks": Spec(inputs=(Ref(BLOCK_OR_LOOP, "block_or_loop"),), outputs=BLOCK, count=None),
    "GetProducers": Spec(inputs=(_block,), outputs=BLOCK, count=None),
    "GetConsumers": Spec(inputs=(_block,), outputs=BLOCK, count=None),
    "GetOutputBlocks": Spec(inputs=(_block,), outputs=BLOCK, count=None),
    # Loop transformations
    "Split": Spec(
        inputs=(_loop,), repeated=Factor(), min_repeated=2, outputs=LOOP, count="inputs", new_loops=True,
        attrs=(Flag("preserve_unit_iters"), Flag("disable_predication", required=False,
               why="TVM documents disable_predication=True as able to produce incorrect code")),
    ),
    "LoopPartition": Spec(inputs=(_loop,), repeated=Factor(), min_repeated=2, attrs=(Flag("preserve_unit_iters"),),
                          outputs=LOOP, count="inputs", new_loops=True),
    "Fuse": Spec(repeated=_loop, min_repeated=1, attrs=(Flag("preserve_unit_iters"),), outputs=LOOP, count=1),
    "Merge": Spec(repeated=_loop, min_repeated=1, outputs=LOOP, count=1),
    "Reorder": Spec(repeated=_loop, min_repeated=1),
    "AddUnitLoop": Spec(inputs=(Ref(BLOCK_OR_LOOP, "block_or_loop"),), outputs=LOOP, count=1, new_loops=True),
    "ReorderBlockIterVar": Spec(inputs=(_block, Numbers("new_order", 0, MAX_LIST - 1))),
    "Parallel": Spec(inputs=(_loop,)),
    "Vectorize": Spec(inputs=(_loop,)),
    "Unroll": Spec(inputs=(_loop,)),
    "Bind": Spec(inputs=(_loop,), attrs=(Choice(GPU_THREAD_AXES + VIRTUAL_THREAD_AXES, "thread_axis"),), cuda_only=True),
    # Where blocks are computed
    "ComputeAt": Spec(inputs=(_block, _loop), attrs=(Flag("preserve_unit_loops"), Int(-2, MAX_LIST, "index"))),
    "ReverseComputeAt": Spec(inputs=(_block, _loop), attrs=(Flag("preserve_unit_loops"), Int(-2, MAX_LIST, "index"))),
    "ComputeInline": Spec(inputs=(_block,)),
    "ReverseComputeInline": Spec(inputs=(_block,)),
    "DecomposeReduction": Spec(inputs=(_block, _loop), outputs=BLOCK, count=1),
    "DecomposePadding": Spec(inputs=(_block, _loop), outputs=BLOCK, count=1),
    "RFactor": Spec(inputs=(_loop,), attrs=(Int(0, 8, "factor_axis"),), outputs=BLOCK, count=1),
    # Memory
    "CacheRead": Spec(inputs=(_block, RefList((BLOCK,), "consumer_blocks")), attrs=(_buffer_index, _scope), outputs=BLOCK, count=1),
    "CacheWrite": Spec(inputs=(_block, RefList((BLOCK,), "consumer_blocks")), attrs=(_buffer_index, _scope), outputs=BLOCK, count=1),
    "SetScope": Spec(inputs=(_block,), attrs=(_buffer_index, _scope)),
    # An absurd alignment allocates more than any machine has: offset below factor, factor a small power.
    "StorageAlign": Spec(inputs=(_block,), attrs=(_buffer_index, Int(0, 7, "axis"), Int(1, 1024, "factor"), Int(0, 1023, "offset"))),
    # The value's type depends on the key (ANNOTATIONS): checked in _check_instruction.
    "Annotate": Spec(inputs=(Ref(BLOCK_OR_LOOP, "block_or_loop"), Int(0, 0, "value")), attrs=(Choice(tuple(ANNOTATIONS), "key"),)),
    "Unannotate": Spec(inputs=(Ref(BLOCK_OR_LOOP, "block_or_loop"),), attrs=(Choice(tuple(ANNOTATIONS), "key"),)),
    # Sampling (design spaces), as MetaSchedule traces contain
    "SamplePerfectTile": Spec(inputs=(_loop,), attrs=(Int(1, 8, "n"), Int(0, MAX_EXTENT, "max_innermost_factor")),
                              outputs=VAR, count="n", decision=_tile),
    "SamplePartitionedTile": Spec(inputs=(_loop,), attrs=(Int(1, 8, "n"), Int(0, 8, "partition_pos"), Int(1, MAX_EXTENT, "innerpart_factor")),
                                  outputs=VAR, count="n", decision=_tile),
    "SampleCategorical": Spec(attrs=(Numbers("candidates", -MAX_EXTENT, MAX_EXTENT), Numbers("probs", 0, 1, integers=False)),
                              outputs=VAR, count=1, decision=Int(0, MAX_LIST - 1, "decision")),
    "SampleComputeLocation": Spec(inputs=(_block,), outputs=LOOP, count=1, decision=Int(-2, MAX_LIST, "decision")),
    "EnterPostproc": Spec(),
}

ALLOWED_KINDS = frozenset(SCHEMAS)


# ---- the walk --------------------------------------------------------------------------


@dataclass
class _Scope:
    defined: dict[str, str] = field(default_factory=dict)  # RV name -> BLOCK / LOOP / VAR
    new_loops: int = 0


def validate_trace(trace: object, target: str = "cpu") -> TraceSummary:
    """Check every field of every instruction; raise TraceRejected naming the first bad one."""
    if not (isinstance(trace, list) and len(trace) == 2 and all(isinstance(p, list) for p in trace)):
        raise TraceRejected("the schedule's trace is malformed (expected [instructions, decisions])")
    instructions, decisions = trace
    if len(instructions) > MAX_INSTRUCTIONS:
        raise TraceRejected(f"the schedule has {len(instructions)} instructions; at most {MAX_INSTRUCTIONS} are allowed")
    scope = _Scope()
    kinds: list[str] = []
    dropped: list[str] = []
    for index, inst in enumerate(instructions):
        if not (isinstance(inst, list) and len(inst) == 4 and isinstance(inst[0], str) and all(isinstance(p, list) for p in inst[1:])):
            raise TraceRejected(f"instruction {index} of the trace is malformed (expected [kind, inputs, attrs, outputs])")
        why = _dropped_hint(inst[0], inst[2])
        if why:
            _check_dropped(index, inst, scope)
            dropped.append(f"instruction {index} ({primitive_name(inst[0])} of the tuning hint {inst[2][0]!r}) "
                           f"was left out of your schedule, which is graded without it: {why}")
        else:
            _check_instruction(index, inst, scope, target)
        if inst[0] not in kinds:
            kinds.append(inst[0])
    _check_decisions(decisions, instructions)
    return TraceSummary(instructions=len(instructions), kinds=tuple(kinds), dropped=tuple(dropped),
                        notes=_unconsumed_hints(instructions, kinds))


def _unconsumed_hints(instructions: list, kinds: list[str]) -> tuple[str, ...]:
    """A note for each kind of accepted hint that the grader keeps but that does nothing without
    MetaSchedule's post-processors, which a trace printed before `enter_postproc()` never ran."""
    if "EnterPostproc" in kinds:
        return ()
    fetches = [i for i, inst in enumerate(instructions) if inst[0] == "Annotate" and inst[2] == ["meta_schedule.cooperative_fetch"]]
    if not fetches:
        return ()
    return (f"instruction{'s' if len(fetches) > 1 else ''} {', '.join(map(str, fetches))} (annotate of the tuning hint "
            "'meta_schedule.cooperative_fetch') kept, and doing nothing here: MetaSchedule's post-processor "
            "(RewriteCooperativeFetch) would bind each such cache_read's fused loop to the block's threads, and the "
            "grader runs no post-processor, so every thread copies the whole shared buffer itself. To share the "
            "copy, split that fused loop and bind its inner part to threadIdx.x (as lesson 3's classifier head "
            "does), or paste the trace MetaSchedule printed for a tuned schedule, whose lines after "
            "sch.enter_postproc() do it.",)


def replayable(trace: list) -> list:
    """A validated trace less the instructions validate_trace dropped (DROPPED_HINTS), with the
    sampling decisions renumbered to match: what TVM replays."""
    instructions, decisions = trace
    kept: list = []
    new_index: dict[int, int] = {}
    for index, inst in enumerate(instructions):
        if _dropped_hint(inst[0], inst[2]) is None:
            new_index[index] = len(kept)
            kept.append(inst)
    return [kept, [[new_index[index], value] for index, value in decisions]]


def _check_dropped(index: int, inst: list, scope: _Scope) -> None:
    """A dropped annotate or unannotate still names a block or loop, and defines nothing; its value
    is never read (it does not reach TVM)."""
    kind, inputs, attrs, outputs = inst
    where = f"instruction {index} ({primitive_name(kind)})"
    if len(inputs) != (2 if kind == "Annotate" else 1) or outputs:
        raise TraceRejected(f"{where} has {len(inputs)} inputs and {len(outputs)} outputs, which this primitive never has")
    _check_field(where, "input 0 (block_or_loop)", Ref(BLOCK_OR_LOOP, "block_or_loop"), inputs[0], scope)


def _refused_annotation(index: int, kind: str, inputs: list, key: str) -> str:
    """Why an annotate or unannotate of `key` is refused, which line to remove, and what the
    schedule loses without it."""
    target = inputs[0] if inputs and isinstance(inputs[0], str) and _RV_NAME.fullmatch(inputs[0]) else "..."
    line = (f'sch.annotate(block_or_loop={target}, ann_key="{key}", ann_val=...)' if kind == "Annotate"
            else f'sch.unannotate(block_or_loop={target}, ann_key="{key}")')
    loses = REFUSED_ANNOTATIONS.get(key, "an annotation asks TVM's lowering to treat the loop or block in some way, "
                                         "which this grader cannot vouch for; without it the schedule computes the "
                                         "same, lowered the ordinary way")
    return (f"instruction {index} ({primitive_name(kind)}): the annotation {_show(key)} is not one this grader accepts. "
            f"Remove the line {line} (as MetaSchedule prints it), and every sch.annotate or sch.unannotate with "
            f"that ann_key: {loses}. Accepted: {', '.join(ANNOTATIONS)}, and MetaSchedule's other meta_schedule.* "
            "hints, which are left out of the schedule with a note.")


def _check_instruction(index: int, inst: list, scope: _Scope, target: str) -> None:
    kind, inputs, attrs, outputs = inst
    if kind in ("Annotate", "Unannotate") and len(attrs) == 1 and isinstance(attrs[0], str) and attrs[0] not in ANNOTATIONS:
        raise TraceRejected(_refused_annotation(index, kind, inputs, attrs[0]))
    if kind in REFUSED_KINDS:
        raise TraceRejected(f"instruction {index}: {primitive_name(kind)} is not allowed: {REFUSED_KINDS[kind]}")
    spec = SCHEMAS.get(kind)
    if spec is None:
        raise TraceRejected(
            f"instruction {index}: {_show(primitive_name(kind))} is not one of the primitives this exercise "
            f"allows ({', '.join(sorted(primitive_name(k) for k in SCHEMAS))})"
        )
    where = f"instruction {index} ({primitive_name(kind)})"
    if spec.cuda_only and target != "cuda":
        raise TraceRejected(f"{where}: bind is for GPU schedules; this problem is compiled for the CPU")
    if len(attrs) != len(spec.attrs):
        raise TraceRejected(f"{where} has {len(attrs)} attributes; this primitive has {len(spec.attrs)}")
    for position, (field_type, value) in enumerate(zip(spec.attrs, attrs)):
        _check_field(where, f"attribute {position} ({field_type.name})", field_type, value, scope)
    fixed = len(spec.inputs)
    repeated = len(inputs) - fixed
    if len(inputs) < fixed or (spec.repeated is None and repeated) or repeated > MAX_LIST or (
        spec.repeated is not None and repeated < spec.min_repeated
    ):
        raise TraceRejected(f"{where} has {len(inputs)} inputs, which this primitive never has")
    for position, value in enumerate(inputs):
        field_type = spec.inputs[position] if position < fixed else spec.repeated
        if kind == "Annotate" and position == 1:
            field_type = ANNOTATIONS[attrs[0]]  # the key (attribute 0) was checked above
        _check_field(where, f"input {position} ({field_type.name})", field_type, value, scope)
    low, high = spec.output_count(repeated, attrs)
    if not low <= len(outputs) <= high:
        raise TraceRejected(f"{where} has {len(outputs)} outputs, which this primitive never has")
    for position, name in enumerate(outputs):
        if spec.outputs is None:  # a primitive with no outputs allows none (high is 0 above)
            raise TraceRejected(f"{where} has outputs, which this primitive never has")
        if not (isinstance(name, str) and _RV_NAME.fullmatch(name) and name[0] == _PREFIX[spec.outputs]):
            raise TraceRejected(f"{where}: output {position} must be a new {spec.outputs} name like "
                                f"{_PREFIX[spec.outputs]}7, got {_show(name)}")
        if name in scope.defined:
            raise TraceRejected(f"{where}: output {position} redefines {name}")
        scope.defined[name] = spec.outputs
    if spec.new_loops:
        scope.new_loops += len(outputs)
        if scope.new_loops > MAX_NEW_LOOPS:
            raise TraceRejected(f"the schedule creates more than {MAX_NEW_LOOPS} loops (at {where}); real schedules create a few dozen")


def _check_field(where: str, what: str, field_type, value, scope: _Scope) -> None:
    problem = field_type.check(value, scope)
    if problem:
        raise TraceRejected(f"{where}: {what} {problem}")


def _check_decisions(decisions: list, instructions: list) -> None:
    if len(decisions) > len(instructions):
        raise TraceRejected("the trace has more sampling decisions than instructions")
    seen = set()
    for position, decision in enumerate(decisions):
        if not (isinstance(decision, list) and len(decision) == 2):
            raise TraceRejected(f"sampling decision {position} is malformed (expected [instruction, value])")
        index, value = decision
        spec = SCHEMAS[instructions[index][0]] if _is_index(index, len(instructions)) else None
        if spec is None or spec.decision is None or index in seen:
            raise TraceRejected(f"sampling decision {position} does not belong to a sampling instruction")
        seen.add(index)
        _check_field(f"instruction {index} ({primitive_name(instructions[index][0])})", "decision",
                     spec.decision, value, _Scope())


def _is_index(value, size: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < size


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxstring, _SHORT.maxother = 2, 4, 40, 40


def _show(value) -> str:
    """A value from the trace, quoted and short (and shallow, however deep it nests), for a message."""
    return _SHORT.repr(value)


def primitive_name(kind: str) -> str:
    """'ReverseComputeAt' -> 'reverse_compute_at', the name students call."""
    special = {"GetSBlock": "get_sblock", "RFactor": "rfactor", "UnsafeSetDType": "unsafe_set_dtype"}
    if kind in special:
        return special[kind]
    out = []
    for i, ch in enumerate(kind[:MAX_NAME]):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
