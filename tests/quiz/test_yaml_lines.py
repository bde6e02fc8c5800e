import pytest

from autograder.quiz.yaml_lines import YamlProblem, load_lined


def test_values_and_keys_keep_their_lines():
    lined = load_lined("id: demo\nquestions:\n  - id: q1\n    choices:\n      - text: A\n")
    assert lined.data == {"id": "demo", "questions": [{"id": "q1", "choices": [{"text": "A"}]}]}
    assert lined.line_of(("questions", 0, "id")) == 3
    assert lined.line_of(("questions", 0, "choices", 0)) == 5
    assert lined.line_for(("questions",)) == 2


def test_line_of_a_missing_path_falls_back_to_its_nearest_ancestor():
    lined = load_lined("a:\n  b: 1\n")
    assert lined.line_of(("a", "b", "nope")) == 2


def test_duplicate_keys_are_refused_with_both_lines():
    with pytest.raises(YamlProblem) as err:
        load_lined("id: one\ntitle: t\nid: two\n")
    assert err.value.line == 3
    assert "duplicate key 'id'" in err.value.message and "line 1" in err.value.message


def test_syntax_errors_carry_a_line():
    with pytest.raises(YamlProblem) as err:
        load_lined("id: demo\nquestions: [unclosed\n")
    assert err.value.line is not None and err.value.line >= 2
    assert err.value.message.startswith("not valid YAML")


def test_numeric_keys_become_strings_and_empty_text_is_none():
    assert load_lined("1: a\n").data == {"1": "a"}
    assert load_lined("").data is None


def test_merge_keys_are_refused():
    with pytest.raises(YamlProblem, match="merge keys"):
        load_lined("base: &b {x: 1}\nother:\n  <<: *b\n")
