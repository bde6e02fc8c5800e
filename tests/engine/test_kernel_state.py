"""What the kernel keeps for a confined process is bounded, and none of it is charged to a user
the machine or another grading shares: tried from the attacker's side.

Each class is tried twice: by a submission graded for real (the student's child), and by code
in a child confined as the runner that loads compiled code is (threads allowed, a result file
to write), since a compiled schedule makes system calls directly. Each probe holds all it can
and reports how much it got; the assertions are about the class (a lease on a file it can only
read, file watches, pipe buffers, queued signals, kernel memory outside RLIMIT_AS, the uid it
runs as), not one payload.

Measured before this was closed, by the same probes (a grader running as root, Linux 6.18):
a write lease on /usr/lib/os-release taken (every open of it stalled up to lease-break-time,
45 s) and flock(LOCK_EX) on it; 128 inotify instances (root's whole max_user_instances); 9,997
pipes holding 136 MiB; 96,367 queued signals (root's RLIMIT_SIGPENDING, counted per user); a
memfd made; the child ran as uid 0.
"""
from __future__ import annotations

import json
import os
import textwrap

import pytest

from autograder.engine import confine, world
from autograder.engine.pipeline import grade_source
from autograder.engine.sandbox import ForkedChild

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not confine.available().complete, reason=f"no Landlock or seccomp here: {confine.available().reason}"),
]

PIPE_BYTES = 64 * 1024  # a pipe's default capacity, which F_SETPIPE_SZ (denied) would raise

PROBES = textwrap.dedent('''
    import ctypes, errno, fcntl, json, os, resource, signal

    LIBC = ctypes.CDLL(None, use_errno=True)
    SYSTEM_FILE = "/usr/lib/os-release" if os.path.exists("/usr/lib/os-release") else os.__file__

    def _outcome(action):
        try:
            action()
            return "taken"
        except OSError as error:
            return errno.errorcode.get(error.errno, str(error.errno))

    def leases_and_locks():
        """Leases and locks on a file of the machine's that it can only read."""
        fd = os.open(SYSTEM_FILE, os.O_RDONLY)
        found = {"write lease": _outcome(lambda: fcntl.fcntl(fd, 1024, fcntl.F_WRLCK)),  # F_SETLEASE
                 "read lease": _outcome(lambda: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK)),
                 "flock": _outcome(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)),
                 "posix read lock": _outcome(lambda: fcntl.lockf(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)),
                 "dnotify": _outcome(lambda: fcntl.fcntl(os.open(os.path.dirname(SYSTEM_FILE), os.O_RDONLY), 1026, 0x1))}
        os.close(fd)
        return found

    def watches():
        """As many inotify instances (and fanotify groups) as the kernel gives."""
        made = []
        while len(made) < 4096:
            fd = LIBC.inotify_init1(0)
            if fd < 0:
                break
            made.append(fd)
        refused = errno.errorcode.get(ctypes.get_errno(), "")
        fanotify = LIBC.fanotify_init(0, 0)  # EPERM either way without a capability
        for fd in made:
            os.close(fd)
        return {"inotify instances": len(made), "refused with": refused, "fanotify": fanotify}

    def pipe_buffers():
        """As many pipes as it can open, each grown as far as it will go and filled."""
        pipes, held, grown, refused = [], 0, 0, ""
        while True:
            try:
                r, w = os.pipe()
            except OSError as error:
                refused = errno.errorcode.get(error.errno, "")
                break
            pipes.append((r, w))
            try:
                fcntl.fcntl(w, 1031, 1 << 20)  # F_SETPIPE_SZ
                grown += 1
            except OSError:
                pass
            os.set_blocking(w, False)
            try:
                while True:
                    held += os.write(w, b"x" * 65536)
            except BlockingIOError:
                pass
        for r, w in pipes:
            os.close(r)
            os.close(w)
        return {"pipes": len(pipes), "held": held, "grown": grown, "refused with": refused,
                "descriptors": resource.getrlimit(resource.RLIMIT_NOFILE)}

    def queued_signals():
        """Real-time signals queued to itself (blocked, so they stay queued) until refused."""
        signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGRTMIN])
        queued = 0
        while queued < 200_000 and LIBC.sigqueue(os.getpid(), signal.SIGRTMIN, ctypes.c_void_p(0)) == 0:
            queued += 1
        timer = ctypes.c_long()
        timers = LIBC.timer_create(1, None, ctypes.byref(timer))  # CLOCK_MONOTONIC
        return {"queued": queued, "timer_create": timers}

    def unlimited_memory():
        """Kernel memory RLIMIT_AS does not count: a memfd's pages, written and unmapped."""
        return {"memfd": _outcome(lambda: os.memfd_create("hoard"))}

    def identity():
        return {"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups()}
''')


def graded(probe: str, fast_config) -> dict:
    """What `probe` got in a submission graded for real (the student's child)."""
    source = PROBES + f"\ndef schedule(sch):\n    print('PROBE', json.dumps({probe}()))\n"
    result = grade_source("tile-fused-conv", source, fast_config)
    lines = [line for line in result.student_output.splitlines() if line.startswith("PROBE ")]
    assert lines, result.to_text()
    return json.loads(lines[-1][len("PROBE "):])


