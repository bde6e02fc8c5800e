"""steady.py: a re-timed grade keeps its speed band unless the new measurement decides otherwise."""
from __future__ import annotations

import io
import math

import nbformat
import pytest

from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.course.retime import earlier_speeds
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples
from autograder.engine.report import Check, Result
from autograder.nbgrader_ext.credit import score_part
from autograder.nbgrader_ext.plan import METADATA_KEY
from autograder.nbgrader_ext.steady import Earlier, keep_band

from bundled_course import COURSE

WHERE = {"cpu": "znver4", "machine": "vm (AMD EPYC)"}


def timed(speed: float, median: float, interval, decided: bool, **where) -> Result:
    """A passed grading of tile-fused-conv with this speed credit and measurement."""
    return Result(problem="tile-fused-conv", target="cpu", status="passed", score=round(0.7 + speed, 4), correct=True,
                  credit={"correctness": 0.4, "structure": 0.3, "speed": speed}, yardstick_speedup=median,
                  yardstick_spread={"interval": list(interval), "decided": decided, "median": median},
                  checks=[Check("speed", speed > 0, f"{median:.2f}x the speed of the yardstick")], **{**WHERE, **where})


EARLIER = Earlier(speed=0.2, median=1.20, **WHERE)  # two thirds, 1.20x


def test_a_re_timing_that_straddles_an_edge_keeps_the_earlier_band_and_says_why():
    result = keep_band(timed(0.3, 1.26, (1.22, 1.29), decided=False), EARLIER)
    assert result.credit["speed"] == 0.2 and result.score == pytest.approx(0.9)
    assert score_part(result, "speed").fraction == pytest.approx(2 / 3, abs=1e-3)
    assert "kept 0.20 of the score for speed from the earlier grading (1.20x)" in result.retimed
    assert "interval 1.22-1.29x straddles a band edge: within noise" in result.retimed
    assert result.check("speed").message.startswith("timed again: kept") and result.retimed in result.messages


def test_a_re_timing_that_decides_another_band_moves_the_grade_and_says_why():
    result = keep_band(timed(0.3, 1.40, (1.36, 1.44), decided=True), EARLIER)
    assert result.credit["speed"] == 0.3 and result.score == pytest.approx(1.0)
    assert result.retimed.startswith("timed again: moved from 0.20") and "1.36-1.44x lies inside the new band" in result.retimed


def test_the_same_band_again_is_only_noted_and_another_machine_or_cpu_is_a_measurement_of_its_own():
    same = keep_band(timed(0.2, 1.19, (1.15, 1.24), decided=True), EARLIER)
    assert same.credit["speed"] == 0.2 and same.retimed == "timed again: the same band as before (0.20 of the score for speed)"
    for where in ({"cpu": "haswell"}, {"machine": "other (Intel)"}):
        other = keep_band(timed(0.3, 1.26, (1.22, 1.29), decided=False, **where), EARLIER)
        assert other.credit["speed"] == 0.3 and not other.retimed
    failed = Result(problem="tile-fused-conv", target="cpu", status="failed", correct=False, credit={"speed": 0.0})
    assert keep_band(failed, EARLIER) is failed and keep_band(timed(0.3, 1.3, (1.2, 1.4), False), None).credit["speed"] == 0.3


@pytest.mark.parametrize("field, value", [("speed", True), ("speed", math.nan), ("speed", 2.0), ("speed", "0.3"),
                                          ("median", -1.0), ("median", None), ("cpu", 4), ("machine", None)])
def test_an_earlier_record_that_is_not_a_plain_timed_grading_is_not_used(field, value):
    good = {"speed": 0.2, "median": 1.2, **WHERE}
    assert Earlier.from_dict(good) == EARLIER
    assert Earlier.from_dict({**good, field: value}) is None
    assert Earlier.from_result({"status": "failed", "credit": {"speed": 0.2}, "yardstick_speedup": 1.2, **WHERE}) is None
    assert Earlier.from_result({"status": "passed", "grader_fault": True, "credit": {"speed": 0.2}, "yardstick_speedup": 1.2, **WHERE}) is None
    assert Earlier.from_dict(["not", "a", "dict"]) is None


