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
from dataclasses import dataclass, field

import psutil

_POLL_S = 0.05
# What the channel accepts from a child, at most: a real trace is a few kilobytes.
MAX_MESSAGE_BYTES = 4 * 2**20
MAX_MESSAGES = 1000
# The environment an untrusted child gets: what Python, numpy and TVM need, nothing else
# (no tokens, no paths to the course's files).
SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "VIRTUAL_ENV")


@dataclass
class ChildOutcome:
    messages: list[dict] = field(default_factory=list)  # what arrived on the private channel
    returncode: int | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    output_tail: str = ""
    wall_s: float = 0.0
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

    `untrusted=True` gives the child only SAFE_ENV_KEYS of this process's environment.
    `files` are written into the child's directory before it starts (name -> text).
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
    ):
        self.module = module
        self.args = args
        self.output = _TailBuffer(output_limit)
        self.messages: list[dict] = []
        self.stages_reached: dict[str, float] = {}  # stage name -> when its message arrived
        self.channel_overflow = False
        base = {k: v for k, v in os.environ.items() if k in SAFE_ENV_KEYS} if untrusted else dict(os.environ)
        self.env = {**base, **(env or {})}
        self._workdir = tempfile.TemporaryDirectory(prefix="tvm-course-")
        self.workdir = self._workdir.name
        for name, text in (files or {}).items():
            with open(os.path.join(self.workdir, name), "w", encoding="utf-8") as handle:
                handle.write(text)
        self._threads: list[threading.Thread] = []
        self.proc: subprocess.Popen | None = None
        self.started = 0.0
        self._closed = False

    def start(self) -> "Child":
        read_fd, write_fd = os.pipe()
        self.env["PYTHONPATH"] = os.pathsep.join(filter(None, [_package_root(), self.env.get("PYTHONPATH")]))
        self.env["PYTHONDONTWRITEBYTECODE"] = "1"
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.module, str(write_fd), *self.args],
            pass_fds=(write_fd,),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            cwd=self._workdir.name,
            env=self.env,
            start_new_session=True,
        )
        os.close(write_fd)
        self._spawn(self._read_output, self.proc.stdout)
        self._spawn(self._read_channel, os.fdopen(read_fd, "rb"))
        return self

    def send(self, message: dict) -> None:
        """One JSON line on the child's stdin (it may already be gone: that shows in wait())."""
        try:
            self.proc.stdin.write((json.dumps(message) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass

    def wait(
        self,
        timeout_s: float,
        memory_mb: float | None = None,
        *,
        clock_starts_at: str | None = None,
        startup_s: float = 120.0,
    ) -> ChildOutcome:
        """Wait for the child to finish; kill it at its deadline or past its memory allowance.

        With `clock_starts_at`, the `timeout_s` clock starts when the child reports that stage
        (a {"kind": "stage", "stage": ...} message), so its start-up (an interpreter, TVM) is not
        counted against it; start-up itself may take at most `startup_s`.
        """
        outcome = ChildOutcome()
        deadline = time.monotonic() + (startup_s if clock_starts_at else timeout_s)
        clock_started = clock_starts_at is None
        try:
            process = psutil.Process(self.proc.pid)
        except psutil.Error:
            process = None
        while self.proc.poll() is None:
            if self.channel_overflow:
                break
            if not clock_started and clock_starts_at in self.stages_reached:
                clock_started = True
                deadline = self.stages_reached[clock_starts_at] + timeout_s
            if time.monotonic() > deadline:
                outcome.timed_out = True
                break
            rss = _tree_rss_mb(process)
            outcome.peak_rss_mb = max(outcome.peak_rss_mb, rss)
            if memory_mb is not None and rss > memory_mb:
                outcome.memory_exceeded = True
                break
            time.sleep(_POLL_S)
        self.close()
        outcome.returncode = self.proc.returncode
        outcome.wall_s = time.monotonic() - self.started
        outcome.messages = list(self.messages)
        outcome.output_tail = self.output.text()
        outcome.channel_overflow = self.channel_overflow
        return outcome

    def wait_for_stage(self, stage: str, timeout_s: float) -> bool:
        """True once the child has reported `stage`; False if it ended or `timeout_s` passed first."""
        deadline = time.monotonic() + timeout_s
        while stage not in self.stages_reached:
            if self.proc.poll() is not None or time.monotonic() > deadline:
                return stage in self.stages_reached
            time.sleep(0.01)
        return True

    def close(self) -> None:
        """Kill the child's process group, reap it, and remove its directory. Safe to call twice."""
        if self._closed or self.proc is None:
            return
        self._closed = True
        self.kill()
        self.proc.wait()
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._workdir.cleanup()

    def kill(self) -> None:
        """End the child and everything in its process group."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for stream in (self.proc.stdin,):
            try:
                stream.close()
            except OSError:
                pass

    def _spawn(self, target, stream) -> None:
        thread = threading.Thread(target=target, args=(stream,), daemon=True)
        thread.start()
        self._threads.append(thread)

    def _read_output(self, stream) -> None:
        for chunk in iter(lambda: stream.read1(65536), b""):
            self.output.feed(chunk)

    def _read_channel(self, stream) -> None:
        """Collect the child's messages; stop (and have it killed) if it sends too much."""
        with stream:
            while True:
                line = stream.readline(MAX_MESSAGE_BYTES + 1)
                if not line:
                    return
                if len(line) > MAX_MESSAGE_BYTES or len(self.messages) >= MAX_MESSAGES:
                    self.channel_overflow = True
                    return
                try:
                    message = json.loads(line)
                except Exception:  # bad JSON, or JSON nested deep enough to exhaust the parser
                    message = {"kind": "garbled"}
                if not isinstance(message, dict):
                    message = {"kind": "garbled"}
                if message.get("kind") == "stage" and isinstance(message.get("stage"), str):
                    self.stages_reached.setdefault(message["stage"], time.monotonic())
                self.messages.append(message)


def _tree_rss_mb(process) -> float:
    if process is None:
        return 0.0
    try:
        procs = [process, *process.children(recursive=True)]
    except psutil.Error:
        return 0.0
    total = 0
    for proc in procs:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total / 2**20


def _package_root() -> str:
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def open_channel(fd_arg: str):
    """In a child: the private channel to the parent, and a function that sends one message."""
    channel = os.fdopen(int(fd_arg), "w", buffering=1)

    def send(message: dict) -> None:
        channel.write(json.dumps(message) + "\n")
        channel.flush()

    return send


def limit_memory(extra_mb: int) -> None:
    """In a child: cap its address space at what it uses now plus `extra_mb`."""
    import resource

    current = psutil.Process().memory_info().vms
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
