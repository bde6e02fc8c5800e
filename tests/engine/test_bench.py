"""bench.py: statistics, interleaving order, ratios."""
from __future__ import annotations

import math
import statistics
import time

import pytest

from autograder.engine.bench import (
    BandDecision, BandRule, Measurements, Stats, _ever_excluded, binomial_cdf, interval_ranks, measure_interleaved,
)


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


def test_a_function_timed_in_the_first_rounds_only_pairs_those_rounds():
    calls: list[str] = []
    seconds = {"b": iter([4.0, 8.0, 6.0]), "y": iter([2.0] * 6), "c": iter([1.0, 2.0, 1.5, 1.0, 1.0, 1.0])}

    def timer(name):
        def run():
            calls.append(name)
            return next(seconds[name])

        return run

    measured = measure_interleaved({name: timer(name) for name in "byc"}, rounds=6, warmup=0, first_rounds_only={"b": 3})
    # three rounds of three, rotating; then the other two, still rotating
    assert calls == ["b", "y", "c", "y", "c", "b", "c", "b", "y", "c", "y", "y", "c", "c", "y"]
    assert [len(measured.samples[name]) for name in "byc"] == [3, 6, 6]
    assert measured.ratios("b", "c") == [4.0, 4.0, 4.0]  # round for round, not the last candidate rounds
    assert measured.speedup("y", "c").n == 6


def steady(value):
    return lambda: value


def noisy(values):
    values = iter(values)
    return lambda: next(values)


BANDS = (1.1, 1.25, 1.45)  # edges of a problem (tile-fused-conv had these until its bands were set from several CPUs)
RULE = BandRule(BANDS, least=10, most=45, confidence=0.99)


def credit(median: float) -> int:
    return sum(median >= edge for edge in BANDS)


def test_steady_ratios_inside_one_band_stop_at_the_least_rounds():
    measured = measure_interleaved({"y": steady(2.0), "c": steady(1.0)}, rounds=10, warmup=0,
                                   max_rounds=45, settle=("y", "c"), rule=RULE)
    assert len(measured.samples["c"]) == 10


def test_ratios_that_straddle_an_edge_get_every_round_up_to_the_most():
    jitter = [1.6, 1.9] * 100  # ratios 1.25 and 1.05: the 1.1x edge inside every interval
    measured = measure_interleaved({"y": steady(2.0), "c": noisy(jitter)}, rounds=10, warmup=0,
                                   max_rounds=30, settle=("y", "c"), rule=BandRule(BANDS, 10, 30))
    assert len(measured.samples["c"]) == len(measured.samples["y"]) == 30


def test_spread_out_ratios_inside_one_band_stop_early_however_spread():
    jitter = [1.2, 1.35] * 100  # ratios 1.67 and 1.48: 10% apart, both above the 1.45x edge
    measured = measure_interleaved({"y": steady(2.0), "c": noisy(jitter)}, rounds=10, warmup=0,
                                   max_rounds=45, settle=("y", "c"), rule=RULE)
    assert len(measured.samples["c"]) == 10


def test_a_time_budget_ends_the_extra_rounds():
    jitter = [1.6, 1.9] * 100
    measured = measure_interleaved({"y": steady(2.0), "c": noisy(jitter)}, rounds=5, warmup=0,
                                   max_rounds=100, settle=("y", "c"), rule=BandRule(BANDS, 5, 100), budget_s=0.0)
    assert len(measured.samples["c"]) == 5


def all_sign_walks_excluded(ranks, most):
    """The chance that some look's interval lies above the median, by listing every sequence of
    rounds above/below it (each equally likely): the exact computation, done the long way."""
    import itertools

    hits = 0
    for signs in itertools.product((0, 1), repeat=most):  # 1: that round fell below the median
        below = 0
        for n, sign in enumerate(signs, start=1):
            below += sign
            if below < ranks.get(n, 0):
                hits += 1
                break
    return hits / 2 ** most


