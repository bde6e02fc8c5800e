"""The grader's settings: every field has a default and says what it is for."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

from ..errors import UsageError
from .priority import BACKGROUND_NICE


def _setting(default, help: str):
    return field(default=default, metadata={"help": help})


class InvalidSetting(UsageError):
    """A grader setting out of its range; the message names it and the value given (a ValueError too)."""


@dataclass(frozen=True)
class GraderConfig:
    student_timeout_s: float = _setting(
        30.0, "Wall-clock limit for the student's schedule() (an infinite loop becomes 'timeout')."
    )
    student_memory_mb: int = _setting(
        2048, "Memory the student's code may allocate on top of TVM and the workload ('crashed' beyond)."
    )
    evaluate_timeout_s: float = _setting(
        120.0, "Wall-clock limit for replaying, compiling, checking and timing one schedule."
    )
    evaluate_memory_mb: int = _setting(
        4096, "Memory the trusted evaluator may allocate on top of TVM (huge unrolls hit this)."
    )
    output_tail_chars: int = _setting(
        2000, "How much of the student's printed output is kept (the end of it)."
    )
    threads: int = _setting(
        1, "TVM worker threads while timing; one thread keeps timings repeatable on shared machines."
    )
    timing_rounds: int = _setting(
        10, "Interleaved baseline/yardstick/candidate rounds at least; the speed is the median of per-round ratios."
    )
    baseline_rounds: int = _setting(
        5, "Rounds (the first ones) that time the baseline as well: its speedup is reported, and flagged "
        "when implausible, but gives no credit; the yardstick and the candidate are timed in every round."
    )
    min_repeat_ms: float = _setting(
        12.5, "Each timing sample runs the function back to back a fixed number of times, enough to last this long."
    )
    slice_ms: float = _setting(
        0.5, "A sample is the fastest of slices this long (a slice the scheduler interrupted is slower, never "
        "faster): shorter than the kernel's time slice, so that on a busy machine most run whole."
    )
    max_timing_rounds: int = _setting(
        45, "Rounds go on past timing_rounds, up to this many, while the speed's confidence interval straddles a band edge."
    )
    band_confidence: float = _setting(
        0.99, "Timing stops once a confidence interval of the median speed, at this level over all the rounds "
        "looked at (engine/bench.py BandRule), lies inside one speed band: the credit is decided."
    )
    timing_budget_s: float = _setting(
        10.0, "Seconds of timing after which no more rounds are added, however spread out."
    )
    seed: int | None = _setting(
        None, "Seed for the test inputs; None draws a fresh one per grading (it is reported)."
    )
    warm_start: bool = _setting(
        True, "Fork the student's and the evaluator's processes from a fork server that has imported TVM "
        "once (engine/forkserver.py), instead of starting a new interpreter for each grading."
    )
    background_nice: int = _setting(
        BACKGROUND_NICE, "Nice value of everything a grading runs besides its timing (the student's code, compiling, "
        "nbgrader's steps in a class run's workers), so that on a busy machine timings are not shared "
        "with them (engine/priority.py); 0 runs them all at normal priority."
    )
    measure_speed: bool = _setting(True, "Time the schedule against the baseline (speed credit).")
    mcpu: str | None = _setting(
        None, "LLVM CPU to compile for (e.g. haswell, znver3): the baseline, yardstick and candidate alike; "
        "None: this host's own, or TVM_COURSE_MCPU where set."
    )
    cuda_arch: str = _setting("sm_90", "CUDA architecture to compile for when no GPU says otherwise.")
    rpc_tracker: str | None = _setting(
        None, "HOST:PORT of a TVM RPC tracker: run and time on a remote device instead of here."
    )
    rpc_key: str | None = _setting(None, "Device key to request from the RPC tracker.")

    def __post_init__(self) -> None:
        positive = ("student_timeout_s", "student_memory_mb", "evaluate_timeout_s", "evaluate_memory_mb",
                    "output_tail_chars", "threads", "timing_rounds", "baseline_rounds", "min_repeat_ms", "slice_ms", "max_timing_rounds",
                    "band_confidence", "timing_budget_s")
        for name in positive:
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value <= 0:
                raise InvalidSetting(f"setting {name} must be a positive number, got {value!r}")
        if not isinstance(self.baseline_rounds, int):
            raise InvalidSetting(f"setting baseline_rounds must be a whole number of rounds, got {self.baseline_rounds!r}")
        if not self.band_confidence < 1:
            raise InvalidSetting(f"setting band_confidence must be below 1, got {self.band_confidence!r}")
        if not isinstance(self.background_nice, int) or isinstance(self.background_nice, bool) or not 0 <= self.background_nice <= 19:
            raise InvalidSetting(f"setting background_nice must be an integer from 0 to 19, got {self.background_nice!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or self.seed < 0):
            raise InvalidSetting(f"setting seed must be a non-negative integer or None, got {self.seed!r}")

    def as_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def describe(cls) -> list[tuple[str, object, str]]:
        """(name, default, help) for every setting, for --help texts and docs."""
        return [(f.name, f.default, f.metadata["help"]) for f in fields(cls)]
