"""What an assignment notebook asks the trusted grader to do, read from the instructor's copy.

Cells of a source notebook carry a `tvm_course` entry in their metadata:

    answer cell (an nbgrader solution cell):
        {"answer": "schedule", "problem": "tile-fused-conv"}     graded by the schedule pipeline
        {"answer": "questions", "questions": "cpu-tile-arithmetic",  read and marked, never run,
         "key": {NAME: {"explanation": TEXT}}}       against what the cell's solution computes
                                                     for the student's variant
        {"answer": "cost-model"}             a feature function and a Model (autograder/costmodel/),
                                             run confined on the grading machine's candidate table;
                                             the cell's solution is the full-credit bar, run the same way
    test cell (an nbgrader grade cell):
        {"scores": "<answer cell's grade_id>", "part": "correctness" | "fusion" | "speed"}
        {"scores": "<answer cell's grade_id>", "part": "ranking" | "search"}      (a cost model)
        {"scores": "<answer cell's grade_id>"}                     (a question set: all of it)
    self-check cell (locked, not graded):
        {"reports": "<answer cell's grade_id>"}                   shows the trusted verdict in feedback

The plan is read from the course's source notebook, never from the submission, so a student
who edits their notebook's metadata changes nothing about how it is graded. None of this
metadata is released: course/nbgrader_config.py has `nbgrader generate_assignment` strip it
(StripInstructorMetadata), since the answer key is in it. The solution cell must compute
every answer of its key for every variant (problems/variants.py): the plan checks them all.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..costmodel import NAME as COST_MODEL, PARTS as COST_MODEL_PARTS
from ..problems import PROBLEMS
from ..problems.variants import JOURNAL, VARIANTS, Variant
from .credit import PARTS
from .questions import QUESTION_SETS, AnswerKeyError, Explained, KeyedQuestion, answer_key, keyed_for
from ..errors import TvmCourseError

METADATA_KEY = "tvm_course"


class PlanError(ValueError, TvmCourseError):
    """The source notebook's grading metadata is inconsistent; the message names the cell."""


@dataclass(frozen=True)
class Answer:
    grade_id: str
    kind: str  # "schedule", "questions" or "cost-model"
    name: str  # the problem, the question set, or costmodel.NAME
    key: tuple[Explained, ...] = field(default=(), repr=False)  # a question set's explanations (instructor-only)
    solution: str = field(default="", repr=False)  # the source notebook's solution cell: computes the answers, or is the cost model's bar

    def key_for(self, variant: Variant) -> tuple[KeyedQuestion, ...]:
        """A question set's right answers for one student's variant."""
        return keyed_for(self.key, self.solution, variant.constants())


@dataclass(frozen=True)
class ScoredCell:
    grade_id: str
    answer: str  # grade_id of the answer cell it scores
    part: str | None  # a schedule's or a cost model's part, or None for a whole question set


@dataclass
class GradingPlan:
    answers: dict[str, Answer] = field(default_factory=dict)
    scored: dict[str, ScoredCell] = field(default_factory=dict)
    reports: dict[str, str] = field(default_factory=dict)  # self-check cell grade_id -> answer grade_id

    def __bool__(self) -> bool:
        return bool(self.answers)


def plan_from_notebook(notebook: dict) -> GradingPlan:
    plan = GradingPlan()
    for index, cell in enumerate(notebook.get("cells", [])):
        metadata = cell.get("metadata", {})
        entry = metadata.get(METADATA_KEY)
        if entry is None:
            continue
        nbgrader = metadata.get("nbgrader", {})
        grade_id = nbgrader.get("grade_id")
        where = f"cell {index} ({grade_id or 'no grade_id'})"
        if not grade_id:
            raise PlanError(f"{where}: a cell with '{METADATA_KEY}' metadata needs an nbgrader grade_id")
        if "answer" in entry:
            plan.answers[grade_id] = _answer(entry, grade_id, nbgrader, where, cell)
        elif "scores" in entry:
            if not nbgrader.get("grade") or nbgrader.get("solution"):
                raise PlanError(f"{where}: a 'scores' cell must be an nbgrader test cell (grade: true, solution: false)")
            plan.scored[grade_id] = ScoredCell(grade_id, entry["scores"], entry.get("part"))
        elif "reports" in entry:
            plan.reports[grade_id] = entry["reports"]
        else:
            raise PlanError(f"{where}: '{METADATA_KEY}' needs one of 'answer', 'scores' or 'reports', got {sorted(entry)}")
    _check_references(plan)
    return plan


