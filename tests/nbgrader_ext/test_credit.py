"""autograder/nbgrader_ext/credit.py: a Result split into the test cells' parts."""
from __future__ import annotations

import pytest

from autograder.nbgrader_ext.credit import score_part
from autograder.engine.report import Check, Result


def passed(speed_credit: float = 0.1) -> Result:
    return Result(
        "tile-fused-conv", "cpu", "passed", score=0.7 + speed_credit, correct=True, speedup=1.7,
        checks=[Check("correctness", True, "matches"), Check("fusion", True, "1 KiB per tile"), Check("speed", True, "1.7x")],
        credit={"correctness": 0.4, "structure": 0.3, "speed": speed_credit},
    )


def test_parts_are_fractions_of_each_weight():
    result = passed(speed_credit=0.2)
    assert score_part(result, "correctness").fraction == 1.0
    assert score_part(result, "fusion").points(3) == 3.0
    speed = score_part(result, "speed")
    assert speed.points(3) == 2.0 and "1.7x" in speed.message


def test_an_unfused_schedule_keeps_correctness_only():
    result = Result("tile-fused-conv", "cpu", "failed", correct=True, checks=[Check("fusion", False, "still 3.1 MiB")],
                    credit={"correctness": 0.4, "structure": 0.0, "speed": 0.0})
    assert score_part(result, "correctness").fraction == 1.0
    fusion = score_part(result, "fusion")
    assert fusion.fraction == 0.0 and "3.1 MiB" in fusion.message


@pytest.mark.parametrize("status", ["error", "timeout", "crashed", "rejected"])
def test_a_schedule_that_did_not_run_scores_nothing_and_says_why(status):
    result = Result("tile-fused-conv", "cpu", status, messages=[f"the reason ({status})"])
    for part in ("correctness", "fusion", "speed"):
        score = score_part(result, part)
        assert score.fraction == 0.0 and f"the reason ({status})" in score.message


def test_needs_gpu_is_pending_not_zero():
    score = score_part(Result("gpu-fused-conv", "cuda", "needs-gpu"), "correctness")
    assert score.fraction is None and score.points(4) is None and "pending" in score.message


def test_unknown_parts_are_refused():
    with pytest.raises(ValueError, match="correctness, fusion, speed"):
        score_part(passed(), "style")


@pytest.mark.parametrize("status", ["error", "crashed", "timeout"])
def test_a_grader_fault_is_pending_for_an_instructor_not_zero(status):
    result = Result("tile-fused-conv", "cpu", status, grader_fault=True,
                    messages=["internal grader error (not your code): the sandbox did not start within 60 s"])
    for part in ("correctness", "fusion", "speed"):
        score = score_part(result, part)
        assert score.fraction is None and score.points(4) is None
        # one line for the student; what failed is the instructor's to read (summary.py, the fault log)
        assert score.message == f"{part}: pending: the grader failed; your instructor will regrade this part"
        assert "sandbox" not in score.message


def test_a_grader_fault_of_a_gpu_problem_is_pending_too():
    result = Result("gpu-fused-conv", "cuda", "error", grader_fault=True,
                    messages=["the RPC device could not run the baseline: Traceback (most recent call last): ... cuda.so"])
    score = score_part(result, "speed")
    assert score.fraction is None and "grader failed" in score.message
    assert "RPC" not in score.message and "Traceback" not in score.message
