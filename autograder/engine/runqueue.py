"""How long a child's processes ran, and how long they waited for a CPU, by the kernel's accounting.

A time limit is there to stop code that does not finish, not to charge a child for a busy machine.
On 2 cores at load 6, a child that needs 1 s of CPU takes 3 s or more of wall time, most of it
waiting on a run queue behind other people's work; a wall-clock limit made that the student's
timeout. So a child's deadline moves by the time it spent waiting for a CPU, which the kernel
counts for every task (/proc/PID/task/TID/schedstat: time on a CPU, time runnable but waiting,
in nanoseconds), read by the trusted parent, never reported by the child.

What the child cannot buy with it:
- Waiting it causes itself (many threads spinning on few cores) is paid for with CPU time: the
  extension holds only while the child's tasks have used less CPU than the limit, and spinners on
  an otherwise idle machine use CPU as fast as they wait (tests/engine/test_runqueue.py).
- Sleeping (time.sleep, a blocked read) is not waiting for a CPU: it times out as before.
- A wait past `RunQueueClock.backstop` ends the child as *starved*: the machine, not the code,
  kept it from finishing, and the grading is a grader fault (pending), not a zero.

Where the kernel keeps no schedstat (CONFIG_SCHED_INFO off), the clock reads nothing and limits
are wall-clock, as they were.
"""
from __future__ import annotations

import os

_NS = 1e-9


def _task_times(pid: int) -> dict[int, tuple[int, int]]:
    """Every thread of `pid`: tid -> (ns on a CPU, ns runnable but waiting). Empty when it is gone."""
    times: dict[int, tuple[int, int]] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return times
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as handle:
                on_cpu, waiting = handle.read().split()[:2]
            times[int(tid)] = (int(on_cpu), int(waiting))
        except (OSError, ValueError):
            continue
    return times


def _session_nice(pid: int) -> int | None:
    """The nice value of the kernel's group for `pid`'s session (autogroup), None where none."""
    try:
        with open(f"/proc/{pid}/autogroup", encoding="ascii") as handle:
            return int(handle.read().split("nice")[-1])
    except (OSError, ValueError):
        return None


class RunQueueClock:
    """The CPU time and the run-queue wait of a process tree since `restart()`.

    Tasks that end between two samples keep the last values seen; a task seen for the first
    time after the restart counts from zero (it was born after it). The wait that counts is the
    longest any one task waited, not the sum: concurrent tasks wait at the same time.

    A task's wait counts only while it runs as the grader started it: a task that lowered its
    own share of the CPU (SCHED_IDLE, a session nice value above the one it started with, fewer
    CPUs than the grader may use) waits by its own choice, and that buys no time. These are
    checked at every sample, by the kernel's word (sched_getscheduler, sched_getaffinity,
    /proc/PID/autogroup), and a lowered priority cannot be raised again (engine/confine.py:
    RLIMIT_NICE hard 0).
    """

    def __init__(self) -> None:
        self._base: dict[int, tuple[int, int]] = {}
        self._last: dict[int, tuple[int, int]] = {}
        self._counted_wait: dict[int, int] = {}  # tid -> ns of wait while it ran as started
        self.available = os.path.exists("/proc/self/schedstat")
        self._cpus = os.sched_getaffinity(0)
        self._session_nice: int | None = None
        self._sessions_seen = False

    def sample(self, pids) -> None:
        if not self.available:
            return
        for pid in pids:
            session_nice = _session_nice(pid)
            if not self._sessions_seen:  # the root of the tree, before anything of the child's ran
                self._session_nice, self._sessions_seen = session_nice, True
            session_as_started = session_nice is None or self._session_nice is None or session_nice <= self._session_nice
            for tid, now in _task_times(pid).items():
                before = self._last.get(tid, (now[0], 0))
                if session_as_started and self._as_started(tid):
                    self._counted_wait[tid] = self._counted_wait.get(tid, 0) + max(0, now[1] - before[1])
                self._last[tid] = now

    def _as_started(self, tid: int) -> bool:
        try:
            return os.sched_getscheduler(tid) in (os.SCHED_OTHER, os.SCHED_BATCH) and os.sched_getaffinity(tid) >= self._cpus
        except OSError:  # gone since it was read
            return False

    def restart(self) -> None:
        """Count from now: what the tree has used so far (start-up) is not the child's."""
        self._base = dict(self._last)
        self._counted_wait = {}

    @property
    def cpu_s(self) -> float:
        """CPU time of every task of the tree since the restart, added up."""
        return sum(now[0] - self._base.get(tid, (0, 0))[0] for tid, now in self._last.items()) * _NS

    @property
    def wait_s(self) -> float:
        """The longest time one task of the tree waited for a CPU since the restart, while it ran
        as it was started."""
        return max(self._counted_wait.values(), default=0) * _NS


def deadline_state(clock: RunQueueClock, elapsed_s: float, limit_s: float, backstop_s: float) -> str | None:
    """None while the child may go on; 'timed_out' when its time is up; 'starved' when it waited
    for a CPU longer than `backstop_s` without having used its limit's worth of CPU.

    The child's own time is its elapsed time less its wait for a CPU: CPU time plus sleeping.
    Once it has used `limit_s` of CPU, no wait extends it (its waiting was its own doing)."""
    if elapsed_s <= limit_s:
        return None
    if clock.cpu_s >= limit_s:
        return "timed_out"
    wait = clock.wait_s
    if wait >= backstop_s:
        return "starved"
    if elapsed_s - wait > limit_s:
        return "timed_out"
    return None