def _answer(entry: dict, grade_id: str, nbgrader: dict, where: str, cell: dict) -> Answer:
    if not nbgrader.get("solution"):
        raise PlanError(f"{where}: an answer cell must be an nbgrader solution cell")
    kind = entry["answer"]
    if kind == "schedule":
        if entry.get("problem") not in PROBLEMS:
            raise PlanError(f"{where}: unknown problem {entry.get('problem')!r}; known: {', '.join(PROBLEMS)}")
        return Answer(grade_id, kind, entry["problem"])
    if kind == "questions":
        if entry.get("questions") not in QUESTION_SETS:
            raise PlanError(f"{where}: unknown question set {entry.get('questions')!r}; known: {', '.join(QUESTION_SETS)}")
        try:
            key = answer_key(entry["questions"], entry.get("key"))
        except AnswerKeyError as error:
            raise PlanError(f"{where}: {error}") from None
        answer = Answer(grade_id, kind, entry["questions"], key, _source(cell))
        _check_solution_answers_every_variant(answer, where)
        return answer
    if kind == "cost-model":
        # The instructor's solution is the full-credit bar (costmodel/grade.py): it is run, as the
        # student's cell is, never shipped (the released notebook strips it).
        solution = _source(cell)
        try:
            compile(solution, "solution", "exec", dont_inherit=True)
        except (SyntaxError, ValueError) as error:
            raise PlanError(f"{where}: the cost model's solution cell does not compile: {error}") from None
        if "def features" not in solution or "class Model" not in solution:
            raise PlanError(f"{where}: the cost model's solution cell must define features(candidates) and class Model "
                            "(it is the full-credit bar)")
        return Answer(grade_id, kind, COST_MODEL, solution=solution)
    raise PlanError(f"{where}: an answer is 'schedule', 'questions' or 'cost-model', not {kind!r}")


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else source


def _check_solution_answers_every_variant(answer: Answer, where: str) -> None:
    for variant in (JOURNAL, *VARIANTS):
        try:
            answer.key_for(variant)
        except AnswerKeyError as error:
            raise PlanError(f"{where}: {error}") from None


def _check_references(plan: GradingPlan) -> None:
    for cell in plan.scored.values():
        answer = plan.answers.get(cell.answer)
        if answer is None:
            raise PlanError(f"test cell {cell.grade_id} scores {cell.answer!r}, which is not an answer cell")
        if answer.kind == "schedule" and cell.part not in PARTS:
            raise PlanError(f"test cell {cell.grade_id}: part must be one of {', '.join(PARTS)}, not {cell.part!r}")
        if answer.kind == "cost-model" and cell.part not in COST_MODEL_PARTS:
            raise PlanError(f"test cell {cell.grade_id}: part must be one of {', '.join(COST_MODEL_PARTS)}, not {cell.part!r}")
        if answer.kind == "questions" and cell.part is not None:
            raise PlanError(f"test cell {cell.grade_id} scores a whole question set: it takes no part")
    for report, answer in plan.reports.items():
        if answer not in plan.answers:
            raise PlanError(f"self-check cell {report} reports on {answer!r}, which is not an answer cell")


def load_plan(path: str | Path) -> GradingPlan:
    try:
        notebook = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PlanError(f"cannot read the source notebook {path}: {error}") from error
    return plan_from_notebook(notebook)
