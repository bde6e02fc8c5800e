"""Confinement for the grader's untrusted children, from the kernel's own mechanisms.

Two processes run code the grader does not trust: the student's `schedule(sch)` and the
compiled schedule. Each is confined in two steps:

- first thing, `enter_world`: namespaces of its own (world.py): it is process 1 of a pid
  namespace holding nothing else, with its own System V IPC, network and mount namespaces, in a
  new root holding only the interpreter, its packages, the system's libraries and its own
  directory. Under a root grader it then becomes a uid of its own (`new_identity`), which no
  other process has; elsewhere it keeps the grader's uid.
- just before untrusted code runs, `confine`, for good:
  - limits (setrlimit): no new processes for the student's child; no file can be written beyond
    what the grader prepared (RLIMIT_FSIZE); no core dumps; no higher priority than it was
    started with (RLIMIT_NICE, RLIMIT_RTPRIO); few descriptors (RLIMIT_NOFILE: with pipes at
    their 64 KiB, what pipe buffers it can hold is bounded), few queued signals
    (RLIMIT_SIGPENDING, which also counts POSIX timers), no message queue bytes;
  - no privilege: every capability dropped (also a root grader's), uid 0 made ordinary
    (securebits), no_new_privs;
  - Landlock (the `landlock` binding; its scopes, which the binding lacks, by the system call):
    the file system shrinks to what Python, numpy and TVM need, read-only, plus the child's
    private directory; writing only to named files; no TCP; and from ABI 6 no signal and no
    abstract socket to any process outside its own domain;
  - seccomp (the `pyseccomp` binding to libseccomp): no exec, no fork, no sockets, nothing done
    to another process (ptrace, signals, limits, priorities, memory), no System V or POSIX IPC,
    no signal-owner tricks (F_SETOWN, FIOSETOWN), no changing files' owners, modes or extended
    attributes (which Landlock does not cover), no namespaces, mounts, BPF or io_uring; nothing
    that holds kernel state on the machine's files or outside every limit of its own: no file
    locks or leases (flock, F_SETLK, F_SETLEASE), no inotify, fanotify or dnotify, no larger
    pipes (F_SETPIPE_SZ), no memfd, no POSIX timers.

The filter is a deny-list over a reviewed system-call table; README.md ("Why a deny-list")
gives the measurements behind that choice. Both bindings call the kernel directly (no helper
binary, no privileges), so a student's Linux laptop needs nothing beyond `pip install`. Where a
mechanism is missing (another OS, an old kernel, no libseccomp, user namespaces refused),
`available()` says which, the child applies what it can, and the callers decide: a self-check
goes on and says so once; a class run refuses.
"""
from __future__ import annotations

import ctypes
import errno
import functools
import os
import resource
import sys
import sysconfig
from dataclasses import dataclass

from . import world


@dataclass(frozen=True)
class Policy:
    """What one child may do once confined."""

    private_dir: str  # readable (and listable) by the child; its own directory
    writable_files: tuple[str, ...] = ()  # existing files it may write (not grow past max_file_bytes)
    max_file_bytes: int = 0  # RLIMIT_FSIZE: 0 means it can write no byte to any file
    threads: bool = False  # the compiled code's runtime may start threads; student code may not
    devices: tuple[str, ...] = ()  # device nodes it may open read-write (a GPU's)
    extra_readable: tuple[str, ...] = ()  # what a GPU driver reads besides (/proc/driver/nvidia, ...)


LANDLOCK_SCOPES_ABI = 6  # LANDLOCK_SCOPE_SIGNAL and LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET


