"""autograder/course/course_dir.py, submissions.py and scratch_course.py: finding and copying a course."""
from __future__ import annotations

import os
import shutil
import warnings

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import parse_utc
from sqlalchemy.exc import SAWarning

from autograder.course.course_dir import (
    CourseError, course_directory, find_course_root, load_course_config, require_trusted_steps,
)
from autograder.rehearsal.samples import load_samples
from autograder.rehearsal.scratch_course import copy_course, release_leaks
from autograder.nbgrader_ext import trusted_steps
from autograder.course.submissions import (
    GRADED_RECORD, Recorded, RunAbilities, find_submissions, fingerprint, graded_directory, grading_decision, needs_grading,
    record_graded, recorded_submissions, submission_digest,
)

from .conftest import COURSE, REPO, source_notebook


def test_the_course_root_is_found_from_the_repository_or_given(monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    assert find_course_root() == COURSE.resolve()
    assert find_course_root(COURSE) == COURSE.resolve()
    with pytest.raises(CourseError, match="no nbgrader course root"):
        find_course_root(tmp_path)


def test_a_broken_config_file_is_reported(tmp_path):
    (tmp_path / "nbgrader_config.py").write_text("c = get_config()\nraise RuntimeError('typo')\n")
    with pytest.raises(CourseError, match="typo"):
        load_course_config(tmp_path)


# ---------------------------------------------------------------- the trusted steps in the course's configuration

SHIPPED_CONFIG = (COURSE / "nbgrader_config.py").read_text(encoding="utf-8")


def scratch_config(tmp_path, text: str):
    (tmp_path / "nbgrader_config.py").write_text(text, encoding="utf-8")
    return load_course_config(tmp_path)


def refusal(tmp_path, text: str) -> str:
    with pytest.raises(CourseError) as refused:
        require_trusted_steps(tmp_path, scratch_config(tmp_path, text))
    return str(refused.value)


def lines_it_says_to_add(message: str) -> list[str]:
    return [line.strip() for line in message.split("Add these lines", 1)[1].splitlines()[1:]]


def test_the_shipped_course_puts_every_trusted_step_in_place_with_the_very_lines_the_check_asks_for():
    require_trusted_steps(COURSE, load_course_config(COURSE))
    for line in [trusted_steps.IMPORT_LINE, *(required.line for required in trusted_steps.REQUIRED)]:
        assert SHIPPED_CONFIG.count(line) == 1, line  # one place: the course takes its steps from the package


@pytest.mark.parametrize("required", trusted_steps.REQUIRED, ids=lambda r: r.line.split(" = ")[0])
def test_a_course_without_one_trusted_step_is_refused_with_the_line_to_add(tmp_path, required):
    message = refusal(tmp_path, SHIPPED_CONFIG.replace(required.line, ""))
    assert "not grading" in message.lower() and "run in a Jupyter kernel" in message
    assert lines_it_says_to_add(message) == [trusted_steps.IMPORT_LINE, required.line]


def test_a_course_with_nbgraders_own_configuration_is_refused_and_the_lines_it_names_put_it_right(tmp_path):
    stock = "c = get_config()\nc.CourseDirectory.course_id = 'stock'\n"
    message = refusal(tmp_path, stock)
    for step in ("NotebookExporter", "NormaliseSubmission must come first", "Execute", "SaveAutoGrades scores them from the kernel's outputs",
                 "SanitizeFeedback come last"):
        assert step in message, step
    added = lines_it_says_to_add(message)
    assert added == [trusted_steps.IMPORT_LINE, *(required.line for required in trusted_steps.REQUIRED
                                                   if required.line in "\n".join(added))]
    require_trusted_steps(tmp_path, scratch_config(tmp_path, stock + "\n".join(added) + "\n"))


@pytest.mark.parametrize("undoing, says", [
    # the steps in place, then undone by a later line, a parent's section or a switch
    ("c.Autograde.autograde_preprocessors = [*c.Autograde.autograde_preprocessors, 'nbgrader.preprocessors.Execute']",
     "Execute would run the student's notebook in a Jupyter kernel"),
    ("from autograder.nbgrader_ext.preprocessors import ResilientExecute\n"
     "c.Autograde.sanitize_preprocessors = [*c.Autograde.sanitize_preprocessors, ResilientExecute]",
     "ResilientExecute would run the student's notebook in a Jupyter kernel as the grading user (c.TrustedGrader.execute_student_notebooks is False)"),
    ("c.StartTrustedGrading.enabled = False", "StartTrustedGrading is switched off"),
    ("c.NormaliseSubmission.enabled = False", "NormaliseSubmission is switched off"),
    ("del c.Autograde['exporter_class']\nc.BaseConverter.exporter_class = 'nbconvert.exporters.NotebookExporter'",
     "autograde reads submissions with NotebookExporter"),
    ("c.Autograde.sanitize_preprocessors = c.Autograde.sanitize_preprocessors[1:]", "NormaliseSubmission must come first"),
    ("c.FeedbackExporter.template_name = 'classic'", "the feedback template is 'classic'"),
    ("c.HTMLExporter.sanitize_html = False", "sanitize_html is not on"),
    ("c.Autograde.autograde_preprocessors = ['no.such.Step']", "the step 'no.such.Step' cannot be imported"),
])
def test_trusted_steps_undone_after_they_are_set_are_refused(tmp_path, undoing, says):
    assert says in refusal(tmp_path, SHIPPED_CONFIG + "\n" + undoing + "\n")


def test_a_course_that_opts_in_to_running_notebooks_runs_them_with_the_courses_executor_only(tmp_path):
    opted_in = SHIPPED_CONFIG.replace("c.TrustedGrader.execute_student_notebooks = False",
                                      "c.TrustedGrader.execute_student_notebooks = True")
    require_trusted_steps(tmp_path, scratch_config(tmp_path, opted_in))
    stock_execute = opted_in + "\nfrom nbgrader.preprocessors import Execute\nc.Autograde.autograde_preprocessors = " \
                              "[Execute if s.__name__ == 'ResilientExecute' else s for s in c.Autograde.autograde_preprocessors]\n"
    assert "Execute would run the student's notebook" in refusal(tmp_path, stock_execute)


def test_a_copy_leaves_generated_output_behind(tmp_path):
    source = copy_course(COURSE, tmp_path / "original")
    for generated in ("release/tiling", "submitted/ada/tiling", "autograded/ada/tiling", "feedback/ada/tiling", "downloaded/tiling/archive"):
        (source / generated).mkdir(parents=True)
    (source / "gradebook.db").write_text("")
    (source / "tiling-grades.csv").write_text("")
    copy = copy_course(source, tmp_path / "copy")
    names = {p.name for p in copy.iterdir()}
    assert {"nbgrader_config.py", "source", "samples"} <= names
    assert not names & {"release", "submitted", "autograded", "feedback", "downloaded", "gradebook.db", "tiling-grades.csv"}
    assert load_course_config(copy).CourseDirectory.root == str(copy)


def test_leaked_solutions_are_found(tmp_path):
    shutil.copy(source_notebook("tiling"), tmp_path / "tiling.ipynb")  # a "release" that is the source
    assert any("BEGIN SOLUTION" in leak for leak in release_leaks(tmp_path))
    assert any("BEGIN HIDDEN TESTS" in leak for leak in release_leaks(tmp_path))
    assert any("answer key" in leak for leak in release_leaks(tmp_path))


def write_submission(root, student, when):
    directory = root / "submitted" / student / "tiling"
    directory.mkdir(parents=True, exist_ok=True)
    nbformat.write(nbformat.read(source_notebook("tiling"), as_version=4), directory / "tiling.ipynb")
    (directory / "timestamp.txt").write_text(when)
    return directory


def record_in_gradebook(coursedir, student, when):
    """What merging a graded submission leaves in the course's gradebook (its timestamp)."""
    with warnings.catch_warnings(), Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        warnings.simplefilter("ignore", SAWarning)  # nbgrader's own add_submission trips them
        gradebook.update_or_create_assignment("tiling")
        gradebook.update_or_create_student(student)
        gradebook.update_or_create_submission("tiling", student, timestamp=parse_utc(when))


def graded_as_the_run_leaves_it(coursedir, submission, when):
    """What a finished grading leaves: the graded copy, what was graded recorded beside it, the gradebook's row."""
    graded = graded_directory(coursedir, "tiling", submission.student)
    shutil.copytree(submission.directory, graded, dirs_exist_ok=True)
    record_graded(graded, submission_digest(submission.directory))
    record_in_gradebook(coursedir, submission.student, when)
    return graded


def test_a_submission_is_graded_until_graded_and_again_when_its_content_changes(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    coursedir = course_directory(load_course_config(root))
    write_submission(root, "ada", "2026-01-01 10:00:00.000000 UTC")
    (submission,) = find_submissions(coursedir, "tiling")
    assert submission.student == "ada" and submission.notebooks == ("tiling",)
    assert grading_decision(coursedir, "tiling", submission).reason == "new"
    graded = graded_as_the_run_leaves_it(coursedir, submission, "2026-01-01 10:00:00.000000 UTC")
    decision = grading_decision(coursedir, "tiling", submission)
    assert not decision.grade and decision.reason == "unchanged" and "same content" in decision.detail
    assert grading_decision(coursedir, "tiling", submission, force=True).reason == "forced"

    # edited in place: the same timestamp.txt, the file's time set back; only its content says so
    notebook = submission.directory / "tiling.ipynb"
    stat = notebook.stat()
    notebook.write_text(notebook.read_text().replace("\n", " \n", 1))
    os.utime(notebook, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    decision = grading_decision(coursedir, "tiling", submission)
    assert decision.grade and decision.reason == "changed" and "tiling.ipynb edited" in decision.detail
    record_graded(graded, submission_digest(submission.directory))
    assert not needs_grading(coursedir, "tiling", submission)

    write_submission(root, "ada", "2026-01-02 10:00:00.000000 UTC")  # resubmitted: a new timestamp.txt
    assert "timestamp.txt edited" in grading_decision(coursedir, "tiling", submission).detail
    record_graded(graded, submission_digest(submission.directory))
    (graded / "tiling.ipynb").unlink()
    assert grading_decision(coursedir, "tiling", submission).reason == "incomplete"


def test_a_graded_copy_whose_grading_did_not_finish_is_graded_again(tmp_path):
    # autograde writes autograded/STUDENT/ASSIGNMENT before the grades are merged and the feedback
    # written: without the record a finished grading leaves, it is not "graded".
    root = copy_course(COURSE, tmp_path / "course")
    coursedir = course_directory(load_course_config(root))
    write_submission(root, "ada", "2026-01-02 10:00:00.000000 UTC")
    (submission,) = find_submissions(coursedir, "tiling")
    graded = root / "autograded" / "ada" / "tiling"
    shutil.copytree(submission.directory, graded)
    assert grading_decision(coursedir, "tiling", submission).reason == "no-record"
    record_graded(graded, submission_digest(submission.directory))
    assert grading_decision(coursedir, "tiling", submission).reason == "not-recorded"  # no gradebook at all
    assert not (root / "gradebook.db").exists()  # and asking did not create one
    record_in_gradebook(coursedir, "ada", "2026-01-01 10:00:00.000000 UTC")
    assert not needs_grading(coursedir, "tiling", submission)
    assert not needs_grading(coursedir, "tiling", submission, recorded_submissions(coursedir, "tiling"))
    assert needs_grading(coursedir, "tiling", submission, recorded={})
    (graded / GRADED_RECORD).write_text("{not json")
    assert grading_decision(coursedir, "tiling", submission).reason == "no-record"


def test_pending_points_are_graded_by_the_next_run_that_can_score_them(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    coursedir = course_directory(load_course_config(root))
    write_submission(root, "ada", "2026-01-02 10:00:00.000000 UTC")
    (submission,) = find_submissions(coursedir, "tiling")
    graded = graded_as_the_run_leaves_it(coursedir, submission, "2026-01-02 10:00:00.000000 UTC")
    pending = {"ada": Recorded(None, ("correctness", "speed"))}

    def trusted_record(**result):
        notebook = nbformat.read(graded / "tiling.ipynb", as_version=4)
        notebook.metadata["tvm_course"] = {"results": {"schedule": {"problem": "gpu-fused-conv", **result}}}
        nbformat.write(notebook, graded / "tiling.ipynb")

    trusted_record(status="needs-gpu")
    without = grading_decision(coursedir, "tiling", submission, pending)
    assert not without.grade and without.reason == "pending-gpu" and "--rpc" in without.detail
    gpu = RunAbilities(gpu="RPC device 'h100' via gpu-host:9190")
    with_gpu = grading_decision(coursedir, "tiling", submission, pending, gpu)
    assert with_gpu.grade and with_gpu.reason == "pending-gpu" and "RPC device 'h100'" in with_gpu.detail
    trusted_record(status="error", grader_fault=True)
    assert grading_decision(coursedir, "tiling", submission, pending).reason == "grader-fault"  # any run retries it
    trusted_record(status="passed")  # pending for another reason (a cell left for manual grading)
    assert grading_decision(coursedir, "tiling", submission, pending, gpu).reason == "pending-manual"


def test_fingerprints_change_with_any_file(tmp_path):
    directory = write_submission(copy_course(COURSE, tmp_path / "course"), "ada", "2026-01-01 10:00:00.000000 UTC")
    before = fingerprint(directory)
    (directory / "timestamp.txt").write_text("2026-01-01 10:00:00.000001 UTC")
    assert fingerprint(directory) != before and set(fingerprint(directory)) == set(before)


def test_sample_mismatches_name_the_cell_and_the_status():
    ben = next(s for s in load_samples(COURSE, "tiling") if s.student == "ben")
    right = {"correctness": 4.0, "fusion": 3.0, "speed": 0.0, "tile-arithmetic-marks": 0.0}
    assert ben.mismatches(right, "passed") == []
    assert ben.mismatches(dict(right, speed=1.0), "failed") == ["speed got 1.0, expected 0.0", "status failed, expected passed"]
