"""runqueue.py and the child's deadline: a busy machine's wait is not the child's time, and a child
cannot buy time, or a grader fault, with waiting of its own making. The attacker's tests use the
tricks a submission has (its own threads and processes, its own scheduling class and CPU
affinity); the machine's load is played by hogs on every CPU, each in a session of its own, as
other people's work would be."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.engine.runqueue import RunQueueClock
from autograder.engine.sandbox import Child

FIXTURE_DIR = str(Path(__file__).parent)
HOG = "import sys\nsys.stdout.write('r')\nsys.stdout.close()\nwhile True:\n    pass\n"  # says it runs, then spins
CPUS = len(os.sched_getaffinity(0))

pytestmark = [pytest.mark.alone,
              pytest.mark.skipif(not RunQueueClock().available or 0 not in os.sched_getaffinity(0),
                                 reason="the kernel keeps no schedstat here, or CPU 0 is not ours: limits stay wall-clock")]


def child(mode: str, *args: str) -> Child:
    return Child("sandbox_child_fixture", [mode, *args], env={"PYTHONPATH": FIXTURE_DIR}).start()


@pytest.fixture
def hogs():
    """hogs(n): n processes spinning for each CPU, each in its own session; stopped after the test."""
    started = []

    def start(count: int) -> None:
        these = [subprocess.Popen([sys.executable, "-c", HOG], start_new_session=True, stdout=subprocess.PIPE)
                 for _ in range(count * CPUS)]
        started.extend(these)
        # Every hog is spinning before the child's clock starts: on a machine already busy, 32
        # interpreters take seconds to start, and a child timed meanwhile is not yet the one
        # the test means (it got more of a core than the hogs will leave it).
        for hog in these:
            assert hog.stdout.read(1) == b"r"
            hog.stdout.close()

    yield start
    for hog in started:
        hog.kill()
        hog.wait()


def test_a_child_slowed_by_a_busy_machine_is_not_timed_out_for_it(hogs):
    hogs(2)
    outcome = child("cpu_work", "0.6").wait(1.0, clock_starts_at="work", starved_after=10)
    done = outcome.last("done")
    assert done is not None and not outcome.timed_out and not outcome.starved, outcome
    # It ran past its limit in wall time, waiting its turn beside the hog: only the kernel's
    # accounting of that wait kept it from a timeout a quiet machine would not have given.
    assert outcome.wall_s > 1.0 and outcome.runqueue_wait_s > 0.3


def test_a_child_the_machine_will_not_run_is_starved_a_grader_fault_not_a_timeout(hogs):
    hogs(8)
    outcome = child("cpu_work", "30").wait(0.3, clock_starts_at="work", starved_after=3)
    assert outcome.starved and not outcome.timed_out, outcome
    assert outcome.cpu_s < 0.3 and outcome.runqueue_wait_s >= 0.9


def test_sleeping_is_not_waiting_for_a_cpu():
    started = time.monotonic()
    outcome = child("sleep").wait(0.5)
    assert outcome.timed_out and not outcome.starved
    assert time.monotonic() - started < 3 and outcome.runqueue_wait_s < 0.5


def test_spinning_more_processes_than_cores_is_paid_for_in_cpu_time():
    """The attacker's own processes queue behind each other: each waits, and the tree uses CPU
    as fast as the machine gives it. Judged on the CPU it used, it times out; it never becomes
    a grader fault while the machine gives it a sixth of a core or more."""
    started = time.monotonic()
    outcome = child("spinners", "6").wait(1.0, clock_starts_at="work", starved_after=6)
    assert outcome.timed_out and not outcome.starved, outcome
    assert outcome.cpu_s >= 1.0
    assert time.monotonic() - started < 15


@pytest.mark.parametrize("mode", ["cpu_work_idle_class", "pin_and_spin_on_cpu0"])
def test_a_child_that_lowers_its_own_share_waits_at_its_own_expense(hogs, mode):
    """SCHED_IDLE, or one CPU where the grader gave it every one: beside the hogs it waits almost
    all the time, and none of that wait extends its limit or makes it the machine's fault."""
    hogs(2)
    started = time.monotonic()
    outcome = child(mode, "30").wait(0.5, clock_starts_at="work")
    assert outcome.timed_out and not outcome.starved, outcome
    assert outcome.runqueue_wait_s < 0.5
    assert time.monotonic() - started < 5


@pytest.mark.slow
def test_a_grading_the_machine_starves_is_a_grader_fault_pending_not_a_timeout(hogs, fast_config):
    """End to end: schedule() needs more CPU than the busy machine gives it within its limit's
    backstop; the grading is the grader's fault (pending), not the student's timeout."""
    import dataclasses

    from autograder.engine.pipeline import grade_source

    source = ("import time\n\ndef schedule(sch):\n    start = time.process_time()\n"
              "    while time.process_time() - start < 30:\n        pass\n")
    hogs(16)  # a seventeenth of a core: well under the tenth (sandbox.STARVED_AFTER) that starves
    result = grade_source("tile-fused-conv", source, dataclasses.replace(fast_config, student_timeout_s=0.5))
    assert result.status == "error" and result.grader_fault, result.messages
    assert "waiting for a CPU" in result.messages[0] and "not your code" in result.messages[0]
