"""A world of its own for each untrusted child: Linux namespaces, entered before anything runs.

Landlock and seccomp (confine.py) decide what a confined process may *do*; this module decides
what it can *name*. Each untrusted child (the student's, and the runner that loads compiled
code) enters, first thing, new namespaces of every kind the kernel offers without privileges:

- its own user: where the grader is root (and may make namespaces without a user namespace),
  the child builds its world as root and then becomes a uid and gid of its own, which no other
  process on the machine has (`new_identity`: one per child, from IDENTITY_BASE up), before
  anything untrusted runs. What the kernel counts per user (queued signals, inotify instances,
  pipe buffers, processes, message queues) is then counted for it alone, and it owns no file of
  the machine's. It reads the interpreter, numpy and TVM through the world's binds, which root
  made: a checkout in /root or in a `mktemp -d` folder is reached through the world's own
  tmpfs folders, never through the 0700 ones above it. The grader hands it its directory and
  what it puts there (sandbox.Child). Elsewhere (a grader that is not root), a user namespace
  in which the child keeps the grader's own uid and gid (mapped to themselves); its
  capabilities exist only inside the namespace. Either way confine() drops every capability
  before untrusted code runs, and bounds what the child can hold (rlimits, seccomp);
- pid: the child is process 1 of a namespace holding nothing else. No other process of the
  machine (another grading, its own evaluator, the fork server, the grader) has a pid it can
  name: kill, prlimit, fcntl(F_SETOWN), sched_* and /proc reach none of them;
- ipc: System V shared memory, queues and semaphores are its own and vanish with it;
- net: no interface but a loopback that is down;
- uts: its own host name;
- mount: a new root on a tmpfs holding only what the child may read (the same trees as
  Landlock's rules, bound read-only at their own paths), its private directory (read-write),
  /dev/null and the random devices, and a /proc of its own namespace. The rest of the machine
  (the course, other submissions, /tmp, /home) does not exist there, not even for stat().

A pid namespace is entered by the *next* process created, so entering takes one more fork: the
process that called `enter()` stays outside as a waiter (it runs no untrusted code, holds no
descriptor of the child's, and exits as its child exited, so its parent sees one process), and
`enter()` returns in the new process 1. If the waiter is killed, process 1 dies with it
(PR_SET_PDEATHSIG); if process 1 dies, the kernel ends the namespace's every process.

Where the kernel refuses a user namespace (a container whose seccomp profile forbids it, a
sysctl, an AppArmor policy), `supported()` says so and why, the child goes on without a world,
and the callers decide: a self-check says what is not enforced; a class run refuses unless told
--allow-unconfined (Landlock's own scoping of signals still keeps gradings apart where the
kernel has ABI 6).

Only the standard library is used here: `supported()` probes in a fresh `python -I -S`.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import itertools
import os
import resource
import select
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass

from ..errors import TvmCourseError

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
NAMESPACES = {"user": CLONE_NEWUSER, "pid": CLONE_NEWPID, "ipc": CLONE_NEWIPC, "network": CLONE_NEWNET,
              "uts": CLONE_NEWUTS, "mount": CLONE_NEWNS}

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 0x1, 0x2, 0x4, 0x8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC = 0x20, 0x400, 0x800, 0x1000, 0x4000
MS_PRIVATE, MS_RELATIME, MS_STRICTATIME = 0x40000, 0x200000, 0x1000000
MNT_DETACH = 0x2
PR_SET_PDEATHSIG, PR_GET_DUMPABLE, PR_SET_DUMPABLE, PR_SET_NAME = 1, 3, 4, 15
_SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}

# What a waiter calls itself (its `comm`). Memory accounting skips a process of this name only
# while it has exactly one child: a confined child can rename itself but can never have a child.
WAITER_NAME = "tvm-course-wait"
OLD_ROOT = "/.old-root"
HOST_NAME = "grading"


# The uids (and gids) the untrusted children of a root grader become: above every range a
# system gives its users, its services or its containers' subordinate ids (/etc/subuid), below
# (uid_t)-1. A child's number is IDENTITY_BASE + its grader's pid * 256 + a counter: distinct
# for every child alive at once on the machine, since a pid is (pid_max is at most 2**22).
IDENTITY_BASE = 2**31
_IDENTITIES_PER_PROCESS = 256


class WorldUnavailable(OSError, TvmCourseError):
    """The kernel refused a step of entering the world; the message names the step."""


@dataclass(frozen=True)
class View:
    """What exists in a child's world, besides /proc and an empty, read-only root."""

    readable: tuple[str, ...]  # trees (or files) bound read-only at their own paths
    private_dir: str  # bound read-write at its own path: the child's directory
    devices: tuple[str, ...] = ()  # device nodes bound read-write (a GPU's)


