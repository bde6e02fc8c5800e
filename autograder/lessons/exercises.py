"""Instant checks for lesson 2's exercises: predict-then-run questions and small schedule puzzles.

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
        return "\n".join([f"**{self.heading()}**", "", *(f"- {line}" for line in self.lines)])

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
        target = next(l for l in loops if str(sch.get(l).loop_var.name) == loop)
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


def loop_order(func, schedule: Callable, block: str, expected: list[int], exercise: str = "Exercise 2") -> Feedback:
    """Does `schedule` leave `block` under loops with exactly the extents `expected`, outermost first?"""
    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, [f"your schedule raised {error}"])
    loops = _loops(sch, block)
    got = _extents(loops)
    shown = ", ".join(f"{name} {extent}" for name, extent in zip(_names(loops), got))
    if got == list(expected):
        return Feedback(exercise, DONE, [f"`{block}` runs under loops {shown}, as asked."])
    untouched = got == _extents(_loops(_apply(func, lambda s: None)[0], block))
    lines = [f"`{block}` runs under loops {shown}; asked for extents {', '.join(map(str, expected))}."]
    if sorted(got) == sorted(expected):
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


def vectorised_tile(func, schedule: Callable, target, data, device, tile_bytes: int, exercise: str = "Exercise 5") -> Feedback:
    """A fused tile (as in `fused_tile`) whose conv update and whose Add and ReLU run vectorised
    innermost loops; the machine code's gathers and scatters are counted (x86 only)."""
    import tvm

    sch, error = _apply(func, schedule)
    if error:
        return Feedback(exercise, NOT_YET, [f"your schedule raised {error}"])
    fused, lines = _fusion_lines(sch, target, INTERMEDIATES, tile_bytes)
    blocks = [b for b in ("conv2d_nchw", "conv2d_nchw_update", "T_add", "compute") if _has_block(sch, b)]
    vectorised = True
    for block in blocks:
        kind = _innermost_kind(sch, block)
        good = _is_vectorised(kind)
        vectorised &= good
        lines.append(f"innermost loop of `{block}`: {'vectorised' if good else 'not vectorised'}.")
    correct, line = _runs_correctly(sch, target, data, device)
    lines.append(("Output correct: " if correct else "Output WRONG: ") + line + ".")
    if correct:
        counts = machine_code.classify(machine_code.instruction_counts(tvm.compile(sch.mod, target)))
        architecture = machine_code.target_architecture(target)
        if machine_code.is_x86(architecture):
            gathers = counts["gathers and scatters"]
            lines.append(f"machine code: {counts['fused multiply-adds on vectors (vfmadd...ps)']} vector FMAs, {gathers} gathers and scatters"
                         + (" (each lane from an address of its own: see section 6)." if gathers else "."))
    if not vectorised:
        lines.append("Hint: `sch.vectorize(loop)` needs the loop innermost, and for the conv its iterations must be "
                     "independent: put the reduction loops (rc, ry, rx) outside the pixel loop you vectorise.")
    return Feedback(exercise, DONE if fused and vectorised and correct else NOT_YET, lines)


def _has_block(sch, name: str) -> bool:
    try:
        sch.get_sblock(name)
    except Exception:  # noqa: BLE001  (TVM raises its own error for a missing block)
        return False
    return True


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


# --- exercise 6: predict a kernel's resources ----------------------------------------------------


def kernel_prediction(predicted: dict, facts: dict, exercise: str = "Exercise 6") -> Feedback:
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