@dataclass(frozen=True)
class Status:
    landlock_abi: int  # 0: not available
    seccomp: bool
    reason: str  # why something is missing ("" when all is there)
    namespaces: bool = False  # a world of its own for each child (world.py)
    own_identity: bool = False  # and in it a uid of its own (a root grader)

    @property
    def complete(self) -> bool:
        """Each child is confined: its files and its system calls."""
        return self.landlock_abi >= 1 and self.seccomp

    @property
    def isolated(self) -> bool:
        """Gradings cannot reach one another: each child in its own namespaces, or at least
        Landlock's scoping of signals and sockets to the child's own domain."""
        return self.complete and (self.namespaces or self.landlock_abi >= LANDLOCK_SCOPES_ABI)

    def missing(self) -> list[str]:
        gaps = []
        if self.landlock_abi < 1:
            gaps.append("file-system confinement (Landlock)")
        if not self.seccomp:
            gaps.append("system-call filtering (seccomp: no exec, no network)")
        if not self.isolated:
            gaps.append("isolation between gradings (user namespaces, or Landlock ABI 6's signal scoping)")
        return gaps

    def describe(self) -> str:
        """What is in force for each untrusted child, mechanism by mechanism."""
        parts = []
        if self.namespaces:
            parts.append("own user, pid, IPC, network, UTS and mount namespaces")
            if self.own_identity:
                parts.append("a uid of its own")
        parts.append("no capabilities, no_new_privs")
        if self.landlock_abi >= 1:
            scoped = ", signals and abstract sockets" if self.landlock_abi >= LANDLOCK_SCOPES_ABI else ""
            parts.append(f"Landlock ABI {self.landlock_abi} (files{scoped})")
        if self.seccomp:
            parts.append("seccomp (no exec, fork, sockets, IPC or calls on other processes)")
        parts.append("rlimits")
        return "; ".join(parts)


def available() -> Status:
    """What this machine can enforce, found without applying anything."""
    reasons = []
    abi = 0
    if sys.platform != "linux":
        return Status(0, False, f"Landlock and seccomp are Linux mechanisms; this is {sys.platform}")
    try:
        import landlock

        abi = landlock.landlock_abi_version()
    except Exception as error:  # not installed, or the kernel has no Landlock (ENOSYS, EOPNOTSUPP)
        reasons.append(f"Landlock: {_short(error)}")
    try:
        import pyseccomp  # noqa: F401  (raises when libseccomp.so.2 is missing)

        seccomp = True
    except Exception as error:
        seccomp = False
        reasons.append(f"seccomp: {_short(error)}")
    support = world.supported()
    if not support.available:
        reasons.append(f"namespaces: {support.reason}")
    return Status(max(abi, 0), seccomp, "; ".join(reasons), namespaces=support.available,
                  own_identity=support.available and support.own_identity and not _unreadable_to_others())


def new_identity() -> world.Identity | None:
    """In the grader: a uid and gid of its own for the next untrusted child (world.new_identity),
    where this machine allows one and a uid that owns none of the interpreter's files can read
    them (an interpreter or packages installed with umask 077 could not be imported)."""
    if os.geteuid() != 0 or not world.supported().own_identity or _unreadable_to_others():
        return None
    return world.new_identity()


@functools.lru_cache(maxsize=1)
def _unreadable_to_others() -> str:
    """A file a child reads first that a user other than its owner could not read, or "" (from the
    folder the world binds down: the world's own folders above it are open to all)."""
    import importlib.util

    tops = readable_system_paths()
    samples = [os.__file__, __file__, os.path.join(os.path.dirname(os.__file__), "json", "__init__.py")]
    for name in ("numpy", "tvm"):
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and spec.origin:
            samples.append(spec.origin)
    for sample in (os.path.realpath(p) for p in samples):
        top = max((t for t in map(os.path.realpath, tops) if _contains(t, sample)), key=len, default=None)
        if top is None:
            continue
        folder = os.path.dirname(sample)
        while _contains(top, folder):
            if os.stat(folder).st_mode & 0o001 == 0:
                return folder
            if folder == top:
                break
            folder = os.path.dirname(folder)
        if os.stat(sample).st_mode & 0o004 == 0:
            return sample
    return ""


