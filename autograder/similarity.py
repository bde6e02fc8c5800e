"""Similarity hints for the instructor, after a grading run: which submissions' schedules are
the same, or nearly, up to the workload's shape. A hint where to look, never a verdict.

What is compared is what a schedule does, not the instructions that say it: the trusted
grader keeps, with each grade, the outline of the loop nest the schedule leaves on the
problem's default workload (engine/nest_outline.py: loops by depth, extent and kind, each
block's bindings, unit loops left out), so instructions that change nothing (a one-loop fuse,
a split by 1, add_unit_loop, annotate then unannotate, ...) change nothing here either, and a
copy on another student's variant reads the same. Grades kept before loop nests were (only a
trace outline, engine/trace_outline.py) are compared by their instructions, among themselves.
Per answer cell:

- submissions whose outlines are identical form a group (two students, or a cluster of more);
- two groups are near when their outlines differ in at most NEAR of the lines of the longer
  one (the edit distance on the lines: a line inserted, deleted or changed counts one). With
  NEAR = 0.2 that is one line in five: two outlines shorter than five lines are never near,
  since there is too little in them to tell copies apart;
- what the lessons and the package show everyone is shared material, not a sign of copying:
  the yardsticks (problems/yardsticks.py), the journal's tiling (examples/journal.py), its
  steps and its variants in the lessons (lessons/schedules.py), and no schedule at all. A
  group with a shared schedule, and a near pair both of whose sides are that close to shared
  material, are listed apart, as such. A group equal to the course's own reference solution
  (COURSE/solutions/*.py, which students do not see) says so: that is the assignment's goal.

Students who read the same lessons write similar schedules, and a short schedule has few ways
to be written; the hints say where two submissions are worth reading side by side.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from .engine.trace_outline import MAX_LINE_CHARS, MAX_LINES
from .engine.untrusted_text import visible
from .nbgrader_ext.plan import METADATA_KEY
from .course.submissions import find_submissions, graded_directory

NEAR = 0.2  # the largest share of differing instructions for two outlines to be near
LIMIT = 20  # groups and pairs listed per section of the text
MAX_NAMES = 12  # students named per group


# What an outline is made of: the loop nest a schedule leaves (nest_outline.py), or, in grades
# kept before those were, the trace's instructions (trace_outline.py). Never compared across.
NEST, TRACE = "loop nest", "instructions"
UNITS = {NEST: "loop-nest lines", TRACE: "instructions"}


@dataclass(frozen=True)
class Outlined:
    student: str
    cell: str  # notebook/grade_id of the schedule's answer cell
    problem: str
    outline: tuple[str, ...]
    kind: str = NEST


@dataclass
class Group:
    """Submissions of one answer cell with identical outlines."""

    outline: tuple[str, ...]
    students: list[str]
    shared: str | None = None  # the shared material it equals
    close_to: str | None = None  # the shared material it is near (not equal to)
    solution: str | None = None  # the course's reference solution it equals


@dataclass
class NearPair:
    first: Group
    second: Group
    distance: int  # instructions inserted, deleted or changed
    length: int  # instructions in the longer outline

    @property
    def shared(self) -> bool:
        """Both sides equal or are near shared material: the lessons, not each other."""
        return all(g.shared is not None or g.close_to is not None for g in (self.first, self.second))


@dataclass
class CellHints:
    cell: str
    problem: str
    compared: int  # submissions of this cell with an outline
    threshold: float = NEAR  # the `near` the pairs were found with
    kind: str = NEST  # what the outlines are made of
    groups: list[Group] = field(default_factory=list)  # two students or more each
    near: list[NearPair] = field(default_factory=list)

    @property
    def suspicious(self) -> tuple[list[Group], list[NearPair]]:
        """What is worth a look: groups and near pairs not explained by shared material."""
        return [g for g in self.groups if g.shared is None], [p for p in self.near if not p.shared]


# ---- reading the trusted records ---------------------------------------------------------


def read_outlines(coursedir, assignment: str) -> list[Outlined]:
    """Every graded schedule of `assignment` with an outline, from the autograded notebooks."""
    found = []
    for submission in find_submissions(coursedir, assignment):
        graded = graded_directory(coursedir, assignment, submission.student)
        for path in sorted(graded.glob("*.ipynb")):
            try:
                record = json.loads(path.read_text(encoding="utf-8")).get("metadata", {}).get(METADATA_KEY, {})
                results = record.get("results", {})
            except (OSError, ValueError, AttributeError):
                continue
            if not isinstance(results, dict):
                continue
            for grade_id, result in sorted(results.items()):
                for kind, key in ((NEST, "schedule_outline"), (TRACE, "trace_outline")):
                    outline = _outline_of(result, key)
                    if outline is not None:
                        found.append(Outlined(submission.student, f"{path.stem}/{grade_id}", str(result.get("problem", "?")), outline, kind))
                        break
    return found


def _outline_of(result, key: str = "trace_outline") -> tuple[str, ...] | None:
    """The record's outline under `key`, if it is one (a list of short strings, as the grader bounds it)."""
    outline = result.get(key) if isinstance(result, dict) else None
    if not isinstance(outline, list) or len(outline) > MAX_LINES or not all(
        isinstance(line, str) and len(line) <= MAX_LINE_CHARS for line in outline
    ):
        return None
    return tuple(outline)


