"""The cost model's metrics against cases worked out by hand, and the replayed search's rules."""
from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from autograder.costmodel import scoring


def test_top_k_score_is_best_time_over_best_of_the_models_top_k():
    seconds = [1.0, 2.0, 4.0]
    assert scoring.top_k_score([3, 2, 1], seconds, k=1) == 1.0  # its top pick is the fastest
    assert scoring.top_k_score([1, 2, 3], seconds, k=1) == 0.25  # its top pick is the slowest: 1/4
    assert scoring.top_k_score([1, 2, 3], seconds, k=2) == 0.5  # the top two are 4 and 2: 1/2
    assert scoring.top_k_score([0, 5, 5], seconds, k=1) == 0.5  # a tie goes to the first listed: 2 s


def test_random_top_k_is_the_exact_expectation():
    # k=1: (1/1 + 1/2 + 1/4) / 3; k=2: the subsets {1,2} {1,4} {2,4} give 1, 1, 1/2
    assert scoring.random_top_k([4.0, 1.0, 2.0], 1) == pytest.approx(1.75 / 3)
    assert scoring.random_top_k([4.0, 1.0, 2.0], 2) == pytest.approx(2.5 / 3)
    assert scoring.random_top_k([4.0, 1.0, 2.0], 3) == pytest.approx(1.0)
    seconds = np.array([3.0, 1.5, 7.0, 2.0, 2.0, 9.0, 4.5])
    for k in (1, 2, 3, 5):
        subsets = list(combinations(seconds, k))
        brute = np.mean([seconds.min() / min(s) for s in subsets])
        assert scoring.random_top_k(seconds, k) == pytest.approx(brute)


def test_pairwise_accuracy_counts_pairs_with_different_times_and_ties_as_half():
    seconds = [1.0, 2.0, 3.0]
    assert scoring.pairwise_accuracy([3, 2, 1], seconds) == 1.0
    assert scoring.pairwise_accuracy([1, 2, 3], seconds) == 0.0
    # (0,1) tied in the scores: 1/2; (0,2) and (1,2) right: 2.5 of 3 pairs
    assert scoring.pairwise_accuracy([1, 1, 0], seconds) == pytest.approx(2.5 / 3)
    # the pair with equal times is not counted: only (0,1) and (0,2), both right
    assert scoring.pairwise_accuracy([2, 1, 0], [1.0, 2.0, 2.0]) == 1.0


def test_scaled_runs_from_random_to_the_reference_and_refuses_a_reference_no_better_than_random():
    assert scoring.scaled(0.7, 0.5, 1.0) == pytest.approx(0.2 / (0.5 * scoring.FULL_CREDIT_SHARE))
    assert scoring.scaled(0.4, 0.5, 1.0) == 0.0
    assert scoring.scaled(1.2, 0.5, 1.0) == 1.0
    with pytest.raises(scoring.ScaleUnfit, match="no better than random"):
        scoring.scaled(0.9, 0.8, 0.803)


class Oracle:
    """A model that knows every time (scores = minus the time): the best any model can do."""

    def __init__(self, seconds):
        self.seconds = np.asarray(seconds)
        self.fitted = []

    def fit(self, indices, seconds):
        assert np.array_equal(self.seconds[indices], seconds)  # it is told the times of what was measured
        self.fitted.append(len(indices))

    def predict(self, indices):
        return -self.seconds[indices]


def test_a_search_measures_a_random_first_batch_then_the_models_picks_until_near_the_best():
    seconds = np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0, 7.0, 8.0])
    plan = scoring.ScoringPlan(train=4, splits=1, top_k=1, budgets=(8,), batch=2, seeds=1)
    oracle = Oracle(seconds)
    outcome = scoring.search(lambda episode: oracle, seconds, plan, seed=11)
    first = scoring.first_batch(len(seconds), 2, 11, 0)
    assert 5 not in first  # (this seed's first batch misses the fastest, 1.0 s)
    assert oracle.fitted == [2]  # fitted once, on the first batch; its first pick is the fastest
    assert outcome.measurements == 3
    assert outcome.curves[0] == list(np.minimum.accumulate(seconds[[*first, 5, 4]]))


def test_measurements_until_counts_to_the_first_near_best_and_past_the_budget_when_none():
    assert scoring.measurements_until([5.0, 3.0, 1.05, 1.0], target=1.1, budget=4) == 3
    assert scoring.measurements_until([5.0, 3.0, 2.0], target=1.1, budget=3) == 4


def test_random_measurements_after_a_first_batch_is_the_exact_expectation():
    seconds = np.array([1.0, 1.05, 3.0, 4.0, 5.0, 6.0])  # two near-best (within 10%)
    # a first batch holding one at its second place: found at 2
    assert scoring.random_measurements_after(np.array([3, 1]), seconds, 1.1, budget=6) == 2.0
    # first batch [2, 3]: 4 left, 2 of them near-best. P(T > 0) = 1, P(T > 1) = C(2,1)/C(4,1) = 1/2,
    # P(T > 2) = C(2,2)/C(4,2) = 1/6, then 0: 2 + 1 + 1/2 + 1/6
    expected = scoring.random_measurements_after(np.array([2, 3]), seconds, 1.1, budget=6)
    assert expected == pytest.approx(2 + 1 + 1 / 2 + 1 / 6)
    # the same by brute force over the orders of the rest
    from itertools import permutations

    rest = [0, 1, 4, 5]
    counts = [2 + next(i + 1 for i, c in enumerate(order) if seconds[c] <= 1.1) for order in permutations(rest)]
    assert expected == pytest.approx(np.mean(counts))