def as_runner(probe: str) -> dict:
    """What `probe` got in a child confined as the runner of compiled code is."""
    namespace: dict = {}
    exec(PROBES, namespace)

    def target(send):
        work = os.getcwd()
        policy = confine.Policy(private_dir=work, writable_files=(os.path.join(work, "result.bin"),), max_file_bytes=64,
                                threads=True)
        confine.enter_world(policy)
        confine.confine(policy)
        send({"kind": "probe", "value": namespace[probe]()})

    child = ForkedChild(target)
    with open(os.path.join(child.workdir, "result.bin"), "wb") as handle:
        handle.write(b"\0" * 64)
    child.start()
    outcome = child.wait(60)
    message = outcome.last("probe")
    assert message is not None, outcome.output_tail
    return message["value"]


@pytest.fixture(params=["student", "runner"])
def probe(request, fast_config):
    return (lambda name: graded(name, fast_config)) if request.param == "student" else as_runner


def test_no_lease_or_lock_on_a_file_it_can_only_read(probe):
    """A write lease on a system file stalled every process that opened it (other gradings, the
    grader) for up to lease-break-time; locks stall others too, and each locked range is kernel
    memory no limit counts."""
    found = probe("leases_and_locks")
    assert set(found.values()) == {"EPERM"}, found


def test_no_file_watches_on_the_machines_files(probe):
    """inotify instances are counted per user of the machine: a child that took the grader's
    uid's 128 left none for the grader's own user (and its other processes)."""
    found = probe("watches")
    assert found["inotify instances"] == 0 and found["refused with"] == "EPERM", found
    assert found["fanotify"] == -1


def test_pipe_buffers_are_bounded_by_its_descriptors(probe):
    """Pipe buffers are kernel memory charged per user, not to RLIMIT_AS: with the grader's 20000
    descriptors a child held 136 MiB past a 128 MiB limit. Pipes stay at 64 KiB (F_SETPIPE_SZ
    refused), and few descriptors bound how many there are."""
    found = probe("pipe_buffers")
    limit = found["descriptors"][1]
    assert limit <= confine.MAX_FILES + 32, found  # the runner's margin above what it holds open
    assert found["refused with"] == "EMFILE" and found["grown"] == 0, found
    assert found["held"] <= limit // 2 * PIPE_BYTES <= 4 * 2**20, found


def test_queued_signals_and_timers_are_bounded(probe):
    """Queued signals are counted per user (RLIMIT_SIGPENDING): a child queued 96,367, all of
    the grader's uid's quota. POSIX timers are kernel memory besides."""
    found = probe("queued_signals")
    assert found["queued"] <= confine.MAX_QUEUED_SIGNALS and found["timer_create"] == -1, found


def test_no_kernel_memory_outside_its_limits(probe):
    found = probe("unlimited_memory")
    assert found == {"memfd": "EPERM"}, found


def test_the_untrusted_processes_are_not_the_graders_uid(probe):
    """Under a root grader each untrusted child is a uid and gid no other process on the machine
    has, so that nothing it holds is charged to the grader's user or another grading's."""
    if os.geteuid() != 0:
        pytest.skip("the grader is not root: only root can give a child another uid; the child keeps the grader's "
                    "(in a user namespace of its own) and what it can hold is bounded by its limits and seccomp")
    if not world.supported().own_identity:
        pytest.skip(f"this machine gives no uid of its own: {world.supported().shared_because}")
    first, second = probe("identity"), probe("identity")
    for found in (first, second):
        assert found["uid"] >= world.IDENTITY_BASE and found["gid"] == found["uid"] and found["groups"] == [], found
    assert first["uid"] != second["uid"]  # one per child: two gradings at once never share one


def test_each_child_gets_a_uid_no_other_process_has():
    if os.geteuid() != 0 or not world.supported().own_identity:
        pytest.skip("only a root grader gives its children uids of their own")
    import psutil

    given = {confine.new_identity() for _ in range(world._IDENTITIES_PER_PROCESS)}
    assert len(given) == world._IDENTITIES_PER_PROCESS and all(i.uid >= world.IDENTITY_BASE for i in given)
    in_use = {proc.info["uids"].real for proc in psutil.process_iter(["uids"]) if proc.info["uids"]}
    assert not in_use & {i.uid for i in given}


def test_a_child_of_its_own_uid_still_reads_a_checkout_in_a_folder_only_root_may_enter(tmp_path, fast_config):
    """The world's binds are made by root before the child becomes its own uid: a checkout in a
    0700 folder (a `mktemp -d`, /root) grades as before."""
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    private = tmp_path / "closed"
    import shutil

    shutil.copytree(repo / "autograder", private / "inner" / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    private.chmod(0o700)
    script = ("import os\nfrom autograder.engine.pipeline import grade_source\n"
              "from autograder.engine.config import GraderConfig\n"
              "r = grade_source('tile-fused-conv', open(%r).read(), GraderConfig(timing_rounds=5, min_repeat_ms=5.0))\n"
              "print(r.status, r.correct, r.grader_fault, r.messages)\n") % str(repo / "autograder" / "examples" / "journal.py")
    env = {**os.environ, "PYTHONPATH": str(private / "inner")}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.stdout.startswith("passed True False"), done.stdout + done.stderr
    if os.geteuid() == 0 and world.supported().own_identity:
        assert "a uid of its own" in done.stdout
