"""Child processes for untrusted and crash-prone work, with a private channel back.

A child reports only through a pipe whose descriptor the parent hands it (JSON, one object a
line); its stdout and stderr are just output, of which a bounded tail is kept. So printing
something that looks like a grader result changes nothing. A child that hangs is killed at
its deadline; one that grows past its memory allowance is killed too; its whole process
group goes with it, so anything it forked does not outlive the grading.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

import psutil

from .confine import new_identity
from .runqueue import RunQueueClock, deadline_state
from .world import WAITER_NAME, hand_over, max_fd
from ..errors import TvmCourseError

_POLL_S = 0.05
# A child that waited for a CPU this many times its limit is starved: the machine is too busy to
# grade on, and the grading is a grader fault (pending) rather than the student's timeout. A child
# given a share s of a core reaches it before using its limit's CPU when (1 - s) / s >= this, so
# 9 means under a tenth of a core: at load 6 on 2 cores a session still gets about 0.3 of one
# (at 3, a quarter, an infinite loop at load 8.6 was judged starved instead of timed out).
STARVED_AFTER = 9.0
# The environment an untrusted child gets: what Python, numpy and TVM need, nothing else
# (no tokens, no paths to the course's files), and the grader's own switch for namespaces.
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV",
                 "TVM_COURSE_NAMESPACES")


@dataclass(frozen=True)
class ChannelLimits:
    """What a child may send on its channel in all, however it splits it into messages.

    Past any limit the child is killed at once and everything it sent is dropped, so the
    grader's memory stays bounded whatever a child does.
    """

    total_bytes: int
    messages: int
    depth: int = 16  # JSON nesting; a real trace nests 4 deep


# A trace is a few kilobytes; the student's child sends a stage message, then a trace or an error.
UNTRUSTED_CHANNEL = ChannelLimits(total_bytes=2**20, messages=16)
# Our own children's reports (stages, checks, timings): kilobytes too, with room to spare.
TRUSTED_CHANNEL = ChannelLimits(total_bytes=16 * 2**20, messages=256, depth=32)


class ChannelOverflow(ValueError, TvmCourseError):
    """A message broke the channel's limits."""


def parse_message(line: bytes, depth: int) -> dict:
    """One channel message: a JSON object nested at most `depth` deep, with finite numbers only."""
    try:
        message = json.loads(line, parse_constant=_no_constant)
    except RecursionError:
        raise ChannelOverflow("nested deeper than the channel allows") from None
    except (ValueError, UnicodeDecodeError):
        return {"kind": "garbled"}
    if not isinstance(message, dict):
        return {"kind": "garbled"}
    if _depth(message) > depth:
        raise ChannelOverflow("nested deeper than the channel allows")
    return message


def _no_constant(name: str):
    raise ValueError(f"{name} is not a number the channel accepts")


def _depth(value) -> int:
    """How deep lists and objects nest in `value`, without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        if isinstance(node, (list, dict)):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


@dataclass
class ChildOutcome:
    messages: list[dict] = field(default_factory=list)  # what arrived on the private channel
    returncode: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    output_tail: str = ""
    # The machine kept the child waiting for a CPU past its backstop (engine/runqueue.py): not its
    # own timeout, a grader fault.
    starved: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0  # CPU time of the child's tree since its clock started
    runqueue_wait_s: float = 0.0  # the longest any of its tasks waited for a CPU since then
    peak_rss_mb: float = 0.0
    channel_overflow: bool = False  # the child sent more than the channel accepts, and was stopped

    @property
    def signal_name(self) -> str | None:
        if self.returncode is not None and self.returncode < 0:
            try:
                return signal.Signals(-self.returncode).name
            except ValueError:
                return f"signal {-self.returncode}"
        return None

    def last(self, kind: str) -> dict | None:
        """The last channel message of a kind ('result', 'stage', ...)."""
        return next((m for m in reversed(self.messages) if m.get("kind") == kind), None)


class _TailBuffer:
    """Keeps the last `limit` characters of a stream, however much is written."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.data += chunk
        keep = self.limit * 4  # UTF-8 is at most four bytes a character
        if len(self.data) > 2 * keep:
            del self.data[:-keep]

    def text(self) -> str:
        text = self.data.decode("utf-8", errors="replace")[-self.limit :]
        if self.total > len(self.data):
            text = f"[... {self.total - len(self.data)} earlier bytes of output dropped ...]\n" + text
        return text


