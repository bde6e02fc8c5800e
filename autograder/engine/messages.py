"""What the children of one grading tell the pipeline, as typed records read field by field.

Two children talk to `pipeline.py` over their channels (sandbox.py), and the two are trusted
differently:

- the student's child (student_runner.py) runs the submission, which can write anything to
  its channel: a `StudentReport` that does not read is the submission's verdict (an error,
  score 0), and the text it carries is the student's own;
- the evaluator (evaluate.py) runs only the grader's code and TVM's: an `EvaluatorReport` or
  another evaluator message that does not read is a grader fault (pending), never a zero.

Every record has `from_wire(obj)`, which checks every field's type and range and raises
wire.MalformedMessage naming the field; the senders write them with `to_wire()` where the
record is theirs to build. (The runners' timings are read by measure.check_timings; the
worker processes' results by course/workers.py.)
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .report import Check, Status
from .wire import Fields, MalformedMessage

__all__ = ["CompileLoad", "EvaluatorReport", "MalformedMessage", "Outcome", "StudentReport", "StudentStarted"]

# How the evaluator's work on a trace ended: "ran" goes on to scoring; any other is the Result's
# status as it is (a replay or compile that failed is an "error", its message says which).
Outcome = Literal["ran", "error", "rejected", "needs-gpu", "crashed", "timeout"]
OUTCOMES: tuple[Outcome, ...] = get_args(Outcome)


def _spread(fields: Fields, name: str) -> dict[str, Any] | None:
    """A speedup's spread (bench.Speedup.as_dict, and for the yardstick BandRule's decision and
    the rounds' placements): the fields the pipeline reads, checked; kept as the dict it is,
    since it goes into Result.speedup_spread / yardstick_spread as sent."""
    if not fields.has(name):
        return None
    spread = fields.mapping(name)
    for key in ("median", "q1", "q3", "minimum", "maximum"):
        spread.number(key, minimum=0.0)
    spread.number("cv")
    spread.integer("n", minimum=1)
    if spread.has("interval"):
        interval = spread.numbers("interval", minimum=0.0)
        if len(interval) != 2 or interval[0] > interval[1]:
            spread.fail("interval", "is not two numbers, low then high")
    if spread.has("decided"):
        spread.boolean("decided")
    if spread.has("confidence"):
        spread.number("confidence", minimum=0.0, maximum=1.0)
    if spread.has("rounds"):
        spread.integer("rounds", minimum=1)
    placements = spread.raw("placements")
    if placements is not None:
        if not isinstance(placements, list):
            spread.fail("placements", "is not a list")
        for index, placement in enumerate(placements):
            one = Fields(placement, fields.record, f"{fields.prefix}{name}.placements[{index}].")
            one.text("kind")
            one.integer("step", minimum=0)
            one.number("ratio", minimum=0.0)
    return dict(spread.obj)


@dataclass(frozen=True)
class EvaluatorReport:
    """The evaluator's verdict on one trace (its "result" message)."""

    outcome: Outcome
    message: str = ""  # why, where the outcome is not "ran"
    checks: tuple[Check, ...] = ()
    messages: tuple[str, ...] = ()
    correct: bool | None = None
    schedule_outline: list[str] | None = None  # nest_outline's, for the similarity hints
    speedup: dict[str, Any] | None = None  # over the baseline: bench.Speedup.as_dict
    vs_yardstick: dict[str, Any] | None = None  # against the yardstick: that, the band decision, the placements
    runtimes_ms: dict[str, float] = field(default_factory=dict)
    gflops: dict[str, float] = field(default_factory=dict)
    speed_pending: str | None = None  # correct on an OpenCL device: why the speed waits for a GPU
    stage_s: dict[str, float] = field(default_factory=dict)  # seconds per evaluator stage

    def to_wire(self) -> dict[str, Any]:
        return {"kind": "result", "outcome": self.outcome, "message": self.message,
                "checks": [c.to_wire() for c in self.checks], "messages": list(self.messages), "correct": self.correct,
                "schedule_outline": self.schedule_outline, "speedup": self.speedup, "vs_yardstick": self.vs_yardstick,
                "runtimes_ms": self.runtimes_ms, "gflops": self.gflops, "speed_pending": self.speed_pending,
                "stage_s": self.stage_s}

    @classmethod
    def from_wire(cls, obj: object) -> "EvaluatorReport":
        fields = Fields(obj, "the evaluator's report")
        checks = fields.raw("checks")
        if not isinstance(checks, list):
            fields.fail("checks", "is not a list")
        return cls(
            outcome=fields.choice("outcome", OUTCOMES),
            message=fields.text("message", default=""),
            checks=tuple(Check.from_wire(c, f"the evaluator's report, check {index}") for index, c in enumerate(checks)),
            messages=tuple(fields.texts("messages", default=[])),
            correct=fields.optional_boolean("correct"),
            schedule_outline=fields.optional_texts("schedule_outline"),
            speedup=_spread(fields, "speedup"),
            vs_yardstick=_spread(fields, "vs_yardstick"),
            runtimes_ms=fields.number_map("runtimes_ms", minimum=0.0),
            gflops=fields.number_map("gflops", minimum=0.0),
            speed_pending=fields.optional_text("speed_pending"),
            stage_s=fields.number_map("stage_s", minimum=0.0),
        )


