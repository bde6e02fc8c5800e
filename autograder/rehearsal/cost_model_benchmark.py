"""`tvm-course bench-cost-model`: what the cost-model assignment costs the machine that grades.
A benchmark, not a test: it prints numbers, it asserts none.

1. The first table of each of `--shapes` students' shapes: the 320 candidates compiled and
   timed with nothing cached (goal: at most 5 minutes each on 2 cores);
2. one submission (the sample `ada`: the instructor's model) graded against the instructor's
   solution (the source notebook's, run confined as the student's cell is) on the real-size
   table: its credit per part (all of it, by construction), and the grading alone with the
   bar's outcomes first computed, then kept (as the class run keeps them per table and draws);
   the public baseline graded the same way (less than full credit: the package holds no
   full-credit answer); then `tvm-course grade` of it in a scratch course, table and bar cached
   (goal: at most 30 s);
3. beside it, one tiling submission (its sample `ada`) graded the same way.

Each table is measured into a scratch folder (never the machine's cache); the class run reads
that folder ($TVM_COURSE_TABLES).
"""
from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from ..costmodel import space
from ..costmodel.baseline import BASELINE_SOURCE
from ..costmodel.grade import BAR_CACHE, grade_learner, sample_seed
from ..costmodel.table import TABLES_ENV, measure
from ..problems.variants import course_secret, variant_for
from ..course.grading_run import GradingOptions, grade_assignment
from .scratch_course import BUNDLED_COURSE, copy_course, release_assignment, submit_samples

SAMPLE = "ada"


def run_benchmark(shapes: int = 2, out: TextIO = sys.stdout, mcpu: str | None = None) -> dict:
    numbers: dict = {"first_table_s": {}}
    with tempfile.TemporaryDirectory(prefix="tvm-course-bench-cost-model-") as scratch:
        scratch = Path(scratch)
        tables = scratch / "tables"
        previous = os.environ.get(TABLES_ENV)
        os.environ[TABLES_ENV] = str(tables)
        try:
            root = copy_course(BUNDLED_COURSE, scratch / "course")
            secret = course_secret(root)
            ada_shape = space.shape_for(variant_for(SAMPLE, secret).to_dict())
            others = [s for s in space.SHAPES if s != ada_shape][: max(0, shapes - 1)]
            print(f"1. first table per shape ({space.FULL.pool} candidates, nothing cached, one thread):", file=out)
            table = None
            for shape in [ada_shape, *others]:
                started = time.monotonic()
                measured = measure(shape, "full", mcpu, folder=tables, use_cache=False)
                seconds = time.monotonic() - started
                numbers["first_table_s"][shape.describe()] = round(seconds, 1)
                print(f"   {shape.describe()}: {seconds:.1f} s (goal: at most 300 s)", file=out, flush=True)
                table = measured if shape == ada_shape else table

            started = time.monotonic()
            cached = measure(ada_shape, "full", mcpu, folder=tables)
            numbers["cached_table_s"] = round(time.monotonic() - started, 1)
            sample_source, bar = _sample_answer(root), _solution(root)
            seed = sample_seed(secret, ada_shape.to_dict())
            BAR_CACHE.kept.clear()
            started = time.monotonic()
            graded = grade_learner(sample_source, cached, seed, bar=bar)
            numbers["grading_alone_s"] = round(time.monotonic() - started, 1)
            started = time.monotonic()
            grade_learner(sample_source, cached, seed, bar=bar)
            numbers["grading_bar_kept_s"] = round(time.monotonic() - started, 1)
            numbers["credit"] = {name: part.fraction for name, part in graded.parts.items()}
            print(f"2. {SAMPLE}'s table again, cached and audited: {numbers['cached_table_s']:.1f} s; both parts "
                  f"graded on it against the instructor's solution (the learners' children included): "
                  f"{numbers['grading_alone_s']:.1f} s, then {numbers['grading_bar_kept_s']:.1f} s with the bar's "
                  "outcomes kept", file=out)
            for name, part in graded.parts.items():
                shown = "pending" if part.fraction is None else f"{part.fraction:.0%}"
                print(f"   {name}: {shown} of the credit; " + "; ".join(part.lines), file=out)
            baseline = grade_learner(BASELINE_SOURCE, cached, seed, bar=bar)  # the bar's outcomes kept
            numbers["baseline_credit"] = {name: part.fraction for name, part in baseline.parts.items()}
            print("   the public baseline (autograder/costmodel/baseline.py) graded the same way, as a student's answer:", file=out)
            for name, part in baseline.parts.items():
                shown = "pending" if part.fraction is None else f"{part.fraction:.0%}"
                print(f"   {name}: {shown} of the credit; " + "; ".join(part.lines), file=out)
            numbers["class_run_s"] = _class_run(root, "cost-model")
            print(f"   `tvm-course grade cost-model` of one submission, table cached: {numbers['class_run_s']:.1f} s "
                  "(goal: at most 30 s)", file=out)
            numbers["tiling_class_run_s"] = _class_run(root, "tiling")
            print(f"3. `tvm-course grade tiling` of one submission, beside it: {numbers['tiling_class_run_s']:.1f} s", file=out)
        finally:
            if previous is None:
                os.environ.pop(TABLES_ENV, None)
            else:
                os.environ[TABLES_ENV] = previous
    return numbers


def _sample_answer(root: Path) -> str:
    from .samples import load_samples

    return next(s for s in load_samples(root, "cost-model") if s.student == SAMPLE).answers["cost-model"]


def _solution(root: Path) -> str:
    """The full-credit bar: the cost model's solution cell of the course's source notebook."""
    from ..nbgrader_ext.plan import load_plan

    plan = load_plan(root / "source" / "cost-model" / "cost-model.ipynb")
    return next(a.solution for a in plan.answers.values() if a.kind == "cost-model")


def _class_run(root: Path, assignment: str) -> float:
    release_assignment(root, assignment, students=[SAMPLE])
    submit_samples(root, assignment, only=[SAMPLE])
    started = time.monotonic()
    report = grade_assignment(GradingOptions(assignment, course=root, workers=1, force=True, progress=None))
    seconds = time.monotonic() - started
    if report.failures:
        print(f"   (grading failed: {report.failures})", file=sys.stderr)
    return seconds
