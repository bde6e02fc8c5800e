"""Sample submissions bundled with the course (course/samples/ASSIGNMENT/STUDENT.yaml).

A sample says what a student changed in the released notebook: the source of answer cells
(by grade_id), and, for the tampering samples, the source of locked cells too. Building a
submission from the current release keeps the samples valid when the assignment changes. Each
sample also says what it should score, per test cell, so the demo can show expected against
got and the tests can assert it; a [low, high] range is for points that depend on timing.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import nbformat
import yaml

from ..errors import TvmCourseError

SAMPLES_DIR = "samples"


class SampleError(ValueError, TvmCourseError):
    """A sample file does not fit the assignment; the message names the file and the cell."""


@dataclass(frozen=True)
class Sample:
    student: str
    assignment: str
    about: str
    answers: dict[str, str]  # answer cell grade_id -> source
    tampered: dict[str, str] = field(default_factory=dict)  # locked cell grade_id -> source
    expected: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)  # grade_id -> range
    expected_status: str | None = None  # the schedule's Result status

    def expects(self, grade_id: str, points: float | None) -> bool:
        low, high = self.expected[grade_id]
        if low is None or points is None:
            return low is None and points is None
        return low - 1e-6 <= points <= high + 1e-6

    def mismatches(self, parts: dict[str, float | None], status: str) -> list[str]:
        """How a graded submission of this sample differs from what the sample file expects."""
        wrong = [
            f"{grade_id} got {parts.get(grade_id)}, expected {'pending' if low is None else low if low == high else f'{low}-{high}'}"
            for grade_id, (low, high) in self.expected.items()
            if not self.expects(grade_id, parts.get(grade_id))
        ]
        if self.expected_status and status != self.expected_status:
            wrong.append(f"status {status}, expected {self.expected_status}")
        return wrong


def load_samples(course_root: Path, assignment: str) -> list[Sample]:
    directory = Path(course_root) / SAMPLES_DIR / assignment
    if not directory.is_dir():
        raise SampleError(f"no samples for {assignment!r}: {directory} does not exist")
    return [_load(path, assignment) for path in sorted(directory.glob("*.yaml"))]


def _load(path: Path, assignment: str) -> Sample:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise SampleError(f"{path}: {error}") from error
    if not isinstance(data, dict) or not isinstance(data.get("answers"), dict):
        raise SampleError(f"{path}: a sample is a mapping with at least 'answers' (answer cell grade_id -> source)")
    expected = {}
    for grade_id, value in (data.get("expected") or {}).items():
        if value == "pending":
            expected[grade_id] = (None, None)
        elif isinstance(value, list) and len(value) == 2:
            expected[grade_id] = (float(value[0]), float(value[1]))
        elif isinstance(value, (int, float)):
            expected[grade_id] = (float(value), float(value))
        else:
            raise SampleError(f"{path}: expected[{grade_id}] is points, [low, high] or 'pending', not {value!r}")
    return Sample(
        student=path.stem,
        assignment=assignment,
        about=" ".join(str(data.get("about", "")).split()),
        answers={k: str(v) for k, v in data["answers"].items()},
        tampered={k: str(v) for k, v in (data.get("tampered") or {}).items()},
        expected=expected,
        expected_status=data.get("status"),
    )


def build_submission(released, sample: Sample):
    """The released notebook as `sample`'s student would hand it in."""
    notebook = copy.deepcopy(released)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    for grade_id, source in sample.answers.items():
        cell = cells.get(grade_id)
        if cell is None or not cell.metadata["nbgrader"].get("solution"):
            raise SampleError(f"sample {sample.student}: {grade_id!r} is not an answer cell of {sample.assignment}")
        cell.source = source.rstrip("\n")
    for grade_id, source in sample.tampered.items():
        cell = cells.get(grade_id)
        if cell is None or not cell.metadata["nbgrader"].get("locked"):
            raise SampleError(f"sample {sample.student}: {grade_id!r} is not a locked cell of {sample.assignment}")
        cell.source = source.rstrip("\n")
    return notebook


def submit(coursedir, sample: Sample, student: str | None = None, when: datetime | None = None) -> Path:
    """Write `sample` as a collected submission (submitted/STUDENT/ASSIGNMENT/), like `nbgrader collect`."""
    release = Path(coursedir.format_path(coursedir.release_directory, ".", sample.assignment))
    notebooks = sorted(release.glob("*.ipynb"))
    if len(notebooks) != 1:
        found = "none" if not notebooks else ", ".join(p.name for p in notebooks)
        raise SampleError(f"samples are for released assignments of one notebook; {release} holds {found}")
    target = Path(coursedir.format_path(coursedir.submitted_directory, student or sample.student, sample.assignment))
    target.mkdir(parents=True, exist_ok=True)
    for path in notebooks:
        released = nbformat.read(path, as_version=4)
        nbformat.write(build_submission(released, sample), target / path.name)
    stamp = (when or datetime.now(timezone.utc)).strftime("%Y-%m-%d %H:%M:%S.%f %Z")
    (target / "timestamp.txt").write_text(stamp, encoding="utf-8")
    return target