@dataclass(frozen=True)
class Identity:
    """The uid and gid an untrusted child becomes: no other process on the machine has them."""

    uid: int
    gid: int


@dataclass(frozen=True)
class Support:
    available: bool
    reason: str  # why not ("" when available)
    # Whether each child can be given a uid of its own (a root grader), and if not, why not.
    own_identity: bool = False
    shared_because: str = "the grader is not root: only root can give a process another uid"


@functools.lru_cache(maxsize=1)
def supported() -> Support:
    """Whether this machine lets the grader's user enter a world, found by trying once in a
    throwaway interpreter (about 30 ms, once per process). TVM_COURSE_NAMESPACES=0 turns them off."""
    if os.environ.get("TVM_COURSE_NAMESPACES") == "0":
        return Support(False, "turned off (TVM_COURSE_NAMESPACES=0)")
    if not sys.platform.startswith("linux") or _pivot_root_number() is None:
        return Support(False, f"Linux namespaces are not available on {sys.platform}/{os.uname().machine}")
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from autograder.engine.world import _probe; _probe()")
    # Its scratch folder in the system's: a child's TMPDIR is its own directory, which under a
    # root grader belongs to the child's uid, where root in a user namespace may not mount.
    env = {k: v for k, v in os.environ.items() if k not in ("TMPDIR", "TEMP", "TMP")}
    try:
        probe = subprocess.run([sys.executable, "-I", "-S", "-c", code, package_root], capture_output=True,
                               text=True, timeout=30, stdin=subprocess.DEVNULL, env=env)
    except (OSError, subprocess.TimeoutExpired) as error:
        return Support(False, f"the namespace probe did not run: {error}")
    answer = probe.stdout.strip().splitlines()
    if probe.returncode == 0 and answer and answer[0] == "ok":
        if os.geteuid() != 0:
            return Support(True, "")
        own = answer[1:] == ["own identity"]
        why = "" if own else (answer[1] if len(answer) > 1 else "the probe did not say")
        return Support(True, "", own_identity=own, shared_because=why)
    lines = (probe.stdout + probe.stderr).strip().splitlines()
    return Support(False, lines[-1] if lines else f"the namespace probe exited {probe.returncode}")


def _probe() -> None:
    """In the throwaway interpreter: every step that enter() takes, on an empty view; as root,
    again with an identity of the child's own."""
    import tempfile

    def attempt(identity: Identity | None) -> str:
        with tempfile.TemporaryDirectory() as scratch:
            if identity is not None:
                os.chown(scratch, identity.uid, identity.gid)
            errors_r, errors_w = os.pipe()
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                os.close(errors_r)
                try:
                    enter(View(readable=(), private_dir=scratch), identity)
                    with open("/proc/self/stat") as stat:  # a /proc of the world's own
                        assert stat.read().startswith("1 "), "not process 1 of a new pid namespace"
                    if identity is not None:
                        assert os.getresuid() == (identity.uid,) * 3, f"still uid {os.getresuid()}"
                        assert os.listdir(scratch) == [], "its own directory cannot be read"
                    drop_capabilities()
                except BaseException as error:  # noqa: BLE001 - reported, as the probe's answer
                    os.write(errors_w, f"{error}".encode()[-500:])
                    os._exit(1)
                os._exit(0)
            os.close(errors_w)
            with os.fdopen(errors_r, "rb") as errors:
                said = errors.read().decode(errors="replace").strip()
            _, status = os.waitpid(pid, 0)
            return "" if os.waitstatus_to_exitcode(status) == 0 else (said or "failed")

    failure = attempt(None)
    if failure:
        print(failure, file=sys.stderr)
        print("failed")
        return
    print("ok")
    if os.geteuid() == 0:
        failure = attempt(new_identity(probing=True))
        print("own identity" if not failure else f"a uid of the child's own is refused here: {failure}")


_counter = itertools.count()


def new_identity(*, probing: bool = False) -> Identity | None:
    """A uid and gid for the next untrusted child that no other process on the machine has, where
    this grader can give one (root, and supported() found it works); None elsewhere."""
    if os.geteuid() != 0 or not (probing or supported().own_identity):
        return None
    number = IDENTITY_BASE + (os.getpid() % 2**22) * _IDENTITIES_PER_PROCESS + next(_counter) % _IDENTITIES_PER_PROCESS
    return Identity(number, number)


