import time

from autograder.engine.bench import Measurements
from autograder.lessons import timing


def _busy(seconds: float):
    def run() -> float:
        start = time.perf_counter()
        while time.perf_counter() - start < seconds:
            pass
        return time.perf_counter() - start

    return run


def test_compare_times_every_variant_each_round():
    comparison = timing.compare({"slow": _busy(0.004), "fast": _busy(0.001)}, baseline="slow", rounds=5)
    assert comparison.names == ["slow", "fast"]
    assert all(len(samples) == 5 for samples in comparison.measurements.samples.values())
    assert comparison.speedup("fast").median > 2
    table = comparison.table()
    assert table.column("variant") == ["slow", "fast"]
    assert table.column("speedup over slow")[0] == "1.00x"


def test_verdict_follows_the_spread_of_the_ratios():
    samples = {
        "base": [1.0] * 8,
        "same": [0.9, 1.1, 0.95, 1.05, 1.0, 0.98, 1.02, 1.0],
        "faster": [0.5] * 8,
        "slower": [2.0] * 8,
    }
    comparison = timing.Comparison(Measurements(samples), "base")
    assert "no difference" in comparison.verdict("same")
    assert "is faster" in comparison.verdict("faster") and "2.00x" in comparison.verdict("faster")
    assert "is slower" in comparison.verdict("slower") and "2.00 times as long" in comparison.verdict("slower")


def test_unknown_baseline_is_refused():
    import pytest

    with pytest.raises(KeyError, match="baseline"):
        timing.compare({"a": _busy(0.0001)}, baseline="b", rounds=1)
