"""Lesson 2's figures: the tile grid with one tile's input halo, loop nests as nested boxes, and a
roofline of the schedules measured.

Each returns a `plots.Plot` (the figure and a one-line summary computed from the same numbers,
shown as its alt text and printed after it). The numbers come from the caller: the workload's
shapes, the loop nests TVM printed, the times the lesson measured; nothing here is a constant
of some machine.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from .plots import Plot, _finish, _pyplot

# --- the tile grid and the halo ---------------------------------------------------------------


def tile_grid(output_hw: tuple[int, int], tile_hw: tuple[int, int], halo_hw: tuple[int, int], padding: int,
              tile: tuple[int, int] = (1, 2), title: str = "") -> Plot:
    """The output plane cut into tiles, and the window of the padded input one tile reads.

    `output_hw` the output's rows and columns, `tile_hw` a tile's, `halo_hw` the rows and columns
    of padded input a tile reads (what compaction shrank `pad_temp` to), `padding` the zero
    border; `tile` (row, column) picks the tile to highlight.
    """
    plt = _pyplot()
    from matplotlib.patches import Rectangle

    (height, width), (tile_h, tile_w), (halo_h, halo_w) = output_hw, tile_hw, halo_hw
    rows, columns = -(-height // tile_h), -(-width // tile_w)
    row, column = tile
    if not (0 <= row < rows and 0 <= column < columns):
        raise ValueError(f"tile {tile} is outside the {rows} x {columns} grid")
    # Coordinates: the padded input's, so the output's pixel (0, 0) sits at (padding, padding).
    top, left = row * tile_h, column * tile_w  # the tile's first padded-input row and column of its window
    fig, ax = plt.subplots(figsize=(5.6, 5.6))
    ax.add_patch(Rectangle((0, 0), width + 2 * padding, height + 2 * padding, facecolor="0.93", edgecolor="0.4",
                           linewidth=1, label=f"padded input {height + 2 * padding} x {width + 2 * padding}"))
    for r in range(rows + 1):
        y = padding + min(r * tile_h, height)
        ax.plot([padding, padding + width], [y, y], color="0.55", linewidth=0.6)
    for c in range(columns + 1):
        x = padding + min(c * tile_w, width)
        ax.plot([x, x], [padding, padding + height], color="0.55", linewidth=0.6)
    ax.add_patch(Rectangle((left, top), halo_w, halo_h, facecolor="tab:orange", alpha=0.45, edgecolor="tab:orange",
                           linewidth=1.5, label=f"input window one tile reads: {halo_h} x {halo_w}"))
    ax.add_patch(Rectangle((padding + left, padding + top), tile_w, tile_h, facecolor="tab:blue", alpha=0.8,
                           edgecolor="tab:blue", label=f"one output tile: {tile_h} x {tile_w}"))
    ax.set_xlim(-2, width + 2 * padding + 2)
    ax.set_ylim(height + 2 * padding + 2, -2)  # row 0 at the top, as in an image
    ax.set_aspect("equal")
    ax.set_xlabel("column of the padded input")
    ax.set_ylabel("row of the padded input")
    ax.legend(loc="upper right", fontsize="small", framealpha=0.95)
    # A zoom on the highlighted tile, pixel by pixel, with the kernel's window at its first pixel.
    zoom = ax.inset_axes([0.43, 0.06, 0.52, 0.52])
    zoom.add_patch(Rectangle((left, top), halo_w, halo_h, facecolor="tab:orange", alpha=0.45, edgecolor="tab:orange"))
    zoom.add_patch(Rectangle((padding + left, padding + top), tile_w, tile_h, facecolor="tab:blue", alpha=0.8, edgecolor="tab:blue"))
    for r in range(halo_h + 1):
        zoom.plot([left, left + halo_w], [top + r, top + r], color="white", linewidth=0.4)
    for c in range(halo_w + 1):
        zoom.plot([left + c, left + c], [top, top + halo_h], color="white", linewidth=0.4)
    kernel_h, kernel_w = halo_h - tile_h + 1, halo_w - tile_w + 1
    zoom.add_patch(Rectangle((left, top), kernel_w, kernel_h, facecolor="none", edgecolor="black", linewidth=1.5))
    zoom.annotate(f"{kernel_h} x {kernel_w} window of the\ntile's first output pixel", (left + kernel_w, top + kernel_h / 2),
                  (left + halo_w + 1, top + 2), fontsize=7, va="top", arrowprops={"arrowstyle": "-", "linewidth": 0.6})
    zoom.set_xlim(left - 1, left + halo_w + 9)
    zoom.set_ylim(top + halo_h + 1, top - 1)
    zoom.set_aspect("equal")
    from matplotlib.ticker import MaxNLocator

    zoom.xaxis.set_major_locator(MaxNLocator(integer=True))
    zoom.yaxis.set_major_locator(MaxNLocator(integer=True))
    zoom.tick_params(labelsize=6)
    zoom.set_title(f"tile (row {row}, column {column}), pixel by pixel", fontsize=7)
    ax.set_title(title or f"{rows} x {columns} tiles of {tile_h} x {tile_w} over a {height} x {width} output")
    fig.tight_layout()
    return _finish(fig, tile_grid_summary(output_hw, tile_hw, halo_hw, padding, tile, title))


def tile_grid_summary(output_hw, tile_hw, halo_hw, padding, tile, title: str = "") -> str:
    (height, width), (tile_h, tile_w), (halo_h, halo_w) = output_hw, tile_hw, halo_hw
    rows, columns = -(-height // tile_h), -(-width // tile_w)
    row, column = tile
    y0, x0 = row * tile_h, column * tile_w
    overlap_h, overlap_w = halo_h - tile_h, halo_w - tile_w
    return (
        f"Tile grid{': ' + title if title else ''}. The {height} x {width} output is cut into {rows} x {columns} = "
        f"{rows * columns} tiles of {tile_h} x {tile_w}; the highlighted tile (row {row}, column {column}) computes "
        f"output rows {y0}-{y0 + tile_h - 1} and columns {x0}-{x0 + tile_w - 1} and reads rows {y0}-{y0 + halo_h - 1} "
        f"and columns {x0}-{x0 + halo_w - 1} of the {height + 2 * padding} x {width + 2 * padding} padded input: "
        f"{halo_h * halo_w} input values per channel for {tile_h * tile_w} outputs "
        f"({halo_h * halo_w / (tile_h * tile_w):.2f} per output), and neighbouring tiles' windows overlap by "
        f"{overlap_h} rows or {overlap_w} columns."
    )


# --- loop nests as nested boxes ----------------------------------------------------------------

_LOOP = re.compile(r"^for (.+?) in (.+):$")


@dataclass
class Node:
    """One line of `ir_views.loop_nest`: a loop (with its variables and extents) or a block."""

    kind: str  # "loop" or "block"
    name: str  # the block's name, or the loop's variables joined by ", "
    extents: tuple = ()  # per variable: an int, or a str such as "threadIdx.x (256)"
    annotation: str = ""  # "vectorized", "unroll", "parallel", a thread axis, or ""
    children: list = field(default_factory=list)

    def label(self) -> str:
        if self.kind == "block":
            return f"block {self.name}"
        extents = " x ".join(str(e) for e in self.extents)
        note = f" ({self.annotation})" if self.annotation else ""
        return f"for {self.name} in {extents}{note}"


def _loop_domain(domain: str) -> tuple[tuple, str]:
    grid = re.fullmatch(r"T\.grid\((.*)\)", domain)
    if grid:
        return tuple(int(e) for e in grid.group(1).split(",")), ""
    plain = re.fullmatch(r"range\((\d+)\)", domain)
    if plain:
        return (int(plain.group(1)),), ""
    kind = re.fullmatch(r"T\.(\w+)\((\d+)\)", domain)
    if kind:
        return (int(kind.group(2)),), kind.group(1)
    bound = re.fullmatch(r"([\w.]+) \((\d+)\)", domain)  # loop_nest writes a bound loop as "threadIdx.x (256)"
    if bound:
        return (int(bound.group(2)),), bound.group(1)
    return (domain,), ""


def parse_loop_nest(text: str) -> list[Node]:
    """The tree of loops and blocks that `ir_views.loop_nest` printed (indentation is nesting)."""
    roots: list[Node] = []
    stack: list[tuple[int, Node]] = []
    for line in text.splitlines():
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        body = line.strip()
        loop = _LOOP.match(body)
        if loop:
            extents, annotation = _loop_domain(loop.group(2))
            node = Node("loop", loop.group(1), extents, annotation)
        elif body.startswith("block "):
            node = Node("block", body[len("block "):])
        else:
            raise ValueError(f"not a line of a loop nest: {line!r}")
        while stack and stack[-1][0] >= indent:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((indent, node))
    return roots


def _rows(nodes: list[Node]) -> int:
    return sum(1 + _rows(n.children) for n in nodes)


def _extent_text(extents) -> str:
    return "x".join(str(e) for e in extents)


def nest_summary(nodes: list[Node]) -> str:
    """Each block with the loops around it, outermost first: 'conv2d_nchw under 1x16x14x14 > 16x16x3x3x3'."""
    parts: list[str] = []

    def walk(items, outer):
        for node in items:
            if node.kind == "block":
                parts.append(f"{node.name} under {' > '.join(outer) if outer else 'no loop'}")
            else:
                walk(node.children, outer + [_extent_text(node.extents) + (f" ({node.annotation})" if node.annotation else "")])

    walk(nodes, [])
    return "; ".join(parts)


def loop_nest_diagram(nests: dict[str, str], title: str = "") -> Plot:
    """One panel per loop nest (label -> `ir_views.loop_nest` text): loops as nested boxes, blocks filled."""
    plt = _pyplot()
    from matplotlib.patches import FancyBboxPatch

    trees = {label: parse_loop_nest(text) for label, text in nests.items()}
    height = max(_rows(tree) for tree in trees.values())
    indent, char = 0.5, 0.2  # data units: one nesting level, one character of a label (fontsize 9)

    def width_of(items, depth=0) -> float:
        return max((max(depth * indent + 0.4 + char * len(n.label()), width_of(n.children, depth + 1)) for n in items), default=0)

    widths = {label: width_of(tree) + 0.2 for label, tree in trees.items()}
    fig, axes = plt.subplots(1, len(trees), figsize=(0.5 * sum(widths.values()) + 0.4, 0.42 * height + 1.0), squeeze=False,
                             gridspec_kw={"width_ratios": list(widths.values())})
    colors = {}
    palette = ["tab:gray", "tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive"]
    for ax, (label, tree) in zip(axes[0], trees.items()):
        row, right = 0, widths[label]

        def draw(items, depth, ax=ax, right=right):  # this panel's axes and width, bound here
            nonlocal row
            for node in items:
                top = row
                row += 1
                if node.kind == "block":
                    base = re.sub(r"_(init|update)$", "", node.name)
                    color = colors.setdefault(base, palette[len(colors) % len(palette)])
                    ax.add_patch(FancyBboxPatch((depth * indent, top + 0.12), right - depth * indent, 0.76,
                                                boxstyle="round,pad=0,rounding_size=0.12", facecolor=color, alpha=0.35,
                                                edgecolor=color))
                    ax.text(depth * indent + 0.2, top + 0.5, node.label(), va="center", fontsize=9, fontweight="bold")
                else:
                    draw(node.children, depth + 1)
                    ax.add_patch(FancyBboxPatch((depth * indent, top + 0.04), right - depth * indent, row - top - 0.08,
                                                boxstyle="round,pad=0,rounding_size=0.12", facecolor="none",
                                                edgecolor="0.35", linewidth=1))
                    ax.text(depth * indent + 0.2, top + 0.5, node.label(), va="center", fontsize=9, family="monospace")

        draw(tree, 0)
        ax.set_xlim(-0.1, right + 0.1)
        ax.set_ylim(height + 0.1, -0.1)
        ax.axis("off")
        ax.set_title(label, fontsize=11)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    summary = (
        f"Diagram{': ' + title if title else ''}. Loops drawn as nested boxes, blocks filled; "
        + " | ".join(f"{label}: {nest_summary(tree)}" for label, tree in trees.items())
        + "."
    )
    return _finish(fig, summary)


# --- the roofline --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Point:
    """One schedule on the roofline: FLOP per byte of memory traffic, and achieved GFLOP/s."""

    name: str
    intensity: float
    gflops: float


def attainable(intensity, peak_gflops: float, bandwidth_gbs: float):
    """The roofline: min(compute peak, bandwidth x intensity), in GFLOP/s."""
    return np.minimum(peak_gflops, bandwidth_gbs * np.asarray(intensity, dtype=float))


def roofline(points: list[Point], peak_gflops: float, bandwidths: dict[str, float], title: str = "",
             peak_label: str = "FMA peak") -> Plot:
    """Log-log roofline: the measured compute peak, one memory roof per measured bandwidth
    (label -> GB/s), and the schedules at their intensity and achieved speed."""
    plt = _pyplot()
    intensities = np.array([p.intensity for p in points])
    lowest = min(intensities.min(), min(peak_gflops / b for b in bandwidths.values())) / 4
    highest = max(intensities.max(), max(peak_gflops / b for b in bandwidths.values())) * 4
    xs = np.geomspace(lowest, highest, 200)
    fig, ax = plt.subplots(figsize=(10, 4.4))
    styles = ["-", "--", ":", "-."]
    for (label, bandwidth), style in zip(bandwidths.items(), styles):
        ax.plot(xs, attainable(xs, peak_gflops, bandwidth), color="0.3", linestyle=style,
                label=f"roof with {label}: {bandwidth:.1f} GB/s")
    ax.axhline(peak_gflops, color="tab:red", linewidth=0.8, alpha=0.6, label=f"measured {peak_label}: {peak_gflops:.1f} GFLOP/s")
    markers = ["o", "s", "^", "D", "v", "P", "X", "*"]
    for point, marker in zip(points, markers * 4):
        ax.scatter([point.intensity], [point.gflops], marker=marker, s=60, zorder=3, label=f"{point.name}: {point.gflops:.1f} GFLOP/s")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity (FLOP per byte of memory traffic, log scale)")
    ax.set_ylabel("GFLOP/s (log scale)")
    ax.set_ylim(min(p.gflops for p in points) / 3, peak_gflops * 2)
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize="small", borderaxespad=0)
    ax.set_title(title)
    fig.tight_layout()
    return _finish(fig, roofline_summary(points, peak_gflops, bandwidths, title, peak_label))


def roofline_summary(points: list[Point], peak_gflops: float, bandwidths: dict[str, float], title: str = "",
                     peak_label: str = "FMA peak") -> str:
    roofs = "; ".join(f"{label} {bw:.1f} GB/s (ridge at {peak_gflops / bw:.1f} FLOP/byte)" for label, bw in bandwidths.items())
    schedules = "; ".join(
        f"{p.name} at {p.intensity:.1f} FLOP/byte reaches {p.gflops:.1f} GFLOP/s ({100 * p.gflops / peak_gflops:.0f}% of peak)"
        for p in points
    )
    return (
        f"Roofline{': ' + title if title else ''}. Measured {peak_label} {peak_gflops:.1f} GFLOP/s; memory roofs: {roofs}. "
        f"{schedules}."
    )
