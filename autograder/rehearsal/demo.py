"""The instructor's whole job on the bundled samples: what `make demo` shows after the examples.

In a scratch copy of the course (so nothing generated lands in the repository): release each
assignment, hand in its samples as students would, grade them with `tvm-course grade`'s
code, and show the table, the CSV and the feedback, with each sample's expected score beside
the one it got. Limits are shorter than a real run's so that the hanging sample costs seconds.

The copy lives in a folder of its own for each run (`tempfile.mkdtemp`: a new name, entered by
its owner only), so two users, or two runs, never share one; everything in it is its owner's
alone (the grading warns about course files other users could read, and must not about this
copy); the folder is removed at the end unless `keep` (`tvm-course demo --keep`).
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from ..course.grading_run import GradingOptions, grade_assignment
from .scratch_course import BUNDLED_COURSE, copy_course, release_assignment, release_leaks, submit_samples
from ..course.summary import format_table

DEMO_ASSIGNMENTS = ("tiling", "gpu-tiling", "cost-model")
DEMO_PREFIX = "tvm-course-demo-"
DEMO_CELL_TIMEOUT_S = 15
DEMO_SETTINGS = {"student_timeout_s": 5.0, "timing_rounds": 7}


def run_instructor_demo(workers: int = 2, out: TextIO = sys.stdout, keep: bool = False) -> int:
    folder = Path(tempfile.mkdtemp(prefix=DEMO_PREFIX))  # 0700, a name no other run has
    umask = os.umask(0o077)  # what the demo writes (releases, submissions, grades) is the owner's alone
    try:
        root = copy_course(BUNDLED_COURSE, folder / "course")
        _owner_only(root)  # the copy keeps the repository's modes (644): not for other users' eyes
        return _instructor_job(root, workers, out)
    finally:
        os.umask(umask)
        if keep:
            print(f"\nkept the scratch course: {folder} (remove it when done)", file=out)
        else:
            shutil.rmtree(folder, ignore_errors=True)
            print(f"\nremoved the scratch course {folder} (`tvm-course demo --keep` keeps it, with the grades and feedback)", file=out)


def _owner_only(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & 0o700)


def _instructor_job(root: Path, workers: int, out: TextIO) -> int:
    print(f"The instructor's job on the bundled samples, in a scratch copy of the course: {root}", file=out)
    print(
        f"(demo limits: {DEMO_CELL_TIMEOUT_S} s a notebook cell, {DEMO_SETTINGS['student_timeout_s']:g} s for schedule(), "
        f"{DEMO_SETTINGS['timing_rounds']} timing rounds; a real run uses the course's nbgrader_config.py)",
        file=out,
    )
    surprises = 0
    for assignment in DEMO_ASSIGNMENTS:
        print(f"\n== {assignment}", file=out)
        release = release_assignment(root, assignment)
        leaks = release_leaks(release)
        print(f"released {release}: " + ("solutions, hidden tests and the answer key removed" if not leaks else f"LEAKS {leaks}"), file=out)
        submitted = submit_samples(root, assignment)
        print(f"handed in {len(submitted)} samples (course/samples/{assignment}/):", file=out)
        for student, sample in submitted.items():
            print(f"  {student:<8} {sample.about}", file=out)
        print(f"\n$ tvm-course grade {assignment} --workers {workers}", file=out, flush=True)
        report = grade_assignment(
            GradingOptions(assignment, course=root, workers=workers, cell_timeout=DEMO_CELL_TIMEOUT_S, grader_settings=dict(DEMO_SETTINGS))
        )
        print(format_table(report.rows), file=out)
        wrong = [f"{row.student}: {'; '.join(m)}" for row in report.rows if (m := submitted[row.student].mismatches(row.parts, row.schedule))]
        wrong += [f"{s}: grading failed: {why.splitlines()[0]}" for s, why in report.failures.items()]
        surprises += len(wrong) + len(leaks)
        print("every sample scored as its file says it should" if not wrong else "\n".join(["NOT as expected:", *wrong]), file=out)
        print(f"grades: {report.csv_path}\nfeedback: {report.feedback_dir}/STUDENT/{assignment}/{assignment}.html", file=out)
    return 0 if surprises == 0 else 1