def readable_system_paths() -> list[str]:
    """What Python, numpy and TVM read after start-up: the interpreter's trees, the installed
    packages, the system's shared libraries. Never the checkout: from an editable install, only
    the package directory itself."""
    paths = {
        sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")
    } | {sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))}
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # .../autograder
    paths.add(package)
    paths.update(("/usr/lib", "/usr/lib64", "/lib", "/lib64", "/usr/local/lib", "/etc/ld.so.cache",
                  "/sys/devices/system/cpu"))
    paths.update(_loader_directories())  # where the dynamic loader finds libraries (a GPU driver's too)
    checkout = os.path.dirname(package)
    if not os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        # Installed from the wheel (the student edition): the package's parent is site-packages,
        # which numpy and TVM are read from, not a checkout.
        return sorted(p for p in paths if os.path.exists(p))
    # The interpreter's prefix may be the checkout's own .venv: allow its lib/, not the checkout.
    return sorted(p for p in paths if os.path.exists(p) and os.path.realpath(p) != os.path.realpath(checkout)
                  and not _contains(os.path.realpath(p), os.path.realpath(checkout)))


def _loader_directories(config: str = "/etc/ld.so.conf", depth: int = 0) -> set[str]:
    """The folders /etc/ld.so.conf names, with its `include`s: what ld.so.cache points into."""
    import glob

    found: set[str] = set()
    try:
        with open(config, encoding="utf-8", errors="replace") as handle:
            lines = [line.split("#", 1)[0].strip() for line in handle]
    except OSError:
        return found
    for line in filter(None, lines):
        if line.startswith("include") and depth < 4:
            pattern = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
            pattern = pattern if pattern.startswith("/") else os.path.join(os.path.dirname(config), pattern)
            for included in sorted(glob.glob(pattern)):
                found |= _loader_directories(included, depth + 1)
        elif line.startswith("/") and os.path.isdir(line):
            found.add(line)
    return found


def _contains(outer: str, inner: str) -> bool:
    """True when `outer` is `inner` or a folder above it (allowing it would expose `inner`)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def world_view(policy: Policy) -> world.View:
    """What exists in the child's world: exactly what Landlock will let it read, its directory
    and its devices."""
    return world.View(readable=(*readable_system_paths(), *policy.extra_readable), private_dir=policy.private_dir,
                      devices=policy.devices)


def enter_world(policy: Policy) -> list[str]:
    """In a fresh, single-threaded child, first thing: its own namespaces (world.py), where this
    machine allows them. Returns what was entered, for the record (nothing where not allowed).
    Afterwards this process is the world's process 1 (its caller's pid is a waiter's)."""
    # The bindings find their libraries through ctypes.util.find_library, which runs ldconfig or
    # a compiler: neither exists in the world. Loaded here, they are at hand when confine() runs
    # (a child forked from the fork server has them already; a new interpreter had not).
    available()
    if not world.supported().available:
        return []
    return world.enter(world_view(policy), world.identity_of(policy.private_dir))


def confine(policy: Policy) -> list[str]:
    """In a child, just before untrusted code runs: apply everything available, for good.

    Returns what was applied, for the record. Must run after the child has imported what it
    needs (afterwards it may read nothing else). The Landlock rules are built while the child
    can still open the paths they name, and take effect once it holds no privilege.
    """
    applied = []
    status = available()
    landlock_rules = _landlock_rules(policy, status.landlock_abi) if status.landlock_abi >= 1 else None
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (policy.max_file_bytes, policy.max_file_bytes))
    # Never more urgent than it was started: with no capability left, these two hard limits are
    # all that lets a process lower its nice value or take a real-time policy, and a grader may
    # have inherited generous ones (a root shell, a limits.conf for audio). A spinning student at
    # real-time priority would stretch every other grading's timing on its core.
    resource.setrlimit(resource.RLIMIT_NICE, (0, 0))
    resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
    applied.append("no higher priority")
    if not policy.threads:
        # Counted per user (and namespace): with this process alone at the limit, fork and thread
        # creation fail (seccomp denies them as well; uid 0 is exempt from this limit).
        resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
        applied.append("no new processes or threads")
    elif os.getpid() == 1:
        # In a world the count is the child's alone (its own uid, or its own user namespace):
        # threads, each with its kernel stack, up to a bound. Outside one it would count all of
        # the grader's processes.
        resource.setrlimit(resource.RLIMIT_NPROC, (MAX_THREADS, MAX_THREADS))
        applied.append(f"at most {MAX_THREADS} threads")
    applied.append(_limit_kernel_state(policy))
    world.drop_capabilities()
    applied.append("no capabilities, no_new_privs")
    if landlock_rules is not None:
        landlock_rules.apply()
        scoped = _apply_landlock_scopes(status.landlock_abi)
        applied.append(f"Landlock ABI {status.landlock_abi}: system files read-only, nothing else"
                       + (f"; {scoped}" if scoped else ""))
    if status.seccomp:
        _apply_seccomp(policy)
        applied.append("seccomp: no exec, fork, sockets, IPC, ptrace, or signals and limits on others; "
                       "no file locks, leases, file watches, larger pipes, memfd or POSIX timers")
    return applied


