import pytest

from autograder.quiz.answers import AnswerSheet
from autograder.quiz.checking import ReleasedKey, check_question, check_quiz
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load, load_instructor
from autograder.quiz.model import ReleasedQuestion
from autograder.quiz.release import release, write_released


@pytest.fixture
def copies(tmp_path, sample_quiz_file):
    """The sample quiz as checked from the instructor copy and from a released file."""
    quiz, _ = load_instructor(sample_quiz_file)
    out = tmp_path / "released.yaml"
    write_released(release(quiz), out)
    return {"instructor": load(sample_quiz_file).released, "released": load(out).released, "key": answer_key(quiz)}


def check(quiz, answers):
    return check_quiz(quiz, AnswerSheet(answers=answers))


@pytest.mark.parametrize("copy", ["instructor", "released"])
def test_the_key_gets_full_marks_with_every_explanation(copies, copy):
    report = check(copies[copy], copies["key"])
    assert report.summary() == "6 / 6 correct" and report.all_correct
    assert [r.explanation for r in report.results][:3] == ["the right one is right", "A and C", "224 / 16"]


@pytest.mark.parametrize("copy", ["instructor", "released"])
def test_wrong_answers_lose_their_points_and_show_feedback(copies, copy):
    answers = dict(copies["key"], **{"pick-one": "c", "pick-many": ["a", "b"], "count": 196,
                                     "name": "reverse_compute_at", "order": ["a", "b", "c", "d"]})
    report = check(copies[copy], answers)
    results = {r.id: r for r in report.results}
    assert report.summary() == "1 / 6 correct" and not report.all_correct
    assert results["pick-one"].feedback == ["two is not it either"]
    assert results["pick-one"].explanation is None
    assert results["pick-many"].feedback == ["(b) B is a distractor", "some are right, some are not"]
    assert results["count"].feedback == ["that is both axes", "divide the extent by the factor"]
    assert results["name"].feedback == ["that moves a consumer", "think of the mirror image"]
    assert results["order"].feedback == ["what needs what"]


def test_both_copies_give_the_same_verdicts(copies):
    answers = {"pick-one": "a", "pick-many": ["c", "a"], "count": 14.5, "ratio": 2.58, "name": " SCH.Compute_At() "}
    verdicts = [[r.status for r in check(copies[c], answers).results] for c in ("instructor", "released")]
    assert verdicts[0] == verdicts[1] == ["wrong", "correct", "wrong", "correct", "correct", "unanswered"]


@pytest.mark.parametrize("copy", ["instructor", "released"])
@pytest.mark.parametrize("typed", ["compute_at.", "`compute_at`", "`compute_at`.", "``sch.compute_at()``;",
                                   "compute_at !", " `Compute_At`?  "])
def test_text_answers_ignore_backticks_and_trailing_punctuation(copies, copy, typed):
    question = next(q for q in copies[copy].questions if q.id == "name")
    result = check_question(question, copies[copy].key, typed)
    assert result.status == "correct" and result.explanation == "compute_at moves a producer"


@pytest.mark.parametrize("typed, feedback", [("`reverse_compute_at`.", "that moves a consumer"),
                                             (".compute_at", None), ("compute_at-", None), ("compute-at", None),
                                             ("`", None), ("...", None)])
def test_only_surrounding_backticks_and_trailing_punctuation_are_dropped(copies, typed, feedback):
    question = next(q for q in copies["released"].questions if q.id == "name")
    result = check_question(question, copies["released"].key, typed)
    assert result.status == "wrong"
    assert result.feedback == ([feedback] if feedback else []) + ["think of the mirror image"]