def identity_of(private_dir: str) -> Identity | None:
    """In a child: the identity its grader gave its directory (new_identity), if any."""
    if os.geteuid() != 0 or not supported().own_identity:
        return None
    status = os.stat(private_dir)
    return Identity(status.st_uid, status.st_gid) if status.st_uid >= IDENTITY_BASE else None


def hand_over(folder: str, identity: Identity | None) -> None:
    """In the grader: make `folder` and what is directly in it the child's own (its identity's)."""
    if identity is None:
        return
    os.chown(folder, identity.uid, identity.gid)
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                os.chown(entry.path, identity.uid, identity.gid, follow_symlinks=False)
            except FileNotFoundError:  # removed meanwhile (the student's child unlinks its file)
                pass


# ------------------------------------------------------------------------------ entering


def enter(view: View, identity: Identity | None = None) -> list[str]:
    """In a single-threaded child: new namespaces, a waiter left outside, a new root; with an
    `identity` (a root grader), that uid and gid from then on. Returns, in the world's process 1,
    what is now in force, for the record.

    Raises WorldUnavailable (before any fork) if the kernel refuses the namespaces; once the
    waiter exists, a failure ends the child with a message on its stderr, exit code 71.
    """
    libc = _libc()
    if identity is not None:
        return _enter_as(libc, view, identity)
    uid, gid = os.getuid(), os.getgid()
    if os.geteuid() == 0:
        os.setgroups([])  # the supplementary groups would stay, unmapped, inside
    flags = 0
    for value in NAMESPACES.values():
        flags |= value
    _check(libc.unshare(flags), "unshare the user, pid, ipc, network, uts and mount namespaces")
    # An undumpable process's /proc files belong to root: a grader that is not root could not
    # write its own maps. Dumpable for these three writes only (no untrusted code runs yet).
    dumpable = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    libc.prctl(PR_SET_DUMPABLE, 1, 0, 0, 0)
    try:
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    finally:
        libc.prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0)

    def build(alive_r: int) -> None:
        _die_with_waiter(libc, alive_r)
        _build_root(libc, view)
        libc.sethostname(HOST_NAME.encode(), len(HOST_NAME))

    _fork_into_world(build)
    return [f"own user, pid, ipc, network and mount namespaces (process 1 of its own; only the "
            f"interpreter, its packages and its own directory exist); the grader's uid {uid}, mapped to itself"]


def _enter_as(libc, view: View, identity: Identity) -> list[str]:
    """enter() for a root grader: the namespaces without a user namespace (root may make them),
    the world built as root, then the child's own uid and gid, before anything untrusted runs.
    A user namespace is not needed, and would not do: the kernel charges what a process in one
    holds to the namespace's owner too, and a namespace made after the uid changed could not
    bind what only root may reach."""
    flags = 0
    for name, value in NAMESPACES.items():
        flags |= 0 if name == "user" else value
    _check(libc.unshare(flags), "unshare the pid, ipc, network, uts and mount namespaces")

    def build(alive_r: int) -> None:
        _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "tie the child's life to its waiter")
        mask = os.umask(0o022)  # the new root's folders must be enterable by the child's own uid
        try:
            _build_root(libc, view)
        finally:
            os.umask(mask)
        libc.sethostname(HOST_NAME.encode(), len(HOST_NAME))
        _become(libc, identity)
        _die_with_waiter(libc, alive_r)  # again: a change of uid clears the parent-death signal

    _fork_into_world(build)
    return ["a uid of its own (which no other process has); own pid, ipc, network and mount "
            "namespaces (process 1 of its own; only the interpreter, its packages and its own directory exist)"]


def _fork_into_world(build: Callable[[int], None]) -> None:
    """After the unshare, the one more fork that enters the pid namespace: the calling process
    stays outside as the waiter (`_wait_and_mirror`, never returns), and this returns in the
    new process 1 once `build(alive_r)` has built its world there (`alive_r`: the pipe's end
    whose end of file says the waiter is gone, for `_die_with_waiter`).

    Any failure of `build` happens in a process whose parent expects a child: it says what failed
    on stderr and exits 71 (which the waiter mirrors), rather than return into the caller's code
    as two processes."""
    alive_r, alive_w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        os.close(alive_r)
        _wait_and_mirror(pid, keep=alive_w)  # never returns
    os.close(alive_w)
    try:
        build(alive_r)
    except BaseException as error:  # noqa: BLE001 - the waiter mirrors this exit
        print(f"tvm-course: could not enter the grading's own namespaces: {error}", file=sys.stderr, flush=True)
        os._exit(71)