# ---- shared material ---------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def shared_outlines() -> dict[tuple[str, ...], str]:
    """Outline -> what it is, for every schedule the package and the lessons show students
    (both kinds of outline: they never coincide)."""
    from .lessons import schedules
    from .problems import PROBLEMS
    from .problems.yardsticks import YARDSTICKS

    shown = {"the journal's tiling, shown in the lessons": schedules.example("journal")}
    for problem in PROBLEMS.values():
        shown[f"the yardstick of {problem.name} ({problem.yardstick_title}), shown in the lessons"] = YARDSTICKS[problem.yardstick]
    for step in range(1, 4):
        shown[f"the journal's tiling to step {step} ({schedules.JOURNAL_STEP_NAMES[step]}), shown in lesson 2"] = schedules.journal_steps(step)
    shown["the journal's tiling with Add and ReLU vectorised, shown in lesson 2"] = schedules.journal_with_vectorized_tail
    shown["the padding inlined into the conv, shown in lesson 1"] = schedules.pad_inlined
    shown["no schedule at all (the unscheduled function)"] = _unscheduled
    outlines = {}
    for label, function in reversed(shown.items()):
        outlines.update(dict.fromkeys(outlines_of_schedule(function), label))
    outlines[()] = "no schedule at all (the unscheduled function)"
    return outlines


def _unscheduled(sch) -> None:
    """No schedule at all."""


def solution_outlines(course_root: Path) -> dict[tuple[str, ...], str]:
    """Outline -> file, for the course's reference solutions (COURSE/solutions/*.py): trusted
    instructor code, run here on the pristine workload. A file that does not apply is skipped."""
    found = {}
    for path in sorted((Path(course_root) / "solutions").glob("*.py")):
        namespace: dict = {"__name__": f"solutions.{path.stem}"}
        try:
            exec(compile(path.read_text(encoding="utf-8"), str(path), "exec"), namespace)
            found.update(dict.fromkeys(outlines_of_schedule(namespace["schedule"]), f"solutions/{path.name}"))
        except Exception:  # an instructor's work in progress: no note rather than no hints
            continue
    return found


def outlines_of_schedule(function) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Both outlines of what `function(sch)` does to the course's default workload, as the
    grader makes them: the loop nest (what the hints compare) and the trace's instructions."""
    from tvm import s_tir

    from .engine.nest_outline import outline_function
    from .engine.replay import trace_to_json
    from .engine.trace_outline import outline_trace
    from .problems.workload import fused_primfunc

    schedule = s_tir.Schedule(fused_primfunc())
    function(schedule)
    return (tuple(outline_function(schedule.mod["main"])),
            tuple(outline_trace(json.loads(json.dumps(trace_to_json(schedule.trace))))))


