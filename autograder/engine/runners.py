"""Where compiled code runs: this machine, or a device behind TVM's RPC tracker.

Both give the same small interface, so correctness and timing code does not care which.
"""
from __future__ import annotations

import os
import socket
import tempfile
from dataclasses import dataclass

import numpy as np


class LocalSession:
    def __init__(self, target_kind: str):
        import tvm

        self.device = tvm.cuda(0) if target_kind == "cuda" else tvm.cpu(0)
        self.where = "this machine"

    def load(self, executable):
        return executable.mod

    def tensor(self, array: np.ndarray):
        import tvm

        return tvm.runtime.tensor(array, self.device)

    def close(self) -> None:
        pass


class RPCSession:
    """A remote device requested from a tracker; compiled libraries are uploaded to it."""

    def __init__(self, target_kind: str, tracker: str, key: str, timeout_s: float = 60):
        from tvm import rpc

        host, port = parse_tracker(tracker)
        self.remote = rpc.connect_tracker(host, port).request(key, priority=1, session_timeout=int(timeout_s))
        self.device = self.remote.cuda(0) if target_kind == "cuda" else self.remote.cpu(0)
        self.where = f"RPC device '{key}' via {tracker}"
        self._tmp = tempfile.TemporaryDirectory(prefix="tvm-course-rpc-")

    def load(self, executable):
        path = os.path.join(self._tmp.name, f"lib{len(os.listdir(self._tmp.name))}.so")
        executable.export_library(path)
        self.remote.upload(path)
        return self.remote.load_module(os.path.basename(path))

    def tensor(self, array: np.ndarray):
        import tvm

        return tvm.runtime.tensor(array, self.device)

    def close(self) -> None:
        self._tmp.cleanup()


def parse_tracker(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"an RPC tracker is HOST:PORT, got {address!r}")
    return host, int(port)


# How long a tracker may take to accept a connection before it counts as unreachable: one
# grading's check and the class run's (course/grading_run.py) are this one function.
TRACKER_CONNECT_TIMEOUT_S = 5.0


def check_tracker_reachable(address: str, timeout_s: float = TRACKER_CONNECT_TIMEOUT_S) -> None:
    """Fail fast with a clear reason, rather than after TVM's minute of retries: ValueError for an
    address that is not HOST:PORT, ConnectionError for a tracker that does not answer."""
    host, port = parse_tracker(address)
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            pass
    except OSError as error:
        raise ConnectionError(f"cannot reach the RPC tracker at {address}: {error.strerror or error}") from None


@dataclass(frozen=True)
class RemoteDevice:
    """What a device behind an RPC tracker says about itself (probe_device)."""

    where: str  # "RPC device 'KEY' via HOST:PORT"
    cpu: bool  # the server answers with a CPU device (every TVM server does)
    cuda: bool  # it has a CUDA device 0
    arch: str | None = None  # e.g. sm_90, from the device's compute capability
    name: str | None = None  # e.g. "NVIDIA H100 80GB HBM3"
    problem: str | None = None  # why `cuda` is False, when the server said


def probe_device(tracker: str, key: str, timeout_s: float = 30) -> RemoteDevice:
    """Request a session for `key` from the tracker and ask its device what it is. Raises
    ConnectionError when no session can be had (TVM's own message, last line)."""
    from tvm import rpc

    host, port = parse_tracker(tracker)
    where = f"RPC device '{key}' via {tracker}"
    try:
        remote = rpc.connect_tracker(host, port).request(key, priority=1, session_timeout=int(timeout_s), max_retry=2)
    except Exception as error:
        raise ConnectionError(f"no session from the {where}: {_last_line(error)}") from None
    try:
        try:
            cpu = bool(remote.cpu(0).exist)
        except Exception:
            cpu = False
        try:
            device = remote.cuda(0)
            cuda = bool(device.exist)
        except Exception as error:  # a server whose runtime has no CUDA device API
            return RemoteDevice(where, cpu, False, problem=_last_line(error))
        if not cuda:
            return RemoteDevice(where, cpu, False, problem="tvm.cuda(0) does not exist there")
        version, name = device.compute_version, device.device_name
        arch = "sm_" + version.replace(".", "") if version else None
        return RemoteDevice(where, cpu, True, arch=arch, name=name)
    finally:
        del remote  # ends the session: the server goes back to the tracker's pool


def _last_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).strip().splitlines() if line.strip()]
    return lines[-1] if lines else error.__class__.__name__


def open_session(target_kind: str, tracker: str | None, key: str | None):
    if tracker:
        if not key:
            raise ValueError("an RPC tracker needs a device key (--key)")
        return RPCSession(target_kind, tracker, key)
    return LocalSession(target_kind)


def gpu_present() -> bool:
    """True when a CUDA device can be used here (needs the driver, not just nvcc)."""
    try:
        import tvm

        return bool(tvm.cuda(0).exist)
    except Exception:
        return False
