"""Schedules the lessons apply, and the one-liners to apply and compile them.

The journal's tiling is the autograder's bundled example (`autograder/examples/journal.py`);
the vectorised CPU tiling and the one-thread-per-pixel GPU schedule are the grader's
yardsticks (`autograder/problems/yardsticks.py`), so the lessons show exactly the code the
grader times beside every submission, and none of them is an assignment's answer (matching a
yardstick earns no speed credit). The lessons add a few schedules of their own here: the
journal's steps one at a time, and the padding inlined into the convolution.
"""
from __future__ import annotations

from typing import Callable

from .. import examples

ScheduleFn = Callable[[object], None]  # takes a tvm.s_tir.Schedule and transforms it in place


def example(name: str) -> ScheduleFn:
    """`schedule` from the bundled example `name` (journal: the package ships no assignment's answer)."""
    namespace: dict = {"__name__": f"autograder.examples.{name}"}
    exec(compile(examples.source(name), str(examples.path(name)), "exec"), namespace)
    return namespace["schedule"]


def example_source(name: str) -> str:
    return examples.source(name)


def yardstick(problem: str) -> ScheduleFn:
    """The schedule the grader times beside every submission of `problem`."""
    from ..problems import get_problem

    return get_problem(problem).apply_yardstick


def yardstick_source(problem: str) -> str:
    """The yardstick's code, written as a submission would be: `def schedule(sch):`."""
    import inspect

    from ..problems import get_problem
    from ..problems.yardsticks import YARDSTICKS

    function = YARDSTICKS[get_problem(problem).yardstick]
    source = inspect.getsource(function)
    return source.replace(f"def {function.__name__}(sch) -> None:", "def schedule(sch):", 1)


def unscheduled(sch) -> None:
    """The function as FuseTIR produced it: TVM's default CPU build schedules nothing."""


def pad_inlined(sch) -> None:
    """Inline the padding stage into the convolution: the zero test moves into the conv's inner loop.

    The tensor-level analogue of fusing a pad operator into its consumer (in the course's model
    padding is an argument of conv2d, so `pad_temp` is a stage of the conv's PrimFunc, not an
    operator the graph level could fuse).
    """
    sch.compute_inline(sch.get_sblock("pad_temp"))


def journal_steps(upto: int) -> ScheduleFn:
    """The journal's schedule stopped after step `upto` (0: nothing, 4: all of it).

    1 split both spatial loops 14 x 16, 2 reorder the tile loops outward,
    3 reverse_compute_at the bias Add into the tile, 4 the same for the ReLU.
    """

    def schedule(sch) -> None:
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        if upto >= 1:
            y_outer, y_inner = sch.split(yy, factors=[None, 16])
            x_outer, x_inner = sch.split(xx, factors=[None, 16])
        if upto >= 2:
            sch.reorder(y_outer, x_outer, y_inner, x_inner)
        if upto >= 3:
            sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
        if upto >= 4:
            sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)

    return schedule


JOURNAL_STEP_NAMES = ("no schedule", "+ split 14x16", "+ reorder", "+ Add into tile", "+ ReLU into tile")


def journal_with_vectorized_tail(sch) -> None:
    """The journal's schedule, then the 16-wide inner loops of Add and ReLU vectorised explicitly."""
    example("journal")(sch)
    for name in ("T_add", "compute"):
        sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])


def apply(func, schedule: ScheduleFn | None = None):
    """A fresh `tvm.s_tir.Schedule` of `func` with `schedule` applied."""
    from tvm import s_tir

    sch = s_tir.Schedule(func)
    if schedule is not None:
        schedule(sch)
    return sch


def compile_schedule(func, schedule: ScheduleFn | None, target):
    """Apply `schedule` to a fresh copy of `func` and compile it for `target`."""
    import tvm

    return tvm.compile(apply(func, schedule).mod, target)


def calibration_table(problem: str, host_cpu: str):
    """What the grader's speed bands were set from: the reference schedules' speed against the
    yardstick, measured on named microarchitectures (the problem's calibration), as a Table,
    with where this machine's CPU stands among them."""
    from ..problems import get_problem
    from .tables import Table

    found = get_problem(problem)
    rows = [(m.host, m.cpu, m.schedule, f"{m.median:.2f}x", f"{m.low:.2f}-{m.high:.2f}x")
            for m in sorted(found.measured, key=lambda m: (m.host, m.cpu, m.schedule))]
    bands = ", ".join(f"{b.credit:.0%} of the speed points from {b.min_speedup:g}x" for b in found.speed_bands)
    hosts = found.calibrated_hosts()
    where = (f"This machine's CPU ({host_cpu}) is among those measured." if host_cpu in hosts else
             f"This machine's CPU ({host_cpu}) is not among those measured ({', '.join(hosts)}): the ratio follows the "
             "core that runs the code, so yours may sit elsewhere; the grader times yours beside the yardstick here.")
    return Table.of(("ran on", "compiled for", "schedule", "vs yardstick", "range"), rows,
                    f"How the speed bands of {problem} were set", note=f"Bands: {bands}. {where}")
