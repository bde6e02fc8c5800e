import re

import pytest

from autograder.quiz.answers import AnswerError, load_answers, parse_answer, parse_answer_text
from autograder.quiz.diagnostics import QuizFileError
from autograder.quiz.loading import load


@pytest.fixture
def questions(sample_quiz_file):
    return {q.id: q for q in load(sample_quiz_file).released.questions}


def test_answers_of_each_type(questions):
    assert parse_answer(questions["pick-one"], " B ") == "b"
    assert parse_answer(questions["pick-many"], ["c", "a"]) == ["c", "a"]
    assert parse_answer(questions["pick-many"], "a, c") == ["a", "c"]
    assert parse_answer(questions["count"], 14) == 14.0
    assert parse_answer(questions["name"], "compute_at") == "compute_at"
    assert parse_answer(questions["name"], 42) == "42"
    assert parse_answer(questions["order"], "dcba") == ["d", "c", "b", "a"]
    assert parse_answer(questions["order"], ["b", "a", "d", "c"]) == ["b", "a", "d", "c"]


@pytest.mark.parametrize("qid, value, message", [
    ("pick-one", "e", "expected one of the letters a, b, c"),
    ("pick-one", 2, "found a number (2)"),
    ("pick-many", ["a", "a"], "only once"),
    ("pick-many", {"a": 1}, "expected a list of letters"),
    ("count", "14", "remove the quotes"),
    ("count", True, "expected a number, found a boolean"),
    ("count", float("nan"), "finite"),
    ("name", False, "put the answer in quotes"),
    ("order", ["a", "b", "c"], "use all of a, b, c, d"),
])
def test_wrong_shapes_say_what_was_expected(questions, qid, value, message):
    with pytest.raises(AnswerError, match=re.escape(message)):
        parse_answer(questions[qid], value)


def test_typed_text(questions):
    assert parse_answer_text(questions["count"], "14 tiles") == 14.0
    assert parse_answer_text(questions["count"], "3,211,264") == 3211264.0
    assert parse_answer_text(questions["ratio"], "2.5e0") == 2.5
    assert parse_answer_text(questions["pick-many"], "a c") == ["a", "c"]
    with pytest.raises(AnswerError, match=r"type a number \(in tiles\)"):
        parse_answer_text(questions["count"], "fourteen")
    with pytest.raises(AnswerError):
        parse_answer_text(questions["count"], "0,5")


@pytest.mark.parametrize("typed", ["\uff11\uff14", "\u0661\u0664", "1\u0664", "\uff11,\uff10\uff12\uff14", "\u0661e2"])
def test_only_ascii_digits_are_numbers_as_in_the_browser(questions, typed):
    # Python's \d also matches full-width and Arabic-Indic digits; quiz-hashing.js reads 0-9 only.
    with pytest.raises(AnswerError, match="type a number"):
        parse_answer_text(questions["count"], typed)


def test_an_answers_file_reports_unknown_ids_and_bad_types_by_line(sample_quiz_file, write_file):
    quiz = load(sample_quiz_file).released
    sheet = load_answers(write_file("a.yaml", "pick-one: b\nnope: 3\ncount: '14'\n"), quiz)
    assert sheet.answers == {"pick-one": "b"}
    assert set(sheet.refused) == {"count"}
    unknown, refused = sheet.problems
    assert (unknown.line, unknown.severity) == (2, "warning") and "no question 'nope'" in unknown.message
    assert (refused.line, refused.severity) == (3, "error") and "not counted" in refused.message


@pytest.mark.parametrize("text, message", [
    ("pick-one: [b\n", "not valid YAML"),
    ("- b\n- c\n", "an answers file is a YAML mapping"),
    ("a: 1\na: 2\n", "duplicate key 'a'"),
])
def test_unusable_answers_files_raise_a_clear_error(sample_quiz_file, write_file, text, message):
    with pytest.raises(QuizFileError, match=message):
        load_answers(write_file("a.yaml", text), load(sample_quiz_file).released)


def test_an_empty_answers_file_answers_nothing(sample_quiz_file, write_file):
    assert load_answers(write_file("a.yaml", ""), load(sample_quiz_file).released).answers == {}
