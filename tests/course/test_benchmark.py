"""course/benchmark.py: `tvm-course bench-grading` runs end to end at tiny sizes (the benchmark
itself, at a class's size, is a command that prints numbers: not a test)."""
from __future__ import annotations

import io
import re
from collections import Counter

import pytest

from autograder.course.benchmark import MIX
from autograder.course.scratch_course import mix_cycle


def test_a_class_mix_keeps_its_proportions_in_any_first_part_of_the_class():
    cycle = mix_cycle(MIX)
    assert Counter(cycle) == Counter(MIX)
    assert set(cycle[:10]) >= {"ada", "ben", "cleo", "dev"}  # the first half holds every common outcome
    assert Counter(cycle[:10])["ada"] == MIX["ada"] // 2


@pytest.mark.slow
def test_the_benchmark_grades_a_tiny_class_both_ways_and_ends_with_the_ratio():
    from autograder.course.benchmark import run_benchmark

    out = io.StringIO()
    measured = run_benchmark(copies=2, workers=1, samples=["dev"], out=out, peer_copies=1)
    text = out.getvalue()
    last = text.strip().splitlines()[-1]
    found = re.fullmatch(r"tvm-course: ([\d.]+) per minute; plain nbgrader: ([\d.]+) per minute; ratio ([\d.]+)", last)
    assert found, text
    ours, theirs, ratio = (float(g) for g in found.groups())
    assert ours > 0 and theirs > 0 and ratio == pytest.approx(ours / theirs, rel=0.05)
    assert measured["local pool, 1 worker"]["cpu_per_submission"] > 0 and measured["plain nbgrader"]["cpu_per_submission"] > 0
    for step in ("nbgrader autograde", "nbgrader feedback", "gradebook merge", "gradebook copy", "trusted student"):
        assert re.search(rf"^  {step} +\d+\.\d+ \[", text, re.M), (step, text)
    assert "grading failed" not in text and "expected" not in text  # dev graded as its sample says, both times
