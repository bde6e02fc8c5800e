"""The course map (`course/syllabus.yaml`): loading, validation, and the text `tvm-course map` prints.

Loading checks the file's shape and raises `SyllabusError` with the offending key; `problems()`
then checks what only the repository can tell: that every path exists, ids are unique, each
assignment names a known autograder problem and comes after a lesson of its own unit.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from .errors import ExitCode, TvmCourseError

DEFAULT_PATH = Path(__file__).resolve().parent.parent / "course" / "syllabus.yaml"
# Where `make student-quizzes` writes the student copies of the quizzes (`tvm-course quiz release`:
# answers as salted hashes), one per quiz, named after the quiz file; ignored by git.
STUDENT_QUIZZES_DIR = "build/student-quizzes"


class SyllabusError(ValueError, TvmCourseError):
    """The syllabus file cannot be read as a course map."""

    exit_code = ExitCode.USAGE_ERROR


@dataclass(frozen=True)
class Lesson:
    id: str
    title: str
    notebook: str
    quiz: str  # the instructor copy, with the answers in plain text: never what a student opens

    @property
    def student_quiz(self) -> str:
        """The student copy of the quiz that `make student-quizzes` writes (relative to the root)."""
        return f"{STUDENT_QUIZZES_DIR}/{Path(self.quiz).name}"


@dataclass(frozen=True)
class Assignment:
    id: str
    title: str
    notebook: str
    problem: str
    after: str  # id of the lesson a student should finish first

    @property
    def graded_on(self) -> str:
        """What the class run grades, in the words the website uses ("graded ..."); the map
        prints `how_graded` under the label "graded"."""
        return f"graded {self.how_graded}"

    @property
    def how_graded(self) -> str:
        from .costmodel import NAME as COST_MODEL

        if self.problem == COST_MODEL:
            return "on how well your model ranks schedule candidates and how soon it steers a search to a fast one"
        return f"as problem {self.problem}"

    @property
    def check_it(self) -> tuple[str, str]:
        """How a student checks their work before handing it in: (a sentence's start, then the code to run)."""
        from .costmodel import NAME as COST_MODEL

        if self.problem == COST_MODEL:  # a model, not a schedule: grade-schedule cannot check it
            return "Check your model on your own machine with the notebook's self-check cell", "self_check(features, Model)"
        return "Try a schedule any time", f"tvm-course grade-schedule {self.problem} my_schedule.py"


@dataclass(frozen=True)
class Unit:
    id: str
    title: str
    summary: str
    lessons: tuple[Lesson, ...]
    assignments: tuple[Assignment, ...]


@dataclass(frozen=True)
class Syllabus:
    course: str
    units: tuple[Unit, ...]
    source: Path  # the file it was read from

    def paths(self) -> list[tuple[str, str]]:
        """(what, path) for every file the syllabus names, in course order."""
        found = []
        for unit in self.units:
            for lesson in unit.lessons:
                found += [(f"lesson {lesson.id}", lesson.notebook), (f"quiz of lesson {lesson.id}", lesson.quiz)]
            found += [(f"assignment {a.id}", a.notebook) for a in unit.assignments]
        return found


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise SyllabusError(f"{where}: expected a mapping, got {type(value).__name__}")
    return value


def _text(entry: dict, key: str, where: str) -> str:
    if key not in entry:
        raise SyllabusError(f"{where}: missing key '{key}'")
    value = entry[key]
    if not isinstance(value, str) or not value.strip():
        raise SyllabusError(f"{where}.{key}: expected a non-empty string")
    return value.strip()


def _list(entry: dict, key: str, where: str) -> list:
    value = entry.get(key, [])
    if not isinstance(value, list):
        raise SyllabusError(f"{where}.{key}: expected a list")
    return value


def _unknown_keys(entry: dict, allowed: set[str], where: str) -> None:
    extra = sorted(set(entry) - allowed)
    if extra:
        raise SyllabusError(f"{where}: unknown key(s) {', '.join(extra)}; allowed: {', '.join(sorted(allowed))}")


def parse(data, source: Path = DEFAULT_PATH) -> Syllabus:
    top = _mapping(data, "syllabus")
    _unknown_keys(top, {"course", "units"}, "syllabus")
    units = []
    for u_index, raw_unit in enumerate(_list(top, "units", "syllabus")):
        where = f"units[{u_index}]"
        unit = _mapping(raw_unit, where)
        _unknown_keys(unit, {"id", "title", "summary", "lessons", "assignments"}, where)
        lessons = []
        for l_index, raw in enumerate(_list(unit, "lessons", where)):
            at = f"{where}.lessons[{l_index}]"
            entry = _mapping(raw, at)
            _unknown_keys(entry, {"id", "title", "notebook", "quiz"}, at)
            lessons.append(Lesson(*(_text(entry, k, at) for k in ("id", "title", "notebook", "quiz"))))
        assignments = []
        for a_index, raw in enumerate(_list(unit, "assignments", where)):
            at = f"{where}.assignments[{a_index}]"
            entry = _mapping(raw, at)
            _unknown_keys(entry, {"id", "title", "notebook", "problem", "after"}, at)
            assignments.append(Assignment(*(_text(entry, k, at) for k in ("id", "title", "notebook", "problem", "after"))))
        units.append(
            Unit(
                _text(unit, "id", where),
                _text(unit, "title", where),
                _text(unit, "summary", where) if "summary" in unit else "",
                tuple(lessons),
                tuple(assignments),
            )
        )
    if not units:
        raise SyllabusError("syllabus: no units")
    return Syllabus(_text(top, "course", "syllabus"), tuple(units), source)


def load(path: str | Path = DEFAULT_PATH) -> Syllabus:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SyllabusError(f"cannot read {path}: {error}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise SyllabusError(f"{path} is not valid YAML: {error}") from None
    return parse(data, path)


def course_root(syllabus: Syllabus) -> Path:
    """The directory the syllabus paths are relative to: the one holding `course/syllabus.yaml`."""
    return syllabus.source.resolve().parent.parent


def problems(syllabus: Syllabus, root: str | Path | None = None) -> list[str]:
    """Everything wrong with the syllabus against the repository at `root` (empty when all is well)."""
    from .costmodel import NAME as COST_MODEL
    from .problems import PROBLEMS

    known = [*PROBLEMS, COST_MODEL]  # the schedule problems, and the cost-model assignment's

    root = Path(root) if root is not None else course_root(syllabus)
    found = []
    for what, relative in syllabus.paths():
        if Path(relative).is_absolute():
            found.append(f"{what}: {relative} must be relative to the repository root")
        elif not (root / relative).is_file():
            found.append(f"{what}: {relative} does not exist")
    suffixes = {"notebook": ".ipynb", "quiz": ".yaml"}
    for unit in syllabus.units:
        for lesson in unit.lessons:
            for field, suffix in suffixes.items():
                if not getattr(lesson, field).endswith(suffix):
                    found.append(f"lesson {lesson.id}: {field} {getattr(lesson, field)} should end in {suffix}")
            quiz_id = _quiz_id(root / lesson.quiz)
            if quiz_id is not None and quiz_id != Path(lesson.quiz).stem:
                found.append(f"quiz of lesson {lesson.id}: its id {quiz_id!r} should match its file name "
                             f"{Path(lesson.quiz).name} (students get it as {lesson.student_quiz})")
        lesson_ids = {lesson.id for lesson in unit.lessons}
        for assignment in unit.assignments:
            if not assignment.notebook.endswith(".ipynb"):
                found.append(f"assignment {assignment.id}: notebook {assignment.notebook} should end in .ipynb")
            if assignment.problem not in known:
                found.append(f"assignment {assignment.id}: unknown problem {assignment.problem!r} (known: {', '.join(known)})")
            if assignment.after not in lesson_ids:
                found.append(f"assignment {assignment.id}: 'after' names {assignment.after!r}, not a lesson of unit {unit.id}")
    ids = [u.id for u in syllabus.units] + [x.id for u in syllabus.units for x in (*u.lessons, *u.assignments)]
    for duplicate in sorted({i for i in ids if ids.count(i) > 1}):
        found.append(f"id {duplicate!r} is used more than once")
    return found


def _quiz_id(path: Path) -> str | None:
    """The `id` of the quiz file at `path`, or None where it cannot be read (reported elsewhere)."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
    return data.get("id") if isinstance(data, dict) and isinstance(data.get("id"), str) else None


def render(syllabus: Syllabus, root: str | Path | None = None) -> str:
    """The course map as text, each path marked when it is missing."""
    root = Path(root) if root is not None else course_root(syllabus)

    def path(relative: str) -> str:
        return relative if (root / relative).is_file() else f"{relative}  (missing)"

    lines = [syllabus.course, "=" * len(syllabus.course)]
    for number, unit in enumerate(syllabus.units, start=1):
        lines += ["", f"Unit {number}: {unit.title}  [{unit.id}]"]
        if unit.summary:
            lines.append(f"  {unit.summary}")
        for index, lesson in enumerate(unit.lessons, start=1):
            lines += [
                "",
                f"  Lesson {index}: {lesson.title}  [{lesson.id}]",
                f"    notebook    {path(lesson.notebook)}",
                f"    quiz        {lesson.student_quiz}  (the student copy: make student-quizzes;",
                "                or at the end of the lesson's page on the course website, make site)",
                f"                take it: tvm-course quiz take {lesson.student_quiz}",
                f"    instructor  {path(lesson.quiz)}  (holds the answers)",
            ]
        for assignment in unit.assignments:
            lines += [
                "",
                f"  Assignment: {assignment.title}  [{assignment.id}]",
                f"    notebook    {path(assignment.notebook)}",
                f"    after       lesson {assignment.after}",
                f"    graded      {assignment.how_graded}",
                f"    check it    {': '.join(assignment.check_it)}",
            ]
    return "\n".join(lines)
