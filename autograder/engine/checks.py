"""Structural checks on a scheduled PrimFunc: interface kept, fusion, GPU thread binding.

Fusion is judged from the IR after TVM's own buffer compaction: if Add and ReLU really run
inside the conv's tiles, `CompactBufferAllocation` shrinks the conv's output buffer to one
tile. That is the evidence behind "the tile stays in cache", and it does not depend on what
the student named anything.
"""
from __future__ import annotations

from dataclasses import dataclass

from .report import Check

# Blocks of the fused workload whose outputs fusion should shrink to a tile.
FUSED_PRODUCERS = ("conv2d_nchw", "T_add")


def walk(node, visit) -> None:
    """Call `visit` on every statement under `node`, outermost first (TensorIR has no Python
    visitor in 0.27). A loop, not recursion: a submission decides how deep its nests go."""
    stack = [node]
    while stack:
        node = stack.pop()
        if node is None or isinstance(node, (int, float, str)):
            continue
        visit(node)
        children = [getattr(node, attr, None) for attr in ("block", "init", "body", "then_case", "else_case")]
        seq = getattr(node, "seq", None)
        if seq is not None:
            children = list(seq) + children
        stack.extend(reversed(children))


def blocks(func) -> list:
    """Every SBlock in `func`, outermost first (the implicit root included)."""
    found = []
    walk(func.body, lambda n: found.append(n) if type(n).__name__ == "SBlock" else None)
    return found


def written_buffer_names(func, block_names) -> dict[str, str]:
    """block name -> name of the buffer it writes, for the named blocks of `func`."""
    return {b.name_hint: b.writes[0].source.name for b in blocks(func) if b.name_hint in block_names and b.writes}


def _elements(shape) -> int:
    count = 1
    for extent in shape:
        count *= int(extent)
    return count


def _element_bytes(buffer) -> int:
    return int(buffer.dtype.bits) * int(buffer.dtype.lanes) // 8


COMPACTION_PASSES = (
    "LowerInitBlock",
    "PlanAndUpdateBufferAllocationLocation",
    "ConvertBlocksToOpaque",
    "CompactBufferAllocation",
)


def compacted_module(func, target):
    """`func` after TVM's buffer-compaction passes: each buffer sized to the region it is used in."""
    import tvm
    from tvm import s_tir, tirx

    mod = tirx.transform.BindTarget(target)(tvm.IRModule({"main": func}))
    for name in COMPACTION_PASSES:
        mod = getattr(s_tir.transform, name)()(mod)
    return mod


@dataclass(frozen=True)
class Allocation:
    """One buffer as lowering allocates it: `bytes` is the memory it spans (its flattened
    extent, strides and alignment included); `tile_bytes` what its compacted shape holds."""

    name: str
    bytes: int
    tile_bytes: int
    shape: tuple[int, ...]
    strides: tuple[int, ...]

    @property
    def padded(self) -> bool:
        """Its strides spread it over more memory than its shape needs (storage_align)."""
        return self.bytes > self.tile_bytes


def allocations(func, target) -> dict[str, Allocation]:
    """Every buffer the function allocates, as lowering lays it out: after TVM's compaction
    (each buffer shrunk to the region it is used in: inside a loop, one iteration's tile), then
    its blocks lowered and its buffers flattened, which is where strides (storage_align's) turn
    into the memory an allocation spans. A buffer allocated in several places counts at its
    largest."""
    from tvm import s_tir, tirx

    compacted = compacted_module(func, target)
    shapes: dict[str, object] = {}
    for block in blocks(compacted["main"]):
        for buffer in block.alloc_buffers:
            shapes.setdefault(buffer.name, buffer)
    try:
        flattened = tirx.transform.FlattenBuffer()(s_tir.transform.LowerOpaqueBlock()(compacted))
    except Exception:  # noqa: BLE001  (the compile says why it cannot lower: sized from the strides here)
        return {name: _from_strides(buffer) for name, buffer in shapes.items()}
    found: dict[str, Allocation] = {}

    def visit(node):
        if type(node).__name__ != "AllocBuffer":
            return
        buffer = node.buffer
        spans = _elements(buffer.shape) * _element_bytes(buffer)
        shaped = shapes.get(buffer.name, buffer)
        allocation = Allocation(buffer.name, spans, _elements(shaped.shape) * _element_bytes(shaped),
                                tuple(int(d) for d in shaped.shape), tuple(int(s) for s in shaped.strides))
        if buffer.name not in found or found[buffer.name].bytes < spans:
            found[buffer.name] = allocation

    walk(flattened["main"].body, visit)
    return found


