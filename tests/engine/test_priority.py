"""priority.py: timings in the foreground, everything else a grading does behind them.

Priorities only go one way for an unprivileged process, so every change is made in a child
started in a session of its own. The suite may itself run at any nice value (`nice -n 5 make test`): what is
expected is relative to the priority the child started with, never an absolute 0.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from autograder.engine.config import GraderConfig
from autograder.engine.pipeline import grade_source


def in_own_session(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                          start_new_session=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def test_a_background_process_steps_back_and_leaves_its_session_as_it_was():
    """Its session's nice value (autogroup) is left alone: raising it put the whole session at
    weight 15, and on a busy machine a grading's children then waited out their limits."""
    seen = in_own_session("""
        import json, os
        def session_nice():
            try:
                return open("/proc/self/autogroup").read().split("nice")[-1].strip() or None
            except OSError:
                return None
        from autograder.engine.priority import to_background
        before, base = session_nice(), os.getpriority(os.PRIO_PROCESS, 0)
        said = to_background(12)
        print(json.dumps({"before": before, "said": said, "nice": os.getpriority(os.PRIO_PROCESS, 0),
                          "session": session_nice(), "base": base}))
    """)
    nice = max(seen["base"], 12)
    assert seen["nice"] == nice and seen["said"] == f"nice {nice}"
    assert seen["session"] == seen["before"]


def test_stepping_back_never_raises_a_priority_and_zero_leaves_it_alone():
    seen = in_own_session("""
        import json, os
        from autograder.engine.priority import to_background
        base = os.getpriority(os.PRIO_PROCESS, 0)
        first = to_background(15)
        second = to_background(5)   # not back up to 5: a process cannot, and should not try
        print(json.dumps({"first": first, "second": second, "zero": to_background(0),
                          "nice": os.getpriority(os.PRIO_PROCESS, 0), "base": base}))
    """)
    nice = max(seen.pop("base"), 15)
    assert seen == {"first": f"nice {nice}", "second": f"nice {nice}", "zero": "normal priority", "nice": nice}


def test_the_runner_keeps_the_priority_it_was_forked_with_while_its_evaluator_steps_back():
    # What evaluate.main does: fork the runner, then step back.
    seen = in_own_session("""
        import json, os
        from autograder.engine.config import GraderConfig
        from autograder.engine.measure import LocalRunner
        from autograder.engine.priority import to_background
        from autograder.problems import get_problem
        base = os.getpriority(os.PRIO_PROCESS, 0)
        runner = LocalRunner(get_problem("tile-fused-conv"), GraderConfig())
        try:
            to_background(GraderConfig().background_nice)
            print(json.dumps({"evaluator": os.getpriority(os.PRIO_PROCESS, 0),
                              "runner": os.getpriority(os.PRIO_PROCESS, runner.child.proc.pid), "base": base}))
        finally:
            runner.close()
    """)
    base = seen.pop("base")
    assert seen == {"evaluator": max(base, GraderConfig().background_nice), "runner": base}


@pytest.mark.alone
@pytest.mark.slow
def test_the_students_code_runs_behind_every_timing(fast_config):
    source = "import os\n\ndef schedule(sch):\n    print('student nice', os.getpriority(os.PRIO_PROCESS, 0))\n"
    result = grade_source("tile-fused-conv", source, fast_config)
    nice = max(os.getpriority(os.PRIO_PROCESS, 0), fast_config.background_nice)
    assert f"student nice {nice}" in result.student_output


@pytest.mark.parametrize("nice", [-1, 20, 2.5, True])
def test_a_background_nice_outside_the_kernels_range_is_refused(nice):
    with pytest.raises(ValueError, match="background_nice"):
        GraderConfig(background_nice=nice)


@pytest.mark.alone
@pytest.mark.slow
def test_a_neighbour_at_normal_priority_in_another_session_moves_no_verdict(fast_config):
    """What the kernel enforces between sessions is fairness, not our nice values: a spinning
    process of another session on every core (what another grading's untrusted work is to this
    one's timing) takes its share of the timing's core. The timing notices it itself (each sample
    is the fastest of short slices, which an interrupted slice cannot win), so the solution still
    earns all the speed points and the journal none."""
    import solutions
    from autograder import examples

    spin = "import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end:\n    pass\n"
    neighbours = [subprocess.Popen([sys.executable, "-c", spin], start_new_session=True)
                  for _ in range(len(os.sched_getaffinity(0)))]
    try:
        solution = grade_source("tile-fused-conv", solutions.source("blocked_vectorized"), fast_config)
        journal = grade_source("tile-fused-conv", examples.source("journal"), fast_config)
    finally:
        for neighbour in neighbours:
            neighbour.kill()
            neighbour.wait()
    assert solution.credit["speed"] == pytest.approx(0.3), solution.to_text()
    assert journal.correct and journal.credit["speed"] == 0.0, journal.to_text()
