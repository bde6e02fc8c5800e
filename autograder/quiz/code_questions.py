"""Code questions: the answer is a schedule(sch) function, graded by the schedule autograder.

`autograder.grade_source(problem, source)` compiles and runs the schedule (in a sandboxed
child) and returns a Result with `status`, `checks` (name, passed, message) and `messages`.
A question requires some checks to pass, or an overall status, or both.
"""
from __future__ import annotations

from .model import ReleasedQuestion


def grade(problem: str, source: str, measure_speed: bool = True):
    """The grader's Result; imported here so that quizzes without code never load the grader.

    Timing is the slow part of grading; it is skipped when the question does not ask for speed.
    """
    import autograder

    if measure_speed:
        return autograder.grade_source(problem, source)
    return autograder.grade_source(problem, source, autograder.GraderConfig(measure_speed=False))


def unmet_requirements(require: dict, result) -> list[str]:
    """Why `result` does not satisfy `require` (empty when it does)."""
    reasons = []
    status = getattr(result, "status", None)
    wanted_status = require.get("status")
    if wanted_status and status != wanted_status:
        reasons.append(f"the grader's verdict is '{status}'; this question needs '{wanted_status}'")
    checks = {c.name: c for c in getattr(result, "checks", [])}
    for name in require.get("checks", []):
        check = checks.get(name)
        if check is None:
            reasons.append(f"the '{name}' check did not run (the grader stopped with status '{status}')")
        elif not check.passed:
            reasons.append(f"{name}: {check.message}")
    return reasons


def check_code(question: ReleasedQuestion, source: str) -> tuple[str, list[str], list[str]]:
    """(status, feedback, messages): status is 'correct', 'wrong' or 'ungraded'."""
    try:
        require = question.data["require"]
        result = grade(question.data["problem"], source, measure_speed="speed" in require.get("checks", []))
    except (ImportError, AttributeError) as err:
        return "ungraded", [], [f"the schedule grader is not available here ({err}); this answer was not checked"]
    except Exception as err:  # the grader failing is reported, never shown as a traceback
        return "ungraded", [], [f"the schedule grader failed: {type(err).__name__}: {err}"]
    messages = [str(m) for m in getattr(result, "messages", [])]
    reasons = unmet_requirements(require, result)
    if not reasons:
        return "correct", [], messages
    feedback = reasons + ([question.feedback] if question.feedback else [])
    return "wrong", feedback, messages
