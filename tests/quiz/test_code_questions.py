import pytest

from autograder.quiz.code_questions import check_code, unmet_requirements
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load, load_instructor
from autograder.engine.report import Check, Result

from .conftest import COURSE_QUIZZES

TILING = next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace")


def result(status, **checks):
    return Result("tile-fused-conv", "cpu", status,
                  checks=[Check(name, passed, f"{name} says {passed}") for name, passed in checks.items()])


def test_requirements_on_checks_and_status():
    assert unmet_requirements({"checks": ["correctness", "fusion"]}, result("passed", correctness=True, fusion=True)) == []
    assert unmet_requirements({"checks": ["fusion"]}, result("failed", correctness=True, fusion=False)) == [
        "fusion: fusion says False"]
    [missing] = unmet_requirements({"checks": ["fusion"]}, result("error"))
    assert "the 'fusion' check did not run" in missing and "'error'" in missing
    [status] = unmet_requirements({"status": "passed"}, result("failed", correctness=True))
    assert "verdict is 'failed'" in status


def code_question():
    return next(q for q in load(TILING).released.questions if q.type == "code")


def test_a_grader_failure_is_reported_as_ungraded_not_raised():
    question = code_question()
    question.data["problem"] = "no-such-problem"
    status, feedback, messages = check_code(question, "def schedule(sch):\n    pass\n")
    assert status == "ungraded" and feedback == []
    assert "no-such-problem" in messages[0]


@pytest.mark.slow
def test_the_journal_schedule_passes_and_an_unfused_one_does_not():
    quiz, _ = load_instructor(TILING)
    question = code_question()
    status, feedback, _ = check_code(question, answer_key(quiz)["journal-schedule"])
    assert status == "correct" and feedback == []
    unfused = answer_key(quiz)["journal-schedule"].replace('    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)\n'
                                                           '    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)\n', "")
    status, feedback, _ = check_code(question, unfused)
    assert status == "wrong"
    assert feedback[0].startswith("fusion: ") and feedback[-1] == question.feedback


@pytest.mark.slow
def test_a_schedule_that_raises_is_wrong_with_the_reason():
    status, feedback, messages = check_code(code_question(), "def schedule(sch):\n    sch.get_sblock('nope')\n")
    assert status == "wrong"
    assert "did not run" in feedback[0] and "'error'" in feedback[0]
