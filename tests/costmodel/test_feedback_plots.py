"""The feedback's two figures of a graded cost model: drawn from the grader's record, point for
point, and nothing drawn from a record that is not one."""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from autograder.costmodel import scoring
from autograder.costmodel.feedback_plots import MAX_POINTS, figures, ranking_figure, search_figure

SVG = "{http://www.w3.org/2000/svg}"


def ranking_record(n: int = 40, top_k: int = 5) -> dict:
    rng = np.random.default_rng(3)
    seconds = rng.uniform(1e-4, 5e-3, n)
    return {"seconds": seconds.tolist(), "scores": (-np.log(seconds) + rng.normal(0, 0.3, n)).tolist(), "top_k": top_k}


def search_record(budget: int = 20) -> dict:
    seconds = np.linspace(1e-3, 4e-3, 50)
    curves = [np.minimum.accumulate(seconds[np.random.default_rng(i).permutation(50)[:budget - i]]).tolist() for i in range(4)]
    best = float(seconds.min())
    return {"student": scoring.fraction_of_best(curves, best, budget),
            "instructor": scoring.fraction_of_best(curves[:1], best, budget),
            "random": scoring.random_fraction_of_best(seconds, budget), "goal": 1 / scoring.NEAR_BEST, "searches": 4}


def parsed(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def test_the_ranking_figure_has_a_point_per_held_out_candidate_and_marks_the_model_s_top_k():
    record = ranking_record()
    figure = ranking_figure(record)
    assert figure is not None
    circles = [c for c in parsed(figure.svg).iter(f"{SVG}circle") if "candidate" in c.get("class", "")]
    assert len(circles) == 40
    top = [i for i, c in enumerate(circles) if "top-k" in c.get("class", "")]
    assert top == sorted(np.argsort(-np.asarray(record["scores"]), kind="stable")[:5].tolist())
    # higher score drawn higher (smaller y), slower time further right
    fastest, slowest = int(np.argmin(record["seconds"])), int(np.argmax(record["seconds"]))
    assert float(circles[fastest].get("cx")) < float(circles[slowest].get("cx"))
    best_scored, worst_scored = int(np.argmax(record["scores"])), int(np.argmin(record["scores"]))
    assert float(circles[best_scored].get("cy")) < float(circles[worst_scored].get("cy"))
    assert "40 candidates" in figure.text


def test_the_search_figure_draws_three_curves_of_the_budget_s_length_and_the_goal():
    figure = search_figure(search_record(20))
    assert figure is not None
    root = parsed(figure.svg)
    lines = {c.get("class").split()[1]: c.get("points").split() for c in root.iter(f"{SVG}polyline")}
    assert sorted(lines) == ["instructor", "random", "student"]
    assert all(len(points) == 20 for points in lines.values())
    assert [e.get("class") for e in root.iter(f"{SVG}line") if e.get("class")] == ["goal"]
    # random order's curve only rises: its y (drawn downwards) only falls
    ys = [float(p.split(",")[1]) for p in lines["random"]]
    assert ys == sorted(ys, reverse=True)


@pytest.mark.parametrize("broken", [
    {"seconds": [1e-3, float("nan")], "scores": [1.0, 2.0], "top_k": 1},
    {"seconds": [1e-3, -1e-3], "scores": [1.0, 2.0], "top_k": 1},
    {"seconds": [1e-3, 2e-3], "scores": [1.0], "top_k": 1},
    {"seconds": [1e-3, 2e-3], "scores": ["1", 2.0], "top_k": 1},
    {"seconds": [1e-3, 2e-3], "scores": [True, 2.0], "top_k": 1},
    {"seconds": [1e-3, 2e-3], "scores": [1.0, 2.0], "top_k": "5"},
    {"seconds": [1e-3] * (MAX_POINTS + 1), "scores": [1.0] * (MAX_POINTS + 1), "top_k": 5},
    {"seconds": [], "scores": [], "top_k": 5},
    "<script>",
])
def test_a_ranking_record_that_is_not_one_draws_nothing(broken):
    assert ranking_figure(broken) is None


def test_the_self_checks_search_figure_draws_the_baseline_where_the_feedback_has_the_instructors_model():
    record = search_record(20)
    record["baseline"] = record.pop("instructor")
    figure = search_figure(record)
    assert figure is not None
    root = parsed(figure.svg)
    assert sorted(c.get("class").split()[1] for c in root.iter(f"{SVG}polyline")) == ["baseline", "random", "student"]
    legend = [t.text for t in root.iter(f"{SVG}text")]
    assert "the public baseline" in legend and "the instructor's model" not in legend
    assert "your model, the public baseline, and measuring in a random order" in figure.text
    assert search_figure({**record, "instructor": record["baseline"]}) is None  # one reference or the other, never both


@pytest.mark.parametrize("change", [
    {"student": [0.5, 2.0] * 10},  # above the pool's best
    {"random": [0.5] * 19},  # not the budget's length
    {"instructor": None},
    {"goal": 2.0},
    {"searches": 0},
])
def test_a_search_record_that_is_not_one_draws_nothing(change):
    assert search_figure({**search_record(20), **change}) is None


def test_extreme_scores_are_drawn_inside_the_figure():
    record = {"seconds": [1e-3, 2e-3, 3e-3], "scores": [1.7e308, -1.7e308, 0.0], "top_k": 1}
    figure = ranking_figure(record)
    assert figure is not None
    ys = [float(c.get("cy")) for c in parsed(figure.svg).iter(f"{SVG}circle") if "candidate" in c.get("class", "")]
    assert all(math.isfinite(y) and 0 <= y <= 320 for y in ys)


def test_figures_by_part_leave_out_a_part_with_no_record():
    assert sorted(figures({"ranking": ranking_record(), "search": search_record()})) == ["ranking", "search"]
    assert sorted(figures({"ranking": ranking_record()})) == ["ranking"]
    assert figures(None) == {} and figures([]) == {}


def test_the_search_curves_hand_computed():
    # two searches over a pool whose best is 1.0: one finds it at the 2nd measurement and stops,
    # the other finds 2.0 then 1.25; a budget of 3 carries each last value forward
    assert scoring.fraction_of_best([[4.0, 1.0], [2.0, 2.0, 1.25]], 1.0, 3) == pytest.approx([0.375, 0.75, 0.9])
    # random order over times (1, 2, 4): one pick finds 1 a third of the time: (1 + 1/2 + 1/4) / 3;
    # two picks miss 1 only as {2, 4}: (2/3) * 1 + (1/3) * (1/2); three always find it
    assert scoring.random_fraction_of_best([1.0, 2.0, 4.0], 3) == pytest.approx([7 / 12, 5 / 6, 1.0])
