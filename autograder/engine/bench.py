"""Timing that survives a noisy, shared machine.

Every function under test is timed in the same rounds, in a rotating order, so drift in the
machine's speed hits them all alike; a speedup is the median of per-round ratios, reported
with its spread (quartiles and coefficient of variation). The timers come from TVM's
`time_evaluator` (local or over RPC):

- warm-up: one untimed round first (code and data paged in, the CPU's clock settled);
- cache: warm, on purpose. `time_evaluator` can flush the CPU caches between samples
  (`cache_flush_bytes`); the grader does not, because what this exercise teaches is what a
  tile does once its data is in cache, and the inputs (0.6 MB) fit in L2 on every course CPU;
- repeats: each sample repeats the call a fixed number of times that lasts `min_repeat_ms`
  (found from the function's own time), far above the clock's resolution; rounds go on past the minimum while the ratio that decides credit is still
  spread out (coefficient of variation above a target), up to a maximum and a time budget;
- implausible results (a speedup over the baseline far beyond what the problem allows) are
  flagged for an instructor, not scored silently.
"""
from __future__ import annotations

import math
import statistics
import time
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


def measure_interleaved(
    timers: Mapping[str, Timer],
    rounds: int,
    warmup: int = 1,
    *,
    max_rounds: int | None = None,
    settle: tuple[str, str] | None = None,
    target_cv: float = 0.02,
    budget_s: float = float("inf"),
) -> Measurements:
    """Time each function once per round, rotating which goes first each round.

    At least `rounds` rounds; with `settle=(baseline, candidate)`, more (up to `max_rounds`,
    within `budget_s` seconds) while the coefficient of variation of that pair's per-round
    ratios is above `target_cv`: a noisy machine is measured longer, a quiet one is not.
    """
    names = list(timers)
    for _ in range(warmup):
        for name in names:
            timers[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    started = time.monotonic()
    limit = max(rounds, max_rounds or rounds)
    round_index = 0
    while round_index < limit:
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            samples[name].append(timers[name]())
        round_index += 1
        if round_index >= rounds and (
            settle is None
            or time.monotonic() - started > budget_s
            or Stats.of(Measurements(samples).ratios(*settle)).cv <= target_cv
        ):
            break
    return Measurements(samples)


def tvm_timer(module, device, args: Sequence, min_repeat_ms: float = 20.0, entry: str = "main") -> Timer:
    """A Timer over a compiled TVM module: each call is one `time_evaluator` sample of `number`
    back-to-back calls, enough to last at least 90% of `min_repeat_ms`, so fast and slow
    functions are both measured well above the clock's resolution.

    `number` is worked out here from the function's own time and kept: a sample that comes
    out too short is taken again with a larger count. (TVM's own `min_repeat_ms` starts from
    one call in every sample and grows the count by the golden ratio, throwing the short tries
    away: about a third of the grader's timing, measured.)
    """
    floor_s = 0.9 * min_repeat_ms / 1e3
    state = {"number": 1, "evaluator": module.time_evaluator(entry, device, number=1, repeat=1)}

    def run() -> float:
        while True:
            seconds = float(state["evaluator"](*args).mean)  # per call, over `number` calls
            if seconds * state["number"] >= floor_s or seconds <= 0:
                return seconds
            state["number"] = max(state["number"] + 1, math.ceil(min_repeat_ms / 1e3 / seconds))
            state["evaluator"] = module.time_evaluator(entry, device, number=state["number"], repeat=1)

    return run
