"""Instant checks for the lessons' exercises: predict-then-run questions, small schedule puzzles,
a TensorIR function written in TVMScript and a design space written with sampling primitives.

Every check returns a `Feedback` (shown as a short Markdown note in a notebook, plain text in a
terminal) and never raises: an exercise cell left as it is, or holding a schedule that TVM
rejects, gets a note saying what is missing, and the notebook runs on. The checks compare what
TVM does (loop extents, where buffers are allocated after compaction, loop kinds, the machine
code, the measured verdicts) with what the exercise asks for; none of them grades speed, which
is the assignments' business (`autograder.check`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from . import ir_views, machine_code
from .tables import human_bytes

DONE, NOT_YET, NO_ANSWER = "done", "not yet", "no answer yet"


@dataclass
class Feedback:
    exercise: str
    status: str  # DONE, NOT_YET or NO_ANSWER
    lines: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.status == DONE

    def heading(self) -> str:
        mark = {DONE: "✓", NOT_YET: "✗", NO_ANSWER: "…"}[self.status]
        return f"{mark} {self.exercise}: {self.status}"

    def __str__(self) -> str:
        return "\n".join([self.heading(), *(f"  - {line}" for line in self.lines)])

    def _repr_markdown_(self) -> str:
        # A line may quote the grader or TVM ("<tile loop>"): angle brackets are text, not HTML.
        lines = (line.replace("<", "&lt;").replace(">", "&gt;") for line in self.lines)
        return "\n".join([f"**{self.heading()}**", "", *(f"- {line}" for line in lines)])

    def __repr__(self) -> str:
        return str(self)


def _error_line(error: BaseException) -> str:
    """The first informative lines of an exception (TVM's schedule errors print the whole IR)."""
    text = str(error).strip()
    message = [line for line in text.splitlines() if line.strip().startswith("Error message:")]
    first = message[0].strip() if message else (text.splitlines()[0] if text else "")
    return f"{type(error).__name__}: {first[:400]}"


def _apply(func, schedule: Callable):
    """(schedule, None), or (None, error line) when the student's function raised."""
    from tvm import s_tir

    sch = s_tir.Schedule(func)
    try:
        schedule(sch)
    except Exception as error:  # noqa: BLE001  (a student's code may raise anything)
        return None, _error_line(error)
    return sch, None


def _loops(sch, block: str) -> list:
    return [sch.get(loop) for loop in sch.get_loops(sch.get_sblock(block))]


def _names(loops) -> list[str]:
    return [str(loop.loop_var.name) for loop in loops]


def _extents(loops) -> list[int]:
    return [int(loop.extent) for loop in loops]


# --- exercise 1: predict a split ----------------------------------------------------------------


def split_prediction(func, block: str, loop: str, predicted: dict, exercise: str = "Exercise 1") -> Feedback:
    """`predicted` maps an inner factor to the (outer, inner) extents expected from
    `sch.split(loop, factors=[None, factor])` on `block`'s loop named `loop` (None: no prediction)."""
    from tvm import s_tir

    lines, right, answered = [], 0, 0
    for factor, guess in predicted.items():
        sch = s_tir.Schedule(func)
        loops = sch.get_loops(sch.get_sblock(block))
        target = next(loop_rv for loop_rv in loops if str(sch.get(loop_rv).loop_var.name) == loop)
        extent = int(sch.get(target).extent)
        outer, inner = sch.split(target, factors=[None, int(factor)])
        got = (int(sch.get(outer).extent), int(sch.get(inner).extent))
        guarded = "T.where(" in sch.mod.script()
        fact = f"TVM: {got[0]} x {got[1]}"
        fact += (f" = {got[0] * got[1]} iterations for a loop of {extent}: a `T.where` guard skips the last "
                 f"{got[0] * got[1] - extent}" if guarded else f" = {extent}, no guard")
        if guess is None:
            lines.append(f"factors=[None, {factor}]: no prediction yet. {fact}.")
            continue
        answered += 1
        ok = tuple(int(g) for g in guess) == got
        right += ok
        lines.append(f"factors=[None, {factor}]: you predicted {tuple(guess)}, {fact}: {'right' if ok else 'not what TVM did'}.")
    status = NO_ANSWER if not answered else DONE if right == len(predicted) else NOT_YET
    return Feedback(exercise, status, lines)


# --- exercise 2: a loop order --------------------------------------------------------------------


def loop_order(func, schedule: Callable, block: str, expected: list[int], names: list[str] | None = None,
               exercise: str = "Exercise 2") -> Feedback:
    """Does `schedule` leave `block` under loops with exactly the extents `expected` and, where
    `names` is given, exactly those loops (by TVM's names: `yy_0` is the outer piece of `yy`),
    outermost first? Extents alone are not enough: 32-row x 8-column tiles with the columns
    outermost have the extents of 8 x 32 tiles with the rows outermost."""
    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, [f"your schedule raised {error}"])
    loops = _loops(sch, block)
    got, got_names = _extents(loops), _names(loops)
    shown = ", ".join(f"{name} {extent}" for name, extent in zip(got_names, got))
    if got == list(expected) and (names is None or got_names == list(names)):
        return Feedback(exercise, DONE, [f"`{block}` runs under loops {shown}, as asked."])
    untouched = got == _extents(_loops(_apply(func, lambda s: None)[0], block))
    wanted = ", ".join(f"{name} {extent}" for name, extent in zip(names, expected)) if names else ", ".join(map(str, expected))
    lines = [f"`{block}` runs under loops {shown}; asked for {wanted}."]
    if got == list(expected):
        lines.append("The extents are right but not the loops: check which loop you split by which factor "
                     "(rows are `yy`, columns `xx`) and which pieces `sch.reorder(...)` puts outermost.")
    elif sorted(got) == sorted(expected):
        lines.append("The right loops, in another order: `sch.reorder(...)` takes them outermost first.")
    elif len(got) != len(expected):
        lines.append(f"{len(got)} loops where {len(expected)} are asked for: each `sch.split` turns one loop into two.")
    return Feedback(exercise, NO_ANSWER if untouched else NOT_YET, lines)