def test_an_accepted_answer_with_punctuation_still_matches_as_typed(tmp_path):
    from autograder.quiz.checking import undecorated_texts

    path = tmp_path / "q.yaml"
    path.write_text("id: q\ntitle: Q\nlesson: l\nquestions:\n  - id: abbreviation\n    type: text\n"
                    "    prompt: Short for 'and so on'?\n    accept: [etc.]\n    feedback: Latin\n    explanation: et cetera\n",
                    encoding="utf-8")
    quiz, _ = load_instructor(path)
    document = release(quiz)
    question, key = ReleasedQuestion(document["questions"][0]), ReleasedKey(document["released"]["salt"])
    assert undecorated_texts("`etc.`") == ("etc.", "etc")
    for typed in ("etc.", "`etc.`", " `` etc. `` "):
        assert check_question(question, key, typed).status == "correct", typed
    assert check_question(question, key, "etc").status == "wrong"  # the accepted text is "etc."


@pytest.mark.parametrize("value, status", [(2.5, "correct"), (2.41, "correct"), (2.6, "correct"),
                                           (2.38, "wrong"), (2.62, "wrong"), (-2.5, "wrong")])
def test_numeric_tolerance_from_hashes(copies, value, status):
    question = next(q for q in copies["released"].questions if q.id == "ratio")
    assert check_question(question, copies["released"].key, value).status == status


@pytest.mark.parametrize("value", [1.0e300, -1.0e300, 1.0e18])
def test_numbers_too_far_out_for_the_grid_are_wrong_not_a_crash(copies, value):
    question = next(q for q in copies["released"].questions if q.id == "ratio")
    result = check_question(question, copies["released"].key, value)
    assert result.status == "wrong"
    assert "far outside" in result.messages[0]


def test_unanswered_invalid_and_edited_questions(copies):
    quiz = copies["released"]
    quiz.edited = {"ratio"}
    sheet = AnswerSheet(answers={"pick-one": "b"}, refused={"count": "expected a number"})
    report = check_quiz(quiz, sheet)
    statuses = {r.id: r.status for r in report.results}
    assert statuses == {"pick-one": "correct", "pick-many": "unanswered", "count": "invalid", "ratio": "edited",
                        "name": "unanswered", "order": "unanswered"}
    assert report.summary() == "1 / 5 correct"
    data = report.to_dict()
    assert (data["correct"], data["total"], data["score"]) == (1, 5, 0.2)


def _cost_model_facts(salt):
    from autograder.quiz.model import ReleasedQuestion
    from autograder.quiz.release import release_question

    from .conftest import COURSE_QUIZZES

    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "two-levels"))
    question = quiz.question("cost-model-facts")
    return question, ReleasedQuestion(release_question(question, salt))


SALTS = [f"{i:032x}" for i in range(24)]


def test_ticking_every_box_opens_the_feedback_of_one_wrong_choice_only():
    """Every wrong pick's feedback would be an oracle: the boxes left silent are the key."""
    shown = set()
    for salt in SALTS:
        question, released = _cost_model_facts(salt)
        wrong = [l for l, c in zip("abcd", question.choices) if not c.correct]
        assert len(wrong) >= 2
        result = check_question(released, ReleasedKey(salt), ["a", "b", "c", "d"])
        per_choice = [f for f in result.feedback if f.startswith("(")]
        assert result.status == "wrong" and len(per_choice) == 1, result.feedback
        assert per_choice[0][1] in wrong
        assert result.feedback[-1] == question.feedback
        # The same release always shows the same one; which one depends on the salt, not the letter.
        assert check_question(released, ReleasedKey(salt), ["d", "c", "b", "a"]).feedback == result.feedback
        shown.add(per_choice[0][1])
    assert shown == set(wrong)


def test_no_subset_of_picks_opens_more_than_one_choice_feedback():
    from itertools import combinations

    question, released = _cost_model_facts(SALTS[0])
    for size in range(1, 5):
        for picks in combinations("abcd", size):
            result = check_question(released, ReleasedKey(SALTS[0]), list(picks))
            per_choice = [f for f in result.feedback if f.startswith("(")]
            assert len(per_choice) <= 1, picks
            picked_wrong = [l for l in picks if not question.choices["abcd".index(l)].correct]
            assert bool(per_choice) == (bool(picked_wrong) and result.status == "wrong"), picks
