import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest

from autograder.lessons import figures

JOURNAL_NEST = """\
for i0, i1, i2, i3 in T.grid(1, 3, 226, 226):
    block pad_temp
for nn, ff, yy_0, xx_0 in T.grid(1, 16, 14, 14):
    for yy_1, xx_1, rc, ry, rx in T.grid(16, 16, 3, 3, 3):
        block conv2d_nchw
    for ax0, ax1 in T.grid(16, 16):
        block T_add
    for ax0 in T.vectorized(16):
        block compute
"""


def test_tile_grid_summary_is_the_arithmetic_of_the_shapes():
    plot = figures.tile_grid((224, 224), (16, 16), (18, 18), 1, tile=(1, 2))
    summary = plot.summary
    assert "14 x 14 = 196 tiles of 16 x 16" in summary
    assert "computes output rows 16-31 and columns 32-47 and reads rows 16-33 and columns 32-49 of the 226 x 226 padded input" in summary
    assert "324 input values per channel for 256 outputs (1.27 per output)" in summary
    assert "overlap by 2 rows or 2 columns" in summary
    with pytest.raises(ValueError, match="outside"):
        figures.tile_grid((224, 224), (16, 16), (18, 18), 1, tile=(14, 0))


def test_a_loop_nest_parses_into_loops_and_blocks():
    tree = figures.parse_loop_nest(JOURNAL_NEST)
    assert [n.kind for n in tree] == ["loop", "loop"]
    tile = tree[1]
    assert tile.extents == (1, 16, 14, 14) and [c.kind for c in tile.children] == ["loop", "loop", "loop"]
    assert tile.children[0].children[0].name == "conv2d_nchw"
    assert tile.children[2].annotation == "vectorized" and tile.children[2].label() == "for ax0 in 16 (vectorized)"
    bound = figures.parse_loop_nest("for i in threadIdx.x (256):\n    block b\n")[0]
    assert bound.extents == (256,) and bound.annotation == "threadIdx.x"
    assert figures.nest_summary(tree).startswith("pad_temp under 1x3x226x226; conv2d_nchw under 1x16x14x14 > 16x16x3x3x3")
    with pytest.raises(ValueError):
        figures.parse_loop_nest("x = 1")


def test_loop_nest_diagram_has_a_panel_per_nest():
    plot = figures.loop_nest_diagram({"before": "for i in range(4):\n    block a\n", "after": JOURNAL_NEST}, "title")
    assert len(plot.figure.axes) == 2
    assert "before: a under 4 | after: pad_temp under" in plot.summary and "compute under 1x16x14x14 > 16 (vectorized)" in plot.summary


def test_roofline_caps_at_the_lower_roof():
    assert list(figures.attainable([1.0, 10.0], 50.0, 10.0)) == [10.0, 50.0]
    points = [figures.Point("a", 2.0, 10.0), figures.Point("b", 8.0, 25.0)]
    plot = figures.roofline(points, 50.0, {"main memory": 10.0})
    ax = plot.figure.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert "Measured FMA peak 50.0 GFLOP/s; memory roofs: main memory 10.0 GB/s (ridge at 5.0 FLOP/byte)" in plot.summary
    assert "b at 8.0 FLOP/byte reaches 25.0 GFLOP/s (50% of peak)" in plot.summary
    line = ax.lines[0]
    assert np.isclose(max(line.get_ydata()), 50.0)
