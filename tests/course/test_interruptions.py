"""A class run that does not end as planned ends with a clear message and loses nothing (issue 36,
items 4 and 10), tried with the real commands on a scratch course:

- the gradebook locked by another program (the formgrader holding a write transaction, here a
  process holding sqlite's exclusive lock): the run stops, says so and what to do; the grades
  already in the gradebook stay; the next run grades;
- a manual score entered (as the formgrader saves one: Grade.manual_score) then a regrade
  (--force): the manual score is kept, and wins;
- Ctrl-C during grading: the CSV from the last run says in every row that it is stale, `tvm-course
  export` warns, `nbgrader release_feedback` refuses; the next run that ends clears it all;
- a full disk (a small tmpfs, where this machine lets root mount one): the submission whose
  grading could not be written fails, saying "No space left on device", the others are graded,
  nothing recorded is lost, and the next run, with space again, grades it.
"""
from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from autograder.course import grading_marker
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

from .conftest import COURSE
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow


def rows(root) -> dict:
    with open(root / "tiling-grades.csv", newline="", encoding="utf-8") as handle:
        return {row["student"]: row for row in csv.DictReader(handle)}


def grades(root, student: str) -> dict:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        submission = gradebook.find_submission("tiling", student)
        return {g.name: (g.auto_score, g.manual_score, g.score) for n in submission.notebooks for g in n.grades}


def test_a_locked_gradebook_a_manual_score_and_ctrl_c(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling", students=["ada", "dev"])
    submit_samples(root, "tiling", only=["dev"])
    grade = ["tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS]
    first = command(*grade)
    assert first.returncode == 0, first.stdout + first.stderr
    before = grades(root, "dev")

    # the gradebook locked for the whole run
    holder = subprocess.Popen([sys.executable, "-c", "import sqlite3, sys, time\n"
                               f"c = sqlite3.connect({str(root / 'gradebook.db')!r}, isolation_level=None)\n"
                               "c.execute('BEGIN EXCLUSIVE'); print('locked', flush=True); time.sleep(120)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        locked = command(*grade, "--force", check=False)
    finally:
        holder.kill()
        holder.wait()
    assert locked.returncode == 2 and "the gradebook is locked by another program" in locked.stderr, locked.stdout + locked.stderr
    assert "Traceback" not in locked.stderr and grades(root, "dev") == before

    # a manual score, then a regrade: the manual score stays and wins
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        gradebook.find_grade("tile-arithmetic-marks", "tiling", "tiling", "dev").manual_score = 3.5
        gradebook.db.commit()
    again = command(*grade, "--force")
    assert again.returncode == 0, again.stdout + again.stderr
    auto, manual, score = grades(root, "dev")["tile-arithmetic-marks"]
    assert (auto, manual, score) == (before["tile-arithmetic-marks"][0], 3.5, 3.5)
    assert float(rows(root)["dev"]["tile-arithmetic-marks"]) == 3.5

    # Ctrl-C while grading ada
    submit_samples(root, "tiling", only=["ada"])
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]])}
    # Ctrl-C as a terminal delivers it: SIGINT at its default in the run. An ignored SIGINT is
    # inherited through exec, and Python then never raises KeyboardInterrupt. A suite started in the
    # background of a non-interactive shell (as a script may start CI) has SIGINT ignored in every
    # process: there, five presses once left the run to finish (exit 0).
    run = subprocess.Popen([sys.executable, "-m", "autograder.cli", *grade[1:]], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 240
    # Ctrl-C as soon as the run has marked itself (its checks passed, every row marked stale):
    # on a quiet machine the whole rest of the run (ada graded in 1.5 s) can end within the
    # 3 s this test once waited, which left nothing to interrupt.
    while grading_marker.read(root, "tiling") is None and time.monotonic() < deadline and run.poll() is None:
        time.sleep(0.05)
    # One press: a second one while the run stops its workers would kill it mid-cleanup (exit -2).
    run.send_signal(signal.SIGINT)
    said, _ = run.communicate(timeout=120)
    assert grading_marker.read(root, "tiling") is not None, (
        f"the run ended before it could be interrupted (exit {run.returncode}; "
        f"SIGINT in this test's process: {signal.getsignal(signal.SIGINT)}):\n{said}")
    assert run.returncode == 130, said
    stale = rows(root)
    assert all(row["this_run"].startswith("STALE: a grading run started") for row in stale.values()), stale
    exported = command("tvm-course", "export", "tiling", "--format", "csv", "-o", str(tmp_path / "out.csv"), "--course", str(root))
    assert "has not finished" in exported.stderr and "interrupted" in exported.stderr, exported.stderr
    (tmp_path / "exchange").mkdir()
    release = command("nbgrader", "release_feedback", "tiling", f"--Exchange.root={tmp_path / 'exchange'}", cwd=root)
    assert release.returncode == 1 and "was interrupted" in release.stderr, release.stderr
    done = command(*grade)
    assert done.returncode == 0, done.stdout + done.stderr
    assert grading_marker.read(root, "tiling") is None
    assert not any(row["this_run"].startswith("STALE") for row in rows(root).values())
    assert grades(root, "dev")["tile-arithmetic-marks"][1] == 3.5


def test_a_full_disk_fails_the_submission_it_hit_and_loses_nothing(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64M", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode()[:200]}")
    try:
        root = copy_course(COURSE, disk / "course")
        release_assignment(root, "tiling", students=["ada", "dev"])
        submit_samples(root, "tiling", only=["dev"])
        grade = ["tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS]
        assert command(*grade).returncode == 0
        before = grades(root, "dev")
        submit_samples(root, "tiling", only=["ada"])
        free = shutil.disk_usage(disk).free
        (disk / "filler").write_bytes(b"\0" * (free - 16 * 1024))  # 16 KiB left: less than a graded notebook
        full = command(*grade, check=False)
        said = full.stdout + full.stderr
        assert full.returncode in (1, 2), said
        assert "No space left on device" in said or "the disk is full" in said, said
        assert grades(root, "dev") == before  # nothing recorded is lost
        (disk / "filler").unlink()
        done = command(*grade)
        assert done.returncode == 0 and "ada" in done.stdout, done.stdout + done.stderr
        assert rows(root)["ada"]["status"] in ("full marks", "points lost"), rows(root)["ada"]
        assert grades(root, "dev") == before
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)
