"""The assignment's source notebooks against what was generated from them: the gradebook's cells
and release/ASSIGNMENT/ (issue 36, item 10). The class run's check stage warns, once and before
grading, when the source was edited after `nbgrader generate_assignment`, naming what changed
and what to run.

What "what was generated" means is nbgrader's own: the source is run through the steps of
`nbgrader generate_assignment` that come before SaveCells (header and footer, InstantiateTests,
LockCells, ClearSolutions, ClearOutput, CheckCellMetadata, ComputeChecksums), with the course's
configuration, and each cell nbgrader records (grade, solution, locked or task cell) is compared
with the gradebook's row of it: its checksum (utils.compute_checksum: text, cell type, flags,
grade_id, points), its text, type, flags and points. The steps after SaveCells (ClearHiddenTests,
ClearMarkScheme, ComputeChecksums) then give the notebook as it would be released, compared cell
by cell (type and text, in order) with release/ASSIGNMENT/NAME.ipynb: an edit of a cell nbgrader
does not mark (instructions in plain markdown) is only there. SaveCells is never run: nothing is
written. Nor are the course's own steps after nbgrader's (StripInstructorMetadata,
WriteVariantsTable): they change metadata and write files, not cells.

Not compared, so never a warning: outputs, execution counts and other metadata (ClearOutput
clears them, and no checksum covers them), nbformat cell ids, file times (saving a notebook in
Jupyter, a checkout or a copy change them without changing a cell), and the grading plan's
metadata, which the run reads from the source itself (nbgrader_ext/plan.py). A notebook with
InstantiateTests' autotest delimiters would need a kernel to be expanded: its cells are compared
by their names, flags and points only.

Why the run goes on grading after the warning: it grades, as it always does, against the
gradebook's cells (normalise.py), which are what was released; the warning says so. Grades
already in the gradebook are not touched, and a submission graded in this run is graded as the
ones before it were, so no grade is lost or changed without the instructor's command, and a
half-finished edit of the source (or one meant for next term) does not hold up the class.
"""
from __future__ import annotations

import copy
import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader import utils
from nbgrader.api import Gradebook
from nbgrader.converters import GenerateAssignment
from nbgrader.preprocessors import IncludeHeaderFooter, InstantiateTests, SaveCells

MAX_NAMED = 8  # cells named per notebook, then "and N more"


@dataclass
class NotebookEdits:
    """How one source notebook differs from what was generated; empty lists: it does not."""

    name: str  # without .ipynb
    changed: dict[str, str] = field(default_factory=dict)  # grade_id -> what changed, against the gradebook
    added: list[str] = field(default_factory=list)  # grade_ids marked in the source, not in the gradebook
    removed: list[str] = field(default_factory=list)  # in the gradebook, gone from the source
    release: list[str] = field(default_factory=list)  # what differs from release/ only (the gradebook agrees)
    problem: str = ""  # the notebook could not be compared: why

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed or self.release or self.problem)


@dataclass
class SourceEdits:
    """The assignment's source notebooks against the gradebook and release/."""

    assignment: str
    notebooks: list[NotebookEdits]
    added: list[str]  # notebooks in the source that the gradebook does not have
    removed: list[str]  # notebooks in the gradebook gone from the source
    submissions: int  # submissions the gradebook holds of the assignment

    @property
    def graded_cells_differ(self) -> bool:
        """Whether grading would change: the gradebook's cells are not the source's."""
        return bool(self.added or self.removed or any(n.changed or n.added or n.removed or n.problem for n in self.notebooks))


def compare(coursedir, config, assignment: str) -> SourceEdits:
    """The assignment's source notebooks against its gradebook entry and release/ (the gradebook
    must hold the assignment: the run checks that first)."""
    source = Path(coursedir.format_path(coursedir.source_directory, ".", assignment))
    release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        stored = gradebook.find_assignment(assignment)
        recorded = {n.name: _recorded_cells(n) for n in stored.notebooks}
        submissions = len(stored.submissions)
    names = {p.stem for p in source.glob("*.ipynb")}
    notebooks = []
    for name in sorted(names & set(recorded)):
        notebooks.append(_compare_notebook(source / f"{name}.ipynb", release / f"{name}.ipynb", recorded[name], config,
                                           coursedir, assignment))
    return SourceEdits(assignment, [n for n in notebooks if n], sorted(names - set(recorded)), sorted(set(recorded) - names),
                       submissions)


