"""autograder/nbgrader_ext/cost_model_cells.py: what the cost-model notebook's cells print."""
from __future__ import annotations

import sys

from autograder.nbgrader_ext.cost_model_cells import _Progress


def test_without_tqdm_each_phase_gets_its_own_line_and_no_tail_of_a_longer_one(monkeypatch, capsys):
    """A hub's environment may have no tqdm: the text progress must not read 'timing: 960/960320'
    (a carriage return over a longer 'compiling: 320/320' line), and must end its last line."""
    monkeypatch.setitem(sys.modules, "tqdm", None)  # `from tqdm import tqdm` raises ImportError
    progress = _Progress()
    for done in (0, 160, 320):
        progress(done, 320, "compiling")
    for done in (0, 960):
        progress(done, 960, "timing")
    progress(960, 960, "done")
    progress.close()
    out = capsys.readouterr().out
    lines = [line.split("\r")[-1] for line in out.split("\n")]
    assert lines == ["compiling: 320/320", "timing: 960/960", ""], out