# --- exercises 3 and 4: a fused tile, then a vectorised one --------------------------------------


def _allocations(sch, target) -> dict:
    return {a.buffer: a for a in ir_views.allocations(sch.mod["main"], target)}


def _runs_correctly(sch, target, data, device) -> tuple[bool, str]:
    import tvm

    arguments = data.primfunc_arguments(device)
    try:
        tvm.compile(sch.mod, target)["main"](*arguments)
    except Exception as error:  # noqa: BLE001
        return False, f"it did not compile or run: {_error_line(error)}"
    error = data.max_error(arguments[-1])
    return data.is_correct(arguments[-1]), f"largest error against the reference {error:.1e}"


def _fusion_lines(sch, target, buffers: tuple[str, ...], limit: int) -> tuple[bool, list[str]]:
    allocations = _allocations(sch, target)
    ok, lines = True, []
    for name in buffers:
        found = allocations.get(name)
        if found is None:
            lines.append(f"`{name}` is gone (inlined): nothing to keep in cache.")
        elif not found.inside:
            ok = False
            lines.append(f"`{name}` is still allocated for the whole function ({human_bytes(found.nbytes)}): "
                         f"the block that reads it does not run inside the tile yet.")
        elif found.nbytes > limit:
            ok = False
            lines.append(f"`{name}` is allocated under `for {found.inside}` but is {human_bytes(found.nbytes)}, "
                         f"more than one tile's {human_bytes(limit)}.")
        else:
            lines.append(f"`{name}`: {' x '.join(map(str, found.shape))}, {human_bytes(found.nbytes)}, under `for {found.inside}`.")
    return ok, lines


INTERMEDIATES = ("conv2d_nchw_intermediate", "T_add_intermediate")