@dataclass(frozen=True)
class CompileLoad:
    """What the evaluator said, before compiling, the scheduled function asks of LLVM (checks.compile_load)."""

    widest_vector: int
    vector_block: str | None
    unrolled_copies: int

    @classmethod
    def from_wire(cls, obj: object) -> "CompileLoad":
        fields = Fields(obj, "the evaluator's compile load")
        return cls(fields.integer("widest_vector", minimum=0), fields.optional_text("vector_block"),
                   fields.integer("unrolled_copies", minimum=0))


def evaluator_said(obj: object, kind: str) -> str:
    """The text of an evaluator's "internal" or "usage" message, or its "target" message's CPU name."""
    fields = Fields(obj, f"the evaluator's {kind} message")
    return fields.text("cpu" if kind == "target" else "message")


# What the student's child reports (student_runner.py): the trace, or why there is none.
StudentKind = Literal["trace", "memory", "schedule_error", "exception", "missing"]
STUDENT_KINDS: tuple[StudentKind, ...] = get_args(StudentKind)
# What a failure the child reports makes of the grading.
STATUS_OF_STUDENT_KIND: dict[StudentKind, Status] = {
    "memory": "crashed", "schedule_error": "error", "exception": "error", "missing": "error"}


@dataclass(frozen=True)
class StudentStarted:
    """Sent by the student's child before the student's code runs ("stage" "student"): what
    confinement it applied. Its arrival is what makes a later failure the student's."""

    confinement: str

    def to_wire(self) -> dict[str, Any]:
        return {"kind": "stage", "stage": "student", "confinement": self.confinement}


@dataclass(frozen=True)
class StudentReport:
    """The student's child's last word: the trace (its content is trace_schema's to check), or a
    failure with the student's message, where in their file (`where`) and a failed import's module."""

    kind: StudentKind
    message: str = ""
    trace: Any = None
    where: tuple[str, ...] = ()
    import_error: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"kind": self.kind}
        if self.kind == "trace":
            wire["trace"] = self.trace
        else:
            wire["message"] = self.message
        if self.where:
            wire["where"] = list(self.where)
        if self.import_error is not None:
            wire["import_error"] = self.import_error
        return wire

    @classmethod
    def from_wire(cls, obj: object) -> "StudentReport":
        fields = Fields(obj, "the report of the child running your code")
        kind = fields.choice("kind", STUDENT_KINDS)
        if kind == "trace":  # whatever it holds, even nothing, is trace_schema's to refuse (rejected, saying why)
            return cls(kind, trace=fields.raw("trace"))
        return cls(kind, fields.text("message"), where=tuple(fields.texts("where", default=[])),
                   import_error=fields.optional_text("import_error"))
