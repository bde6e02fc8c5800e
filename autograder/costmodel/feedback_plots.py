"""The two figures of a graded cost model's feedback, as SVG drawn from the grader's own record.

- `ranking_figure`: the model's score against the measured time of each held-out candidate of
  the first ranking split (a good model's points fall from top left to bottom right), its top k
  marked;
- `search_figure`: the fraction of the pool's best found after each measurement, the mean over
  the replayed searches, the student's model beside the instructor's (the self-check: the public
  baseline's) and random order's exact expectation, with the goal (a schedule within
  scoring.NEAR_BEST of the best) as a line.

Both read `CostModelResult.plot` (grade.py; the self-check's `SelfCheckResult.plot`, which the
student's kernel draws with the same functions: nbgrader_ext/cost_model_cells.py) and nothing a
student wrote: the only text in them is
this module's, and every number is checked (finite, the lengths that belong together, at most
MAX_POINTS) before it is drawn; a record that fails a check draws no figure. Hand-written SVG,
not matplotlib: the grading process never imports a plotting library, and the figure is a few
kilobytes. nbgrader's feedback page shows an SVG output as an <img> (a data URL), where nothing
in it could run.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

MAX_POINTS = 4096  # more than any table's held-out candidates or a search's budget
WIDTH, HEIGHT = 520, 320
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 34, 48  # the plot area's margins
COLOURS = {"student": "#1f77b4", "instructor": "#2ca02c", "baseline": "#2ca02c", "random": "#7f7f7f", "top": "#d62728",
           "goal": "#ff7f0e"}
# The model a search figure draws beside the student's: the class run's bar, or the self-check's baseline
REFERENCES = {"instructor": "the instructor's model", "baseline": "the public baseline"}


@dataclass(frozen=True)
class Figure:
    svg: str
    text: str  # what it shows, in words: the output's text/plain, and the SVG's <title>


def _numbers(value, positive: bool = False) -> list[float] | None:
    """`value` as a list of finite floats (positive ones where asked), or None if it is not one."""
    if not isinstance(value, list) or not 0 < len(value) <= MAX_POINTS:
        return None
    if not all(type(v) in (int, float) and math.isfinite(v) and (v > 0 or not positive) for v in value):
        return None
    return [float(v) for v in value]


def _scale(values: list[float], low: float, high: float, start: float, end: float) -> list[float]:
    """`values` mapped from [low, high] onto [start, end]; halves first, so that no span of
    finite floats overflows."""
    span = high / 2 - low / 2
    if span <= 0:
        return [(start + end) / 2 for _ in values]
    return [start + (v / 2 - low / 2) / span * (end - start) for v in values]


def _frame(title: str, x_label: str, y_label: str, text: str) -> list[str]:
    right, bottom = WIDTH - RIGHT, HEIGHT - BOTTOM
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" '
        'font-family="sans-serif" font-size="11" role="img">',
        f"<title>{escape(text)}</title>",
        f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>',
        f'<text x="{WIDTH / 2:.1f}" y="18" text-anchor="middle" font-size="13">{escape(title)}</text>',
        f'<line x1="{LEFT}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="black"/>',
        f'<line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}" stroke="black"/>',
        f'<text x="{(LEFT + right) / 2:.1f}" y="{HEIGHT - 10}" text-anchor="middle">{escape(x_label)}</text>',
        f'<text x="16" y="{(TOP + bottom) / 2:.1f}" text-anchor="middle" '
        f'transform="rotate(-90 16 {(TOP + bottom) / 2:.1f})">{escape(y_label)}</text>',
    ]


def _x_tick(x: float, label: str) -> str:
    bottom = HEIGHT - BOTTOM
    return (f'<line x1="{x:.1f}" y1="{bottom}" x2="{x:.1f}" y2="{bottom + 4}" stroke="black"/>'
            f'<text x="{x:.1f}" y="{bottom + 16}" text-anchor="middle">{escape(label)}</text>')


def _y_tick(y: float, label: str) -> str:
    return (f'<line x1="{LEFT - 4}" y1="{y:.1f}" x2="{LEFT}" y2="{y:.1f}" stroke="black"/>'
            f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(label)}</text>')


def _legend(entries: list[tuple[str, str, str]], bottom: bool = False) -> list[str]:
    """(colour, dash pattern, "" for a solid line or "dot" for a point, label) a line each, at the
    plot area's top right (or bottom right, where the curves run along the top)."""
    out = []
    first = HEIGHT - BOTTOM - 8 - 15 * (len(entries) - 1) if bottom else TOP + 12
    for row, (colour, dash, label) in enumerate(entries):
        y = first + 15 * row
        x = WIDTH - RIGHT - 210
        if dash == "dot":
            mark = f'<circle cx="{x + 11}" cy="{y - 4}" r="3.5" fill="{colour}"/>'
        else:
            dashes = f' stroke-dasharray="{dash}"' if dash else ""
            mark = f'<line x1="{x}" y1="{y - 4}" x2="{x + 22}" y2="{y - 4}" stroke="{colour}" stroke-width="2"{dashes}/>'
        out.append(f'{mark}<text x="{x + 28}" y="{y}">{escape(label)}</text>')
    return out


