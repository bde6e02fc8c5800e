"""`tvm-course bench-grader`: how long one grading takes, stage by stage, and how steady its speedup is.

A benchmark, not a test: it prints numbers for a person to compare against the goals
(at most 5 s per CPU submission, 1 s from a warm fork server; speedup coefficient of variation at most 5% over 10 gradings).
"""
from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time

from .bench import Stats
from .config import GraderConfig
from ..problems import get_problem
from .pipeline import grade_source

GOAL_SECONDS_PER_SUBMISSION = 5.0
GOAL_WARM_SECONDS = 1.0  # issue 15: end to end, from a warm fork server, on a quiet 2-core machine
GOAL_SPEEDUP_CV = 0.05


def run(problem: str, source: str, runs: int, config: GraderConfig, out=print, variant=None) -> dict:
    if config.warm_start:
        from .forkserver import shared_server

        server = shared_server()
        if server is not None:
            out(f"  fork server ready: TVM and the grader imported once, in {server.warm_up_s:.2f} s "
                "(each grading forks its children from it)")
        else:
            out("  no fork server here: every child starts a new interpreter")
    else:
        out("  cold start (--no-warm-start): every child starts a new interpreter")
    results = []
    for index in range(runs):
        started = time.perf_counter()
        result = grade_source(problem, source, config, variant=variant)
        results.append(result)
        spread = result.yardstick_spread or {}
        out(f"  grading {index + 1:2d}/{runs}: {result.status:9s} score {result.score:.2f}  "
            f"speedup {_fmt(result.speedup)}  vs yardstick {_fmt(result.yardstick_speedup)}"
            f" (cv {spread.get('cv', float('nan')):.1%})  {time.perf_counter() - started:5.2f} s")
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
    relative = [r.yardstick_speedup for r in results if r.yardstick_speedup is not None]
    if relative:
        spread = Stats.of(relative)
        within = statistics.median(r.yardstick_spread["cv"] for r in results if r.yardstick_spread)
        summary.update(yardstick_median=spread.median, yardstick_cv=spread.cv, yardstick_min=spread.minimum,
                       yardstick_max=spread.maximum, yardstick_cv_within=within)
        out(f"speed against the yardstick over {runs} gradings ({results[0].cpu}): median {spread.median:.3f}x, "
            f"min {spread.minimum:.3f}, max {spread.maximum:.3f}, coefficient of variation {spread.cv:.1%} "
            f"between gradings, {within:.1%} between the rounds of one")
        bands = ", ".join(f"{b.min_speedup:g}x: {b.credit:.0%}" for b in get_problem(problem).speed_bands)
        nearest = min(abs(spread.median - b.min_speedup) for b in get_problem(problem).speed_bands)
        out(f"band edges ({bands}): the nearest is {nearest:.3f} away, "
            f"{nearest / max(spread.cv * spread.median, 1e-9):.0f} times the spread between gradings")
    out(f"end-to-end: median {total.median:.2f} s per submission (goal <= {GOAL_SECONDS_PER_SUBMISSION:g} s)")
    timed = [r.timings["evaluate.time"] for r in results if "evaluate.time" in r.timings]
    if timed:
        rest = Stats.of([r.timings["total"] - r.timings.get("evaluate.time", 0.0) for r in results])
        summary.update(timing_median_s=statistics.median(timed), overhead_median_s=rest.median)
        out(f"  of which timing {statistics.median(timed):.2f} s (the measurement itself: at least {config.timing_rounds} "
            f"interleaved rounds of every function, each sample >= {config.min_repeat_ms:g} ms) and everything else "
            f"{rest.median:.2f} s [{rest.minimum:.2f}-{rest.maximum:.2f}] (goal for the whole <= {GOAL_WARM_SECONDS:g} s, warm)")
    out(f"statuses seen: {', '.join(summary['statuses'])}; scores seen: {', '.join(f'{s:.2f}' for s in summary['scores'])}")
    return summary


@contextlib.contextmanager
def busy_load(processes: int, limit_s: float = 3600.0):
    """`processes` busy loops at normal priority, each in a session of its own (as other users'
    work is: the kernel's autogroup weighs sessions against each other), for the benchmark of
    the spread between gradings on a loaded machine. Each stops by itself after `limit_s`, and
    all are killed on leaving."""
    loop = f"import time\nend = time.monotonic() + {float(limit_s)!r}\nwhile time.monotonic() < end:\n    pass\n"
    started = [subprocess.Popen([sys.executable, "-c", loop], start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for _ in range(processes)]
    try:
        yield started
    finally:
        for process in started:
            process.kill()
        for process in started:
            process.wait()


def calibration_lines(problem: str, cpu: str, host: str) -> list[str]:
    """What the problem's calibration measured for code compiled for `cpu` (on this host's
    microarchitecture first), or what a CPU outside it may see."""
    found = get_problem(problem)
    measured = found.measured_for(cpu)
    if not found.measured:
        return []
    if not measured:
        solution = [m.median for m in found.measured if m.schedule == "solution"]
        full = max(b.min_speedup for b in found.speed_bands)
        return [f"  calibration: nothing was measured compiled for {cpu}; the bands were set from code run on "
                f"{', '.join(found.calibrated_hosts())}, where the solution measured {min(solution):.2f}x to "
                f"{max(solution):.2f}x the yardstick (all the speed points from {full:g}x). Its speed follows the core "
                f"that runs it: on a CPU outside those, compare it with this run's own numbers above"]
    measured.sort(key=lambda m: (m.host != host, m.host, m.schedule))
    lines = [f"  calibration, compiled for {cpu} (median [min-max] against the yardstick):"]
    for m in measured:
        lines.append(f"    on a {m.host:8s} {m.schedule:22s} {m.median:.2f}x [{m.low:.2f}-{m.high:.2f}]  ({m.how})")
    if host not in {m.host for m in measured}:
        lines.append(f"    this host ({host}) is not among those: its own numbers are the ones above")
    return lines


def per_cpu_table(summaries: dict[str, dict]) -> str:
    """One line per CPU (and workload): the speed against the yardstick, its spread, and the credit it earns."""
    lines = ["cpu / workload  vs yardstick  [min-max]        cv between gradings  scores"]
    for cpu, summary in summaries.items():
        if "yardstick_median" not in summary:
            lines.append(f"{cpu:15s} (not timed)")
            continue
        lines.append(
            f"{cpu:15s} {summary['yardstick_median']:6.3f}x      [{summary['yardstick_min']:.3f}-{summary['yardstick_max']:.3f}]"
            f"    {summary['yardstick_cv']:6.1%}               {', '.join(f'{s:.2f}' for s in summary['scores'])}"
        )
    return "\n".join(lines)


def _fmt(value: float | None) -> str:
    return "   -  " if value is None else f"{value:5.2f}x"
