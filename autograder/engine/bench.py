"""Timing that survives a noisy, shared machine.

Every function under test is timed in the same rounds, in a rotating order, so drift in the
machine's speed hits them all alike; a speedup is the median of per-round ratios, reported
with its spread (quartiles and coefficient of variation). The timers come from TVM's
`time_evaluator` (local or over RPC):

- warm-up: one untimed round first (code and data paged in, the CPU's clock settled);
- cache: warm, on purpose. `time_evaluator` can flush the CPU caches between samples
  (`cache_flush_bytes`); the grader does not, because what this exercise teaches is what a
  tile does once its data is in cache, and the inputs (0.6 MB) fit in L2 on every course CPU;
- repeats: each sample is the fastest of short slices (each a fixed number of back-to-back
  calls lasting about `slice_ms`, found from the function's own time, far above the clock's
  resolution), together lasting `min_repeat_ms`: a slice the scheduler cut is slower, never
  faster, so the fastest is the function's own time on a busy machine;
- placement: each round at a stack position of its own, drawn at random (`placement.py`): the
  same code runs at different speeds in different placements, fixed for a process's life, so
  rounds taken in one placement would be an interval around that placement's speed;
- rounds: as few as decide the credit. After each round from the least on, a distribution-free
  confidence interval of the median per-round ratio (two order statistics: see `BandRule`) is
  compared with the problem's band edges; once it lies inside one band, no further round can
  change the credit the median earns, and timing stops. Where it straddles an edge, rounds go
  on up to the most (and a time budget), and the median of them all decides;
- implausible results (a speedup over the baseline far beyond what the problem allows) are
  flagged for an instructor, not scored silently.
"""
from __future__ import annotations

import functools
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
        """Per-round speedups of `candidate` over `baseline` (above 1 means faster), over the
        rounds that timed both (a function timed in the first rounds only: those)."""
        return [b / c for b, c in zip(self.samples[baseline], self.samples[candidate])]

    def speedup(self, baseline: str, candidate: str) -> Stats:
        return Stats.of(self.ratios(baseline, candidate))


def binomial_cdf(n: int, j: int) -> float:
    """P(X <= j) for X ~ Binomial(n, 1/2): the chance that at most j of n rounds fall below the median."""
    return sum(math.comb(n, i) for i in range(j + 1)) / 2 ** n if j >= 0 else 0.0


def _ever_excluded(ranks: dict[int, int], most: int) -> float:
    """The chance, for rounds whose ratios are independent draws of one continuous distribution,
    that the interval of some look (n rounds -> rank k: the k-th smallest to the k-th largest)
    lies wholly above the true median: a walk over how many rounds so far fell below it,
    absorbed the first time that count is below k. The same holds for "wholly below"."""
    alive = {0: 1.0}
    absorbed = 0.0
    for n in range(1, most + 1):
        step: dict[int, float] = {}
        for below, p in alive.items():
            step[below] = step.get(below, 0.0) + p / 2
            step[below + 1] = step.get(below + 1, 0.0) + p / 2
        k = ranks.get(n, 0)
        alive = {}
        for below, p in step.items():
            if below < k:
                absorbed += p
            else:
                alive[below] = p
    return absorbed


