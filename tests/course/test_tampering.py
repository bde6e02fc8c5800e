"""autograder/course/tampering.py: what a submission changed in the released notebook, flagged for review.

Unit tests on notebooks built here (nbgrader's own checksums in the locked cells, as
generate_assignment writes them), then one grading run of a scratch course: a submission and
a tampered copy of it score the same, and only the copy is flagged, in the table and the CSV.
"""
from __future__ import annotations

import copy
import csv
import json
from pathlib import Path
from types import SimpleNamespace

import nbformat
import pytest
from nbgrader.utils import compute_checksum

from autograder.course import tampering
from autograder.nbgrader_ext import notebook_file
from autograder.course.tampering import MAX_NAME, MAX_NOTE, ReleasedAssignment
from autograder.course.summary import Row, format_table, write_csv


def nbgrader_cell(make, source, grade_id, *, points=None, solution=False, locked=False, **extra):
    cell = make(source, id=grade_id, **extra)
    marks = {"grade": points is not None, "grade_id": grade_id, "locked": locked, "schema_version": 3, "solution": solution}
    if points is not None:
        marks["points"] = points
    cell.metadata["nbgrader"] = marks
    marks["checksum"] = compute_checksum(cell)  # what generate_assignment writes
    return cell


def released_notebook():
    code, markdown = nbformat.v4.new_code_cell, nbformat.v4.new_markdown_cell
    return nbformat.v4.new_notebook(cells=[
        markdown("# Assignment\n\nTile the loop.", id="intro"),
        code("import autograder", id="setup"),
        nbgrader_cell(code, "def schedule(sch):\n    raise NotImplementedError", "schedule", solution=True),
        nbgrader_cell(code, "result = self_check(schedule)", "self-check", locked=True),
        nbgrader_cell(code, "# Correctness: 4 points\npoints(result, 'correctness', 4)", "correctness", points=4, locked=True),
        nbgrader_cell(code, "# Speed: 3 points\npoints(result, 'speed', 3)", "speed", points=3, locked=True),
        markdown("## Tile arithmetic", id="arithmetic-intro"),
        nbgrader_cell(code, "TILES = ...", "tile-arithmetic", solution=True),
    ])


@pytest.fixture
def course(tmp_path):
    """A course root with the notebook released; `check(notebook)` submits it and says what changed."""
    def format_path(step, student, assignment):
        return str(tmp_path / step / student / assignment)

    coursedir = SimpleNamespace(release_directory="release", submitted_directory="submitted", format_path=format_path)
    release = Path(format_path("release", ".", "tiling"))
    release.mkdir(parents=True)
    nbformat.write(released_notebook(), release / "tiling.ipynb")
    submitted = Path(format_path("submitted", "ann", "tiling"))
    submitted.mkdir(parents=True)

    def check(notebook=None, raw: bytes | str | None = None, name="tiling.ipynb") -> str:
        path = submitted / name
        if raw is not None:
            path.write_bytes(raw if isinstance(raw, bytes) else raw.encode("utf-8", "surrogatepass"))
        elif notebook is not None:
            path.write_text(json.dumps(notebook), encoding="utf-8")
        return ReleasedAssignment.load(coursedir, "tiling").changes(submitted)

    return SimpleNamespace(coursedir=coursedir, release=release, submitted=submitted, check=check)


def cells_by_id(notebook):
    return {c.get("id"): c for c in notebook["cells"]}


def test_a_students_ordinary_work_is_no_change(course):
    notebook = released_notebook()
    assert course.check(notebook) == ""
    cells = cells_by_id(notebook)
    cells["schedule"].source = "def schedule(sch):\n    sch.split(...)"  # answers
    cells["tile-arithmetic"].source = "TILES = 196"
    cells["intro"].source += "\n\nmy own notes"  # a cell nbgrader does not mark
    cells["setup"].source = "import autograder\nimport numpy"
    for cell in notebook.cells:  # running the notebook, and what Jupyter writes
        cell.metadata["collapsed"] = False
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("stream", text="4.0\n")]
            cell.execution_count = 7
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    assert course.check(notebook) == ""


def test_edited_locked_cells_added_and_removed_cells(course):
    notebook = released_notebook()
    cells = cells_by_id(notebook)
    cells["correctness"].source = "4"
    notebook.cells.remove(cells["speed"])
    notebook.cells.insert(0, nbformat.v4.new_code_cell("print('scratch')"))
    notebook.cells.append(nbformat.v4.new_markdown_cell("notes to self"))
    assert course.check(notebook) == "locked cell 'correctness' edited; cell 'speed' removed; 2 cells added"


