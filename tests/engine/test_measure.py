"""measure.py: the confined runner runs real compiled code; what it sends back is checked as data."""
from __future__ import annotations

import math
import os
import re
import statistics

import numpy as np
import pytest

from autograder.engine.config import GraderConfig
from autograder.engine.measure import (
    LocalRunner,
    RunnerFailed,
    check_timings,
    read_result,
    result_bytes,
)
from autograder.problems import get_problem

pytestmark = pytest.mark.slow

PROBLEM = get_problem("tile-fused-conv")
CONFIG = GraderConfig(timing_rounds=3, max_timing_rounds=6, baseline_rounds=3, min_repeat_ms=2.0, seed=7)


@pytest.fixture(scope="module")
def unscheduled_library(tmp_path_factory):
    import tvm

    path = tmp_path_factory.mktemp("lib") / "unscheduled.so"
    func = PROBLEM.workload()
    tvm.compile(tvm.IRModule({"main": func}), target=tvm.target.Target.from_device(tvm.cpu())).export_library(str(path))
    return path.read_bytes()


def runner_with(baseline: bytes, candidate: bytes, problem=PROBLEM, config=CONFIG) -> LocalRunner:
    runner = LocalRunner(problem, config)
    for name, data in (("baseline.so", baseline), ("yardstick.so", baseline), ("candidate.so", candidate)):
        with open(runner.library_path(name), "wb") as handle:
            handle.write(data)
        os.chmod(runner.library_path(name), 0o644)
    return runner


def test_the_runner_runs_the_library_and_times_it_beside_the_baseline(unscheduled_library):
    from autograder.problems.workload import random_inputs, reference

    runner = runner_with(unscheduled_library, unscheduled_library)
    try:
        output, x, w, b = runner.run(60)
        inputs = random_inputs(PROBLEM.shape, CONFIG.seed)
        assert np.array_equal(x, inputs["x"]) and np.array_equal(w, inputs["w"]) and np.array_equal(b, inputs["b"])
        expected = reference(inputs["x"], inputs["w"], inputs["b"], PROBLEM.shape.padding)
        assert np.allclose(output, expected, atol=1e-3)
        samples = runner.time(60)
        assert set(samples) == {"baseline", "yardstick", "candidate"}
        rounds = len(samples["candidate"])
        assert CONFIG.timing_rounds <= rounds <= CONFIG.max_timing_rounds and len(samples["yardstick"]) == rounds
        assert len(samples["baseline"]) == min(rounds, CONFIG.baseline_rounds)  # the first rounds only
        assert all(isinstance(v, float) and v > 0 for values in samples.values() for v in values)
    finally:
        runner.close()


def test_a_library_that_cannot_be_loaded_is_the_submissions_failure_not_the_graders(unscheduled_library):
    runner = runner_with(unscheduled_library, b"\x7fELF not really a shared object")
    try:
        with pytest.raises(RunnerFailed) as caught:
            runner.run(60)
        assert caught.value.status == "crashed"
        assert "your compiled schedule failed when asked to run" in str(caught.value)
    finally:
        runner.close()


def test_a_baseline_the_runner_cannot_run_is_the_graders_failure(unscheduled_library):
    """Before the candidate is loaded, nothing submitted is involved: a failure is infrastructure."""
    from autograder.engine.measure import InfrastructureError

    runner = runner_with(b"not a library", unscheduled_library)
    try:
        with pytest.raises(InfrastructureError, match="could not run the baseline and the yardstick .not your code."):
            runner.run(60)
    finally:
        runner.close()


