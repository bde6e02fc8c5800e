"""The self-check in the student's kernel and the class run grade the same text by the same rule
(autograder/nbgrader_ext/answer_cell.py, safe_arithmetic.py; issue 43, items 1 and 2).

One scratch course, released, with two submissions written as students really write them; the
class run grades them with nbgrader's real autograde and the trusted preprocessors; then each
submitted notebook runs top to bottom in one real Jupyter kernel, as its student runs it, and
the two verdicts are compared:

- `tail`: a right `def schedule` followed, in the same cell, by `show_workload(PROBLEM, VARIANT)`
  (a name only another cell defines); the tile arithmetic with placeholders, then
  `TILE_BYTES, WHOLE_BYTES = ..., ...`, and one answer under an `if`;
- `magic`: the same schedule in a cell that starts with `%time`; `cellmagic`: with `%%time`
  (IPython then compiles the cell under a name of its own, not the cell's).
"""
from __future__ import annotations

import io
import json
import re
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

from autograder.course.course_dir import course_directory, load_course_config
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.rehearsal.samples import Sample, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.nbgrader_ext.trusted import graded_record
from autograder.problems.variants import STUDENT_ENV, TABLE_FILE

from .conftest import COURSE

pytestmark = pytest.mark.slow

SCHEDULE = """def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    yo, yi = sch.split(yy, factors=[None, 16])
    xo, xi = sch.split(xx, factors=[None, 16])
    sch.reorder(yo, xo, yi, xi)
    sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
    sch.reverse_compute_at(sch.get_sblock("compute"), xo)
"""
ARITHMETIC = """TILES_PER_CHANNEL = 0
TILE_BYTES = 0
WHOLE_BYTES = 0
TILES_PER_CHANNEL = (HEIGHT // TILE_ROWS) * (WIDTH // TILE_COLS)
TILE_BYTES, WHOLE_BYTES = TILE_ROWS * TILE_COLS * 4, OUT_CHANNELS * HEIGHT * WIDTH * 4
if TILE_ROWS > 0:
    HALO_PIXELS = (TILE_ROWS + KERNEL - 1) * (TILE_COLS + KERNEL - 1)
"""
SUBMISSIONS = {
    "tail": {"schedule": SCHEDULE + "\nshow_workload(PROBLEM, VARIANT)", "tile-arithmetic": ARITHMETIC},
    "magic": {"schedule": "%time\n" + SCHEDULE, "tile-arithmetic": ARITHMETIC},
    "cellmagic": {"schedule": "%%time\n" + SCHEDULE, "tile-arithmetic": ARITHMETIC},
}
# Appended to each notebook run in the kernel: the self-check's verdict as data.
VERDICT_CELL = "import json\nprint('VERDICT ' + json.dumps({'status': result.status, 'messages': result.messages}))"
SETTINGS = {"timing_rounds": 3, "min_repeat_ms": 5.0, "student_timeout_s": 20.0}


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    work = tmp_path_factory.mktemp("same-verdict")
    root = copy_course(COURSE, work / "course")
    release = release_assignment(root, "tiling", students=list(SUBMISSIONS))
    coursedir = course_directory(load_course_config(root))
    for student, answers in SUBMISSIONS.items():
        submit(coursedir, Sample(student, "tiling", "issue 43", answers=answers))
    report = grade_assignment(GradingOptions("tiling", course=root, workers=2, grader_settings=dict(SETTINGS), progress=io.StringIO()))
    assert report.failures == {}, report.failures
    class_run = {student: graded_record(root / "autograded" / student / "tiling" / "tiling.ipynb") for student in SUBMISSIONS}
    parts = {row.student: row.parts for row in report.rows}

    kernel_dir = work / "kernel"
    kernel_dir.mkdir()
    (kernel_dir / TABLE_FILE).write_bytes((release / TABLE_FILE).read_bytes())
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel(cwd=str(kernel_dir))  # one kernel for every student's notebook
    try:
        in_kernel = {student: run_in_kernel(manager, root, student) for student in SUBMISSIONS}
    finally:
        manager.shutdown_kernel(now=True)
    return SimpleNamespace(class_run=class_run, parts=parts, in_kernel=in_kernel)


def run_in_kernel(manager, root: Path, student: str) -> dict[str, str]:
    """The student's submitted notebook run top to bottom, as its student runs it: what each
    cell printed, by grade_id (or cell id)."""
    notebook = nbformat.read(root / "submitted" / student / "tiling" / "tiling.ipynb", as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(f"%env {STUDENT_ENV}={student}"))
    notebook.cells.append(nbformat.v4.new_code_cell(VERDICT_CELL, id="verdict"))
    NotebookClient(notebook, km=manager, timeout=300, allow_errors=True).execute()
    return {cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id"): "".join(
        o.get("text", "") + o.get("data", {}).get("text/plain", "") + o.get("evalue", "") for o in cell.get("outputs", []))
        for cell in notebook.cells}


def self_check_verdict(shown: dict[str, str]) -> dict:
    found = re.search(r"^VERDICT (.*)$", shown["verdict"], re.M)
    assert found, shown["verdict"]
    return json.loads(found.group(1))


@pytest.mark.parametrize("student, line, says", [
    ("tail", 10, "NameError: name 'show_workload' is not defined"),
    ("magic", 1, "IPython syntax, not Python"),
    ("cellmagic", 1, "IPython syntax, not Python"),
])
def test_a_schedule_cell_gets_the_same_verdict_from_the_self_check_as_from_the_class_run(both, student, line, says):
    graded = both.class_run[student]["results"]["schedule"]
    checked = self_check_verdict(both.in_kernel[student])
    assert (checked["status"], checked["messages"]) == (graded["status"], graded["messages"])
    assert graded["status"] == "error" and f"line {line}" in graded["messages"][0] and says in graded["messages"][0], graded["messages"]
    assert "another cell" in graded["messages"][0]  # and what to do
    assert [both.parts[student][p] for p in ("correctness", "fusion", "speed")] == [0.0, 0.0, 0.0]


def test_the_visible_check_reads_each_answer_as_the_class_run_marks_it(both):
    marks = both.class_run["tail"]["questions"]["tile-arithmetic"]
    marked = {line.split(" ")[0].rstrip(":"): line for line in marks["lines"]}
    shown = both.in_kernel["tail"]["tile-arithmetic-marks"]
    for name in ("TILES_PER_CHANNEL", "TILE_BYTES", "WHOLE_BYTES"):
        value = re.search(rf"^{name} = (\d+): right$", marked[name]).group(1)  # the unpacked answers: read, and right
        assert f"{name} = {value}: read by the grader as {value}" in shown, shown
    unread = re.search(r"^HALO_PIXELS: unread \((line 7: .*`if`.*)\)$", marked["HALO_PIXELS"])
    assert unread, marked["HALO_PIXELS"]
    assert f"HALO_PIXELS: unread ({unread.group(1)})" in shown, shown
    assert "All answers are there" not in shown and ": right" not in shown  # no word of the key
    assert both.parts["tail"]["tile-arithmetic-marks"] == 3.0
