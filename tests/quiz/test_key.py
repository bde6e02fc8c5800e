import yaml

from autograder.quiz.key import answer_key, key_yaml
from autograder.quiz.loading import load_instructor

from .conftest import COURSE_QUIZZES, SAMPLE_KEY


def test_the_key_of_the_sample_quiz(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    key = answer_key(quiz)
    assert {k: v for k, v in key.items() if k != "order"} == SAMPLE_KEY
    assert key["order"] == quiz.question("order").ordering_key()


def test_key_yaml_reads_back_as_the_same_answers():
    for path in COURSE_QUIZZES:
        quiz, _ = load_instructor(path)
        text = key_yaml(quiz)
        assert text.startswith("# Answer key for quiz")
        assert yaml.safe_load(text) == answer_key(quiz)


def test_code_answers_are_the_solution_source():
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace"))
    key = answer_key(quiz)
    assert key["journal-schedule"] == quiz.question("journal-schedule").solution
    assert isinstance(key["tiles-per-channel"], int)