def _become(libc, identity: Identity) -> None:
    """Root becomes the child's identity for good: no capability can come back (the bounding set
    is emptied first, while root may), no supplementary group, the same uid and gid real,
    effective and saved."""
    for cap in range(_last_capability() + 1):
        libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.setgroups([])
    os.setresgid(identity.gid, identity.gid, identity.gid)
    os.setresuid(identity.uid, identity.uid, identity.uid)
    if os.getresuid() != (identity.uid,) * 3 or os.getresgid() != (identity.gid,) * 3 or os.getgroups():
        raise WorldUnavailable(errno.EPERM, f"could not become uid {identity.uid}")


def _wait_and_mirror(pid: int, keep: int) -> None:
    """The waiter: no descriptor of the child's (only `keep`, whose closing tells the child the
    waiter is gone), nothing but waiting; then exit as the child did."""
    try:
        # No file may be opened here: process 1 is pivoting this mount namespace's root meanwhile.
        name = ctypes.create_string_buffer(WAITER_NAME.encode())
        _libc().prctl(PR_SET_NAME, ctypes.addressof(name), 0, 0, 0)
        os.closerange(0, keep)  # stdin, output and the channel stay the child's alone
        os.closerange(keep + 1, max_fd())
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except InterruptedError:
                continue
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, [number])
            os.kill(os.getpid(), number)
            os._exit(128 + number)
        os._exit(os.waitstatus_to_exitcode(status))
    finally:
        os._exit(70)


def _die_with_waiter(libc, alive_r: int) -> None:
    """Process 1 dies with its waiter; and if the waiter died before that was set, now."""
    _check(libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "tie the child's life to its waiter")
    readable, _, _ = select.select([alive_r], [], [], 0)
    if readable:  # end of file: the waiter's end is closed, so the waiter is gone
        os._exit(70)
    os.close(alive_r)


def _build_root(libc, view: View) -> None:
    """A tmpfs as the new root, with each path of `view` bound at its own path, and /proc."""
    binds = _plan(view)  # resolved while the old root is still /
    aliases = _aliases(view)  # the same: after the pivot, the links are not there to read
    _check(libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None), "make the mounts private")
    root = view.private_dir  # any directory will do as the tmpfs's mount point: pivot_root moves it
    _check(libc.mount(b"tmpfs", root.encode(), b"tmpfs", MS_NOSUID | MS_NODEV, b"mode=0755,size=1m"),
           "mount a tmpfs for the new root")
    os.mkdir(root + OLD_ROOT)
    _check(libc.syscall(_pivot_root_number(), root.encode(), (root + OLD_ROOT).encode()),
           "pivot into the new root")
    os.chdir("/")
    for source, target, kind, writable in binds:
        _mount_point(target, kind)
        _check(libc.mount((OLD_ROOT + source).encode(), target.encode(), None, MS_BIND | MS_REC, None),
               f"bind {source}")
        locked = _locked_flags(OLD_ROOT + source)
        remount = MS_BIND | MS_REMOUNT | MS_NOSUID | locked | (0 if writable else MS_RDONLY)
        if kind != "device":
            remount |= MS_NODEV
        _check(libc.mount(None, target.encode(), None, remount, None), f"make {source} {'private' if writable else 'read-only'}")
    for alias, link in aliases:
        if not os.path.lexists(alias):
            os.makedirs(os.path.dirname(alias), exist_ok=True)
            os.symlink(link, alias)
    os.makedirs("/proc", exist_ok=True)
    if libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None) != 0:
        # A container that masks parts of its /proc forbids a new one: bind the old, read-only
        # (Landlock still denies it to untrusted code, as everywhere else).
        _check(libc.mount((OLD_ROOT + "/proc").encode(), b"/proc", None, MS_BIND | MS_REC, None), "mount /proc")
        libc.mount(None, b"/proc", None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    _check(libc.umount2(OLD_ROOT.encode(), MNT_DETACH), "detach the old root")
    os.rmdir(OLD_ROOT)
    _check(libc.mount(None, b"/", None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, None),
           "make the new root read-only")
    os.chdir(view.private_dir)


def _plan(view: View) -> list[tuple[str, str, str, bool]]:
    """(source, target, kind, writable) for each bind, outermost first, without symlinks and
    without a tree inside one already bound."""
    # Under /proc is the world's own /proc (a GPU driver's /proc/driver/nvidia is there too).
    readable = sorted({os.path.realpath(p) for p in view.readable
                       if os.path.exists(p) and not _inside(os.path.realpath(p), "/proc")})
    binds: list[tuple[str, str, str, bool]] = []
    covered: list[str] = []
    for path in readable:
        if any(_inside(path, outer) for outer in covered):
            continue
        covered.append(path)
        binds.append((path, path, "dir" if os.path.isdir(path) else "file", False))
    private = os.path.realpath(view.private_dir)
    binds.append((private, private, "dir", True))
    for device in ("/dev/null", "/dev/zero", "/dev/urandom", "/dev/random", *view.devices):
        if os.path.exists(device):
            binds.append((os.path.realpath(device), os.path.realpath(device), "device", True))
    return binds


def _aliases(view: View) -> list[tuple[str, str]]:
    """Symlinks on the way to each path of the view (/lib -> usr/lib, a venv's python), to
    recreate in the new root so that the paths the interpreter knows resolve as before."""
    links = {}
    for path in (*view.readable, view.private_dir, *view.devices):
        current = "/"
        for part in [p for p in os.path.abspath(path).split("/") if p]:
            candidate = os.path.join(current, part)
            for _ in range(40):  # a chain of links (/usr/bin/ld -> x86_64-linux-gnu-ld -> ...ld.bfd)
                if not os.path.islink(candidate):
                    break
                links[candidate] = os.readlink(candidate)
                candidate = os.path.normpath(os.path.join(os.path.dirname(candidate), links[candidate]))
            current = os.path.realpath(candidate)
    return sorted(links.items())


def _mount_point(target: str, kind: str) -> None:
    if kind == "dir":
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            with open(target, "w"):
                pass


def _locked_flags(path: str) -> int:
    """The flags a bind inherits and may not drop inside a user namespace (mount(2): EPERM)."""
    flags = os.statvfs(path).f_flag
    mapping = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
               os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME, os.ST_RELATIME: MS_RELATIME}
    return sum(ms for st, ms in mapping.items() if flags & st)