def fused_tile(func, schedule: Callable, target, data, device, tile_bytes: int, exercise: str = "Exercise 3") -> Feedback:
    """Are the conv's and the add's intermediates tile-sized after compaction, and is the output right?"""
    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, [f"your schedule raised {error}"])
    fused, lines = _fusion_lines(sch, target, INTERMEDIATES, tile_bytes)
    correct, line = _runs_correctly(sch, target, data, device)
    lines.append(("Output correct: " if correct else "Output WRONG: ") + line + ".")
    if not fused:
        lines.append("Hint: `sch.reverse_compute_at(consumer_block, loop)` moves a consumer under a loop of its producer; "
                     "which loop makes it run once per tile?")
    return Feedback(exercise, DONE if fused and correct else NOT_YET, lines)


def _innermost_kind(sch, block: str) -> str:
    loops = _loops(sch, block)
    return str(loops[-1].kind) if loops else "none"


def _is_vectorised(kind: str) -> bool:
    return "vectorized" in kind.lower() or kind.strip() == "2"


def _along_width(sch, block: str) -> bool:
    """Does `block`'s innermost loop walk its output's last axis with step 1, and no other axis?
    Then neighbouring iterations write neighbouring elements (stride 1): a vector of them is one
    contiguous load or store, not a gather or scatter of elements a row apart."""
    from tvm.s_tir.dlight.analysis.common_analysis import get_sblockrealize
    from tvm.sym import detect_linear_equation

    block_rv = sch.get_sblock(block)
    realize = get_sblockrealize(sch, block_rv)
    inner = sch.get(sch.get_loops(block_rv)[-1]).loop_var
    steps = {}
    for iter_var, value in zip(realize.block.iter_vars, realize.iter_values):
        linear = detect_linear_equation(value, [inner])
        if not linear:  # not linear in the loop (a division, a modulo): not a plain stride
            return False
        if int(linear[0]) != 0:
            steps[iter_var.var] = int(linear[0])
    last = realize.block.writes[0].region[-1].min
    return len(steps) == 1 and any(var.same_as(last) and step == 1 for var, step in steps.items())


def vectorised_tile(func, schedule: Callable, target, data, device, tile_bytes: int, exercise: str = "Exercise 5") -> Feedback:
    """A fused tile (as in `fused_tile`) whose conv update and whose Add and ReLU run vectorised
    innermost loops along the output's width (stride 1 in memory: a vector of neighbouring
    pixels, not a gather of pixels a row apart); the machine code's gathers and scatters are
    counted (x86 only)."""
    import tvm

    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, [f"your schedule raised {error}"])
    fused, lines = _fusion_lines(sch, target, INTERMEDIATES, tile_bytes)
    blocks = [b for b in ("conv2d_nchw", "conv2d_nchw_update", "T_add", "compute") if _has_block(sch, b)]
    vectorised = contiguous = True
    for block in blocks:
        innermost = _loops(sch, block)[-1]
        name = str(innermost.loop_var.name)
        good = _is_vectorised(str(innermost.kind))
        along = _along_width(sch, block)
        vectorised &= good
        contiguous &= along or not good
        if good and not along:
            lines.append(f"innermost loop of `{block}`: `{name}`, vectorised, but it does not run along the row: neighbouring "
                         f"lanes are a row apart in memory, so each vector is a gather (or scatter), not one load.")
        else:
            lines.append(f"innermost loop of `{block}`: `{name}`, {'vectorised' if good else 'not vectorised'}.")
    correct, line = _runs_correctly(sch, target, data, device)
    lines.append(("Output correct: " if correct else "Output WRONG: ") + line + ".")
    if correct:
        counts = machine_code.classify(machine_code.instruction_counts(tvm.compile(sch.mod, target)))
        architecture = machine_code.target_architecture(target)
        if machine_code.is_x86(architecture):
            gathers = counts[machine_code.GATHER_CLASS]
            arithmetic = (f"{counts[machine_code.FMA_CLASS]} vector FMAs" if counts[machine_code.FMA_CLASS]
                          else f"no FMA, {counts[machine_code.SEPARATE_CLASS]} vector multiplies and adds")
            lines.append(f"machine code: {arithmetic}, {gathers} gathers and scatters"
                         + (" (each lane from an address of its own: see section 6)." if gathers else "."))
    if not vectorised:
        lines.append("Hint: `sch.vectorize(loop)` needs the loop innermost, and for the conv its iterations must be "
                     "independent: put the reduction loops (rc, ry, rx) outside the pixel loop you vectorise.")
    elif not contiguous:
        lines.append("Hint: vectorise the pixels of a tile row (the piece of `xx` for the conv, the last of the loops "
                     "`reverse_compute_at` gave Add and ReLU), whose neighbours are neighbours in memory.")
    return Feedback(exercise, DONE if fused and vectorised and contiguous and correct else NOT_YET, lines)