def _log_ticks(low_ms: float, high_ms: float) -> list[float]:
    """Times to label on a log axis from low_ms to high_ms: 1, 2 and 5 times powers of ten."""
    ticks = []
    for power in range(math.floor(math.log10(low_ms)), math.ceil(math.log10(high_ms)) + 1):
        ticks += [m * 10.0 ** power for m in (1, 2, 5) if low_ms <= m * 10.0 ** power <= high_ms]
    return ticks or [low_ms, high_ms]


def ranking_figure(record) -> Figure | None:
    """Predicted score against measured time, one point a held-out candidate of the first split."""
    if not isinstance(record, dict):
        return None
    seconds, scores = _numbers(record.get("seconds"), positive=True), _numbers(record.get("scores"))
    top_k = record.get("top_k")
    if seconds is None or scores is None or len(seconds) != len(scores) or type(top_k) is not int or top_k < 1:
        return None
    n = len(seconds)
    text = (f"Your model's score against the measured time of the {n} candidates held out of the first ranking "
            f"split (fitted on the others); your model's top {top_k} marked in red. A model that ranks well puts "
            "the fastest candidates (left) highest.")
    milliseconds = [s * 1e3 for s in seconds]
    low, high = min(milliseconds), max(milliseconds)
    if high <= low:
        low, high = low / 1.5, high * 1.5
    logs = [math.log10(m) for m in milliseconds]
    xs = _scale(logs, math.log10(low), math.log10(high), LEFT + 8, WIDTH - RIGHT - 8)
    ys = _scale(scores, min(scores), max(scores), HEIGHT - BOTTOM - 8, TOP + 8)
    top = set(sorted(range(n), key=lambda i: -scores[i])[:top_k])  # as scoring.top_k_score picks them
    svg = _frame("Predicted against measured (held-out candidates)", "measured time (ms, log scale)",
                 "your model's score (higher = faster)", text)
    for tick in _log_ticks(low, high):
        (x,) = _scale([math.log10(tick)], math.log10(low), math.log10(high), LEFT + 8, WIDTH - RIGHT - 8)
        svg.append(_x_tick(x, f"{tick:g}"))
    svg += [_y_tick(HEIGHT - BOTTOM - 8, f"{min(scores):.3g}"), _y_tick(TOP + 8, f"{max(scores):.3g}")]
    for i in range(n):
        kind, colour = ("top-k", COLOURS["top"]) if i in top else ("held-out", COLOURS["student"])
        svg.append(f'<circle class="candidate {kind}" cx="{xs[i]:.1f}" cy="{ys[i]:.1f}" r="3.5" fill="{colour}" '
                   'fill-opacity="0.75"/>')
    svg += _legend([(COLOURS["student"], "dot", "held-out candidate"), (COLOURS["top"], "dot", f"your model's top {top_k}")])
    svg.append("</svg>")
    return Figure("\n".join(svg), text)