def test_ranking_of_an_oracle_is_perfect_and_the_draws_follow_the_seed():
    seconds = np.linspace(1.0, 3.0, 30)
    plan = scoring.ScoringPlan(train=10, splits=2, top_k=3, budgets=(4,), batch=2, seeds=1)
    outcome = scoring.rank(lambda episode: Oracle(seconds), seconds, plan, seed=5)
    assert outcome.top_k == 1.0 and outcome.pairwise == 1.0
    assert np.array_equal(scoring.split(30, 10, 5, 0)[0], scoring.split(30, 10, 5, 0)[0])
    assert not np.array_equal(scoring.split(30, 10, 5, 0)[0], scoring.split(30, 10, 6, 0)[0])
    train, held_out = scoring.split(30, 10, 5, 1)
    assert len(train) == 10 and len(held_out) == 20 and not set(train) & set(held_out)


def test_credit_lines_say_where_the_model_stands():
    plan = scoring.ScoringPlan(train=2, splits=1, top_k=1, budgets=(2,), batch=1, seeds=1)
    student = scoring.RankingOutcome(top_k=0.8, pairwise=0.75, random_top_k=0.6)
    reference = scoring.RankingOutcome(top_k=1.0, pairwise=1.0, random_top_k=0.6)
    credit = scoring.ranking_credit(student, reference, plan)
    # half the way on both; full credit comes at FULL_CREDIT_SHARE of the way
    assert credit.fraction == pytest.approx(0.5 / scoring.FULL_CREDIT_SHARE)
    assert "top-1 score 0.800 (random 0.600, the instructor's model 1.000)" in credit.lines[0]
    # the student saves 1 measurement against random, the reference 4: 1 / (0.8 * 4) of the credit
    search = scoring.search_credit(scoring.SearchOutcome(9.0, 10.0), scoring.SearchOutcome(6.0, 10.0), plan)
    assert search.fraction == pytest.approx(1 / 3.2)
    assert "9.0 (random picks 10.0, the instructor's model 6.0)" in search.lines[0]
    # and each in one line, for the instructor's table of the class
    assert credit.gist == "top-1 0.80, pairwise 0.75; the instructor's 1.00, 1.00"
    assert search.gist == "9.0 measurements to a near-best schedule; random 10.0, the instructor's 6.0"


class FixedOrder:
    """A model that learns nothing: it always prefers the lower index (scores = minus the index)."""

    def fit(self, indices, seconds):
        pass

    def predict(self, indices):
        return -np.asarray(indices, dtype=np.float64)


def test_search_credit_of_a_model_between_random_and_the_instructors_worked_out_by_hand():
    """The search part end to end (scoring.search, then search_credit) on a table where the
    instructor's model beats random on every draw, whatever the machine: the class run's tiny
    measured table cannot promise that, so this is the test that always gives search credit."""
    # 12 candidates, one near-best (index 3, 1.0 s; the goal is within 10%: 1.1 s), the rest 2 s or slower
    seconds = np.array([2.0, 3.0, 4.0, 1.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0])
    plan = scoring.ScoringPlan(train=4, splits=1, top_k=1, budgets=(12,), batch=1, seeds=4)
    firsts = [int(scoring.first_batch(12, 1, 12, i)[0]) for i in range(4)]
    assert firsts == [8, 7, 2, 9]  # this seed's first picks: none is the near-best one
    instructor = scoring.search(lambda episode: Oracle(seconds), seconds, plan, seed=12)
    student = scoring.search(lambda episode: FixedOrder(), seconds, plan, seed=12)
    # Random picks after a first miss: 1 + the expected draws to find the 1 near-best among the 11
    # left, (11 + 1) / (1 + 1) = 6: 7 measurements, on every search.
    assert student.random == instructor.random == pytest.approx(7.0)
    # The instructor's model (it knows every time) picks the near-best one second: 2 measurements.
    assert instructor.measurements == 2.0
    # The student's measures 0, 1, 2 (skipping its first pick) then 3: after 8, 7 and 9, five
    # measurements; after 2, four. Mean (5 + 5 + 4 + 5) / 4 = 4.75.
    assert student.measurements == pytest.approx(4.75)
    assert student.curves[2] == [4.0, 2.0, 2.0, 1.0]  # first 2 (4 s), then 0 (2 s), 1 (3 s), 3 (1 s)
    # Saved against random: 7 - 4.75 = 2.25, against the instructor's 7 - 2 = 5; full credit at 0.8 of
    # that lead: 2.25 / (0.8 * 5) = 0.5625.
    credit = scoring.search_credit(student, instructor, plan)
    assert credit.fraction == pytest.approx(2.25 / (scoring.FULL_CREDIT_SHARE * 5)) == pytest.approx(0.5625)
    assert credit.gist == "4.8 measurements to a near-best schedule; random 7.0, the instructor's 2.0"
    # the instructor's own model, scored against itself, earns all of it; a model that finds
    # nothing sooner than random earns none
    assert scoring.search_credit(instructor, instructor, plan).fraction == 1.0
    assert scoring.search_credit(scoring.SearchOutcome(7.0, 7.0), instructor, plan).fraction == 0.0
