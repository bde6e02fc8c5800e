import base64
import io

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np

from autograder.engine.bench import Measurements
from autograder.lessons import plots, timing


def _comparison():
    return timing.Comparison(Measurements({"base": [1.0, 1.0, 1.1], "fast": [0.5, 0.52, 0.5]}), "base")


def test_speedup_bars_one_bar_per_variant():
    comparison = _comparison()
    plot = plots.speedup_bars(comparison, "title")
    ax = plot.figure.axes[0]
    assert [p.get_width() for p in ax.patches] == [1.0, comparison.speedup("fast").median]
    assert ax.get_title() == "title"


def test_speedup_summary_states_each_measured_speedup():
    comparison = _comparison()
    fast = comparison.speedup("fast")
    summary = plots.speedup_bars(comparison, "title").summary
    assert summary.startswith("Bar chart: title. Speedup over 'base', >1 is faster: ")
    assert "base 1.00x (the baseline)" in summary
    assert f"fast {fast.median:.2f}x (middle half {fast.q1:.2f}x to {fast.q3:.2f}x)" in summary
    assert "\n" not in summary


def test_cost_model_figures():
    seconds = np.array([0.002, 0.001, 0.004])
    plot = plots.predicted_vs_measured(np.array([0.2, 0.9, 0.1]), seconds)
    assert plot.figure.axes[0].get_xscale() == "log"
    # the model's first pick (score 0.9) is the fastest candidate
    assert "3 held-out candidates measured from 1.000 ms to 4.000 ms" in plot.summary
    assert "the model's first pick takes 1.000 ms, rank 1 of 3" in plot.summary
    plot = plots.predicted_vs_measured(np.array([0.9, 0.2, 0.1]), seconds)
    assert "first pick takes 2.000 ms, rank 2 of 3" in plot.summary
    plot = plots.search_curves(np.array([0.002, 0.001, 0.001]), np.array([0.003, 0.0015, 0.001]))
    assert len(plot.figure.axes[0].lines) == 2
    assert "the best time, 1.000 ms, is found after 2 of 3 measurements" in plot.summary
    assert "after 2 measurements in a random order the best time found is 1.500 ms on average" in plot.summary


def test_a_plot_displays_once_as_png_with_its_summary_as_alt_text():
    plot = plots.speedup_bars(_comparison(), "title")
    assert plot.figure.number not in plt.get_fignums()  # closed in pyplot: the inline backend will not show it again
    data, metadata = plot.mimebundle()
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    png = base64.b64decode(data["image/png"])
    # drawn at twice the size it is shown at: sharp on high-density screens
    assert metadata == {"image/png": {"alt": plot.summary, "width": plots.png_width(png) // plots.SCALE}}
    once = io.BytesIO()
    plot.figure.savefig(once, format="png", bbox_inches="tight")  # the figure at its displayed size
    assert abs(plots.png_width(png) - plots.SCALE * plots.png_width(once.getvalue())) <= plots.SCALE
    assert repr(plot) == f"<plot: {plot.summary}>"
