"""autograder/nbgrader_ext/answer_cell.py: the rule both the self-check and the class run grade a
schedule cell's text by (their verdicts compared end to end: test_same_verdict.py)."""
from __future__ import annotations

import pytest

from autograder.nbgrader_ext.answer_cell import ipython_only_lines, ipython_syntax

SCHEDULE = "def schedule(sch):\n    pass\n"

IPYTHON = {  # cell -> the lines IPython runs as something else
    "%time\n" + SCHEDULE: [1],
    "%%time\n" + SCHEDULE: [1],
    SCHEDULE + "!ls\nfiles = !ls\n": [3, 4],
    SCHEDULE + "schedule?\n??schedule\n": [3, 4],
    SCHEDULE + "%matplotlib inline\n": [3],
    ">>> x = 1\n>>> y = 2\n": [1, 2],
    "\n\n%time\n" + SCHEDULE: [3],
}


@pytest.mark.parametrize("cell", IPYTHON, ids=[repr(c.strip().splitlines()[-1 if c.startswith("def") else 0]) for c in IPYTHON])
def test_ipythons_own_transformer_names_the_lines_it_would_change(cell):
    assert [line.number for line in ipython_only_lines(cell)] == IPYTHON[cell]


def test_plain_python_has_no_ipython_lines_even_where_a_string_looks_like_one():
    assert ipython_only_lines(SCHEDULE + 'NOTE = """\n%time\n!ls\n"""\n') == []
    assert ipython_syntax(SCHEDULE + "    pass(\n") is None  # a plain syntax error: the engine's own message


def test_the_message_names_the_line_what_ipython_makes_of_it_and_what_to_do():
    said = ipython_syntax("%time\n" + SCHEDULE)
    assert "line 1: %time" in said and "run_line_magic('time'" in said
    assert "plain Python, alone, in a fresh process" in said and "Move that line to another cell" in said
    many = ipython_syntax(SCHEDULE + "".join(f"!echo {i}\n" for i in range(5)))
    assert "line 3: !echo 0" in many and "line 5: !echo 2" in many and "and more" in many and "Move those lines" in many


@pytest.mark.timeout(60)
def test_a_cell_of_the_largest_size_full_of_ipython_lines_is_explained_at_once():
    """The class run explains a cell in its own process: at most a few compiles and lines through
    IPython, whatever the cell (IPython's transformer on the whole cell took minutes for this one)."""
    import time

    started = time.monotonic()
    said = ipython_syntax("!ls\n" * 16000)  # 64 KiB, the most a schedule may be
    assert time.monotonic() - started < 10.0
    assert "line 1: !ls" in said and "and more" in said
