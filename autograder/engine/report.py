"""The Result of grading one schedule: JSON for tools, text for people, HTML for Jupyter.

One `Status` and one `Check` serve the whole way from the evaluator (which sends its checks
as `Check.to_wire()`) through the pipeline and the nbgrader cells to the class summary's CSV.
The JSON form (`Result.to_dict`) is what graded notebooks keep in their metadata: a field added
here needs a default, so that a notebook graded before it still reads (`Result.from_dict`).
"""
from __future__ import annotations

import html
import json
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, get_args

from .untrusted_text import visible
from .wire import Fields

# What became of one grading. passed/failed: it ran and was scored (failed: wrong results, or
# unfused); error/timeout/crashed/rejected: it did not get as far as scoring (score 0, unless
# grader_fault); needs-gpu: what needs a GPU is pending.
Status = Literal["passed", "failed", "error", "timeout", "crashed", "rejected", "needs-gpu"]
STATUSES: tuple[Status, ...] = get_args(Status)

# The parts a score is made of, in points out of 1 (Problem.weights): the keys of Result.credit.
CreditPart = Literal["correctness", "structure", "speed"]
CREDIT_PARTS: tuple[CreditPart, ...] = get_args(CreditPart)


@dataclass(frozen=True)
class Check:
    """One check of a schedule (interface, fusion, correctness, speed, ...): whether it passed, and why."""

    name: str
    passed: bool
    message: str

    def to_wire(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "message": self.message}

    @classmethod
    def from_wire(cls, obj: object, record: str = "check") -> "Check":
        """A check as to_wire wrote it (over the evaluator's channel, or in a graded notebook's metadata)."""
        fields = Fields(obj, record)
        return cls(fields.text("name"), fields.boolean("passed"), fields.text("message"))


