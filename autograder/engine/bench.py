"""Timing that survives a noisy, shared machine.

Every function under test is timed in the same rounds, in a rotating order, so drift in the
machine's speed hits them all alike; a speedup is the median of per-round ratios, reported
with its spread. The timers themselves come from TVM's `time_evaluator` (local or over RPC).
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

Timer = Callable[[], float]  # runs the function (enough times to be measurable), returns seconds per run


@dataclass(frozen=True)
class Stats:
    """Median and spread of a sample (seconds, or a ratio)."""

    median: float
    q1: float
    q3: float
    minimum: float
    maximum: float
    cv: float  # coefficient of variation: standard deviation over mean
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Stats":
        if not values:
            raise ValueError("no measurements")
        ordered = sorted(values)
        mean = statistics.fmean(ordered)
        stdev = statistics.stdev(ordered) if len(ordered) > 1 else 0.0
        if len(ordered) >= 4:
            q1, _, q3 = statistics.quantiles(ordered, n=4)
        else:
            q1, q3 = ordered[0], ordered[-1]
        return cls(
            median=statistics.median(ordered),
            q1=q1,
            q3=q3,
            minimum=ordered[0],
            maximum=ordered[-1],
            cv=stdev / mean if mean else 0.0,
            n=len(ordered),
        )

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in ("median", "q1", "q3", "minimum", "maximum", "cv", "n")}


@dataclass(frozen=True)
class Measurements:
    """Seconds per run for each named function, one sample per round."""

    samples: dict[str, list[float]]

    def stats(self, name: str) -> Stats:
        return Stats.of(self.samples[name])

    def ratios(self, baseline: str, candidate: str) -> list[float]:
        """Per-round speedups of `candidate` over `baseline` (above 1 means faster)."""
        return [b / c for b, c in zip(self.samples[baseline], self.samples[candidate])]

    def speedup(self, baseline: str, candidate: str) -> Stats:
        return Stats.of(self.ratios(baseline, candidate))


def measure_interleaved(timers: Mapping[str, Timer], rounds: int, warmup: int = 1) -> Measurements:
    """Time each function once per round, rotating which goes first each round."""
    names = list(timers)
    for _ in range(warmup):
        for name in names:
            timers[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    for round_index in range(rounds):
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(timers[name]())
    return Measurements(samples)


def tvm_timer(module, device, args: Sequence, min_repeat_ms: float = 20.0, entry: str = "main") -> Timer:
    """A Timer over a compiled TVM module: each call is one `time_evaluator` sample.

    `min_repeat_ms` makes TVM repeat the call until one sample lasts that long, so fast and
    slow functions are both measured well above the clock's resolution.
    """
    evaluator = module.time_evaluator(entry, device, number=1, repeat=1, min_repeat_ms=int(round(min_repeat_ms)))

    def run() -> float:
        return float(evaluator(*args).mean)

    return run
