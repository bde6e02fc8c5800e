"""What the cost-model notebook calls inside the student's kernel (untrusted, like kernel_side.py).

The self-check measures the candidate table on the student's own machine (the grader's own
child and timer, with a progress bar; cached in the student's ~/.cache, so only the first run
takes minutes) and runs the answer cell's text through the class run's learner sandbox and
metrics (costmodel/grade.py). It cannot give the class run's points: those are scaled to the
instructor's model, which is not given out, on the grading machine's table and secret draws. So
it shows the student's numbers beside random's and the public baseline's, and states the class
run's rule in words (costmodel/scoring.py: CLASS_RUN_RULE); it presents no number as a grade.
Under each part's numbers it draws the figure the feedback page will draw there
(costmodel/feedback_plots.py), from the outcomes the self-check computed, the public baseline
where the feedback has the instructor's model.
"""
from __future__ import annotations

import sys

from .kernel_side import GradedOutsideTheKernel, autograding, defining_cell, my_variant


def my_shape():
    """This student's shape of the head (from their variant), printed. Only the shape: the
    variant's own description is the tiling assignment's convolution, not this workload."""
    from ..costmodel.space import shape_for
    from ..problems.variants import student_variant

    if autograding():  # the grader derives each student's shape itself
        return shape_for(None)
    student, variant = student_variant()
    shape = shape_for(variant.to_dict())
    print(f"Student {student}. Your workload: {shape.describe()}.")
    return shape


def show_space(shape, count: int = 6) -> None:
    """The candidates a learner sees: the first rows of the pool, with each in words."""
    from ..costmodel.space import COLUMNS, FULL, candidates, describe

    rows = candidates(shape, FULL)
    print(f"{len(rows)} candidates, each a row of {len(COLUMNS)} integers: {', '.join(COLUMNS)}")
    for row in rows[:count]:
        print(f"  {row.tolist()}  {describe(row)}")
    print("  ...")


class _Progress:
    """A text progress bar for the table's measurement (tqdm where it is installed). Without
    tqdm, one line per phase, rewritten in place and ended when the phase ends: a carriage
    return alone leaves a longer line's tail behind ("timing: 960/960320")."""

    def __init__(self):
        self.bar, self.phase, self.line_open = None, None, False

    def __call__(self, done: int, total: int, phase: str) -> None:
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = None
        if phase != self.phase:
            self.close()
            self.phase = phase
            if phase == "done":
                return
            self.bar = tqdm(total=total, desc=phase, file=sys.stdout) if tqdm else None
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        elif phase != "done":
            print(f"\r{phase}: {done}/{total}", end="", flush=True)
            self.line_open = True

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        if self.line_open:
            print(flush=True)
            self.line_open = False


class SelfCheck:
    """A costmodel.grade.SelfCheckResult, shown with the class run's rule: numbers, never points."""

    def __init__(self, result):
        self.result = result

    def __repr__(self) -> str:
        lines = list(self.result.notes)
        for name, part in self.result.parts.items():
            lines += [f"{name}:", *(f"  {line}" for line in part.lines)]
        return "\n".join([*lines, self.result.rule])


def self_check(features, Model, grid: str = "full", **limits):
    """Run the cell that defined `features` (and `Model`, in the same cell) through the class
    run's sandbox and metrics, on a table measured here: its numbers beside random's and the
    baseline's. `grid="tiny"` checks on 24 candidates of a small shape in seconds: that the
    learner runs, not how it ranks."""
    if autograding():
        return GradedOutsideTheKernel("the cost model")
    from ..costmodel.grade import check_submission
    from ..costmodel.learner import LearnerLimits
    from ..engine.cpus import default_mcpu

    from .kernel_side import _bound_by

    text = defining_cell(features)
    if not {"features", "Model"} <= _bound_by(text) or getattr(Model, "__name__", "") != "Model":
        raise NameError("define features(candidates) and class Model in the one answer cell: the grader grades that cell alone")
    shape_variant = my_variant(say=False)  # the table's note names the workload measured
    progress = _Progress()
    print("Measuring the candidate table on this machine (the first time takes a few minutes; then it is kept):")
    try:
        result = check_submission(text, shape_variant.to_dict(), mcpu=default_mcpu(), grid=grid,
                                  limits=LearnerLimits(**limits), progress=progress)
    finally:
        progress.close()
    return SelfCheck(result)


def points(check, part: str, out_of: float) -> None:
    """What a test cell shows of one part (ranking or search) of the self-check: the numbers, the
    rule by which the class run turns them into up to `out_of` points (not the points: this
    machine cannot know the instructor's model), and the part's figure, as the feedback page
    shows it under the part's score."""
    if isinstance(check, GradedOutsideTheKernel):
        print(repr(check))
        return None
    verdict = check.result.parts[part]
    print("\n".join(verdict.lines))
    print(f"Up to {out_of:g} points, given by the class run. {check.result.rule}")
    show_figure(check, part)
    return None


def show_figure(check, part: str) -> None:
    """The part's figure from the self-check's record, displayed as the feedback page's output is
    (an SVG, its words as the text): none where the learner failed in the part, or outside IPython."""
    from ..costmodel.feedback_plots import figures

    figure = figures(check.result.plot).get(part)
    if figure is None:
        return
    try:
        from IPython import get_ipython
        from IPython.display import display
    except ImportError:
        return
    if get_ipython() is not None:
        display({"image/svg+xml": figure.svg, "text/plain": figure.text}, raw=True)