def _has_block(sch, name: str) -> bool:
    try:
        sch.get_sblock(name)
    except Exception:  # noqa: BLE001  (TVM raises its own error for a missing block)
        return False
    return True


# --- lesson 1: the fusion puzzle, a TensorIR function in TVMScript, a design space --------------


def _deepest_shared_loop(sch, producer: str, consumer: str) -> str | None:
    """The innermost loop of `producer`'s nest that `consumer` also runs under (None: at the root)."""
    shared = None
    for mine, theirs in zip(_loops(sch, producer), _loops(sch, consumer)):
        if not mine.same_as(theirs):
            break
        shared = str(mine.loop_var.name)
    return shared


def fusion_puzzle(result, func, schedule: Callable, block: str = "compute", tile_loop: str = "xx_0",
                  exercise: str = "Puzzle") -> Feedback:
    """Lesson 1's puzzle: `result` is `autograder.check(problem, schedule, measure_speed=False)`.
    Done when the grader's fusion check passes and `block` runs under the tile loop itself: a
    ReLU under the row loop `yy` also leaves the intermediates small enough for the grader, but
    it is not what the puzzle asks. When the grader stopped before its fusion check (the schedule
    raised, say), its status and messages are shown: they carry TVM's error."""
    fusion = result.check("fusion")
    if fusion is None:
        lines = [f"the grader stopped with status '{result.status}' before its fusion check:"]
        lines += [str(message) for message in result.messages[:3]] or ["(it gave no message)"]
        return Feedback(exercise, NOT_YET, lines)
    finding = fusion.message.split(". ")[0].rstrip(".")  # its finding; the hint after it is the puzzle's answer
    lines = [f"the grader's fusion check {'passed' if fusion.passed else 'did not pass'}: {finding}."]
    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, lines + [f"your schedule raised {error}"])
    where = _deepest_shared_loop(sch, "conv2d_nchw", block)
    if where == tile_loop:
        lines.append(f"`{block}` runs inside the tile loop `{tile_loop}`, once per tile, as asked.")
    elif where is None:
        lines.append(f"`{block}` still runs at the root, after the whole convolution.")
    else:
        lines.append(f"`{block}` runs under `{where}`, not under the tile loop `{tile_loop}`: it runs once per "
                     f"iteration of `{where}`, so its input is computed and kept for all the tiles inside it first.")
    status = DONE if fusion.passed and where == tile_loop else NO_ANSWER if where is None else NOT_YET
    return Feedback(exercise, status, lines)


def _block_kinds(func) -> list[str]:
    """Each block of `func` as `name (SSR)`: its iterators spatial (S) or reduction (R)."""
    from tvm import s_tir

    sch = s_tir.Schedule(func)
    shown = []
    for block_rv in sch.get_child_blocks(sch.get_sblock("root")):
        block = sch.get(block_rv)
        kinds = "".join("R" if int(iv.iter_type) == 2 else "S" for iv in block.iter_vars)
        shown.append(f"`{block.name_hint}` ({kinds})")
    return shown


