"""confine.py: what a confined child can and cannot do, tried for real in a confined fork.

Each probe runs in a `ForkedChild` that confines itself exactly as the grader's untrusted
children do, then tries one thing and reports the outcome (the exception's name, or "ok").
"""
from __future__ import annotations

import ctypes
import os
import socket
import sys
from pathlib import Path

import pytest

from autograder.engine import confine
from autograder.engine.sandbox import ForkedChild

pytestmark = pytest.mark.skipif(not confine.available().complete, reason=f"no Landlock or seccomp here: {confine.available().reason}")

CHECKOUT = Path(__file__).resolve().parents[2]


def attempt(action, *, writable: bool = False, threads: bool = False):
    """Run `action(private_dir)` confined; its result, or the name of what it raised."""

    def target(send):
        work = os.getcwd()
        files = (os.path.join(work, "result.bin"),) if writable else ()
        confine.confine(confine.Policy(private_dir=work, writable_files=files, max_file_bytes=64 if writable else 0, threads=threads))
        try:
            send({"kind": "outcome", "value": repr(action(work))})
        except BaseException as error:  # noqa: BLE001  (the probe reports whatever happened)
            send({"kind": "outcome", "value": type(error).__name__, "errno": getattr(error, "errno", None)})

    child = ForkedChild(target)
    if writable:
        Path(child.workdir, "result.bin").write_bytes(b"\0" * 64)
        if os.geteuid() == 0:
            os.chown(Path(child.workdir, "result.bin"), confine.UNPRIVILEGED_ID, confine.UNPRIVILEGED_ID)
    Path(child.workdir, "given.txt").write_text("what the grader put here")
    child.start()
    outcome = child.wait(30)
    message = outcome.last("outcome")
    assert message is not None, outcome.output_tail
    return message["value"]


def read(path):
    return lambda work: open(path, "rb").read(16)


def test_the_course_the_checkout_and_the_machines_files_cannot_be_read():
    assert attempt(read(CHECKOUT / "course" / "source" / "tiling" / "tiling.ipynb")) == "PermissionError"
    assert attempt(read(CHECKOUT / "README.md")) == "PermissionError"
    assert attempt(read("/etc/passwd")) == "PermissionError"
    assert attempt(lambda work: os.listdir(CHECKOUT)) == "PermissionError"
    assert attempt(lambda work: os.listdir("/tmp")) == "PermissionError"


def test_what_python_and_the_private_directory_hold_can_be_read():
    assert attempt(lambda work: open(os.path.join(work, "given.txt")).read()) == repr("what the grader put here")
    # Landlock lets these through; as `nobody` (a root grader) the usual file modes apply too.
    for path in ("/usr/lib/os-release", confine.__file__, os.__file__):
        if os.geteuid() != 0 or _readable_by_all(path):
            assert attempt(read(path)) != "PermissionError", path


def _readable_by_all(path: str) -> bool:
    parents = Path(path).resolve().parents
    return os.stat(path).st_mode & 0o004 and all(os.stat(p).st_mode & 0o001 for p in parents)


@pytest.mark.parametrize("path", ["/tmp/tvm-course-escape", "/dev/shm/tvm-course-escape", "new-file"])
def test_nothing_can_be_created_anywhere(path):
    assert attempt(lambda work: open(path, "w").write("x")) == "PermissionError"
    assert not os.path.exists(path)


def test_the_one_writable_file_takes_its_size_and_no_more():
    def write_past_the_end(work):
        with open("result.bin", "r+b") as handle:
            handle.write(b"x" * 64)
            handle.flush()
            handle.write(b"y")
            handle.flush()

    assert attempt(lambda work: open("result.bin", "r+b").write(b"x" * 64), writable=True) == "64"
    assert attempt(write_past_the_end, writable=True) == "OSError"  # EFBIG: RLIMIT_FSIZE
    assert attempt(lambda work: os.truncate("result.bin", 0), writable=True) == "PermissionError"
    assert attempt(lambda work: open("given.txt", "r+b").write(b"z"), writable=True) == "PermissionError"


