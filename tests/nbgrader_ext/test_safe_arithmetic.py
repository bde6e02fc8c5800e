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
        "Z = helper()\n"
        "W = 'text'\n"
        "V = undefined + 1\n"
        "Y = __import__('os').getpid()\n"  # last: after it, any name may have been bound
    )
    read = read_assignments(source)
    assert read.values == {}
    assert set(read.problems) == {"X", "Y", "Z", "W", "V"}
    assert "helper()" in read.problems["Z"] and "does not run" in read.problems["Z"]
    assert "not a number" in read.problems["W"]
    assert "assigned earlier" in read.problems["V"]
    assert "__import__" in read.problems["Y"]
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


@pytest.mark.parametrize("expression", ["2 ** 10 ** 10", "10.0 ** 400", "1e30 ** 60", "1 / 0", "(-8) ** 0.5", "True", "round(1, 2, 3)",
                                        "int(1e300) * 10 ** 10"])
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
    "unpacking a long sum": "X, Y = " + "+".join(["1"] * 2000),
    "a store into an object under a long subscript": "X = 1\nx[" + "+".join(["1"] * 2000) + "] = 2",
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

    from bundled_course import source_notebook

    read = read_assignments("TILES_PER_CHANNEL = 196\nTILE_BYTES = 1" + "0" * 400)
    assert read.values == {"TILES_PER_CHANNEL": 196}
    assert "too large" in read.problems["TILE_BYTES"]
    key = load_plan(source_notebook("tiling")).answers["tile-arithmetic"].key_for(JOURNAL)
    fraction, verdicts = mark_answers(key, read.values, read.problems)
    by_name = {v.name: v for v in verdicts}
    assert by_name["TILES_PER_CHANNEL"].right and not by_name["TILE_BYTES"].right
    assert "TILE_BYTES: unread (line 2: " in by_name["TILE_BYTES"].message and fraction == 0.25


@pytest.mark.timeout(30)
def test_round_with_reasonable_digits_still_works():
    read = read_assignments("A = round(1234, -2)\nB = round(2.675, 2)\nC = round(7, 64)")
    assert read.values == {"A": 1200, "B": 2.67, "C": 7}
    assert "out of range" in read_assignments("X = round(5, 65)").problems["X"]


# Every statement that binds a name is read as Python runs it, or leaves the name unread with its
# line and why: never an earlier value, never "no answer" (issue 43, item 2).

def test_unpacking_chained_and_parenthesised_assignments_are_read_as_python_runs_them():
    read = read_assignments("A = 0\nB = 0\nA, B = 3 * 4, 5\nC = D = 2 + 3\n(E) = 7\n[F, (G, H)] = 1, [2, 3]\nA, B = B, A\n")
    assert read.values == {"A": 5, "B": 12, "C": 5, "D": 5, "E": 7, "F": 1, "G": 2, "H": 3}
    assert read.problems == {} and read.anything is None


def test_placeholders_then_unpacking_read_the_last_values_with_the_variants_constants():
    read = read_assignments("TILE_BYTES = 0\nWHOLE_BYTES = 0\nTILE_BYTES, WHOLE_BYTES = TILE_ROWS * TILE_COLS * 4, 2 * TILE_ROWS\n",
                            {"TILE_ROWS": 8, "TILE_COLS": 16})
    assert read.values == {"TILE_BYTES": 512, "WHOLE_BYTES": 16} and read.problems == {}


