"""The tiling assignment's notebook as a student reads it: its list of primitives is the grader's,
its common errors quote the grader, it opens with goals, time and the grading machine, and the
lesson's exercise, taken as the notebook says, earns what the notebook promises."""
from __future__ import annotations

import re

import nbformat
import pytest

from autograder.engine.config import GraderConfig
from autograder.nbgrader_ext.answer_cell import grade_schedule_cell
from autograder.nbgrader_ext.credit import score_part
from autograder.nbgrader_ext.kernel_side import allowed_primitives, refused_primitives
from autograder.problems.variants import JOURNAL, VARIANTS

from .assignment_notebook import AssignmentNotebook
from .conftest import REPO

PROBLEM = "tile-fused-conv"
ASSIGNMENT = AssignmentNotebook.read("tiling")
NOTEBOOK, MARKDOWN = ASSIGNMENT.notebook, ASSIGNMENT.markdown
# A workload unlike the journal's: the lesson's exercise ran on 224 x 224 and 16 channels.
VARIANT = next(v for v in VARIANTS if (v.height, v.width, v.out_channels) == (160, 256, 20))
UNTIMED = GraderConfig(measure_speed=False)


def test_the_list_of_allowed_primitives_is_the_graders_for_the_cpu():
    allowed, refused = ASSIGNMENT.primitives()
    assert allowed == set(allowed_primitives(PROBLEM))
    assert refused == set(refused_primitives(PROBLEM))
    assert "bind" in refused_primitives(PROBLEM) and "bind" in allowed_primitives("gpu-fused-conv")


def test_it_opens_with_its_learning_goals_its_time_and_the_grading_machine():
    opening = MARKDOWN[0]
    assert "### Learning goals" in opening and "**Time.**" in opening and "**The grading machine.**" in opening
    first_code = next(cell.source for cell in NOTEBOOK.cells if cell.cell_type == "code")
    assert "GRADING_MACHINE = grading_machine()" in first_code


WRONG = {  # a schedule that makes each quoted error, on the journal's tiling
    "reverse-compute-at": "    sch.reverse_compute_at(sch.get_sblock('compute'), xo)\n    sch.reverse_compute_at(sch.get_sblock('T_add'), xo)\n",
    "T_add_intermediate": "    sch.reverse_compute_at(sch.get_sblock('T_add'), xo)\n",
    "bind is for GPU": "    sch.bind(xo, 'threadIdx.x')\n",
    "compact dataflow": ("    sch.reverse_compute_at(sch.get_sblock('T_add'), xo)\n    sch.reverse_compute_at(sch.get_sblock('compute'), xo)\n"
                         "    sch.reorder(yi, rc, ry, rx, xi)\n    sch.decompose_reduction(conv, rc)\n    sch.vectorize(xi)\n"),
}
TILED = ("def schedule(sch):\n    conv = sch.get_sblock('conv2d_nchw')\n    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)\n"
         "    yo, yi = sch.split(yy, factors=[None, 16])\n    xo, xi = sch.split(xx, factors=[None, 16])\n    sch.reorder(yo, xo, yi, xi)\n")


@pytest.mark.slow
@pytest.mark.parametrize("quoted", sorted(WRONG))
def test_a_common_error_quotes_what_the_grader_says(quoted):
    (seen,) = [seen for seen, _ in ASSIGNMENT.common_errors() if quoted in seen]
    result = grade_schedule_cell(PROBLEM, TILED + WRONG[quoted], UNTIMED, variant=VARIANT)
    said = result.to_text()
    for piece in re.findall(r"`([^`]+)`", seen):
        for words in piece.split("..."):
            assert words.strip() in said, (words, said)


def exercise_5() -> str:
    """Lesson 2's exercise 5 cell as the lesson hands it out."""
    lesson = nbformat.read(REPO / "lessons" / "02-tiling-trace.ipynb", as_version=4)
    (cell,) = [c.source for c in lesson.cells if c.cell_type == "code" and c.source.startswith("# Exercise 5")]
    return cell


# The rung, finished as the lesson asks ("one reorder, then three vectorize calls"): lesson 2's
# own check passes it (tests/lessons/test_exercises.py).
FINISHED = """    sch.reorder(y_inner, rc, ry, rx, x_inner)
    sch.vectorize(x_inner)
    for name in ("T_add", "compute"):
        sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])"""


def _points(result, part: str) -> float:
    cell = next(c for c in NOTEBOOK.cells if c.metadata.get("nbgrader", {}).get("grade_id") == part)
    return score_part(result, part).points(cell.metadata.nbgrader.points)


@pytest.mark.slow
def test_the_lessons_exercise_taken_as_the_notebook_says_earns_correctness_and_fusion():
    """The student's path: lesson 2's exercise 5 pasted into the schedule cell fails on the
    lesson's check line (the common error the notebook names first); as a function alone, named
    `schedule`, the journal's tiling it starts from and the finished rung each earn the notebook's
    correctness and fusion points, on a workload that is not the lesson's. Speed depends on the
    machine: not asserted."""
    cell = exercise_5().replace("def vectorised_16x16(sch):", "def schedule(sch):")
    assert VARIANT != JOURNAL
    pasted = grade_schedule_cell(PROBLEM, cell, UNTIMED, variant=VARIANT)
    assert pasted.status == "error" and "NameError" in pasted.messages[0] and "line 15" in pasted.messages[0], pasted.messages
    function = cell[cell.index("def schedule(sch):"): cell.index("\n\n\n")]
    assert "# your code here" in function
    for text in (function, function.replace("    # your code here: one reorder, then three vectorize calls", FINISHED)):
        result = grade_schedule_cell(PROBLEM, text + "\n", UNTIMED, variant=VARIANT)
        assert (_points(result, "correctness"), _points(result, "fusion")) == (4, 3), result.to_text()