def _from_strides(buffer) -> Allocation:
    """A compacted buffer's allocation as flattening lays it out: its outermost extent times its
    stride, or its shape where it has no strides."""
    shape = tuple(int(d) for d in buffer.shape)
    strides = tuple(int(s) for s in buffer.strides)
    elements = max((extent * stride for extent, stride in zip(shape, strides)), default=0) if strides else _elements(shape)
    return Allocation(buffer.name, elements * _element_bytes(buffer), _elements(shape) * _element_bytes(buffer), shape, strides)


def compacted_buffer_bytes(func, target) -> dict[str, int]:
    """Bytes of memory every buffer the function allocates spans, after TVM shrinks each to the
    region used (`allocations`). A buffer allocated inside a loop is sized for one iteration
    of it: one tile."""
    return {name: allocation.bytes for name, allocation in allocations(func, target).items()}


def human_bytes(count: float) -> str:
    """1536 -> '1.5 KiB'; exact bytes below 1 KiB."""
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= size:
            return f"{count / size:.1f} {unit}"
    return f"{int(count)} B"


def check_interface(original, scheduled) -> Check:
    """The scheduled function takes and returns exactly what the workload does."""

    def signature(func):
        return [(tuple(int(d) for d in p.shape), str(p.dtype)) for p in func.params]

    if signature(original) != signature(scheduled):
        return Check("interface", False, "the schedule changed the function's inputs or output")
    return Check("interface", True, "inputs and output unchanged")


def _derived_from(name: str, origin: str) -> bool:
    """Whether a buffer is `origin` or a copy a primitive made of it: cache_read/cache_write and
    set_scope add "_<scope>", reindex "_reindex", rfactor ".rf"."""
    return name == origin or name.startswith((origin + "_", origin + "."))


