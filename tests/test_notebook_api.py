"""notebook_api.py: what an assignment's self-check cell calls."""
from __future__ import annotations

import pytest

import autograder
from autograder.notebook_api import schedule_source


def my_tiling(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    yo, yi = sch.split(yy, factors=[None, 16])
    xo, xi = sch.split(xx, factors=[None, 16])
    sch.reorder(yo, xo, yi, xi)
    sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
    sch.reverse_compute_at(sch.get_sblock("compute"), xo)


def test_source_of_a_function_under_another_name_is_aliased():
    source = schedule_source(my_tiling)
    assert source.startswith("def my_tiling(sch):")
    assert source.rstrip().endswith("schedule = my_tiling")
    assert schedule_source("def schedule(sch): pass") == "def schedule(sch): pass"


def test_a_builtin_has_no_source():
    with pytest.raises(ValueError, match="cannot read the source"):
        schedule_source(len)


@pytest.mark.slow
def test_check_grades_a_function_with_setting_overrides():
    result = autograder.check("tile-fused-conv", my_tiling, timing_rounds=3, min_repeat_ms=5)
    assert result.status == "passed" and result.check("fusion").passed
    assert "PASSED" in result._repr_html_()


def test_unknown_setting_is_a_clear_error():
    with pytest.raises(TypeError, match="timing_round"):
        autograder.check("tile-fused-conv", my_tiling, timing_round=3)
