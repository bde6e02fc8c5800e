"""A re-timed grade keeps its speed band unless the new measurement says otherwise beyond its noise.

When the same submission is graded again on the same machine and CPU (`tvm-course grade --force`,
a second run after a fix to something else), its speed is timed afresh. A schedule whose speed
sits near a band edge can land on either side of it from one grading to the next, and a grade
that moves for noise alone is not a grade a student can trust. So the earlier grading's speed
credit stands unless the new grading's own confidence interval of its median lies inside one
band (bench.BandRule: "decided"), a different one: then the measurements say it moved, and it
does. A re-timing because the earlier timing ran on a disturbed core (course/retime.py) is not
steadied: that measurement is known to be wrong, and the class run passes no earlier speed for it.
Nor is an earlier grading whose rounds all ran in one placement in memory (graded before the
rounds were placed, engine/placement.py): its band was that placement's, decided or not, so it
is no evidence of the code's speed to keep against a grading that timed many.

What crosses in (`Earlier`) is read by the class run from the grader's own record in the
earlier autograded notebook, and checked here field by field before it is used.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..engine.report import Check, Result


@dataclass(frozen=True)
class Earlier:
    """The speed part of an earlier grading of the same answer."""

    speed: float  # its speed credit (a share of the score, as Result.credit["speed"])
    cpu: str
    machine: str
    median: float  # its speed against the yardstick
    placed: bool = True  # its rounds ran at placements of their own (a Result's yardstick_spread["placements"])

    @classmethod
    def from_result(cls, result: dict) -> "Earlier | None":
        """From a Result's dict (the trusted record), or None where it was not a timed grading."""
        credit = result.get("credit") if isinstance(result, dict) else None
        speed = credit.get("speed") if isinstance(credit, dict) else None
        median, cpu, machine = (result.get(k) for k in ("yardstick_speedup", "cpu", "machine"))
        if result.get("status") != "passed" or result.get("grader_fault"):
            return None
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (speed, median)):
            return None
        if not (isinstance(cpu, str) and isinstance(machine, str) and 0 <= speed <= 1 and median > 0):
            return None
        spread = result.get("yardstick_spread")
        placements = spread.get("placements") if isinstance(spread, dict) else None
        return cls(float(speed), cpu, machine, float(median), isinstance(placements, list) and len(placements) > 1)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, found) -> "Earlier | None":
        if not isinstance(found, dict):
            return None
        earlier = cls.from_result({"status": "passed", "credit": {"speed": found.get("speed")}, "cpu": found.get("cpu"),
                                   "machine": found.get("machine"), "yardstick_speedup": found.get("median")})
        # Written by to_dict from a Result (from_result judged its placements there); only False turns it off.
        return earlier and dataclasses.replace(earlier, placed=found.get("placed", True) is not False)


def keep_band(result: Result, earlier: Earlier | None) -> Result:
    """`result`, with the earlier speed credit where the new timing does not decide otherwise."""
    if earlier is None or result.status != "passed" or result.grader_fault or "speed" not in result.credit:
        return result
    if (result.cpu, result.machine) != (earlier.cpu, earlier.machine):
        return result  # another machine or CPU: a measurement of its own, nothing to steady
    if not earlier.placed:
        return dataclasses.replace(result, retimed=(
            f"timed again: the earlier grading ({earlier.median:.2f}x, {_points(earlier.speed)}) timed every round in one "
            f"placement in memory, whose speed need not be the code's; this one, timed across placements, stands "
            f"({_points(result.credit['speed'])})"))
    now = result.credit["speed"]
    if math.isclose(now, earlier.speed, abs_tol=1e-9):
        return dataclasses.replace(result, retimed=f"timed again: the same band as before ({_points(now)})")
    spread = result.yardstick_spread or {}
    interval = spread.get("interval")
    if spread.get("decided"):
        low, high = interval
        return dataclasses.replace(result, retimed=(
            f"timed again: moved from {_points(earlier.speed)} to {_points(now)}: its interval {low:.2f}-{high:.2f}x "
            f"lies inside the new band (the earlier grading measured {earlier.median:.2f}x)"))
    why = (f"its interval {interval[0]:.2f}-{interval[1]:.2f}x straddles a band edge" if interval
           else "too few rounds for an interval")
    note = (f"timed again: kept {_points(earlier.speed)} from the earlier grading ({earlier.median:.2f}x): this one "
            f"measured {result.yardstick_speedup:.2f}x, which alone would give {_points(now)}, but {why}: within noise")
    credit = {**result.credit, "speed": earlier.speed}
    checks = [Check(c.name, earlier.speed > 0, f"{note}. {c.message}") if c.name == "speed" else c for c in result.checks]
    return dataclasses.replace(result, credit=credit, score=round(result.score - now + earlier.speed, 4),
                               checks=checks, messages=[*result.messages, note], retimed=note)


def _points(credit: float) -> str:
    return f"{credit:.2f} of the score for speed"