def tensorir_function(func, reference, target, device, exercise: str = "Exercise (TVMScript)") -> Feedback:
    """Does the hand-written PrimFunc `func` take the same buffers as `reference` and compute
    relu(x @ w + b) (checked on random inputs against float64 NumPy)? The feedback names what
    a wrong output matches: the product alone, the product plus bias without the ReLU."""
    import numpy as np
    import tvm

    if not isinstance(func, tvm.tirx.PrimFunc):
        return Feedback(exercise, NOT_YET, [f"expected a PrimFunc (a function decorated with @T.prim_func), got {type(func).__name__}"])
    shapes = [tuple(int(d) for d in p.shape) for p in func.params]
    wanted = [tuple(int(d) for d in p.shape) for p in reference.params]
    lines = [f"blocks: {', '.join(_block_kinds(func)) or 'none'}."]
    if shapes != wanted:
        return Feedback(exercise, NOT_YET, lines + [f"its buffers have shapes {shapes}; the head's are {wanted} (x, w, b, output)."])
    rng = np.random.default_rng(7)
    x, w, b = (rng.standard_normal(shape, dtype=np.float32) for shape in wanted[:3])
    out = np.full(wanted[3], np.nan, dtype=np.float32)
    arguments = [tvm.runtime.tensor(a, device) for a in (x, w, b, out)]
    try:
        tvm.compile(tvm.IRModule({"main": func.with_attr("global_symbol", "main")}), target)["main"](*arguments)
    except Exception as error:  # noqa: BLE001  (the student's function may not compile)
        return Feedback(exercise, NOT_YET, lines + [f"it did not compile or run: {_error_line(error)}"])
    got = arguments[3].numpy().astype(np.float64)
    product = x.astype(np.float64) @ w.astype(np.float64)
    candidates = {"relu(x @ w + b)": np.maximum(product + b, 0.0), "x @ w + b, without the ReLU": product + b,
                  "x @ w, without the bias and the ReLU": product, "relu(x @ w), without the bias": np.maximum(product, 0.0)}
    close = {name: bool(np.allclose(got, value, rtol=1e-4, atol=1e-3)) for name, value in candidates.items()}
    if close["relu(x @ w + b)"]:
        error = float(np.max(np.abs(got - candidates["relu(x @ w + b)"])))
        return Feedback(exercise, DONE, lines + [f"it computes relu(x @ w + b): largest error {error:.1e} against float64."])
    matched = next((name for name, ok in close.items() if ok), None)
    if np.isnan(got).any():
        lines.append(f"{int(np.isnan(got).sum())} outputs were never written (still NaN): every output needs a store.")
    elif matched:
        lines.append(f"its output is {matched}.")
    else:
        lines.append("its output matches neither relu(x @ w + b) nor a step of it.")
    return Feedback(exercise, NOT_YET, lines)


