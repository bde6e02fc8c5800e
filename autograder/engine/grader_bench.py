"""`tvm-course bench-grader`: how long one grading takes, stage by stage, and how steady its speedup is.

A benchmark, not a test: it prints numbers for a person to compare against the goals
(at most 5 s per CPU submission; speedup coefficient of variation at most 5% over 10 gradings).
"""
from __future__ import annotations

import statistics
import time

from .bench import Stats
from .config import GraderConfig
from .pipeline import grade_source

GOAL_SECONDS_PER_SUBMISSION = 5.0
GOAL_SPEEDUP_CV = 0.05


def run(problem: str, source: str, runs: int, config: GraderConfig, out=print) -> dict:
    results = []
    for index in range(runs):
        started = time.perf_counter()
        result = grade_source(problem, source, config)
        results.append(result)
        out(f"  grading {index + 1:2d}/{runs}: {result.status:9s} score {result.score:.2f}  "
            f"speedup {_fmt(result.speedup)}  {time.perf_counter() - started:5.2f} s")
    stages = sorted({k for r in results for k in r.timings})
    out("\nwall time per stage, seconds (median [min-max] over the gradings):")
    out("  student and evaluator children overlap: the evaluator prepares while the student's code runs")
    for stage in stages:
        values = [r.timings[stage] for r in results if stage in r.timings]
        out(f"  {stage:22s} {statistics.median(values):6.3f} [{min(values):.3f}-{max(values):.3f}]")
    total = Stats.of([r.timings["total"] for r in results])
    summary = {"total_median_s": total.median, "statuses": sorted({r.status for r in results}),
               "scores": sorted({r.score for r in results})}
    speedups = [r.speedup for r in results if r.speedup is not None]
    if speedups:
        spread = Stats.of(speedups)
        summary.update(speedup_median=spread.median, speedup_cv=spread.cv, speedup_min=spread.minimum, speedup_max=spread.maximum)
        out(f"\nspeedup over {runs} gradings: median {spread.median:.3f}x, min {spread.minimum:.3f}, "
            f"max {spread.maximum:.3f}, coefficient of variation {spread.cv:.1%} (goal <= {GOAL_SPEEDUP_CV:.0%})")
    out(f"end-to-end: median {total.median:.2f} s per submission (goal <= {GOAL_SECONDS_PER_SUBMISSION:g} s)")
    out(f"statuses seen: {', '.join(summary['statuses'])}; scores seen: {', '.join(f'{s:.2f}' for s in summary['scores'])}")
    return summary


def _fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:5.2f}x"