UNREAD = {  # source -> (name, line, words of the why)
    "X = 1\nif True:\n    X = 2\n": ("X", 3, "inside an `if` block (line 2)"),
    "X = 1\nfor X in range(3):\n    pass\n": ("X", 2, "inside a `for` loop"),
    "X = 1\nwhile False:\n    X = 2\n": ("X", 3, "inside a `while` loop"),
    "X = 1\nwith open('f') as X:\n    pass\n": ("X", 2, "inside a `with` block"),
    "X = 1\ntry:\n    X = 2\nexcept Exception:\n    pass\n": ("X", 3, "inside a `try` statement"),
    "X = 1\ntry:\n    pass\nexcept Exception as X:\n    pass\n": ("X", 4, "inside a `try` statement"),
    "X = 1\nmatch 2:\n    case X:\n        pass\n": ("X", 3, "inside a `match` statement"),
    "X = 1\ndef X(): pass\n": ("X", 2, "bound by a `def`"),
    "X = 1\nclass X: pass\n": ("X", 2, "bound by a `class`"),
    "X = 1\nimport math as X\n": ("X", 2, "bound by an import"),
    "X = 1\nfrom math import pi as X\n": ("X", 2, "bound by an import"),
    "X = 1\nprint(X := 2)\n": ("X", 2, "bound by `:=`"),
    "X = 1\n[(X := i) for i in range(3)]\n": ("X", 2, "bound by `:=`"),
    "X = 1\ndel X\n": ("X", 2, "removed by `del`"),
    "X = 1\ndef f():\n    global X\n    X = 2\nf()\n": ("X", 3, "declares it `global`"),
    "X = 1\nX, *Y = 1, 2, 3\n": ("X", 2, "not `*NAME`"),
    "X = 1\nX, Y = divmod(7, 2)\n": ("X", 2, "it unpacks only written values"),
    "X = 1\nX, Y = 1, 2, 3\n": ("X", 2, "3 values unpacked into 2 names"),
    "X = 1\nexec('X = 2')\n": ("X", 2, "`exec` can assign any name"),
    "X = 1\nglobals()['X'] = 2\n": ("X", 2, "assigns into an object (`globals()['X']`)"),
    "X = 1\nvars().update(X=2)\n": ("X", 2, "`vars` can assign any name"),
    "X = 1\nimport sys\nsys.modules[__name__].X = 2\n": ("X", 3, "assigns into an object"),
    "X = 1\nfrom math import *\n": ("X", 2, "`import *`"),
}


@pytest.mark.parametrize("source", UNREAD, ids=[s.splitlines()[1].strip() for s in UNREAD])
def test_an_answer_whose_last_binding_is_not_read_is_unread_with_its_line_and_why(source):
    name, line, why = UNREAD[source]
    read = read_assignments(source)
    assert name not in read.values  # never the earlier value
    assert read.problem(name).startswith(f"line {line}: ") and why in read.problem(name), read.problem(name)


def test_a_name_no_statement_binds_is_unread_after_a_statement_that_can_bind_any_name():
    read = read_assignments("exec(open('answers.py').read())\nB = 2\n")
    assert read.values == {"B": 2}
    assert read.problem("A").startswith("line 1: ") and read.problem("B") is None  # bound again after it
    plain = read_assignments("B = 2\n")
    assert plain.problem("A") is None  # nothing could have bound A: no answer


def test_names_of_other_scopes_are_not_the_cells():
    read = read_assignments("X = 1\n[X for X in range(3)]\nf = lambda X=2: (X := 3)\nclass C:\n    X = 4\ndef g(X):\n    X = 5\n")
    assert read.values["X"] == 1 and "X" not in read.problems


def test_an_annotation_alone_binds_nothing():
    assert read_assignments("X = 3\nX: int\n").values == {"X": 3}


def test_a_right_answer_under_an_if_is_marked_unread_not_wrong():
    from autograder.nbgrader_ext.plan import load_plan
    from autograder.nbgrader_ext.questions import mark_answers

    from bundled_course import source_notebook

    source = ("TILES_PER_CHANNEL = 0\nTILE_BYTES = 0\nWHOLE_BYTES = 0\nTILES_PER_CHANNEL = 196\n"
              "TILE_BYTES, WHOLE_BYTES = 16 * 16 * 4, 16 * 224 * 224 * 4\nif True:\n    HALO_PIXELS = 18 * 18\n")
    read = read_assignments(source)
    key = load_plan(source_notebook("tiling")).answers["tile-arithmetic"].key_for(JOURNAL)
    fraction, verdicts = mark_answers(key, read.values, read.problems_for(q.name for q in key))
    by_name = {v.name: v.message for v in verdicts}
    assert fraction == 0.75
    assert by_name["TILE_BYTES"] == "TILE_BYTES = 1024: right" and by_name["WHOLE_BYTES"] == "WHOLE_BYTES = 3211264: right"
    assert by_name["HALO_PIXELS"].startswith("HALO_PIXELS: unread (line 7: assigned inside an `if` block (line 6)")


def test_a_long_expression_is_walked_without_recursion():
    read = read_assignments("X = " + "+".join(["1"] * 900) + "\nif True:\n    Y = 1\n")
    assert "Y" in read.problems