def test_the_interval_schedule_holds_its_confidence_over_all_the_looks():
    ranks = interval_ranks(6, 14, 0.9)
    assert any(ranks.values())
    assert all_sign_walks_excluded(ranks, 14) == pytest.approx(_ever_excluded(ranks, 14))
    assert _ever_excluded(ranks, 14) <= 0.05
    # a looser confidence widens no interval and narrows some: the bound is what sets them
    looser = interval_ranks(6, 14, 0.8)
    assert all(looser[n] >= ranks[n] for n in ranks) and looser != ranks
    default = interval_ranks(10, 45, 0.99)
    assert min(n for n, k in default.items() if k) == 10 and default[10] == 1  # 10 rounds: their min and max
    assert _ever_excluded(default, 45) <= 0.005
    assert binomial_cdf(10, 0) == pytest.approx(1 / 1024)


def simulated(median: float, seed: int, spread: float = 0.05, rule: BandRule = RULE) -> BandDecision:
    """One grading's rounds on a shared machine: a per-round ratio with log-normal noise of
    `spread` and, one round in ten, a neighbour's burst that slows one of the two functions by up
    to 30%; stopped by `rule` as the runner stops."""
    import random

    draw = random.Random(seed)
    ratios: list[float] = []
    while True:
        ratio = median * math.exp(draw.gauss(0.0, spread))
        if draw.random() < 0.1:
            ratio *= draw.choice((1.0 / (1 + 0.3 * draw.random()), 1 + 0.3 * draw.random()))
        ratios.append(ratio)
        decision = rule.decide(ratios)
        if decision.decided or len(ratios) >= rule.most:
            return decision if decision.decided else BandDecision(len(ratios), decision.interval, False, rule.confidence), ratios


@pytest.mark.parametrize("median, spread, rounds", [(0.3, 0.05, 10), (0.9, 0.05, 10), (1.7, 0.05, 10), (3.0, 0.1, 10),
                                                   (1.18, 0.01, 14)])
def test_far_from_every_edge_the_band_is_decided_early(median, spread, rounds):
    """`rounds`: the median rounds used; the middle band (1.1-1.25x) is narrow, so a neighbour's
    burst in the first ten rounds reaches past its edges and a few more rounds are needed."""
    for seed in range(20):
        decision, ratios = simulated(median, seed, spread)
        assert decision.decided and credit(statistics.median(ratios)) == credit(median)
    assert statistics.median(simulated(median, seed, spread)[0].rounds for seed in range(20)) <= rounds


@pytest.mark.parametrize("edge", BANDS)
@pytest.mark.parametrize("side", [-1, +1])
def test_near_an_edge_two_gradings_agree_with_each_other_and_with_all_the_rounds(edge, side):
    """4% from an edge (a schedule whose full-rounds spread is clear of it): every pair of
    gradings gets the credit that all 45 rounds give, which is the median's own band."""
    median = edge * (1 + side * 0.04)
    full = BandRule(BANDS, 45, 45)
    for seed in range(0, 60, 2):
        first, ratios_1 = simulated(median, seed)
        second, ratios_2 = simulated(median, seed + 1)
        everything = simulated(median, seed, rule=full)[1]
        assert credit(statistics.median(ratios_1)) == credit(statistics.median(ratios_2)) == credit(median)
        assert credit(statistics.median(everything)) == credit(median)


@pytest.mark.parametrize("edge", BANDS)
def test_at_an_edge_the_rounds_go_on_to_the_most(edge):
    """A median on the edge itself: its interval straddles it, so early stops (each a chance
    for a credit the full rounds might not give) stay within the rule's 1%, both sides."""
    runs = [simulated(edge, seed)[0] for seed in range(400)]
    early = [d for d in runs if d.decided]
    assert len(early) <= 0.02 * len(runs)
    assert statistics.median(d.rounds for d in runs) == 45


def test_decisions_are_reported_with_their_interval():
    decision = RULE.decide([1.5 + 0.01 * i for i in range(10)])
    assert decision.as_dict() == {"rounds": 10, "interval": [1.5, 1.59], "decided": True, "confidence": 0.99}
    assert RULE.decide([1.5] * 9).interval is None  # too few rounds for a 99% interval
    assert not RULE.decide([1.2, 1.3] * 5).decided  # 1.25x lies between them


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