# What a confined child may hold of what the kernel keeps for it. Descriptors: the student's child
# holds 5 when confined, the runners under 20 (measured: tests/engine/test_kernel_state.py); each
# pipe is two of them and, F_SETPIPE_SZ denied, at most 64 KiB of buffers. Queued signals: what
# kill() sends is never refused (the kernel overrides this limit for it); sigqueue() and POSIX
# timers are counted.
MAX_FILES = 64
MAX_FILES_WITH_A_DEVICE = 1024  # a GPU driver opens its device nodes and event descriptors as it goes
MAX_QUEUED_SIGNALS = 16
MAX_THREADS = 512


def _limit_kernel_state(policy: Policy) -> str:
    """RLIMIT_NOFILE, RLIMIT_SIGPENDING and RLIMIT_MSGQUEUE, hard; never below what is open now."""
    highest = max((fd for fd in range(world.max_fd()) if _is_open(fd)), default=2)
    files = max(MAX_FILES_WITH_A_DEVICE if policy.devices else MAX_FILES, highest + 17)
    resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    resource.setrlimit(resource.RLIMIT_SIGPENDING, (MAX_QUEUED_SIGNALS, MAX_QUEUED_SIGNALS))
    resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
    return f"at most {files} descriptors, {MAX_QUEUED_SIGNALS} queued signals, no message queues"


def _is_open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


_SYS_LANDLOCK_CREATE_RULESET, _SYS_LANDLOCK_RESTRICT_SELF = 444, 446  # the same on every architecture
_LANDLOCK_ACCESS_NET_ALL = 0x1 | 0x2  # BIND_TCP, CONNECT_TCP (ABI 4)
_LANDLOCK_SCOPE_ALL = 0x1 | 0x2  # ABSTRACT_UNIX_SOCKET, SIGNAL (ABI 6)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


def _apply_landlock_scopes(abi: int) -> str:
    """A second Landlock layer with what the binding cannot express: no TCP (ABI 4) and, from
    ABI 6, signals (kill, and fcntl's F_SETOWN) and abstract unix sockets scoped to this
    process's own domain. Returns what it added."""
    if abi < 4:
        return ""
    attr = _RulesetAttr(0, _LANDLOCK_ACCESS_NET_ALL, _LANDLOCK_SCOPE_ALL if abi >= LANDLOCK_SCOPES_ABI else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= LANDLOCK_SCOPES_ABI else 16  # older kernels know 2 fields
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(_SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), f"Landlock would not scope this process: {os.strerror(ctypes.get_errno())}")
    try:
        if libc.syscall(_SYS_LANDLOCK_RESTRICT_SELF, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), f"Landlock would not scope this process: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)
    return "no TCP" + ("; signals and abstract sockets only within itself" if abi >= LANDLOCK_SCOPES_ABI else "")


