"""Grading a submitted notebook's answers outside the student's kernel.

The answer cells' source is taken from the submission (after nbgrader has restored the
locked cells), graded by the sandboxed schedule pipeline or read as arithmetic, and turned
into a score and an explanation for every test cell the plan names, on the student's own
variant (problems/variants.py): their schedule runs on their workload, their arithmetic is
marked against their numbers. By default no kernel
runs the notebook at all; a course that opts in (TrustedGrader.execute_student_notebooks) has
the student's kernel run it at the same time, for the feedback's sake, and nothing it does
reaches these scores. Schedule gradings run in threads (each is two child processes), so they
overlap with the kernel's run.
"""
from __future__ import annotations

import json
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..costmodel.grade import answer_not_run
from ..engine.config import GraderConfig
from ..problems import get_problem
from ..problems.variants import JOURNAL, Variant
from ..engine.report import Result
from .credit import score_part
from .normalise import missing_text, submission_record
from .plan import METADATA_KEY, Answer, GradingPlan
from .questions import mark_answers
from .safe_arithmetic import read_assignments
from .steady import Earlier, keep_band

TRUSTED_NOTE = "(scored by the instructor's grader from the source of your answer cell, outside your notebook's kernel)"


@dataclass
class CellVerdict:
    fraction: float | None  # share of the cell's points; None: cannot be scored here (pending)
    text: str


@dataclass
class TrustedVerdicts:
    cells: dict[str, CellVerdict] = field(default_factory=dict)  # test cell grade_id -> verdict
    results: dict[str, Result] = field(default_factory=dict)  # schedule answer grade_id -> Result
    questions: dict[str, dict] = field(default_factory=dict)  # question answer grade_id -> marks
    cost_models: dict[str, dict] = field(default_factory=dict)  # cost-model answer grade_id -> CostModelResult.to_dict()

    def to_metadata(self) -> dict:
        return {
            "results": {k: r.to_dict() for k, r in self.results.items()},
            "questions": self.questions,
            "cost_models": self.cost_models,
            "scores": {k: v.fraction for k, v in self.cells.items()},
        }


def graded_record(path: Path) -> dict | None:
    """What an autograded notebook file says of its grading, for the course's readers (the class
    summary, the re-time pass, the benchmark): "results", "questions" and "cost_models" as to_metadata wrote them
    (only their entries that are dicts), and "submission", what normalising recorded
    (normalise.submission_record). None for a file that is not a notebook holding a record. The
    file is the grader's own, but it has been through nbgrader and a disk: its readers rely on
    this shape and on nothing else."""
    try:
        metadata = json.loads(Path(path).read_text(encoding="utf-8")).get("metadata")
        record = metadata.get(METADATA_KEY) if isinstance(metadata, dict) else None
    except (OSError, ValueError, AttributeError):
        return None
    if not isinstance(record, dict):
        return None
    return {"results": _dict_entries(record.get("results")), "questions": _dict_entries(record.get("questions")),
            "cost_models": _dict_entries(record.get("cost_models")), "submission": submission_record(metadata)}


def _dict_entries(found) -> dict:
    return {k: v for k, v in found.items() if isinstance(v, dict)} if isinstance(found, dict) else {}


def answer_sources(notebook, plan: GradingPlan) -> dict[str, str | None]:
    """The submitted source of each answer cell in the plan (None: the cell is missing, or was
    missing from the submission and is there as released: normalise.py)."""
    found: dict[str, str | None] = {grade_id: None for grade_id in plan.answers}
    missing = set(submission_record(notebook.get("metadata", {})).get("missing", []))
    for cell in notebook.cells:
        nbgrader = cell.get("metadata", {}).get("nbgrader", {})
        grade_id = nbgrader.get("grade_id")
        if grade_id in found and grade_id not in missing and found[grade_id] is None and nbgrader.get("solution") and cell.cell_type == "code":
            found[grade_id] = cell.source
    return found


