"""problems/workload.py: the Relax build and the numpy reference."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.problems import get_problem
from autograder.problems.workload import ConvShape, fused_primfunc, random_inputs, reference


def test_fusion_yields_the_four_blocks_the_journal_schedules():
    from autograder.engine.checks import blocks

    names = [b.name_hint for b in blocks(fused_primfunc())]
    assert names == ["root", "pad_temp", "conv2d_nchw", "T_add", "compute"]


def test_shapes_follow_the_padding():
    shape = ConvShape(height=10, width=12, kernel=3, padding=1)
    assert shape.output_shape == (1, 16, 10, 12)
    assert ConvShape(height=10, width=10, padding=0).output_shape == (1, 16, 8, 8)


def test_reference_agrees_with_a_direct_loop():
    shape = ConvShape(in_channels=2, height=5, width=4, out_channels=3)
    data = random_inputs(shape, seed=3)
    x, w, b = data["x"].astype(np.float64), data["w"].astype(np.float64), data["b"].astype(np.float64)
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    expected = np.zeros(shape.output_shape)
    for o in range(3):
        for i in range(5):
            for j in range(4):
                expected[0, o, i, j] = max(0.0, (padded[0, :, i : i + 3, j : j + 3] * w[o]).sum() + b[0, o, 0, 0])
    np.testing.assert_allclose(reference(data["x"], data["w"], data["b"], 1), expected, rtol=1e-12)


def test_random_inputs_are_seeded():
    a, b, c = (random_inputs(ConvShape(), seed) for seed in (1, 1, 2))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["x"], c["x"])
    assert a["x"].dtype == np.float32


def test_the_unscheduled_tvm_function_matches_the_reference():
    import tvm

    shape = ConvShape(height=16, width=16)
    exe = tvm.compile(tvm.IRModule({"main": fused_primfunc(shape)}), target="llvm")
    data = random_inputs(shape, seed=7)
    dev = tvm.cpu()
    out = tvm.runtime.empty(shape.output_shape, "float32", dev)
    exe["main"](*(tvm.runtime.tensor(data[k], dev) for k in ("x", "w", "b")), out)
    np.testing.assert_allclose(out.numpy(), reference(data["x"], data["w"], data["b"], 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("name", ["tile-fused-conv", "gpu-fused-conv"])
def test_problem_weights_add_up_and_bands_rise(name):
    from autograder.problems import get_problem

    problem = get_problem(name)
    w = problem.weights
    assert w.correctness + w.structure + w.speed == pytest.approx(1.0)
    speeds = [b.min_speedup for b in problem.speed_bands]
    credits = [b.credit for b in problem.speed_bands]
    assert speeds == sorted(speeds) and credits == sorted(credits) and credits[-1] == 1.0
    assert problem.speed_credit(None) == 0.0
    assert problem.speed_credit(0.5) == 0.0
    assert problem.speed_credit(speeds[0]) == credits[0]
    assert problem.speed_credit(100.0) == 1.0
    assert "calibrat" in problem.calibration.lower() or "measured" in problem.calibration.lower()


def test_unknown_problem_names_the_known_ones():
    from autograder.problems import UnknownProblem, get_problem

    with pytest.raises(UnknownProblem) as info:
        get_problem("tile-fused-con")
    assert "tile-fused-conv" in str(info.value)


# CPUs of the calibration whose vectors hold 16 float32 lanes (AVX-512); the others hold 8 (AVX2).
AVX512 = {"znver4", "znver5", "skylake-avx512", "icelake-server", "sapphirerapids"}


def test_the_bands_give_every_calibrated_measurement_the_credit_the_course_promises():
    """Over every microarchitecture measured and every CPU compiled for, from the lowest to the
    highest grading: the solution earns all the speed points, the yardstick and the journal none,
    and the register-blocked variants whose pixel vectors fill the CPU's at least two thirds."""
    import solutions

    problem = get_problem("tile-fused-conv")
    assert {m.host for m in problem.measured} >= {"znver4", "znver5"}
    wrong = []
    for m in problem.measured:
        lanes = 16 if m.cpu in AVX512 else 8
        if m.schedule == "solution":
            expected = lambda credit: credit == 1.0  # noqa: E731
        elif m.schedule in ("yardstick", "journal"):
            expected = lambda credit: credit == 0.0  # noqa: E731
        elif solutions.VARIANT_LANES[m.schedule.removeprefix("blocked ")] >= lanes:
            expected = lambda credit: credit >= 2 / 3  # noqa: E731
        else:
            continue  # half-width vectors: the core's to decide (tests/solutions.py)
        if not all(expected(problem.speed_credit(x)) for x in (m.low, m.median, m.high)):
            wrong.append(m)
    assert not wrong, wrong
