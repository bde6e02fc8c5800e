"""A class run's marker: `.ASSIGNMENT-grading.json` in the course's root, written when a run of
`tvm-course grade ASSIGNMENT` starts and removed when it ends (whether it finished or failed with
a message). A marker left behind says the last run was interrupted (Ctrl-C, a kill, a crash): the
CSV it would have written is stale, and feedback may be missing. A marker whose process is alive
on this machine says a run is under way.

Readers: the CSV export (`summary.write_csv` names the run in progress or interrupted), `tvm-course
export`, and `nbgrader release_feedback` (`feedback_release`), which waits for a run to end.
"""
from __future__ import annotations

import json
import os
import socket
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..engine.processes import alive

FORMAT = "tvm-course-grading-run/1"


def marker_path(root: Path, assignment: str) -> Path:
    return Path(root) / f".{assignment}-grading.json"


@dataclass(frozen=True)
class Marker:
    pid: int
    host: str
    started: str  # ISO 8601, UTC
    alive: bool  # the process that wrote it still runs (on this machine)

    def describe(self) -> str:
        state = "running" if self.alive else "interrupted"
        return f"started {self.started} by process {self.pid} on {self.host}, {state}"


def start(root: Path, assignment: str) -> Path:
    """Write the marker of a run that starts now (replacing an interrupted run's)."""
    path = marker_path(root, assignment)
    record = {"format": FORMAT, "pid": os.getpid(), "host": socket.gethostname(),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(record), encoding="utf-8")
    temporary.chmod(0o600)
    os.replace(temporary, path)
    return path


def finish(root: Path, assignment: str) -> None:
    """Remove this process's marker (the run ended, finished or failed with its message)."""
    marker = read(root, assignment)
    if marker is not None and marker.pid == os.getpid() and marker.host == socket.gethostname():
        marker_path(root, assignment).unlink(missing_ok=True)


def read(root: Path, assignment: str) -> Marker | None:
    """The marker of a run that is under way or was interrupted; None when the last run ended."""
    path = marker_path(root, assignment)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        pid, host, started = int(record["pid"]), str(record["host"]), str(record["started"])
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError):
        return Marker(0, "?", "at an unknown time (unreadable marker)", False)
    return Marker(pid, host, started, alive(pid) if host == socket.gethostname() else True)  # another machine's: assume so
