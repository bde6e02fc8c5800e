"""What the assignment notebooks call inside the student's kernel.

None of this is trusted: code in the student's notebook can replace any of it. It is here so
that a student sees, before submitting, what the instructor's grader will say. The points
that reach the gradebook are computed outside the kernel, from the source of the answer
cells (see preprocessors.py), and written over whatever these cells printed.

During the instructor's grading run (nbgrader sets NBGRADER_EXECUTION=autograde in the
kernel) `self_check` does not grade again: the trusted grader does that once, in parallel.
"""
from __future__ import annotations

import numbers
import os
from typing import Callable, Mapping

from .credit import score_part
from .questions import get_question_set


def autograding() -> bool:
    return os.environ.get("NBGRADER_EXECUTION") == "autograde"


class GradedOutsideTheKernel:
    """Stands in for a Result while nbgrader autogrades: the trusted grader fills these cells in."""

    def __init__(self, problem: str):
        self.problem = problem

    def __repr__(self) -> str:
        return (
            f"{self.problem}: graded by the instructor's trusted grader, which re-grades the source of "
            "your schedule cell in a sandbox; its verdict replaces this cell's output."
        )


def my_variant():
    """This student's own workload: their id ($TVM_COURSE_STUDENT, or the JupyterHub user) looked
    up in the variants.json released with the assignment. A clear error says what is missing."""
    from ..problems.variants import JOURNAL, student_variant

    if autograding():  # the instructor's grader derives each student's variant itself
        return JOURNAL
    student, variant = student_variant()
    print(f"Student {student}: {variant.describe()}.")
    return variant


def self_check(problem: str, schedule: Callable | str, variant=None, **settings):
    """Grade `schedule` on `variant` (your own workload) the way the instructor will (with fresh
    random inputs and timing)."""
    if autograding():
        return GradedOutsideTheKernel(problem)
    from ..notebook_api import check
    from ..problems.variants import current_student

    return check(problem, schedule, variant=variant, student=current_student() if variant is not None else None, **settings)


def points(result, part: str, out_of: float) -> float:
    """The points a test cell shows for one part (correctness, fusion or speed) of `result`."""
    if isinstance(result, GradedOutsideTheKernel):
        print(repr(result))
        return 0.0
    score = score_part(result, part)
    print(score.message)
    earned = score.points(out_of)
    return 0.0 if earned is None else earned


def check_answer_format(question_set: str, namespace: Mapping[str, object]) -> None:
    """The visible check of a question cell: every answer is there and is a number."""
    missing = []
    for question in get_question_set(question_set):
        value = namespace.get(question.name)
        if value is None:
            missing.append(question.name)
        else:
            kind = "a number" if isinstance(value, numbers.Real) and not isinstance(value, bool) else f"NOT a number ({type(value).__name__})"
            print(f"{question.name} = {value!r}: {kind}")
    if missing:
        raise NameError(f"assign a number to {', '.join(missing)} in the answer cell above")
    print("All answers are there. The grader checks their values when you submit.")


def question_points(question_set: str, namespace: Mapping[str, object], out_of: float) -> float:
    """What a question cell's hidden test shows in the kernel: nothing about the values.

    The answer key is not in this package (students have it installed): only the instructor's
    trusted grader has it, and it writes the points of this cell when the notebook is graded.
    Here the cell says so and shows 0, whatever the answers, so that it is no oracle.
    """
    names = ", ".join(q.name for q in get_question_set(question_set))
    print(f"{names}: checked when you submit, by the instructor's grader (its points replace this cell's)")
    return 0.0


def show_workload(problem: str, variant=None) -> None:
    """Print the TensorIR function a problem's schedule works on (its blocks and loops), on
    `variant`'s shapes (default: the journal's)."""
    if autograding():
        print("(not printed while the instructor grades)")
        return
    from ..problems import get_problem

    found = get_problem(problem)
    print((found.with_shape(variant.shape) if variant is not None else found).workload().script())
