"""`tvm-course bench-grading`: submissions per minute of the grading run: one local worker,
the local pool, and a Dask cluster (local workers started here, or a scheduler's). A benchmark,
not a test: it prints numbers, it asserts none.

Every run grades the same submissions in full (--force) with the course's own settings (a real
run's timing rounds and limits), feedback included, a few times each, so the spread shows. The
local pool starts its workers in every run (as `tvm-course grade` does); Dask workers stay up
between runs, as on a cluster.
Samples expected to time out are left out by default: each costs its time limits, which
measures the limits rather than the grader.
"""
from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from .grading_run import GradingOptions, grade_assignment
from .samples import load_samples
from .scratch_course import BUNDLED_COURSE, copy_course, release_assignment, submit_samples

ASSIGNMENT = "tiling"


def run_benchmark(copies: int, workers: int, samples: list[str] | None = None, course: str | None = None, out: TextIO = sys.stdout,
                  repeats: int = 3, cluster_workers: int = 0, scheduler: str | None = None) -> dict[str, dict]:
    """Grade `copies` submissions `repeats` times with one local worker, with `workers`, and on a
    Dask cluster (`scheduler`, or `cluster_workers` local Dask workers started here); print
    submissions per minute (median, min-max of the repeats) and the scaling efficiency against
    one worker. Every grading is a full one (--force), feedback included."""
    from .cluster import LocalCluster

    with tempfile.TemporaryDirectory(prefix="tvm-course-bench-") as scratch:
        root = copy_course(Path(course) if course else BUNDLED_COURSE, Path(scratch) / "course")
        release_assignment(root, ASSIGNMENT)
        chosen = samples or [s.student for s in load_samples(root, ASSIGNMENT) if s.expected_status != "timeout"]
        submitted = submit_samples(root, ASSIGNMENT, total=copies, only=chosen)
        print(f"{copies} submissions of {ASSIGNMENT}, cycling through the samples {', '.join(chosen)}; "
              f"{repeats} run(s) each; {os.cpu_count()} CPU(s) here", file=out, flush=True)
        configurations = [("local pool, 1 worker", 1, {"workers": 1})]
        if workers > 1:
            configurations.append((f"local pool, {workers} workers", workers, {"workers": workers}))
        local = LocalCluster(cluster_workers, log=Path(scratch) / "dask.log") if cluster_workers and not scheduler else None
        try:
            if scheduler or local:
                count = cluster_workers or _cluster_size(scheduler)
                configurations.append((f"Dask, {count} worker(s) at {scheduler or local.address}", count,
                                       {"scheduler": scheduler or local.address}))
            measured = {}
            for label, count, how in configurations:
                rates = []
                for _ in range(repeats):
                    report = grade_assignment(GradingOptions(ASSIGNMENT, course=root, force=True, progress=None, **how))
                    surprises = [f"{row.student}: {'; '.join(m)}" for row in report.rows
                                 if (m := submitted[row.student].mismatches(row.parts, row.schedule))]
                    rates.append(60.0 * copies / report.seconds)
                    for line in surprises + [f"{s}: grading failed: {why.splitlines()[0][:120]}" for s, why in report.failures.items()]:
                        print(f"  {label}: {line}", file=out)
                measured[label] = {"workers": count, "per_minute": rates, "median": statistics.median(rates)}
                print(f"{label}: {_spread(rates)} submissions per minute "
                      f"({60.0 / statistics.median(rates):.2f} s per submission)", file=out, flush=True)
        finally:
            if local:
                local.close()
        one = measured["local pool, 1 worker"]["median"]
        for label, numbers in measured.items():
            if numbers["workers"] > 1:
                numbers["efficiency"] = numbers["median"] / (numbers["workers"] * one)
                print(f"scaling efficiency, {label}: {numbers['efficiency']:.0%} "
                      f"({numbers['median'] / one:.2f}x one worker)", file=out)
        return measured


def _spread(rates: list[float]) -> str:
    if len(rates) == 1:
        return f"{rates[0]:.1f}"
    return f"median {statistics.median(rates):.1f} (min {min(rates):.1f}, max {max(rates):.1f})"


def _cluster_size(address: str) -> int:
    from .cluster import RESOURCE, connect

    client = connect(address)
    try:
        return sum(1 for w in client.scheduler_info()["workers"].values() if w.get("resources", {}).get(RESOURCE))
    finally:
        client.close()