def test_what_nbgrader_resets_is_said_along_with_the_edit(course):
    notebook = released_notebook()
    cells = cells_by_id(notebook)
    cells["correctness"].cell_type = "markdown"
    cells["speed"].metadata.nbgrader["points"] = 30
    cells["self-check"].metadata.nbgrader["locked"] = False
    cells["schedule"].metadata.nbgrader["points"] = 5  # an answer cell made a grade cell
    cells["schedule"].metadata.nbgrader["grade"] = True
    assert course.check(notebook) == (
        "locked cell 'self-check' edited (locked flag); locked cell 'correctness' edited (cell type); "
        "locked cell 'speed' edited (points); cell 'schedule' changed (points, grade flag)"
    )


def test_the_check_is_nbgraders_checksum(course, monkeypatch):
    notebook = released_notebook()
    cells_by_id(notebook)["speed"].source += "\n"  # a trailing newline: nbgrader restores this cell too
    assert course.check(notebook) == "locked cell 'speed' edited"
    monkeypatch.setattr(tampering.utils, "compute_checksum", lambda cell: cell.metadata.nbgrader.get("checksum"))
    assert course.check(notebook) == ""


def test_changed_ids(course):
    notebook = released_notebook()
    cells = cells_by_id(notebook)
    cells["speed"].metadata.nbgrader["grade_id"] = "speedy"  # the grade_id; nbformat id kept
    cells["correctness"].id = "c0ffee"  # the nbformat id; grade_id kept
    cells["setup"].id = "s3tup"  # a cell nbgrader does not mark: found by its content
    assert course.check(notebook) == "cell 'speed' grade_id changed to 'speedy'; ids of cells 'setup', 'correctness' changed"
    del cells["self-check"].metadata["nbgrader"]
    assert "cell 'self-check' grade_id removed" in course.check(notebook)


def test_a_copy_into_a_new_notebook_is_one_note(course):
    notebook = released_notebook()
    for index, cell in enumerate(notebook.cells):
        cell.id = f"new-{index}"
    assert course.check(notebook) == "ids of cells 'intro', 'setup', 'schedule' and 5 more changed"
    for cell in notebook.cells:  # a 4.5 notebook whose ids were stripped
        del cell["id"]
    assert course.check(notebook) == "cell ids missing"


def as_nbformat_4_4(notebook) -> dict:
    """The notebook as Jupyter before 4.5 (or Colab) saves it: no cell ids exist in its format."""
    old = json.loads(json.dumps(notebook))
    old["nbformat_minor"] = 4
    for cell in old["cells"]:
        cell.pop("id", None)
    return old


def test_a_notebook_saved_as_nbformat_4_4_has_no_ids_to_miss(course):
    """Issue 36: a notebook saved as 4.4 was flagged "cell ids missing"; cells are found by grade_id
    and content instead, and what did change is still said."""
    assert course.check(as_nbformat_4_4(released_notebook())) == ""
    notebook = released_notebook()
    cells = cells_by_id(notebook)
    cells["speed"].source = "points(result, 'speed', 3) or 3"
    notebook.cells.remove(cells["arithmetic-intro"])
    assert course.check(as_nbformat_4_4(notebook)) == "locked cell 'speed' edited; cell 'arithmetic-intro' removed"


def test_moved_duplicated_and_duplicate_ids(course):
    notebook = released_notebook()
    cells = cells_by_id(notebook)
    notebook.cells.remove(cells["speed"])
    notebook.cells.insert(1, cells["speed"])
    copied = copy.deepcopy(cells["correctness"])
    copied.id = "correctness-copy"
    notebook.cells.append(copied)
    cells["arithmetic-intro"].id = "intro"
    assert course.check(notebook) == "id of cell 'arithmetic-intro' changed; cell 'correctness' duplicated; cell 'speed' moved; duplicate cell ids"