# ---- pairing -----------------------------------------------------------------------------


def find_hints(entries: list[Outlined], shared: dict[tuple[str, ...], str] | None = None,
               solutions: dict[tuple[str, ...], str] | None = None, near: float = NEAR) -> list[CellHints]:
    """Groups of identical outlines and near pairs, per answer cell, sorted; `shared` and
    `solutions` map outlines to what they are (see the module's docstring)."""
    shared, solutions = shared or {}, solutions or {}
    by_cell: dict[tuple[str, str, str], dict[tuple[str, ...], list[str]]] = {}
    for entry in entries:
        by_cell.setdefault((entry.cell, entry.problem, entry.kind), {}).setdefault(entry.outline, []).append(entry.student)
    hints = []
    for (cell, problem, kind), outlines in sorted(by_cell.items()):
        everyone = [
            Group(outline, sorted(set(students)), shared.get(outline), _close_to(outline, shared, near), solutions.get(outline))
            for outline, students in outlines.items()
        ]
        result = CellHints(cell, problem, sum(len(g.students) for g in everyone), near, kind)
        result.groups = sorted((g for g in everyone if len(g.students) > 1), key=_group_order)
        for i, first in enumerate(everyone):
            for second in everyone[i + 1:]:
                length = max(len(first.outline), len(second.outline))
                distance = edit_distance(first.outline, second.outline, _allowed(near, length))
                if distance is not None and 0 < distance:
                    a, b = sorted((first, second), key=lambda g: (-len(g.students), g.students))
                    result.near.append(NearPair(a, b, distance, length))
        result.near.sort(key=lambda p: (p.shared, p.distance / p.length, p.first.students, p.second.students))
        hints.append(result)
    return hints


def _group_order(group: Group):
    return (group.shared is not None, -len(group.students), group.students)


def _close_to(outline: tuple[str, ...], shared: dict[tuple[str, ...], str], near: float) -> str | None:
    if outline in shared:
        return None
    best = None
    for other, label in shared.items():
        distance = edit_distance(outline, other, _allowed(near, max(len(outline), len(other))))
        if distance is not None and (best is None or (distance, label) < best):
            best = (distance, label)
    return best[1] if best else None


def _allowed(near: float, length: int) -> int:
    """The most instructions two outlines may differ in to be near (0.2 of 10 is 2, not 1.99...)."""
    return int(near * length + 1e-9)


def edit_distance(a: tuple[str, ...], b: tuple[str, ...], limit: int) -> int | None:
    """Lines inserted, deleted or changed to turn `a` into `b`, or None when more than `limit`
    (computed in a band of width 2*limit+1 around the diagonal, so far pairs cost little)."""
    if abs(len(a) - len(b)) > limit:
        return None
    beyond = limit + 1
    previous = [j if j <= limit else beyond for j in range(len(b) + 1)]
    for i in range(1, len(a) + 1):
        current = [beyond] * (len(b) + 1)
        current[0] = i if i <= limit else beyond
        for j in range(max(1, i - limit), min(len(b), i + limit) + 1):
            cost = previous[j - 1] + (a[i - 1] != b[j - 1])
            current[j] = min(cost, previous[j] + 1, current[j - 1] + 1, beyond)
        if min(current) > limit:
            return None
        previous = current
    return previous[len(b)] if previous[len(b)] <= limit else None


# ---- text --------------------------------------------------------------------------------

HINT_NOTE = ("A hint where to look, never a verdict: students who read the same lessons write similar "
             "schedules, and a short schedule has few ways to be written.")