def test_the_runner_stops_once_the_band_is_decided_and_goes_on_where_it_is_not(unscheduled_library):
    """The same library as yardstick and candidate runs at 1.0x the yardstick: far from an edge at
    5x, two gradings each stop at the least rounds with the same credit; at a confidence no 14
    rounds can reach, nothing is decided and every round is taken. (Whether an edge put at 1.0x
    falls inside the interval is the machine's business: fastest-slice samples of one library
    twice can differ by a steady fraction of a percent, and bench's own tests cover an interval that
    straddles.)"""
    import dataclasses

    from autograder.engine.bench import Measurements
    from autograder.engine.measure import band_rule
    from autograder.problems.base import SpeedBand

    config = dataclasses.replace(CONFIG, timing_rounds=10, max_timing_rounds=14, min_repeat_ms=5.0)
    far = dataclasses.replace(PROBLEM, speed_bands=(SpeedBand(5.0, 1.0),))
    undecidable = dataclasses.replace(config, band_confidence=0.999999)
    rounds = {}
    for label, problem, settings in (("far, first", far, config), ("far, again", far, config), ("undecided", far, undecidable)):
        runner = runner_with(unscheduled_library, unscheduled_library, problem, settings)
        try:
            runner.run(60)
            samples = runner.time(60)
        finally:
            runner.close()
        ratios = Measurements(samples).ratios("yardstick", "candidate")
        decision = band_rule(problem, settings).decide(ratios)
        rounds[label] = (len(ratios), decision.decided, problem.speed_credit(statistics.median(ratios)))
    assert rounds["far, first"] == rounds["far, again"] == (10, True, 0.0), rounds
    assert rounds["undecided"] == (14, False, 0.0), rounds


def test_the_runners_directory_is_removed_afterwards(unscheduled_library):
    runner = runner_with(unscheduled_library, unscheduled_library)
    directory = runner.child.workdir
    runner.run(60)
    runner.close()
    assert not os.path.exists(directory)


@pytest.mark.parametrize(
    "message",
    [
        None,
        {},
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3},
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3, "candidate": [0.001] * 2},
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3, "candidate": [0.0, 0.001, 0.001]},
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3, "candidate": [1e-3, 1e-3, 1e9]},
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3, "candidate": [1, 1, 1]},  # integers are not measurements
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 3, "candidate": "fast"},
        {"baseline": [0.001] * 3, "candidate": [0.001] * 3},
        {"baseline": [0.001] * 2, "yardstick": [0.001] * 3, "candidate": [0.001] * 3},  # the first 3 rounds time it
        {"baseline": [0.001] * 4, "yardstick": [0.001] * 4, "candidate": [0.001] * 4},  # only the first 3
        {"baseline": [0.001] * 3, "yardstick": [0.001] * 4, "candidate": [0.001] * 5},
    ],
)
def test_timings_are_accepted_only_as_plausible_measurements(message):
    with pytest.raises(RunnerFailed, match="not plausible") as refused:
        check_timings(message, CONFIG)
    # The runner runs compiled code of the submission's: its garbage is the submission's verdict, naming the field.
    assert refused.value.status == "error" and re.search(r"field '(baseline|yardstick|candidate)'", str(refused.value))


def test_plausible_timings_pass_through():
    samples = {"baseline": [1e-3, 1.1e-3, 0.9e-3], "yardstick": [7e-4, 7e-4, 7e-4], "candidate": [5e-4, 5e-4, 6e-4]}
    assert check_timings(samples, CONFIG) == samples
    longer = {"baseline": [1e-3] * 3, "yardstick": [7e-4] * 5, "candidate": [5e-4] * 5}  # the baseline in rounds 1-3
    assert check_timings(longer, CONFIG) == longer


def test_the_peak_kernel_is_one_sample():
    samples = {"baseline": [1e-3] * 3, "yardstick": [7e-4] * 3, "candidate": [5e-4] * 3}
    assert check_timings(samples | {"peak": [2e-4]}, CONFIG, peak=True)["peak"] == [2e-4]
    for peak in (None, [2e-4, 2e-4], []):
        with pytest.raises(RunnerFailed, match="not plausible"):
            check_timings(samples | {"peak": peak}, CONFIG, peak=True)


def test_a_result_file_of_the_wrong_size_is_refused(tmp_path):
    path = tmp_path / "result.f32"
    path.write_bytes(b"\0" * (result_bytes(PROBLEM.shape) - 4))
    with pytest.raises(RunnerFailed, match="bytes of results"):
        read_result(str(path), PROBLEM.shape)
    path.write_bytes(np.arange(result_bytes(PROBLEM.shape) // 4, dtype=np.float32).tobytes())
    output, x, w, b = read_result(str(path), PROBLEM.shape)
    assert output.shape == PROBLEM.shape.output_shape and b.shape == PROBLEM.shape.bias_shape
    assert output.flat[0] == 0 and x.flat[0] == math.prod(PROBLEM.shape.output_shape)
