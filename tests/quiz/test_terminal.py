import io

from autograder.quiz.answers import AnswerSheet
from autograder.quiz.checking import check_quiz
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load, load_instructor
from autograder.quiz.terminal import format_report, take


def scripted(lines):
    """An `ask` that answers from a list, then behaves like a closed stdin."""
    remaining = list(lines)

    def ask(prompt):
        if not remaining:
            raise EOFError
        return remaining.pop(0)

    return ask


def test_taking_the_quiz_with_the_key_ends_with_full_marks(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    key = answer_key(quiz)
    typed = ["b", "a c", "14 tiles", "2.5", "Compute_At", " ".join(key["order"])]
    out = io.StringIO()
    report = take(load(sample_quiz_file).released, ask=scripted(typed), out=out)
    text = out.getvalue()
    assert report.summary() == "6 / 6 correct"
    assert text.rstrip().endswith("6 / 6 correct")
    assert "Question 3 of 6 (number) (in tiles)" in text
    assert "  b) right one" in text and "224 / 16" in text


def test_bad_input_is_asked_again_and_end_of_input_leaves_the_rest_unanswered(sample_quiz_file):
    out = io.StringIO()
    report = take(load(sample_quiz_file).released, ask=scripted(["z", "c", "", "fourteen"]), out=out)
    text = out.getvalue()
    assert "expected one of the letters a, b, c, found text ('z'); try again." in text
    assert "two is not it either" in text
    assert "type a number (in tiles), e.g. 42 or 0.5; try again." in text
    assert [r.status for r in report.results] == ["wrong", "unanswered", "unanswered", "unanswered",
                                                 "unanswered", "unanswered"]
    assert text.rstrip().endswith("0 / 6 correct")


def test_a_report_lists_problems_results_and_the_score(sample_quiz_file):
    quiz = load(sample_quiz_file).released
    text = format_report(check_quiz(quiz, AnswerSheet(answers={"pick-one": "a"}, refused={"count": "expected a number"})))
    lines = text.splitlines()
    assert lines[0] == "[no] pick-one: wrong"
    assert "[??] count: invalid" in lines and lines[-1] == "0 / 6 correct"


def test_an_edited_question_is_shown_but_not_asked(tmp_path, sample_quiz_file):
    import yaml

    from autograder.quiz.release import release, write_released

    quiz, _ = load_instructor(sample_quiz_file)
    path = tmp_path / "released.yaml"
    write_released(release(quiz), path)
    data = yaml.safe_load(path.read_text())
    data["questions"][0]["prompt"] = "Which is right? (edited)"
    path.write_text(yaml.safe_dump(data))
    out = io.StringIO()
    report = take(load(path).released, ask=scripted(["a c"]), out=out)
    assert [r.status for r in report.results][:2] == ["edited", "correct"]
    assert report.summary() == "1 / 5 correct"


def test_code_questions_are_not_asked_when_skipped():
    from .conftest import COURSE_QUIZZES

    path = next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace")
    quiz, _ = load_instructor(path)
    key = answer_key(quiz)
    typed = []
    for q in quiz.questions:
        answer = key[q.id]
        if q.type != "code":
            typed.append(" ".join(answer) if isinstance(answer, list) else str(answer))
    prompts = []
    answer_next = scripted(typed)

    def ask(prompt):
        prompts.append(prompt)
        return answer_next(prompt)

    report = take(load(path).released, ask=ask, out=io.StringIO(), skip_code=True)
    assert report.summary() == "10 / 10 correct"
    assert report.results[-1].status == "skipped"
    assert len(prompts) == 10 and not any(".py file" in p for p in prompts)