def _landlock_rules(policy: Policy, abi: int):
    from landlock import FSAccess, Ruleset

    ruleset = Ruleset()  # handles every access right the kernel knows: all denied unless allowed
    read_tree = FSAccess.READ_FILE | FSAccess.READ_DIR
    for path in readable_system_paths():
        ruleset.allow(path, rules=read_tree if os.path.isdir(path) else FSAccess.READ_FILE)
    ruleset.allow(policy.private_dir, rules=read_tree)
    for path in policy.extra_readable:
        if os.path.exists(path):
            ruleset.allow(path, rules=read_tree if os.path.isdir(path) else FSAccess.READ_FILE)
    for path in policy.writable_files:
        ruleset.allow(path, rules=FSAccess.READ_FILE | FSAccess.WRITE_FILE)
    device_rights = FSAccess.READ_FILE | FSAccess.WRITE_FILE
    if abi >= 5:
        device_rights |= FSAccess.IOCTL_DEV
    ruleset.allow("/dev/null", rules=FSAccess.READ_FILE | FSAccess.WRITE_FILE)
    for path in ("/dev/urandom", "/dev/random"):
        if os.path.exists(path):
            ruleset.allow(path, rules=FSAccess.READ_FILE)
    for path in policy.devices:
        if os.path.exists(path):
            ruleset.allow(path, rules=device_rights)
    return ruleset


# System calls an untrusted child never needs, from a review of the whole x86-64 table (Linux 6.18):
# everything that starts a program or a process, talks to anything outside the process, acts on
# another process or on the system, or changes what Landlock cannot see. The filter allows the
# rest (memory, files through Landlock, time, its own signals and limits), so that an update of
# glibc, Python, numpy or TVM that takes another route to the same thing does not break grading.
_DENIED = (
    # new programs and processes (threads are clone() with CLONE_THREAD, handled below)
    "execve", "execveat", "fork", "vfork",
    # the network, and every other kind of socket
    "socket", "socketpair",
    # other processes: their memory, their identity, their scheduling and their lives
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "tkill", "kcmp", "process_madvise", "process_mrelease", "migrate_pages",
    # leaving its process group, which is how the grader kills it and all it holds
    "setpgid", "setsid",
    # System V and POSIX IPC: objects that need no path (Landlock does not see them) and outlive
    # the process that made them, holding memory that no limit of its own counts
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl",
    "semget", "semop", "semtimedop", "semctl",
    "mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr",
    # file metadata, which Landlock does not cover
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "utime", "utimes", "utimensat", "futimesat", "name_to_handle_at", "open_by_handle_at",
    "setxattrat", "removexattrat", "file_setattr",
    # the kernel's bigger levers
    "mount", "umount2", "unshare", "setns", "chroot", "pivot_root", "bpf", "perf_event_open",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key",
    "request_key", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "mknod", "mknodat",
    "fanotify_init", "move_mount", "open_tree", "fsopen", "fsmount", "fspick", "fsconfig", "mount_setattr",
    "open_tree_attr", "statmount", "listmount", "syslog", "uselib", "lookup_dcookie", "vhangup",
    "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
    "iopl", "ioperm", "lsm_set_self_attr", "nfsservctl",
    # kernel state on the machine's own files (seen at their real inodes) or outside every limit of
    # the child's: locks and leases stall or starve other processes that open the same files
    # (a write lease, up to lease-break-time); watches are counted per user of the machine;
    # memfd pages and POSIX timers are kernel memory that RLIMIT_AS does not count
    "flock", "inotify_init", "inotify_init1", "inotify_add_watch", "fanotify_mark",
    "memfd_create", "memfd_secret", "timer_create",
)
# Newer than some libseccomp releases know by name (Linux 6.8-6.17): their x86-64 numbers.
_X86_64_NUMBERS = {"statmount": 457, "listmount": 458, "lsm_set_self_attr": 460, "setxattrat": 463,
                   "removexattrat": 466, "open_tree_attr": 467, "file_setattr": 469}
