"""The course map: its shape, that every path in it exists, and `tvm-course map`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from autograder import syllabus
from autograder.cli import main

ROOT = Path(__file__).resolve().parents[1]


def test_the_course_syllabus_loads():
    course = syllabus.load()
    assert course.source == ROOT / "course" / "syllabus.yaml"
    (unit,) = course.units
    assert [lesson.id for lesson in unit.lessons] == ["two-levels", "tiling-trace", "gpu-trace"]
    # each assignment follows the lesson that teaches its target: the CPU tiling, then the GPU one
    assert {a.id: a.after for a in unit.assignments} == {"tiling": "tiling-trace", "gpu-tiling": "gpu-trace",
                                                         "cost-model": "two-levels"}
    assert [a.problem for a in unit.assignments] == ["tile-fused-conv", "gpu-fused-conv", "learned-cost-model"]


@pytest.mark.parametrize("what,path", syllabus.load().paths(), ids=lambda x: str(x))
def test_every_path_in_the_syllabus_exists(what, path):
    assert (ROOT / path).is_file(), f"{what}: {path} is named in course/syllabus.yaml but does not exist"


def test_the_course_syllabus_has_no_problems():
    assert syllabus.problems(syllabus.load()) == []


def _copy_course(tmp_path: Path, edit=None) -> Path:
    """A copy of the course map and the files it names, in a scratch repository."""
    data = yaml.safe_load((ROOT / "course" / "syllabus.yaml").read_text())
    if edit:
        edit(data)
    target = tmp_path / "course" / "syllabus.yaml"
    target.parent.mkdir(parents=True)
    target.write_text(yaml.safe_dump(data))
    for _, relative in syllabus.load().paths():
        if (ROOT / relative).is_file():
            (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(ROOT / relative, tmp_path / relative)
    return target


def test_problems_name_each_inconsistency(tmp_path):
    def edit(data):
        unit = data["units"][0]
        unit["lessons"][1]["id"] = "two-levels"  # duplicate id
        unit["assignments"][0]["problem"] = "no-such-problem"
        unit["assignments"][1]["after"] = "a-lesson-elsewhere"
        unit["lessons"][0]["quiz"] = "quizzes/absent.yaml"

    found = syllabus.problems(syllabus.load(_copy_course(tmp_path, edit)))
    assert "quiz of lesson two-levels: quizzes/absent.yaml does not exist" in found
    assert any("unknown problem 'no-such-problem'" in p for p in found)
    assert any("'after' names 'a-lesson-elsewhere'" in p for p in found)
    assert "id 'two-levels' is used more than once" in found


def test_a_quiz_whose_id_differs_from_its_file_name_is_a_problem(tmp_path):
    # Student copies are named after the quiz file (make student-quizzes); the id must agree.
    path = _copy_course(tmp_path)
    quiz = tmp_path / "quizzes" / "two-levels.yaml"
    quiz.write_text(quiz.read_text().replace("id: two-levels", "id: two-levels-renamed", 1))
    found = syllabus.problems(syllabus.load(path))
    assert any("its id 'two-levels-renamed' should match its file name two-levels.yaml" in p for p in found)


def test_student_quiz_paths_are_the_released_copies():
    lessons = [lesson for unit in syllabus.load().units for lesson in unit.lessons]
    assert [lesson.student_quiz for lesson in lessons] == [
        "build/student-quizzes/two-levels.yaml", "build/student-quizzes/tiling-trace.yaml",
        "build/student-quizzes/gpu-trace.yaml"]


def test_make_student_quizzes_writes_released_copies_that_take_accepts(tmp_path):
    import subprocess
    import sys

    from autograder.quiz import load

    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    stamp = tmp_path / "installed"
    stamp.touch()  # newer than pyproject.toml: make does not rebuild the environment
    out = tmp_path / "student-quizzes"
    result = subprocess.run(["make", "-s", "student-quizzes", f"STUDENT_QUIZZES={out}", f"STAMP={stamp}",
                             f"BIN={Path(sys.executable).parent}"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for lesson in (lesson for unit in syllabus.load().units for lesson in unit.lessons):
        released = out / Path(lesson.student_quiz).name
        text = released.read_text()
        assert "salt:" in text and "correct: true" not in text and "answer:" not in text
        assert load(released).kind == "released"
    gitignore = (ROOT / ".gitignore").read_text().split()
    assert "build/" in gitignore  # the default STUDENT_QUIZZES, build/student-quizzes, is never committed


@pytest.mark.parametrize(
    "document,message",
    [
        ("[]", "syllabus: expected a mapping"),
        ("course: x\nunits: []\n", "no units"),
        ("course: x\nunits:\n  - id: u\n", "units[0]: missing key 'title'"),
        ("course: x\nunits:\n  - {id: u, title: t, lessons: [{id: l, title: t, notebook: n.ipynb}]}\n", "units[0].lessons[0]: missing key 'quiz'"),
        ("course: x\nunits:\n  - {id: u, title: t, colour: red}\n", "unknown key(s) colour"),
        ("course: x\nunits: [\n", "not valid YAML"),
    ],
)
def test_malformed_syllabus_files_are_refused_with_the_key(tmp_path, document, message):
    path = tmp_path / "syllabus.yaml"
    path.write_text(document)
    with pytest.raises(syllabus.SyllabusError) as error:
        syllabus.load(path)
    assert message in str(error.value)


def test_map_prints_the_course_and_exits_zero(capsys):
    assert main(["map"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ML compilers: Apache TVM")
    assert "Lesson 1: Two levels, one stack  [two-levels]" in out
    # Students are sent to the released student copy, never to the instructor copy with the answers.
    assert "take it: tvm-course quiz take build/student-quizzes/two-levels.yaml" in out
    assert "quiz take quizzes/" not in out
    assert "instructor  quizzes/two-levels.yaml  (holds the answers)" in out
    assert "course/source/gpu-tiling/gpu-tiling.ipynb" in out
    assert "(missing)" not in out


def test_map_says_how_each_assignment_is_graded_and_checked_by_its_kind(capsys):
    """As the website does (syllabus.Assignment.graded_on, check_it): a schedule by its problem and
    grade-schedule, the cost model by what it is graded on and its notebook's self-check."""
    assert main(["map"]) == 0
    out = capsys.readouterr().out
    tiling = out[out.index("[tiling]"):out.index("[gpu-tiling]")]
    assert "    after       lesson tiling-trace\n    graded      as problem tile-fused-conv\n" in tiling
    assert "    check it    Try a schedule any time: tvm-course grade-schedule tile-fused-conv my_schedule.py" in tiling
    cost_model = out[out.index("[cost-model]"):]
    assert "    graded      on how well your model ranks schedule candidates and how soon it steers a search to a fast one" \
        in cost_model
    assert "    check it    Check your model on your own machine with the notebook's self-check cell: " \
        "self_check(features, Model)" in cost_model
    assert "problem learned-cost-model" not in cost_model and "grade-schedule" not in cost_model  # a model is no schedule
    assert main(["map", "--json"]) == 0
    (entry,) = [a for a in json.loads(capsys.readouterr().out)["units"][0]["assignments"] if a["id"] == "cost-model"]
    assert entry["graded_on"].startswith("graded on how well your model ranks")
    assert entry["check_it"] == ["Check your model on your own machine with the notebook's self-check cell",
                                 "self_check(features, Model)"]


def test_map_marks_missing_files_and_exits_one(tmp_path, capsys):
    path = _copy_course(tmp_path)
    (tmp_path / "lessons" / "02-tiling-trace.ipynb").unlink()
    assert main(["map", "--syllabus", str(path)]) == 1
    out = capsys.readouterr().out
    assert "lessons/02-tiling-trace.ipynb  (missing)" in out
    assert "lesson tiling-trace: lessons/02-tiling-trace.ipynb does not exist" in out


def test_map_json_and_usage_errors(tmp_path, capsys):
    assert main(["map", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["problems"] == []
    assert document["units"][0]["lessons"][0]["notebook"] == "lessons/01-two-levels.ipynb"
    assert main(["map", "--syllabus", str(tmp_path / "absent.yaml")]) == 2
    assert "cannot read" in capsys.readouterr().err
