"""A class run grades again, once, each submission whose timing ran on a disturbed core.

Interleaved rounds cancel whatever slows the yardstick and the candidate alike. They cannot
cancel what slows one kind of code more than another for a whole grading. The case in point is
another process on the same physical core, such as a hypervisor's neighbour on the other
hyperthread: it halves the FMA throughput that a register-blocked schedule lives on, and barely
touches a yardstick that waits on its loads.

Measured (a class run of 90 copies of the register-blocked sample, 2 workers on a 2-core VM):
- One grading's core ran the FMA peak kernel at 57% of the class's median.
- That grading's candidate measured 0.77x the yardstick, where the other 89 measured 1.55-1.74x.
- Its 99% interval was narrow enough to lie wholly below 1.1x, so it was "decided" and got no
  speed credit.

The rounds say nothing about this, but the peak kernel does. Every timed grading on a CPU
measures it right after its rounds (engine/peak.py), and it is the same kernel for every
student's variant.

After the class is graded, each timed grading whose peak is under DISTURBED_FRACTION of the
median peak of the gradings on the same machine and CPU is graded again, once. This needs at
least MIN_PEERS such gradings, so that the median is the machine's own and not one grading's
luck. The second grading stands, as any grading does.
"""
from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import Mapping

from ..nbgrader_ext.trusted import graded_record

DISTURBED_FRACTION = 0.8  # in that run: 0.58 disturbed; the next lowest 0.76 (86.7 of 114.8 GFLOP/s), then 0.88
MIN_PEERS = 5


def disturbed(peaks: Mapping[str, tuple[str, float]], fraction: float = DISTURBED_FRACTION) -> dict[str, str]:
    """student -> why their timing is taken again, from student -> (where it was timed, the FMA
    peak in GFLOP/s its grading measured): under `fraction` of the median of the gradings
    timed at the same `where` (one machine and CPU), of which there must be MIN_PEERS."""
    groups: dict[str, list[float]] = {}
    for where, peak in peaks.values():
        groups.setdefault(where, []).append(peak)
    medians = {where: statistics.median(values) for where, values in groups.items() if len(values) >= MIN_PEERS}
    return {
        student: f"its core ran the FMA peak kernel at {peak / medians[where]:.0%} of the class's median "
                 f"({peak:.0f} of {medians[where]:.0f} GFLOP/s) while it was timed: a core shared with another process"
        for student, (where, peak) in peaks.items()
        if where in medians and peak < fraction * medians[where]
    }


def measured_peaks(graded_directories: Mapping[str, Path]) -> dict[str, tuple[str, float]]:
    """student -> (machine and CPU, the lowest FMA peak among its timed results), read from the
    trusted grader's record in each autograded notebook; a student with none is left out."""
    peaks: dict[str, tuple[str, float]] = {}
    for student, directory in graded_directories.items():
        for _, result in _graded_results(directory):
            where, peak = f"{result.get('machine')}/{result.get('cpu')}", result.get("peak_gflops")
            if isinstance(peak, (int, float)) and not isinstance(peak, bool) and math.isfinite(peak) and peak > 0:
                if student not in peaks or peak < peaks[student][1]:
                    peaks[student] = (where, float(peak))
    return peaks


def earlier_speeds(coursedir, assignment: str, submissions) -> dict[str, dict[str, dict]]:
    """student -> answer grade_id -> the speed of the grading already made of the very same
    submission (its graded copy records the digest it had: submissions.record_graded), for the
    trusted grader to keep where a re-timing does not decide otherwise (nbgrader_ext/steady.py).
    Read before this run overwrites the graded copies; a changed submission has none."""
    from ..nbgrader_ext.steady import Earlier
    from .submissions import graded_directory, submission_digest
    from .submissions import graded_record as graded_digest

    found: dict[str, dict[str, dict]] = {}
    for submission in submissions:
        directory = graded_directory(coursedir, assignment, submission.student)
        if not directory.is_dir() or graded_digest(directory) != submission_digest(submission.directory):
            continue
        speeds = {}
        for grade_id, result in _graded_results(directory):
            earlier = Earlier.from_result(result)
            if earlier is not None:
                speeds[str(grade_id)] = earlier.to_dict()
        if speeds:
            found[submission.student] = speeds
    return found


def retimed_notes(graded_directories: Mapping[str, Path]) -> dict[str, str]:
    """student -> what a re-timing did to their speed band (steady.py's note in the new record)."""
    notes: dict[str, str] = {}
    for student, directory in graded_directories.items():
        for _, result in _graded_results(directory):
            note = result.get("retimed")
            if isinstance(note, str) and note:
                notes[student] = note[:400]
    return notes


def _graded_results(directory: Path):
    """(answer grade_id, result dict) for each schedule the trusted grader recorded in a graded copy."""
    for path in sorted(Path(directory).glob("*.ipynb")):
        record = graded_record(path)
        if record is not None:
            yield from record["results"].items()
