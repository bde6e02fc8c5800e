"""The fork server: warm children that are as fresh and as confined as cold ones.

Each test grades for real through this process's fork server, and the submissions print how
they were started (a served child's argv[0] is its module's name, a cold one's the file's path),
so the tests know the children were forked by a server and not started cold. (Their parent's pid
says nothing: in a world of its own a child's parent is outside it, pid 0.)
"""
from __future__ import annotations

import dataclasses
import os
import textwrap

import psutil
import pytest

from autograder.engine import forkserver
from autograder.engine.pipeline import grade_source

pytestmark = pytest.mark.slow

JOURNAL = open(os.path.join(os.path.dirname(forkserver.__file__), "..", "examples", "journal.py"), encoding="utf-8").read()


def grade(source, config):
    return grade_source("tile-fused-conv", textwrap.dedent(source), config)


@pytest.fixture
def server():
    found = forkserver.shared_server()
    assert found is not None and found.running, "the fork server should start on Linux"
    return found


SAY_HOW = "import sys as _sys\nprint(f'started as {_sys.argv[0]}')\n"


def served_by(result, server) -> bool:
    return server.running and "started as autograder.engine.student_runner\n" in result.student_output


# A first submission that leaves every trace it can: module state, the interpreter's globals,
# its directory, the places it may not write, and a marker string in its memory.
LEAVE_TRACES = '''
import builtins, os, sys, numpy, tvm, autograder.problems
print(f"started as {sys.argv[0]}")
MARKER = "left-by-" + "submission-A-" + str(4 * 1111)
def schedule(sch):
    numpy.left_behind = MARKER
    tvm.left_behind = MARKER
    builtins.left_behind = MARKER
    autograder.problems.left_behind = MARKER
    sys.modules["left_behind"] = numpy
    numpy.random.seed(1234)
    for place in ("left-behind.txt", "/tmp/left-behind", "/dev/shm/left-behind"):
        try:
            open(place, "w").write(MARKER)
        except OSError:
            pass
    journal_schedule(sch)  # and then a schedule that passes
''' + JOURNAL.replace("def schedule(", "def journal_schedule(")

# The next submission looks for all of it, and fails loudly if it finds any.
LOOK_FOR_TRACES = '''
import builtins, gc, os, sys, numpy, tvm, autograder.problems
print(f"started as {sys.argv[0]}")
def schedule(sch):
    marker = "left-by-" + "submission-A-"
    found = [name for name, module in (("numpy", numpy), ("tvm", tvm), ("builtins", builtins),
                                         ("autograder.problems", autograder.problems))
             if hasattr(module, "left_behind")]
    found += ["sys.modules"] if "left_behind" in sys.modules else []
    found += ["its directory"] if os.path.exists("left-behind.txt") else []
    found += [p for p in ("/tmp/left-behind", "/dev/shm/left-behind") if os.path.exists(p)]
    found += ["memory"] if any(isinstance(o, str) and o.startswith(marker) for o in gc.get_objects()) else []
    found += ["numpy's random state"] if numpy.random.get_state()[1][0] == numpy.random.RandomState(1234).get_state()[1][0] else []
    raise RuntimeError(f"found: {found}")
'''


def test_a_submission_sees_nothing_the_previous_one_left(server, fast_config):
    first = grade(LEAVE_TRACES, fast_config)
    second = grade(LOOK_FOR_TRACES, fast_config)
    assert served_by(first, server) and served_by(second, server)
    assert first.status == "passed", first.messages
    assert second.status == "error" and "found: []" in second.messages[0], second.messages
    assert not os.path.exists("/tmp/left-behind") and not os.path.exists("/dev/shm/left-behind")


def test_student_code_cannot_signal_trace_or_read_the_server(server, fast_config):
    result = grade(
        """
        import os, signal, sys
        print(f"started as {sys.argv[0]}")
        def schedule(sch):
            server = SERVER
            outcomes = []
            for name, attempt in (
                ("kill", lambda: os.kill(server, signal.SIGKILL)),
                ("killpg", lambda: os.killpg(server, signal.SIGKILL)),
                ("its own group", lambda: os.killpg(0, signal.SIGKILL)),
                ("memory", lambda: open(f"/proc/{server}/mem", "rb").read(1)),
                ("environment", lambda: open(f"/proc/{server}/environ", "rb").read()),
                ("descriptors", lambda: os.listdir(f"/proc/{server}/fd")),
            ):
                try:
                    attempt()
                    outcomes.append(f"{name}: done")
                except OSError as error:
                    outcomes.append(f"{name}: {type(error).__name__}")
            raise RuntimeError("; ".join(outcomes))
        """.replace("SERVER", str(server._process.pid)),
        fast_config,
    )
    assert served_by(result, server)
    assert result.status == "error" and "done" not in result.messages[0], result.messages
    assert server.running