@dataclass
class Result:
    problem: str
    target: str
    status: Status
    score: float = 0.0
    correct: bool | None = None
    speedup: float | None = None
    checks: list[Check] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    # Score parts in points out of 1 (correctness, structure, speed): what partial credit uses.
    credit: dict[CreditPart, float] = field(default_factory=dict)
    speedup_spread: dict[str, float] | None = None
    # Speed relative to the problem's yardstick, timed in the same rounds: what speed credit is for.
    yardstick_speedup: float | None = None
    yardstick_spread: dict[str, Any] | None = None  # cv, ...; and the rounds' placements (a list)
    gflops: float | None = None  # the candidate's, from the problem's FLOP count and its median time
    peak_gflops: float | None = None  # this core's FMA peak, measured in the same run (CPU only)
    timings: dict[str, float] = field(default_factory=dict)  # seconds per grading stage
    runtimes_ms: dict[str, float] = field(default_factory=dict)  # median per function timed
    student_output: str = ""
    seed: int | None = None
    review: bool = False  # flagged for a human (e.g. an implausible speedup)
    grader_fault: bool = False  # the grader failed, not the submission: regrade rather than score 0
    cpu: str | None = None  # the LLVM CPU the code was compiled for (None: nothing was compiled)
    # Where it was graded and timed: "HOST (processor model)", or the RPC device; on a cluster
    # (tvm-course grade --scheduler) it says which worker's machine timed it.
    machine: str | None = None
    # The schedule's trace as a short canonical outline (engine/trace_outline.py), for the
    # instructor's similarity hints; None where no trace passed the schema.
    trace_outline: list[str] | None = None
    # What the schedule does: its loop nest on the default workload (engine/nest_outline.py), which
    # the similarity hints compare; None where the trace did not replay.
    schedule_outline: list[str] | None = None
    # The workload graded: whose variant (student id, or None) and its sizes (problems/variants.py).
    variant: dict | None = None
    # Set where this was a re-timing of the same submission (nbgrader_ext/steady.py): whether its
    # speed band stood or moved, and why.
    retimed: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")
        # Any of these may quote the submission; made safe once, here, for every output mode.
        self.messages = [visible(m) for m in self.messages]
        self.checks = [Check(c.name, bool(c.passed), visible(c.message)) for c in self.checks]
        self.student_output = visible(self.student_output)

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_dict(cls, data: dict) -> "Result":
        """A Result as to_dict wrote it, today or in a notebook graded by an earlier version
        (whose fields are a subset of today's). ValueError for a status or check that is not one."""
        data = dict(data)
        data["checks"] = [Check.from_wire(c, f"check {index}") for index, c in enumerate(data.get("checks", []))]
        return cls(**data)

    def to_text(self) -> str:
        # A grader fault is not the student's score: say it is pending rather than print a 0.
        headline = "GRADER FAULT  not scored (pending until regraded; nothing counts against you)" if self.grader_fault \
            else f"{self.status.upper()}  score {self.score:.2f}"
        lines = [f"{self.problem} ({self.target}): {headline}"]
        if self.variant and self.variant.get("student"):
            lines.append(f"  workload: the variant of {visible(str(self.variant['student']))}: {_shape_text(self.variant)}")
        if self.speedup is not None:
            spread = ""
            if self.speedup_spread:
                spread = f" (middle half {self.speedup_spread['q1']:.2f}-{self.speedup_spread['q3']:.2f})"
            lines.append(f"  speedup over the baseline: {self.speedup:.2f}x{spread}")
        if self.yardstick_speedup is not None:
            gflops = f", {self.gflops:.0f} GFLOP/s" if self.gflops is not None else ""
            if self.gflops is not None and self.peak_gflops:
                gflops += f" ({self.gflops / self.peak_gflops:.0%} of this core's FMA peak)"
            lines.append(f"  speed against the yardstick: {self.yardstick_speedup:.2f}x{gflops}")
        for check in self.checks:
            mark = "ok  " if check.passed else "FAIL"
            lines.append(f"  [{mark}] {check.name}: {check.message}")
        for message in self._messages_not_in_checks():
            lines.append(f"  {message}")
        if self.student_output.strip():
            lines.append("  your code printed (last lines):")
            lines.extend("    " + line for line in self.student_output.rstrip().splitlines()[-10:])
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.to_text()

    def _messages_not_in_checks(self) -> list[str]:
        """The messages to show beside the checks: a rejection's message is its failed check's, shown once."""
        shown = {check.message for check in self.checks}
        return [message for message in self.messages if message not in shown]

    def _repr_html_(self) -> str:
        colour = {"passed": "#1a7f37", "needs-gpu": "#9a6700"}.get(self.status, "#cf222e")
        rows = "".join(
            f"<tr><td>{'&#10003;' if c.passed else '&#10007;'}</td><td><b>{html.escape(c.name)}</b></td>"
            f"<td>{html.escape(c.message)}</td></tr>"
            for c in self.checks
        )
        speed = f"<p>Speedup over the baseline: <b>{self.speedup:.2f}x</b></p>" if self.speedup is not None else ""
        if self.variant and self.variant.get("student"):
            speed = (f"<p>Workload: the variant of {html.escape(visible(str(self.variant['student'])))}: "
                     f"{html.escape(_shape_text(self.variant))}</p>") + speed
        notes = "".join(f"<li>{html.escape(m)}</li>" for m in self._messages_not_in_checks())
        output = (
            f"<details><summary>Your code printed</summary><pre>{html.escape(self.student_output)}</pre></details>"
            if self.student_output.strip()
            else ""
        )
        return (
            f"<div><p><b style='color:{colour}'>{self.status.upper()}</b> &mdash; {html.escape(self.problem)} "
            f"({html.escape(self.target)}), score <b>{self.score:.2f}</b></p>{speed}"
            f"<table>{rows}</table><ul>{notes}</ul>{output}</div>"
        )


def _shape_text(variant: dict) -> str:
    sizes = {k: v for k, v in variant.items() if k != "student"}
    try:
        from ..problems.variants import Variant

        return Variant.from_dict(sizes).describe().split(";")[0]
    except ValueError:
        return ", ".join(f"{k} {v}" for k, v in sizes.items())
