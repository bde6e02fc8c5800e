"""Where in memory a timing round runs: each round at its own stack position, drawn at random.

The same machine code can run at two speeds depending on where the process's stack happens to
lie, fixed for the life of the process: measured on a 2-core Zen 4, the register-blocked
solution compiled for haswell ran at 1.72x or at 1.85x the yardstick from one fresh process to
the next, 8 processes each drawing one of the two; inside one process every round, fresh tensors
and tensors at any offset into their pages all kept the process's speed, and so did a fork of it.
Shifting the stack moved it: in steps of 16 bytes, it alternates with the stack's address modulo
32 (AVX2's vector width). On an Intel Emerald Rapids, compiled for AVX-512, a draw fixed for a
process's life gave 0.51 or 0.64 ms a call, 1.38x or 1.09x the yardstick, a band apart (issue
43; its cause there was not measured, and this covers the stack's). This is the measurement bias
of Mytkowicz et al., "Producing wrong data without doing anything obviously wrong" (ASPLOS 2009):
the placement, not the code. A grading timed in one placement reports that placement's speed
with an interval as tight as if it were the code's, and a fork server (whose children inherit its
stack) would give every grading it serves the same draw.

So the runner times each round at a stack position of its own: a ctypes callback declared with
`step` unused arguments, which CPython lays out on the stack below the callback (measured on
CPython 3.11: 32 to 112 bytes a step), runs the round. The steps span more than 4 KiB, every
alignment the vector widths care about and a page's worth of offsets (4K aliasing, L1 sets). A
round is then one draw of placement and noise together, so the rounds' distribution-free
interval (bench.BandRule) is an interval across placements, and a band is decided only when the
placements agree.

The steps are not drawn uniformly: 36 of the 64 put the stack in two of the four alignment
classes modulo 64 and 28 in the other two, so where two classes run at one speed and two at
another, a uniform draw's median would follow the process's own alignment again. `draw` goes in
cycles that visit each class once (a random step within it), from offsets measured once per
interpreter (`stack_offsets`), and the rounds end only after whole cycles (bench.measure_interleaved).

The callbacks are built when the runner starts, before it confines itself: libffi writes each
one's trampoline into memory it maps executable, which a confined process may not do.
"""
from __future__ import annotations

import ctypes
import functools
import random
from typing import Callable, Sequence, TypeVar

STACK_STEPS = 64  # 0..63 unused arguments: the stack lower by 0 to about 4.3 KiB, 16-byte aligned
KIND = "stack"
# The stack's alignment classes: its address modulo 64 (a cache line, AVX-512's vector), in the
# 16-byte steps the ABI keeps. Rounds go in cycles that visit each class once, so that however
# the process's own stack happens to lie, every class is timed as often as every other.
ALIGNMENT = 64
CYCLE = ALIGNMENT // 16

T = TypeVar("T")


def draw(seed: int, count: int, offsets: Sequence[int] | None = None) -> list[int]:
    """`count` stack steps from `seed` (a grading's own seed: the same grading draws the same
    placements): in cycles of CYCLE rounds, each cycle visiting the alignment classes in a random
    order, each class at a random step among those that land in it (`offsets`: stack_offsets());
    without offsets, steps drawn uniformly."""
    chosen = random.Random(f"placements:{seed}")
    classes: dict[int, list[int]] = {}
    for step, offset in enumerate(offsets or ()):
        classes.setdefault(offset % ALIGNMENT // 16, []).append(step)
    if len(classes) != CYCLE:  # offsets unknown (or an interpreter that steps otherwise)
        return [chosen.randrange(STACK_STEPS) for _ in range(count)]
    steps: list[int] = []
    while len(steps) < count:
        order = sorted(classes)
        chosen.shuffle(order)
        steps.extend(chosen.choice(classes[alignment]) for alignment in order)
    return steps[:count]


def parse(text: str, most: int) -> list[int]:
    """Stack steps sent as comma-separated integers: each in range, at most `most` of them."""
    steps = [int(part) for part in text.split(",") if part] if text else []
    if len(steps) > most or any(not 0 <= step < STACK_STEPS for step in steps):
        raise ValueError(f"stack steps must be at most {most} integers in 0..{STACK_STEPS - 1}")
    return steps


class StackShifter:
    """Runs a function with the stack lower by one of STACK_STEPS amounts (see the module's note)."""

    def __init__(self) -> None:
        self._pending: Callable[[], object] | None = None
        self._outcome: tuple[bool, object] = (False, None)

        def callback(*_unused) -> int:
            # ctypes prints and drops an exception raised in a callback: keep it to raise outside.
            try:
                pending = self._pending
                if pending is None:
                    raise RuntimeError("the stack-placed callback ran with nothing to call")
                self._outcome = (True, pending())
            except BaseException as error:  # noqa: BLE001 (re-raised by `call`)
                self._outcome = (False, error)
            return 0

        self._callbacks = [ctypes.CFUNCTYPE(ctypes.c_int, *([ctypes.c_long] * step))(callback)
                           for step in range(STACK_STEPS)]
        self._arguments = [(0,) * step for step in range(STACK_STEPS)]

    def call(self, step: int, function: Callable[[], T]) -> T:
        """`function()`, run with the stack shifted by `step` (0 <= step < STACK_STEPS)."""
        self._pending, self._outcome = function, (False, None)
        try:
            self._callbacks[step](*self._arguments[step])
            succeeded, value = self._outcome
        finally:
            self._pending, self._outcome = None, (False, None)
        if not succeeded:
            raise value if isinstance(value, BaseException) else RuntimeError("the shifted call did not run")
        return value  # type: ignore[return-value]

    def rounds_at(self, steps: Sequence[int]) -> Callable[[int, Callable[[], T]], T]:
        """For bench.measure_interleaved: round i runs at steps[i] (the last one past the end)."""
        if not steps:
            raise ValueError("no stack steps")
        return lambda index, function: self.call(steps[min(index, len(steps) - 1)], function)


@functools.lru_cache(maxsize=1)
def stack_offsets() -> tuple[int, ...] | None:
    """How far each step lowers the stack, in bytes, measured here (the stack pointer a system call
    sees, /proc/thread-self/syscall), for reports that group rounds by their stack's alignment;
    None where that file cannot be read. The same interpreter gives the same offsets in every
    process: they come from the frames ctypes and libffi build, not from where the stack lies."""
    def pointer() -> int:
        with open("/proc/thread-self/syscall") as handle:
            return int(handle.read().split()[-2], 16)

    try:
        shifter = StackShifter()
        # Warmed first: CPython's specialising interpreter reaches the system call through fewer
        # C frames once `pointer` has run a few times (96 bytes fewer, measured on 3.11), which
        # would read as a shift of the steps measured meanwhile.
        for _ in range(16):
            shifter.call(0, pointer)
        pointers = []
        for step in range(STACK_STEPS):  # a loop, not a generator: resuming one adds C frames
            pointers.append(shifter.call(step, pointer))
        return tuple(pointers[0] - each for each in pointers)
    except (OSError, ValueError, IndexError):
        return None
