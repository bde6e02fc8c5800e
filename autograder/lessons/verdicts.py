"""Lesson 2's measured verdicts in words: what this run found, set against the journal's claim.

The lesson's prose says what holds on every CPU; what depends on the CPU (is the journal's
tiling faster or slower here? which step moved the time? did LLVM emit gathers and scatters?)
is decided here, from the timings and instruction counts of this run, and printed. So the
notebook says "slower" where it measured slower, and "faster" where it measured faster.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import machine_code

JOURNAL_CLAIM = "the tiled kernel keeps each tile's intermediates in fast memory, so it runs faster"


@dataclass(frozen=True)
class Verdicts:
    """A few sentences, each decided by a measurement; Markdown in a notebook, text elsewhere."""

    title: str
    lines: tuple[str, ...]

    def _repr_markdown_(self) -> str:
        return "\n".join([f"**{self.title}**", "", *(f"- {line}" for line in self.lines)])

    def __str__(self) -> str:
        return "\n".join([self.title, *(f"- {line}" for line in self.lines)])

    __repr__ = __str__


def direction(stats) -> str:
    """'faster', 'slower' or 'no different' (the middle half of the rounds straddles 1)."""
    if stats.q1 > 1.0:
        return "faster"
    if stats.q3 < 1.0:
        return "slower"
    return "no different"


def _cpu(target) -> str:
    mcpu = str(getattr(target, "attrs", {}).get("mcpu", "") or "") if target is not None else ""
    return f"this CPU ({mcpu})" if mcpu else "this CPU"


def biggest_step(steps) -> tuple[str, float]:
    """The step of a step-by-step comparison whose median moved the time most, and its ratio to
    the step before it (above 1: that step made the build faster)."""
    names = steps.names
    best, ratio = names[0], 1.0
    for previous, name in zip(names, names[1:]):
        r = steps.speedup(name).median / steps.speedup(previous).median
        if abs(math.log(r)) > abs(math.log(ratio)):
            best, ratio = name, r
    return best, ratio


def tiling(comparison, steps, builds: dict, target, journal: str = "journal", tail: str = "journal + vectorised Add/ReLU") -> Verdicts:
    """What this run says about the journal's tiling: its verdict against the unscheduled build,
    the step that moved the time, the gathers and scatters, and what vectorising the tail did.

    `comparison` times the builds against the unscheduled one, `steps` the journal's steps one at
    a time, `builds` the executables by name (for their machine code)."""
    cpu = _cpu(target)
    lines = []
    s = comparison.speedup(journal)
    verdict = direction(s)
    spread = f"{s.median:.2f}x (middle half {s.q1:.2f}x to {s.q3:.2f}x)"
    if verdict == "slower":
        lines.append(f"On {cpu} the journal's schedule is slower than the unscheduled function: {spread}. That contradicts "
                     f"the journal's conclusion ({JOURNAL_CLAIM}): its intermediates are tile-sized (the allocation table above), and it is "
                     "still slower.")
    elif verdict == "faster":
        lines.append(f"On {cpu} the journal's schedule is faster than the unscheduled function: {spread}, as the journal "
                     "expects. Whether the cache is the reason is a separate question: the steps below answer it.")
    else:
        lines.append(f"On {cpu} the journal's schedule is no different from the unscheduled function within this "
                     f"measurement's spread: {spread}. The journal expected a clear gain.")
    step, ratio = biggest_step(steps)
    lines.append(f"The step that moved the time most: '{step}', {ratio:.2f}x the speed of the step before it"
                 f" ({'faster' if ratio > 1 else 'slower'}).")
    architecture = machine_code.target_architecture(target)
    if machine_code.is_x86(architecture):
        counts = {name: machine_code.classify(machine_code.instruction_counts(exe))["gathers and scatters"]
                  for name, exe in builds.items()}
        listed = ", ".join(f"'{name}' {n}" for name, n in counts.items())
        lines.append(f"Gathers and scatters in the generated code: {listed}.")
        if counts.get(journal, 0) > counts.get("unscheduled", 0):
            lines.append("LLVM vectorised the journal's 16x16 Add and ReLU with gathers and scatters: each vector lane "
                         "loaded or stored from an address of its own, where the unscheduled build used contiguous "
                         "vector loads and stores.")
        else:
            lines.append(f"The journal's build has no more gathers and scatters than the unscheduled one for {cpu}: "
                         "whatever its time did, it was not that; compare the other rows of the table.")
    else:
        lines.append(machine_code.non_x86_note(architecture))
    if tail in comparison.names:
        t = comparison.speedup(tail)
        versus_journal = comparison.measurements.speedup(journal, tail)
        relation = {"faster": "faster than", "slower": "slower than"}.get(direction(t), "no different from")
        lines.append(f"Vectorising the tile rows of Add and ReLU explicitly ('{tail}'): {relation} the "
                     f"unscheduled function ({t.median:.2f}x), {versus_journal.median:.2f}x the journal's speed.")
    return Verdicts(f"What this run measured, on {cpu}", tuple(lines))


def _bound(intensity: float, peak: float, bandwidth: float) -> str:
    return "compute" if bandwidth * intensity >= peak else "memory"


def roofline(points, roofs, target=None) -> Verdicts:
    """For each measured schedule: what each roof allows at its intensity, which roof binds (or
    that the answer lies within this run's spread), and what share of the higher roof it reached.

    `roofs` is a `roofline.Roofs`: the best of interleaved rounds, with the ranges the rounds saw."""
    cpu = _cpu(target)
    peak, bandwidths = roofs.peak, roofs.bandwidths
    lines = []
    far = []
    for point in points:
        described, allowed_all = [], []
        for label, bandwidth in bandwidths.items():
            allowed = min(peak, bandwidth * point.intensity)
            allowed_all.append(allowed)
            low, high = roofs.bandwidth_ranges.get(label, (bandwidth, bandwidth))
            kinds = {_bound(point.intensity, p, b) for p in roofs.peak_range + (peak,) for b in (low, high, bandwidth)}
            bound = f"{kinds.pop()}-bound" if len(kinds) == 1 else "at the ridge: memory- or compute-bound within this run's spread"
            described.append(f"{allowed:.1f} GFLOP/s with {label} ({bound})")
        higher = max(allowed_all)
        lines.append(f"'{point.name}': {point.intensity:.1f} FLOP/byte; the roofs allow {'; '.join(described)}; "
                     f"it reached {point.gflops:.1f} GFLOP/s, {100 * point.gflops / higher:.0f}% of the higher roof "
                     f"and {100 * point.gflops / min(allowed_all):.0f}% of the lower.")
        if point.gflops < 0.5 * min(allowed_all):
            far.append(point.name)
    if far:
        lines.append(f"Below half of every roof here: {', '.join(map(repr, far))}. Such a build is limited by neither the "
                     "arithmetic units nor the memory bandwidth as measured, but by its instruction stream: dependent chains, "
                     "gathers, loop overhead.")
    else:
        lines.append("No build here is below half of every roof: each reaches at least half of one of them.")
    lines.append(f"The roofs are the best of {roofs.rounds} interleaved rounds ({roofs.peak_label}: "
                 f"{roofs.peak_range[0]:.1f} to {roofs.peak_range[1]:.1f} GFLOP/s over the rounds). A busier machine "
                 "gives lower roofs and higher percentages; compare builds with each other, within this run.")
    return Verdicts(f"The roofline's verdicts, on {cpu}", tuple(lines))
