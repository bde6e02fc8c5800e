"""autograder/nbgrader_ext/trusted.py: answers graded from their source, outside any kernel."""
from __future__ import annotations

import copy

import nbformat
import pytest

from autograder.engine.config import GraderConfig
from autograder.rehearsal.samples import build_submission, load_samples
from autograder.nbgrader_ext.plan import plan_from_notebook
from autograder.nbgrader_ext.trusted import TRUSTED_NOTE, TrustedGrading, answer_sources
from autograder.problems.variants import Variant

from bundled_course import COURSE, source_notebook

FAST = GraderConfig(timing_rounds=3, min_repeat_ms=5.0, student_timeout_s=3.0)


def sample(name):
    return next(s for s in load_samples(COURSE, "tiling") if s.student == name)


@pytest.fixture
def tiling():
    return nbformat.read(source_notebook("tiling"), as_version=4)


@pytest.mark.slow
def test_a_submission_is_scored_from_its_answer_cells(tiling):
    submission = build_submission(tiling, sample("ben"))
    verdicts = TrustedGrading(plan_from_notebook(tiling), FAST).start(submission).finish()
    fractions = {k: v.fraction for k, v in verdicts.cells.items()}
    assert fractions == {"correctness": 1.0, "fusion": 1.0, "speed": 0.0, "tile-arithmetic-marks": 1.0}
    assert verdicts.results["schedule"].status == "passed"
    assert TRUSTED_NOTE in verdicts.cells["speed"].text
    assert verdicts.to_metadata()["results"]["schedule"]["problem"] == "tile-fused-conv"


@pytest.mark.slow
def test_a_student_is_graded_on_their_own_variant(tiling):
    """ben copied the journal's numbers: right on the journal's shape, wrong on his own; his
    schedule is compiled and checked on his own shape."""
    variant = Variant(height=160, width=256, out_channels=12, tile_rows=8, tile_cols=16)
    submission = build_submission(tiling, sample("ben"))
    verdicts = TrustedGrading(plan_from_notebook(tiling), FAST, variant, "ben").start(submission).finish()
    assert verdicts.cells["tile-arithmetic-marks"].fraction == 0.0
    assert "160/8 tile rows times 256/16 tile columns = 320" in verdicts.cells["tile-arithmetic-marks"].text
    result = verdicts.results["schedule"]
    assert result.status == "passed" and result.variant == {"student": "ben", **variant.to_dict()}
    assert "the variant of ben: input 1x3x160x256, 12 output channels" in result.to_text()
    ada = build_submission(tiling, sample("ada"))  # her answers are arithmetic on the variant's names
    verdicts = TrustedGrading(plan_from_notebook(tiling), GraderConfig(measure_speed=False), variant, "ada").start(ada).finish()
    assert verdicts.cells["tile-arithmetic-marks"].fraction == 1.0


def test_missing_answer_cells_score_nothing(tiling):
    plan = plan_from_notebook(tiling)
    submission = copy.deepcopy(tiling)
    submission.cells = [c for c in submission.cells if c.metadata.get("nbgrader", {}).get("solution") is not True]
    assert answer_sources(submission, plan) == {"schedule": None, "tile-arithmetic": None}
    verdicts = TrustedGrading(plan, FAST).start(submission).finish()
    assert {v.fraction for v in verdicts.cells.values()} == {0.0}
    assert "missing from the submission" in verdicts.cells["correctness"].text
    assert "missing from the submission" in verdicts.cells["tile-arithmetic-marks"].text


def test_the_source_is_taken_from_the_solution_cell_not_a_lookalike(tiling):
    plan = plan_from_notebook(tiling)
    submission = build_submission(tiling, sample("ben"))
    decoy = copy.deepcopy(next(c for c in submission.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "schedule"))
    decoy.metadata["nbgrader"]["solution"] = False
    decoy.source = "def schedule(sch):\n    pass"
    submission.cells.insert(0, decoy)
    assert answer_sources(submission, plan)["schedule"] == sample("ben").answers["schedule"].rstrip("\n")


def test_a_grader_fault_leaves_the_schedule_parts_pending_and_the_rest_scored(tiling, monkeypatch):
    from autograder.engine import pipeline
    from autograder.engine.report import Result

    def failing_grader(problem, source, config, **variant):
        return Result(problem, "cpu", "error", grader_fault=True, messages=["internal grader error (not your code): the evaluator did not start"])

    monkeypatch.setattr(pipeline, "grade_source", failing_grader)
    verdicts = TrustedGrading(plan_from_notebook(tiling), FAST).start(build_submission(tiling, sample("ben"))).finish()
    fractions = {k: v.fraction for k, v in verdicts.cells.items()}
    assert fractions == {"correctness": None, "fusion": None, "speed": None, "tile-arithmetic-marks": 1.0}
    assert "your instructor will regrade this part" in verdicts.cells["speed"].text
    assert "evaluator" not in verdicts.cells["speed"].text  # the grader's details are not the student's

    # what the feedback shows: one line where the schedule's report was, the details nowhere
    from autograder.nbgrader_ext.preprocessors import _write_outputs

    notebook = build_submission(tiling, sample("ben"))
    _write_outputs(notebook, plan_from_notebook(tiling), verdicts)
    shown = {c.metadata.get("nbgrader", {}).get("grade_id"): "".join(o.get("text", "") + str(o.get("data", "")) for o in c.outputs)
             for c in notebook.cells if c.cell_type == "code"}
    assert shown["self-check"] == "the grader failed; your instructor will regrade this part\n"
    assert all("evaluator" not in text and "internal grader error" not in text for text in shown.values())


def test_the_graded_record_is_read_back_in_the_shape_its_readers_rely_on(tmp_path):
    from autograder.nbgrader_ext.normalise import SUBMISSION_KEY
    from autograder.nbgrader_ext.plan import METADATA_KEY
    from autograder.nbgrader_ext.trusted import graded_record

    def notebook(name, metadata):
        path = tmp_path / name
        path.write_text(__import__("json").dumps({"cells": [], "metadata": metadata}), encoding="utf-8")
        return path

    written = TrustedGrading(plan_from_notebook(nbformat.read(source_notebook("tiling"), as_version=4)), FAST)
    written = written.refuse("not a notebook").finish().to_metadata()
    kept = notebook("kept.ipynb", {METADATA_KEY: {**written, SUBMISSION_KEY: {"refused": "not a notebook"}}})
    assert graded_record(kept) == {"results": written["results"], "questions": written["questions"], "cost_models": {},
                                   "submission": {"refused": "not a notebook"}}
    odd = notebook("odd.ipynb", {METADATA_KEY: {"results": {"schedule": "passed", "ok": {"status": "passed"}}, "questions": []}})
    assert graded_record(odd) == {"results": {"ok": {"status": "passed"}}, "questions": {}, "cost_models": {}, "submission": {}}
    assert graded_record(notebook("none.ipynb", {})) is None
    assert graded_record(notebook("list.ipynb", [])) is None
    (tmp_path / "broken.ipynb").write_text("{", encoding="utf-8")
    assert graded_record(tmp_path / "broken.ipynb") is None
    assert graded_record(tmp_path / "absent.ipynb") is None
