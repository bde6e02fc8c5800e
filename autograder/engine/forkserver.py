"""A warm start for the grader's children: a fork server that has imported TVM once.

Every grading needs two fresh processes (the student's, confined; the trusted evaluator, which
forks the confined runner), and a fresh interpreter spends most of a second importing TVM
before it can do anything. The fork server is one trusted process per grading process that
has done that once and then only forks: each child starts as a copy of a process that has
imported TVM, numpy and the grader, and has never seen a submission.

What keeps one submission from reaching the next:

- the server never receives a submission, a trace or a result: a request names a module, its
  arguments, an environment and a directory, and carries three descriptors (stdin, output,
  private channel); the source travels as a file in the child's own directory, as before;
- every child is a new fork of that clean state, in its own session, which confines itself
  (confine.py) exactly as a child started from scratch does; nothing a child changes in its
  memory, its modules or its directory survives it;
- the server is started with only SAFE_ENV_KEYS of the environment (no course secret), is
  undumpable (no child can ptrace it or read its descriptors), and ends with its client (its
  socket closes), killing what it started; its children die with it (PR_SET_PDEATHSIG).

The server reaps a child only when the client asks for its exit status, and signals only
children it has not reaped (whose pids, and process groups, are still theirs), so a kill never
reaches a process the kernel has since given the same number.

Usage (by the grader only): python -m autograder.engine.forkserver FD (a SOCK_SEQPACKET socket).
"""
from __future__ import annotations

import atexit
import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from ..errors import TvmCourseError
from .sandbox import CHANNEL_FD, SAFE_ENV_KEYS, Child, _ForkedProcess, enter_fork, interpreter_env, make_undumpable

# What a child would import on its own: imported once here, so a fork finds it in sys.modules.
# (student_runner.PREIMPORTED is added to it in the server.)
WARM_MODULES = (
    "numpy", "tvm", "tvm.s_tir", "tvm.tirx", "tvm.s_tir.dlight", "psutil", "landlock", "pyseccomp",
    "autograder.problems", "autograder.problems.workload", "autograder.engine.evaluate",
    "autograder.engine.student_runner", "autograder.engine.measure", "autograder.engine.checks",
    "autograder.engine.replay", "autograder.engine.peak", "autograder.engine.bench",
    "autograder.engine.runners", "autograder.engine.library_cache", "autograder.engine.confine",
    "autograder.engine.placement",
)
# Modules a child may be: the grader's two child programs, nothing else.
SERVED_MODULES = ("autograder.engine.student_runner", "autograder.engine.evaluate")
_MAX_REQUEST = 1 << 20
READY_TIMEOUT_S = 120.0


class ForkServerUnavailable(RuntimeError, TvmCourseError):
    """The server could not be started or stopped answering: the caller starts a cold child."""


# ------------------------------------------------------------------------------- the server

