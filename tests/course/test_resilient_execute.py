"""ResilientExecute (autograder/nbgrader_ext/preprocessors.py): a real kernel that dies or hangs.

Autograde runs it only where the course opts in (`c.TrustedGrader.execute_student_notebooks =
True`); the last test grades with that switched on, end to end.
"""
from __future__ import annotations

import dataclasses
import io
import json
import time
from pathlib import Path

import psutil
import pytest
from nbformat.v4 import new_code_cell, new_notebook

from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.rehearsal.samples import load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.nbgrader_ext.preprocessors import ResilientExecute

from .conftest import COURSE
from html_page import live_markup
from .test_grading_run import HOSTILE, TEST_SETTINGS, cells, hostile_cell, pwned_marker

pytestmark = pytest.mark.slow

# What a student's code can display in the kernel: HTML, JavaScript, SVG and Markdown that would
# run in the page of whoever opens the feedback, were it not sanitised
DISPLAYS = """
from IPython.display import HTML, SVG, Javascript, Markdown, display
display(HTML("<b onclick=alert(1)>shown as text</b><script>alert('html')</script><div class=navbar-fixed-top>x</div>"))
display(Javascript("alert('js')"))
display(SVG("<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'><script>alert('svg')</script></svg>"))
display(Markdown("<img src=x onerror=alert('markdown')>"))
"""


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


def test_a_course_that_opts_in_runs_the_notebooks_and_still_scores_from_the_trusted_grader(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    config = root / "nbgrader_config.py"
    switch = "c.TrustedGrader.execute_student_notebooks = False"
    config.write_text(config.read_text(encoding="utf-8").replace(switch, switch.replace("False", "True")), encoding="utf-8")
    release_assignment(root, "tiling")
    eli = next(s for s in load_samples(root, "tiling") if s.student == "eli")  # kills its kernel
    coursedir = course_directory(load_course_config(root))
    submit(coursedir, eli)
    marker = pwned_marker()
    # zed: code of its own and outputs meant to run in the feedback page, then a kernel that
    # ignores interrupts, all in the answer cell (a cell of its own would not be run: normalise.py)
    submit(coursedir, dataclasses.replace(HOSTILE, answers={
        **HOSTILE.answers, "schedule": hostile_cell(marker) + DISPLAYS + HOSTILE.answers["schedule"]}))
    try:
        report = grade_assignment(GradingOptions(
            "tiling", course=root, workers=2, cell_timeout=4, grader_settings=dict(TEST_SETTINGS), progress=io.StringIO()
        ))
        assert marker.exists()  # the switch works: the student's own cell ran
    finally:
        marker.unlink(missing_ok=True)
    assert report.failures == {}
    for row in report.rows:
        assert [row.parts[p] for p in ("correctness", "fusion", "speed", "tile-arithmetic-marks")] == [0.0, 0.0, 0.0, 4.0]
    graded, _ = cells(root / "autograded" / "zed" / "tiling" / "tiling.ipynb")
    assert "stopped answering" in json.dumps(graded["tile-arithmetic"].outputs)
    assert "outside your notebook's kernel" in graded["speed"].outputs[0].text  # the trusted verdict, not the kernel's
    graded, _ = cells(root / "autograded" / "eli" / "tiling" / "tiling.ipynb")
    assert "DeadKernelError" in json.dumps(graded["schedule"].outputs)
    feedback = (root / "feedback" / "zed" / "tiling" / "tiling.html").read_text(encoding="utf-8")
    assert "the kernel ran this" in feedback and "shown as text" in feedback
    assert live_markup(feedback, (root / "feedback" / "eli" / "tiling" / "tiling.html").read_text(encoding="utf-8"), ["navbar-fixed-top"]) == []
    time.sleep(1)
    assert _kernels_in(root) == []


def _kernels_in(root: Path) -> list[int]:
    """Jupyter kernels running in a directory of this course (nbgrader runs each in the notebook's)."""
    found = []
    for process in psutil.process_iter(["cmdline"]):
        try:
            if "ipykernel_launcher" in " ".join(process.info["cmdline"] or []) and Path(process.cwd()).is_relative_to(root):
                found.append(process.pid)
        except psutil.Error:
            pass
    return found
