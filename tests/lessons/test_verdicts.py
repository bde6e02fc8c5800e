from autograder.engine.bench import Measurements
from autograder.lessons import figures, timing, verdicts


def _comparison(samples, baseline):
    return timing.Comparison(Measurements(samples), baseline)


def test_direction_and_biggest_step():
    steps = _comparison({"none": [1.0] * 5, "split": [1.02] * 5, "fuse": [3.0] * 5, "more": [3.1] * 5}, "none")
    assert verdicts.direction(steps.speedup("fuse")) == "slower"
    assert verdicts.direction(steps.speedup("split")) == "slower"
    name, ratio = verdicts.biggest_step(steps)
    assert name == "fuse" and abs(ratio - 1.02 / 3.0) < 1e-9


def test_tiling_verdicts_follow_the_measurement(lab):
    steps = _comparison({"no schedule": [1.0] * 5, "+ tile": [2.0] * 5}, "no schedule")
    slower = _comparison({"unscheduled": [1.0] * 5, "journal": [3.0] * 5, "journal + vectorised Add/ReLU": [1.5] * 5}, "unscheduled")
    text = str(verdicts.tiling(slower, steps, {}, lab.target))
    assert "the journal's schedule is slower than the unscheduled function: 0.33x" in text
    assert "contradicts the journal's conclusion" in text
    assert "'+ tile', 0.50x the speed of the step before it (slower)" in text
    assert "2.00x the journal's speed" in text
    faster = _comparison({"unscheduled": [1.0] * 5, "journal": [0.75] * 5}, "unscheduled")
    text = str(verdicts.tiling(faster, steps, {}, lab.target))
    assert "is faster than the unscheduled function: 1.33x" in text and "as the journal expects" in text


def test_roofline_verdicts_name_the_binding_roof():
    points = [figures.Point("low", 1.0, 9.0), figures.Point("far", 10.0, 5.0)]
    text = str(verdicts.roofline(points, 50.0, {"main memory": 10.0}))
    assert "'low': 1.0 FLOP/byte; the roofs allow 10.0 GFLOP/s with main memory (memory-bound); it reached 9.0 GFLOP/s, 90%" in text
    assert "'far': 10.0 FLOP/byte; the roofs allow 50.0 GFLOP/s with main memory (compute-bound)" in text
    assert "Below half of every roof here: 'far'" in text
