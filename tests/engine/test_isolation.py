"""A grade belongs to its submission alone: gradings cannot reach one another, and nothing outlives one.

Each test grades hostile submissions for real, through the fork server (as a class run does),
and checks what they tried to reach: another grading running at the same time, the fork
server, the grader, System V IPC left for the next submission, the instructor's files, and the
grading's own leftovers in TMPDIR however it ends.
"""
from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

import pytest

from autograder.engine import confine, forkserver, world
from autograder.engine.pipeline import SCRATCH_PREFIX, grade_source, sweep_scratch

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not confine.available().complete, reason=f"no Landlock or seccomp here: {confine.available().reason}"),
]

REPO = Path(__file__).resolve().parents[2]
SOLUTION = (REPO / "course" / "solutions" / "blocked_vectorized.py").read_text()
JOURNAL = (REPO / "autograder" / "examples" / "journal.py").read_text()

# Everything a submission can do to a process it can name, short of kill() (which seccomp has
# always refused): limit it, make it the owner of a descriptor's signals (F_SETOWN, F_SETSIG,
# FIOSETOWN) and then raise them, renice it. Each pid gets every attempt; the count of those
# the kernel let through is printed.
REACH_OUT = '''
import ctypes, fcntl, os, resource, signal, time

def reach(pid):
    done = 0
    for attempt in (
        lambda: resource.prlimit(pid, resource.RLIMIT_AS, (1 << 20, 1 << 20)),
        lambda: resource.prlimit(pid, resource.RLIMIT_NOFILE, (3, 3)),
        lambda: os.setpriority(os.PRIO_PROCESS, pid, 19),
    ):
        try:
            attempt(); done += 1
        except OSError:
            pass
    for command in ("owner", "ioctl"):
        try:
            r, w = os.pipe()
            fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
            if command == "owner":
                fcntl.fcntl(r, fcntl.F_SETOWN, pid)
            else:
                fcntl.ioctl(r, 0x8901, ctypes.c_int(pid))
            fcntl.fcntl(r, fcntl.F_SETSIG, signal.SIGKILL)
            os.write(w, b"x"); done += 1
        except OSError:
            pass
    return done

def schedule(sch):
    deadline = time.monotonic() + SECONDS
    reached = 0
    while time.monotonic() < deadline:
        for pid in PIDS:
            reached += reach(pid)
    print("reached", reached)
'''


def reach_out(pids, seconds: float) -> str:
    return REACH_OUT.replace("SECONDS", repr(seconds)).replace("PIDS", repr(sorted(set(pids))))


@pytest.fixture
def server():
    found = forkserver.shared_server()
    assert found is not None
    return found


def test_a_submission_cannot_reach_a_grading_running_beside_it(server, fast_config):
    """While a hostile submission tries every process near the fork server's pid (where each
    grading's children are forked), the fork server, and the grader itself, a correct schedule
    graded at the same time keeps its full verdict, and the server is untouched."""
    target = server._process.pid
    before = resource.prlimit(target, resource.RLIMIT_AS)
    hostile = reach_out([os.getpid(), target, *range(target + 1, target + 400)], seconds=4.0)
    config = fast_config.__class__(**{**fast_config.as_dict(), "student_timeout_s": 20.0})
    results = {}

    def grade(name, source):
        results[name] = grade_source("tile-fused-conv", source, config)

    threads = [threading.Thread(target=grade, args=("hostile", hostile))]
    threads.append(threading.Thread(target=grade, args=("innocent", SOLUTION)))
    threads[0].start()
    time.sleep(1.0)  # the innocent grading's children are forked while the hostile one runs
    threads[1].start()
    for thread in threads:
        thread.join(120)
    innocent = results["innocent"]
    assert innocent.status == "passed" and innocent.correct and not innocent.grader_fault, innocent.to_text()
    assert "reached 0" in results["hostile"].student_output, results["hostile"].student_output
    assert not results["hostile"].grader_fault
    assert server.running and resource.prlimit(target, resource.RLIMIT_AS) == before
    after = grade_source("tile-fused-conv", JOURNAL, fast_config)
    assert after.status == "passed" and not after.grader_fault


