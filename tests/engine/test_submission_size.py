"""What a submission's size may cost the grader: its text is bounded before anything parses it.

Compiling Python source costs about 400 times its size in memory; a 4.8 MiB file once grew the
grading process to 1.9 GB in its syntax check. The attacker's file here is large and valid."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from autograder.engine.pipeline import MAX_SOURCE_BYTES, grade_source, read_submission


def huge_source(size: int) -> str:
    return "def schedule(sch):\n    pass\n\nDATA = [" + "1, " * (size // 3) + "]\n"


def test_a_file_is_read_no_further_than_the_limit(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(huge_source(5 * 2**20))
    assert MAX_SOURCE_BYTES < len(read_submission(path)) <= MAX_SOURCE_BYTES + 2


def test_a_schedule_over_the_limit_is_rejected_before_it_is_parsed(fast_config):
    result = grade_source("tile-fused-conv", huge_source(MAX_SOURCE_BYTES + 10), fast_config, preflight=False)
    assert result.status == "rejected" and result.score == 0
    assert f"{MAX_SOURCE_BYTES // 1024} KiB" in result.messages[0]


def test_grade_schedule_on_a_5_mib_file_stays_small_and_says_why(tmp_path):
    path = tmp_path / "submission.py"
    path.write_text(huge_source(5 * 2**20))
    command = [str(Path(sys.executable).parent / "tvm-course"), "grade-schedule", "tile-fused-conv", str(path), "--json"]
    # A fresh process whose only child is the grading: its children's peak is the grading's.
    measure = ("import json, resource, subprocess, sys\n"
               f"done = subprocess.run({command!r}, capture_output=True, text=True)\n"
               "print(json.dumps({'rc': done.returncode, 'out': done.stdout, 'err': done.stderr[-2000:],\n"
               "                  'peak_mb': resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))\n")
    seen = json.loads(subprocess.run([sys.executable, "-c", measure], capture_output=True, text=True, timeout=600,
                                     check=True).stdout)
    report = json.loads(seen["out"])
    assert seen["rc"] == 1 and report["status"] == "rejected", seen["err"]
    # TVM imported and the preflight graded: a few hundred MB. Compiling the file took ~2 GB.
    assert seen["peak_mb"] < 1000, seen["peak_mb"]
