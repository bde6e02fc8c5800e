import matplotlib

matplotlib.use("Agg")

import numpy as np

from autograder.bench import Measurements
from autograder.lessons import plots, timing


def test_speedup_bars_one_bar_per_variant():
    comparison = timing.Comparison(Measurements({"base": [1.0, 1.0, 1.1], "fast": [0.5, 0.52, 0.5]}), "base")
    fig = plots.speedup_bars(comparison, "title")
    ax = fig.axes[0]
    assert [p.get_width() for p in ax.patches] == [1.0, comparison.speedup("fast").median]
    assert ax.get_title() == "title"


def test_cost_model_figures():
    seconds = np.array([0.002, 0.001, 0.004])
    fig = plots.predicted_vs_measured(np.array([0.2, 0.9, 0.1]), seconds)
    assert fig.axes[0].get_xscale() == "log"
    fig = plots.search_curves(np.array([0.002, 0.001, 0.001]), np.array([0.003, 0.0015, 0.001]))
    assert len(fig.axes[0].lines) == 2