def test_a_submission_that_aims_at_its_own_parents_does_not_harm_the_next_one(server, fast_config):
    """The pids a child could think of as its makers: its parent, its group, the grader."""
    source = textwrap.dedent('''
        import os, resource
        def schedule(sch):
            for pid in {os.getppid(), os.getpgrp(), PARENTS}:
                if pid > 1:
                    for limit in (resource.RLIMIT_AS, resource.RLIMIT_NPROC, resource.RLIMIT_NOFILE):
                        try:
                            resource.prlimit(pid, limit, (1 << 16, 1 << 16))
                            print("limited", pid)
                        except OSError:
                            pass
    ''').replace("PARENTS", f"{server._process.pid}, {os.getpid()}")
    first = grade_source("tile-fused-conv", source, fast_config)
    assert "limited" not in first.student_output and not first.grader_fault
    second = grade_source("tile-fused-conv", JOURNAL, fast_config)
    assert second.status == "passed" and not second.grader_fault


def _sysv_objects() -> list[str]:
    lines = []
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as table:
            lines += [f"{kind} {line.split()[0]}" for line in table.readlines()[1:]]
    return lines


def test_system_v_ipc_neither_holds_memory_nor_reaches_the_next_submission(fast_config):
    before = _sysv_objects()
    leave = textwrap.dedent('''
        import ctypes
        def schedule(sch):
            libc = ctypes.CDLL(None, use_errno=True)
            segment = libc.shmget(0x7C0FFEE, ctypes.c_size_t(512 << 20), 0o1000 | 0o666)
            print("segment", segment, "errno", ctypes.get_errno())
            queue = libc.msgget(0x7C0FFEE, 0o1000 | 0o666)
            print("queue", queue)
    ''')
    first = grade_source("tile-fused-conv", leave, fast_config)
    assert "segment -1 errno 1" in first.student_output and "queue -1" in first.student_output, first.student_output
    assert _sysv_objects() == before
    find = "import ctypes\ndef schedule(sch):\n    print('found', ctypes.CDLL(None).shmget(0x7C0FFEE, ctypes.c_size_t(0), 0))\n"
    assert "found -1" in grade_source("tile-fused-conv", find, fast_config).student_output


@pytest.mark.skipif(not world.supported().available, reason=f"no namespaces here: {world.supported().reason}")
def test_the_instructors_files_do_not_exist_for_student_code(fast_config, tmp_path):
    """Landlock denies reading them, but stat() needs no right: in its own world they are absent."""
    paths = [REPO / "course" / "solutions" / "blocked_vectorized.py", REPO / "course" / "source" / "tiling" / "tiling.ipynb",
             REPO / "course" / "nbgrader_config.py", Path(tempfile.gettempdir())]
    source = "import os\ndef schedule(sch):\n" + "".join(
        f"    try:\n        print({str(p)!r}, os.stat({str(p)!r}).st_size, sorted(os.listdir({str(p)!r}))[:3])\n"
        f"    except OSError as error:\n        print({str(p)!r}, type(error).__name__)\n" for p in paths)
    result = grade_source("tile-fused-conv", source, fast_config)
    for path in paths[:-1]:
        assert f"{path} FileNotFoundError" in result.student_output, result.student_output
    assert f"{paths[-1]} PermissionError" in result.student_output  # only the way to its own directory


def test_student_code_has_a_home_and_a_tmpdir_of_its_own(fast_config):
    source = "import os\ndef schedule(sch):\n    print(os.environ['HOME'] == os.getcwd() == os.environ['TMPDIR'])\n"
    assert "True" in grade_source("tile-fused-conv", source, fast_config).student_output


