"""Submissions waiting in nbgrader's exchange that `nbgrader collect` has not brought in.

`nbgrader collect ASSIGNMENT` skips a student whose submission is already in submitted/, even
when the exchange holds a newer one ("use --update"), so a resubmission would be graded as the
old one, unchanged. The grading run reads the exchange's inbound folder (names
STUDENT+ASSIGNMENT+TIMESTAMP[+RANDOM], as nbgrader's ExchangeSubmit writes them) and compares
each student's newest with the timestamp.txt of what was collected; it says what to run, or with
--collect runs `nbgrader collect --update` itself first (collect_update).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DEFAULT_ROOT = "/usr/local/share/nbgrader/exchange"  # nbgrader's own default (Exchange.root)


def uncollected(config, coursedir, assignment: str, root: str | Path | None = None) -> list[str]:
    """Students whose newest submission in the exchange is newer than the one in submitted/."""
    from nbgrader.utils import parse_utc

    root = Path(root or config.Exchange.get("root", DEFAULT_ROOT))
    inbound = root / coursedir.course_id / "inbound"
    try:
        names = [p.name for p in inbound.iterdir()]
    except OSError:
        return []  # no exchange here (an LMS course), or not ours to read
    newest: dict[str, object] = {}
    for name in names:
        parts = name.rsplit("+", 3)
        if len(parts) < 3:
            continue
        student, submitted_for, stamp = (parts[0], parts[1], parts[2]) if len(parts) == 4 else parts
        if submitted_for != assignment:
            continue
        try:
            when = parse_utc(stamp)
        except ValueError:
            continue
        if student not in newest or when > newest[student]:
            newest[student] = when
    stale = []
    for student, when in sorted(newest.items()):
        stamp = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment)) / "timestamp.txt"
        try:
            collected = parse_utc(stamp.read_text(encoding="utf-8").strip())
        except (OSError, ValueError):
            collected = None
        if collected is None or when > collected:
            stale.append(student)
    return stale


def collect_update(root: Path, assignment: str, exchange: str | Path | None = None, timeout_s: float = 600) -> list[str]:
    """`nbgrader collect --update ASSIGNMENT` in the course root: each student's newest submission
    replaces the one collected before. Returns what to warn of (nothing when it went well)."""
    from .course_dir import CourseError

    command = [sys.executable, "-m", "nbgrader", "collect", "--update", assignment]
    if exchange:
        command.append(f"--Exchange.root={exchange}")
    env = {**os.environ, "PATH": os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])}
    try:
        done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise CourseError(f"nbgrader collect --update {assignment} did not finish in {timeout_s:g} s") from None
    if done.returncode != 0:
        raise CourseError(f"nbgrader collect --update {assignment} failed (exit status {done.returncode}):\n"
                          + (done.stdout + done.stderr)[-3000:])
    return [line.split("] ", 1)[-1] for line in (done.stdout + done.stderr).splitlines() if "[CollectApp | WARNING]" in line]