def _inside(inner: str, outer: str) -> bool:
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


# ------------------------------------------------------------------------------ capabilities

_PR_CAPBSET_DROP, _PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 24, 47, 4
_PR_SET_SECUREBITS, _PR_SET_NO_NEW_PRIVS = 28, 38
# SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, SECBIT_KEEP_CAPS_LOCKED, SECBIT_NO_CAP_AMBIENT_RAISE and
# each one's lock: uid 0 never regains a capability, whatever it runs.
_SECUREBITS_LOCKED = 0x01 | 0x02 | 0x04 | 0x08 | 0x20 | 0x40 | 0x80
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
_CAP_LAST = 63


def drop_capabilities() -> None:
    """Every capability gone for good (effective, permitted, inheritable, ambient, bounding),
    uid 0 made an ordinary uid, and no_new_privs: what confine() does before untrusted code runs.
    Files stay readable as they are to the grader's own user."""
    libc = _libc()
    if os.geteuid() == 0 or _has_capabilities():
        libc.prctl(_PR_SET_SECUREBITS, _SECUREBITS_LOCKED, 0, 0, 0)  # needs CAP_SETPCAP: where there is none, nothing to lock
        for cap in range(_last_capability() + 1):
            libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # effective, permitted, inheritable: all zero, both words
    _check(libc.syscall(_SYS_CAPSET[os.uname().machine], header, data), "drop every capability")
    _check(libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "set no_new_privs")
    ctypes.set_errno(0)  # the landlock binding reads ctypes' errno after its own calls


def _last_capability() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as last:
            return int(last.read())
    except (OSError, ValueError):
        return _CAP_LAST


def _has_capabilities() -> bool:
    try:
        with open("/proc/self/status") as status:
            return any(line.startswith("CapEff:") and int(line.split()[1], 16) for line in status)
    except OSError:
        return True  # cannot tell: drop whatever there is


# ------------------------------------------------------------------------------ helpers


@functools.lru_cache(maxsize=1)
def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
    libc.unshare.argtypes = [ctypes.c_int]
    libc.sethostname.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, doing: str) -> None:
    if result != 0:
        code = ctypes.get_errno()
        raise WorldUnavailable(code, f"could not {doing}: {os.strerror(code)} ({errno.errorcode.get(code, code)})")


def _write(path: str, text: str) -> None:
    try:
        with open(path, "w") as handle:
            handle.write(text)
    except OSError as error:
        raise WorldUnavailable(error.errno, f"could not write {path}: {error.strerror}") from None


def _pivot_root_number() -> int | None:
    return _SYS_PIVOT_ROOT.get(os.uname().machine)


def max_fd() -> int:
    """One past the highest descriptor a process may hold (for closerange)."""
    try:
        return os.sysconf("SC_OPEN_MAX")
    except (ValueError, OSError):
        return 4096