def check_fusion(original, scheduled, target, budget_bytes: int) -> Check:
    """Every buffer the scheduled function allocates, whatever primitive made it, must be
    tile-sized as lowering lays it out (`allocations`: compacted, then flattened with its
    strides), except the inputs, the workload's own padding and copies of them: the conv's and
    the bias-add's results live only a tile at a time. A result no buffer holds any more is
    either inlined into a block that still computes it, or gone: said as such."""
    watched = written_buffer_names(original, FUSED_PRODUCERS)
    full = compacted_buffer_bytes(original, target)
    allocated = allocations(scheduled, target)
    after = {name: allocation.bytes for name, allocation in allocated.items()}
    # What is not an intermediate of the fused chain: the parameters and the padding the workload
    # allocates itself (pad_temp), which fusion does not ask to shrink.
    exempt = {p.name for p in original.params} | {name for name in full if name not in watched.values()}
    parts: list[str] = []
    too_big: list[tuple[str, str, int]] = []
    gone: list[str] = []
    for block, buffer in watched.items():
        fate = _fate_of_block(original, scheduled, block)
        copies = [allocated[name] for name in allocated if _derived_from(name, buffer)]
        if not copies:
            if fate is None:
                parts.append(f"{buffer}: not allocated, '{block}' writes {_written_by(scheduled, block)} directly")
            elif fate.startswith("inlined"):
                parts.append(f"{buffer}: not allocated, {fate}")
            else:
                parts.append(f"{buffer}: not allocated, and {fate}")
                gone.append(fate)
            continue
        largest = max(copies, key=lambda a: a.bytes)
        parts.append(f"{buffer}: {_allocation_text(largest)} per tile (whole tensor {human_bytes(full[buffer])})"
                     + (f"; {fate}" if fate and not fate.startswith("inlined") else ""))
        if fate and not fate.startswith("inlined"):
            gone.append(fate)
        too_big.extend((block, a.name, a.bytes) for a in copies if a.bytes > budget_bytes)
    too_big.extend(("", name, n) for name, n in after.items()
                   if n > budget_bytes and not any(_derived_from(name, origin) for origin in exempt | set(watched.values())))
    if gone and not too_big:
        return Check("fusion", False, "; ".join(parts) + ": a computation the chain needs is no longer in "
                            "the scheduled function, so nothing is fused" + _decompose_padding_note(scheduled))
    if not too_big:
        return Check("fusion", True, "; ".join(parts) + f"; budget {human_bytes(budget_bytes)}")
    too_big.sort(key=lambda entry: -entry[2])
    block, buffer, size = too_big[0]
    size_text = _allocation_text(allocated[buffer])
    if buffer not in watched.values():
        return Check(
            "fusion",
            False,
            f"after lowering, the schedule allocates {buffer}, {size_text}, over the {human_bytes(budget_bytes)} "
            "tile budget: every buffer of the fused chain must hold one tile, including the ones a primitive "
            "adds (rfactor, cache_read, cache_write, reindex); a whole-tensor copy keeps the intermediate out of cache.",
        )
    if allocated[buffer].padded and allocated[buffer].tile_bytes <= budget_bytes:
        return Check(
            "fusion",
            False,
            f"after lowering, {buffer} (written by '{block}') is {size_text}, over the {human_bytes(budget_bytes)} tile "
            "budget: the tile itself fits, but the alignment spreads it over memory that the cache must hold as well. "
            "Align to a smaller factor (a multiple of the cache line, 64 bytes, is what alignment is for), or not at all.",
        )
    return Check(
        "fusion",
        False,
        f"after lowering, {buffer} (written by '{block}') is still {size_text}, over the "
        f"{human_bytes(budget_bytes)} tile budget: its consumers do not run inside the conv's tile loops. "
        "Split the conv's spatial loops, reorder the tile loops outermost, then "
        "sch.reverse_compute_at(sch.get_sblock('T_add'), <tile loop>) and the same for 'compute'."
        + (
            " On a GPU a global buffer is shared by all thread blocks and never shrinks: with 'T_add' and "
            "'compute' under the loop bound to threadIdx, each thread reads only its own intermediates: keep them in "
            "its registers, sch.set_scope(sch.get_sblock('conv2d_nchw'), 0, 'local') and the same for 'T_add' "
            "('shared' is for data that several threads of a block read, such as a staged input tile)."
            if target.kind.name == "cuda"
            else ""
        ),
    )


def _allocation_text(allocation: Allocation) -> str:
    """Its size as allocated; where strides spread it wider than its shape, both, and why."""
    if not allocation.padded:
        return human_bytes(allocation.bytes)
    shape = "x".join(str(d) for d in allocation.shape)
    return (f"{human_bytes(allocation.bytes)} allocated for a {shape} tile of {human_bytes(allocation.tile_bytes)} "
            f"(its strides {', '.join(str(s) for s in allocation.strides)}, which storage_align set, spread it out)")


def _written_by(scheduled, name: str) -> str:
    """What a block of the scheduled function writes: the function's output, or a buffer's name."""
    written = written_buffer_names(scheduled, (name,)).get(name, "?")
    return "the function's output" if written == scheduled.params[-1].name else written


