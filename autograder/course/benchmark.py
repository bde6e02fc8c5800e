"""`tvm-course bench-grading`: wall time per submission of the grading run, serial and parallel.

Both runs grade the same submissions, from scratch, with the course's own settings (a real
run's timing rounds and limits), feedback included; the parallel run regrades with --force.
Samples expected to time out are left out by default: each costs its time limits, which
measures the limits rather than the grader.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import TextIO

from .grading_run import GradingOptions, grade_assignment
from .samples import load_samples
from .scratch_course import BUNDLED_COURSE, copy_course, release_assignment, submit_samples

ASSIGNMENT = "tiling"


def run_benchmark(copies: int, workers: int, samples: list[str] | None = None, course: str | None = None, out: TextIO = sys.stdout) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="tvm-course-bench-") as scratch:
        root = copy_course(Path(course) if course else BUNDLED_COURSE, Path(scratch) / "course")
        release_assignment(root, ASSIGNMENT)
        chosen = samples or [s.student for s in load_samples(root, ASSIGNMENT) if s.expected_status != "timeout"]
        submitted = submit_samples(root, ASSIGNMENT, total=copies, only=chosen)
        print(f"{copies} submissions of {ASSIGNMENT}, cycling through the samples {', '.join(chosen)}", file=out, flush=True)
        per_submission = {}
        for label, count, force in (("serial (1 worker)", 1, False), (f"parallel ({workers} workers)", workers, True)):
            report = grade_assignment(GradingOptions(ASSIGNMENT, course=root, workers=count, force=force))
            surprises = [f"{row.student}: {'; '.join(m)}" for row in report.rows if (m := submitted[row.student].mismatches(row.parts, row.schedule))]
            per_submission[label] = report.seconds / copies
            print(
                f"{label}: {report.seconds:.1f} s for {copies}, {report.seconds / copies:.2f} s per submission; "
                f"{copies - len(surprises) - len(report.failures)} of {copies} scored as expected",
                file=out,
                flush=True,
            )
            for line in surprises + [f"{s}: grading failed" for s in report.failures]:
                print(f"  {line}", file=out)
        serial, parallel = per_submission.values()
        print(f"speedup with {workers} workers: {serial / parallel:.2f}x", file=out)
        return per_submission