def warning(edits: SourceEdits, root: Path) -> str | None:
    """The run's one warning about the edits, or None where the source is what was generated."""
    if not (edits.notebooks or edits.added or edits.removed):
        return None
    a = edits.assignment
    what = [f"notebook {_quote(n + '.ipynb')} added" for n in edits.added]
    what += [f"notebook {_quote(n + '.ipynb')} removed" for n in edits.removed] + [_describe(n) for n in edits.notebooks]
    if edits.graded_cells_differ:
        means = ("This run grades against the gradebook's cells as they are now, as released: submissions graded before "
                 "keep their grades, and those graded in this run are graded the same way")
    else:
        means = ("The gradebook's cells are the source's, so grades are not affected; students have the release's text, "
                 "and tampering is checked against it")
    fix = (f"To bring the release and the gradebook in line with the source, run in {root}: `nbgrader generate_assignment {a} "
           f"--force`, then, where students fetch through nbgrader's exchange, `nbgrader release_assignment {a} --force`")
    if edits.graded_cells_differ:
        fix += f"; then `tvm-course grade {a} --force` grades everyone against the fix"
    cells_in_or_out = edits.added or edits.removed or any(n.added or n.removed for n in edits.notebooks)
    if cells_in_or_out and edits.submissions:
        fix += (f". nbgrader's generate_assignment refuses to add or remove cells or notebooks while the gradebook holds "
                f"submissions of {a} ({edits.submissions}): put them back in the source and change only text and points, or "
                f"start {a} over in the gradebook with `nbgrader db assignment remove {a} --force` first, which deletes every "
                "grade of it, manual scores included")
    return f"the source of {a} was edited after `nbgrader generate_assignment` released it: {'; '.join(what)}. {means}. {fix}."


# ---------------------------------------------------------------- one notebook

def _recorded_cells(notebook) -> dict[str, dict]:
    """grade_id -> what the gradebook holds of each cell nbgrader recorded (SaveCells)."""
    points = {c.name: float(c.max_score) for c in notebook.grade_cells}
    tasks = {c.name: float(c.max_score) for c in notebook.task_cells}
    solutions = {c.name for c in notebook.solution_cells}
    return {c.name: {"checksum": c.checksum, "cell_type": c.cell_type, "source": c.source or "", "locked": bool(c.locked),
                     "grade": c.name in points, "solution": c.name in solutions, "task": c.name in tasks,
                     "points": points.get(c.name, tasks.get(c.name))}
            for c in notebook.source_cells}


def _generated_cells(notebook) -> dict[str, dict]:
    """grade_id -> the same, of a notebook as SaveCells would record it."""
    cells = {}
    for cell in notebook.cells:
        if utils.is_grade(cell) or utils.is_solution(cell) or utils.is_locked(cell) or utils.is_task(cell):
            marks = cell.metadata.nbgrader
            graded = utils.is_grade(cell) or utils.is_task(cell)
            cells.setdefault(marks["grade_id"], {
                "checksum": marks.get("checksum"), "cell_type": cell.cell_type, "source": cell.source,
                "locked": utils.is_locked(cell), "grade": utils.is_grade(cell), "solution": utils.is_solution(cell),
                "task": utils.is_task(cell), "points": float(marks["points"]) if graded else None,
            })
    return cells


def _compare_notebook(source: Path, released: Path, recorded: dict[str, dict], config, coursedir,
                      assignment: str) -> NotebookEdits:
    edits = NotebookEdits(source.stem)
    try:
        saved, expected, texts = _generate(source, config, coursedir, assignment)
    except Exception as error:  # noqa: BLE001 - generate_assignment would fail on it too: said, not raised
        edits.problem = (f"nbgrader cannot generate it as it is now ({error.__class__.__name__}: "
                         f"{str(error).strip().splitlines()[0][:200] if str(error).strip() else ''}): fix that first")
        return edits
    generated = _generated_cells(saved)
    edits.added = [g for g in generated if g not in recorded]
    edits.removed = [g for g in recorded if g not in generated]
    for grade_id in (g for g in generated if g in recorded):
        change = _cell_change(recorded[grade_id], generated[grade_id], texts)
        if change:
            edits.changed[grade_id] = change
    if texts:
        edits.release = _release_differences(expected, released, set(edits.changed) | set(edits.added) | set(edits.removed))
    return edits