def _fate_of_block(original, scheduled, name: str) -> str | None:
    """What became of one of the workload's blocks that the scheduled function no longer has
    (None where it still has it): inlined into the blocks that now read its inputs, or gone,
    nothing computing its values any more."""
    remaining = blocks(scheduled)
    if any(b.name_hint == name for b in remaining):
        return None
    params = {p.name for p in original.params}
    source = next((b for b in blocks(original) if b.name_hint == name), None)
    inputs = sorted({r.source.name for r in source.reads if r.source.name in params}) if source is not None else []
    readers = [b.name_hint for b in remaining
               if inputs and all(any(_derived_from(r.source.name, i) for r in b.reads) for i in inputs)]
    if readers:
        return f"inlined into '{readers[0]}' (block '{name}' is gone; '{readers[0]}' now reads {', '.join(inputs)} itself)"
    left = ", ".join(repr(b.name_hint) for b in remaining if b.name_hint != "root") or "none"
    return (f"block '{name}' is gone and nothing computes its values any more: no block left reads "
            f"{', '.join(inputs) or 'its inputs'} (blocks left: {left})")


def _decompose_padding_note(scheduled) -> str:
    """decompose_padding given a loop that other blocks share with the padding removes them
    (TVM 0.27): said where its fill block is there to show it ran."""
    if not any(b.name_hint.endswith("_pad_const") for b in blocks(scheduled)):
        return ""
    return (". The schedule used decompose_padding: given a loop that the padding shares with other blocks, "
            "TVM removes those blocks; give it one of the padding's own loops (one under the shared ones)")



# The widest vector the grader compiles. `vectorize` turns a loop into one vector operation of as
# many lanes as the loop has iterations. TVM keeps a vector's lane count in 16 bits, the top one
# marking a scalable vector: past 32767 lanes the type is misread (LLVM aborts, or builds a vector
# of another width), and long before that LLVM's work on one operation grows steeply with its
# width, into minutes. 512 float32 lanes fill the whole vector register file of the widest CPU
# this course compiles for (32 AVX-512 registers of 16 lanes), and a GPU thread's widest access is
# 4 lanes (the gpu-limits check): nothing wider can be faster anywhere, while an image row of any
# variant (at most 258 pixels with the padding) stays below it.
MAX_VECTOR_LANES = 512
TVM_MAX_LANES = (1 << 15) - 1


def vectorized_loops(func) -> list[tuple[str, int]]:
    """(the innermost block under it, lanes) for every vectorized loop of `func`, outermost first."""
    from tvm import tirx

    found = []

    def visit(node):
        if type(node).__name__ == "For" and node.kind == tirx.ForKind.VECTORIZED:
            inner = blocks_under(node)
            found.append((inner[0] if inner else "?", int(node.extent) if hasattr(node.extent, "value") else -1))

    walk(func.body, visit)
    return found


def blocks_under(node) -> list[str]:
    names = []
    walk(node, lambda n: names.append(n.name_hint) if type(n).__name__ == "SBlock" else None)
    return names


def check_vector_width(scheduled) -> Check:
    """No vectorized loop wider than MAX_VECTOR_LANES (or of an extent not known when compiling)."""
    loops = vectorized_loops(scheduled)
    widest = max((lanes for _, lanes in loops), default=0)
    unknown = [block for block, lanes in loops if lanes < 0]
    if unknown:
        return Check("vector-width", False, f"a vectorized loop around block '{unknown[0]}' has no constant extent: "
                            "a vector's width must be known when compiling")
    if widest <= MAX_VECTOR_LANES:
        return Check("vector-width", True, f"widest vector {widest} lanes (at most {MAX_VECTOR_LANES})" if loops
                            else "no vectorized loop")
    block = next(block for block, lanes in loops if lanes == widest)
    beyond = (f" TVM cannot even represent a vector of over {TVM_MAX_LANES} lanes: compiled, it would crash LLVM "
              "or come out another width." if widest > TVM_MAX_LANES else "")
    return Check(
        "vector-width",
        False,
        f"the schedule vectorizes a loop of {widest} iterations around block '{block}': one vector operation of "
        f"{widest} lanes, over the {MAX_VECTOR_LANES} the grader compiles.{beyond} No processor has registers for such a "
        f"vector ({MAX_VECTOR_LANES} float32 lanes fill all 32 AVX-512 registers; a GPU thread's widest access is 4), "
        "and LLVM's time to compile one grows steeply with its width. Vectorize an inner loop of a split instead, "
        "e.g. _, inner = sch.split(loop, [None, 16]); sch.vectorize(inner).",
    )


