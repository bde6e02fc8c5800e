"""Timing for the lessons, on top of `autograder.engine.bench`: interleaved rounds, median of ratios.

Every variant is timed once per round in a rotating order, so a slow spell on the shared
machine slows all of them alike; a speedup is the median of the per-round ratios.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from ..engine.bench import Measurements, Stats, Timer, measure_interleaved, tvm_timer
from .tables import Table

MIN_REPEAT_MS = 20  # one sample repeats the call until it has run this long


def executable_timer(executable, device, arguments) -> Timer:
    """A Timer for a compiled PrimFunc (`tvm.compile` of a TensorIR module)."""
    return tvm_timer(executable.mod, device, arguments, min_repeat_ms=MIN_REPEAT_MS)


def vm_timer(executable, device, arguments) -> Timer:
    """A Timer for a compiled Relax module, run by the Relax virtual machine."""
    from tvm import relax

    machine = relax.VirtualMachine(executable, device)
    evaluator = machine.time_evaluator("main", device, number=1, repeat=1, min_repeat_ms=MIN_REPEAT_MS)

    def run() -> float:
        return float(evaluator(*arguments).mean)

    return run


@dataclass(frozen=True)
class Comparison:
    """Interleaved timings of several variants of one computation, against a baseline."""

    measurements: Measurements
    baseline: str

    @property
    def names(self) -> list[str]:
        return list(self.measurements.samples)

    def time(self, name: str) -> Stats:
        return self.measurements.stats(name)

    def speedup(self, name: str) -> Stats:
        """Above 1: `name` is faster than the baseline."""
        return self.measurements.speedup(self.baseline, name)

    def verdict(self, name: str) -> str:
        """One sentence on `name` against the baseline, decided by the measured spread."""
        s = self.speedup(name)
        spread = f"{s.median:.2f}x (middle half of rounds {s.q1:.2f}x to {s.q3:.2f}x)"
        if s.q1 <= 1.0 <= s.q3:
            return f"'{name}' against '{self.baseline}': {spread}, no difference this measurement can resolve."
        if s.q1 > 1.0:
            return f"'{name}' is faster than '{self.baseline}': {spread}."
        return f"'{name}' is slower than '{self.baseline}': {spread}, taking {1 / s.median:.2f} times as long."

    def table(self, title: str = "") -> Table:
        rows = []
        for name in self.names:
            time, speedup = self.time(name), self.speedup(name)
            rows.append(
                (
                    name,
                    f"{time.median * 1e3:.3f} ms",
                    f"{time.q1 * 1e3:.3f} to {time.q3 * 1e3:.3f} ms",
                    f"{speedup.median:.2f}x",
                    f"{speedup.q1:.2f}x to {speedup.q3:.2f}x",
                )
            )
        columns = ("variant", "median time", "middle half of rounds", f"speedup over {self.baseline}", "middle half")
        return Table.of(columns, rows, title or f"{self.measurements.stats(self.baseline).n} interleaved rounds, one thread")


def compare(timers: Mapping[str, Timer], baseline: str, rounds: int = 9) -> Comparison:
    if baseline not in timers:
        raise KeyError(f"baseline {baseline!r} is not among the timed variants {list(timers)}")
    return Comparison(measure_interleaved(timers, rounds=rounds, warmup=1), baseline)