def test_the_server_holds_no_secret_of_the_graders_environment(monkeypatch):
    monkeypatch.setenv("TVM_COURSE_SECRET", "do-not-leak-this")
    monkeypatch.setenv("GITHUB_TOKEN", "do-not-leak-this-either")
    own = forkserver.ForkServer().start()
    try:
        try:
            environment = psutil.Process(own._process.pid).environ()
        except psutil.AccessDenied:
            pytest.skip("this user may not read an undumpable process's environment")
        assert "TVM_COURSE_SECRET" not in environment and "GITHUB_TOKEN" not in environment
        assert set(environment) <= set(forkserver.SAFE_ENV_KEYS) | {"PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}
    finally:
        own.close()
    assert own._process is None


def test_a_crash_costs_the_submission_and_not_the_server(server, fast_config):
    crash = grade(
        """
        import ctypes, sys
        print(f"started as {sys.argv[0]}")
        def schedule(sch):
            ctypes.string_at(0)
        """,
        dataclasses.replace(fast_config, output_tail_chars=20000),  # TVM's native backtrace is long
    )
    assert served_by(crash, server)
    assert crash.status == "crashed" and "SIGSEGV" in crash.messages[0]
    after = grade(JOURNAL, fast_config)
    assert after.status == "passed" and server.running


def test_a_dead_server_is_replaced_and_the_grading_goes_on(fast_config):
    first = forkserver.shared_server()
    first._process.kill()
    first._process.wait()
    result = grade(SAY_HOW + JOURNAL, fast_config)
    replacement = forkserver.shared_server()
    assert result.status == "passed", result.messages
    assert replacement is not first and served_by(result, replacement)


# A system call that only seccomp refuses here: a socket of the network namespace's own.
TRY_A_SOCKET = (
    "import socket as _socket\n"
    "try:\n    _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM).close()\n    print('socket: made')\n"
    "except OSError:\n    print('socket: refused')\n"
)


def test_cold_children_are_confined_and_grade_the_same(fast_config):
    cold = dataclasses.replace(fast_config, warm_start=False)
    result = grade(SAY_HOW + TRY_A_SOCKET + JOURNAL, cold)
    warm = grade(TRY_A_SOCKET + JOURNAL, fast_config)
    assert result.status == "passed" and result.score == 0.7
    assert "student_runner.py\n" in result.student_output  # a new interpreter, started with -m
    # A new interpreter enters its world before it confines itself: the seccomp binding must be
    # loaded before, since it cannot find its library from inside (it once went without, silently).
    assert "socket: refused" in result.student_output and "socket: refused" in warm.student_output

    def runner(r):
        return next(m for m in r.messages if "confined" in m)

    assert "seccomp" in runner(result) and runner(result) == runner(warm)


def test_the_server_starts_only_the_graders_children_and_signals_only_its_own(server):
    read, write = os.pipe()
    try:
        with pytest.raises(forkserver.ForkServerUnavailable, match="starts only"):
            server.spawn("os", [], {}, "/", (read, write, write))
    finally:
        os.close(read)
        os.close(write)
    for op in ("kill", "reap"):
        with pytest.raises(forkserver.ForkServerUnavailable, match="not a child of this server"):
            server.request({"op": op, "pid": os.getpid()})
    assert server.running and os.getpid() == psutil.Process().pid


def test_closing_the_client_ends_the_server_and_its_children():
    from autograder.problems import get_problem

    own = forkserver.ForkServer().start()
    process = own._process
    read, write = os.pipe()
    stdin_r, stdin_w = os.pipe()
    # An evaluator waiting for its settings on stdin, which never come.
    spec = get_problem("tile-fused-conv").shape.to_spec()
    served = own.spawn("autograder.engine.evaluate", ["tile-fused-conv", spec], {}, "/", (stdin_r, write, write))
    os.close(stdin_r)
    child = psutil.Process(served.pid)
    assert served.poll() is None and child.is_running()
    own.close()
    assert process.returncode is not None
    assert not child.is_running()
    for fd in (read, write, stdin_w):
        os.close(fd)
