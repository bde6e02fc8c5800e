"""pipeline scoring: how an evaluator's report becomes status, score and credit."""
from __future__ import annotations

import pytest

from autograder.engine.config import GraderConfig
from autograder.engine.messages import EvaluatorReport
from autograder.engine.pipeline import _Grading
from autograder.problems import get_problem
from autograder.engine.report import Check


def spread(median):
    return {"median": median, "q1": median, "q3": median, "minimum": median, "maximum": median, "cv": 0.0, "n": 5}


def score(correct=True, fused=True, speedup=None, against=None):
    """`against`: speed relative to the yardstick (what credit is for); `speedup`: over the baseline."""
    grading = _Grading(get_problem("tile-fused-conv"), GraderConfig(seed=1), {"student": None})
    checks = [Check("correctness", correct, ""), Check("fusion", fused, "")]
    report = {"correct": correct}
    if speedup is not None or against is not None:
        report["speedup"] = spread(speedup if speedup is not None else 2.0)
        report["vs_yardstick"] = spread(against if against is not None else 1.0)
        report["gflops"] = {"candidate": 90.0, "yardstick": 60.0, "baseline": 50.0}
    return grading.score(ran(report), checks, [], "")


def ran(fields: dict) -> EvaluatorReport:
    """The evaluator's report of a schedule that ran, as the pipeline reads it off the channel."""
    return EvaluatorReport.from_wire({"kind": "result", "outcome": "ran", "checks": [], **fields})


def test_wrong_results_score_zero_whatever_else():
    result = score(correct=False, fused=True, speedup=3.0)
    assert (result.status, result.score, result.correct) == ("failed", 0.0, False)


def test_fused_but_slow_passes_with_correctness_and_fusion_credit():
    result = score(speedup=0.35, against=0.2)
    assert result.status == "passed" and result.score == pytest.approx(0.7)
    message = result.check("speed").message
    assert not result.check("speed").passed and "1.06x the yardstick earns 33%" in message
    assert "0.35x the speed of the unscheduled function" in message and "90 GFLOP/s (the yardstick: 60)" in message


@pytest.mark.parametrize("against, speed_credit", [(1.05, 0.0), (1.06, 0.1), (1.2, 0.2), (1.25, 0.3), (10.0, 0.3)])
def test_speed_credit_comes_from_the_yardstick_not_the_baseline(against, speed_credit):
    assert score(against=against, speedup=1.0).credit["speed"] == pytest.approx(speed_credit)
    assert score(against=against, speedup=9.0).credit["speed"] == pytest.approx(speed_credit)


def test_the_result_reports_both_speeds_and_gflops():
    result = score(speedup=3.2, against=1.7)
    assert (result.speedup, result.yardstick_speedup, result.gflops) == (3.2, 1.7, 90.0)
    assert "speed against the yardstick: 1.70x, 90 GFLOP/s" in result.to_text()


def test_fast_but_unfused_fails_yet_keeps_its_points():
    result = score(fused=False, speedup=2.5, against=1.6)
    assert result.status == "failed" and result.score == pytest.approx(0.7)


def test_implausible_speedups_are_flagged_for_review():
    result = score(speedup=80.0)
    assert result.review and "implausible" in result.messages[-1]
    assert not score(speedup=2.0).review


def test_the_speed_check_says_how_many_rounds_decided_the_band():
    grading = _Grading(get_problem("tile-fused-conv"), GraderConfig(seed=1), {"student": None})
    checks = [Check("correctness", True, ""), Check("fusion", True, "")]
    decided = dict(spread(1.6), n=10, rounds=10, interval=[1.55, 1.66], decided=True, confidence=0.99)
    report = {"correct": True, "speedup": spread(2.0), "vs_yardstick": decided, "gflops": {}}
    message = grading.score(ran(report), checks, [], "").check("speed").message
    assert "median of 10 interleaved rounds" in message and "99% interval 1.55-1.66x, inside one band: decided after 10 rounds" in message
    straddles = dict(decided, n=45, rounds=45, interval=[1.4, 1.5], decided=False, median=1.46)
    result = grading.score(ran(dict(report, vs_yardstick=straddles)), [Check("correctness", True, ""), Check("fusion", True, "")], [], "")
    assert "99% interval 1.40-1.50x straddles a band edge: the median of all 45 rounds decides" in result.check("speed").message
    assert result.credit["speed"] == 0.3 and result.yardstick_spread["rounds"] == 45
