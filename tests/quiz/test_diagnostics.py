from autograder.quiz.diagnostics import Problem, describe_value, format_path


def test_paths_read_like_the_yaml_they_point_into():
    assert format_path(("questions", 2, "choices", 0, "feedback")) == "questions[2].choices[0].feedback"
    assert format_path(()) == ""


def test_a_problem_names_file_line_and_key():
    problem = Problem("q.yaml", 12, "questions[1].type", "unknown question type", path=("questions", 1, "type"))
    assert str(problem) == "q.yaml:12: error: questions[1].type: unknown question type"
    assert problem.question_index == 1 and problem.is_error
    assert Problem("q.yaml", None, "", "not YAML", "warning").question_index is None
    assert str(Problem("q.yaml", None, "", "not YAML", "warning")) == "q.yaml: warning: not YAML"


def test_values_are_described_by_their_yaml_type():
    assert describe_value(True) == "a boolean (true)"
    assert describe_value("14") == "text ('14')"
    assert describe_value(None).startswith("nothing")
    assert describe_value([1]) == "a list"
