"""One cost-model submission graded: its ranking part and its search part, on this machine's table.

The table is this machine's (table.measure: cached, audited). The full-credit bar is the
instructor's solution (the course's source notebook's answer cell, nbgrader_ext/plan.py), run
through the same confined learner path as the student's cell (learner.py), on the same table and
the same draws: so the instructor's solution earns full credit by construction on every CPU, and
nothing in this package (which students receive) is the bar.

The draws (ranking splits, the searches' first batches) come from a seed derived from the course
secret and the student's shape (`sample_seed`): no student can know them in advance, and the
students who share a shape (and so a table) share them, so the bar's outcomes are computed once
per table, draws and solution and kept (`BarCache`) instead of once per student. (Per-student
draws would buy nothing a student could use: a learner sees at fit and predict time exactly the
candidates it is given either way, and the times are the table's, the same for the shape.)

Each part is 0 for a learner that fails in it (LearnerFailure: the message says why) and pending
for a fault of the grader (no table, no solution, the learner's sandbox did not start, the
instructor's model failed or is no better than random on this table).

The self-check (`check_submission`) cannot know the instructor's model: it shows the student's
numbers beside random's and the public baseline's (baseline.py) and states the class run's rule
in words (scoring.CLASS_RUN_RULE); it gives no points. Its `plot` is the class run's, drawn from
the same outcomes (`_ranking_plot`, `_search_plot`), the baseline where the instructor's model
would be: the student sees the feedback's figures before handing in.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from . import PARTS, scoring
from .baseline import baseline_factory
from .learner import LearnerChild, LearnerFailure, LearnerFault, LearnerLimits
from .table import Table

NO_STUDENT_SEED = 0  # a self-check, a demo: public draws


def sample_seed(secret: bytes | None, shape_key: dict) -> int:
    """The draws' seed: an HMAC of the shape under the course secret (public without a secret)."""
    if not secret:
        return NO_STUDENT_SEED
    message = b"tvm-course cost-model draws\0" + repr(sorted(shape_key.items())).encode()
    return int.from_bytes(hmac.new(secret, message, hashlib.sha256).digest()[:8], "big")


@dataclass
class PartVerdict:
    fraction: float | None  # None: pending (the grader's fault)
    lines: list[str]
    failed: bool = False  # the student's learner (or answer cell) failed in this part: a zero, `lines` say why
    gist: str = ""  # one short line for the instructor's table: the numbers, or why the learner failed

    @property
    def pending(self) -> bool:
        return self.fraction is None


@dataclass
class CostModelResult:
    parts: dict[str, PartVerdict]
    table_key: dict = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # the table's audit, and anything else said once
    # What the feedback draws (feedback_plots.py): "ranking", the first split's held-out times and
    # the student's scores; "search", the mean fraction of the pool's best found after each
    # measurement, the student's, the instructor's and random's
    plot: dict = field(default_factory=dict)

    @property
    def pending(self) -> bool:
        return any(p.pending for p in self.parts.values())

    def to_dict(self) -> dict:
        return {"parts": {k: asdict(v) for k, v in self.parts.items()}, "table_key": self.table_key,
                "notes": self.notes, "plot": self.plot}


@dataclass
class PartCheck:
    """A self-check's part: the student's numbers beside random's and the baseline's (no credit),
    or why their learner failed in it (which the class run scores 0 as well)."""
    failed: bool
    lines: list[str]


@dataclass
class SelfCheckResult:
    parts: dict[str, PartCheck]
    notes: list[str] = field(default_factory=list)
    rule: str = scoring.CLASS_RUN_RULE
    plot: dict = field(default_factory=dict)  # as CostModelResult.plot, the baseline's search as "baseline"


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


def _confined(part: str, source: str, table: Table, plan: scoring.ScoringPlan, seed: int, limits: LearnerLimits):
    """One part's outcome of the learner `source`, run in its confined children."""
    children = _Children(source, table.rows, limits)
    try:
        run = scoring.rank if part == "ranking" else scoring.search
        return run(children, table.seconds, plan, seed)
    finally:
        children.close()