def test_no_program_can_be_run_and_no_process_started():
    assert attempt(lambda work: os.execv("/bin/true", ["true"])) == "PermissionError"
    assert attempt(lambda work: os.fork()) in ("PermissionError", "BlockingIOError")
    assert attempt(lambda work: os.posix_spawn("/bin/true", ["true"], {})) in ("PermissionError", "BlockingIOError")


def test_threads_only_where_the_policy_allows_them():
    import threading

    def start_thread(work):
        thread = threading.Thread(target=lambda: None)
        thread.start()
        thread.join()
        return "started"

    assert attempt(start_thread, threads=True) == repr("started")
    assert attempt(start_thread) == "RuntimeError"  # "can't start new thread"
    assert attempt(lambda work: os.fork(), threads=True) == "PermissionError"


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6, socket.AF_UNIX])
def test_no_socket_of_any_kind(family):
    assert attempt(lambda work: socket.socket(family, socket.SOCK_STREAM)) == "PermissionError"


def test_signals_reach_only_the_child_itself():
    assert attempt(lambda work: os.kill(os.getppid(), 0)) == "PermissionError"
    assert attempt(lambda work: os.kill(1, 0)) == "PermissionError"
    assert attempt(lambda work: os.kill(os.getpid(), 0)) == "None"
    assert attempt(lambda work: os.kill(-os.getpgrp(), 0)) == "PermissionError"  # its whole group


def test_the_child_cannot_leave_the_process_group_the_grader_kills():
    assert attempt(lambda work: os.setpgid(0, 0)) == "PermissionError"
    assert attempt(lambda work: os.setsid()) == "PermissionError"


def test_file_metadata_cannot_be_changed_where_landlock_does_not_reach():
    target = str(CHECKOUT / "README.md")
    assert attempt(lambda work: os.chmod(target, 0o777)) == "PermissionError"
    assert attempt(lambda work: os.utime(target, (0, 0))) == "PermissionError"
    assert attempt(lambda work: os.setxattr(os.path.join(work, "given.txt"), "user.x", b"1")) == "PermissionError"
    assert oct(os.stat(target).st_mode & 0o777) != "0o777"


def test_other_processes_memory_cannot_be_read():
    def peek(work):
        libc = ctypes.CDLL(None, use_errno=True)
        result = libc.ptrace(16, os.getppid(), 0, 0)  # PTRACE_ATTACH
        return (result, ctypes.get_errno())

    result, error = eval(attempt(peek))
    assert result == -1 and error == 1  # EPERM


@pytest.mark.skipif(os.geteuid() != 0, reason="only a grader running as root hands the child to another user")
def test_as_root_the_child_runs_as_nobody():
    assert attempt(lambda work: (os.getuid(), os.getgid(), os.getgroups())) == repr((65534, 65534, []))


def test_the_readable_paths_never_include_the_checkout():
    checkout = str(CHECKOUT)
    for path in confine.readable_system_paths():
        assert not checkout.startswith(path.rstrip("/") + "/") and path != checkout


def test_available_says_what_is_missing_in_words():
    status = confine.available()
    assert status.complete and status.missing() == [] and status.landlock_abi >= 1
    assert confine.Status(0, False, "x").missing() == [
        "file-system confinement (Landlock)",
        "system-call filtering (seccomp: no exec, no network)",
    ]
    assert sys.platform == "linux"


def test_system_calls_newer_than_libseccomp_are_denied_by_number():
    """setxattrat (Linux 6.13) sets extended attributes, which Landlock does not cover."""
    import platform

    if platform.machine() != "x86_64":
        pytest.skip("the numbers are x86-64's")

    def setxattrat(work):
        libc = ctypes.CDLL(None, use_errno=True)
        path = os.path.join(work, "given.txt").encode()
        result = libc.syscall(463, -100, path, 0, b"user.x", None, 0)  # AT_FDCWD
        return (result, ctypes.get_errno())

    result, error = eval(attempt(setxattrat))
    assert result == -1 and error == 1  # EPERM from the filter (ENOSYS would mean an older kernel)
