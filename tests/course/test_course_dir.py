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

from autograder.course.course_dir import CourseError, course_directory, find_course_root, load_course_config
from autograder.course.samples import load_samples
from autograder.course.scratch_course import copy_course, release_leaks
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