def _cell_change(old: dict, new: dict, texts: bool) -> str:
    said = []
    if texts and old["source"] != new["source"]:
        said.append("text changed")
    if old["cell_type"] != new["cell_type"]:
        said.append(f"type {old['cell_type']} -> {new['cell_type']}")
    flags = [f for f in ("grade", "solution", "locked", "task") if old[f] != new[f]]
    if flags:
        said.append(", ".join(f"{'now' if new[f] else 'no longer'} {f}" for f in flags))
    if old["points"] != new["points"]:
        said.append(f"points {_points(old['points'])} -> {_points(new['points'])}")
    if not said and texts and old["checksum"] != new["checksum"]:
        said.append("checksum changed")
    return ", ".join(said)


def _generate(path: Path, config, coursedir, assignment: str):
    """The source notebook through nbgrader's generate_assignment steps, SaveCells left out:
    (as SaveCells would record it, as it would be released, whether its text is comparable)."""
    notebook = nbformat.read(path, as_version=4)  # as nbconvert reads it for generate_assignment
    resources = {"unique_key": path.stem, "output_files_dir": f"{path.stem}_files",
                 "metadata": {"name": path.stem, "path": str(path.parent)},
                 "nbgrader": {"student": ".", "assignment": assignment, "notebook": path.stem, "db_url": coursedir.db_url}}
    ours = GenerateAssignment.class_traits()["preprocessors"].default()
    steps = config.GenerateAssignment.get("preprocessors", ours) if "GenerateAssignment" in config else ours
    saved, texts = None, True
    for step in steps:
        if step is SaveCells:
            saved = copy.deepcopy(notebook)
            continue
        if step not in ours:  # the course's own steps: metadata and files, not cells
            continue
        preprocessor = step(config=config)
        if isinstance(preprocessor, IncludeHeaderFooter):  # its paths are relative to the course root
            for end in ("header", "footer"):
                if getattr(preprocessor, end) and not os.path.isabs(getattr(preprocessor, end)):
                    setattr(preprocessor, end, os.path.join(coursedir.root, getattr(preprocessor, end)))
        if isinstance(preprocessor, InstantiateTests) and any(
                c.cell_type == "code" and preprocessor.autotest_delimiter in c.source for c in notebook.cells):
            texts = False  # expanding autotests runs a kernel: not here
            continue
        notebook, resources = preprocessor(notebook, resources)
    return (notebook if saved is None else saved), notebook, texts


def _release_differences(expected, released: Path, named: set[str]) -> list[str]:
    """What release/ASSIGNMENT/NAME.ipynb has other than the source would give now, beyond the
    cells already named against the gradebook."""
    if not released.is_file():
        return [f"{released} is missing"]
    try:
        have = nbformat.read(released, as_version=4).cells
    except Exception as error:  # noqa: BLE001
        return [f"{released} cannot be read ({error.__class__.__name__})"]

    def key(cell):
        return (cell.cell_type, cell.source, (cell.metadata.get("nbgrader") or {}).get("grade_id"))

    old, new = [key(c) for c in have], [key(c) for c in expected.cells]
    if old == new:
        return []
    cells, unmarked = [], 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        unmarked += max(sum(g is None for *_, g in old[i1:i2]), sum(g is None for *_, g in new[j1:j2]))
        cells += [g for *_, g in old[i1:i2] + new[j1:j2] if g is not None and g not in named and g not in cells]
    said = [_quote(g) for g in cells] + ([f"{unmarked} unmarked cells" if unmarked > 1 else "an unmarked cell"] if unmarked else [])
    return [f"{_list(said) or 'the order of its cells'} differ{'s' * (len(cells) + unmarked == 1)} from {released}"]


def _describe(edits: NotebookEdits) -> str:
    if edits.problem:
        return f"{edits.name}.ipynb: {edits.problem}"
    items = [f"{_quote(g)} ({what})" for g, what in edits.changed.items()]
    items += [f"{_quote(g)} added" for g in edits.added] + [f"{_quote(g)} removed" for g in edits.removed]
    items = items[:MAX_NAMED] + ([f"and {len(items) - MAX_NAMED} more"] if len(items) > MAX_NAMED else [])
    return f"{edits.name}.ipynb: " + "; ".join(([", ".join(items)] if items else []) + edits.release)


def _list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1] if items else ""


def _points(value) -> str:
    return "none" if value is None else f"{value:g}"


def _quote(name: str) -> str:
    return f"'{name}'"