class Child:
    """`python -m MODULE CHANNEL_FD ARGS...` in its own session and temporary directory.

    `untrusted=True` gives the child only SAFE_ENV_KEYS of this process's environment (and its
    own directory as HOME and TMPDIR), and the tighter channel limits. `files` are written into
    the child's directory before it starts (name -> text). `scratch` is the folder the child's
    directory is made in (the grading's own, which the grader removes however the grading ends).
    """

    def __init__(
        self,
        module: str,
        args: list[str],
        *,
        output_limit: int = 2000,
        env: dict[str, str] | None = None,
        untrusted: bool = False,
        files: dict[str, str] | None = None,
        channel: ChannelLimits | None = None,
        scratch: str | None = None,
    ):
        self.module = module
        self.limits = channel or (UNTRUSTED_CHANNEL if untrusted else TRUSTED_CHANNEL)
        self.args = args
        self.output = _TailBuffer(output_limit)
        self.messages: list[dict] = []
        self.stages_reached: dict[str, float] = {}  # stage name -> when its message arrived
        self.channel_overflow = False
        self._workdir = tempfile.TemporaryDirectory(prefix="tvm-course-", dir=scratch)
        self.workdir = self._workdir.name
        # Under a root grader an untrusted child becomes a uid of its own (world.py), which owns
        # its directory and what the grader puts there before the child is started or told anything.
        self.identity = new_identity() if untrusted else None
        base = dict(os.environ)
        if untrusted:
            base = {k: v for k, v in os.environ.items() if k in SAFE_ENV_KEYS} | {"HOME": self.workdir, "TMPDIR": self.workdir}
        self.env = {**base, **(env or {})}
        for name, text in (files or {}).items():
            with open(os.path.join(self.workdir, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        self._threads: list[threading.Thread] = []
        self._channel_reader: threading.Thread | None = None
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self._closed = False

    @property
    def process(self) -> subprocess.Popen:
        """The started child's process (a fork's stands in for a Popen: _ForkedProcess)."""
        if self.proc is None:
            raise RuntimeError("the child was not started")
        return self.proc

    def start(self) -> "Child":
        hand_over(self.workdir, self.identity)
        read_fd, write_fd = os.pipe()
        self.started = time.monotonic()
        try:
            self.proc = self._launch(write_fd)
        except BaseException:  # no child (a fork server that refused): the caller may start another
            os.close(read_fd)
            os.close(write_fd)
            raise
        os.close(write_fd)
        self._spawn(self._read_output, self.proc.stdout)
        self._channel_reader = self._spawn(self._read_channel, os.fdopen(read_fd, "rb"))
        return self

    def _launch(self, channel_fd: int):
        self.env.update(interpreter_env(self.env))
        return subprocess.Popen(
            [sys.executable, "-m", self.module, str(channel_fd), *self.args],
            pass_fds=(channel_fd,),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self._workdir.name,
            env=self.env,
            start_new_session=True,
        )

    def send(self, message: dict) -> None:
        """One JSON line on the child's stdin (it may already be gone: that shows in wait())."""
        self.send_line(json.dumps(message))

    def send_line(self, text: str) -> None:
        try:
            hand_over(self.workdir, self.identity)  # what the grader put there since (libraries, programs)
            stdin = self.process.stdin
            if stdin is not None:
                stdin.write((text + "\n").encode())
                stdin.flush()
        except (BrokenPipeError, OSError, ValueError):  # ValueError: stdin already closed
            pass

    def last_message(self, kind: str) -> dict | None:
        """The last message of a kind that has arrived so far."""
        return next((m for m in reversed(list(self.messages)) if m.get("kind") == kind), None)

    def wait(
        self,
        timeout_s: float,
        memory_mb: float | None = None,
        *,
        clock_starts_at: str | None = None,
        startup_s: float = 120.0,
        starved_after: float = STARVED_AFTER,
    ) -> ChildOutcome:
        """Wait for the child to finish; kill it at its deadline or past its memory allowance.

        With `clock_starts_at`, the `timeout_s` clock starts when the child reports that stage
        (a {"kind": "stage", "stage": ...} message), so its start-up (an interpreter, TVM) is not
        counted against it; start-up itself may take at most `startup_s`. Either limit counts the
        child's own time, not its wait for a CPU; a child that waited past STARVED_AFTER times its
        limit ends `starved` (engine/runqueue.py).
        """
        outcome = ChildOutcome()
        # The limit is the child's own time: its elapsed time less its wait for a CPU, which a
        # busy machine, not the child, decides (engine/runqueue.py).
        clock, phase_start = RunQueueClock(), self.started
        limit_s = startup_s if clock_starts_at else timeout_s
        clock_started = clock_starts_at is None
        try:
            process = psutil.Process(self.process.pid)
        except psutil.Error:
            process = None
        try:
            while self.process.poll() is None:
                if self.channel_overflow:
                    break
                procs = _tree(process)
                clock.sample(proc.pid for proc in procs)
                if not clock_started and clock_starts_at in self.stages_reached:
                    clock_started = True
                    phase_start, limit_s = self.stages_reached[clock_starts_at], timeout_s
                    clock.restart()
                state = deadline_state(clock, time.monotonic() - phase_start, limit_s, starved_after * limit_s)
                if state:
                    outcome.timed_out, outcome.starved = state == "timed_out", state == "starved"
                    break
                rss = _tree_rss_mb(procs)
                outcome.peak_rss_mb = max(outcome.peak_rss_mb, rss)
                if memory_mb is not None and rss > memory_mb:
                    outcome.memory_exceeded = True
                    break
                time.sleep(_POLL_S)
        except BaseException:  # the grader interrupted: the child goes with it, not later
            self.close()
            raise
        outcome.cpu_s, outcome.runqueue_wait_s = clock.cpu_s, clock.wait_s
        self.close()
        outcome.returncode = self.process.returncode
        outcome.wall_s = time.monotonic() - self.started
        outcome.messages = [] if self.channel_overflow else list(self.messages)
        outcome.output_tail = self.output.text()
        outcome.channel_overflow = self.channel_overflow
        return outcome

    def wait_for_stage(self, stage: str, timeout_s: float) -> bool:
        """True once the child has reported `stage`; False if it ended or `timeout_s` passed first."""
        return self.wait_for_message(lambda: stage in self.stages_reached, timeout_s)

    def wait_for_message(self, arrived, timeout_s: float) -> bool:
        """True once `arrived()` is; False if the child ended or `timeout_s` passed first."""
        deadline = time.monotonic() + timeout_s
        while not arrived():
            if self.process.poll() is not None:
                # What the child wrote before it ended may still be in the pipe, its reader not yet
                # scheduled (a loaded machine): read to the channel's end before saying it never came.
                self._drain_channel()
                return bool(arrived())
            if time.monotonic() > deadline:
                return bool(arrived())
            time.sleep(0.01)
        return True

    def _drain_channel(self, timeout_s: float = 5.0) -> None:
        """Wait (bounded) for the channel's reader to reach the end of what an ended child wrote;
        a descendant that still holds the channel open only costs the bound."""
        if self._channel_reader is not None:
            self._channel_reader.join(timeout=timeout_s)

    def close(self) -> None:
        """Kill the child's process group, reap it, and remove its directory. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        if self.proc is not None:
            self.kill()
            self.proc.wait()
            for thread in self._threads:
                thread.join(timeout=2.0)
        self._workdir.cleanup()

    def kill(self) -> None:
        """End the child and everything in its process group (and the child itself, should it
        have left the group: until it is reaped its pid is still its own)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.returncode is None:
            try:
                os.kill(self.proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def _spawn(self, target, stream) -> threading.Thread:
        thread = threading.Thread(target=target, args=(stream,), daemon=True)
        thread.start()
        self._threads.append(thread)
        return thread

    def _read_output(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.output.feed(chunk)

    def _read_channel(self, stream) -> None:
        """Collect the child's messages; past the channel's limits, kill it and drop them all."""
        budget = self.limits.total_bytes
        with stream:
            while True:
                line = stream.readline(budget + 1)
                if not line:
                    return
                budget -= len(line)
                try:
                    if budget < 0 or len(self.messages) >= self.limits.messages:
                        raise ChannelOverflow("more than the channel allows")
                    message = parse_message(line, self.limits.depth)
                except ChannelOverflow:
                    self.channel_overflow = True
                    self.kill()
                    self.messages.clear()
                    return
                if message.get("kind") == "stage" and isinstance(message.get("stage"), str):
                    self.stages_reached.setdefault(message["stage"], time.monotonic())
                self.messages.append(message)


class ForkedChild(Child):
    """A Child that is a fork of this process running `target(send)`, instead of a new interpreter.

    For a child that needs what this process has already imported (TVM takes most of a second
    to import): fork before anything holds threads of our own or a GPU context. The fork keeps
    only its channel, stdin and stdout (every other descriptor is closed first thing), works
    in its own directory with only SAFE_ENV_KEYS of the environment, and stays in this
    process's group, so whatever ends this process's group ends it too.
    """

    def __init__(self, target, **kwargs):
        super().__init__("(fork)", [], untrusted=True, **kwargs)
        self.target = target

    def kill(self) -> None:
        """It cannot start processes of its own (it confines itself): it is one process, or one
        waiter and its world's process 1, which dies with the waiter (world.py)."""
        if self.proc is None or self.proc.returncode is not None:  # reaped: its pid may be another's
            return
        try:
            os.kill(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def _launch(self, channel_fd: int):
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            code = 70
            try:
                self.target(_channel_sender(enter_fork(stdin_r, out_w, channel_fd, self.workdir, self.env)))
                code = 0
            except BaseException:
                import traceback

                traceback.print_exc()
            finally:
                os._exit(code)
        os.close(stdin_r)
        os.close(out_w)
        return _ForkedProcess(pid, os.fdopen(stdin_w, "wb"), os.fdopen(out_r, "rb"))


class _ForkedProcess:
    """The parts of subprocess.Popen that Child uses, for a fork."""

    def __init__(self, pid: int, stdin, stdout):
        self.pid, self.stdin, self.stdout = pid, stdin, stdout
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            _, status = os.waitpid(self.pid, 0)
            self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


CHANNEL_FD = 3  # where a forked child finds its channel


def enter_fork(stdin: int, output: int, channel: int, cwd: str, env: dict[str, str]) -> int:
    """In a fresh fork: stdin, stdout and stderr from the given descriptors, the channel at
    CHANNEL_FD and no other descriptor of the parent open, `cwd` and exactly `env`. Returns
    CHANNEL_FD. (0-2 come first: the parent's own are open, so `channel` is not among them.)"""
    os.dup2(stdin, 0)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.dup2(channel, CHANNEL_FD)
    os.closerange(CHANNEL_FD + 1, max_fd())
    os.chdir(cwd)
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in env.items()})
    tempfile.tempdir = None  # found again from the new TMPDIR, not the parent's
    sys.stdin = os.fdopen(0, "r", closefd=False)
    sys.stdout = sys.stderr = os.fdopen(1, "w", buffering=1, closefd=False)
    return CHANNEL_FD


def interpreter_env(env: Mapping[str, str]) -> dict[str, str]:
    """What a new interpreter running the grader needs on top of `env`: the package on its
    path, and no bytecode written anywhere."""
    return {"PYTHONPATH": os.pathsep.join(filter(None, [_package_root(), env.get("PYTHONPATH")])),
            "PYTHONDONTWRITEBYTECODE": "1"}



def _tree(process) -> list:
    """A process and its descendants (none once it is gone)."""
    if process is None:
        return []
    try:
        return [process, *process.children(recursive=True)]
    except psutil.Error:
        return []


def _tree_rss_mb(procs) -> float:
    """Resident memory of a process tree, less each world's waiter (a fork that only waits: its
    pages are its child's, counted there)."""
    total = 0
    for proc in procs:
        try:
            if proc.name() == WAITER_NAME and len(proc.children()) == 1:
                continue  # a confined child may take this name, but can never have a child
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def open_channel(fd_arg: str):
    """In a child: the private channel to the parent, and a function that sends one message."""
    return _channel_sender(int(fd_arg))


def _channel_sender(fd: int):
    channel = os.fdopen(fd, "w", buffering=1)

    def send(message: dict) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    return send


def limit_memory(extra_mb: int) -> None:
    """In a child: cap its address space at what it uses now plus `extra_mb`."""
    import resource

    with open("/proc/self/statm", encoding="ascii") as statm:  # not psutil's pid: in a world it is 1
        current = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    limit = current + extra_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def make_undumpable() -> None:
    """In a trusted child, first thing: other processes of the same user may not open its
    /proc/PID/fd (its private channel) or ptrace it. Linux only; elsewhere a no-op."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_DUMPABLE = 4
        libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
