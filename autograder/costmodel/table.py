"""The candidate table: every candidate's time on the machine that grades, measured once, kept.

A table is measured by the grader's own code only (the space's schedules), yet in a child
(`table_runner`), so that a crash in TVM or LLVM ends that child and not the grading. It is
timed as the engine times a schedule (engine/bench.py): one thread, one warm-up round, then
rounds over all candidates in a rotating order, each sample the fastest of short slices; a
candidate's time is the median of its rounds. Each candidate's output is checked against a
float64 answer first: a table is never built from a wrong schedule.

Tables are cached per machine (LLVM's name for this host's CPU, and the CPU compiled for: a
`--mcpu` target), shape, space and TVM version, in a folder only its owner can open
(`table_dir`: $TVM_COURSE_TABLES, else ~/.cache/tvm-course/cost-model-tables), never beside
the course's released files; each file carries TABLE_FORMAT, which the student edition's leak
check refuses. A cached table is audited each time it is used: a few of its candidates are timed
again, and where two or more of them moved against the others, twice in a row (a burst of load
moves one timing, seldom two alike), the table is measured again (said in `Table.notes`).
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import TvmCourseError
from ..engine.sandbox import Child, ChannelLimits
from ..engine.threads import tvm_thread_env
from .space import COLUMNS, GRIDS, DenseShape

TABLE_FORMAT = "tvm-course-cost-table/1"
TABLES_ENV = "TVM_COURSE_TABLES"
ROUNDS = 3  # timed rounds over every candidate (after one warm-up round)
MIN_REPEAT_MS = 4.0  # each sample: the fastest of 0.5 ms slices lasting this long together
AUDIT_ROWS = 6  # candidates timed again when a cached table is used
# An audited candidate whose time moved by more than this factor against the others' (the
# median ratio: a machine that is uniformly faster or slower today changes no ranking). One
# candidate's code can run up to about 1.25x faster or slower in one process than in another (where
# it lands in memory: docs/speed.md, "Each round at a placement of its own"; seen again here at
# 1.3x between a table and its audit a minute later), so it takes more than one candidate moving
# to call a table drifted.
AUDIT_TOLERANCE = 1.5
AUDIT_DRIFTED = 2  # candidates that must move, both times they are timed
MEASURE_LIMIT_S = 1800.0  # the child's own time for a whole table (about 1 min of it on a quiet core)
# The child reports progress often and the table once: more messages than our own children send.
TABLE_CHANNEL = ChannelLimits(total_bytes=16 * 2**20, messages=4096, depth=8)


class TableError(RuntimeError, TvmCourseError):
    """No table could be measured or read here: a grader fault (the grade stays pending)."""


@dataclass
class Table:
    key: dict  # what it was measured for: space, grid, shape, TVM version, host CPU, target CPU
    rows: np.ndarray  # (n, len(COLUMNS)) int64, the space's candidates in its order
    seconds: np.ndarray  # (n,) float64, each candidate's median time
    measured_s: float = 0.0  # how long measuring it took (0 for a table read from the cache)
    notes: list[str] = field(default_factory=list)  # what the audit found, in words

    @property
    def shape(self) -> DenseShape:
        return DenseShape.from_dict(self.key["shape"])

    def to_json(self) -> dict:
        return {"format": TABLE_FORMAT, "key": self.key, "columns": list(COLUMNS), "rows": self.rows.tolist(),
                "seconds": [float(s) for s in self.seconds], "measured_s": self.measured_s}

    @classmethod
    def from_json(cls, data: object) -> "Table":
        """A table as written by to_json; ValueError for anything else (a cache file that was
        cut short or edited is measured again, never trusted in part)."""
        if not isinstance(data, dict) or data.get("format") != TABLE_FORMAT or data.get("columns") != list(COLUMNS):
            raise ValueError("not a cost-model table")
        rows = np.asarray(data["rows"], dtype=np.int64)
        seconds = np.asarray(data["seconds"], dtype=np.float64)
        if rows.ndim != 2 or rows.shape[1] != len(COLUMNS) or seconds.shape != (rows.shape[0],) or rows.shape[0] < 2:
            raise ValueError("a cost-model table of the wrong shape")
        if not np.all(np.isfinite(seconds)) or np.any(seconds <= 0):
            raise ValueError("a cost-model table with times that are not positive numbers")
        if not isinstance(data.get("key"), dict):
            raise ValueError("a cost-model table without its key")
        return cls(data["key"], rows, seconds, float(data.get("measured_s", 0.0)))


def table_dir(environ=os.environ) -> Path:
    """Where tables are kept: $TVM_COURSE_TABLES, else ~/.cache/tvm-course/cost-model-tables."""
    return private_folder(Path(environ.get(TABLES_ENV) or Path.home() / ".cache" / "tvm-course" / "cost-model-tables"))


def private_folder(folder: Path) -> Path:
    """`folder`, created owner-only (0700; an existing one is made so)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(folder, 0o700)
    return folder