# ---- rounds placed in memory (placement.py) ------------------------------------------------
# Synthetic and exact: a function whose speed depends only on where its round runs, as the same
# machine code did (measured: 1.72x or 1.85x the yardstick by the stack's alignment on a Zen 4;
# 1.09x or 1.38x on an Emerald Rapids). Four alignment classes; a process's own stack lies in
# one of them (`base`), and a placed round moves it by its position in the cycle.
COURSE_BANDS = (1.06, 1.12, 1.25)
PLACED_RULE = BandRule(COURSE_BANDS, least=12, most=44, confidence=0.99, every=4)


def at_placements(ratio_of_class, base: int, placed: bool = True):
    """Measure yardstick (1 s) and candidate (1/ratio s) in a process whose stack lies in class
    `base`; with `placed`, each round at its class in a cycle visiting all four."""
    where = {"class": base}

    def placement(index, run_round):
        where["class"] = (base + index) % 4
        run_round()

    timers = {"yardstick": lambda: 1.0, "candidate": lambda: 1.0 / ratio_of_class[where["class"]]}
    return measure_interleaved(timers, rounds=10, warmup=0, max_rounds=45, settle=("yardstick", "candidate"),
                               rule=PLACED_RULE, placement=placement if placed else None, cycle=4 if placed else 1)


def outcome(measured: Measurements) -> tuple[int, float, bool]:
    ratios = measured.ratios("yardstick", "candidate")
    return len(ratios), statistics.median(ratios), PLACED_RULE.decide(ratios).decided


def test_rounds_in_one_placement_decide_that_placements_band_and_a_fresh_process_draws_another():
    slow_in_three = {0: 1.09, 1: 1.09, 2: 1.09, 3: 1.38}  # the Emerald Rapids case: 0.8 or 1.0 of the score
    unplaced = {base: outcome(at_placements(slow_in_three, base, placed=False)) for base in range(4)}
    assert {median for _, median, _ in unplaced.values()} == {1.09, 1.38}  # a draw, each "decided"
    assert all(decided for _, _, decided in unplaced.values())


def test_placed_rounds_are_not_decided_while_the_placements_disagree_and_end_alike_in_every_process():
    slow_in_three = {0: 1.09, 1: 1.09, 2: 1.09, 3: 1.38}
    for base in range(4):
        rounds, median, decided = outcome(at_placements(slow_in_three, base))
        assert rounds > 12 and rounds % 4 == 0  # not decided at the least: one placement in four disagrees
        assert median == 1.09  # three placements of four: the code's speed, in every process
    half = {0: 1.09, 1: 1.38, 2: 1.09, 3: 1.38}  # two speeds alike often, on either side of two edges
    ends = {outcome(at_placements(half, base)) for base in range(4)}
    assert ends == {(44, (1.09 + 1.38) / 2, False)}  # never decided; whole cycles: the same median everywhere


def test_placements_that_agree_decide_at_the_least_rounds():
    close = {0: 1.30, 1: 1.42, 2: 1.30, 3: 1.42}  # two speeds, both in the top band
    for base in range(4):
        assert outcome(at_placements(close, base)) == (12, (1.30 + 1.42) / 2, True)


def test_looks_only_after_whole_cycles_hold_the_confidence_and_round_the_bounds():
    from autograder.engine.bench import cycle_bounds

    assert cycle_bounds(10, 45, 4) == (12, 44) and cycle_bounds(10, 45, 1) == (10, 45) and cycle_bounds(45, 45, 4) == (48, 48)
    ranks = interval_ranks(12, 44, 0.99, 4)
    assert {n for n, k in ranks.items() if k} <= set(range(12, 45, 4)) and ranks[12] >= 1
    assert _ever_excluded(ranks, 44) <= 0.005
    assert PLACED_RULE.decide([1.3] * 13).interval is None  # between looks: no interval
