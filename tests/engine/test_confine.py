"""confine.py: what a confined child can and cannot do, tried for real in a confined fork.

Each probe runs in a `ForkedChild` that confines itself exactly as the grader's untrusted
children do, then tries one thing and reports the outcome (the exception's name, or "ok").
Every probe runs twice: in a world of its own (world.py: namespaces first, then confine), and
without namespaces, as on a machine that refuses them (Landlock and seccomp alone must hold).
"""
from __future__ import annotations

import ctypes
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.engine import confine, world
from autograder.engine.sandbox import ForkedChild

pytestmark = pytest.mark.skipif(not confine.available().complete, reason=f"no Landlock or seccomp here: {confine.available().reason}")

CHECKOUT = Path(__file__).resolve().parents[2]
IN_WORLD = {"world": True}


@pytest.fixture(autouse=True, params=["world", "no-world"])
def mode(request):
    """Each probe in a world of its own, and without one."""
    if request.param == "world" and not world.supported().available:
        pytest.skip(f"no namespaces here: {world.supported().reason}")
    IN_WORLD["world"] = request.param == "world"
    return request.param


def invisible() -> str:
    """What opening a path outside the child's files gives: in a world the path does not exist."""
    return "FileNotFoundError" if IN_WORLD["world"] else "PermissionError"


def attempt(action, *, writable: bool = False, threads: bool = False, before=None):
    """Run `action(private_dir)` confined; its result, or the name of what it raised. `before()`
    runs in the child first, as the grader's own code would."""

    def target(send):
        if before is not None:
            before()
        work = os.getcwd()
        files = (os.path.join(work, "result.bin"),) if writable else ()
        policy = confine.Policy(private_dir=work, writable_files=files, max_file_bytes=64 if writable else 0, threads=threads)
        if IN_WORLD["world"]:
            confine.enter_world(policy)
        confine.confine(policy)
        try:
            send({"kind": "outcome", "value": repr(action(work))})
        except BaseException as error:  # noqa: BLE001  (the probe reports whatever happened)
            send({"kind": "outcome", "value": type(error).__name__, "errno": getattr(error, "errno", None)})

    child = ForkedChild(target)
    if not IN_WORLD["world"]:
        child.identity = None  # as where namespaces are refused: no uid of its own either
    if writable:
        Path(child.workdir, "result.bin").write_bytes(b"\0" * 64)
    Path(child.workdir, "given.txt").write_text("what the grader put here")
    child.start()
    outcome = child.wait(30)
    message = outcome.last("outcome")
    assert message is not None, outcome.output_tail
    return message["value"]


def read(path):
    return lambda work: open(path, "rb").read(16)


def test_the_course_the_checkout_and_the_machines_files_cannot_be_read():
    assert attempt(read(CHECKOUT / "course" / "source" / "tiling" / "tiling.ipynb")) == invisible()
    assert attempt(read(CHECKOUT / "README.md")) == invisible()
    assert attempt(read("/etc/passwd")) == invisible()
    assert attempt(lambda work: os.listdir(CHECKOUT)) == "PermissionError"  # in a world: the way to the package
    assert attempt(lambda work: os.listdir("/tmp")) == "PermissionError"  # in a world: the way to its own directory


def test_in_a_world_the_instructors_files_do_not_exist_even_for_stat():
    """stat() needs no Landlock right: only a world of its own hides a file's size and times."""
    if not IN_WORLD["world"]:
        pytest.skip("Landlock alone cannot hide a file from stat()")
    for path in (CHECKOUT / "course" / "solutions" / "blocked_vectorized.py", CHECKOUT / "course" / "source" / "tiling" / "tiling.ipynb",
                 CHECKOUT / "pyproject.toml", Path("/etc/shadow")):
        assert attempt(lambda work, path=path: os.stat(path).st_size) == "FileNotFoundError", path


def test_what_python_and_the_private_directory_hold_can_be_read():
    assert attempt(lambda work: open(os.path.join(work, "given.txt")).read()) == repr("what the grader put here")
    # The grader's own user reads them, wherever they are installed (a checkout in /root too).
    for path in ("/usr/lib/os-release", confine.__file__, os.__file__, ctypes.__file__):
        assert attempt(read(path)) not in ("PermissionError", "FileNotFoundError"), path


