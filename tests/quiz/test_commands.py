"""End to end: the real `tvm-course quiz ...` console script in a subprocess."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder.quiz.schema import load_schema

from .conftest import COURSE_QUIZZES, REPO, SAMPLE_QUIZ

SCRIPT = Path(sys.executable).with_name("tvm-course")


def cli(*args, stdin=None, cwd=None):
    result = subprocess.run([str(SCRIPT), "quiz", *map(str, args)], input=stdin, capture_output=True,
                            text=True, cwd=cwd or REPO, timeout=300)
    assert "Traceback" not in result.stderr + result.stdout
    return result


@pytest.fixture
def sample(tmp_path):
    path = tmp_path / "sample.yaml"
    path.write_text(SAMPLE_QUIZ)
    return path


def test_validate_the_course_quizzes():
    result = cli("validate", *COURSE_QUIZZES)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count(": ok (instructor copy, ") == len(COURSE_QUIZZES)
    assert result.stderr == ""


def test_validate_reports_file_line_and_key(tmp_path, sample):
    bad = tmp_path / "bad.yaml"
    bad.write_text(SAMPLE_QUIZ.replace("type: single", "type: singel"))
    result = cli("validate", sample, bad)
    assert result.returncode == 1
    assert f"{bad}:6: error: questions[0].type: unknown question type 'singel'" in result.stderr
    assert f"{sample}: ok" in result.stdout and f"{bad}: INVALID (1 error(s))" in result.stdout


def test_usage_errors_exit_2(tmp_path, sample):
    assert cli("validate", tmp_path / "missing.yaml").returncode == 2
    assert cli("check", sample, tmp_path / "missing.yaml").returncode == 2
    assert cli("frobnicate").returncode == 2
    assert cli("release", sample).returncode == 2  # -o is required


def _one_line_usage_error(result, path):
    assert result.returncode == 2, (result.stdout, result.stderr)
    [line] = [text for text in result.stderr.splitlines() if not text.startswith("note: ")]
    assert line.startswith(f"tvm-course quiz: cannot write {path}: "), line


def test_outputs_that_cannot_be_written_are_usage_errors_not_tracebacks(tmp_path, sample):
    _one_line_usage_error(cli("release", sample, "-o", tmp_path), tmp_path)  # a directory
    assert "it is a directory" in cli("release", sample, "-o", tmp_path).stderr
    _one_line_usage_error(cli("release", sample, "-o", "/proc/nope/x.yaml"), "/proc/nope/x.yaml")
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    _one_line_usage_error(cli("release", sample, "-o", blocker / "x.json"), blocker / "x.json")
    _one_line_usage_error(cli("gift", sample, "-o", tmp_path / "nonexist" / "x"), tmp_path / "nonexist" / "x")
    _one_line_usage_error(cli("gift", sample, "-o", tmp_path), tmp_path)


def test_take_asks_again_for_a_code_file_that_is_not_utf8(tmp_path):
    from .test_rules import CODE_QUESTION

    quiz = tmp_path / "with-code.yaml"
    quiz.write_text(SAMPLE_QUIZ + CODE_QUESTION)
    latin1 = tmp_path / "schedule.py"
    latin1.write_bytes("# caf\u00e9\ndef schedule(sch):\n    pass\n".encode("latin-1"))
    result = cli("take", quiz, stdin="\n" * 6 + f"{latin1}\n")
    assert result.returncode == 1  # nothing answered; no crash
    assert f"cannot read {str(latin1)!r}: it is not UTF-8 text; try again." in result.stdout
    assert result.stdout.rstrip().endswith("0 / 7 correct")


@pytest.mark.parametrize("quiz_path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_key_then_check_gives_full_marks_on_both_copies(tmp_path, quiz_path):
    key = cli("key", quiz_path)
    assert key.returncode == 0
    answers = tmp_path / "key.yaml"
    answers.write_text(key.stdout)
    released = tmp_path / "released.yaml"
    assert cli("release", quiz_path, "-o", released).returncode == 0
    reports = []
    for copy in (quiz_path, released):
        result = cli("check", copy, answers, "--json", "--skip-code")
        assert result.returncode == 0, result.stdout
        reports.append(json.loads(result.stdout))
    scored = [q for q in yaml.safe_load(quiz_path.read_text(encoding="utf-8"))["questions"] if q["type"] != "code"]
    assert len(scored) >= 10  # --skip-code leaves the code questions out of the score
    for report in reports:
        assert report["correct"] == report["total"] == len(scored) and report["score"] == 1.0
    assert reports[0]["questions"] == reports[1]["questions"]


def test_wrong_and_partial_answers_give_the_same_json_from_both_copies(tmp_path, sample):
    released = tmp_path / "released.yaml"
    assert cli("release", sample, "-o", released).returncode == 0
    answers = tmp_path / "answers.yaml"
    answers.write_text("pick-one: c\npick-many: [a, b]\ncount: 196\nratio: 2.55\nname: '`Reverse_Compute_At`.'\n"
                       "order: [a, b, c, d]\n")
    results = [cli("check", copy, answers, "--json") for copy in (sample, released)]
    assert [r.returncode for r in results] == [1, 1]
    reports = [json.loads(r.stdout) for r in results]
    assert reports[0] == reports[1]
    assert (reports[0]["correct"], reports[0]["total"]) == (1, 6)
    assert reports[0]["questions"][1]["feedback"] == ["(b) B is a distractor", "some are right, some are not"]


def test_a_wrong_answer_loses_its_point_and_shows_its_feedback(tmp_path, sample):
    answers = tmp_path / "answers.yaml"
    answers.write_text("pick-one: c\ncount: 196\nname: compute_at\n")
    result = cli("check", sample, answers)
    assert result.returncode == 1
    assert "[no] pick-one: wrong" in result.stdout and "two is not it either" in result.stdout
    assert "that is both axes" in result.stdout
    assert "[ok] name: correct" in result.stdout
    assert result.stdout.rstrip().endswith("1 / 6 correct")


def test_bad_answers_files_give_clear_messages_and_count_only_valid_answers(tmp_path, sample):
    answers = tmp_path / "answers.yaml"
    answers.write_text("pick-one: b\nnot-a-question: 1\ncount: fourteen\n")
    result = cli("check", sample, answers, "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 1
    assert (report["correct"], report["total"]) == (1, 6)
    messages = [p["message"] for p in report["problems"]]
    assert any("no question 'not-a-question'" in m for m in messages)
    assert any("expected a number, found text ('fourteen')" in m for m in messages)
    answers.write_text("pick-one: [b\n")
    result = cli("check", sample, answers)
    assert result.returncode == 1 and f"{answers}:" in result.stderr and "not valid YAML" in result.stderr


def test_malformed_quiz_yaml(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("id: x\nquestions:\n  - id: [\n")
    for action in ("validate", "key", "release", "gift", "take"):
        args = [action, broken] + (["-o", tmp_path / "o.yaml"] if action == "release" else [])
        result = cli(*args)
        assert result.returncode == 1 and "not valid YAML" in result.stderr, action


def test_an_edited_released_file_is_detected_and_only_the_rest_is_scored(tmp_path, sample):
    released = tmp_path / "released.yaml"
    cli("release", sample, "-o", released)
    data = yaml.safe_load(released.read_text())
    data["questions"][0]["choices"][0] = "wrong one (now looks right)"
    released.write_text(yaml.safe_dump(data))
    answers = tmp_path / "answers.yaml"
    answers.write_text("pick-one: b\ncount: 14\n")
    result = cli("check", released, answers)
    assert result.returncode == 1
    assert "question 'pick-one' was changed after release" in result.stdout
    assert "[!!] pick-one: edited" in result.stdout
    assert result.stdout.rstrip().endswith("1 / 5 correct")


def test_release_leaves_no_plain_key_and_refuses_a_released_copy(tmp_path, sample):
    out = tmp_path / "nested" / "sample.json"
    assert cli("release", sample, "-o", out).returncode == 0
    text = out.read_text()
    for secret in ("correct", "the right one is right", "two is not it either", "that is both axes", "224 / 16"):
        assert secret not in text
    result = cli("key", out)
    assert result.returncode == 1 and "released copy: it has no answer key" in result.stderr


def test_take_in_the_terminal(sample):
    result = cli("take", sample, stdin="b\na c\n14\n2.5\ncompute_at\n")
    assert result.returncode == 1  # the ordering question was skipped (end of input)
    assert "Question 6 of 6 (ordering)" in result.stdout
    assert result.stdout.rstrip().endswith("5 / 6 correct")


def test_gift_export(tmp_path):
    quiz_path = next(p for p in COURSE_QUIZZES if p.stem == "tiling-trace")
    result = cli("gift", quiz_path)
    assert result.returncode == 0
    assert result.stdout.count("::") == 2 * 10 and "$CATEGORY: tvm-course/tiling-trace" in result.stdout
    assert "note: skipped code question 'journal-schedule'" in result.stderr
    out = tmp_path / "quiz.gift"
    assert cli("gift", quiz_path, "-o", out).returncode == 0 and out.read_text() == result.stdout


def test_schema_prints_the_exported_json_schema():
    assert json.loads(cli("schema").stdout) == load_schema("instructor")
    assert json.loads(cli("schema", "--released").stdout) == load_schema("released")


@pytest.mark.slow
@pytest.mark.parametrize("quiz_path", COURSE_QUIZZES, ids=lambda p: p.stem)
def test_key_then_check_with_code_questions_graded(tmp_path, quiz_path):
    answers = tmp_path / "key.yaml"
    answers.write_text(cli("key", quiz_path).stdout)
    released = tmp_path / "released.yaml"
    cli("release", quiz_path, "-o", released)
    for copy in (quiz_path, released):
        result = cli("check", copy, answers, "--json")
        report = json.loads(result.stdout)
        assert result.returncode == 0, result.stdout
        assert report["correct"] == report["total"] == len(yaml.safe_load(quiz_path.read_text(encoding="utf-8"))["questions"])