def compile_load(func) -> dict:
    """What in a scheduled function makes LLVM work hardest: its widest vector (lanes, and the
    block under it) and the most iterations one nest of unrolled loops copies its body into."""
    from tvm import tirx

    widest = max(vectorized_loops(func), key=lambda entry: entry[1], default=("", 0))
    unrolled, stack = 1, [(func.body, 1)]
    while stack:
        node, copies = stack.pop()
        if node is None or isinstance(node, (int, float, str)):
            continue
        if type(node).__name__ == "For" and node.kind == tirx.ForKind.UNROLLED and hasattr(node.extent, "value"):
            copies *= max(1, int(node.extent))
            unrolled = max(unrolled, copies)
        children = [getattr(node, attr, None) for attr in ("block", "init", "body", "then_case", "else_case")]
        children += list(getattr(node, "seq", None) or [])
        stack.extend((child, copies) for child in children)
    return {"widest_vector": widest[1], "vector_block": widest[0], "unrolled_copies": unrolled}

GPU_THREAD_PREFIXES = ("blockIdx.", "threadIdx.")


def thread_tags(schedule, block_name: str) -> list[str]:
    """The thread axes the loops around a block are bound to (blockIdx.x, vthread.x, ...)."""
    from tvm import tirx

    tags = []
    for loop in schedule.get_loops(schedule.get_sblock(block_name)):
        node = schedule.get(loop)
        if node.kind == tirx.ForKind.THREAD_BINDING and node.thread_binding is not None:
            tags.append(str(node.thread_binding.thread_tag))
    return tags


def unbound_blocks(schedule) -> list[str]:
    """Blocks with no enclosing loop bound to a GPU thread axis (blockIdx.* or threadIdx.*).

    A virtual thread (vthread.*) is not one: it becomes a loop inside a GPU thread, and a
    block under vthreads alone becomes a loop on the host, over device memory.
    """
    return [
        block.name_hint
        for block in blocks(schedule.mod["main"])
        if block.name_hint != "root"
        and not any(tag.startswith(GPU_THREAD_PREFIXES) for tag in thread_tags(schedule, block.name_hint))
    ]


def check_binding(schedule) -> Check:
    unbound = unbound_blocks(schedule)
    if not unbound:
        return Check("binding", True, "every block runs on GPU threads")
    first = unbound[0]
    if thread_tags(schedule, first):
        return Check(
            "binding",
            False,
            f"block '{first}' is bound only to virtual threads ({', '.join(thread_tags(schedule, first))}): a "
            "vthread is a loop inside one GPU thread, not a GPU thread, so TVM would run the block on the host. "
            "Bind an outer loop to blockIdx.x and an inner one to threadIdx.x (vthreads may sit between them).",
        )
    return Check(
        "binding",
        False,
        f"block '{first}' is not bound to GPU threads"
        + (f" (nor are {', '.join(repr(b) for b in unbound[1:])})" if len(unbound) > 1 else "")
        + ": TVM would silently compile it for the host CPU. Bind its loops, for example "
        f"b = sch.get_sblock('{first}'); bx, tx = sch.split(sch.fuse(*sch.get_loops(b)), [None, 256]); "
        f"sch.bind(bx, 'blockIdx.x'); sch.bind(tx, 'threadIdx.x'); {_move_under_bound_loop(schedule, first)}",
    )


