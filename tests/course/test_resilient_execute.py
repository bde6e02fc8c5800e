"""ResilientExecute (autograder/nbgrader_ext/preprocessors.py): a real kernel that dies or hangs."""
from __future__ import annotations

import time

import nbformat
import psutil
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.nbgrader_ext.preprocessors import ResilientExecute

pytestmark = pytest.mark.slow


def run(tmp_path, *sources, timeout=4):
    notebook = new_notebook(cells=[new_code_cell(s) for s in sources])
    executor = ResilientExecute(timeout=timeout, kernel_name="python3", responsive_timeout=2, startup_timeout=60)
    started = time.monotonic()
    executor.preprocess(notebook, {"metadata": {"path": str(tmp_path)}})
    return notebook.cells, time.monotonic() - started


def errors(cell):
    return [o.get("ename") for o in cell.outputs if o.output_type == "error"]


def kernels():
    return {p.pid for p in psutil.Process().children(recursive=True) if "ipykernel" in " ".join(p.cmdline())}


def test_a_dead_kernel_ends_the_run_and_marks_later_cells(tmp_path):
    cells, _ = run(tmp_path, "x = 1", "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)", "print(x)")
    assert cells[0].outputs == []
    assert errors(cells[1]) == ["DeadKernelError"]
    assert errors(cells[2]) == ["NotRun"] and "died" in cells[2].outputs[0].evalue


def test_an_interruptible_hang_is_interrupted_and_the_run_goes_on(tmp_path):
    cells, _ = run(tmp_path, "while True:\n    pass", "print('after')", timeout=3)
    assert "CellTimeoutError" in errors(cells[0]) or "KeyboardInterrupt" in errors(cells[0])
    assert cells[1].outputs[0].text == "after\n"


def test_a_kernel_that_ignores_interrupts_is_given_up_on_and_stopped(tmp_path):
    before = kernels()
    hang = "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"
    cells, seconds = run(tmp_path, hang, "print('after')", "print('and after')", timeout=3)
    assert errors(cells[1]) == ["NotRun"] and errors(cells[2]) == ["NotRun"]
    assert "stopped answering" in cells[1].outputs[0].evalue
    assert seconds < 40  # not a timeout per remaining cell
    time.sleep(1)
    assert kernels() <= before  # the hung kernel was shut down with the run
