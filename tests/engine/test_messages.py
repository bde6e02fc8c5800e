"""What crosses a process boundary in one grading: each record read field by field, a malformed
one refused with the field named, and whose fault it is decided by who sent it."""
from __future__ import annotations

import pytest

from autograder.engine.config import GraderConfig
from autograder.engine.messages import CompileLoad, EvaluatorReport, StudentReport, evaluator_said
from autograder.engine.pipeline import _Grading
from autograder.engine.report import STATUSES, Check, Result
from autograder.engine.sandbox import ChildOutcome
from autograder.engine.wire import MalformedMessage
from autograder.problems import get_problem

SPREAD = {"median": 1.5, "q1": 1.4, "q3": 1.6, "minimum": 1.3, "maximum": 1.7, "cv": 0.05, "n": 10}
RAN = {
    "kind": "result", "outcome": "ran", "message": "",
    "checks": [{"name": "correctness", "passed": True, "message": "matches"}, {"name": "fusion", "passed": True, "message": "fused"}],
    "messages": ["ran on this machine"], "correct": True, "schedule_outline": ["for i"],
    "speedup": SPREAD,
    "vs_yardstick": dict(SPREAD, rounds=10, interval=[1.45, 1.55], decided=True, confidence=0.99,
                         placements=[{"kind": "stack", "step": 3, "ratio": 1.5}]),
    "runtimes_ms": {"candidate": 1.0}, "gflops": {"candidate": 90.0}, "speed_pending": None, "stage_s": {"replay": 0.1},
}


def test_the_evaluators_report_round_trips_as_the_record_it_was():
    report = EvaluatorReport.from_wire(RAN)
    assert report.outcome == "ran" and report.checks[0] == Check("correctness", True, "matches")
    assert EvaluatorReport.from_wire(report.to_wire()) == report


@pytest.mark.parametrize("change, field", [
    ({"outcome": "schedule_error"}, "outcome"),  # the old outcomes that a table mapped: now the status itself
    ({"outcome": None}, "outcome"),
    ({"checks": "interface"}, "checks"),
    ({"checks": [{"name": "fusion", "passed": "yes", "message": ""}]}, "passed"),
    ({"messages": ["ok", 3]}, "messages[1]"),
    ({"correct": 1}, "correct"),
    ({"speedup": dict(SPREAD, median="fast")}, "speedup.median"),
    ({"speedup": dict(SPREAD, q3=-1.0)}, "speedup.q3"),
    ({"vs_yardstick": dict(SPREAD, n=0)}, "vs_yardstick.n"),
    ({"vs_yardstick": dict(SPREAD, interval=[2.0, 1.0])}, "vs_yardstick.interval"),
    ({"vs_yardstick": dict(SPREAD, confidence=1.5)}, "vs_yardstick.confidence"),
    ({"vs_yardstick": dict(SPREAD, placements=[{"kind": "stack", "step": "3", "ratio": 1.0}])}, "vs_yardstick.placements[0].step"),
    ({"runtimes_ms": {"candidate": True}}, "runtimes_ms.candidate"),
    ({"gflops": [90.0]}, "gflops"),
    ({"stage_s": {"replay": -1.0}}, "stage_s.replay"),
    ({"schedule_outline": [1]}, "schedule_outline[0]"),
])
def test_a_malformed_evaluator_report_is_refused_naming_its_field(change, field):
    with pytest.raises(MalformedMessage) as refused:
        EvaluatorReport.from_wire({**RAN, **change})
    assert refused.value.field == field and f"field '{field}'" in str(refused.value)


def grading() -> _Grading:
    return _Grading(get_problem("tile-fused-conv"), GraderConfig(seed=1), {"student": None})


def test_garbage_from_the_evaluator_is_a_grader_fault_never_a_zero():
    """The evaluator runs only the grader's code: a report that does not read is pending."""
    outcome = ChildOutcome(messages=[{"kind": "stage", "stage": "time"}, {**RAN, "correct": "yes"}], returncode=0)
    result = grading().interpret_evaluation(outcome, "")
    assert result.grader_fault and result.status == "error"
    assert "field 'correct'" in result.messages[0] and "not your code" in result.messages[0]


