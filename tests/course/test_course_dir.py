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
from autograder.course.submissions import find_submissions, fingerprint, needs_grading, recorded_submissions

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
    for generated in ("release/tiling", "submitted/ada/tiling", "autograded/ada/tiling", "feedback/ada/tiling"):
        (source / generated).mkdir(parents=True)
    (source / "gradebook.db").write_text("")
    (source / "tiling-grades.csv").write_text("")
    copy = copy_course(source, tmp_path / "copy")
    names = {p.name for p in copy.iterdir()}
    assert {"nbgrader_config.py", "source", "samples"} <= names
    assert not names & {"release", "submitted", "autograded", "feedback", "gradebook.db", "tiling-grades.csv"}
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


def test_submissions_need_grading_until_graded_and_again_when_resubmitted(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    coursedir = course_directory(load_course_config(root))
    write_submission(root, "ada", "2026-01-01 10:00:00.000000 UTC")
    (submission,) = find_submissions(coursedir, "tiling")
    assert submission.student == "ada" and submission.notebooks == ("tiling",)
    assert needs_grading(coursedir, "tiling", submission)
    graded = root / "autograded" / "ada" / "tiling"
    shutil.copytree(submission.directory, graded)
    record_in_gradebook(coursedir, "ada", "2026-01-01 10:00:00.000000 UTC")
    assert not needs_grading(coursedir, "tiling", submission)
    write_submission(root, "ada", "2026-01-02 10:00:00.000000 UTC")
    assert needs_grading(coursedir, "tiling", submission)
    os.remove(graded / "tiling.ipynb")
    assert needs_grading(coursedir, "tiling", submission)


def test_a_graded_copy_whose_grades_never_reached_the_gradebook_is_graded_again(tmp_path):
    # autograde writes autograded/STUDENT/ASSIGNMENT (with the submission's timestamp.txt) before
    # the grades are merged: a merge or a feedback that failed after it must not leave it "graded".
    root = copy_course(COURSE, tmp_path / "course")
    coursedir = course_directory(load_course_config(root))
    write_submission(root, "ada", "2026-01-02 10:00:00.000000 UTC")
    (submission,) = find_submissions(coursedir, "tiling")
    shutil.copytree(submission.directory, root / "autograded" / "ada" / "tiling")
    assert needs_grading(coursedir, "tiling", submission)  # no gradebook at all
    assert not (root / "gradebook.db").exists()  # and asking did not create one
    record_in_gradebook(coursedir, "ada", "2026-01-01 10:00:00.000000 UTC")
    assert needs_grading(coursedir, "tiling", submission)  # the gradebook holds an earlier submission's grades
    record_in_gradebook(coursedir, "ada", "2026-01-02 10:00:00.000000 UTC")
    assert not needs_grading(coursedir, "tiling", submission)
    assert not needs_grading(coursedir, "tiling", submission, recorded_submissions(coursedir, "tiling"))
    assert needs_grading(coursedir, "tiling", submission, recorded={})


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