def serve(sock: socket.socket) -> None:
    """Answer requests until the client goes away; then end every child still alive."""
    children: set[int] = set()

    def reply(message: dict) -> None:
        sock.send(json.dumps(message).encode())

    try:
        while True:
            try:
                data, fds, _, _ = socket.recv_fds(sock, _MAX_REQUEST, 3)
            except (OSError, ConnectionError):
                return
            if not data:
                return
            try:
                request = json.loads(data)
                op = request.get("op")
                if op == "spawn":
                    pid = _spawn(request, fds)
                    children.add(pid)
                    reply({"pid": pid})
                    continue
                pid = request.get("pid")
                if pid not in children:  # never reaped ones: their pids may be another process's now
                    reply({"error": f"{pid!r} is not a child of this server"})
                elif op == "kill":
                    _kill_group(pid)
                    reply({})
                elif op == "reap":
                    returncode = _exit_status(pid)
                    if returncode is not None:
                        children.discard(pid)
                    reply({"returncode": returncode})
                else:
                    reply({"error": f"unknown request {op!r}"})
            except Exception as error:  # noqa: BLE001 - a bad request gets an answer, the server goes on
                reply({"error": f"{type(error).__name__}: {error}"})
            finally:
                for fd in fds:
                    os.close(fd)
    finally:
        for pid in children:
            _kill_group(pid)
        for pid in children:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def _spawn(request: dict, fds: list[int]) -> int:
    module, argv, env, cwd = request["module"], request["argv"], request["env"], request["cwd"]
    if module not in SERVED_MODULES:
        raise ValueError(f"this server starts only {', '.join(SERVED_MODULES)}, not {module!r}")
    if len(fds) != 3 or not all(isinstance(a, str) for a in argv) or not isinstance(env, dict) or not os.path.isdir(cwd):
        raise ValueError("a spawn request needs three descriptors, string arguments, an environment and a directory")
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 70
    try:  # the child: never returns
        die_with_parent()
        os.setsid()  # a group of its own, which the client kills whole
        stdin, output, channel = fds
        enter_fork(stdin, output, channel, cwd, env)  # closes the server's socket and the received copies too
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        sys.argv = [module, str(CHANNEL_FD), *argv]
        _reseed()
        importlib.import_module(module).main([str(CHANNEL_FD), *argv])
        code = 0
    except SystemExit as exit:
        code = exit.code if isinstance(exit.code, int) else 1
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        try:
            sys.stdout.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(code)


def _reseed() -> None:
    """Forks share the server's random state; each child draws its own (seeds the grader
    chooses are passed explicitly, so this only concerns what a child draws unasked)."""
    import random

    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _exit_status(pid: int) -> int | None:
    """The child's return code in subprocess's convention (-N: killed by signal N), reaping it;
    None while it runs."""
    info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG)
    if info is None:
        return None
    if info.si_code == os.CLD_EXITED:
        return info.si_status
    return -info.si_status


def _kill_group(pid: int) -> None:
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass


def _warm_up() -> None:
    from . import placement, world
    from .student_runner import PREIMPORTED

    for name in (*WARM_MODULES, *PREIMPORTED):
        importlib.import_module(name)
    world.supported()  # probed once; every fork inherits the answer
    placement.stack_offsets()  # measured once (this interpreter's ctypes frames); every evaluator inherits them


def die_with_parent() -> None:
    """SIGKILL this process when the thread that forked it ends (Linux's PR_SET_PDEATHSIG): only
    for a child of the single-threaded server. (The server itself is started from whichever
    thread grades first, so it ends with its client's socket instead.)"""
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> None:
    make_undumpable()  # and it ends when its client's socket closes, as the client exits or dies
    sock = socket.socket(fileno=int(argv[0]))
    started = time.perf_counter()
    _warm_up()
    sock.send(json.dumps({"ready": True, "seconds": time.perf_counter() - started}).encode())
    serve(sock)


# ------------------------------------------------------------------------------- the client

