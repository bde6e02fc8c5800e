"""A class graded by an instructor who is not root: the same command, the same grades.

The grading run is started as an ordinary user (`tvm-course grade`, a subprocess): under pytest
run by a normal user, as that user; under pytest run as root (CI), as `nobody`. Root's checkout
may lie in a folder only root can enter (CI clones into one), so the subprocess starts in a
mount namespace of its own where each such folder on the way to the checkout and the
interpreter is replaced by an enterable one holding just that path: what a normal user's own
checkout in their home looks like to them. The course is the normal user's own.
"""
from __future__ import annotations

import csv
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder.rehearsal.samples import load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples
from autograder.engine import confine

from .conftest import COURSE, REPO

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not confine.available().isolated, reason=f"no isolation between gradings here: {confine.available().reason}"),
]

NOBODY = 65534
STUDENTS = ("ada", "cleo", "mallory")  # a pass, a partial and a hostile sample

# Run as root inside `unshare --mount`: make the paths in argv[1] reachable by others, become
# NOBODY and exec the rest of argv.
BECOME_A_NORMAL_USER = textwrap.dedent('''
    import os, subprocess, sys, tempfile
    needed, command = sys.argv[1].split(os.pathsep), sys.argv[2:]
    def closed(folder):
        return not os.stat(folder).st_mode & 0o001
    tops = {}
    for path in needed:
        parts = path.strip("/").split("/")
        for index in range(1, len(parts) + 1):
            folder = "/" + "/".join(parts[:index])
            if closed(folder):
                tops.setdefault(folder, []).append(path)
                break
    for top, paths in tops.items():
        hidden = []
        for path in paths:
            keep = tempfile.mkdtemp(prefix="tvm-course-keep-", dir="/run" if os.path.isdir("/run") else "/")
            subprocess.run(["mount", "--bind", path, keep], check=True)
            hidden.append((path, keep))
        subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", top], check=True)
        for path, keep in hidden:
            os.makedirs(path, exist_ok=True)
            subprocess.run(["mount", "--bind", keep, path], check=True)
    os.setgroups([])
    os.setgid(int(os.environ["AS_GID"]))
    os.setuid(int(os.environ["AS_UID"]))
    os.execvp(command[0], command)
''')


def as_normal_user(command: list[str], home: Path, **kwargs) -> subprocess.CompletedProcess:
    env = {**{k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "TVM_COURSE_NAMESPACES")},
           "HOME": str(home), "TMPDIR": str(home)}
    if os.geteuid() != 0:
        return subprocess.run(command, env=env, **kwargs)
    if not shutil.which("unshare"):
        pytest.skip("needs util-linux's unshare to start a normal user's process from a root-only checkout")
    needed = os.pathsep.join(sorted({str(REPO), os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)}))
    env |= {"AS_UID": str(NOBODY), "AS_GID": str(NOBODY)}
    wrapper = ["unshare", "--mount", "--propagation", "private", sys.executable, "-I", "-c", BECOME_A_NORMAL_USER, needed]
    return subprocess.run(wrapper + command, env=env, **kwargs)


@pytest.fixture(scope="module")
def their_course():
    """A released course with three submissions, owned by the user who will grade it."""
    home = Path(tempfile.mkdtemp(prefix="tvm-course-instructor-"))
    root = copy_course(COURSE, home / "course")
    release_assignment(root, "tiling", students=list(STUDENTS))
    submit_samples(root, "tiling", only=list(STUDENTS))
    if os.geteuid() == 0:
        for folder, dirs, files in os.walk(home):
            for name in [folder, *(os.path.join(folder, n) for n in dirs + files)]:
                os.lchown(name, NOBODY, NOBODY)
    yield home, root
    shutil.rmtree(home, ignore_errors=True)


def test_a_normal_user_grades_a_class_with_the_same_grades(their_course):
    home, root = their_course
    tvm_course = str(Path(sys.executable).with_name("tvm-course"))
    done = as_normal_user(
        [tvm_course, "grade", "tiling", "--course", str(root), "--workers", "1",
         "--timing-rounds", "5", "--min-repeat-ms", "5", "--student-timeout-s", "3"],
        home, capture_output=True, text=True, timeout=900, cwd=home)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    with open(root / "tiling-grades.csv", newline="") as table:
        rows = {row["student"]: row for row in csv.DictReader(table)}
    assert set(rows) == set(STUDENTS), rows
    header = list(next(iter(rows.values())))
    parts = header[header.index("this_run") + 1:header.index("needs_manual_grade")]
    samples = {s.student: s for s in load_samples(root, "tiling")}
    for student, row in rows.items():
        points = {name: float(row[name]) if row[name] else None for name in parts}
        assert samples[student].mismatches(points, row["schedule"]) == [], (student, row)
