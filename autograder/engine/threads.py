"""The environment of a process that runs TVM code: how many threads, and no thread pinning.

TVM's thread pool, when it starts (the first parallel loop, or `tvm.runtime.num_threads()`),
binds the calling thread to one core unless TVM_BIND_THREADS is 0: with TVM_NUM_THREADS=1, and
with TVM's default on 2 cores, the main thread of the process is left allowed on CPU 0 only
(TVM 0.27, checked with os.sched_getaffinity). Every process it starts afterwards inherits that:
a lesson's kernel, once `session.start()` had asked for the thread count, ran MetaSchedule's
workers and its self-checks' graders all on one core of two, and so did a test run's worker
(and every class run, kernel and browser it started after) once one of its tests had run TVM
in-process. A grading child bound so would also read as having narrowed its own CPUs, whose
waiting buys no time (runqueue.py). The course sets the thread count where it means one, and
never pins: the scheduler places threads, as it does for every other process."""
from __future__ import annotations

NO_PINNING = {"TVM_BIND_THREADS": "0"}


def tvm_thread_env(threads: int) -> dict[str, str]:
    """TVM's pool at `threads` threads, unpinned; OpenMP (a library's own pool) at one."""
    return {"TVM_NUM_THREADS": str(threads), "OMP_NUM_THREADS": "1", **NO_PINNING}