def cache_name(key: dict) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:24] + ".json"


def table_key(shape: DenseShape, grid: str, tvm_version: str, host_cpu: str, target_cpu: str) -> dict:
    from .space import SPACE_VERSION

    return {"space": SPACE_VERSION, "grid": grid, "shape": shape.to_dict(), "tvm": tvm_version,
            "host_cpu": host_cpu, "target_cpu": target_cpu, "rounds": ROUNDS, "min_repeat_ms": MIN_REPEAT_MS}


def read_cached(folder: Path, key: dict) -> Table | None:
    path = folder / cache_name(key)
    try:
        table = Table.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return table if table.key == key else None


def write_cached(folder: Path, table: Table) -> Path:
    """Write atomically, owner-only: a reader sees the old table or the new one, never half."""
    path = folder / cache_name(table.key)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(table.to_json(), handle)
    os.replace(temporary, path)
    return path


def audit_rows(seconds: np.ndarray, count: int = AUDIT_ROWS) -> list[int]:
    """Which candidates an audit times again: spread over the table from fastest to slowest."""
    order = np.argsort(seconds, kind="stable")
    picks = np.linspace(0, len(order) - 1, num=min(count, len(order))).round().astype(int)
    return sorted({int(order[p]) for p in picks})


def drifted(cached: np.ndarray, now: np.ndarray, tolerance: float = AUDIT_TOLERANCE) -> list[int]:
    """Positions (into the audited rows) whose time moved against the others' by more than
    `tolerance`: each ratio now/cached compared with the median ratio."""
    ratios = np.asarray(now, dtype=np.float64) / np.asarray(cached, dtype=np.float64)
    middle = float(np.median(ratios))
    moved = np.abs(np.log(ratios / middle)) > np.log(tolerance)
    return [int(i) for i in np.nonzero(moved)[0]]


def measure(shape: DenseShape, grid: str = "full", mcpu: str | None = None, *, folder: Path | None = None,
            progress=None, use_cache: bool = True, limit_s: float = MEASURE_LIMIT_S) -> Table:
    """This machine's table for `shape` (cached, audited) from a child; TableError when none
    can be had. `progress(done, total, phase)` is called as the child reports."""
    if grid not in GRIDS:
        raise ValueError(f"unknown grid {grid!r}; known: {', '.join(GRIDS)}")
    folder = table_dir() if folder is None else private_folder(Path(folder))
    request = {"shape": shape.to_dict(), "grid": grid, "mcpu": mcpu, "folder": str(folder), "use_cache": use_cache}
    child = Child("autograder.costmodel.table_runner", [], env=tvm_thread_env(1),
                  channel=TABLE_CHANNEL, output_limit=4000).start()
    started = time.monotonic()
    try:
        child.send(request)
        seen = 0
        while child.proc.poll() is None:
            messages = list(child.messages)
            for message in messages[seen:]:
                if message.get("kind") == "progress" and progress is not None:
                    progress(int(message.get("done", 0)), int(message.get("total", 0)), str(message.get("phase", "")))
            seen = len(messages)
            if time.monotonic() - started > limit_s:
                break
            time.sleep(0.1)
        outcome = child.wait(1.0)
    finally:
        child.close()
    report = outcome.last("table")
    if report is None:
        failure = outcome.last("failure")
        why = failure.get("message") if failure else (outcome.output_tail[-1500:] or f"exit code {outcome.returncode}")
        raise TableError(f"the cost-model table could not be measured on this machine: {why}")
    table = Table.from_json(report["table"])
    table.notes = [str(n) for n in report.get("notes", [])]
    if progress is not None:
        progress(len(table.seconds), len(table.seconds), "done")
    return table
