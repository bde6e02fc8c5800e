"""autograder/nbgrader_ext/safe_arithmetic.py: answers are read, never run."""
from __future__ import annotations

import time

import pytest

from autograder.nbgrader_ext.safe_arithmetic import read_assignments
from autograder.problems.variants import JOURNAL


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


# The trusted grader reads every submission in one process: an answer must never raise out of
# read_assignments nor make it run for long. Each of these is an unreadable answer (zero for
# that question, with the reason), read in well under a second.
HOSTILE_ANSWERS = {
    "a 401-digit literal": "X = 1" + "0" * 400,
    "a 401-digit negative literal": "X = -1" + "0" * 400,
    "a huge literal in arithmetic": "X = 1" + "0" * 400 + " * 2",
    "round to huge negative digits": "X = round(5, -10**29)",
    "round to huge positive digits": "X = round(5, 10**29)",
    "round of a float to huge negative digits": "X = round(5.5, -10**29)",
    "round to fractional digits": "X = round(5, 0.5)",
    "a power of a huge base": "X = (10**30) ** 64 * 10**30",
    "an int power past the bound": "X = (10**30) ** 2",
    "a float power that overflows": "X = 1e30 ** 64",
    "a product past the bound": "X = 10**30 * 10**30",
    "a shift": "X = 1 << 10**29",
    "a huge exponent through a name": "E = 10**29\nX = 2 ** E",
    "repeated squaring": "X = 2\n" + "X = X ** 64\n" * 20,
    "repeated multiplication": "X = 10**15\n" + "X *= X\n" * 40,
    "a 5000-digit literal": "X = " + "9" * 5000,
    "deep parentheses": "X = " + "(" * 300 + "1" + ")" * 300,
    "a long left-nested sum": "X = " + "+".join(["1"] * 5000),
    "deeply nested unary minus": "X = " + "-" * 200000 + "1",
    "a very long cell": "X = 1\n" * 100_000,
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("source", HOSTILE_ANSWERS.values(), ids=HOSTILE_ANSWERS.keys())
def test_hostile_answers_are_unreadable_fast_never_an_exception(source):
    started = time.monotonic()
    read = read_assignments(source)
    assert time.monotonic() - started < 2.0
    assert "X" not in read.values
    assert "X" in read.problems or read.notes
    why = read.problems.get("X") or read.notes[0]
    assert "Traceback" not in why and len(why) < 300


def test_an_overflowing_answer_scores_zero_for_its_question_only():
    from autograder.nbgrader_ext.plan import load_plan
    from autograder.nbgrader_ext.questions import mark_answers

    from .conftest import source_notebook

    read = read_assignments("TILES_PER_CHANNEL = 196\nTILE_BYTES = 1" + "0" * 400)
    assert read.values == {"TILES_PER_CHANNEL": 196}
    assert "too large" in read.problems["TILE_BYTES"]
    key = load_plan(source_notebook("tiling")).answers["tile-arithmetic"].key_for(JOURNAL)
    fraction, verdicts = mark_answers(key, read.values, read.problems)
    by_name = {v.name: v for v in verdicts}
    assert by_name["TILES_PER_CHANNEL"].right and not by_name["TILE_BYTES"].right
    assert "could not be read" in by_name["TILE_BYTES"].message and fraction == 0.25


@pytest.mark.timeout(30)
def test_round_with_reasonable_digits_still_works():
    read = read_assignments("A = round(1234, -2)\nB = round(2.675, 2)\nC = round(7, 64)")
    assert read.values == {"A": 1200, "B": 2.67, "C": 7}
    assert "out of range" in read_assignments("X = round(5, 65)").problems["X"]