@functools.lru_cache(maxsize=32)
def interval_ranks(least: int, most: int, confidence: float, every: int = 1) -> dict[int, int]:
    """For each look (rounds n, from `least` to `most` in steps of `every`), the rank k of its
    interval [k-th smallest ratio, k-th largest]; 0 where n rounds are too few for any (and
    between looks).

    Every look uses the same per-look level, the largest for which the chance that *any* look
    up to `most` excludes the true median on one side stays within (1 - confidence) / 2; so the
    whole sequence of intervals, however many are looked at, holds the median with at least
    `confidence` (an exact computation, `_ever_excluded`, not a union bound). Candidate levels
    are the binomial tail values themselves, where the ranks change; the chance grows with the
    level, so a bisection finds the largest.
    """
    if not 0 < confidence < 1 or least < 1 or most < least or every < 1:
        raise ValueError(f"no interval schedule for rounds {least}..{most} (every {every}) at confidence {confidence}")
    per_side = (1 - confidence) / 2
    looks = range(least, most + 1, every)
    levels = sorted({binomial_cdf(n, j) for n in looks for j in range(n // 2) if binomial_cdf(n, j) <= per_side})

    def ranks_at(level: float) -> dict[int, int]:
        ranks = {}
        for n in looks:
            k = 0
            while k < n // 2 and binomial_cdf(n, k) <= level:
                k += 1
            ranks[n] = k
        return ranks

    low, high, best = 0, len(levels) - 1, {n: 0 for n in looks}
    while low <= high:
        middle = (low + high) // 2
        ranks = ranks_at(levels[middle])
        if _ever_excluded(ranks, most) <= per_side:
            best, low = ranks, middle + 1
        else:
            high = middle - 1
    return best


@dataclass(frozen=True)
class BandDecision:
    """Where the rounds so far put the median ratio: its interval, and whether that lies in one band."""

    rounds: int
    interval: tuple[float, float] | None  # None: too few rounds for an interval at this confidence
    decided: bool  # the interval lies inside one band: the credit cannot change
    confidence: float

    def as_dict(self) -> dict:
        return {"rounds": self.rounds, "interval": list(self.interval) if self.interval else None,
                "decided": self.decided, "confidence": self.confidence}


@dataclass(frozen=True)
class BandRule:
    """When timing may stop: once the median's confidence interval lies inside one speed band.

    The interval is distribution-free: for n per-round ratios drawn independently from one
    continuous distribution, the k-th smallest and the k-th largest bracket its median with
    probability 1 - 2 P(Binomial(n, 1/2) <= k - 1), whatever the distribution (a shared machine's
    noise is skewed and spiky, so nothing normal is assumed). Interleaving makes the rounds
    close to that: a drift of the machine's speed slows both functions of a round alike and
    cancels from their ratio. Looking after every round would spend the error once per look,
    so the ranks come from `interval_ranks`, which holds the error of all the looks together.

    Each round runs at a placement in memory of its own (placement.py), so the distribution is
    of placement and noise together, and the median is the code's over placements: where they
    disagree across an edge, the interval spans them and the rounds go on. A cycle of rounds
    visits each of the stack's alignment classes once (`every`: the looks come after whole
    cycles); so drawn, the count of rounds below the median varies less than a binomial's, and
    the interval holds at least its confidence.

    Credit goes by the median (at or above an edge earns its band), and the median lies inside
    the interval: when the interval is inside one band, the median's credit is that band's, and
    so is the credit of the true median unless the interval missed it (at most 1 - confidence).
    """

    edges: tuple[float, ...]  # the bands' least speedups
    least: int
    most: int
    confidence: float = 0.99
    every: int = 1  # rounds between looks: a cycle of placements (placement.CYCLE), looked at whole

    def decide(self, ratios: Sequence[float]) -> BandDecision:
        n = len(ratios)
        k = interval_ranks(self.least, self.most, self.confidence, self.every).get(n, 0) if self.least <= n <= self.most else 0
        if k == 0:
            return BandDecision(n, None, False, self.confidence)
        ordered = sorted(ratios)
        low, high = ordered[k - 1], ordered[n - k]
        inside = not any(low < edge <= high for edge in self.edges)
        return BandDecision(n, (low, high), inside, self.confidence)


def cycle_bounds(least: int, most: int, cycle: int) -> tuple[int, int]:
    """The least and the most rounds in whole cycles: `least` rounded up, `most` rounded down
    (never below the least)."""
    least = -(-least // cycle) * cycle
    return least, max(least, most // cycle * cycle)


def measure_interleaved(
    timers: Mapping[str, Timer],
    rounds: int,
    warmup: int = 1,
    *,
    max_rounds: int | None = None,
    settle: tuple[str, str] | None = None,
    rule: BandRule | None = None,
    budget_s: float = float("inf"),
    first_rounds_only: Mapping[str, int] | None = None,
    placement: Callable[[int, Callable[[], None]], None] | None = None,
    cycle: int = 1,
) -> Measurements:
    """Time each function once per round, rotating which goes first each round.

    At least `rounds` rounds; with `settle=(yardstick, candidate)` and a `rule`, more (up to
    `max_rounds`, within `budget_s` seconds) until the rule says the per-round ratios of that
    pair (yardstick time over candidate time: the candidate's speed) decide the credit.
    A function named in `first_rounds_only` (name -> N) is timed in the first N rounds only:
    its ratios to another (`Measurements.ratios`) pair those rounds, one for one.
    `placement(i, run_round)` runs round i's timings where that round is placed in memory
    (placement.StackShifter.rounds_at: a stack position of its own), so that the rounds are
    independent draws of placement as well as of noise; None runs them all where this is called.
    Rounds end only after a whole `cycle` of them (placement.CYCLE: one round in each of the
    stack's alignment classes), so that however the rounds end, each class counts alike: at least
    `rounds` rounded up to whole cycles, at most `max_rounds` rounded down (the rule's `least`
    and `most` are those, and its `every` the cycle: see `cycle_bounds`).
    """
    names = list(timers)
    first_rounds_only = dict(first_rounds_only or {})
    for _ in range(warmup):
        for name in names:
            timers[name]()
    samples: dict[str, list[float]] = {name: [] for name in names}
    started = time.monotonic()
    rounds, limit = cycle_bounds(rounds, max_rounds or rounds, cycle)
    round_index = 0
    while round_index < limit:
        timed = [name for name in names if round_index < first_rounds_only.get(name, limit)]
        shift = round_index % len(timed)

        def run_round(order=timed[shift:] + timed[:shift]) -> None:
            for name in order:
                samples[name].append(timers[name]())

        if placement is None:
            run_round()
        else:
            placement(round_index, run_round)
        round_index += 1
        if round_index >= rounds and round_index % cycle == 0 and (
            settle is None or rule is None
            or time.monotonic() - started > budget_s
            or rule.decide(Measurements(samples).ratios(*settle)).decided
        ):
            break
    return Measurements(samples)


def tvm_timer(module, device, args: Sequence, min_repeat_ms: float = 20.0, entry: str = "main",
              slice_ms: float = 0.5) -> Timer:
    """A Timer over a compiled TVM module: each call is one sample, the fastest of back-to-back
    slices (one `time_evaluator` call with `repeat` slices of `number` calls each), every slice
    lasting at least 90% of `slice_ms` and all of them together about `min_repeat_ms`.

    Why the fastest slice: the clock is the wall's, so a slice during which the scheduler gave
    the core to another process is slower by that much, and never faster. One long sample's
    mean is the machine's load as much as the function's speed (at load 6 on 2 cores a 15 ms
    sample is cut several times, at random); a slice shorter than the scheduler's time slice
    (0.75-3 ms) often runs whole, and the fastest of many is the function's own time. Caches
    stay warm between slices (see the module's note), so nothing else is favoured.

    `number` is worked out here from the function's own time and kept: a slice that comes
    out too short is taken again with a larger count. (TVM's own `min_repeat_ms` starts from
    one call in every sample and grows the count by the golden ratio, throwing the short tries
    away: about a third of the grader's timing, measured.)
    """
    slice_s, total_s = slice_ms / 1e3, max(min_repeat_ms, slice_ms) / 1e3

    def evaluator(number: int, call_s: float = 0.0):
        """`number` calls a slice, as many slices as fill `total_s` (`call_s`: one call's time)."""
        slices = max(1, round(total_s / max(slice_s, number * call_s)))
        return module.time_evaluator(entry, device, number=number, repeat=slices)

    state = {"number": 1, "evaluator": evaluator(1)}

    def run() -> float:
        while True:
            seconds = min(float(r) for r in state["evaluator"](*args).results)  # per call, fastest slice
            if seconds * state["number"] >= 0.9 * slice_s or seconds <= 0:
                return seconds
            state["number"] = max(state["number"] + 1, math.ceil(slice_s / seconds))
            state["evaluator"] = evaluator(state["number"], seconds)

    return run
