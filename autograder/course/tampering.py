"""What a submission changed in the notebook it was released as: a hint for the instructor's review.

Autograde grades a submission from the source notebook's cells, taking from it only the text of
its answer cells by grade_id (nbgrader_ext/normalise.py): an edited locked cell, a changed type,
flag, grade_id or points, a removed cell and an added one are all graded as released, so none
of this can change a grade, and nothing here changes one. What it adds is that the instructor
is told. Each
submitted notebook, as collected (submitted/STUDENT/ASSIGNMENT/NAME.ipynb, which grading only
reads), is compared with the released one (release/ASSIGNMENT/NAME.ipynb), cell by cell:

- a locked cell is *edited* when nbgrader's own checksum of it (utils.compute_checksum: source,
  cell type, grade_id, points, grade/solution/locked flags) differs from the checksum the release
  carries; the note says which of those changed;
- an unlocked nbgrader cell (an answer cell) whose cell type, points or flags changed;
- cells removed, added (scratch cells, said neutrally: "2 cells added"; one that carries
  nbgrader's marks, a claim to be graded, by name), duplicated, moved, or whose grade_id or
  nbformat cell id changed.

A student's ordinary work is no change here: the source of answer cells and of the cells
nbgrader does not mark, outputs, execution counts, and any other metadata.

Why the release and not the gradebook's source cells: the gradebook holds a locked cell with
its hidden tests (and that source's checksum), the release without them, so every cell with
hidden tests would look edited; and only the release has the nbformat ids and unmarked cells.

A submission is untrusted input: it is decoded as autograde decodes it (notebook_file.py: a BOM,
UTF-16 or UTF-32, lone surrogates, deep nesting), and whatever it holds (not JSON, too large,
missing or odd metadata, duplicate ids, sources that are not text) gives a note, never an
exception, and every note is one line of at most MAX_NOTE characters, through untrusted_text.visible.
"""
from __future__ import annotations

import bisect
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader import utils

from ..engine.untrusted_text import visible
from ..nbgrader_ext.notebook_file import NotANotebook, read_json_file
from ..nbgrader_ext.released_names import misnamed, quoted

MAX_NOTE = 300  # characters of a submission's note
MAX_NAME = 40  # characters of one cell's name in a note
MAX_NAMED = 3  # cells named per kind of change, then "and N more"
FLAGS = ("grade", "solution", "locked", "task")


class _Unreadable(Exception):
    """A notebook that cannot be compared; the message says why (no text from the file)."""


@dataclass
class _Cell:
    index: int  # position in its notebook
    cell_type: str
    source: str
    id: str | None  # nbformat cell id
    nbgrader: dict | None  # metadata.nbgrader
    grade_id: str | None

    @property
    def node(self):
        """What nbgrader's utils expect of a cell."""
        return nbformat.from_dict({"cell_type": self.cell_type, "source": self.source, "metadata": {"nbgrader": self.nbgrader or {}}})

    def name(self) -> str:
        return _quote(self.grade_id or self.id) if (self.grade_id or self.id) else f"#{self.index + 1}"