class ForkServer:
    """The client's end: starts the server, asks it for children, and signals and reaps them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._process: subprocess.Popen | None = None
        self.warm_up_s: float | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def start(self) -> "ForkServer":
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items() if k in SAFE_ENV_KEYS} | interpreter_env(os.environ)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "autograder.engine.forkserver", str(theirs.fileno())],
            pass_fds=(theirs.fileno(),), stdin=subprocess.DEVNULL, env=env, start_new_session=True,
        )
        theirs.close()
        ours.settimeout(READY_TIMEOUT_S)
        try:
            ready = json.loads(ours.recv(_MAX_REQUEST) or b"{}")
        except (OSError, ValueError) as error:
            self._abandon(ours)
            raise ForkServerUnavailable(f"the fork server did not start: {error}") from None
        if not ready.get("ready"):
            self._abandon(ours)
            raise ForkServerUnavailable("the fork server did not start (it exited while importing TVM)")
        ours.settimeout(None)
        self._sock, self.warm_up_s = ours, float(ready.get("seconds", 0.0))
        return self

    def _abandon(self, sock: socket.socket) -> None:
        sock.close()
        if self._process is not None:
            self._process.kill()
            self._process.wait()
        self._process = None

    def request(self, message: dict, fds: tuple[int, ...] = ()) -> dict:
        with self._lock:
            if self._sock is None:
                raise ForkServerUnavailable("the fork server is not running")
            try:
                if fds:
                    socket.send_fds(self._sock, [json.dumps(message).encode()], list(fds))
                else:
                    self._sock.send(json.dumps(message).encode())
                answer = self._sock.recv(_MAX_REQUEST)
            except OSError as error:
                raise ForkServerUnavailable(f"the fork server stopped answering: {error}") from None
        if not answer:
            raise ForkServerUnavailable("the fork server has exited")
        answer = json.loads(answer)
        if "error" in answer:
            raise ForkServerUnavailable(f"the fork server refused: {answer['error']}")
        return answer

    def spawn(self, module: str, argv: list[str], env: dict[str, str], cwd: str, fds: tuple[int, int, int]) -> "ServedProcess":
        answer = self.request({"op": "spawn", "module": module, "argv": argv, "env": env, "cwd": cwd}, fds)
        return ServedProcess(self, answer["pid"])

    def close(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            sock.close()  # the server ends its children and exits
        if self._process is not None:
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None


class ServedProcess(_ForkedProcess):
    """The parts of subprocess.Popen that Child uses, for a child of the fork server."""

    def __init__(self, server: ForkServer, pid: int):
        super().__init__(pid, None, None)
        self.server = server

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                self.returncode = self.server.request({"op": "reap", "pid": self.pid})["returncode"]
            except ForkServerUnavailable:  # the server died, and its children with it
                self.returncode = -signal.SIGKILL
        return self.returncode

    def wait(self) -> int:
        while (returncode := self.poll()) is None:
            time.sleep(0.005)
        return returncode

    def kill_group(self) -> None:
        if self.returncode is None:
            try:
                self.server.request({"op": "kill", "pid": self.pid})
            except ForkServerUnavailable:
                pass


class ServedChild(Child):
    """A Child forked by the fork server instead of started as a new interpreter."""

    def __init__(self, server: ForkServer, module: str, args: list[str], **kwargs):
        super().__init__(module, args, **kwargs)
        self.server = server

    def _launch(self, channel_fd: int):
        stdin_r, stdin_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            process = self.server.spawn(self.module, self.args, self.env, self.workdir, (stdin_r, out_w, channel_fd))
        except ForkServerUnavailable:
            for fd in (stdin_r, stdin_w, out_r, out_w):
                os.close(fd)
            raise
        os.close(stdin_r)
        os.close(out_w)
        process.stdin, process.stdout = os.fdopen(stdin_w, "wb"), os.fdopen(out_r, "rb")
        return process

    def kill(self) -> None:
        if not isinstance(self.proc, ServedProcess):  # not started
            return
        self.proc.kill_group()
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass


# ------------------------------------------------------------------------------- one per process

_shared: ForkServer | None = None
_shared_lock = threading.Lock()


def shared_server() -> ForkServer | None:
    """This process's fork server, started on first use (and again if it died); None where
    it cannot run (not Linux, or it failed to start: children then start cold)."""
    global _shared
    if not sys.platform.startswith("linux"):
        return None
    with _shared_lock:
        if _shared is not None and _shared.running:
            return _shared
        if _shared is not None:
            _shared.close()
        try:
            _shared = ForkServer().start()
        except ForkServerUnavailable as error:
            print(f"tvm-course: {error}; grading starts each child from scratch", file=sys.stderr)
            _shared = None
        return _shared


def stop_shared_server() -> None:
    global _shared
    with _shared_lock:
        if _shared is not None:
            _shared.close()
            _shared = None


atexit.register(stop_shared_server)


if __name__ == "__main__":
    main(sys.argv[1:])
