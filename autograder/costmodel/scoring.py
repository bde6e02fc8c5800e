"""Scoring a cost model on a measured table: deterministic given the table, the seed and the model.

Convention: a model's prediction is a score, HIGHER = FASTER (as MetaSchedule's `predict`, a
normalised throughput); times are seconds, lower = faster.

Two parts, each scaled between what a random model earns in expectation (0 credit) and what the
instructor's model (the "bar": the course's solution, grade.py) earns on the same table and the
same draws (full credit from FULL_CREDIT_SHARE of its lead over random on):

- ranking: `plan.splits` times, the table is split at random (the seed's draws) into
  `plan.train` candidates the model is fitted on and the rest it ranks. Two metrics on the
  held-out candidates: TenSet's top-k score (the best time held out over the best time among
  the model's k highest scores: 1 when the model's top k hold the fastest) and pairwise accuracy
  (of the pairs with different times, the share the model orders right; a tie in its scores
  counts a half). Random: pairwise 1/2 exactly; top-k the exact expectation over random k-sets.
- search: a budgeted search replayed over the table, TenSet-style: a first batch drawn at random,
  then each batch the model's `plan.batch` highest-scored candidates not measured yet, the model
  fitted again on everything measured so far; its "measurement" is a look-up in the table. Its
  measure: how many measurements it took to find a schedule within NEAR_BEST of the pool's best
  (the budget + 1 if none), against the exact expectation of random picks after the same first
  batch; the credit is the measurements saved, over the bar's saving. Averaged over
  `plan.seeds` searches. (Not TenSet's best found at a budget: a few percent of this space is
  within 10% of its best, 64 random picks nearly always hold one, and that measure hardly tells
  a model from a guess here; how soon is what a cost model buys.)

A model is used through a `Model` (fit(indices, seconds); predict(indices) -> scores), indices
into the table's rows, so that the same code drives a student's learner and the instructor's
in their confined children (learner.py), and the public baseline in this process (the self-check).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

import numpy as np

from ..errors import TvmCourseError


class Model(Protocol):
    def fit(self, indices: np.ndarray, seconds: np.ndarray) -> None: ...

    def predict(self, indices: np.ndarray) -> np.ndarray: ...


# A model for one episode (a split, a search): a fresh one each, so nothing measured in one
# episode reaches another (a split's training times are another split's held-out answers).
ModelFactory = Callable[[str], Model]


class ScaleUnfit(RuntimeError, TvmCourseError):
    """On this table the instructor's model does no better than random at a metric: the metric
    cannot tell a model from a guess here, and no credit can be given for it (a grader fault)."""


# A search's goal: a candidate at most this factor slower than the pool's best.
NEAR_BEST = 1.10
# The least lead over random the bar must have for a metric to grade by: a score's, and
# measurements saved in a search.
MIN_REFERENCE_LEAD = 0.005
MIN_MEASUREMENTS_SAVED = 0.5
# Full credit at this share of the bar's lead over random: a model about as good as the
# instructor's lands either side of it on one table's draws (measured on one 320-candidate table:
# a ridge model with more features than the instructor's, 0.55 to 1.1 of its lead on the search
# over four seeds), and the margin keeps such noise from docking it.
FULL_CREDIT_SHARE = 0.8
# The class run's rule in words, as the self-check states it (it cannot apply it: the
# instructor's model is not given out).
CLASS_RUN_RULE = (f"The class run scores each part from random (0) to {FULL_CREDIT_SHARE:g} of the instructor's model's "
                  "lead over random (all points), on the grading machine's table and its own secret draws; the "
                  "instructor's model is not given out, so this check shows your numbers beside random's and the "
                  "public baseline's, not your points.")


@dataclass(frozen=True)
class ScoringPlan:
    train: int  # candidates a ranking split fits on
    splits: int
    top_k: int
    budgets: tuple[int, ...]  # a search's most measurements: the largest
    batch: int
    seeds: int

    @classmethod
    def for_pool(cls, n: int) -> "ScoringPlan":
        """The plan for a table of `n` candidates: the assignment's (n around 300) or a tiny one."""
        if n >= 160:
            return cls(train=64, splits=3, top_k=5, budgets=(64,), batch=4, seeds=16)
        train = max(4, n // 3)
        return cls(train=train, splits=2, top_k=2, budgets=(max(2, n // 2),), batch=2, seeds=8)


# --- metrics ---------------------------------------------------------------------------------


def top_k_score(scores: Sequence[float], seconds: Sequence[float], k: int) -> float:
    """TenSet's top-k score: min(seconds) / min(seconds of the k highest scores). Ties in the
    scores are broken by position (the first listed first)."""
    scores, seconds = np.asarray(scores, dtype=np.float64), np.asarray(seconds, dtype=np.float64)
    top = np.argsort(-scores, kind="stable")[: min(k, len(scores))]
    return float(seconds.min() / seconds[top].min())


def random_top_k(seconds: Sequence[float], k: int) -> float:
    """The expected top-k score of a random k-subset: sum over ranks r of
    P(the subset's best is the r-th fastest) * best / t_r, with P = C(n - r, k - 1) / C(n, k)."""
    ordered = np.sort(np.asarray(seconds, dtype=np.float64))
    n, k = len(ordered), min(k, len(ordered))
    total = math.comb(n, k)
    return float(sum(math.comb(n - r, k - 1) / total * ordered[0] / ordered[r - 1] for r in range(1, n - k + 2)))


def pairwise_accuracy(scores: Sequence[float], seconds: Sequence[float]) -> float:
    """Of the pairs whose times differ, the share the scores order right (higher score, lower
    time); a pair the scores tie counts a half. 1/2 when no pair's times differ."""
    scores, seconds = np.asarray(scores, dtype=np.float64), np.asarray(seconds, dtype=np.float64)
    faster = np.sign(seconds[None, :] - seconds[:, None])  # +1 where i is faster than j
    higher = np.sign(scores[:, None] - scores[None, :])  # +1 where i is scored above j
    counted = faster != 0
    pairs = int(counted.sum())
    if not pairs:
        return 0.5
    agree = (faster * higher)[counted]
    return float(((agree > 0).sum() + 0.5 * (agree == 0).sum()) / pairs)


def scaled(value: float, random: float, bar: float, what: str = "", min_lead: float = MIN_REFERENCE_LEAD) -> float:
    """Credit in [0, 1]: 0 at the random expectation (or below), 1 from FULL_CREDIT_SHARE of the
    way to the bar (the instructor's model) on."""
    lead = bar - random
    if lead < min_lead:
        raise ScaleUnfit(f"{what or 'a metric'}: the instructor's model ({bar:.3f}) is no better than random "
                         f"({random:.3f}) on this table")
    return float(min(1.0, max(0.0, (value - random) / (FULL_CREDIT_SHARE * lead))))


# --- the draws ------------------------------------------------------------------------------


def split(n: int, train: int, seed: int, index: int) -> tuple[np.ndarray, np.ndarray]:
    """The `index`-th ranking split of n candidates: (training indices, held-out indices)."""
    order = np.random.default_rng([seed, 1, index]).permutation(n)
    return np.sort(order[:train]), np.sort(order[train:])


def first_batch(n: int, size: int, seed: int, index: int) -> np.ndarray:
    """The random first batch of the `index`-th search."""
    return np.random.default_rng([seed, 2, index]).choice(n, size=min(size, n), replace=False)


# --- the parts ------------------------------------------------------------------------------


@dataclass
class RankingOutcome:
    top_k: float  # mean over splits
    pairwise: float
    random_top_k: float
    per_split: list[dict] = field(default_factory=list)  # each split's held-out scores and times, for plots


def rank(model_for: ModelFactory, seconds: np.ndarray, plan: ScoringPlan, seed: int) -> RankingOutcome:
    tops, pairs, randoms, per_split = [], [], [], []
    for index in range(plan.splits):
        train, held_out = split(len(seconds), plan.train, seed, index)
        model = model_for(f"ranking split {index + 1}")
        model.fit(train, seconds[train])
        scores = np.asarray(model.predict(held_out), dtype=np.float64)
        tops.append(top_k_score(scores, seconds[held_out], plan.top_k))
        pairs.append(pairwise_accuracy(scores, seconds[held_out]))
        randoms.append(random_top_k(seconds[held_out], plan.top_k))
        per_split.append({"indices": held_out.tolist(), "scores": scores.tolist()})
    return RankingOutcome(float(np.mean(tops)), float(np.mean(pairs)), float(np.mean(randoms)), per_split)


@dataclass
class SearchOutcome:
    measurements: float  # mean over the searches of measurements until one within NEAR_BEST of the pool's best
    random: float  # the exact expectation of the same for random picks after the same first batches
    curves: list[list[float]] = field(default_factory=list)  # each search's best time after each measurement


def measurements_until(curve: Sequence[float], target: float, budget: int) -> int:
    """How many measurements a search took to find a time <= target; budget + 1 if it never did."""
    hits = np.nonzero(np.asarray(curve[:budget]) <= target)[0]
    return int(hits[0]) + 1 if len(hits) else budget + 1


def random_measurements_after(first: np.ndarray, seconds: np.ndarray, target: float, budget: int) -> float:
    """The exact expectation of measurements_until for a search that measures `first` (in its
    order), then candidates drawn at random from the rest: with g near-best among the m left,
    P(none in t draws) = C(m - g, t) / C(m, t), and E[min(T, L)] = sum over t < L of P(T > t)."""
    first_times = seconds[first]
    hits = np.nonzero(first_times <= target)[0]
    if len(hits) and hits[0] < budget:
        return float(hits[0] + 1)
    rest = np.delete(seconds, first)
    m, g = len(rest), int(np.sum(rest <= target))
    left = budget + 1 - len(first)  # the cap, counted from after the first batch
    expected = sum(math.comb(m - g, t) / math.comb(m, t) for t in range(left)) if g else float(left)
    return float(len(first) + expected)


def search(model_for: ModelFactory, seconds: np.ndarray, plan: ScoringPlan, seed: int) -> SearchOutcome:
    n, most = len(seconds), min(max(plan.budgets), len(seconds))
    target = NEAR_BEST * float(seconds.min())
    counts, randoms, curves = [], [], []
    for index in range(plan.seeds):
        first = first_batch(n, plan.batch, seed, index)
        measured = [int(i) for i in first]
        model = model_for(f"search {index + 1}")
        while len(measured) < most and seconds[measured].min() > target:  # until a near-best one is found
            done = np.array(measured)
            rest = np.setdiff1d(np.arange(n), done)
            model.fit(done, seconds[done])
            scores = np.asarray(model.predict(rest), dtype=np.float64)
            picks = rest[np.argsort(-scores, kind="stable")[: plan.batch]]
            measured.extend(int(p) for p in picks)
        curve = np.minimum.accumulate(seconds[np.array(measured[:most])])
        curves.append(curve.tolist())
        counts.append(measurements_until(curve, target, most))
        randoms.append(random_measurements_after(first, seconds, target, most))
    return SearchOutcome(float(np.mean(counts)), float(np.mean(randoms)), curves)


def fraction_of_best(curves: Sequence[Sequence[float]], best: float, budget: int) -> list[float]:
    """The mean over searches of the pool's best time over the best found after 1..budget
    measurements. A search stops once it finds a schedule within NEAR_BEST of the best: from
    there on its curve keeps what it found."""
    rows = []
    for curve in curves:
        found = np.asarray(curve[:budget], dtype=np.float64)
        if not len(found):
            continue
        rows.append(best / np.concatenate([found, np.full(budget - len(found), found[-1])]))
    return np.mean(rows, axis=0).tolist() if rows else []


def random_fraction_of_best(seconds: Sequence[float], budget: int) -> list[float]:
    """The exact expectation of the same for candidates measured in a random order: after t
    measurements, random_top_k(seconds, t)."""
    return [random_top_k(seconds, t) for t in range(1, min(budget, len(seconds)) + 1)]


@dataclass
class PartScore:
    fraction: float
    lines: list[str]
    gist: str = ""  # the numbers in one short line, for the instructor's table (course/summary.py)


def ranking_credit(student: RankingOutcome, bar: RankingOutcome, plan: ScoringPlan) -> PartScore:
    top = scaled(student.top_k, student.random_top_k, bar.top_k, f"top-{plan.top_k} score")
    pair = scaled(student.pairwise, 0.5, bar.pairwise, "pairwise accuracy")
    return PartScore(round((top + pair) / 2, 4), [
        f"top-{plan.top_k} score {student.top_k:.3f} (random {student.random_top_k:.3f}, the instructor's model "
        f"{bar.top_k:.3f}): {top:.0%} of the credit",
        f"pairwise accuracy {student.pairwise:.3f} (random 0.500, the instructor's model {bar.pairwise:.3f}): "
        f"{pair:.0%} of the credit",
        f"(mean of {plan.splits} splits, each fitted on {plan.train} candidates and ranking the rest)",
    ], f"top-{plan.top_k} {student.top_k:.2f}, pairwise {student.pairwise:.2f}; the instructor's {bar.top_k:.2f}, "
       f"{bar.pairwise:.2f}")


def search_credit(student: SearchOutcome, bar: SearchOutcome, plan: ScoringPlan) -> PartScore:
    """Measurements saved against random picks after the same first batches (the draws are the
    same for the student and the bar: so is the random expectation), scaled by the bar's saving."""
    credit = scaled(student.random - student.measurements, 0.0, bar.random - bar.measurements,
                    "the search's measurements saved", min_lead=MIN_MEASUREMENTS_SAVED)
    return PartScore(round(credit, 4), [
        f"measurements until a schedule within {NEAR_BEST - 1:.0%} of the pool's best: {student.measurements:.1f} "
        f"(random picks {student.random:.1f}, the instructor's model {bar.measurements:.1f}): {credit:.0%} of the credit",
        _search_plan_line(plan),
    ], f"{student.measurements:.1f} measurements to a near-best schedule; random {student.random:.1f}, the instructor's "
       f"{bar.measurements:.1f}")


def _search_plan_line(plan: ScoringPlan) -> str:
    return (f"(mean of {plan.seeds} searches of up to {max(plan.budgets)} measurements in batches of {plan.batch}, "
            "each from its own random first batch)")


# --- the self-check's lines: numbers beside random's and the baseline's, no credit ------------


def ranking_lines(student: RankingOutcome, baseline: RankingOutcome, plan: ScoringPlan) -> list[str]:
    return [
        f"top-{plan.top_k} score {student.top_k:.3f} (random {student.random_top_k:.3f}, the baseline {baseline.top_k:.3f})",
        f"pairwise accuracy {student.pairwise:.3f} (random 0.500, the baseline {baseline.pairwise:.3f})",
        f"(mean of {plan.splits} splits, each fitted on {plan.train} candidates and ranking the rest)",
    ]


def search_lines(student: SearchOutcome, baseline: SearchOutcome, plan: ScoringPlan) -> list[str]:
    return [
        f"measurements until a schedule within {NEAR_BEST - 1:.0%} of the pool's best: {student.measurements:.1f} "
        f"(random picks {student.random:.1f}, the baseline {baseline.measurements:.1f})",
        _search_plan_line(plan),
    ]