class ReleasedAssignment:
    """The released notebooks of an assignment, read once; `changes` compares a submission with them."""

    def __init__(self, notebooks: dict[str, list[_Cell]], warnings: list[str]):
        self.notebooks = notebooks  # notebook name without .ipynb -> its cells
        self.warnings = warnings

    @classmethod
    def load(cls, coursedir, assignment: str) -> "ReleasedAssignment":
        release = Path(coursedir.format_path(coursedir.release_directory, ".", assignment))
        notebooks, warnings = {}, []
        for path in sorted(release.glob("*.ipynb")):
            try:
                notebooks[path.stem] = read_cells(path)
            except _Unreadable as why:
                warnings.append(f"the released {path} cannot be read ({why}): submissions of it are not compared with it")
        if not notebooks and not warnings:
            warnings.append(
                f"no released notebooks in {release}: submissions are not compared with what was released "
                "(edited locked cells and added or removed cells go unflagged)"
            )
        return cls(notebooks, warnings)

    def changes(self, submitted: Path) -> str:
        """What the submission in `submitted` (submitted/STUDENT/ASSIGNMENT) changed; "" for nothing."""
        if not self.notebooks:
            return ""
        try:
            return _bounded("; ".join(self._changes(Path(submitted))))
        except Exception as error:  # a bug here, or a folder that cannot be listed, must not cost the run its table
            return f"not compared with the release ({error.__class__.__name__})"

    def _changes(self, submitted: Path) -> list[str]:
        items = []
        several = len(self.notebooks) > 1
        handed_in = {p.stem: p for p in sorted(Path(submitted).glob("*.ipynb"))}
        stand_ins = {name: found.stand_in for name, found in misnamed(submitted, list(self.notebooks)).items() if found.stand_in}
        for name, stand_in in stand_ins.items():  # graded in its place (nbgrader_ext/released_names.py)
            items.append(f"notebook {_quote(name + '.ipynb')} handed in as {quoted(stand_in)}")
            handed_in[name] = Path(submitted) / stand_in
            handed_in.pop(stand_in[:-len(".ipynb")], None)
        for name, released in self.notebooks.items():
            if name not in handed_in:
                items.append(f"notebook {_quote(name + '.ipynb')} missing")
                continue
            try:
                notebook = _read_notebook(handed_in[name])
                found = notebook_changes(released, _cells_of(notebook), ids_in_format=_has_cell_ids(notebook))
            except _Unreadable as why:
                found = [f"not compared with the release: {why}"]
            items += [f"{name}.ipynb: {item}" if several else item for item in found]
        return items + [f"notebook {_quote(n + '.ipynb')} added" for n in handed_in if n not in self.notebooks]


def read_cells(path: Path) -> list[_Cell]:
    """The cells of the notebook at `path`, as JSON has them (nbformat's reader would repair ids),
    decoded as autograde decodes it (notebook_file.py: any JSON encoding, surrogates replaced)."""
    return _cells_of(_read_notebook(path))


def _read_notebook(path: Path) -> dict:
    try:
        return read_json_file(path)
    except NotANotebook as why:
        raise _Unreadable(str(why)) from None


def _cells_of(notebook: dict) -> list[_Cell]:
    if not isinstance(notebook.get("cells"), list):
        raise _Unreadable("not a notebook (no list of cells)")
    cells, odd = [], []
    for index, raw in enumerate(notebook["cells"]):
        cell = _cell(index, raw)
        if isinstance(cell, str):
            odd.append(f"#{index + 1} {cell}")
        else:
            cells.append(cell)
    if odd:
        raise _Unreadable(f"{len(odd)} malformed cell{'s' * (len(odd) > 1)} ({', '.join(odd[:MAX_NAMED])})")
    return cells


def _has_cell_ids(notebook: dict) -> bool:
    """Whether the notebook's format has cell ids: nbformat 4.5 and later. A notebook saved as 4.4
    or earlier (an older Jupyter, Colab) has none by its format, which is no change of the student's."""
    major, minor = notebook.get("nbformat"), notebook.get("nbformat_minor")
    if not (isinstance(major, int) and isinstance(minor, int)) or isinstance(major, bool) or isinstance(minor, bool):
        return True  # no version it could go by: missing ids are said
    return (major, minor) >= (4, 5)


