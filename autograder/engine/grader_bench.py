"""`tvm-course bench-grader`: how long one grading takes, stage by stage, and how steady its speedup is.

A benchmark, not a test: it prints numbers for a person to compare against the goals
(at most 5 s per CPU submission, 1 s from a warm fork server; speedup coefficient of variation at most 5% over 10 gradings;
with `fresh_processes`, each grading in a new process of its own, the same score in every one).

Each grading's rounds ran at stack positions of their own (placement.py); this prints their
ratios grouped by the stack's alignment (its address modulo placement.ALIGNMENT, as this
interpreter's ctypes frames place it), the spread between placements, beside the spread
between gradings (and, with fresh processes, between processes).
"""
from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import time
from typing import Any

from . import placement
from .bench import Stats
from .measure import band_rule_bounds
from .config import GraderConfig
from ..problems import get_problem
from ..problems.variants import Variant
from .pipeline import UsageError, grade_source
from .report import Result

GOAL_SECONDS_PER_SUBMISSION = 5.0
GOAL_WARM_SECONDS = 1.0  # issue 15: end to end, from a warm fork server, on a quiet 2-core machine
GOAL_SPEEDUP_CV = 0.05


def run(problem: str, source: str, runs: int, config: GraderConfig, out=print, variant=None,
        fresh_processes: bool = False) -> dict:
    if fresh_processes:
        out("  each grading in a fresh process of its own (a new interpreter and fork server: its stack, libraries "
            "and memory placed afresh)")
    elif config.warm_start:
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
        result = (grade_in_fresh_process if fresh_processes else grade_source)(problem, source, config, variant=variant)
        results.append(result)
        round_spread = result.yardstick_spread or {}
        out(f"  grading {index + 1:2d}/{runs}: {result.status:9s} score {result.score:.2f}  "
            f"speedup {_fmt(result.speedup)}  vs yardstick {_fmt(result.yardstick_speedup)}"
            f" (cv {round_spread.get('cv', float('nan')):.1%})  {time.perf_counter() - started:5.2f} s")
        by_alignment = placement_medians(result)
        if by_alignment:
            out("      by stack alignment (address mod 64, bytes: median ratio, rounds): "
                + ", ".join(f"{key}: {value:.3f}x ({count})" for key, (value, count) in by_alignment.items())
                + f"; between them {_relative_spread([v for v, _ in by_alignment.values()]):.1%}")
    stages = sorted({k for r in results for k in r.timings})
    out("\nwall time per stage, seconds (median [min-max] over the gradings):")
    out("  student and evaluator children overlap: the evaluator prepares while the student's code runs")
    for stage in stages:
        values = [r.timings[stage] for r in results if stage in r.timings]
        out(f"  {stage:22s} {statistics.median(values):6.3f} [{min(values):.3f}-{max(values):.3f}]")
    total = Stats.of([r.timings["total"] for r in results])
    summary: dict[str, Any] = {"total_median_s": total.median, "statuses": sorted({r.status for r in results}),
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
        between = [_relative_spread([v for v, _ in m.values()]) for m in map(placement_medians, results) if m]
        if between:
            summary.update(placement_spread_median=statistics.median(between), placement_spread_max=max(between))
            out(f"between placements (the stack's alignment classes) within one grading: median {statistics.median(between):.1%}, "
                f"most {max(between):.1%} of the ratio; between {'processes' if fresh_processes else 'gradings'}: "
                f"{_relative_spread(relative):.1%} (max over min, less one)")
    out(f"end-to-end: median {total.median:.2f} s per submission (goal <= {GOAL_SECONDS_PER_SUBMISSION:g} s)")
    timed = [r.timings["evaluate.time"] for r in results if "evaluate.time" in r.timings]
    if timed:
        rest = Stats.of([r.timings["total"] - r.timings.get("evaluate.time", 0.0) for r in results])
        summary.update(timing_median_s=statistics.median(timed), overhead_median_s=rest.median)
        out(f"  of which timing {statistics.median(timed):.2f} s (the measurement itself: at least {band_rule_bounds(config)[0]} "
            f"interleaved rounds of every function, each sample >= {config.min_repeat_ms:g} ms) and everything else "
            f"{rest.median:.2f} s [{rest.minimum:.2f}-{rest.maximum:.2f}] (goal for the whole <= {GOAL_WARM_SECONDS:g} s, warm)")
    out(f"statuses seen: {', '.join(summary['statuses'])}; scores seen: {', '.join(f'{s:.2f}' for s in summary['scores'])}")
    return summary


def placement_medians(result: Result) -> dict[int, tuple[float, int]]:
    """A grading's per-round ratios grouped by the alignment of the stack they ran at: class ->
    (median ratio, rounds). Empty where the rounds were not placed, or this interpreter cannot
    say how far each step moves its stack."""
    offsets = placement.stack_offsets()
    rounds: list[dict] = (result.yardstick_spread or {}).get("placements") or []
    if not offsets or not rounds:
        return {}
    grouped: dict[int, list[float]] = {}
    for entry in rounds:
        grouped.setdefault(offsets[entry["step"]] % placement.ALIGNMENT, []).append(entry["ratio"])
    return {key: (statistics.median(values), len(values)) for key, values in sorted(grouped.items())}


def grade_in_fresh_process(problem: str, source: str, config: GraderConfig, variant: Variant | None = None) -> Result:
    """`grade_source` in a new interpreter (this module run as a program): a process whose stack,
    libraries and fork server are placed afresh, as a student's separate grading would be."""
    request = {"problem": problem, "source": source, "config": config.as_dict(),
               "variant": variant.to_dict() if variant else None}
    done = subprocess.run([sys.executable, "-m", __name__], input=json.dumps(request), capture_output=True, text=True,
                          timeout=config.student_timeout_s + config.evaluate_timeout_s + 600)
    lines = done.stdout.strip().splitlines()
    if done.returncode == 2:
        raise UsageError(done.stderr.strip().splitlines()[-1] if done.stderr.strip() else "usage error")
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"the grading process failed (exit {done.returncode}): {done.stderr.strip()[-500:]}")
    return Result.from_dict(json.loads(lines[-1]))


def _fresh_main() -> int:
    request = json.loads(sys.stdin.read())
    try:
        result = grade_source(request["problem"], request["source"], GraderConfig(**request["config"]),
                              variant=Variant.from_dict(request["variant"]) if request["variant"] else None)
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    print(json.dumps(result.to_dict()))  # one line: the last of the output
    return 0


def _relative_spread(values) -> float:
    values = [v for v in values if v]
    return max(values) / min(values) - 1 if values else 0.0


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


if __name__ == "__main__":
    sys.exit(_fresh_main())