@pytest.mark.parametrize("raw, says", [
    ("{not json", "not JSON (line 1)"),
    ("[1, 2]", "not a notebook: the file is a JSON list"),
    ('{"cells": {}}', "not a notebook (no list of cells)"),
    ("", "the file is empty"),
    ("[" * 100_000 + "]" * 100_000, "the file is a JSON list"),  # what is nested too deep is cut, then it is still a list
    ('{"cells": [7, {"cell_type": "code", "source": 3}]}', "2 malformed cells (#1 is not an object, #2 has a source that is not text)"),
    ('{"cells": [{"cell_type": "code", "source": "", "metadata": []}]}', "metadata that is not an object"),
    ('{"cells": [{"cell_type": "code", "source": "", "metadata": {"nbgrader": 1}}]}', "nbgrader metadata that is not an object"),
    ('{"cells": [{"cell_type": "code", "source": "", "metadata": {"nbgrader": {"grade_id": ["x"]}}}]}', "grade_id that is not text"),
    ('{"cells": [{"cell_type": "code", "source": "", "id": 5}]}', "an id that is not text"),
    ('{"cells": [{"source": ""}]}', "has no cell type"),
])
def test_a_malformed_submission_gives_a_note(course, raw, says):
    note = course.check(raw=raw)
    assert note.startswith("not compared with the release: ") and says in note


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32"])
def test_a_notebook_saved_in_another_encoding_is_compared_as_autograde_reads_it(course, encoding):
    notebook = released_notebook()
    assert course.check(raw=json.dumps(notebook).encode(encoding)) == ""
    cells_by_id(notebook)["speed"].source = "3"
    assert course.check(raw=json.dumps(notebook, ensure_ascii=False).encode(encoding)) == "locked cell 'speed' edited"


def test_added_cells_that_claim_to_be_graded_are_named(course):
    notebook = released_notebook()
    code = nbformat.v4.new_code_cell
    notebook.cells.append(nbgrader_cell(code, "print('bonus')", "bonus", points=50))  # a grade cell of its own
    notebook.cells.append(code("# graded?", id="claims", metadata={"nbgrader": {"grade": True, "points": 5}}))
    notebook.cells.append(code("print('scratch')"))
    assert course.check(notebook) == "cells 'bonus', 'claims' added with nbgrader marks; 1 cell added"


def test_odd_metadata_and_text_in_cells_are_changes_not_crashes(course):
    notebook = json.loads(json.dumps(released_notebook()))
    cells = cells_by_id(notebook)
    cells["speed"]["metadata"]["nbgrader"]["points"] = {"three": 3}
    cells["correctness"]["source"] = ["\ud800 lone surrogate"]  # valid JSON; nbgrader's checksum cannot encode it
    del cells["self-check"]["metadata"]["nbgrader"]["grade_id"]
    del cells["intro"]["metadata"]
    raw = json.dumps(notebook)
    assert course.check(raw=raw) == (
        "locked cell 'correctness' edited; locked cell 'speed' edited (points); cell 'self-check' grade_id removed"
    )


def test_a_huge_or_odd_file_is_not_read(course, monkeypatch):
    monkeypatch.setattr(notebook_file, "MAX_NOTEBOOK_BYTES", 2**20)
    notebook = released_notebook()
    notebook.cells[1].outputs = [nbformat.v4.new_output("stream", text="x" * (3 * 2**19))]
    assert course.check(notebook) == "not compared with the release: the file is 1.5 MiB, over the 1 MiB a notebook may be"
    target = course.submitted / "tiling.ipynb"
    target.unlink()
    target.symlink_to(course.release / "tiling.ipynb")
    assert course.check() == "not compared with the release: not a regular file (a symbolic link)"


def test_missing_and_added_notebooks(course):
    assert course.check() == "notebook 'tiling.ipynb' missing"
    course.check(released_notebook())
    assert course.check(released_notebook(), name="scratch.ipynb") == "notebook 'scratch.ipynb' added"


def test_names_from_the_submission_are_visible_one_line_and_short(course):
    notebook = released_notebook()
    unruly = "\x1b[32mPASSED\x1b[0m\n\u202e" + "x" * 10_000
    notebook.cells[0].metadata["nbgrader"] = {"grade_id": unruly}  # a cell nbgrader does not mark, marked
    cells_by_id(notebook)["speed"].metadata.nbgrader["grade_id"] = unruly
    note = course.check(notebook)
    assert "\x1b" not in note and "\u202e" not in note and "\n" not in note
    intro, speed = note.split("; ")
    assert intro.startswith("cell 'intro' given grade_id '\\x1b[32mPASSED") and speed.startswith("cell 'speed' grade_id changed to '\\x1b")
    assert len(intro.split("grade_id ")[1]) == MAX_NAME + 2 == len(speed.split("changed to ")[1])


def test_the_note_is_bounded(course):
    code = nbformat.v4.new_code_cell
    release = nbformat.v4.new_notebook(cells=[nbgrader_cell(code, f"test {i}", f"test-{i}", points=1, locked=True) for i in range(100)])
    nbformat.write(release, course.release / "tiling.ipynb")
    for cell in release.cells:  # each renamed: one item each
        cell.metadata.nbgrader["grade_id"] = "renamed-" + cell.metadata.nbgrader["grade_id"] * 10
    note = course.check(release)
    assert len(note) == MAX_NOTE and note.endswith("…") and note.startswith("cell 'test-0' grade_id changed to 'renamed-test-0test-0")


