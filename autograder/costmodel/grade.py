"""One cost-model submission graded: its ranking part and its search part, on this machine's table.

The table is this machine's (table.measure: cached, audited). The draws (ranking splits, the
searches' first batches) come from a seed derived from the course secret, the student and their
shape (`sample_seed`), so a student cannot know in advance which candidates they are tested on;
the reference model is scored on the same draws. Each part is 0 for a learner that fails in it
(LearnerFailure: the message says why) and pending for a fault of the grader (no table, the
learner's sandbox did not start, a table on which the reference is no better than random).
"""
from __future__ import annotations

import hashlib
import hmac
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field

import numpy as np

from . import PARTS, scoring
from .learner import LearnerChild, LearnerFailure, LearnerFault, LearnerLimits
from .reference import reference_factory
from .table import Table

NO_STUDENT_SEED = 0  # a self-check, a demo: public draws


def sample_seed(secret: bytes | None, student: str | None, shape_key: dict) -> int:
    """The draws' seed: an HMAC of the student and their shape under the course secret."""
    if not secret or not student:
        return NO_STUDENT_SEED
    message = b"tvm-course cost-model draws\0" + student.encode() + b"\0" + repr(sorted(shape_key.items())).encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")


@dataclass
class PartVerdict:
    fraction: float | None  # None: pending (the grader's fault)
    lines: list[str]

    @property
    def pending(self) -> bool:
        return self.fraction is None


@dataclass
class CostModelResult:
    parts: dict[str, PartVerdict]
    table_key: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # the table's audit, and anything else said once
    plot: dict = field(default_factory=dict)  # measured and predicted (first split), search curves

    @property
    def pending(self) -> bool:
        return any(p.pending for p in self.parts.values())

    def to_dict(self) -> dict:
        return {"parts": {k: asdict(v) for k, v in self.parts.items()}, "table_key": self.table_key,
                "notes": self.notes, "plot": self.plot}


def syntax_problem(source: str) -> str | None:
    try:
        compile(source, "learner.py", "exec", dont_inherit=True)
    except SyntaxError as error:
        return f"syntax error on line {error.lineno}: {error.msg}"
    except (ValueError, RecursionError, MemoryError) as error:
        return f"the answer cell cannot be compiled: {type(error).__name__}"
    return None


class _Children:
    """A scoring.ModelFactory of LearnerChild, each closed at the end of the part."""

    def __init__(self, source: str, rows: np.ndarray, limits: LearnerLimits):
        self.source, self.rows, self.limits, self.made = source, rows, limits, []

    def __call__(self, episode: str) -> LearnerChild:
        child = LearnerChild(self.source, self.rows, self.limits, episode)
        self.made.append(child)
        return child

    def close(self) -> None:
        for child in self.made:
            child.close()


def _run_part(name: str, run) -> PartVerdict:
    try:
        return run()
    except LearnerFailure as failure:
        return PartVerdict(0.0, [f"your learner failed in the {name} part, which scores 0: {failure}"])
    except (LearnerFault, scoring.ScaleUnfit) as fault:
        return PartVerdict(None, [f"the {name} part could not be graded on this machine (pending, not your fault): {fault}"])


def grade_learner(source: str, table: Table, seed: int = NO_STUDENT_SEED, limits: LearnerLimits = LearnerLimits()) -> CostModelResult:
    """Both parts of `source` (the answer cell) on `table`."""
    result = CostModelResult({}, table.key, list(table.notes))
    problem = syntax_problem(source)
    if problem:
        for part in PARTS:
            result.parts[part] = PartVerdict(0.0, [f"your answer cell cannot run, so the {part} part scores 0: {problem}"])
        return result
    rows, seconds = table.rows, table.seconds
    plan = scoring.ScoringPlan.for_pool(len(seconds))
    reference = reference_factory(rows)

    def ranking() -> PartVerdict:
        children = _Children(source, rows, limits)
        try:
            student = scoring.rank(children, seconds, plan, seed)
        finally:
            children.close()
        first = student.per_split[0]
        result.plot["ranking"] = {"seconds": seconds[first["indices"]].tolist(), "scores": first["scores"]}
        score = scoring.ranking_credit(student, scoring.rank(reference, seconds, plan, seed), plan)
        return PartVerdict(score.fraction, score.lines)

    def search() -> PartVerdict:
        children = _Children(source, rows, limits)
        try:
            student = scoring.search(children, seconds, plan, seed)
        finally:
            children.close()
        theirs = scoring.search(reference, seconds, plan, seed)
        result.plot["search"] = {"student": student.curves[0], "reference": theirs.curves[0],
                                 "pool_best": float(seconds.min())}
        score = scoring.search_credit(student, theirs, plan)
        return PartVerdict(score.fraction, score.lines)

    # The two parts' children overlap (each mostly waits on its child): about half the wall time on two cores.
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cost-model-part") as pool:
        running = {"ranking": pool.submit(_run_part, "ranking", ranking), "search": pool.submit(_run_part, "search", search)}
        result.parts = {name: future.result() for name, future in running.items()}
    return result


def grade_submission(source: str, variant_dict: dict | None, *, student: str | None = None, secret: bytes | None = None,
                     mcpu: str | None = None, grid: str = "full", folder=None,
                     limits: LearnerLimits = LearnerLimits(), progress=None) -> CostModelResult:
    """The class run's grading of one answer cell: this machine's table for the student's shape
    (cached, audited; none: both parts pending), then both parts on the student's draws."""
    from .space import TINY_SHAPE, shape_for
    from .table import TableError, measure

    shape = TINY_SHAPE if grid == "tiny" else shape_for(variant_dict)
    try:
        table = measure(shape, grid, mcpu, folder=folder, progress=progress)
    except (TableError, ValueError) as error:
        why = f"the candidate table could not be had on the grading machine (pending, not your fault): {error}"
        return CostModelResult({part: PartVerdict(None, [why]) for part in PARTS})
    result = grade_learner(source, table, sample_seed(secret, student, shape.to_dict()), limits)
    result.notes.insert(0, f"your workload: {shape.describe()}; {len(table.seconds)} candidates measured on this "
                           f"machine ({table.key.get('target_cpu')})")
    return result
