import pytest
import yaml

from autograder.quiz.diagnostics import QuizFileError
from autograder.quiz.loading import load, load_instructor
from autograder.quiz.release import release, write_released

from .conftest import SAMPLE_QUIZ


def released_file(tmp_path, sample_quiz_file, name="released.yaml"):
    quiz, _ = load_instructor(sample_quiz_file)
    out = tmp_path / name
    write_released(release(quiz), out)
    return out


def test_an_instructor_copy_is_released_in_memory(sample_quiz_file):
    loaded = load(sample_quiz_file)
    assert loaded.kind == "instructor" and loaded.problems == []
    assert loaded.released.from_instructor_copy
    assert [q.id for q in loaded.released.questions] == [q.id for q in loaded.quiz.questions]
    assert "correct" not in str(loaded.released.questions[0].data)


def test_a_broken_question_is_dropped_and_the_rest_kept(write_file):
    loaded = load(write_file("q.yaml", SAMPLE_QUIZ.replace("answer: 14", "answer: fourteen")))
    assert [p.key for p in loaded.errors] == ["questions[2].answer"]
    assert "count" not in [q.id for q in loaded.quiz.questions]
    assert len(loaded.quiz.questions) == 5


@pytest.mark.parametrize("text, message", [
    ("id: [unclosed\n", "not valid YAML"),
    ("- just\n- a list\n", "a quiz file is a YAML mapping"),
    (SAMPLE_QUIZ.replace("title: Sample quiz\n", ""), "missing key 'title'"),
    (SAMPLE_QUIZ.replace("lesson: two-levels", "lesson: two-levels\nauthor: me"), "unknown key 'author'"),
])
def test_problems_with_the_whole_file_are_fatal(write_file, text, message):
    with pytest.raises(QuizFileError) as err:
        load(write_file("q.yaml", text))
    assert message in str(err.value)
    assert str(err.value).startswith(str(err.value.problems[0].file))


def test_an_unreadable_file_is_reported_not_raised(tmp_path):
    with pytest.raises(QuizFileError, match="cannot read the file"):
        load(tmp_path / "missing.yaml")
    (tmp_path / "binary.yaml").write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(QuizFileError, match="not UTF-8"):
        load(tmp_path / "binary.yaml")


def test_a_released_copy_loads_and_verifies(tmp_path, sample_quiz_file):
    loaded = load(released_file(tmp_path, sample_quiz_file))
    assert loaded.kind == "released" and loaded.problems == [] and loaded.released.edited == set()
    with pytest.raises(QuizFileError, match="released copy: it has no answer key"):
        load_instructor(released_file(tmp_path, sample_quiz_file))


def test_an_edited_question_is_detected_and_not_scored(tmp_path, sample_quiz_file):
    path = released_file(tmp_path, sample_quiz_file)
    data = yaml.safe_load(path.read_text())
    data["questions"][2]["prompt"] = "How many? (edited)"
    path.write_text(yaml.safe_dump(data))
    loaded = load(path)
    assert loaded.released.edited == {"count"}
    [problem] = loaded.problems
    assert "question 'count' was changed after release" in problem.message and problem.is_error


def test_an_edited_title_is_a_warning_and_an_edited_salt_breaks_every_question(tmp_path, sample_quiz_file):
    path = released_file(tmp_path, sample_quiz_file)
    data = yaml.safe_load(path.read_text())
    data["title"] = "Renamed"
    path.write_text(yaml.safe_dump(data))
    loaded = load(path)
    assert loaded.released.edited == set()
    assert [p.severity for p in loaded.problems] == ["warning"]
    data["released"]["salt"] = "0" * 32
    path.write_text(yaml.safe_dump(data))
    assert len(load(path).released.edited) == 6


def test_a_released_copy_with_a_mangled_entry_is_reported_with_its_line(tmp_path, sample_quiz_file):
    path = released_file(tmp_path, sample_quiz_file)
    text = path.read_text()
    first_check = next(line for line in text.splitlines() if "check:" in line)
    path.write_text(text.replace(first_check, first_check.replace("check:", "chekc:")))
    loaded = load(path)
    [problem] = [p for p in loaded.errors if "unknown key" in p.message]
    assert problem.line == text.splitlines().index(first_check) + 1
    assert len(loaded.released.questions) == 5