def test_an_evaluator_outcome_is_the_results_status_as_it_is():
    for outcome in ("error", "rejected", "needs-gpu", "crashed", "timeout"):
        assert outcome in STATUSES
        report = {**RAN, "outcome": outcome, "message": f"why {outcome}", "checks": RAN["checks"][1:]}
        result = grading().interpret_evaluation(ChildOutcome(messages=[report], returncode=0), "")
        assert (result.status, result.messages[0], result.grader_fault) == (outcome, f"why {outcome}", False)
        assert result.checks == [Check("fusion", True, "fused")]


def test_a_scored_report_reaches_the_result_and_its_json_unchanged():
    result = grading().interpret_evaluation(ChildOutcome(messages=[RAN], returncode=0), "")
    assert result.status == "passed" and result.correct and result.yardstick_spread["placements"][0]["step"] == 3
    assert result.timings["evaluate.replay"] == 0.1
    assert Result.from_dict(result.to_dict()) == result


@pytest.mark.parametrize("message, field", [
    ({"kind": "exception"}, "message"),
    ({"kind": "exception", "message": 123}, "message"),
    ({"kind": "schedule_error", "message": "x", "where": 5}, "where"),
    ({"kind": "schedule_error", "message": "x", "where": ["line 1", None]}, "where[1]"),
    ({"kind": "exception", "message": "x", "import_error": ["os"]}, "import_error"),
    ({"kind": "result", "outcome": "ran"}, "kind"),  # the student's child cannot speak for the evaluator
    ({"kind": "garbled"}, "kind"),  # what sandbox.parse_message makes of a line that is not JSON
    ("a string", "(the message)"),
])
def test_a_malformed_student_report_is_refused_naming_its_field(message, field):
    with pytest.raises(MalformedMessage) as refused:
        StudentReport.from_wire(message)
    assert refused.value.field == field and "the child running your code" in str(refused.value)


def test_a_trace_is_passed_on_as_sent_for_the_schema_to_refuse():
    assert StudentReport.from_wire({"kind": "trace"}).trace is None
    assert StudentReport.from_wire({"kind": "trace", "trace": {"not": "a list"}}).trace == {"not": "a list"}


def test_a_student_report_round_trips():
    for report in (StudentReport("trace", trace=[{"kind": "GetSBlock"}]), StudentReport("missing", "no schedule"),
                   StudentReport("schedule_error", "split: bad", where=("line 3, in schedule: sch.split()",)),
                   StudentReport("exception", "ImportError", import_error="scipy")):
        assert StudentReport.from_wire(report.to_wire()) == report


@pytest.mark.parametrize("message, field", [
    ({"widest_vector": "256", "vector_block": "T_add", "unrolled_copies": 1}, "widest_vector"),
    ({"widest_vector": 256, "vector_block": 7, "unrolled_copies": 1}, "vector_block"),
    ({"widest_vector": 256, "vector_block": "T_add", "unrolled_copies": -1}, "unrolled_copies"),
])
def test_a_malformed_compile_load_is_refused_naming_its_field(message, field):
    with pytest.raises(MalformedMessage, match=f"field '{field}'"):
        CompileLoad.from_wire({"kind": "compiling", **message})


def test_the_evaluators_other_messages_are_read_the_same_way():
    assert evaluator_said({"kind": "target", "cpu": "znver4"}, "target") == "znver4"
    with pytest.raises(MalformedMessage, match="field 'message'"):
        evaluator_said({"kind": "internal", "message": {"a": 1}}, "internal")


def test_a_notebook_graded_before_the_records_were_typed_still_reads():
    """What a graded notebook's metadata held (Result.to_dict as it was: checks as plain
    objects, no fields added since): read as today's Result."""
    old = {"problem": "tile-fused-conv", "target": "llvm", "status": "passed", "score": 1.0, "correct": True,
           "checks": [{"name": "correctness", "passed": True, "message": "matches"}],
           "messages": [], "credit": {"correctness": 0.4, "structure": 0.3, "speed": 0.3}, "timings": {}}
    result = Result.from_dict(old)
    assert result.check("correctness") == Check("correctness", True, "matches") and result.credit["speed"] == 0.3
    with pytest.raises(ValueError, match="field 'passed'"):
        Result.from_dict({**old, "checks": [{"name": "correctness", "passed": "yes", "message": ""}]})
    with pytest.raises(ValueError, match="unknown status"):
        Result.from_dict({**old, "status": "pass"})
