"""What a roofline needs, measured here: this core's arithmetic peak, its streaming bandwidth, and a
schedule's bytes of memory traffic.

- The peak is the grader's own kernel (`autograder.engine.peak`: independent chains of vector
  multiply-adds), compiled for the lesson's target. Where the target has FMA that is an FMA
  peak; where it has not (x86-64-v2: SSE4.2), LLVM emits a multiply and an add for each, and the
  label says so (`peak_label`).
- `measure_roofs` takes the peak and every bandwidth in interleaved rounds and keeps the best
  of each, with the range the rounds spanned: on a shared machine one sample can read half of
  what the core does alone, and the best of rounds spread over a few seconds is the closest to
  the machine's own roof that a busy machine gives.
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

from dataclasses import dataclass

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


def has_fma(target) -> bool:
    from tvm.target import codegen

    return "fma" in set(codegen.llvm_get_cpu_features(target))


def peak_label(target) -> str:
    """What the peak kernel measures on `target`, in words."""
    if has_fma(target):
        return "FMA peak"
    return "multiply + add peak (no FMA on this target: a mulps and an addps per step)"


@dataclass(frozen=True)
class Roofs:
    """The best of interleaved rounds for the peak and each bandwidth, with the ranges seen."""

    peak: float  # GFLOP/s
    peak_range: tuple[float, float]
    bandwidths: dict  # label -> GB/s
    bandwidth_ranges: dict  # label -> (lowest, highest) GB/s
    peak_label: str
    rounds: int

    def table(self):
        from .tables import Table

        rows = [(self.peak_label, f"{self.peak:.1f} GFLOP/s", f"{self.peak_range[0]:.1f} to {self.peak_range[1]:.1f}")]
        rows += [(f"bandwidth, {label}", f"{value:.1f} GB/s", "{:.1f} to {:.1f}".format(*self.bandwidth_ranges[label]))
                 for label, value in self.bandwidths.items()]
        note = ""
        low, high = self.peak_range
        if high > 1.5 * low:
            note = (f"The {self.rounds} rounds of the peak ranged over more than 1.5x: the machine was busy while it was "
                    "measured. The roof is the best round; if even that was slowed, every percentage of it below is too high.")
        return Table.of(("roof (best of the rounds, one thread)", "best", "range over the rounds"), rows,
                        f"This core's roofs, measured now in {self.rounds} interleaved rounds", note=note)

    _repr_markdown_ = lambda self: self.table()._repr_markdown_()  # noqa: E731


def measure_roofs(target, device, sizes: dict, rounds: int = 5) -> Roofs:
    """The peak and one bandwidth per `sizes` entry (label -> bytes moved), in `rounds` interleaved
    rounds; each keeps its best round (see the module's docstring)."""
    import tvm

    from ..engine import peak
    from ..engine.bench import tvm_timer

    width = peak.lanes(target)
    size = peak.ACCUMULATORS * width
    timers = {None: tvm_timer(peak.compile_kernel(target).mod, device,
                              [tvm.runtime.tensor(np.ones(size, dtype=np.float32), device),
                               tvm.runtime.tensor(np.zeros(size, dtype=np.float32), device)], MIN_REPEAT_MS)}
    moved = {}
    for label, total_bytes in sizes.items():
        count = max(16, (total_bytes // 8) // 16 * 16)
        module = tvm.compile(tvm.IRModule({"main": stream_kernel(count)}), target).mod
        arguments = [tvm.runtime.tensor(np.ones(count, dtype=np.float32), device), tvm.runtime.empty((count,), "float32", device)]
        timers[label] = tvm_timer(module, device, arguments, MIN_REPEAT_MS)
        moved[label] = 2 * count * 4
    for timer in timers.values():
        timer()  # warm-up
    rates: dict = {key: [] for key in timers}
    for _ in range(rounds):
        for key, timer in timers.items():
            seconds = min(timer() for _ in range(2))
            rates[key].append((peak.flop(width) if key is None else moved[key]) / seconds / 1e9)
    peaks = rates.pop(None)
    return Roofs(max(peaks), (min(peaks), max(peaks)), {label: max(v) for label, v in rates.items()},
                 {label: (min(v), max(v)) for label, v in rates.items()}, peak_label(target), rounds)


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
