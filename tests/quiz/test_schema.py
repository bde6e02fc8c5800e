import json

import jsonschema
import pytest
import yaml

from autograder.quiz.release import release
from autograder.quiz.loading import load_instructor
from autograder.quiz.schema import load_schema, schema_problems, schema_text
from autograder.quiz.yaml_lines import load_lined

from .conftest import COURSE_QUIZZES, SAMPLE_QUIZ


def problems_for(text: str, kind: str = "instructor"):
    return schema_problems(load_lined(text), "q.yaml", kind)


def test_exported_schemas_are_valid_json_schema_and_accept_the_course_quizzes():
    for kind in ("instructor", "released"):
        jsonschema.Draft202012Validator.check_schema(load_schema(kind))
        assert json.loads(schema_text(kind)) == load_schema(kind)
    for path in COURSE_QUIZZES:
        jsonschema.validate(yaml.safe_load(path.read_text()), load_schema("instructor"))


def test_a_released_document_matches_the_released_schema(sample_quiz_file):
    quiz, _ = load_instructor(sample_quiz_file)
    jsonschema.validate(release(quiz), load_schema("released"))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(yaml.safe_load(SAMPLE_QUIZ), load_schema("released"))


def test_a_misspelt_key_is_reported_at_its_own_line_with_a_suggestion():
    text = SAMPLE_QUIZ.replace("        correct: true\n      - text: wrong two", "        corect: true\n      - text: wrong two")
    [problem] = problems_for(text)
    assert problem.line == 12
    assert problem.key == "questions[0].choices[1].corect"
    assert "unknown key 'corect'; did you mean 'correct'?" in problem.message


def test_an_unknown_type_lists_the_types_and_suggests_one():
    [problem] = problems_for(SAMPLE_QUIZ.replace("type: ordering", "type: orderng"))
    assert problem.key == "questions[5].type" and problem.line == SAMPLE_QUIZ.splitlines().index("    type: ordering") + 1
    assert "unknown question type 'orderng'" in problem.message and "did you mean 'ordering'?" in problem.message


def test_a_numeric_answer_written_as_text():
    [problem] = problems_for(SAMPLE_QUIZ.replace("answer: 14", 'answer: "14"'))
    assert problem.key == "questions[2].answer"
    assert problem.message == "expected a number, found text ('14'): remove the quotes"


def test_yaml_1_1_exponent_without_a_dot_is_explained():
    [problem] = problems_for(SAMPLE_QUIZ.replace("tolerance: 0.1", "tolerance: 1e-1"))
    assert "write 0.001 or 1.0e-3" in problem.message


def test_a_yes_no_boolean_where_text_is_expected():
    [problem] = problems_for(SAMPLE_QUIZ.replace("title: Sample quiz", "title: yes"))
    assert "put the text in quotes" in problem.message and problem.line == 2


def test_missing_keys_and_bad_ids():
    problems = problems_for(SAMPLE_QUIZ.replace("    explanation: 224 / 16\n", "").replace("id: count", "id: Count"))
    messages = {p.message for p in problems}
    assert "missing key 'explanation'" in messages
    assert any("'Count' is not a valid id" in m for m in messages)