def _run_part(name: str, run) -> PartVerdict:
    try:
        return run()
    except LearnerFailure as failure:
        return PartVerdict(0.0, [f"your learner failed in the {name} part, which scores 0: {failure}"], failed=True,
                           gist=_gist(f"learner failed: {failure}"))
    except (LearnerFault, scoring.ScaleUnfit) as fault:
        return PartVerdict(None, [f"the {name} part could not be graded on this machine (pending, not your fault): {fault}"])


def answer_not_run(why: str) -> CostModelResult:
    """Both parts 0, failed, for an answer cell that never reached a learner: missing from the
    submission, or in a file refused as not a notebook (nbgrader_ext/trusted.py). The student's
    failure, not the grader's: the class summary says "failed", and `why` in its gist."""
    return CostModelResult({part: PartVerdict(0.0, [why], failed=True, gist=_gist(why)) for part in PARTS})


def _gist(text: str, limit: int = 120) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


# --- the bar: the instructor's model's outcomes, kept per table, draws and solution -----------

_OUTCOMES = {"ranking": scoring.RankingOutcome, "search": scoring.SearchOutcome}


class BarCache:
    """The instructor's model's outcome of a part, computed once per (solution, table, draws,
    plan) in this process, and kept as a file in the grader's private tables folder where one is
    given (a class run's workers are separate processes). The key holds the table's times, so a
    re-measured table is a new key. A file that cannot be read is computed again, never trusted
    in part."""

    def __init__(self):
        self.kept: dict[str, object] = {}
        self.locks: dict[str, threading.Lock] = {}
        self.lock = threading.Lock()

    @staticmethod
    def key(part: str, bar: str, table: Table, plan: scoring.ScoringPlan, seed: int) -> str:
        digest = hashlib.sha256()
        for piece in (part.encode(), bar.encode("utf-8", "surrogatepass"), repr(plan).encode(), str(seed).encode(),
                      np.ascontiguousarray(table.rows, dtype=np.int64).tobytes(),
                      np.ascontiguousarray(table.seconds, dtype=np.float64).tobytes()):
            digest.update(len(piece).to_bytes(8, "big") + piece)
        return digest.hexdigest()[:40]

    def outcome(self, part: str, bar: str, table: Table, plan: scoring.ScoringPlan, seed: int,
                limits: LearnerLimits, folder: Path | None = None):
        key = self.key(part, bar, table, plan, seed)
        with self.lock:
            lock = self.locks.setdefault(key, threading.Lock())
        with lock:  # two students of one shape graded at once: the bar runs once
            if key in self.kept:
                return self.kept[key]
            path = folder / f"bar-{key}.json" if folder is not None else None
            found = _read_outcome(path, _OUTCOMES[part]) if path is not None else None
            if found is None:
                try:
                    found = _confined(part, bar, table, plan, seed, limits)
                except LearnerFailure as failure:
                    raise LearnerFault(f"the instructor's model failed on this table (a grader fault): {failure}") from None
                if path is not None:
                    _write_outcome(path, found)
            self.kept[key] = found
            return found


_NUMBERS = {scoring.RankingOutcome: ("top_k", "pairwise", "random_top_k"), scoring.SearchOutcome: ("measurements", "random")}
_LISTS = {scoring.RankingOutcome: "per_split", scoring.SearchOutcome: "curves"}