def test_without_a_release_nothing_is_flagged_and_the_run_is_warned(course):
    (course.release / "tiling.ipynb").unlink()
    released = ReleasedAssignment.load(course.coursedir, "tiling")
    assert released.changes(course.submitted) == ""
    assert "no released notebooks in" in released.warnings[0] and "go unflagged" in released.warnings[0]
    (course.release / "tiling.ipynb").write_text("{", encoding="utf-8")
    assert "cannot be read (not a notebook: not JSON (line 1))" in ReleasedAssignment.load(course.coursedir, "tiling").warnings[0]


def test_the_table_and_the_csv_show_the_changes(tmp_path):
    rows = [
        Row("ann", 7.0, 7.0, "passed", 1.5, {"speed": 3.0}, review=True, changes="locked cell 'speed' edited; 2 cells added"),
        Row("bob", 7.0, 7.0, "passed", 1.5, {"speed": 3.0}),
    ]
    ann, bob = format_table(rows).splitlines()[2:]
    assert "flagged for review (locked cell 'speed' edited; 2 cells added)" in ann and "review" not in bob
    write_csv(rows, tmp_path / "grades.csv")
    with open(tmp_path / "grades.csv", newline="") as handle:
        lines = list(csv.DictReader(handle))
    assert list(lines[0])[-4:] == ["needs_manual_grade", "review", "note", "changes"]
    assert (lines[0]["review"], lines[0]["changes"]) == ("1", "locked cell 'speed' edited; 2 cells added")
    assert (lines[1]["review"], lines[1]["changes"]) == ("0", "")


@pytest.mark.slow
def test_a_tampered_submission_scores_what_it_did_untampered_and_is_flagged(tmp_path):
    """ben's submission graded as handed in, then again with a test cell edited, a grade cell
    removed (nbgrader puts it back) and two cells added: the same student, so the same workload."""
    from autograder.course.course_dir import course_directory, load_course_config
    from autograder.course.grading_run import grade_assignment
    from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

    from .conftest import COURSE
    from .test_grading_run import options

    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling")
    submit_samples(root, "tiling", only=["ben"])
    untampered = grade_assignment(options(root, workers=1, progress=None))
    assert untampered.failures == {} and not [w for w in untampered.warnings if "released" in w]
    before = untampered.rows[0]
    assert (before.review, before.changes) == (False, "") and "review" not in format_table(untampered.rows)

    path = Path(course_directory(load_course_config(root)).format_path("submitted", "ben", "tiling")) / "tiling.ipynb"
    handed_in = path.read_text(encoding="utf-8")
    notebook = nbformat.read(path, as_version=4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in notebook.cells}
    cells["speed"].source = "3"
    notebook.cells.remove(cells["fusion"])
    notebook.cells.insert(0, nbformat.v4.new_code_cell("print('scratch')"))
    notebook.cells.append(nbformat.v4.new_markdown_cell("notes"))
    nbformat.write(notebook, path)
    report = grade_assignment(options(root, workers=1, progress=None, force=True))
    assert report.failures == {} and report.graded == ["ben"]
    after = report.rows[0]
    assert after.parts == before.parts and after.score == before.score and after.status == before.status
    assert after.parts["fusion"] == 3.0 and after.parts["speed"] == 0.0
    changed = "locked cell 'speed' edited; cell 'fusion' removed; 2 cells added"
    assert (after.review, after.changes) == (True, changed)
    assert f"flagged for review ({changed})" in format_table(report.rows).splitlines()[2]
    with open(report.csv_path, newline="", encoding="utf-8") as handle:
        (line,) = csv.DictReader(handle)
    assert (line["review"], line["changes"], line["score"]) == ("1", changed, f"{before.score:g}")

    # The same submission saved as nbformat 4.4 (issue 36): graded alike, and nothing flagged.
    path.write_text(json.dumps(as_nbformat_4_4(json.loads(handed_in))), encoding="utf-8")
    report = grade_assignment(options(root, workers=1, progress=None, force=True))
    assert report.failures == {} and report.graded == ["ben"]
    saved_old = report.rows[0]
    assert saved_old.parts == before.parts and saved_old.score == before.score and saved_old.status == before.status
    assert (saved_old.review, saved_old.changes) == (False, "")
    with open(report.csv_path, newline="", encoding="utf-8") as handle:
        (line,) = csv.DictReader(handle)
    assert (line["review"], line["changes"]) == ("0", "")
