"""A working copy of the course, for the demo, the benchmark and the tests.

Copies the course's own files (config, source notebooks, samples) and none of nbgrader's
generated folders, so nothing the demo or a test generates lands in the repository; then
releases assignments and hands in samples there as students would.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from ..course.course_dir import CONFIG_FILE, CourseError, course_directory, load_course_config
from ..problems.variants import create_secret
from .samples import Sample, load_samples, submit

GENERATED = ("release", "submitted", "autograded", "feedback", "downloaded", "gradebook.db", "*.csv", "*.log", ".nbgrader.log", "__pycache__")
# Not copied either: a scratch course gets a secret of its own, and with it variants of its own.
PRIVATE = ("variant-secret",)
# The course in this repository: autograder/course/ -> repository root -> course/
BUNDLED_COURSE = Path(__file__).resolve().parents[2] / "course"


def copy_course(source: Path, destination: Path) -> Path:
    """Copy a course root without its generated output or its secret (the copy gets a new one);
    `destination` is replaced."""
    if not (Path(source) / CONFIG_FILE).is_file():
        raise CourseError(f"{source} is not a course root (no {CONFIG_FILE})")
    if destination.exists():
        shutil.rmtree(destination)
    shutil.copytree(source, destination, ignore=shutil.ignore_patterns(*GENERATED, *PRIVATE))
    create_secret(destination)
    return destination


def release_assignment(root: Path, assignment: str, students: list[str] | None = None) -> Path:
    """`nbgrader generate_assignment ASSIGNMENT --force`, through nbgrader's API, after enrolling
    `students` (default: the assignment's samples) so that variants.json lists theirs."""
    from nbgrader.api import Gradebook
    from nbgrader.apps.api import NbGraderAPI

    config = load_course_config(root)
    coursedir = course_directory(config)
    if students is None:
        students = [s.student for s in load_samples(root, assignment)] if (Path(root) / "samples" / assignment).is_dir() else []
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        for student in students:
            gradebook.update_or_create_student(student)
    outcome = NbGraderAPI(coursedir=coursedir, config=config).generate_assignment(assignment, force=True, create=True)
    if not outcome.get("success"):
        raise CourseError(f"releasing {assignment} failed:\n{(outcome.get('error') or outcome.get('log') or '')[-2000:]}")
    return Path(coursedir.format_path(coursedir.release_directory, ".", assignment))


def submit_samples(root: Path, assignment: str, total: int | None = None, only: list[str] | None = None,
                   mix: dict[str, int] | None = None) -> dict[str, Sample]:
    """Hand in the assignment's samples, `total` submissions in all (cycling through them: STUDENT,
    then STUDENT-2, ...; with `mix`, sample name -> how many of each cycle are that sample's);
    returns student -> sample."""
    coursedir = course_directory(load_course_config(root))
    wanted = list(mix) if mix else only
    samples = {s.student: s for s in load_samples(root, assignment) if not wanted or s.student in wanted}
    missing = sorted(set(wanted or []) - set(samples))
    if missing or not samples:
        raise CourseError(f"no sample named {', '.join(missing) or 'at all'} for {assignment}")
    cycle = [samples[name] for name in mix_cycle(mix)] if mix else list(samples.values())
    submitted, handed_in = {}, {}
    for index in range(total if total is not None else len(cycle)):
        sample = cycle[index % len(cycle)]
        handed_in[sample.student] = handed_in.get(sample.student, 0) + 1
        student = sample.student if handed_in[sample.student] == 1 else f"{sample.student}-{handed_in[sample.student]}"
        submit(coursedir, sample, student)
        submitted[student] = sample
    return submitted


def mix_cycle(mix: dict[str, int]) -> list[str]:
    """One cycle of a class's mix (sample name -> turns per cycle), each sample's turns spread
    evenly over it, so that the first N submissions of a class keep its proportions."""
    turns = sorted(((j + 0.5) / count, index, name) for index, (name, count) in enumerate(mix.items()) for j in range(count))
    return [name for _, _, name in turns]


LEAK_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def release_leaks(release: Path) -> list[str]:
    """Solution or hidden-test markers, or the grading plan's metadata (with the answer key),
    left in a released assignment (there should be none)."""
    import nbformat

    from ..nbgrader_ext.plan import METADATA_KEY

    leaks = []
    for path in sorted(Path(release).glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        if METADATA_KEY in notebook.metadata:
            leaks.append(f"{path.name}: '{METADATA_KEY}' notebook metadata")
        for index, cell in enumerate(notebook.cells):
            leaks += [f"{path.name} cell {index}: {marker}" for marker in LEAK_MARKERS if marker in cell.source]
            if METADATA_KEY in cell.get("metadata", {}):
                leaks.append(f"{path.name} cell {index}: '{METADATA_KEY}' metadata (the grading plan and answer key)")
    return leaks