def _read_outcome(path: Path, kind):
    """A kept outcome, or None for a file that is missing, cut short or not one (computed again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or set(data) != set(_NUMBERS[kind]) | {_LISTS[kind]}:
            return None
        if not all(type(data[name]) in (int, float) and np.isfinite(data[name]) for name in _NUMBERS[kind]):
            return None
        if not isinstance(data[_LISTS[kind]], list):
            return None
        return kind(**data)
    except (OSError, ValueError, TypeError):
        return None


def _write_outcome(path: Path, outcome) -> None:
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".bar-", suffix=".json")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(asdict(outcome), out)
        os.replace(temporary, path)
    except OSError:
        pass  # a cache: the next grading computes it again


BAR_CACHE = BarCache()


def grade_learner(source: str, table: Table, seed: int = NO_STUDENT_SEED, limits: LearnerLimits = LearnerLimits(),
                  *, bar: str, bar_folder: Path | None = None) -> CostModelResult:
    """Both parts of `source` (the answer cell) on `table`, scaled to `bar` (the instructor's
    solution cell's text) on the same table and draws."""
    result = CostModelResult({}, table.key, list(table.notes))
    problem = syntax_problem(source)
    if problem:
        for part in PARTS:
            result.parts[part] = PartVerdict(0.0, [f"your answer cell cannot run, so the {part} part scores 0: {problem}"],
                                             failed=True, gist=_gist(f"answer cell cannot run: {problem}"))
        return result
    if not bar.strip() or syntax_problem(bar):
        why = "the course's source notebook has no runnable solution for the cost model (pending, not your fault)"
        result.parts = {part: PartVerdict(None, [why]) for part in PARTS}
        return result
    plan = scoring.ScoringPlan.for_pool(len(table.seconds))

    def ranking(student: scoring.RankingOutcome, theirs: scoring.RankingOutcome) -> PartVerdict:
        result.plot["ranking"] = _ranking_plot(student, table, plan)
        score = scoring.ranking_credit(student, theirs, plan)
        return PartVerdict(score.fraction, score.lines, gist=score.gist)

    def search(student: scoring.SearchOutcome, theirs: scoring.SearchOutcome) -> PartVerdict:
        result.plot["search"] = _search_plot(student, "instructor", theirs, table, plan)
        score = scoring.search_credit(student, theirs, plan)
        return PartVerdict(score.fraction, score.lines, gist=score.gist)

    # The four runs (each part, the student's and the bar's) mostly wait on their children: overlapped.
    with ThreadPoolExecutor(max_workers=4, thread_name_prefix="cost-model-part") as pool:
        students = {part: pool.submit(_confined, part, source, table, plan, seed, limits) for part in PARTS}
        bars = {part: pool.submit(BAR_CACHE.outcome, part, bar, table, plan, seed, limits, bar_folder) for part in PARTS}
        credit = {"ranking": ranking, "search": search}
        result.parts = {part: _run_part(part, lambda part=part: credit[part](students[part].result(), bars[part].result()))
                        for part in PARTS}
    return result


def _ranking_plot(student: scoring.RankingOutcome, table: Table, plan: scoring.ScoringPlan) -> dict:
    """What feedback_plots.ranking_figure draws: the first split's held-out times and the student's scores."""
    first = student.per_split[0]
    return {"seconds": table.seconds[first["indices"]].tolist(), "scores": first["scores"], "top_k": plan.top_k}


def _search_plot(student: scoring.SearchOutcome, reference: str, theirs: scoring.SearchOutcome, table: Table,
                 plan: scoring.ScoringPlan) -> dict:
    """What feedback_plots.search_figure draws: the mean fraction of the pool's best found after
    each measurement, the student's, the `reference` model's ("instructor" or "baseline") and random's."""
    best, budget = float(table.seconds.min()), min(max(plan.budgets), len(table.seconds))
    return {"student": scoring.fraction_of_best(student.curves, best, budget),
            reference: scoring.fraction_of_best(theirs.curves, best, budget),
            "random": scoring.random_fraction_of_best(table.seconds, budget),
            "goal": 1 / scoring.NEAR_BEST, "searches": plan.seeds}


def check_learner(source: str, table: Table, limits: LearnerLimits = LearnerLimits()) -> SelfCheckResult:
    """The self-check's two parts of `source` on `table` (public draws): the student's numbers
    beside random's and the baseline's, through the class run's learner path; no credit."""
    result = SelfCheckResult({}, list(table.notes))
    problem = syntax_problem(source)
    if problem:
        result.parts = {part: PartCheck(True, [f"your answer cell cannot run (the class run scores the {part} part 0): "
                                               f"{problem}"]) for part in PARTS}
        return result
    plan = scoring.ScoringPlan.for_pool(len(table.seconds))
    baseline = baseline_factory(table.rows)
    lines = {"ranking": scoring.ranking_lines, "search": scoring.search_lines}
    run = {"ranking": scoring.rank, "search": scoring.search}

    def check(part: str) -> tuple[PartCheck, dict | None]:
        try:
            student = _confined(part, source, table, plan, NO_STUDENT_SEED, limits)
        except LearnerFailure as failure:
            return PartCheck(True, [f"your learner failed in the {part} part (the class run scores it 0): {failure}"]), None
        except LearnerFault as fault:
            return PartCheck(False, [f"the {part} part could not be checked on this machine (not your fault): {fault}"]), None
        theirs = run[part](baseline, table.seconds, plan, NO_STUDENT_SEED)
        plot = _ranking_plot(student, table, plan) if part == "ranking" else _search_plot(student, "baseline", theirs, table, plan)
        return PartCheck(False, lines[part](student, theirs, plan)), plot

    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="cost-model-check") as pool:
        running = {part: pool.submit(check, part) for part in PARTS}
        for part, future in running.items():
            result.parts[part], plot = future.result()
            if plot is not None:  # drawn only where the learner ran, as the feedback draws it
                result.plot[part] = plot
    return result