def search_figure(record) -> Figure | None:
    """The fraction of the pool's best found against measurements: the student's model, the
    reference (the instructor's, or in the self-check the baseline: whichever one the record
    holds), random order's expectation, and the goal."""
    if not isinstance(record, dict):
        return None
    references = [name for name in REFERENCES if name in record]
    if len(references) != 1:
        return None
    reference = references[0]
    curves = {name: _numbers(record.get(name), positive=True) for name in ("student", reference, "random")}
    goal, searches = record.get("goal"), record.get("searches")
    lengths = {len(c) for c in curves.values() if c is not None}
    if (any(c is None for c in curves.values()) or len(lengths) != 1 or type(goal) is not float
            or not 0 < goal <= 1 or type(searches) is not int or searches < 1):
        return None
    budget = lengths.pop()
    values = [v for c in curves.values() if c is not None for v in c]
    if max(values) > 1 + 1e-9:  # a fraction of the pool's best: never above 1
        return None
    floor = min(0.9, math.floor(min(values + [goal]) * 10) / 10)
    text = (f"The fraction of the pool's best time found after each of {budget} measurements, the mean of "
            f"{searches} replayed searches: your model, {REFERENCES[reference]}, and measuring in a random order "
            f"(its exact expectation). The dashed line is the goal, a schedule within {1 / goal - 1:.0%} of the best; "
            "a search stops when it reaches it.")
    xs = _scale([float(t) for t in range(1, budget + 1)], 1.0, float(max(budget, 2)), LEFT + 8, WIDTH - RIGHT - 8)

    def y(value: float) -> float:
        return _scale([value], floor, 1.0, HEIGHT - BOTTOM - 4, TOP + 4)[0]

    svg = _frame("Search: the best found so far", "measurements", "fraction of the pool's best", text)
    for t in sorted({1, *range(8, budget + 1, 8), budget} if budget >= 16 else set(range(1, budget + 1))):
        svg.append(_x_tick(xs[t - 1], str(t)))
    steps = [floor + i / 10 for i in range(round((1 - floor) * 10) + 1)]
    svg += [_y_tick(y(v), f"{v:.1f}") for v in steps]
    svg.append(f'<line class="goal" x1="{LEFT}" y1="{y(goal):.1f}" x2="{WIDTH - RIGHT}" y2="{y(goal):.1f}" '
               f'stroke="{COLOURS["goal"]}" stroke-dasharray="6 4"/>')
    dashes = {"student": "", reference: "", "random": "3 3"}
    for name, curve in curves.items():
        assert curve is not None
        points = " ".join(f"{xs[t]:.1f},{y(v):.1f}" for t, v in enumerate(curve))
        dash = f' stroke-dasharray="{dashes[name]}"' if dashes[name] else ""
        svg.append(f'<polyline class="curve {name}" points="{points}" fill="none" stroke="{COLOURS[name]}" '
                   f'stroke-width="2"{dash}/>')
    svg += _legend([(COLOURS["student"], "", "your model"), (COLOURS[reference], "", REFERENCES[reference]),
                    (COLOURS["random"], "3 3", "random order (expected)"),
                    (COLOURS["goal"], "6 4", f"within {1 / goal - 1:.0%} of the best")], bottom=True)
    svg.append("</svg>")
    return Figure("\n".join(svg), text)


def figures(plot) -> dict[str, Figure]:
    """The figures `plot` (CostModelResult.plot, as the graded notebook keeps it) can draw, by part."""
    if not isinstance(plot, dict):
        return {}
    drawn = {"ranking": ranking_figure(plot.get("ranking")), "search": search_figure(plot.get("search"))}
    return {part: figure for part, figure in drawn.items() if figure is not None}