def format_hints(assignment: str, hints: list[CellHints], limit: int = LIMIT, shared_too: bool = True) -> str:
    """The hints as text: per answer cell, identical groups, near pairs, then shared material."""
    lines = [f"Similar schedules in {assignment} (what each schedule does compared: the loop nest it leaves on the "
             f"default workload, whatever instructions made it). {HINT_NOTE}"]
    if not hints:
        lines.append("  no graded submission has a schedule trace to compare")
    for cell in hints:
        groups, pairs = cell.suspicious
        older = " (graded before loop nests were kept: compared by their instructions)" if cell.kind == TRACE else ""
        lines.append(f"\n{cell.cell} ({cell.problem}): {cell.compared} submission(s) with a trace{older}")
        if not groups and not pairs:
            lines.append("  no two are the same or nearly, apart from shared material")
        unit = UNITS[cell.kind]
        _section(lines, "the same schedule (identical outlines):", [_group_text(g, unit) for g in groups], limit)
        _section(lines, f"nearly the same (at most {cell.threshold:.0%} of the {unit} differ):",
                 [_pair_text(p, unit) for p in pairs], limit)
        if shared_too:
            shared = [g for g in cell.groups if g.shared is not None]
            shared_pairs = [p for p in cell.near if p.shared]
            _section(lines, "shared material (the lessons show it to everyone; not a sign of copying):",
                     [f"{_names(g.students)}: identical; matches {g.shared}" for g in shared]
                     + [_shared_pair_text(p, unit) for p in shared_pairs], limit)
    return "\n".join(visible(line) for line in lines)


def _section(lines: list[str], title: str, items: list[str], limit: int) -> None:
    if not items:
        return
    lines.append(f"  {title}")
    lines.extend(f"    {item}" for item in items[:limit])
    if len(items) > limit:
        lines.append(f"    ... and {len(items) - limit} more (--limit N lists more)")


def _group_text(group: Group, unit: str) -> str:
    text = f"{_names(group.students)}: {len(group.outline)} {unit}"
    if group.close_to:
        text += f"; close to {group.close_to}"
    if group.solution:
        text += f"; this is the course's reference solution ({group.solution}), which students do not see: the assignment's goal, reachable independently"
    return text


def _pair_text(pair: NearPair, unit: str) -> str:
    text = f"{_names(pair.first.students)} ~ {_names(pair.second.students)}: {pair.distance} of {pair.length} {unit} differ"
    solution = pair.first.solution or pair.second.solution
    if solution and not pair.shared:
        text += f" (one side is the reference solution, {solution})"
    return text


def _shared_pair_text(pair: NearPair, unit: str) -> str:
    labels = list(dict.fromkeys(g.shared or g.close_to for g in (pair.first, pair.second)))
    return _pair_text(pair, unit) + f"; both at or near {' / '.join(labels)}"


def _names(students: list[str]) -> str:
    shown = ", ".join(students[:MAX_NAMES])
    return shown + (f" and {len(students) - MAX_NAMES} more" if len(students) > MAX_NAMES else "")


# ---- for the commands --------------------------------------------------------------------


def course_hints(coursedir, assignment: str, near: float = NEAR) -> list[CellHints]:
    """The hints for an assignment of a course, shared material and solutions recognised (TVM
    is imported only when there is something to compare)."""
    entries = read_outlines(coursedir, assignment)
    hints = find_hints(entries, near=near)
    if any(cell.groups or cell.near for cell in hints):
        hints = find_hints(entries, shared_outlines(), solution_outlines(Path(coursedir.root)), near)
    return hints


def grading_run_section(coursedir, assignment: str, limit: int = 5) -> str | None:
    """The short section `tvm-course grade` ends with, or None when nothing is worth a look."""
    hints = course_hints(coursedir, assignment)
    if not any(any(cell.suspicious) for cell in hints):
        return None
    text = format_hints(assignment, [c for c in hints if any(c.suspicious)], limit=limit, shared_too=False)
    return text + f"\n(shared material and everything else: tvm-course similar {assignment})"