def design_space(func, space: Callable, target, data, draws: int = 48, sampled: int = 1,
                 exercise: str = "Exercise (design space)") -> Feedback:
    """Lesson 1's design space for the classifier head: drawn `draws` times with different seeds,
    does it sample the tile of the matmul's loop number `sampled` (0: rows, 1: columns; its inner
    extent varies) and choose between loop orders (the order of the matmul's loops varies), and
    do its candidates compute the right thing? `data` is the head's `cost_model.HeadData`."""
    import tvm
    from tvm import s_tir

    fresh = s_tir.Schedule(func)
    name = str(fresh.get(fresh.get_loops(fresh.get_sblock("matmul"))[sampled]).loop_var.name)  # LegalizeOps: i0, i1, k
    distinct: dict[tuple, object] = {}
    for seed in range(1, draws + 1):
        sch = s_tir.Schedule(func, seed=seed)
        try:
            space(sch)
        except Exception as error:  # noqa: BLE001
            return Feedback(exercise, NOT_YET, [f"your design space raised {_error_line(error)} (seed {seed})"])
        loops = _loops(sch, "matmul_update" if _has_block(sch, "matmul_update") else "matmul")
        distinct.setdefault(tuple(zip(_names(loops), _extents(loops))), sch)
    tiles = sorted({dict(key).get(f"{name}_1") for key in distinct} - {None})
    orders = {tuple(name for name, _ in key) for key in distinct}
    lines = [f"{len(distinct)} distinct loop nests for `matmul` in {draws} draws."]
    lines.append(f"inner tiles of `{name}` (the loop you call j) drawn: {', '.join(map(str, tiles)) or 'none (it is not split)'}"
                 + ("" if len(tiles) > 1 else ": one value, so the search cannot choose it; sample it with "
                    "`sch.sample_perfect_tile(j, n=2, max_innermost_factor=...)`."))
    order_words = [" ".join(order) for order in sorted(orders)]
    lines.append(f"loop orders drawn: {len(orders)} ({'; '.join(order_words[:3])})"
                 + ("" if len(orders) > 1 else ": one, so the order is not a decision yet; draw it with "
                    "`sch.sample_categorical(...)` and reorder by the value drawn."))
    wrong = []
    for sch in list(distinct.values())[:3]:
        try:
            tvm.compile(sch.mod, target)["main"](*data.arguments)
        except Exception as error:  # noqa: BLE001
            return Feedback(exercise, NOT_YET, lines + [f"a candidate did not compile or run: {_error_line(error)}"])
        if not data.max_error() <= 1e-3 * max(1.0, float(abs(data.expected).max())):
            wrong.append(f"a candidate's output is wrong (largest error {data.max_error():.1e})")
    lines += wrong or ["the candidates checked compute relu(x @ w + b)."]
    status = DONE if len(tiles) > 1 and len(orders) > 1 and not wrong else NOT_YET
    return Feedback(exercise, status, lines)


# --- exercise 5: predict a verdict ---------------------------------------------------------------

VERDICTS = ("faster", "slower", "same")


def measured_verdict(comparison, name: str) -> str:
    """'faster', 'slower' or 'same' than the baseline, decided by the middle half of the rounds."""
    s = comparison.speedup(name)
    if s.q1 > 1.0:
        return "faster"
    if s.q3 < 1.0:
        return "slower"
    return "same"


def speed_prediction(predicted: dict, comparison, target=None, exercise: str = "Exercise 4") -> Feedback:
    """Compare predicted verdicts ('faster', 'slower', 'same' as the baseline) with the measured ones."""
    lines, right, answered, bad = [], 0, 0, []
    for name, guess in predicted.items():
        if name not in comparison.names:
            bad.append(name)
            continue
        s = comparison.speedup(name)
        verdict = measured_verdict(comparison, name)
        fact = f"measured {verdict} ({s.median:.2f}x, middle half {s.q1:.2f}x to {s.q3:.2f}x)"
        if guess is None:
            lines.append(f"'{name}': no prediction yet; {fact}.")
            continue
        guess = str(guess).strip().lower()
        if guess not in VERDICTS:
            lines.append(f"'{name}': {guess!r} is not one of {', '.join(VERDICTS)}; {fact}.")
            continue
        answered += 1
        right += guess == verdict
        lines.append(f"'{name}': you predicted {guess}, {fact}: {'right' if guess == verdict else 'not on this CPU'}.")
    if bad:
        lines.append(f"not among the builds timed: {', '.join(map(repr, bad))} (timed: {', '.join(comparison.names)}).")
    lines.append(_other_cpu_hint(target))
    status = NO_ANSWER if not answered else DONE if right == len(predicted) and not bad else NOT_YET
    return Feedback(exercise, status, lines)


