"""autograder/nbgrader_ext/safe_arithmetic.py: answers are read, never run."""
from __future__ import annotations

import time

import pytest

from autograder.nbgrader_ext.safe_arithmetic import read_assignments


def test_reads_numbers_and_arithmetic_in_order():
    read = read_assignments("TILE = 16\nTILES = (224 // TILE) ** 2\nBYTES: int = TILE * TILE * 4\nBYTES += 0\nHALF = 7 / 2\n")
    assert read.values == {"TILE": 16, "TILES": 196, "BYTES": 1024, "HALF": 3.5}
    assert read.problems == {} and read.notes == []


def test_a_few_pure_functions_are_allowed():
    read = read_assignments("A = math.ceil(224 / 15)\nB = floor(2.5)\nC = max(3, 4) - abs(-1)\nD = round(2.6)")
    assert read.values == {"A": 15, "B": 2, "C": 3, "D": 3}


def test_other_code_is_reported_not_run(tmp_path):
    marker = tmp_path / "ran"
    source = (
        f"X = open({str(marker)!r}, 'w').write('x')\n"
        "Y = __import__('os').getpid()\n"
        "Z = helper()\n"
        "W = 'text'\n"
        "V = undefined + 1\n"
    )
    read = read_assignments(source)
    assert read.values == {}
    assert set(read.problems) == {"X", "Y", "Z", "W", "V"}
    assert "helper()" in read.problems["Z"] and "does not run" in read.problems["Z"]
    assert "not a number" in read.problems["W"]
    assert "assigned earlier" in read.problems["V"]
    assert not marker.exists()


def test_a_later_valid_assignment_replaces_an_unreadable_one():
    read = read_assignments("X = helper()\nX = 3")
    assert read.values == {"X": 3} and "X" not in read.problems


def test_stops_at_a_raise_as_python_would():
    read = read_assignments("A = 1\nraise NotImplementedError()\nB = 2")
    assert read.values == {"A": 1}
    assert "raises" in read.notes[0]


def test_syntax_errors_are_a_note():
    read = read_assignments("A = (1 +")
    assert read.values == {} and "syntax error on line 1" in read.notes[0]


@pytest.mark.parametrize("expression", ["2 ** 10 ** 10", "10.0 ** 400", "1e30 ** 60", "1 / 0", "(-8) ** 0.5", "True", "round(1, 2, 3)", "int(1e300) * 10 ** 10"])
def test_expressions_that_would_be_slow_or_not_numbers_are_refused_fast(expression):
    started = time.monotonic()
    read = read_assignments(f"X = {expression}")
    assert "X" in read.problems and read.values == {}
    assert time.monotonic() - started < 1.0