_CLONE_THREAD = 0x00010000
# ioctl requests that push keystrokes into a terminal or make another process a signal's owner
_TIOCSTI, _TIOCLINUX, _TIOCSPGRP, _TIOCSCTTY, _TIOCCONS = 0x5412, 0x541C, 0x5410, 0x540E, 0x541D
_FIOSETOWN, _SIOCSPGRP = 0x8901, 0x8902
# fcntl commands that name another process as the one to signal (SIGIO, or any signal by F_SETSIG)
_F_SETOWN, _F_SETSIG, _F_SETOWN_EX = 8, 10, 15
# fcntl commands that hold state on a file that other processes open too, or grow a pipe:
# F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW (POSIX locks: besides stalling others, one lock per
# byte range is kernel memory no limit counts), F_SETLEASE, F_NOTIFY (dnotify), F_SETPIPE_SZ.
# F_GETLK and F_OFD_GETLK only read, and stay.
_F_HOLDING = (6, 7, 37, 38, 1024, 1026, 1031)


def _apply_seccomp(policy: Policy) -> None:
    import pyseccomp as seccomp

    deny = seccomp.ERRNO(errno.EPERM)
    rules = seccomp.SyscallFilter(defaction=seccomp.ALLOW)
    for name in _DENIED:
        _add(rules, deny, name)
    # clone() only for threads (and only where threads are allowed); clone3's flags sit in
    # memory a filter cannot read, so it answers ENOSYS and the C library falls back to clone().
    _add(rules, seccomp.ERRNO(errno.ENOSYS), "clone3")
    if policy.threads:
        _add(rules, deny, "clone", seccomp.Arg(0, seccomp.MASKED_EQ, _CLONE_THREAD, 0))
    else:
        _add(rules, deny, "clone")
    # Signals only to itself (os.kill(os.getpid(), ...), raise(), abort()): not to its group (0),
    # not to every process it may signal (-1), not to any other pid.
    pid = os.getpid()
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        _add(rules, deny, name, seccomp.Arg(0, seccomp.NE, pid))
    # Limits, priorities and CPU placement of itself only (0 is "this process" to each of them;
    # the C library's getrlimit and setrlimit are prlimit64(0, ...)).
    for name in ("prlimit64", "sched_setaffinity", "sched_setparam", "sched_setscheduler", "sched_setattr",
                 "move_pages", "get_robust_list"):
        _add(rules, deny, name, seccomp.Arg(0, seccomp.NE, 0))
    for name in ("setpriority", "ioprio_set"):  # (which, who, ...): who 0 is the caller
        _add(rules, deny, name, seccomp.Arg(1, seccomp.NE, 0))
    # Both take their command as a 32-bit int: the register's upper half must not hide it.
    for command in (_F_SETOWN, _F_SETSIG, _F_SETOWN_EX, *_F_HOLDING):
        _add(rules, deny, "fcntl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, command))
    for request in (_TIOCSTI, _TIOCLINUX, _TIOCSPGRP, _TIOCSCTTY, _TIOCCONS, _FIOSETOWN, _SIOCSPGRP):
        _add(rules, deny, "ioctl", seccomp.Arg(1, seccomp.MASKED_EQ, 0xFFFFFFFF, request))
    rules.load()


def _add(rules, action, name: str, *args) -> None:
    import platform

    import pyseccomp as seccomp

    syscall: str | int = name
    if seccomp.resolve_syscall(seccomp.system_arch(), name) < 0:
        if platform.machine() != "x86_64" or name not in _X86_64_NUMBERS:
            return  # neither this libseccomp nor this table knows it: this kernel may not have it
        syscall = _X86_64_NUMBERS[name]
    try:
        rules.add_rule(action, syscall, *args)
    except (RuntimeError, OSError, ValueError) as error:
        # A system call this kernel or architecture does not have cannot be made either.
        if "not found" in str(error).lower() or getattr(error, "errno", None) in (errno.EINVAL, errno.EDOM):
            return
        raise


def _short(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__