def _other_cpu_hint(target) -> str:
    """Where the verdicts come from, and how to see another CPU's."""
    import os

    from ..engine.cpus import ENVIRONMENT

    mcpu = str(getattr(target, "attrs", {}).get("mcpu", "") or "") if target is not None else ""
    cpu = f" ({mcpu})" if mcpu else ""
    if os.environ.get(ENVIRONMENT):
        return (f"These verdicts are for code compiled for {ENVIRONMENT}={os.environ[ENVIRONMENT]}{cpu}, run on this "
                f"machine now; run the notebook without {ENVIRONMENT} to see what this machine's own CPU makes of them.")
    return (f"These verdicts are this CPU's{cpu}, measured now; run the notebook with {ENVIRONMENT}=haswell to see "
            "what an AVX2 core makes of the same schedules.")


# --- lesson 3, exercise 1: predict a kernel's resources ------------------------------------------


def kernel_prediction(predicted: dict, facts: dict, exercise: str = "Exercise 1") -> Feedback:
    """Compare predicted numbers (threads per block, shared bytes per block, barriers per thread...)
    with the ones read from the generated kernel (`facts`: the same keys)."""
    lines, right, answered = [], 0, 0
    for key, guess in predicted.items():
        if key not in facts:
            lines.append(f"{key!r}: not something this check reads (it reads {', '.join(map(repr, facts))}).")
            answered += 1
            continue
        if guess is None:
            lines.append(f"{key}: no prediction yet; the kernel has {facts[key]}.")
            continue
        answered += 1
        ok = guess == facts[key]
        right += ok
        lines.append(f"{key}: you predicted {guess}, the kernel has {facts[key]}: {'right' if ok else 'not this'}.")
    status = NO_ANSWER if not answered else DONE if right == len(predicted) else NOT_YET
    return Feedback(exercise, status, lines)


def gpu_binding(func, schedule: Callable, threads: int = 128, exercise: str = "Exercise 2") -> Feedback:
    """Check a schedule that binds the fused function to the GPU with `threads` threads per
    block: every block bound, the conv's kernel launched with that many threads, and its
    kernels right when run on the OpenCL device on this CPU (gpu.run_on_opencl), which any
    laptop has: the way the autograder checks GPU kernels where there is no GPU."""
    import tvm
    from tvm import s_tir

    from ..engine import checks, opencl
    from .gpu import run_on_opencl

    sch = s_tir.Schedule(func)
    try:
        schedule(sch)
    except Exception as error:  # noqa: BLE001  (a student's code may raise anything)
        return Feedback(exercise, NOT_YET, [f"your schedule raised {_error_line(error)}"])
    if all(inst.kind.name.startswith("Get") for inst in sch.trace.insts):  # nothing but get_sblock / get_loops
        return Feedback(exercise, NO_ANSWER, ["fill in the schedule: fuse, split, bind, reverse_compute_at"])
    binding = checks.check_binding(sch)
    if not binding.passed:
        return Feedback(exercise, NOT_YET, [binding.message])
    try:
        program = opencl.build_program(tvm.IRModule({"main": sch.mod["main"]}), "llvm")
    except Exception as error:  # noqa: BLE001
        return Feedback(exercise, NOT_YET, [f"TVM could not lower it for a GPU: {_error_line(error)}"])
    conv = max(program.stats, key=lambda s: s.global_read_bytes)
    lines = [f"{len(program.launches)} kernel launches; the conv's kernel runs {conv.threads_per_block} threads "
             f"in each of {conv.blocks} blocks"]
    if conv.threads_per_block != threads:
        return Feedback(exercise, NOT_YET, lines + [f"the exercise asks for {threads} threads per block"])
    from ..engine.measure import InfrastructureError, RunnerFailed

    try:
        run = run_on_opencl(sch.mod)
    except RunnerFailed as error:
        return Feedback(exercise, NOT_YET, lines + [f"its kernels failed on the OpenCL device ({error.status}): {error}"])
    except (InfrastructureError, opencl.BuildFailed, opencl.NotRunnable) as error:
        return Feedback(exercise, NOT_YET, lines + [f"its kernels could not be run here (not your code): {error}"])
    lines.append(f"run on {run.device}: {run.detail}")
    return Feedback(exercise, DONE if run.correct else NOT_YET, lines)
