"""A grading that fails after autograde (in feedback, or recording the grades) is graded again.

autograde writes autograded/STUDENT/ASSIGNMENT, with the submission's timestamp.txt, before
feedback runs and before the grades reach the course's gradebook. If the run stopped there, the
next run saw a graded copy as new as the submission and skipped it: the gradebook kept the
previous submission's score (or none) for good. Real nbgrader, a real worker and gradebook, one
student whose schedule fails fast (the `dev` sample), resubmitting between runs.
"""
from __future__ import annotations

import dataclasses
import io

import pytest

from autograder.course import grading_run
from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.rehearsal.samples import load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment

from .conftest import COURSE

pytestmark = pytest.mark.slow

SETTINGS = {"timing_rounds": 3, "min_repeat_ms": 5.0, "student_timeout_s": 3.0}
# dev's answers, on the names of dev's own variant, with TILE_BYTES wrong
ONE_WRONG = ("TILES_PER_CHANNEL = (HEIGHT // TILE_ROWS) * (WIDTH // TILE_COLS)\nTILE_BYTES = 1\n"
             "WHOLE_BYTES = OUT_CHANNELS * HEIGHT * WIDTH * 4\nHALO_PIXELS = (TILE_ROWS + 2) * (TILE_COLS + 2)")
# A real configuration whose feedback step fails for one student (as a broken template, a full
# disk or a crashing preprocessor would).
BREAK_FEEDBACK = '''

from nbgrader.preprocessors import NbGraderPreprocessor


class FeedbackBreaksForDev(NbGraderPreprocessor):
    def preprocess(self, nb, resources):
        if resources["nbgrader"]["student"] == "dev":
            raise RuntimeError("the feedback of dev broke")
        return nb, resources


c.GenerateFeedback.preprocessors = [FeedbackBreaksForDev, *c.GenerateFeedback.preprocessors]
'''


def grade(root):
    report = grade_assignment(
        GradingOptions("tiling", course=root, workers=1, cell_timeout=30, grader_settings=dict(SETTINGS), progress=io.StringIO())
    )
    return report, {row.student: row for row in report.rows}


def test_a_failure_after_autograde_leaves_the_right_grades_and_the_next_run_grades_again(tmp_path, monkeypatch):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling")
    coursedir = course_directory(load_course_config(root))
    dev = next(s for s in load_samples(root, "tiling") if s.student == "dev")
    graded = root / "autograded" / "dev" / "tiling"
    feedback = root / "feedback" / "dev" / "tiling" / "tiling.html"
    config = root / "nbgrader_config.py"
    plain_config = config.read_text(encoding="utf-8")

    submit(coursedir, dev)
    report, rows = grade(root)
    assert report.failures == {} and rows["dev"].parts["tile-arithmetic-marks"] == 4.0

    # Resubmitted with one answer wrong; this time the feedback fails.
    submit(coursedir, dataclasses.replace(dev, answers=dict(dev.answers, **{"tile-arithmetic": ONE_WRONG})))
    config.write_text(plain_config + BREAK_FEEDBACK, encoding="utf-8")
    report, rows = grade(root)
    assert report.graded == ["dev"] and "nbgrader feedback failed" in report.failures["dev"]
    # the cause from nbgrader's log, where the CSV shows it, not its "Please see the above traceback"
    assert report.failures["dev"].splitlines()[0] == "nbgrader feedback failed: RuntimeError: the feedback of dev broke"
    assert rows["dev"].note == "nbgrader feedback failed: RuntimeError: the feedback of dev broke"
    assert rows["dev"].parts["tile-arithmetic-marks"] == 3.0  # the new submission's grades, recorded before feedback
    assert not graded.exists() and not feedback.exists()

    config.write_text(plain_config, encoding="utf-8")
    report, rows = grade(root)
    assert report.graded == ["dev"] and report.failures == {}  # graded again, not skipped as unchanged
    assert rows["dev"].parts["tile-arithmetic-marks"] == 3.0 and feedback.exists()

    # Resubmitted with every answer right; this time recording the grades fails.
    submit(coursedir, dev)

    def broken_merge(*args, **kwargs):
        raise OSError("database is locked")

    with monkeypatch.context() as patch:
        patch.setattr(grading_run, "merge_submission", broken_merge)
        report, rows = grade(root)
    assert "could not record the grades" in report.failures["dev"]
    assert rows["dev"].parts["tile-arithmetic-marks"] == 3.0  # the gradebook still holds the earlier submission
    assert not graded.exists() and not feedback.exists()

    report, rows = grade(root)
    assert report.graded == ["dev"] and report.failures == {}
    assert rows["dev"].parts["tile-arithmetic-marks"] == 4.0 and feedback.exists()
    report, _ = grade(root)
    assert report.graded == [] and report.skipped == ["dev"]  # and now it is graded and unchanged
