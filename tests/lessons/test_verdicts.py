from autograder.engine.bench import Measurements
from autograder.lessons import figures, roofline, timing, verdicts


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


def _roofs(peak, bandwidths, peak_range=None, ranges=None):
    return roofline.Roofs(peak, peak_range or (peak, peak), bandwidths,
                          ranges or {label: (b, b) for label, b in bandwidths.items()}, "FMA peak", 5)


def test_roofline_verdicts_name_the_binding_roof():
    points = [figures.Point("low", 1.0, 9.0), figures.Point("far", 10.0, 5.0)]
    text = str(verdicts.roofline(points, _roofs(50.0, {"main memory": 10.0})))
    assert "'low': 1.0 FLOP/byte; the roofs allow 10.0 GFLOP/s with main memory (memory-bound); it reached 9.0 GFLOP/s, 90%" in text
    assert "'far': 10.0 FLOP/byte; the roofs allow 50.0 GFLOP/s with main memory (compute-bound)" in text
    assert "Below half of every roof here: 'far'" in text
    assert "best of 5 interleaved rounds (FMA peak: 50.0 to 50.0 GFLOP/s" in text


def test_below_half_means_below_half_of_every_roof():
    """15.6 GFLOP/s against a 24.2 GFLOP/s memory roof is 64% of it: not 'below half of every roof'."""
    points = [figures.Point("unscheduled", 1.0, 15.6)]
    text = str(verdicts.roofline(points, _roofs(100.0, {"main memory": 24.2, "streamed": 60.0})))
    assert "26% of the higher roof and 64% of the lower" in text
    assert "Below half of every roof" not in text and "No build here is below half of every roof" in text


def test_a_verdict_within_the_spread_says_so():
    """Bandwidth that moved between 10 and 25 GB/s must not decide memory- against compute-bound."""
    points = [figures.Point("near", 2.0, 20.0)]
    roofs = _roofs(40.0, {"main memory": 24.7}, ranges={"main memory": (10.0, 24.7)})
    assert "at the ridge: memory- or compute-bound within this run's spread" in str(verdicts.roofline(points, roofs))