def _move_under_bound_loop(schedule, block_name: str) -> str:
    """The other way to bind a block: move it under a bound loop of its neighbour, with the primitive
    that fits where it sits in the chain (compute_at moves a producer into its consumer's loop,
    reverse_compute_at a consumer into its producer's)."""
    try:
        block = schedule.get_sblock(block_name)
        producers = [schedule.get(b).name_hint for b in schedule.get_producers(block)]
        consumers = [schedule.get(b).name_hint for b in schedule.get_consumers(block)]
    except Exception:  # noqa: BLE001  (a hint: never worth failing the check over)
        producers = consumers = []
    if consumers and not producers:
        return (f"or, since it produces what '{consumers[0]}' reads, move it under a loop of '{consumers[0]}' bound to a "
                f"thread: sch.compute_at(b, <a bound loop of '{consumers[0]}'>).")
    if producers and not consumers:
        return (f"or, since it reads what '{producers[0]}' produces, move it under a loop of '{producers[0]}' bound to a "
                f"thread: sch.reverse_compute_at(b, <a bound loop of '{producers[0]}'>).")
    return ("or move it under a bound loop of a neighbour: sch.compute_at(b, loop) into a consumer's, "
            "sch.reverse_compute_at(b, loop) into a producer's.")


def host_functions_touching_memory(scheduled, target) -> list[str]:
    """After lowering, the host-side functions that still load or store a buffer themselves.

    On a GPU every tensor the function gets lives in device memory, so a host function that
    reads or writes one is a loop that escaped the kernels. Found by TVM's own serialiser (its
    node types), since 0.27 has no Python visitor for TIR expressions.
    """
    import json

    import tvm
    from tvm import tirx

    mod = tirx.transform.BindTarget(target)(tvm.IRModule({"main": scheduled}))
    lowered = tvm.tirx.get_tir_pipeline("s_tir")[0](mod)
    touching = []
    for global_var, func in lowered.functions.items():
        func_target = func.attrs.get("target") if isinstance(func, tirx.PrimFunc) and func.attrs else None
        if func_target is None or func_target.kind.name == "cuda":
            continue
        kinds = {node.get("type") for node in json.loads(tvm.ir.save_json(func))["nodes"]}
        if kinds & {"tirx.BufferLoad", "tirx.BufferStore"}:
            touching.append(global_var.name_hint)
    return touching


def check_host_touches_no_device_buffer(scheduled, target) -> Check:
    touching = host_functions_touching_memory(scheduled, target)
    if not touching:
        return Check("host-code", True, "after lowering, the host only launches kernels")
    return Check(
        "host-code",
        False,
        f"after lowering, host function '{touching[0]}' still reads or writes tensors that live in GPU "
        "memory: part of the computation escaped the kernels. Make sure every loop nest is under a loop "
        "bound to blockIdx and threadIdx.",
    )


# Local memory is per thread: 512 KiB on every CUDA GPU since Fermi (ptxas refuses more; `nvcc -ptx`
# never runs ptxas, so nothing else would catch it). TVM's verifier counts a thread's own
# `local` allocations under this name.
MAX_LOCAL_BYTES_PER_THREAD = 512 * 1024
GPU_LIMITS = {"max_threads_per_block": 1024, "max_shared_memory_per_block": 48 * 1024,
              "max_local_memory_per_block": MAX_LOCAL_BYTES_PER_THREAD, "max_vector_bytes": 16}


def check_gpu_limits(scheduled, target) -> Check:
    """Threads per block and shared memory within what every CUDA GPU since Kepler allows."""
    import tvm
    from tvm import s_tir, tirx

    mod = tirx.transform.BindTarget(target)(tvm.IRModule({"main": scheduled}))
    lowered = tvm.tirx.get_tir_pipeline("s_tir")[0](mod)  # with a host target, kernels are split out
    ok = all(
        s_tir.analysis.verify_gpu_code(func, GPU_LIMITS)
        for func in lowered.functions.values()
        if isinstance(func, tirx.PrimFunc)
    )
    if ok:
        return Check("gpu-limits", True, "at most 1024 threads and 48 KiB shared memory per block, 512 KiB of local memory per thread")
    return Check(
        "gpu-limits",
        False,
        "a kernel exceeds the GPU's limits (more than 1024 threads or 48 KiB of shared memory per block, "
        "more than 512 KiB of local memory per thread, or vectors wider than 16 bytes): split the loops you "
        "bind to threadIdx, and cache into 'local' only what one thread reads (compute_at its own thread loop)",
    )
