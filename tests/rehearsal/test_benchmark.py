"""rehearsal/benchmark.py: `tvm-course bench-grading` at tiny sizes. The benchmark itself, at a
class's size and with plain nbgrader beside it, is a command that prints numbers, not a test:
here the tvm-course half runs end to end on two submissions, and the plain-nbgrader half's
course is built and checked without running its kernels (a minute and more on 2 cores)."""
from __future__ import annotations

import io
import re
from collections import Counter

import pytest

from autograder.rehearsal.benchmark import MIX, ratio_line
from autograder.rehearsal.scratch_course import mix_cycle


def test_a_class_mix_keeps_its_proportions_in_any_first_part_of_the_class():
    cycle = mix_cycle(MIX)
    assert Counter(cycle) == Counter(MIX)
    assert set(cycle[:10]) >= {"ada", "ben", "cleo", "dev"}  # the first half holds every common outcome
    assert Counter(cycle[:10])["ada"] == MIX["ada"] // 2


def test_the_last_line_is_the_one_scripts_read():
    line = ratio_line(41.25, 9.5)
    found = re.fullmatch(r"tvm-course: ([\d.]+) per minute; plain nbgrader: ([\d.]+) per minute; ratio ([\d.]+)", line)
    assert found and found.groups() == ("41.2", "9.5", "4.34")


def test_the_plain_course_grades_in_the_kernel_with_nbgraders_own_configuration(tmp_path):
    import nbformat

    from autograder.rehearsal.benchmark import ASSIGNMENT, PLAIN_SELF_CHECK, _plain_course
    from autograder.rehearsal.scratch_course import BUNDLED_COURSE

    plain = _plain_course(BUNDLED_COURSE, tmp_path)
    config = (plain / "nbgrader_config.py").read_text()
    assert "autograder" not in config and "Execute.kernel_name" in config  # nbgrader's pipeline, the notebook run
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in
             nbformat.read(plain / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4).cells}
    assert cells["self-check"].source == PLAIN_SELF_CHECK  # grades whatever NBGRADER_EXECUTION says
    assert "points(result" in cells["correctness"].source  # the test cells score that kernel's result


@pytest.mark.slow
def test_the_benchmark_grades_a_tiny_class_and_says_what_each_step_cost():
    from autograder.rehearsal.benchmark import run_benchmark

    out = io.StringIO()
    measured = run_benchmark(copies=2, workers=1, samples=["dev"], out=out, peer=False)
    text = out.getvalue()
    numbers = measured["local pool, 1 worker"]
    assert numbers["median"] > 0 and numbers["cpu_per_submission"] > 0.1  # the whole tree's CPU, not this process's
    assert re.search(r"^local pool, 1 worker: [\d.]+ submissions per minute \([\d.]+ s per submission, [\d.]+ CPU s", text, re.M)
    for step in ("nbgrader autograde", "nbgrader feedback", "gradebook merge", "gradebook copy", "trusted student"):
        assert re.search(rf"^  {step} +\d+\.\d+ \[\d+\.\d+\] over 2$", text, re.M), (step, text)
    assert "grading failed" not in text and "expected" not in text  # dev graded as its sample says
