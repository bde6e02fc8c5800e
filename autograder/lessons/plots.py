"""The lessons' figures: speedup bars and the cost model's predicted-versus-measured views."""
from __future__ import annotations

import numpy as np


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


def speedup_bars(comparison, title: str = ""):
    """Median speedup over the baseline per variant, whiskers at the middle half of the rounds."""
    plt = _pyplot()
    names = comparison.names
    stats = [comparison.speedup(name) for name in names]
    medians = np.array([s.median for s in stats])
    errors = np.array([[s.median - s.q1 for s in stats], [s.q3 - s.median for s in stats]])
    colors = ["tab:green" if m > 1.05 else "tab:red" if m < 0.95 else "tab:gray" for m in medians]
    fig, ax = plt.subplots(figsize=(7, 0.5 + 0.55 * len(names)))
    ax.barh(names, medians, xerr=errors, color=colors, capsize=3)
    ax.axvline(1.0, color="black", linewidth=1)
    for y, (m, upper) in enumerate(zip(medians, errors[1])):
        ax.text(m + upper, y, f"  {m:.2f}x", va="center", ha="left")
    ax.invert_yaxis()
    ax.set_xlabel(f"speedup over '{comparison.baseline}' (median of per-round ratios; >1 is faster)")
    ax.set_xlim(0, max(1.2, float(np.max(medians + errors[1])) * 1.25))
    ax.set_title(title)
    fig.tight_layout()
    return fig


def predicted_vs_measured(scores, seconds, title: str = ""):
    """The model's score against measured time for held-out candidates (log time axis)."""
    plt = _pyplot()
    scores, seconds = np.asarray(scores), np.asarray(seconds)
    best = int(np.argmin(seconds))
    top = int(np.argmax(scores))
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.scatter(seconds * 1e3, scores, color="tab:blue", label="held-out candidate")
    ax.scatter([seconds[best] * 1e3], [scores[best]], s=160, facecolors="none", edgecolors="tab:green", linewidths=2, label="fastest measured")
    ax.scatter([seconds[top] * 1e3], [scores[top]], marker="x", s=90, color="tab:red", label="model's first pick")
    ax.set_xscale("log")
    from matplotlib.ticker import FormatStrFormatter

    ax.xaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(FormatStrFormatter("%g"))
    ax.set_xlabel("measured time per run (ms, log scale)")
    ax.set_ylabel("model score (higher = predicted faster)")
    ax.legend(loc="best", fontsize="small")
    ax.set_title(title)
    fig.tight_layout()
    return fig


def search_curves(model_curve, random_curve, title: str = ""):
    """Best time found so far against measurements spent: the model's order vs a random one."""
    plt = _pyplot()
    steps = np.arange(1, len(model_curve) + 1)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.step(steps, np.asarray(model_curve) * 1e3, where="post", label="measure in the model's order")
    ax.plot(steps, np.asarray(random_curve) * 1e3, linestyle="--", label="measure in a random order (average)")
    ax.set_xlabel("candidates measured")
    ax.set_ylabel("best time so far (ms)")
    ax.legend(loc="best", fontsize="small")
    ax.set_title(title)
    fig.tight_layout()
    return fig