def _cell(index: int, raw) -> _Cell | str:
    """A cell, or what is wrong with it."""
    if not isinstance(raw, dict):
        return "is not an object"
    cell_type, source, metadata = raw.get("cell_type"), raw.get("source", ""), raw.get("metadata", {})
    if not isinstance(cell_type, str):
        return "has no cell type"
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        return "has a source that is not text"
    if not isinstance(metadata, dict):
        return "has metadata that is not an object"
    marks = metadata.get("nbgrader")
    if marks is not None and not isinstance(marks, dict):
        return "has nbgrader metadata that is not an object"
    grade_id = (marks or {}).get("grade_id")
    if grade_id is not None and not isinstance(grade_id, str):
        return "has a grade_id that is not text"
    cell_id = raw.get("id")
    if cell_id is not None and not isinstance(cell_id, str):
        return "has an id that is not text"
    return _Cell(index, cell_type, source, cell_id, marks, grade_id or None)


def notebook_changes(released: list[_Cell], submitted: list[_Cell], ids_in_format: bool = True) -> list[str]:
    """What `submitted` changed in `released`, most telling first; [] for nothing.

    `ids_in_format`: whether the submitted notebook's nbformat has cell ids (4.5 and later); one
    saved in an older format is compared without ids, and their absence is not a change."""
    matched: dict[int, _Cell] = {}  # released index -> submitted cell
    used: set[int] = set()  # submitted indices matched
    renamed: list[str] = []
    compare_ids = any(c.id for c in submitted) or not any(c.id for c in released)
    items = [] if compare_ids or not ids_in_format else ["cell ids missing"]

    def match(wanted, key) -> None:
        unused: dict = {}
        for cell in submitted:
            if cell.index not in used and key(cell) is not None:
                unused.setdefault(key(cell), []).append(cell)
        for r in released:
            if r.index in matched or wanted(r) is None or not unused.get(wanted(r)):
                continue
            s = unused[wanted(r)].pop(0)
            matched[r.index] = s
            used.add(s.index)

    if compare_ids:  # nbgrader cells by grade_id, the same cell first (where a grade_id is used twice)
        match(lambda r: (r.grade_id, r.id) if r.grade_id else None, lambda s: (s.grade_id, s.id) if s.grade_id else None)
    match(lambda r: r.grade_id, lambda s: s.grade_id)
    if compare_ids:  # then by nbformat id: a grade_id changed, or a cell nbgrader does not mark
        match(lambda r: r.id, lambda s: s.id)
    match(lambda r: (r.cell_type, r.source), lambda s: (s.cell_type, s.source))  # then by content: ids changed

    edited, adjusted, removed, new_ids = [], [], [], []
    for r in released:
        s = matched.get(r.index)
        if s is None:
            removed.append(r.name())
            continue
        if r.grade_id and s.grade_id != r.grade_id:
            renamed.append(f"cell {r.name()} grade_id {'changed to ' + _quote(s.grade_id) if s.grade_id else 'removed'}")
        if compare_ids and r.id and s.id != r.id:
            new_ids.append(r.name())
        if r.nbgrader is None:  # a cell nbgrader does not mark: the student's to edit
            if s.grade_id:
                renamed.append(f"cell {r.name()} given grade_id {_quote(s.grade_id)}")
            continue
        differences = _differences(r, s)
        settings = [d for d in differences if d != "source"]  # an answer's source is the student's work
        # nbgrader's own test of a locked cell (its checksum covers the grade_id too: a rename is said above)
        if utils.is_locked(r.node) and _checksum(s) != _released_checksum(r) and (differences or s.grade_id == r.grade_id):
            edited.append((r.name(), differences or ["source"]))
        elif settings:
            adjusted.append(f"cell {r.name()} changed ({', '.join(settings)})")
    plain = [name for name, what in edited if what == ["source"]]
    if plain:
        items.append(_group(plain, "locked cell {} edited", "locked cells {} edited"))
    items += [f"locked cell {name} edited ({', '.join(what)})" for name, what in edited if what != ["source"]]
    items += adjusted
    if removed:
        items.append(_group(removed, "cell {} removed", "cells {} removed"))
    items += renamed
    if new_ids:
        items.append(_group(new_ids, "id of cell {} changed", "ids of cells {} changed"))
    known = {s.grade_id for s in matched.values() if s.grade_id}
    extra = [s for s in submitted if s.index not in used]
    copies = sorted({_quote(s.grade_id) for s in extra if s.grade_id in known})
    if copies:
        items.append(_group(copies, "cell {} duplicated", "cells {} duplicated"))
    new = [s for s in extra if s.grade_id not in known]
    # an added cell that claims to be nbgrader's (a grade cell worth points, an answer) is never
    # graded (normalise.py), but it is more than scratch work: named
    marked = [s.name() for s in new if s.grade_id or any((s.nbgrader or {}).get(flag) for flag in FLAGS)]
    if marked:
        items.append(_group(marked, "cell {} added with nbgrader marks", "cells {} added with nbgrader marks"))
    added = len(new) - len(marked)
    if added:
        items.append(f"{added} cell{'s' * (added > 1)} added")
    moved = _moved(released, submitted, matched)
    if moved:
        items.append(_group(moved, "cell {} moved", "cells {} moved"))
    ids = [s.id for s in submitted if s.id]
    if len(set(ids)) < len(ids):
        items.append("duplicate cell ids")
    return items


