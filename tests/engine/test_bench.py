"""bench.py: statistics, interleaving order, ratios."""
from __future__ import annotations

import time

import pytest

from autograder.engine.bench import Measurements, Stats, measure_interleaved


def test_stats_of_a_sample():
    stats = Stats.of([1.0, 2.0, 3.0, 4.0, 100.0])
    assert stats.median == 3.0
    assert stats.minimum == 1.0 and stats.maximum == 100.0
    assert stats.q1 <= stats.median <= stats.q3
    assert stats.cv > 1.0  # the outlier shows in the spread, not in the median
    assert Stats.of([2.0]).cv == 0.0
    with pytest.raises(ValueError):
        Stats.of([])


def test_rounds_rotate_which_function_goes_first():
    calls: list[str] = []

    def timer(name):
        def run():
            calls.append(name)
            return 1.0

        return run

    measured = measure_interleaved({"a": timer("a"), "b": timer("b")}, rounds=4, warmup=0)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert measured.samples == {"a": [1.0] * 4, "b": [1.0] * 4}


def steady(value):
    return lambda: value


def noisy(values):
    values = iter(values)
    return lambda: next(values)


def test_steady_ratios_stop_at_the_least_rounds():
    measured = measure_interleaved({"y": steady(2.0), "c": steady(1.0)}, rounds=5, warmup=0,
                                   max_rounds=40, settle=("y", "c"), target_cv=0.02)
    assert len(measured.samples["c"]) == 5


def test_spread_out_ratios_get_more_rounds_up_to_the_most():
    jitter = [1.0, 1.5] * 100
    measured = measure_interleaved({"y": steady(2.0), "c": noisy(jitter)}, rounds=5, warmup=0,
                                   max_rounds=12, settle=("y", "c"), target_cv=0.02)
    assert len(measured.samples["c"]) == len(measured.samples["y"]) == 12


def test_a_time_budget_ends_the_extra_rounds():
    jitter = [1.0, 1.5] * 100
    measured = measure_interleaved({"y": steady(2.0), "c": noisy(jitter)}, rounds=5, warmup=0,
                                   max_rounds=100, settle=("y", "c"), target_cv=0.02, budget_s=0.0)
    assert len(measured.samples["c"]) == 5


def test_speedup_is_the_median_of_per_round_ratios():
    # A drift that slows everything in round 3 cancels out of the ratio.
    measured = Measurements({"base": [2.0, 2.0, 8.0, 2.0], "cand": [1.0, 1.0, 4.0, 1.0]})
    assert measured.ratios("base", "cand") == [2.0, 2.0, 2.0, 2.0]
    assert measured.speedup("base", "cand").median == 2.0
    assert measured.speedup("base", "cand").cv == 0.0
    assert measured.stats("base").median == 2.0


def test_a_real_tvm_timer_measures_a_compiled_function():
    import numpy as np
    import tvm

    from autograder.engine.bench import tvm_timer
    from autograder.problems.workload import ConvShape, fused_primfunc, random_inputs

    shape = ConvShape(height=32, width=32)
    exe = tvm.compile(tvm.IRModule({"main": fused_primfunc(shape)}), target="llvm")
    dev = tvm.cpu()
    data = random_inputs(shape, 0)
    args = [tvm.runtime.tensor(data[k], dev) for k in ("x", "w", "b")] + [tvm.runtime.tensor(np.zeros(shape.output_shape, "float32"), dev)]
    timer = tvm_timer(exe.mod, dev, args, min_repeat_ms=20)
    timer()  # the first call may be a cold one
    started = time.perf_counter()
    seconds = timer()
    took = time.perf_counter() - started
    assert 0 < seconds < 1
    # One sample: at least 90% of min_repeat_ms of back-to-back calls, and not a golden-ratio
    # search that throws short tries away (a generous bound: a shared machine).
    assert 0.018 <= took < 0.2
