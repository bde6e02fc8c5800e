"""Child process: this machine's cost-model table, from the cache (audited) or measured.

Usage (by `table.measure` only): python -m autograder.costmodel.table_runner FD, with one JSON
request on stdin: {"shape", "grid", "mcpu", "folder", "use_cache"}. Reports on its channel:
{"kind": "progress", "done", "total", "phase"} as it goes, then {"kind": "table", "table",
"notes"} or {"kind": "failure", "message"}.

It runs only the grader's own schedules (the space's template), so it is not confined; it is
a child so that a crash in TVM or LLVM cannot take the grader with it.
"""
from __future__ import annotations

import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

from ..engine.sandbox import make_undumpable, open_channel
from .space import GRIDS, DenseShape, candidates, inputs, schedule, workload
from .table import (
    AUDIT_DRIFTED, AUDIT_TOLERANCE, MIN_REPEAT_MS, ROUNDS, Table, audit_rows, drifted, read_cached, table_key, write_cached,
)

PROGRESS_EVERY = 8  # candidates between progress reports


class Measurer:
    """Compiles candidates for one target and times them the engine's way."""

    def __init__(self, shape: DenseShape, mcpu: str | None, send):
        import tvm

        from ..engine.cpus import cpu_name, cpu_target

        self.tvm, self.send, self.shape = tvm, send, shape
        self.target = cpu_target(mcpu)
        self.host_cpu = cpu_name(tvm.target.Target.from_device(tvm.cpu()))
        self.target_cpu = cpu_name(self.target)
        self.device = tvm.cpu()
        self.func = workload(shape)
        arrays, self.expected = inputs(shape)
        self.arguments = [tvm.runtime.tensor(a, self.device) for a in arrays]

    def compile(self, rows: np.ndarray, phase: str) -> list:
        modules = []
        for index, row in enumerate(rows):
            executable = self.tvm.compile(schedule(self.func, row).mod, self.target)
            self.arguments[-1].copyfrom(np.full(self.expected.shape, np.nan, dtype=np.float32))
            executable["main"](*self.arguments)
            error = np.max(np.abs(self.arguments[-1].numpy().astype(np.float64) - self.expected))
            if not error <= 1e-3 * max(1.0, float(np.max(np.abs(self.expected)))):
                raise RuntimeError(f"candidate {index} ({row.tolist()}) computes wrong results (largest error {error:.3g})")
            modules.append(executable.mod)
            if (index + 1) % PROGRESS_EVERY == 0 or index + 1 == len(rows):
                self.send({"kind": "progress", "done": index + 1, "total": len(rows), "phase": phase})
        return modules

    def time(self, modules: list, phase: str) -> np.ndarray:
        """The median over ROUNDS interleaved rounds (one warm-up round first) of each module's
        fastest-slice time (engine/bench.py's timer and rotating order)."""
        from ..engine.bench import tvm_timer

        timers = [tvm_timer(m, self.device, self.arguments, min_repeat_ms=MIN_REPEAT_MS) for m in modules]
        samples = [[] for _ in timers]
        total = len(timers) * ROUNDS
        for round_index in range(ROUNDS + 1):
            shift = (round_index * max(1, len(timers) // (ROUNDS + 1))) % len(timers)
            for position in list(range(shift, len(timers))) + list(range(shift)):
                seconds = timers[position]()
                if round_index:  # the first round warms up
                    samples[position].append(seconds)
            if round_index:
                self.send({"kind": "progress", "done": round_index * len(timers), "total": total, "phase": phase})
        return np.array([float(np.median(s)) for s in samples])


def main(argv: list[str]) -> None:
    make_undumpable()
    send = open_channel(argv[0])
    try:
        request = json.loads(sys.stdin.readline())
        shape = DenseShape.from_dict(request["shape"])
        grid = str(request["grid"])
        rows = candidates(shape, GRIDS[grid])
        import tvm

        measurer = Measurer(shape, request.get("mcpu"), send)
        key = table_key(shape, grid, str(tvm.__version__), measurer.host_cpu, measurer.target_cpu)
        folder = Path(request["folder"])
        notes: list[str] = []
        cached = read_cached(folder, key) if request.get("use_cache", True) else None
        if cached is not None and np.array_equal(cached.rows, rows):
            picks = audit_rows(cached.seconds)
            modules = measurer.compile(rows[picks], "audit: compiling")
            moved = drifted(cached.seconds[picks], measurer.time(modules, "audit: timing"))
            if len(moved) >= AUDIT_DRIFTED:  # a second opinion: a burst of load can move one timing, not two in a row alike
                moved = sorted(set(moved) & set(drifted(cached.seconds[picks], measurer.time(modules, "audit: timing again"))))
            if len(moved) < AUDIT_DRIFTED:
                send({"kind": "table", "table": cached.to_json(), "notes": notes})
                return
            notes.append(f"the cached table had drifted: {len(moved)} of {len(picks)} candidates timed again moved "
                         f"by more than {AUDIT_TOLERANCE:g}x against the others; the table was measured again")
        started = time.monotonic()
        seconds = measurer.time(measurer.compile(rows, "compiling"), "timing")
        table = Table(key, rows, seconds, measured_s=round(time.monotonic() - started, 2))
        write_cached(folder, table)
        send({"kind": "table", "table": table.to_json(), "notes": notes})
    except Exception as error:  # noqa: BLE001  (reported as the grader's fault, with its cause)
        send({"kind": "failure", "message": f"{type(error).__name__}: {error}\n{traceback.format_exc()[-1500:]}"})


if __name__ == "__main__":
    main(sys.argv[1:])