class TrustedGrading:
    def __init__(self, plan: GradingPlan, config: GraderConfig, variant: Variant = JOURNAL, student: str | None = None,
                 earlier: dict[str, Earlier] | None = None, secret: bytes | None = None, cost_model_grid: str = "full"):
        self.plan, self.config, self.variant, self.student = plan, config, variant, student
        self.secret = secret  # the course's: a cost model's draws are derived with it (costmodel/grade.py)
        self.cost_model_grid = cost_model_grid  # "tiny" only where a test grades a class in seconds
        self.earlier = dict(earlier or {})  # answer grade_id -> an earlier grading's speed (steady.py)
        self._pool: ThreadPoolExecutor | None = None
        self._pending: dict[str, Future] = {}
        self.verdicts = TrustedVerdicts()
        self.refused: str | None = None

    def refuse(self, why: str) -> "TrustedGrading":
        """Grades nothing: the file handed in is not a notebook (normalise.py). Every test cell of
        the plan scores 0 and says `why`; no schedule runs."""
        self.refused = why
        return self

    def start(self, notebook) -> "TrustedGrading":
        sources = answer_sources(notebook, self.plan)
        record = submission_record(notebook.get("metadata", {}))
        schedules = [a for a in self.plan.answers.values() if a.kind in ("schedule", "cost-model")]
        if schedules:
            self._pool = ThreadPoolExecutor(max_workers=len(schedules), thread_name_prefix="trusted-grading")
        for answer in self.plan.answers.values():
            source = sources[answer.grade_id]
            if answer.kind == "schedule":
                if source is None:
                    self.verdicts.results[answer.grade_id] = _missing_result(answer, missing_text(answer.grade_id, record))
                else:
                    self._pending[answer.grade_id] = self._in_background(self._grade_schedule, answer, source)
            elif answer.kind == "cost-model":
                if source is None:
                    self.verdicts.cost_models[answer.grade_id] = answer_not_run(missing_text(answer.grade_id, record)).to_dict()
                else:
                    self._pending[answer.grade_id] = self._in_background(self._grade_cost_model, answer, source)
            else:
                self.verdicts.questions[answer.grade_id] = _mark_questions(answer, source, self.variant, missing_text(answer.grade_id, record))
        return self

    def _in_background(self, grade: Callable[[Answer, str], object], answer: Answer, source: str) -> Future:
        if self._pool is None:  # start() makes one wherever an answer is a schedule or a cost model
            raise RuntimeError("no thread pool for the schedule gradings")
        return self._pool.submit(grade, answer, source)

    def _grade_schedule(self, answer: Answer, source: str) -> Result:
        from .answer_cell import grade_schedule_cell

        result = grade_schedule_cell(answer.name, source, self.config, variant=self.variant, student=self.student)
        return keep_band(result, self.earlier.get(answer.grade_id))

    def _grade_cost_model(self, answer: Answer, source: str) -> dict:
        from ..costmodel.grade import grade_submission
        from ..engine.cpus import default_mcpu

        # The bar is the instructor's solution from the source notebook (the plan), run as the student's cell is.
        return grade_submission(source, self.variant.to_dict(), bar=answer.solution, secret=self.secret,
                                mcpu=self.config.mcpu or default_mcpu(), grid=self.cost_model_grid).to_dict()

    def finish(self) -> TrustedVerdicts:
        """Wait for the schedule gradings and score every test cell of the plan."""
        if self.refused is not None:
            return self._refused(self.refused)
        try:
            for grade_id, future in self._pending.items():
                if self.plan.answers[grade_id].kind == "cost-model":
                    self.verdicts.cost_models[grade_id] = future.result()
                else:
                    self.verdicts.results[grade_id] = future.result()
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
        for grade_id, cell in self.plan.scored.items():
            answer = self.plan.answers[cell.answer]
            if answer.kind == "schedule":
                score = score_part(self.verdicts.results[answer.grade_id], cell.part)
                self.verdicts.cells[grade_id] = CellVerdict(score.fraction, f"{score.message}\n{TRUSTED_NOTE}")
            elif answer.kind == "cost-model":
                graded = self.verdicts.cost_models[answer.grade_id]
                part = graded["parts"][cell.part]
                text = "\n".join([*graded.get("notes", []), *part["lines"], TRUSTED_NOTE])
                self.verdicts.cells[grade_id] = CellVerdict(part["fraction"], text)
            else:
                marks = self.verdicts.questions[answer.grade_id]
                self.verdicts.cells[grade_id] = CellVerdict(marks["fraction"], "\n".join(marks["lines"] + [TRUSTED_NOTE]))
        return self.verdicts

    def _refused(self, why: str) -> TrustedVerdicts:
        for answer in self.plan.answers.values():
            if answer.kind == "schedule":
                problem = get_problem(answer.name)
                self.verdicts.results[answer.grade_id] = Result(problem=problem.name, target=problem.target, status="rejected", messages=[why])
            elif answer.kind == "cost-model":
                self.verdicts.cost_models[answer.grade_id] = answer_not_run(why).to_dict()
            else:
                self.verdicts.questions[answer.grade_id] = {"fraction": 0.0, "lines": [why], "right": []}
        for grade_id in self.plan.scored:
            self.verdicts.cells[grade_id] = CellVerdict(0.0, why)
        return self.verdicts


def _missing_result(answer: Answer, why: str) -> Result:
    problem = get_problem(answer.name)
    return Result(
        problem=problem.name,
        target=problem.target,
        status="error",
        messages=[why],
    )


def _mark_questions(answer: Answer, source: str | None, variant: Variant, why_missing: str = "") -> dict:
    if source is None:
        verdicts: list = []
        fraction, notes = 0.0, [why_missing or f"the answer cell '{answer.grade_id}' is missing from the submission"]
    else:
        read = read_assignments(source, variant.constants())
        key = answer.key_for(variant)
        fraction, verdicts = mark_answers(key, read.values, read.problems_for(q.name for q in key))
        notes = read.notes
    return {
        "fraction": round(fraction, 4),
        "lines": [v.message for v in verdicts] + notes,
        "right": [v.name for v in verdicts if v.right],
    }
