from dataclasses import asdict
from itertools import combinations

import pytest

from autograder.quiz import hashing
from autograder.quiz.answers import AnswerSheet
from autograder.quiz.checking import InstructorKey, ReleasedKey, check_question, check_quiz
from autograder.quiz.key import answer_key
from autograder.quiz.loading import load, load_instructor
from autograder.quiz.model import ReleasedQuestion
from autograder.quiz.release import release, write_released
from autograder.quiz.rules import accepted_texts

from .conftest import COURSE_QUIZZES


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

    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "two-levels"))
    question = quiz.question("cost-model-facts")
    return question, ReleasedQuestion(release_question(question, salt))


SALTS = [f"{i:032x}" for i in range(24)]


def test_ticking_every_box_opens_the_feedback_of_one_wrong_choice_only():
    """Every wrong pick's feedback would be an oracle: the boxes left silent are the key."""
    shown = set()
    for salt in SALTS:
        question, released = _cost_model_facts(salt)
        wrong = [letter for letter, c in zip("abcd", question.choices) if not c.correct]
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
            picked_wrong = [letter for letter in picks if not question.choices["abcd".index(letter)].correct]
            assert bool(per_choice) == (bool(picked_wrong) and result.status == "wrong"), picks


# ---- the instructor copy's plain key gives what the released copy's hashes give -------------------

def _answers_for(question, shown):
    """Right, wrong, partial and odd answers for one question (`shown`: its released form)."""
    letters = shown.letters
    if question.type == "single":
        return [None, *letters]
    if question.type == "multiple":  # every pick, so partial answers and picks with two feedbacks too
        return [list(c) for n in range(1, len(letters) + 1) for c in combinations(letters, n)]
    if question.type == "ordering":
        key = question.ordering_key()
        return [key, key[::-1], key[1:] + key[:1], [key[1], key[0], *key[2:]]]  # right, wrong, nearly right
    if question.type == "numeric":
        tol = question.tolerance
        mistakes = [m.answer for m in question.mistakes]
        return [question.answer, question.answer + tol / 2, question.answer + tol * 1.5 + 0.01, 0.0, -1.0,
                *mistakes, *(m + tol / 2 for m in mistakes), 1e300, -1e300]
    if question.type == "text":
        texts = accepted_texts({"accept": question.accept, "patterns": question.patterns,
                                "case_sensitive": question.case_sensitive})[:4]
        mistakes = [m.answer for m in question.mistakes]
        return [*texts, *mistakes, *(f"`{m}`." for m in mistakes), f"`{texts[0]}`.", " " + texts[0].upper(),
                f".{texts[0]}", "`", "no idea"]
    return [None]  # code: not graded here (skip_code), the same data either way


def _both_copies(path, tmp_path):
    quiz, _ = load_instructor(path)
    out = tmp_path / f"{path.stem}.released.yaml"
    write_released(release(quiz), out)
    return quiz, load(path).released, load(out).released


QUIZ_FILES = ["sample", *(p.stem for p in COURSE_QUIZZES)]


def _quiz_path(name, sample_quiz_file):
    return sample_quiz_file if name == "sample" else next(p for p in COURSE_QUIZZES if p.stem == name)


@pytest.mark.parametrize("name", QUIZ_FILES)
def test_the_instructor_copy_checks_every_answer_as_its_released_copy_does(name, sample_quiz_file, tmp_path):
    quiz, instructor, released = _both_copies(_quiz_path(name, sample_quiz_file), tmp_path)
    assert isinstance(instructor.key, InstructorKey) and isinstance(released.key, ReleasedKey)
    kinds = set()
    for question, plain, hashed in zip(quiz.questions, instructor.questions, released.questions, strict=True):
        assert plain.data == {k: v for k, v in hashed.data.items() if k not in ("accept", "respond", "integrity")}
        for answer in _answers_for(question, hashed):
            results = [asdict(check_question(q, copy.key, answer, skip_code=True))
                       for q, copy in ((plain, instructor), (hashed, released))]
            assert results[0] == results[1], (question.id, answer)
            kinds.add((question.type, results[0]["status"], bool(results[0]["feedback"])))
    if name == "sample":  # every kind of question, right and wrong, and wrong with its own feedback
        assert {(t, s) for t, s, _ in kinds} >= {(t, s) for t in ("single", "multiple", "numeric", "text", "ordering")
                                                 for s in ("correct", "wrong")}
        assert {t for t, s, f in kinds if s == "wrong" and f} >= {"single", "multiple", "numeric", "text", "ordering"}


@pytest.mark.parametrize("name", QUIZ_FILES)
def test_whole_sheets_give_the_same_report_from_both_copies(name, sample_quiz_file, tmp_path):
    quiz, instructor, released = _both_copies(_quiz_path(name, sample_quiz_file), tmp_path)
    key = answer_key(quiz)
    wrong = {q.id: _answers_for(q, s)[-1] for q, s in zip(quiz.questions, released.questions)}
    partial = dict(key, **{q.id: wrong[q.id] for q in quiz.questions[::2]})
    for sheet in (key, wrong, partial, {}):
        reports = [check_quiz(copy, AnswerSheet(answers=sheet), skip_code=True).to_dict()
                   for copy in (instructor, released)]
        assert reports[0] == reports[1]
    assert check_quiz(instructor, AnswerSheet(answers=key), skip_code=True).all_correct


@pytest.fixture
def slow_keys(monkeypatch):
    """Every call for a slow key, an answer's (derive_key) or a salt's (_slow_salt), cached or not."""
    calls = []
    for name in ("derive_key", "_slow_salt"):
        def counted(*args, _original=getattr(hashing, name), _name=name):
            calls.append((_name, *args))
            return _original(*args)

        monkeypatch.setattr(hashing, name, counted)
    return calls


def test_checking_an_instructor_copy_derives_no_slow_key(slow_keys, sample_quiz_file):
    loaded = load(sample_quiz_file)
    quiz = loaded.released
    for question, original in zip(quiz.questions, loaded.quiz.questions):
        for answer in _answers_for(original, question):
            check_question(question, quiz.key, answer, skip_code=True)
    assert check_quiz(quiz, AnswerSheet(answers=answer_key(loaded.quiz))).all_correct
    assert slow_keys == []


def test_a_released_copy_is_still_checked_through_slow_keys(slow_keys, sample_quiz_file, tmp_path):
    instructor, _ = load_instructor(sample_quiz_file)
    out = tmp_path / "released.yaml"
    write_released(release(instructor), out)
    slow_keys.clear()
    assert check_quiz(load(out).released, AnswerSheet(answers=answer_key(instructor))).all_correct
    assert len(slow_keys) >= 6 and {call[0] for call in slow_keys} == {"derive_key"}


def test_only_ranking_two_picked_feedbacks_costs_the_instructor_copy_slow_keys(slow_keys):
    """Which of two picked wrong choices shows its feedback is decided by their salted checks, as
    in the released copy, so the instructor copy then derives the salt and those two keys."""
    quiz = load(next(p for p in COURSE_QUIZZES if p.stem == "two-levels")).released
    question = next(q for q in quiz.questions if q.id == "cost-model-facts")
    check_question(question, quiz.key, ["a", "b"])  # one picked choice with feedback: nothing to rank
    assert slow_keys == []
    check_question(question, quiz.key, ["a", "b", "c", "d"])  # two (a and c)
    assert [(call[0], call[-1]) for call in slow_keys][1:] == [("derive_key", "a"), ("derive_key", "c")]
    assert slow_keys[0][0] == "_slow_salt" and len(slow_keys) == 3  # the salt, then the key of each of the two
