"""What every problem declares: its workload, target, credit weights and speed bands."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from .workload import ConvShape


@dataclass(frozen=True)
class SpeedBand:
    """A speed at or above `min_speedup` times the yardstick's earns `credit` (a fraction of
    the speed points). Both are timed in the same interleaved rounds on the same machine."""

    min_speedup: float
    credit: float


@dataclass(frozen=True)
class Weights:
    """Share of the score for each part; they add up to 1. Correctness also gates the rest."""

    correctness: float
    structure: float
    speed: float


@dataclass(frozen=True)
class Measured:
    """One calibration measurement: a reference schedule's speed against the yardstick, compiled
    for `cpu` (an LLVM CPU name) and run on a core of the `host` microarchitecture, as the median
    [min-max] of several gradings (`how` says which command, on what day, under what load)."""

    host: str  # the microarchitecture that ran the code (LLVM's name for it: znver4, znver5, ...)
    cpu: str  # what the code was compiled for (the host's own name: its own code)
    schedule: str  # "solution", "yardstick", "journal", or "blocked VARIANT"
    median: float
    low: float
    high: float
    how: str


@dataclass(frozen=True)
class Problem:
    name: str
    title: str
    target: str  # "cpu" or "cuda"
    summary: str
    weights: Weights
    speed_bands: tuple[SpeedBand, ...]
    baseline: str  # how the baseline is scheduled: "unscheduled" or "dlight"
    yardstick: str  # the reference schedule speed is measured against (problems/yardsticks.py)
    yardstick_title: str  # what it is, in a few words, for the feedback
    calibration: str  # how the thresholds were chosen, with the numbers
    shape: ConvShape = field(default_factory=ConvShape)
    # The largest a fused intermediate (conv output, bias-add output) may be after
    # compaction, in bytes. See each problem's calibration note.
    tile_budget_bytes: int = 32 * 1024
    # Output tolerance against the float64 reference (float32 sums of C*KH*KW terms).
    rtol: float = 1e-4
    atol: float = 1e-4
    # A speedup above this is flagged for a human to look at.
    implausible_speedup: float = 50.0
    # The reference schedules measured against the yardstick on several microarchitectures: what
    # the speed bands were set from (bench-grader and lesson 2 print it beside their own numbers).
    measured: tuple[Measured, ...] = ()

    def measured_for(self, cpu: str) -> list[Measured]:
        """The calibration's measurements of code compiled for `cpu` (on any host)."""
        return [m for m in self.measured if m.cpu == cpu]

    def calibrated_hosts(self) -> list[str]:
        return sorted({m.host for m in self.measured})

    def with_shape(self, shape: ConvShape) -> "Problem":
        """This problem on another workload shape (a student's variant)."""
        return dataclasses.replace(self, shape=shape)

    def speed_credit(self, speedup: float | None) -> float:
        """The fraction of speed points a speed relative to the yardstick earns (0 when not measured)."""
        if speedup is None:
            return 0.0
        earned = 0.0
        for band in self.speed_bands:
            if speedup >= band.min_speedup:
                earned = max(earned, band.credit)
        return earned

    def apply_yardstick(self, schedule) -> None:
        """Schedule a fresh copy of the workload as the yardstick does."""
        from .yardsticks import YARDSTICKS

        YARDSTICKS[self.yardstick](schedule)

    def workload(self):
        """A fresh copy of the PrimFunc the student schedules."""
        from .workload import fused_primfunc

        return fused_primfunc(self.shape)
