"""pipeline scoring: how an evaluator's report becomes status, score and credit."""
from __future__ import annotations

import pytest

from autograder.engine.config import GraderConfig
from autograder.engine.pipeline import _Grading
from autograder.problems import get_problem
from autograder.engine.report import Check


def score(correct=True, fused=True, speedup=None):
    grading = _Grading(get_problem("tile-fused-conv"), GraderConfig(seed=1))
    checks = [Check("correctness", correct, ""), Check("fusion", fused, "")]
    report = {"correct": correct}
    if speedup is not None:
        report["speedup"] = {"median": speedup, "q1": speedup, "q3": speedup, "minimum": speedup, "maximum": speedup, "cv": 0.0, "n": 5}
    return grading.score(report, checks, [], "")


def test_wrong_results_score_zero_whatever_else():
    result = score(correct=False, fused=True, speedup=3.0)
    assert (result.status, result.score, result.correct) == ("failed", 0.0, False)


def test_fused_but_slow_passes_with_correctness_and_fusion_credit():
    result = score(speedup=0.35)
    assert result.status == "passed" and result.score == pytest.approx(0.7)
    assert not result.check("speed").passed and "1.2x earns 33%" in result.check("speed").message


@pytest.mark.parametrize("speedup, speed_credit", [(1.19, 0.0), (1.2, 0.1), (1.96, 0.2), (2.4, 0.3), (10.0, 0.3)])
def test_speed_bands(speedup, speed_credit):
    assert score(speedup=speedup).credit["speed"] == pytest.approx(speed_credit)


def test_fast_but_unfused_fails_yet_keeps_its_points():
    result = score(fused=False, speedup=2.5)
    assert result.status == "failed" and result.score == pytest.approx(0.7)


def test_implausible_speedups_are_flagged_for_review():
    result = score(speedup=80.0)
    assert result.review and "implausible" in result.messages[-1]
    assert not score(speedup=2.0).review
