"""The lessons' figures: speedup bars and the cost model's predicted-versus-measured views.

Each helper returns a `Plot`: the matplotlib figure and a one-line summary of what it shows,
computed from the same measured data. In a notebook a Plot shows the figure, with the summary as
its alt text (output metadata `image/png` -> `alt`, which nbconvert writes into the page's <img>),
and then prints the summary, so that what the plot says is also there as text.

The PNG is rendered at SCALE times the size it is shown at (output metadata `image/png` ->
`width`, in CSS pixels, which JupyterLab and nbconvert both honour), so it stays sharp on
high-density screens. PNG rather than SVG: nbconvert writes an SVG output as an <img> without
alt text.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass

import numpy as np


SCALE = 2  # PNG pixels per displayed (CSS) pixel


def png_width(png: bytes) -> int:
    """The width in pixels that a PNG's header gives (bytes 16-19 of the IHDR chunk)."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return int.from_bytes(png[16:20], "big")


def _pyplot():
    import matplotlib.pyplot as plt

    return plt


@dataclass
class Plot:
    """A figure and a one-line text summary of it, computed from the plotted data."""

    figure: object  # matplotlib.figure.Figure
    summary: str

    def png(self) -> bytes:
        """The figure as PNG, SCALE times the pixels of its displayed size."""
        buffer = io.BytesIO()
        self.figure.savefig(buffer, format="png", bbox_inches="tight", dpi=SCALE * self.figure.dpi)
        return buffer.getvalue()

    def mimebundle(self) -> tuple[dict, dict]:
        """(data, metadata) of the figure's display output: the PNG with the summary as its alt
        text and its displayed width (1/SCALE of its pixels)."""
        png = self.png()
        data = {"image/png": base64.b64encode(png).decode("ascii"), "text/plain": f"<plot: {self.summary}>"}
        return data, {"image/png": {"alt": self.summary, "width": png_width(png) // SCALE}}

    def _ipython_display_(self) -> None:
        from IPython.display import display

        data, metadata = self.mimebundle()
        display(data, raw=True, metadata=metadata)
        print(self.summary)

    def __repr__(self) -> str:
        return f"<plot: {self.summary}>"


def _finish(fig, summary: str) -> Plot:
    """Take the figure away from pyplot (the Plot displays it, once) and pair it with its summary."""
    _pyplot().close(fig)
    return Plot(fig, summary)


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"


def speedup_summary(comparison, title: str = "") -> str:
    parts = []
    for name in comparison.names:
        s = comparison.speedup(name)
        if name == comparison.baseline:
            parts.append(f"{name} 1.00x (the baseline)")
        else:
            parts.append(f"{name} {s.median:.2f}x (middle half {s.q1:.2f}x to {s.q3:.2f}x)")
    lead = f"Bar chart{': ' + title if title else ''}. Speedup over '{comparison.baseline}', >1 is faster: "
    return lead + "; ".join(parts) + "."


def predicted_vs_measured_summary(scores, seconds, title: str = "") -> str:
    scores, seconds = np.asarray(scores), np.asarray(seconds)
    n = len(seconds)
    top = int(np.argmax(scores))
    rank = int(np.sum(seconds < seconds[top])) + 1
    return (
        f"Scatter plot{': ' + title if title else ''}. {n} held-out candidates measured from "
        f"{_ms(seconds.min())} to {_ms(seconds.max())}; the model's first pick takes {_ms(seconds[top])}, "
        f"rank {rank} of {n} by measured time (1 is the fastest, {_ms(seconds.min())})."
    )


def search_curves_summary(model_curve, random_curve, title: str = "") -> str:
    model_curve, random_curve = np.asarray(model_curve), np.asarray(random_curve)
    n = len(model_curve)
    best = float(model_curve[-1])
    found = int(np.argmax(model_curve <= best)) + 1
    return (
        f"Step chart{': ' + title if title else ''}. In the model's order the best time, {_ms(best)}, "
        f"is found after {found} of {n} measurements; after {found} measurements in a random order "
        f"the best time found is {_ms(float(random_curve[found - 1]))} on average."
    )


def speedup_bars(comparison, title: str = "") -> Plot:
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
    return _finish(fig, speedup_summary(comparison, title))


def predicted_vs_measured(scores, seconds, title: str = "") -> Plot:
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
    return _finish(fig, predicted_vs_measured_summary(scores, seconds, title))


def search_curves(model_curve, random_curve, title: str = "") -> Plot:
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
    return _finish(fig, search_curves_summary(model_curve, random_curve, title))
