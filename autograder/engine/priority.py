"""Timing in the foreground: everything a grading does besides timing yields the CPU to timings.

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

Two mechanisms, because the kernel has two levels: a process's nice value ranks it against the
processes of its own session, and where the kernel groups sessions (autogroup,
/proc/sys/kernel/sched_autogroup_enabled, on by default in most distributions) the session's
own nice value ranks the whole session against the others. Every grading child starts a
session of its own, so a background process raises both. Unprivileged processes may raise
either (lower their priority), never lower it again: the runner is forked before its evaluator
steps back, and a child can only be as urgent as its parent was when it was started.
"""
from __future__ import annotations

import errno
import os
import time

# The scheduler's weight of nice 19 is 15 against the runner's 1024: a core shared with it is
# the runner's 98.5% of the time. Measured, 20 copies of the register-blocked sample graded by 2
# workers on 2 cores (per-round spread of the ratio, and the rounds it took to decide the band):
# all at normal priority, coefficient of variation 0.25-0.35 and 45 rounds for most; the rest
# at nice 10, 0.10-0.23 and a median of 21 rounds; at nice 19, 0.03-0.20 and a median of 15.
BACKGROUND_NICE = 19
AUTOGROUP = "/proc/self/autogroup"
# The kernel takes one session nice value a tenth of a second from unprivileged processes,
# machine-wide (EAGAIN otherwise): a class run starts a session about every half second.
_SESSION_TRIES, _SESSION_WAIT_S = 3, 0.1


def to_background(nice: int = BACKGROUND_NICE, session: bool = True) -> str:
    """Lower this process's priority to at least `nice` (and its session's, with `session`, where
    the kernel groups sessions): what was done, for the record. Never raises: a priority is a
    preference, and a kernel that refuses it leaves the grading as correct as before."""
    if nice <= 0:
        return "normal priority"
    done = []
    try:
        current = os.getpriority(os.PRIO_PROCESS, 0)
        if current < nice:
            os.setpriority(os.PRIO_PROCESS, 0, nice)
        done.append(f"nice {max(current, nice)}")
    except OSError:
        pass
    if session and _set_session_nice(nice):
        done.append(f"session nice {nice}")
    return ", ".join(done) or "normal priority (the kernel refused a lower one)"


def session_nice() -> int | None:
    """This session's autogroup nice value, or None where it has none: a kernel that does not group
    sessions, or a process still in the kernel's default group (a session never started since
    boot, as under some containers' init), where the file is empty and a write is refused."""
    try:
        with open(AUTOGROUP, encoding="ascii") as handle:
            return int(handle.read().split("nice")[-1])
    except (OSError, ValueError):
        return None


def _set_session_nice(nice: int) -> bool:
    current = session_nice()
    if current is None:
        return False
    if current >= nice:
        return True
    for attempt in range(_SESSION_TRIES):
        try:
            with open(AUTOGROUP, "w", encoding="ascii") as handle:
                handle.write(str(nice))
            return True
        except OSError as error:
            if error.errno != errno.EAGAIN or attempt == _SESSION_TRIES - 1:
                return False
            time.sleep(_SESSION_WAIT_S)
    return False