@pytest.mark.parametrize("path", ["/tmp/tvm-course-escape", "/dev/shm/tvm-course-escape", "new-file"])
def test_nothing_can_be_created_anywhere(path):
    # In a world the root is a read-only tmpfs, and /tmp there is not the machine's.
    refused = ("PermissionError", "FileNotFoundError", "OSError") if IN_WORLD["world"] else ("PermissionError",)
    assert attempt(lambda work: open(path, "w").write("x")) in refused
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
    assert attempt(lambda work: os.kill(os.getpid(), 0)) == "None"
    assert attempt(lambda work: os.kill(-os.getpgrp(), 0)) == "PermissionError"  # its whole group
    assert attempt(lambda work: os.kill(0, 0)) == "PermissionError"
    assert attempt(lambda work: os.kill(-1, 0)) == "PermissionError"  # everything it may signal
    if not IN_WORLD["world"]:
        assert attempt(lambda work: os.kill(1, 0)) == "PermissionError"


@pytest.fixture
def victim():
    """A process of the grader's own user, as another grading's runner or the fork server is."""
    import subprocess

    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    yield process.pid
    process.kill()
    process.wait()


def _limits_and_niceness(pid: int):
    import resource

    return resource.prlimit(pid, resource.RLIMIT_AS), resource.prlimit(pid, resource.RLIMIT_NOFILE), os.getpriority(os.PRIO_PROCESS, pid)


def test_another_process_cannot_be_limited_reprioritised_or_made_a_signals_owner(victim):
    import fcntl
    import resource
    import signal

    before = _limits_and_niceness(victim)

    def sigio_to(pid, command):
        def action(work):
            read_end, write_end = os.pipe()
            fcntl.fcntl(read_end, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK)
            if command == fcntl.F_SETSIG:
                fcntl.fcntl(read_end, fcntl.F_SETSIG, signal.SIGKILL)
            else:
                fcntl.fcntl(read_end, command, pid)
            os.write(write_end, b"x")  # with an owner set, the kernel now signals it
        return action

    def owner_by_ioctl(pid):
        def action(work):
            read_end, write_end = os.pipe()
            fcntl.ioctl(read_end, 0x8901, ctypes.c_int(pid))  # FIOSETOWN
            fcntl.fcntl(read_end, fcntl.F_SETFL, os.O_ASYNC)
            os.write(write_end, b"x")
        return action

    attacks = {
        "prlimit": lambda work: resource.prlimit(victim, resource.RLIMIT_AS, (1 << 20, 1 << 20)),
        "prlimit, upper bits": lambda work: _raw_prlimit(victim | (1 << 32)),
        "setpriority": lambda work: os.setpriority(os.PRIO_PROCESS, victim, 19),
        "sched_setaffinity": lambda work: os.sched_setaffinity(victim, {0}),
        "F_SETOWN": sigio_to(victim, fcntl.F_SETOWN),
        "F_SETOWN of a group": sigio_to(-victim, fcntl.F_SETOWN),
        "F_SETSIG": sigio_to(victim, fcntl.F_SETSIG),
        "F_SETOWN_EX": lambda work: _setown_ex(victim),
        "FIOSETOWN": owner_by_ioctl(victim),
    }
    for name, action in attacks.items():
        assert attempt(action) == "PermissionError", name
    os.kill(victim, 0)  # still alive
    assert _limits_and_niceness(victim) == before


def _generous_priority_limits():
    """What a grader may inherit (a root shell with CAP_SYS_RESOURCE, a limits.conf for audio):
    leave to lower its nice value and to take a real-time policy."""
    import resource

    resource.setrlimit(resource.RLIMIT_NICE, (40, 40))
    resource.setrlimit(resource.RLIMIT_RTPRIO, (99, 99))


def _can_raise_priority_limits() -> bool:
    done = subprocess.run([sys.executable, "-c", "import resource; resource.setrlimit(resource.RLIMIT_NICE, (40, 40))"],
                          capture_output=True, timeout=60)
    return done.returncode == 0


def test_the_child_cannot_make_itself_more_urgent_than_it_was_started():
    """A real-time or higher-priority student spinning on a core would stretch other gradings'
    timings. Without a capability, RLIMIT_NICE and RLIMIT_RTPRIO are all that could allow it."""
    if not _can_raise_priority_limits():
        pytest.skip("this test run cannot raise its own hard limits (no CAP_SYS_RESOURCE), so there are no "
                    "generous ones for a child to inherit: here nothing but those limits is left to test")

    def raise_nice(work):
        os.setpriority(os.PRIO_PROCESS, 0, os.getpriority(os.PRIO_PROCESS, 0) - 1)

    def limits(work):
        import resource

        return resource.getrlimit(resource.RLIMIT_NICE), resource.getrlimit(resource.RLIMIT_RTPRIO)

    assert attempt(limits, before=_generous_priority_limits) == repr(((0, 0), (0, 0)))
    attacks = {
        "lower nice": raise_nice,
        "SCHED_FIFO": lambda work: os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1)),
        "SCHED_RR": lambda work: os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(1)),
    }
    for name, action in attacks.items():
        assert attempt(action, before=_generous_priority_limits) == "PermissionError", name


