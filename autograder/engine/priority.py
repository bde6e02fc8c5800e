"""Timing in the foreground: the work around a timing steps back behind it, where a nice value counts.

A class run keeps every core busy: while one worker's runner times a schedule, the other
workers compile, replay, run students' code, write feedback. On 2 cores that is 2-4 runnable
tasks for 2 cores (sampled from /proc/loadavg during a class run), and a timing sample (15 ms)
that the scheduler shares with one of them is stretched by whole time slices: the per-round
ratios of the register-blocked solution spread 25-35% (coefficient of variation) in a class
run against 3-13% when graded alone, so its interval straddled the 1.45x edge, timing ran all
45 rounds, and now and then a median fell a band. The CPU time is the same either way; what
matters is who waits. So the work around the timing runs at a lower priority than the runner
(nice BACKGROUND_NICE, GraderConfig.background_nice): the runner keeps the normal priority it
was forked with, and the rest of the class run fills the gaps. A student's code is background
too, so a schedule() that spins for its whole time limit hardly stretches another's timing.
The price, on a machine busy with other people's work at normal priority: these steps wait for
that work as well (the time limits are generous for that: 30 s for code that takes 0.2 s).

Only the process's own nice value, never its session's. Where the kernel groups sessions
(autogroup, on in most distributions) a nice value ranks a process only against its own session:
between sessions, which every grading child starts, it does nothing. An earlier scheme also raised
each background session's nice value; with the whole session at weight 15 against 1024, a machine
busy with other people's work at normal priority (load 6 on 2 cores) left a grading's children
about 1% of a core, and their limits ran out while they waited: a zero for the machine's load.
Between sessions, timings are protected by the timing itself, as they are against the rest of the
machine: each sample is the fastest of 0.5 ms slices (engine/bench.py), which a slice the
scheduler cut cannot win (at load 6, 4 busy sessions beside the timing, the per-round spread of the
ratio measured 0.1-0.7%, README "Speed across microarchitectures and under load"), and a class run
grades again a timing whose core was shared (course/retime.py). What a child waited for a CPU
does not count against its limits (engine/runqueue.py). Within a session, the nice value still
orders the evaluator's compile behind the runner it forked.
"""
from __future__ import annotations

import os

# The scheduler's weight of nice 19 is 15 against the runner's 1024: a core shared with it is
# the runner's 98.5% of the time. Measured, 20 copies of the register-blocked sample graded by 2
# workers on 2 cores (per-round spread of the ratio, and the rounds it took to decide the band):
# all at normal priority, coefficient of variation 0.25-0.35 and 45 rounds for most; the rest
# at nice 10, 0.10-0.23 and a median of 21 rounds; at nice 19, 0.03-0.20 and a median of 15.
BACKGROUND_NICE = 19


def to_background(nice: int = BACKGROUND_NICE) -> str:
    """Lower this process's priority to at least `nice`: what was done, for the record. Never
    raises: a priority is a preference, and a kernel that refuses it leaves the grading as correct
    as before."""
    if nice <= 0:
        return "normal priority"
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        return f"nice {max(current, nice)}"
    except OSError:
        return "normal priority (the kernel refused a lower one)"
