"""What a roofline needs, measured here: this core's FMA peak, its streaming bandwidth, and a
schedule's bytes of memory traffic.

- The peak is the grader's own kernel (`autograder.engine.peak`: independent chains of vector
  FMAs), compiled for the lesson's target, the best of a few samples.
- Bandwidth is a vectorised copy `b[i] = a[i] * 1.0001` over two arrays, compiled the same way;
  bytes counted are those read plus those written. With arrays far larger than any cache it is
  what one thread gets from main memory; with arrays of a kernel's own size, what that kernel's
  data would stream at from wherever it fits.
- Traffic is a model, stated where it is used: every argument read or written once, every
  buffer that compaction leaves at function level written once and read once, and buffers
  allocated inside a tile loop kept in cache (no traffic). It is read off the compacted IR
  (`ir_views.allocations`), so it follows the schedule.
"""
from __future__ import annotations

import numpy as np

from . import ir_views
from .figures import Point

SAMPLES = 5
MIN_REPEAT_MS = 20


def _best(timer, samples: int = SAMPLES) -> float:
    timer()  # warm-up
    return min(timer() for _ in range(samples))


def measure_peak(target, device) -> float:
    """This core's FMA throughput for `target`, in GFLOP/s (the best of a few samples)."""
    import tvm

    from ..engine import peak
    from ..engine.bench import tvm_timer

    width = peak.lanes(target)
    module = peak.compile_kernel(target).mod
    size = peak.ACCUMULATORS * width
    arguments = [tvm.runtime.tensor(np.ones(size, dtype=np.float32), device),
                 tvm.runtime.tensor(np.zeros(size, dtype=np.float32), device)]
    return peak.flop(width) / _best(tvm_timer(module, device, arguments, MIN_REPEAT_MS)) / 1e9


def stream_kernel(count: int):
    """b[i] = a[i] * 1.0001 over `count` float32 values (a multiple of 16), 16 lanes at a time."""
    from tvm.script import tirx as T

    if count % 16:
        raise ValueError("count must be a multiple of 16")

    @T.prim_func(s_tir=True)
    def stream(a: T.Buffer((count,), "float32"), b: T.Buffer((count,), "float32")):
        T.func_attr({"global_symbol": "main", "tirx.noalias": True})
        for outer in range(count // 16):
            for lane in T.vectorized(16):
                with T.sblock("copy"):
                    i = T.axis.spatial(count, outer * 16 + lane)
                    b[i] = a[i] * T.float32(1.0001)

    return stream


def measure_bandwidth(target, device, total_bytes: int) -> float:
    """GB/s of the copy kernel moving `total_bytes` (half read, half written), best of a few samples."""
    import tvm

    from ..engine.bench import tvm_timer

    count = max(16, (total_bytes // 8) // 16 * 16)  # two float32 arrays of `count` values
    module = tvm.compile(tvm.IRModule({"main": stream_kernel(count)}), target).mod
    arguments = [tvm.runtime.tensor(np.ones(count, dtype=np.float32), device), tvm.runtime.empty((count,), "float32", device)]
    return 2 * count * 4 / _best(tvm_timer(module, device, arguments, MIN_REPEAT_MS)) / 1e9


def argument_bytes(func) -> int:
    """Bytes of a PrimFunc's arguments (inputs and output)."""
    total = 0
    for param in func.params:  # in TVM 0.27 a parameter is the buffer itself (shape, dtype)
        total += int(np.prod([int(d) for d in param.shape], dtype=np.int64)) * np.dtype(str(param.dtype)).itemsize
    return total


def traffic_bytes(func, target) -> int:
    """Modelled memory traffic of `func`: arguments once, function-level buffers written and read
    once each, tile-level buffers none (see the module's docstring)."""
    whole = sum(a.nbytes for a in ir_views.allocations(func, target) if not a.inside)
    return argument_bytes(func) + 2 * whole


def point(name: str, func, target, flops: int, seconds: float) -> Point:
    """A schedule on the roofline: its modelled intensity and its measured GFLOP/s."""
    return Point(name, flops / traffic_bytes(func, target), flops / seconds / 1e9)
