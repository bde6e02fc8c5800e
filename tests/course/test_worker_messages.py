"""What a grading worker sends its parent over the pipe, read field by field: a message that
does not read, or that speaks of another job, is refused naming the field (run_jobs then fails
that job as the grader's failure, never a score)."""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.course.workers import Autograded, Job, JobOutcome, WorkerFailed
from autograder.engine.wire import MalformedMessage

JOB = Job("ada", Path("gradebook-ada.db"))


def test_a_workers_outcome_reads_as_the_record_it_was():
    outcome = JobOutcome("ada", True, 12.5, steps={"autograde": 10.0, "feedback": 2.5})
    assert JobOutcome.from_wire(outcome, JOB) == outcome
    assert Autograded.from_wire(Autograded("ada")) == Autograded("ada")


@pytest.mark.parametrize("outcome, field", [
    (JobOutcome("bob", True, 1.0), "student"),  # another job's outcome
    (JobOutcome("ada", "yes", 1.0), "ok"),  # type: ignore[arg-type]
    (JobOutcome("ada", True, -1.0), "seconds"),
    (JobOutcome("ada", True, float("nan")), "seconds"),
    (JobOutcome("ada", False, 1.0, None), "error"),  # type: ignore[arg-type]
    (JobOutcome("ada", True, 1.0, steps={"autograde": "10 s"}), "steps.autograde"),  # type: ignore[dict-item]
    (WorkerFailed("nbgrader would not load"), "(the message)"),
    ({"student": "ada", "ok": True}, "(the message)"),
])
def test_a_malformed_worker_outcome_is_refused_naming_its_field(outcome, field):
    with pytest.raises(MalformedMessage) as refused:
        JobOutcome.from_wire(outcome, JOB)
    assert refused.value.field == field and f"field '{field}'" in str(refused.value)


def test_an_outcome_with_no_job_given_out_is_refused():
    with pytest.raises(MalformedMessage, match="field 'student'.*none"):
        JobOutcome.from_wire(JobOutcome("ada", True, 1.0), None)


def test_an_autograde_notice_must_name_a_student():
    with pytest.raises(MalformedMessage, match="field 'student' is int"):
        Autograded.from_wire(Autograded(7))  # type: ignore[arg-type]