@pytest.fixture
def private_tmpdir(tmp_path, monkeypatch):
    """TMPDIR for the grader: what a grading leaves behind is whatever remains in it."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    monkeypatch.setattr(tempfile, "tempdir", None)
    forkserver.stop_shared_server()  # so that nothing it made lands in the test's folder either
    yield folder
    forkserver.stop_shared_server()


@pytest.mark.parametrize("how", ["passed", "student timeout", "student crash", "evaluator timeout", "cold children"])
def test_nothing_is_left_in_tmpdir_however_a_grading_ends(private_tmpdir, fast_config, how):
    import dataclasses

    config, source = fast_config, JOURNAL
    if how == "student timeout":
        source = "def schedule(sch):\n    while True:\n        pass\n"
    elif how == "student crash":
        source = "import ctypes\ndef schedule(sch):\n    ctypes.string_at(0)\n"
    elif how == "evaluator timeout":
        config = dataclasses.replace(config, evaluate_timeout_s=0.5, timing_rounds=45, min_repeat_ms=50.0)
    elif how == "cold children":
        config = dataclasses.replace(config, warm_start=False)
    result = grade_source("tile-fused-conv", source, config)
    assert not result.grader_fault, result.to_text()
    assert sorted(os.listdir(private_tmpdir)) == [], how


def test_an_interrupted_grader_leaves_no_folder_and_no_process(tmp_path):
    folder = tmp_path / "tmp"
    folder.mkdir()
    script = textwrap.dedent('''
        import sys
        from autograder.engine.pipeline import grade_source
        from autograder.engine.config import GraderConfig
        print("grading", flush=True)
        grade_source("tile-fused-conv", "import time\\ndef schedule(sch):\\n    print('started', flush=True)\\n    time.sleep(60)\\n",
                     GraderConfig(student_timeout_s=120))
    ''')
    grader = subprocess.Popen([sys.executable, "-c", script], env={**os.environ, "TMPDIR": str(folder)},
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(n.startswith(SCRATCH_PREFIX) for n in os.listdir(folder)):
        time.sleep(0.1)
    time.sleep(3.0)  # the student's child is sleeping inside its world now
    workers = _processes_under(folder)
    grader.send_signal(signal.SIGINT)
    output, _ = grader.communicate(timeout=60)
    assert "KeyboardInterrupt" in output, output
    time.sleep(0.5)
    assert os.listdir(folder) == []
    assert [pid for pid in workers if _alive(pid)] == []


def _processes_under(folder: Path) -> list[int]:
    """The pids whose working directory lies in `folder` (the grading's children)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/cwd").startswith(str(folder)):
                found.append(int(pid))
        except OSError:
            pass
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_what_a_killed_grader_left_is_swept_by_the_next(private_tmpdir):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = private_tmpdir / f"{SCRATCH_PREFIX}{dead.pid}-abc"
    (stale / "tvm-course-x").mkdir(parents=True)
    live = private_tmpdir / f"{SCRATCH_PREFIX}{os.getpid()}-def"
    live.mkdir()
    assert sweep_scratch() == [str(stale)]
    assert not stale.exists() and live.exists()


def test_an_import_the_sandbox_cannot_give_is_the_students_error_never_a_grader_fault(fast_config, tmp_path, monkeypatch):
    """A submission cannot pass its own failure off as the grader's: a module the grader has but
    the confined child cannot import (here one outside what a child may read) is the student's
    error, said plainly; the grader's own world is vouched for by the preflight. An ImportError
    the student's code raises itself, naming an installed module, is theirs too."""
    faked = grade_source("tile-fused-conv", "def schedule(sch):\n    raise ImportError('no', name='json')\n", fast_config)
    assert faked.status == "error" and not faked.grader_fault
    package = tmp_path / "instructors_only_module.py"
    package.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # installed for the grader, outside what a child may read
    missing = grade_source("tile-fused-conv", "import instructors_only_module\ndef schedule(sch):\n    pass\n", fast_config)
    assert missing.status == "error" and not missing.grader_fault and missing.score == 0
    assert "cannot be imported inside the grading sandbox" in missing.messages[0]
    assert "instructors_only_module" in missing.messages[0]


def test_a_package_in_a_folder_only_its_owner_may_enter_grades_normally(tmp_path):
    """A checkout in /root, or in `mktemp -d`: the confined children keep the grader's user."""
    private = tmp_path / "private"
    (private / "inner").mkdir(parents=True)
    import shutil

    shutil.copytree(REPO / "autograder", private / "inner" / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    private.chmod(0o700)
    script = ("from autograder.engine.pipeline import grade_source\n"
              "from autograder.engine.config import GraderConfig\n"
              "r = grade_source('tile-fused-conv', open(%r).read(), GraderConfig(timing_rounds=5, min_repeat_ms=5.0))\n"
              "print(r.status, r.correct, r.grader_fault, r.messages)\n") % str(REPO / "autograder" / "examples" / "journal.py")
    env = {**os.environ, "PYTHONPATH": str(private / "inner")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.stdout.startswith("passed True False"), done.stdout + done.stderr