@pytest.mark.slow
@pytest.mark.alone  # its last step needs a timing the suite's own workers do not share a core with
def test_a_class_run_re_timing_the_same_submission_keeps_its_band_within_noise_and_says_so(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling")
    submit_samples(root, "tiling", only=["ada"])
    settings = {"timing_rounds": 5, "min_repeat_ms": 5.0, "student_timeout_s": 3.0}

    def run(**more):
        return grade_assignment(GradingOptions("tiling", course=root, workers=1, progress=io.StringIO(), force=True,
                                               grader_settings={**settings, **more}))

    first = run()
    (ada,) = first.rows
    assert ada.parts["speed"] == 3.0, ada  # the register-blocked sample: all the speed points
    # As if the first grading had landed a band lower (a schedule near an edge): its record says 2 of 3.
    graded = root / "autograded" / "ada" / "tiling" / "tiling.ipynb"
    notebook = nbformat.read(graded, as_version=4)
    for result in notebook.metadata[METADATA_KEY]["results"].values():
        result["credit"]["speed"] = 0.2
    nbformat.write(notebook, graded)
    earlier = earlier_speeds(*_course(root), [_submission(root, "ada")])
    assert [e["speed"] for e in earlier["ada"].values()] == [0.2]
    # Timed again with too few rounds for any interval at this confidence: undecided, so within noise.
    again = run(band_confidence=0.999999, max_timing_rounds=5)
    (ada,) = again.rows
    assert ada.parts["speed"] == 2.0, ada
    assert "graded again (--force), the same submission: timed again: kept 0.20" in again.retried["ada"]
    assert "too few rounds for an interval" in again.retried["ada"]
    html = (root / "feedback" / "ada" / "tiling" / "tiling.html").read_text(encoding="utf-8")
    assert "timed again: kept" in html
    # Timed again as usual: its interval lies inside the top band, so the grade moves, and says why.
    moved = run()
    (ada,) = moved.rows
    assert ada.parts["speed"] == 3.0 and "timed again: moved from 0.20" in moved.retried["ada"], moved.retried


def _course(root):
    from autograder.course.course_dir import course_directory, load_course_config

    return course_directory(load_course_config(root)), "tiling"


def _submission(root, student):
    from autograder.course.submissions import find_submissions

    coursedir, assignment = _course(root)
    return next(s for s in find_submissions(coursedir, assignment) if s.student == student)


@pytest.mark.slow
def test_an_earlier_speed_forged_in_the_submitted_notebook_is_never_the_one_kept(tmp_path):
    # The journal's tiling (no speed points), handed in with a record of its own claiming full
    # speed on this machine: normalising rebuilds the notebook from the source, and the trusted
    # grader writes its own record, so the next run's earlier speed is the grader's.
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling")
    submit_samples(root, "tiling", only=["ben"])
    path = root / "submitted" / "ben" / "tiling" / "tiling.ipynb"
    notebook = nbformat.read(path, as_version=4)
    forged = {"status": "passed", "credit": {"speed": 0.3}, "yardstick_speedup": 9.9, "cpu": "znver4", "machine": "x"}
    notebook.metadata[METADATA_KEY] = {"results": {"schedule": forged}}
    nbformat.write(notebook, path)
    report = grade_assignment(GradingOptions("tiling", course=root, workers=1, progress=io.StringIO(),
                                             grader_settings={"timing_rounds": 5, "min_repeat_ms": 5.0, "student_timeout_s": 3.0}))
    (ben,) = report.rows
    assert ben.parts["speed"] == 0.0, ben
    earlier = earlier_speeds(*_course(root), [_submission(root, "ben")])
    assert [(e["speed"], e["machine"] != "x", e["median"] < 1) for e in earlier["ben"].values()] == [(0.0, True, True)]


def test_an_earlier_grading_timed_in_one_placement_is_not_kept_against_one_timed_across_placements():
    """Its band was its placement's (engine/placement.py): no evidence of the code's speed, so the
    grading timed across placements stands, and says why."""
    unplaced = Earlier.from_result({"status": "passed", "credit": {"speed": 0.3}, "yardstick_speedup": 1.38,
                                    "yardstick_spread": {"median": 1.38, "decided": True, "interval": [1.37, 1.39]}, **WHERE})
    assert unplaced is not None and not unplaced.placed
    assert Earlier.from_dict(unplaced.to_dict()) == unplaced  # what the class run hands on keeps it
    result = keep_band(timed(0.2, 1.20, (1.09, 1.38), decided=False), unplaced)
    assert result.credit["speed"] == 0.2 and result.score == timed(0.2, 1.20, (1.09, 1.38), decided=False).score
    assert "timed every round in one placement in memory" in result.retimed
    placed = Earlier.from_result({"status": "passed", "credit": {"speed": 0.3}, "yardstick_speedup": 1.38,
                                  "yardstick_spread": {"placements": [{"kind": "stack", "step": s, "ratio": 1.38}
                                                                      for s in (3, 17)]}, **WHERE})
    assert placed.placed and keep_band(timed(0.2, 1.20, (1.09, 1.38), decided=False), placed).credit["speed"] == 0.3
