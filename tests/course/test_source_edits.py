"""The assignment's source edited after release (issue 36, item 10): the class run says so once,
before grading, with what changed and the commands that bring the release and the gradebook in
line, and grades on against the gradebook as released; once those commands have run, it says
nothing and the grades follow the fix. Walked with nbgrader's real commands and gradebook on one
scratch course, in two grading runs; autograder/course/source_edits.py."""
from __future__ import annotations

import csv

import nbformat
import pytest
from nbgrader.api import Gradebook

from autograder.course import source_edits
from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples

from .conftest import COURSE
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow

WARNING = "was edited after `nbgrader generate_assignment` released it"


def edit(path, change) -> None:
    notebook = nbformat.read(path, as_version=4)
    change({c.metadata.get("nbgrader", {}).get("grade_id", f"#{i}"): c for i, c in enumerate(notebook.cells)}, notebook)
    nbformat.write(notebook, path)


def noise(cells, notebook) -> None:
    """What running and saving the notebook in Jupyter changes, and no cell nbgrader records."""
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.execution_count = 42
            cell.outputs = [nbformat.v4.new_output("stream", text="ran\n")]
            cell.metadata["collapsed"] = True
    notebook.metadata["widgets"] = {"state": {}}


def fix(cells, notebook) -> None:
    cells["correctness"].source += "\n# fixed after release"
    cells["tile-arithmetic-marks"].metadata.nbgrader["points"] = 6
    cells["#0"].source += " (a typo fixed)"


def arithmetic(root) -> tuple[float, float]:
    """dev's grade of the tile arithmetic, which dev has right: score, out of."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        grade = gradebook.find_grade("tile-arithmetic-marks", "tiling", "tiling", "dev")
        return grade.score, grade.max_score


def warnings_of(root) -> str | None:
    config = load_course_config(root)
    return source_edits.warning(source_edits.compare(course_directory(config), config, "tiling"), root)


def test_a_source_edited_after_release_is_said_until_generated_again(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling", students=["dev"])
    submit_samples(root, "tiling", only=["dev"])
    source = root / "source" / "tiling" / "tiling.ipynb"
    edit(source, noise)
    assert warnings_of(root) is None  # outputs, execution counts, metadata: no false alarm
    edit(source, fix)
    grade = ["tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS]

    edited = command(*grade)
    out = edited.stdout + edited.stderr
    assert edited.returncode == 0, out
    assert edited.stderr.count(WARNING) == 1, out  # once
    said = next(line for line in edited.stderr.splitlines() if WARNING in line)
    assert said.startswith("warning: the source of tiling") and edited.stderr.index(WARNING) < edited.stderr.index("[1/1] dev")
    assert "'correctness' (text changed), 'tile-arithmetic-marks' (points 4 -> 6)" in said and "an unmarked cell differs" in said, said
    assert f"run in {root}: `nbgrader generate_assignment tiling --force`, then, where students fetch through nbgrader's " \
           "exchange, `nbgrader release_assignment tiling --force`; then `tvm-course grade tiling --force` grades everyone " \
           "against the fix" in said, said
    assert "grades against the gradebook's cells as they are now" in said
    assert arithmetic(root) == (4, 4)  # graded as released

    # A cell added under existing grades: nbgrader refuses to generate it, and the warning says so
    edit(source, lambda cells, notebook: notebook.cells.append(nbformat.v4.new_markdown_cell(
        "More to read.", metadata={"nbgrader": {"grade_id": "extra", "locked": True, "grade": False, "solution": False,
                                                "schema_version": 3}})))
    added = warnings_of(root)
    assert "'extra' added" in added and "refuses to add or remove cells or notebooks while the gradebook holds " \
           "submissions of tiling (1)" in added and "`nbgrader db assignment remove tiling --force`" in added, added
    refused = command("nbgrader", "generate_assignment", "tiling", "--force", cwd=root)
    assert refused.returncode != 0 and "Cannot add or remove cells" in refused.stdout + refused.stderr
    edit(source, lambda cells, notebook: notebook.cells.pop())

    # The commands of the warning, then Jupyter's noise again: nothing said, and the grade follows the fix
    generated = command("nbgrader", "generate_assignment", "tiling", "--force", cwd=root)
    assert generated.returncode == 0, generated.stdout + generated.stderr
    (tmp_path / "exchange").mkdir()
    released = command("nbgrader", "release_assignment", "tiling", "--force", f"--Exchange.root={tmp_path / 'exchange'}", cwd=root)
    assert released.returncode == 0, released.stdout + released.stderr
    edit(source, noise)
    regraded = command(*grade, "--force")
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    assert WARNING not in regraded.stderr and "could not be compared" not in regraded.stderr, regraded.stderr
    assert arithmetic(root) == (6, 6)
    with open(root / "tiling-grades.csv", newline="", encoding="utf-8") as handle:
        assert float(next(csv.DictReader(handle))["max_score"]) == 16

    # An edit of a cell nbgrader does not mark: only the release is behind, and grades are not affected
    edit(source, lambda cells, notebook: setattr(cells["#2"], "source", cells["#2"].source + "\n\nOne more hint."))
    behind = warnings_of(root)
    assert "tiling.ipynb: an unmarked cell differs from" in behind and "so grades are not affected" in behind, behind
    assert "`nbgrader generate_assignment tiling --force`" in behind and "tvm-course grade tiling --force" not in behind
