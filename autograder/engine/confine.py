"""Confinement for the grader's untrusted children, from the kernel's own mechanisms.

Two processes run code the grader does not trust: the student's `schedule(sch)` and the
compiled schedule. Just before that code runs, each child confines itself for good:

- limits (setrlimit): no new processes for the student's child; no file can be written
  beyond what the grader prepared (RLIMIT_FSIZE); no core dumps.
- a user of its own: run as root (CI, a grading container), the child becomes `nobody`.
- Landlock (the `landlock` binding): the file system shrinks to what Python, numpy and TVM
  need, read-only, plus the child's private directory; nothing of the course, the checkout,
  other submissions, the host's /tmp or /dev/shm. Writing is allowed to named files only.
- seccomp (the `pyseccomp` binding to libseccomp): no exec, no fork, no sockets (so no
  network), no ptrace or reading other processes' memory, no signals to other processes,
  no changing files' owners, modes or extended attributes (which Landlock does not cover),
  no namespaces, mounts, BPF or io_uring.

Both bindings call the kernel directly (no helper binary, no privileges), so a student's
Linux laptop needs nothing beyond `pip install`. Where a mechanism is missing (another OS,
an old kernel, no libseccomp), `available()` says which, the child applies what it can,
and the callers decide: a self-check goes on and says so once; a class run refuses.
"""
from __future__ import annotations

import errno
import os
import resource
import sys
import sysconfig
from dataclasses import dataclass

UNPRIVILEGED_ID = 65534  # "nobody" on Debian and most Linux systems


@dataclass(frozen=True)
class Policy:
    """What one child may do once confined."""

    private_dir: str  # readable (and listable) by the child; its own directory
    writable_files: tuple[str, ...] = ()  # existing files it may write (not grow past max_file_bytes)
    max_file_bytes: int = 0  # RLIMIT_FSIZE: 0 means it can write no byte to any file
    threads: bool = False  # the compiled code's runtime may start threads; student code may not
    devices: tuple[str, ...] = ()  # device nodes it may open read-write (a GPU's)
    extra_readable: tuple[str, ...] = ()  # what a GPU driver reads besides (/proc/driver/nvidia, ...)


@dataclass(frozen=True)
class Status:
    landlock_abi: int  # 0: not available
    seccomp: bool
    reason: str  # why something is missing ("" when all is there)

    @property
    def complete(self) -> bool:
        return self.landlock_abi >= 1 and self.seccomp

    def missing(self) -> list[str]:
        gaps = []
        if self.landlock_abi < 1:
            gaps.append("file-system confinement (Landlock)")
        if not self.seccomp:
            gaps.append("system-call filtering (seccomp: no exec, no network)")
        return gaps


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
    return Status(max(abi, 0), seccomp, "; ".join(reasons))


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
    checkout = os.path.dirname(package)
    if not os.path.isfile(os.path.join(checkout, "pyproject.toml")):
        # Installed from the wheel (the student edition): the package's parent is site-packages,
        # which numpy and TVM are read from, not a checkout.
        return sorted(p for p in paths if os.path.exists(p))
    # The interpreter's prefix may be the checkout's own .venv: allow its lib/, not the checkout.
    return sorted(p for p in paths if os.path.exists(p) and os.path.realpath(p) != os.path.realpath(checkout)
                  and not _contains(os.path.realpath(p), os.path.realpath(checkout)))


def _contains(outer: str, inner: str) -> bool:
    """True when `outer` is `inner` or a folder above it (allowing it would expose `inner`)."""
    return inner == outer or inner.startswith(outer.rstrip("/") + "/")


def confine(policy: Policy) -> list[str]:
    """In a child, just before untrusted code runs: apply everything available, for good.

    Returns what was applied, for the record. Must run after the child has imported what it
    needs (afterwards it may read nothing else). The Landlock rules are built while the child
    can still open the paths they name, and take effect after it has given up its user.
    """
    applied = []
    status = available()
    landlock_rules = _landlock_rules(policy, status.landlock_abi) if status.landlock_abi >= 1 else None
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (policy.max_file_bytes, policy.max_file_bytes))
    if not policy.threads:
        # Counted per user: with this process alone at the limit, fork and thread creation fail.
        resource.setrlimit(resource.RLIMIT_NPROC, (1, 1))
        applied.append("no new processes or threads")
    if os.geteuid() == 0:
        os.setgroups([])
        os.setgid(UNPRIVILEGED_ID)
        os.setuid(UNPRIVILEGED_ID)
        applied.append("running as nobody")
    if landlock_rules is not None:
        landlock_rules.apply()
        applied.append(f"Landlock ABI {status.landlock_abi}: system files read-only, nothing else")
    if status.seccomp:
        _apply_seccomp(policy)
        applied.append("seccomp: no exec, fork, sockets, ptrace or signals to others")
    return applied


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


# System calls an untrusted child never needs. The filter allows everything else, so that an
# update of Python, numpy or TVM does not break grading; what matters is closed here.
_DENIED = (
    # new programs and processes (threads are clone() with CLONE_THREAD, handled below)
    "execve", "execveat", "fork", "vfork",
    # the network, and every other kind of socket
    "socket", "socketpair",
    # other processes
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_open", "pidfd_getfd",
    "pidfd_send_signal", "tkill", "kcmp", "process_madvise",
    # leaving its process group, which is how the grader kills it and all it holds
    "setpgid", "setsid",
    # file metadata, which Landlock does not cover
    "chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown", "fchownat",
    "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
    "utime", "utimes", "utimensat", "futimesat", "name_to_handle_at", "open_by_handle_at",
    # the kernel's bigger levers
    "mount", "umount2", "unshare", "setns", "chroot", "pivot_root", "bpf", "perf_event_open",
    "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register", "keyctl", "add_key",
    "request_key", "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "mknod", "mknodat",
    "fanotify_init", "move_mount", "open_tree", "fsopen", "fsmount", "fspick", "fsconfig", "mount_setattr",
    "setxattrat", "removexattrat", "open_tree_attr",
)
# Newer than some libseccomp releases know by name (Linux 6.13-6.15): their x86-64 numbers.
_X86_64_NUMBERS = {"setxattrat": 463, "removexattrat": 466, "open_tree_attr": 467}
_CLONE_THREAD = 0x00010000
_TIOCSTI, _TIOCLINUX = 0x5412, 0x541C  # push keystrokes into a terminal


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
    # Signals only to itself (os.kill(os.getpid(), ...), raise(), abort()).
    pid = os.getpid()
    for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
        _add(rules, deny, name, seccomp.Arg(0, seccomp.NE, pid))
    for request in (_TIOCSTI, _TIOCLINUX):
        _add(rules, deny, "ioctl", seccomp.Arg(1, seccomp.EQ, request))
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
