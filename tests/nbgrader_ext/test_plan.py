"""autograder/nbgrader_ext/plan.py: the grading plan comes from the instructor's notebook metadata."""
from __future__ import annotations

import copy

import pytest

from autograder.nbgrader_ext.plan import PlanError, load_plan, plan_from_notebook

from bundled_course import source_notebook


def test_each_assignment_plans_a_schedule_and_a_question_set(assignment):
    plan = load_plan(source_notebook(assignment))
    kinds = sorted(a.kind for a in plan.answers.values())
    assert kinds == ["questions", "schedule"]
    schedule = plan.answers["schedule"]
    assert schedule.name == {"tiling": "tile-fused-conv", "gpu-tiling": "gpu-fused-conv"}[assignment]
    parts = sorted(c.part for c in plan.scored.values() if c.answer == "schedule")
    assert parts == ["correctness", "fusion", "speed"]
    assert plan.reports == {"self-check": "schedule"}


def _cell(notebook, grade_id):
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _question_cell(notebook):
    return next(c for c in notebook.cells if c.metadata.get("tvm_course", {}).get("answer") == "questions")


def test_the_answer_key_comes_with_the_plan_from_the_source_notebook(assignment):
    plan = load_plan(source_notebook(assignment))
    (questions,) = [a for a in plan.answers.values() if a.kind == "questions"]
    assert questions.key and all(q.explanation for q in questions.key)
    assert questions.solution not in repr(questions) and "explanation" not in repr(questions)  # not in logs of the plan


@pytest.mark.parametrize(
    "change, says",
    [
        (lambda nb: _cell(nb, "speed").metadata["tvm_course"].update(part="style"), "part must be one of"),
        (lambda nb: _cell(nb, "speed").metadata["tvm_course"].update(scores="nowhere"), "not an answer cell"),
        (lambda nb: _cell(nb, "schedule").metadata["tvm_course"].update(problem="matmul"), "unknown problem 'matmul'"),
        (lambda nb: _cell(nb, "schedule").metadata["nbgrader"].update(solution=False), "must be an nbgrader solution cell"),
        (lambda nb: _cell(nb, "correctness").metadata["nbgrader"].update(grade=False), "must be an nbgrader test cell"),
        (lambda nb: _cell(nb, "self-check").metadata.update(tvm_course={"what": 1}), "needs one of"),
        (lambda nb: _cell(nb, "self-check").metadata["tvm_course"].update(reports="nowhere"), "reports on 'nowhere'"),
        (lambda nb: _question_cell(nb).metadata["tvm_course"].pop("key"), "needs an answer key"),
        (lambda nb: next(iter(_question_cell(nb).metadata["tvm_course"]["key"].values())).update(expected=7), "comes from the solution cell"),
        (lambda nb: setattr(_question_cell(nb), "source", "### BEGIN SOLUTION\n### END SOLUTION"), "it does not assign it"),
        # a solution that is right for the journal's shape only, not for the students' variants
        (lambda nb: setattr(_question_cell(nb), "source", _question_cell(nb).source.replace("HEIGHT", "224")), None),
    ],
)
def test_inconsistent_metadata_is_refused_naming_the_cell(notebook, change, says):
    broken = copy.deepcopy(notebook)
    change(broken)
    if says is None:  # still a consistent plan: what it computes is checked against the variants elsewhere
        plan_from_notebook(broken)
        return
    with pytest.raises(PlanError, match=says):
        plan_from_notebook(broken)


def test_a_notebook_without_metadata_has_an_empty_plan():
    assert not plan_from_notebook({"cells": [{"cell_type": "code", "metadata": {}, "source": "1"}]})


def test_an_unreadable_notebook_is_a_plan_error(tmp_path):
    (tmp_path / "broken.ipynb").write_text("{not json")
    with pytest.raises(PlanError, match="cannot read"):
        load_plan(tmp_path / "broken.ipynb")


def test_the_cost_model_assignment_plans_a_cost_model_scored_by_ranking_and_search():
    plan = load_plan(source_notebook("cost-model"))
    (answer,) = plan.answers.values()
    assert (answer.grade_id, answer.kind, answer.name) == ("cost-model", "cost-model", "learned-cost-model")
    assert sorted((c.grade_id, c.part) for c in plan.scored.values()) == [("ranking", "ranking"), ("search", "search")]
    # the full-credit bar: the solution cell's text, kept from the source notebook (never the submission's)
    assert "def features" in answer.solution and "class Model" in answer.solution and "### BEGIN SOLUTION" in answer.solution


def test_a_cost_model_solution_that_cannot_be_the_bar_is_refused():
    import nbformat

    notebook = nbformat.read(source_notebook("cost-model"), as_version=4)
    _cell(notebook, "cost-model").source = "### BEGIN SOLUTION\ndef features(:\n### END SOLUTION\n"
    with pytest.raises(PlanError, match="solution cell does not compile"):
        plan_from_notebook(notebook)
    _cell(notebook, "cost-model").source = "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"
    with pytest.raises(PlanError, match="must define features"):
        plan_from_notebook(notebook)


def test_a_cost_model_test_cell_names_one_of_its_parts():
    import nbformat

    notebook = nbformat.read(source_notebook("cost-model"), as_version=4)
    _cell(notebook, "search").metadata["tvm_course"]["part"] = "speed"
    with pytest.raises(PlanError, match="part must be one of ranking, search, not 'speed'"):
        plan_from_notebook(notebook)
    _cell(notebook, "cost-model").metadata["tvm_course"]["answer"] = "model"
    with pytest.raises(PlanError, match="'schedule', 'questions' or 'cost-model', not 'model'"):
        plan_from_notebook(notebook)
