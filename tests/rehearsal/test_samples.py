"""autograder/rehearsal/samples.py and course/samples/: sample submissions that fit their assignment."""
from __future__ import annotations

import shutil

import nbformat
import pytest

from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.samples import SampleError, build_submission, load_samples, submit
from autograder.rehearsal.scratch_course import copy_course
from autograder.nbgrader_ext.plan import plan_from_notebook

from bundled_course import COURSE, source_notebook

KINDS = {"passed", "failed", "error", "crashed", "timeout", "rejected", "needs-gpu"}


def test_every_sample_fits_its_assignment(assignment, notebook):
    plan = plan_from_notebook(notebook)
    samples = load_samples(COURSE, assignment)
    assert len(samples) >= 2
    for sample in samples:
        assert sample.about and sample.expected_status in KINDS
        assert set(sample.answers) <= set(plan.answers), sample.student
        assert set(sample.expected) == set(plan.scored), sample.student
        compile(sample.answers["schedule"], f"{sample.student}.yaml", "exec")
        built = build_submission(notebook, sample)
        cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in built.cells}
        assert cells["schedule"].source == sample.answers["schedule"].rstrip("\n")


def test_the_tiling_samples_cover_what_the_course_promises():
    statuses = {s.student: s.expected_status for s in load_samples(COURSE, "tiling")}
    assert {"passed", "failed", "error", "crashed", "timeout"} <= set(statuses.values())
    tampering = [s for s in load_samples(COURSE, "tiling") if s.tampered or "autograder.check" in s.answers["schedule"]]
    assert len(tampering) >= 2


def test_expected_points_accept_ranges_and_pending():
    sample = next(s for s in load_samples(COURSE, "gpu-tiling") if s.expected_status == "needs-gpu")
    assert sample.expects("speed", None) and not sample.expects("speed", 0.0) and sample.expects("correctness", 4.0)
    ada = next(s for s in load_samples(COURSE, "tiling") if s.student == "ada")
    assert ada.expects("speed", 2.0) and not ada.expects("speed", 0.0)


def test_a_sample_naming_a_cell_the_assignment_lacks_is_refused(notebook, tmp_path):
    sample = load_samples(COURSE, "tiling")[0]
    broken = type(sample)(sample.student, sample.assignment, sample.about, {"nope": "1"})
    with pytest.raises(SampleError, match="'nope' is not an answer cell"):
        build_submission(notebook, broken)
    tampering = type(sample)(sample.student, sample.assignment, sample.about, {}, tampered={"schedule": "1"})
    with pytest.raises(SampleError, match="'schedule' is not a locked cell"):
        build_submission(notebook, tampering)


def test_malformed_sample_files_are_refused(tmp_path):
    (tmp_path / "samples" / "tiling").mkdir(parents=True)
    (tmp_path / "samples" / "tiling" / "bad.yaml").write_text("answers: [1, 2]\n")
    with pytest.raises(SampleError, match="bad.yaml"):
        load_samples(tmp_path, "tiling")


def test_submit_writes_a_collected_submission_with_a_timestamp(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release = root / "release" / "tiling"
    release.mkdir(parents=True)
    shutil.copy(source_notebook("tiling"), release / "tiling.ipynb")  # stands in for generate_assignment here
    coursedir = course_directory(load_course_config(root))
    sample = load_samples(root, "tiling")[0]
    target = submit(coursedir, sample, "someone")
    assert target == root / "submitted" / "someone" / "tiling"
    assert coursedir.get_existing_timestamp(str(target)) is not None
    submitted = nbformat.read(target / "tiling.ipynb", as_version=4)
    assert any(c.source == sample.answers["schedule"].rstrip("\n") for c in submitted.cells)