def _table(variant_dict: dict | None, grid: str, mcpu: str | None, folder, progress) -> Table:
    from .space import TINY_SHAPE, shape_for
    from .table import measure

    shape = TINY_SHAPE if grid == "tiny" else shape_for(variant_dict)
    return measure(shape, grid, mcpu, folder=folder, progress=progress)


def _workload_note(table: Table) -> str:
    return (f"your workload: {table.shape.describe()}; {len(table.seconds)} candidates measured on this "
            f"machine ({table.key.get('target_cpu')})")


def grade_submission(source: str, variant_dict: dict | None, *, bar: str, secret: bytes | None = None,
                     mcpu: str | None = None, grid: str = "full", folder=None,
                     limits: LearnerLimits = LearnerLimits(), progress=None) -> CostModelResult:
    """The class run's grading of one answer cell against `bar` (the instructor's solution cell):
    this machine's table for the student's shape (cached, audited; none: both parts pending),
    then both parts on the shape's secret draws."""
    from .table import TableError, private_folder, table_dir

    try:
        table = _table(variant_dict, grid, mcpu, folder, progress)
    except (TableError, ValueError) as error:
        why = f"the candidate table could not be had on the grading machine (pending, not your fault): {error}"
        return CostModelResult({part: PartVerdict(None, [why]) for part in PARTS})
    try:
        bar_folder = private_folder(Path(folder)) if folder is not None else table_dir()
    except OSError:
        bar_folder = None  # the bar is then computed in this process only
    result = grade_learner(source, table, sample_seed(secret, table.shape.to_dict()), limits, bar=bar, bar_folder=bar_folder)
    result.notes.insert(0, _workload_note(table))
    return result


def check_submission(source: str, variant_dict: dict | None, *, mcpu: str | None = None, grid: str = "full",
                     folder=None, limits: LearnerLimits = LearnerLimits(), progress=None) -> SelfCheckResult:
    """The self-check of one answer cell: this machine's table, the student's numbers beside
    random's and the baseline's, and the class run's rule in words."""
    from .table import TableError

    try:
        table = _table(variant_dict, grid, mcpu, folder, progress)
    except (TableError, ValueError) as error:
        why = f"the candidate table could not be measured on this machine: {error}"
        return SelfCheckResult({part: PartCheck(False, [why]) for part in PARTS})
    result = check_learner(source, table, limits)
    result.notes.insert(0, _workload_note(table))
    return result