def _differences(r: _Cell, s: _Cell) -> list[str]:
    """Which of what nbgrader checks or resets differ between a released cell and its submitted copy."""
    found = []
    if s.source != r.source:
        found.append("source")
    if s.cell_type != r.cell_type:
        found.append("cell type")
    mine, theirs = r.nbgrader or {}, s.nbgrader or {}
    if (mine.get("grade") or theirs.get("grade")) and _points(theirs) != _points(mine):
        found.append("points")
    found += [f"{flag} flag" for flag in FLAGS if bool(mine.get(flag)) != bool(theirs.get(flag))]
    return found


def _points(marks: dict):
    try:
        return float(marks.get("points"))
    except (TypeError, ValueError, OverflowError):
        return None


def _checksum(cell: _Cell) -> str | None:
    """nbgrader's checksum of a submitted cell, None where its metadata makes nbgrader's function fail."""
    try:
        return utils.compute_checksum(cell.node)
    except (KeyError, TypeError, ValueError, AttributeError, UnicodeError, OverflowError):
        return None


def _released_checksum(cell: _Cell) -> str | None:
    recorded = (cell.nbgrader or {}).get("checksum")
    return recorded if isinstance(recorded, str) else _checksum(cell)


def _moved(released: list[_Cell], submitted: list[_Cell], matched: dict[int, _Cell]) -> list[str]:
    """Released cells out of order in the submission: those outside a longest run kept in order."""
    by_submission = sorted(matched, key=lambda r: matched[r].index)  # released indices, submitted order
    tails, tail_at, previous = [], [], {}
    for position, index in enumerate(by_submission):
        k = bisect.bisect_left(tails, index)
        previous[position] = tail_at[k - 1] if k else None
        if k == len(tails):
            tails.append(index)
            tail_at.append(position)
        else:
            tails[k], tail_at[k] = index, position
    kept, position = set(), tail_at[-1] if tail_at else None
    while position is not None:
        kept.add(by_submission[position])
        position = previous[position]
    return [r.name() for r in released if r.index in matched and r.index not in kept]


def _group(names: list[str], one: str, many: str) -> str:
    shown = ", ".join(names[:MAX_NAMED]) + (f" and {len(names) - MAX_NAMED} more" if len(names) > MAX_NAMED else "")
    return (one if len(names) == 1 else many).format(shown)


def _quote(name: str) -> str:
    """A name from a notebook, on one line and short."""
    name = " ".join(visible(str(name)).split())
    return "'" + (name if len(name) <= MAX_NAME else name[: MAX_NAME - 1] + "…") + "'"


def _bounded(note: str) -> str:
    note = " ".join(visible(note).split())
    return note if len(note) <= MAX_NOTE else note[: MAX_NOTE - 1] + "…"
