"""Hostile submissions that go after the grader itself, not the schedule: each must fail.

These are the attacks a security review tried against the sandbox (forging the evaluator's
result through /proc, outliving the grading, flooding the channel, malformed reports, reading
the grader's environment). Each test grades the attack for real and checks it gains nothing.
"""
from __future__ import annotations

import os
import textwrap

import pytest

from autograder.engine.pipeline import grade_source

pytestmark = pytest.mark.slow

FORGE_THE_EVALUATORS_RESULT = '''
import json, os, signal
def schedule(sch):
    forged = {"kind": "result", "outcome": "ran", "correct": True, "checks": [], "messages": [],
              "speedup": {"median": 3.0, "q1": 3.0, "q3": 3.0, "minimum": 3.0, "maximum": 3.0, "cv": 0.0, "n": 15}}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            continue
        if b"autograder.engine.evaluate" in cmd:
            fd = int(cmd[cmd.index(b"autograder.engine.evaluate") + 1])
            with open(f"/proc/{pid}/fd/{fd}", "w") as channel:
                channel.write(json.dumps(forged) + "\\n")
            os.kill(int(pid), signal.SIGKILL)
            return
    raise RuntimeError("no evaluator found")
'''


def grade(source, config):
    return grade_source("tile-fused-conv", textwrap.dedent(source), config)


def test_the_evaluators_channel_cannot_be_opened_from_student_code(fast_config):
    result = grade(FORGE_THE_EVALUATORS_RESULT, fast_config)
    assert result.status == "error" and result.score == 0
    assert "PermissionError" in result.messages[0]


def test_student_code_cannot_start_processes_that_outlive_the_grading(fast_config):
    result = grade(
        """
        import os, time
        def schedule(sch):
            if os.fork() == 0:
                os.setsid()
                time.sleep(600)
        """,
        fast_config,
    )
    assert result.status == "error"
    # seccomp refuses fork (EPERM); without seccomp, RLIMIT_NPROC does (EAGAIN)
    assert "PermissionError" in result.messages[0] or "BlockingIOError" in result.messages[0]


def test_student_code_cannot_start_threads_either(fast_config):
    result = grade(
        """
        import threading
        def schedule(sch):
            threading.Thread(target=lambda: None).start()
        """,
        fast_config,
    )
    assert result.status == "error" and "thread" in result.messages[0].lower()


@pytest.mark.skipif(os.geteuid() != 0, reason="only a grader running as root can hand student code to another user")
def test_as_root_student_code_runs_as_nobody(fast_config):
    result = grade("import os\ndef schedule(sch):\n    print('uid', os.getuid(), 'gid', os.getgid())\n", fast_config)
    assert "uid 65534 gid 65534" in result.student_output


def test_the_graders_environment_is_not_passed_to_student_code(fast_config, monkeypatch):
    monkeypatch.setenv("TVM_COURSE_TEST_SECRET_TOKEN", "hunter2")
    result = grade("import os\ndef schedule(sch):\n    print(sorted(os.environ))\n    print(os.environ.get('TVM_COURSE_TEST_SECRET_TOKEN'))\n", fast_config)
    assert "hunter2" not in result.student_output
    assert "TVM_COURSE_TEST_SECRET_TOKEN" not in result.student_output


def test_a_flood_on_the_private_channel_is_cut_off_and_rejected(fast_config):
    result = grade(
        """
        import os, sys
        def schedule(sch):
            fd = int(sys.argv[1])
            block = b"[" * (1 << 20)
            for _ in range(64):
                os.write(fd, block)
        """,
        fast_config,
    )
    assert result.status == "rejected" and "flooded" in result.messages[0]


@pytest.mark.parametrize(
    "report",
    [
        '{"kind": "exception"}',
        '{"kind": "exception", "message": 123}',
        '{"kind": "schedule_error", "message": ["x"], "where": 5}',
        '{"kind": "trace", "trace": {"not": "a list"}}',
        '"just a string"',
    ],
)
def test_malformed_reports_on_the_channel_give_a_verdict_not_a_traceback(fast_config, report):
    source = f"import os, sys\ndef schedule(sch):\n    os.write(int(sys.argv[1]), {report!r}.encode() + b'\\n')\n    os._exit(0)\n"
    result = grade(source, fast_config)
    assert result.status in ("error", "rejected", "crashed") and result.score == 0
    assert result.messages and all(isinstance(m, str) for m in result.messages)


def test_long_exception_texts_are_cut(fast_config):
    result = grade("def schedule(sch):\n    raise RuntimeError('x' * 100_000)\n", fast_config)
    assert result.status == "error"
    assert len(result.messages[0]) < 2500 and "more characters cut" in result.messages[0]


def test_an_unavailable_module_says_which_ones_a_schedule_can_use(fast_config):
    result = grade("import not_a_module_of_this_course\ndef schedule(sch):\n    pass\n", fast_config)
    assert result.status == "error"
    assert "could not import 'not_a_module_of_this_course'" in result.messages[0]
    assert "numpy" in result.messages[0]
