"""From a graded schedule (a Result) to the points of one test cell.

An assignment notebook splits a problem's score into test cells, one per part: correctness,
fusion and speed (the Result's credit keys are correctness, structure and speed). The same
function scores a part in the student's self-check and in the instructor's trusted re-grade,
so both say the same thing about the same Result. A part that cannot be scored (no GPU here,
or the grader itself failed: Result.grader_fault) is pending, None, which the gradebook records
as needing manual grading, never as 0. Without a GPU, a GPU schedule whose kernels ran on an
OpenCL device has its correctness and fusion scored; only its speed is pending.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..problems import get_problem
from ..engine.report import CreditPart, Result, Status

# Test-cell part -> (Result.credit key, the check that explains it)
PARTS: dict[str, tuple[CreditPart, str]] = {
    "correctness": ("correctness", "correctness"),
    "fusion": ("structure", "fusion"),
    "speed": ("speed", "speed"),
}

GRADER_FAILED = "the grader failed; your instructor will regrade this part"

# The statuses of a schedule that did not get as far as scoring, as a student reads them.
NOT_RUN: dict[Status, str] = {
    "error": "your schedule did not run",
    "timeout": "your schedule did not finish in time",
    "crashed": "the grading of your schedule crashed",
    "rejected": "your schedule was rejected",
}


@dataclass(frozen=True)
class PartScore:
    part: str
    fraction: float | None  # share of the part's points earned; None: cannot be scored here
    message: str

    def points(self, out_of: float) -> float | None:
        return None if self.fraction is None else round(self.fraction * out_of, 2)


def score_part(result: Result, part: str | None) -> PartScore:
    """The share of `part`'s points `result` earns, and why; a plan's part is checked when the
    plan is read (plan.py), and again here: ValueError for one that is not a schedule's."""
    if part is None or part not in PARTS:
        raise ValueError(f"unknown part {part!r}; parts: {', '.join(PARTS)}")
    credit_key, check_name = PARTS[part]
    if result.grader_fault:  # the grader's failure is no reason to score the student 0
        # One line and no details: what failed is the grader's business (its messages can quote
        # tracebacks, hosts and paths); the instructor has them in full (course/summary.py).
        return PartScore(part, None, f"{part}: pending: {GRADER_FAILED}")
    if result.status == "needs-gpu" and (result.correct is None or part == "speed"):
        if result.correct:
            return PartScore(part, None, f"{part}: pending: correct on an OpenCL device; speed needs a GPU, so it is scored on a GPU host (or through --rpc)")
        return PartScore(part, None, f"{part}: pending, no GPU here: the schedule compiled for CUDA and passed the static checks; "
                                     "it is scored on a GPU host (or through --rpc)")
    weight: float = getattr(get_problem(result.problem).weights, credit_key)
    earned = result.credit.get(credit_key, 0.0)
    fraction = min(1.0, max(0.0, earned / weight)) if weight else 0.0
    check = result.check(check_name)
    if result.status in NOT_RUN:
        reason = result.messages[0] if result.messages else result.status
        detail = f"{NOT_RUN[result.status]} ({result.status}): {reason}"
    elif result.correct is False and part != "correctness":
        detail = "wrong results score nothing for the other parts"
    elif check is not None:
        detail = check.message
    elif part == "speed":
        detail = "the speed was not measured"
    else:
        detail = f"status {result.status}"
    return PartScore(part, round(fraction, 4), f"{part}: {fraction:.0%} of the points; {detail}")
