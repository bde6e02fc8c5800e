"""course/: the nbgrader config and the assignments' source notebooks, as nbgrader needs them."""
from __future__ import annotations

import re

import nbformat
from nbgrader.preprocessors import CheckCellMetadata

from autograder.course.course_dir import load_course_config
from autograder.rehearsal.scratch_course import copy_course
from autograder.nbgrader_ext.plan import plan_from_notebook
from autograder.nbgrader_ext.preprocessors import ResilientExecute, SaveTrustedGrades, StartTrustedGrading

from .conftest import COURSE, REPO, source_notebook

EXECUTION_OFF = "c.TrustedGrader.execute_student_notebooks = False"


def test_notebooks_are_valid_have_no_outputs_and_valid_nbgrader_metadata(assignment, notebook):
    nbformat.validate(notebook)
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.outputs == [] and c.execution_count is None for c in code)
    CheckCellMetadata().preprocess(notebook, {})  # raises on missing points, duplicate ids, ...
    assert notebook.metadata.kernelspec.name == "python3"


def test_answer_cells_hold_a_solution_between_markers_and_test_cells_are_locked(notebook):
    plan = plan_from_notebook(notebook)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in plan.answers:
            assert "### BEGIN SOLUTION" in cell.source and "### END SOLUTION" in cell.source
        if grade_id in plan.scored:
            assert cell.metadata.nbgrader.locked and cell.metadata.nbgrader.grade


def test_schedule_answer_cells_ask_for_schedule_sch(notebook):
    schedule = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "schedule")
    assert schedule.source.startswith("def schedule(sch):")


def test_points_a_cell_shows_in_the_kernel_match_its_nbgrader_points(notebook):
    for cell in notebook.cells:
        nbgrader = cell.metadata.get("nbgrader", {})
        if nbgrader.get("grade"):
            shown = re.search(r"out_of=(\d+)", cell.source)
            assert shown and float(shown.group(1)) == nbgrader["points"], cell.source


def test_hidden_tests_only_call_package_code(notebook):
    for cell in notebook.cells:
        hidden = re.search(r"### BEGIN HIDDEN TESTS\n(.*?)### END HIDDEN TESTS", cell.source, re.S)
        if hidden:
            body = [line for line in hidden.group(1).splitlines() if line.strip()]
            assert all(line.startswith(("from autograder.", "question_points(")) for line in body), body


def test_config_loads_from_the_course_root_with_the_trusted_pipeline():
    config = load_course_config(COURSE)
    assert config.CourseDirectory.root == str(COURSE.resolve())
    assert config.Execute.kernel_name == "python3" and config.Execute.timeout > 0
    pipeline = config.Autograde.autograde_preprocessors
    assert pipeline.index(StartTrustedGrading) < pipeline.index(SaveTrustedGrades)
    assert "SaveAutoGrades" not in [p.__name__ for p in pipeline]
    assert "ClearHiddenTests" in [p.__name__ for p in config.GenerateFeedback.preprocessors]


def test_autograde_runs_no_student_code_unless_the_course_opts_in(tmp_path):
    assert config_text().count(EXECUTION_OFF) == 1
    default = load_course_config(COURSE).Autograde.autograde_preprocessors
    assert not [p for p in default if "Execute" in p.__name__]  # nbgrader's Execute or ours: none
    root = copy_course(COURSE, tmp_path / "course")
    (root / "nbgrader_config.py").write_text(config_text().replace(EXECUTION_OFF, EXECUTION_OFF.replace("False", "True")))
    opted_in = load_course_config(root).Autograde.autograde_preprocessors
    assert opted_in.index(StartTrustedGrading) < opted_in.index(ResilientExecute) < opted_in.index(SaveTrustedGrades)
    assert [p for p in opted_in if p is not ResilientExecute] == default


def config_text() -> str:
    return (COURSE / "nbgrader_config.py").read_text(encoding="utf-8")


def test_overrides_layer_over_the_course_settings():
    config = load_course_config(COURSE, cell_timeout=7, grader_settings={"timing_rounds": 3})
    assert config.Execute.timeout == 7
    assert config.TrustedGrader.settings["timing_rounds"] == 3


def test_syllabus_lists_the_assignment_notebooks():
    text = (COURSE / "syllabus.yaml").read_text(encoding="utf-8")
    for assignment in ("tiling", "gpu-tiling"):
        path = source_notebook(assignment).relative_to(REPO).as_posix()
        assert path in text, f"course/syllabus.yaml should list {path}"