def test_the_child_may_step_further_back():
    def step_back(work):
        os.setpriority(os.PRIO_PROCESS, 0, 19)
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        return os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)

    assert attempt(step_back) == repr((19, os.SCHED_BATCH))


def _raw_prlimit(pid_with_upper_bits: int):
    """prlimit64 with a pid whose register's upper half is set: the kernel reads only the int."""
    libc = ctypes.CDLL(None, use_errno=True)
    limit = (ctypes.c_uint64 * 2)(1 << 20, 1 << 20)
    if libc.syscall(302, ctypes.c_uint64(pid_with_upper_bits), 9, ctypes.byref(limit), None) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _setown_ex(pid: int):
    import fcntl

    class Owner(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("pid", ctypes.c_int)]

    libc = ctypes.CDLL(None, use_errno=True)
    read_end, _ = os.pipe()
    fcntl.fcntl(read_end, fcntl.F_SETFL, os.O_ASYNC)
    if libc.fcntl(read_end, 15, ctypes.byref(Owner(1, pid))) != 0:  # F_SETOWN_EX, F_OWNER_PID
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def _sysv_lines() -> dict[str, int]:
    counts = {}
    for kind in ("shm", "msg", "sem"):
        with open(f"/proc/sysvipc/{kind}") as table:
            counts[kind] = len(table.readlines())
    return counts


def test_system_v_ipc_is_refused_and_nothing_of_it_outlives_the_child():
    """shmget, msgget and semget need no path (Landlock does not see them), and what they make
    outlives its maker, holding memory no limit of the child's counts."""
    before = _sysv_lines()

    def call(name, *args):
        def action(work):
            libc = ctypes.CDLL(None, use_errno=True)
            if getattr(libc, name)(*args) < 0:
                raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
        return action

    IPC_PRIVATE, IPC_CREAT = 0, 0o1000
    assert attempt(call("shmget", IPC_PRIVATE, ctypes.c_size_t(512 << 20), IPC_CREAT | 0o600)) == "PermissionError"
    assert attempt(call("shmget", 0x7C0FFEE, ctypes.c_size_t(4096), IPC_CREAT | 0o666)) == "PermissionError"
    assert attempt(call("msgget", 0x7C0FFEE, IPC_CREAT | 0o666)) == "PermissionError"
    assert attempt(call("semget", 0x7C0FFEE, 1, IPC_CREAT | 0o666)) == "PermissionError"
    assert attempt(call("mq_open", b"/tvm-course-probe", os.O_CREAT | os.O_RDWR, 0o600, None)) == "PermissionError"
    assert _sysv_lines() == before


def test_a_terminal_request_cannot_hide_in_the_registers_upper_half():
    def push_keystroke(work):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.ioctl(0, ctypes.c_ulong(0x5412 | (1 << 32)), ctypes.c_char_p(b"x")) != 0:  # TIOCSTI
            raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))

    assert attempt(push_keystroke) == "PermissionError"


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


def test_the_child_is_a_user_of_its_own_under_root_and_holds_no_privilege():
    """In a world under a root grader, a uid and gid of its own (world.IDENTITY_BASE up), which
    still reads what it needs; elsewhere the grader's own. No capability of any kind, none to
    regain through exec, and no_new_privs, a root grader's child too."""

    def privileges(work):
        libc = ctypes.CDLL(None, use_errno=True)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        assert libc.syscall(125, header, data) == 0  # capget
        bounding = [cap for cap in range(41) if libc.prctl(23, cap, 0, 0, 0) == 1]  # PR_CAPBSET_READ
        return (os.getuid(), os.getgid(), list(data), bounding, libc.prctl(39, 0, 0, 0, 0))  # PR_GET_NO_NEW_PRIVS

    uid, gid, *rest = eval(attempt(privileges))
    assert rest == [[0] * 6, [], 1]
    if IN_WORLD["world"] and os.geteuid() == 0 and world.supported().own_identity:
        assert uid >= world.IDENTITY_BASE and gid == uid
    else:
        assert (uid, gid) == (os.getuid(), os.getgid())


def test_in_a_world_the_child_is_alone():
    if not IN_WORLD["world"]:
        pytest.skip("without namespaces the child shares the machine's")
    assert attempt(lambda work: (os.getpid(), os.getppid(), os.getpgrp(), socket.gethostname())) == repr((1, 0, 0, world.HOST_NAME))


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
        "isolation between gradings (user namespaces, or Landlock ABI 6's signal scoping)",
    ]
    assert confine.Status(5, True, "", namespaces=False).missing() == [
        "isolation between gradings (user namespaces, or Landlock ABI 6's signal scoping)"]
    assert confine.Status(5, True, "", namespaces=True).isolated and confine.Status(6, True, "").isolated
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
