"""An answer cell that lost its nbgrader metadata (issue 36, item 2): Colab, or an editor or tool
that strips cell metadata, keeps the student's code and drops `metadata.nbgrader`. The user's
path: release, the student fetches through the exchange, answers (as the sample ada), their
notebook loses every cell's metadata (ids kept), they submit, the instructor collects and runs
`tvm-course grade`: the answers are found by their cell ids and graded as ada's, the feedback and
the CSV say what was recovered. Another student's notebook (from an LMS download) lost metadata
and ids, and has a second `def schedule` beside the answer: nothing tells which is the answer, so
it is not graded, and the feedback and the CSV name the cell and say what to do.
"""
from __future__ import annotations

import csv
import json

import nbformat
import pytest

from autograder.rehearsal.samples import build_submission, load_samples
from autograder.rehearsal.scratch_course import copy_course, release_assignment

from .conftest import COURSE
from .test_exchange import ASSIGNMENT, STUDENT, nbgrader
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow


def strip(path, ids: bool = False, extra: str | None = None) -> None:
    notebook = json.loads(path.read_text(encoding="utf-8"))
    for cell in notebook["cells"]:
        cell["metadata"] = {}
        if ids:
            cell.pop("id", None)
    if ids:
        notebook["nbformat_minor"] = 4
    if extra is not None:
        at = next(i for i, c in enumerate(notebook["cells"]) if "".join(c["source"]).startswith("def schedule"))
        notebook["cells"].insert(at + 1, {"cell_type": "code", "metadata": {}, "source": extra, "outputs": [], "execution_count": None})
    path.write_text(json.dumps(notebook), encoding="utf-8")


def test_stripped_answer_cells_are_found_graded_and_said(tmp_path):
    root = copy_course(COURSE, tmp_path / "instructor" / "course")
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    exchange.chmod(0o777)
    release_assignment(root, ASSIGNMENT, students=[STUDENT, "ben"])
    nbgrader(["release_assignment", ASSIGNMENT], root, tmp_path / "instructor", exchange)
    home = tmp_path / "home"
    home.mkdir()
    cache = home / ".nbgrader-cache"
    nbgrader(["fetch_assignment", ASSIGNMENT], home, home, exchange, cache)
    fetched = home / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    samples = {s.student: s for s in load_samples(root, ASSIGNMENT)}
    nbformat.write(build_submission(nbformat.read(fetched, as_version=4), samples["ada"]), fetched)
    strip(fetched)
    assert not any(cell["metadata"] for cell in json.loads(fetched.read_text(encoding="utf-8"))["cells"])
    nbgrader(["submit", ASSIGNMENT], home, home, exchange, cache)
    nbgrader(["collect", ASSIGNMENT], root, tmp_path / "instructor", exchange)

    ben = root / "submitted" / "ben" / ASSIGNMENT
    ben.mkdir(parents=True)
    released = nbformat.read(root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    nbformat.write(build_submission(released, samples["dev"]), ben / f"{ASSIGNMENT}.ipynb")
    strip(ben / f"{ASSIGNMENT}.ipynb", ids=True, extra="def schedule(sch):\n    pass  # another try")
    (ben / "timestamp.txt").write_text("2026-01-10 10:00:00.000000 UTC")

    graded = command("tvm-course", "grade", ASSIGNMENT, "--course", str(root), *GRADE_OPTIONS, timeout=900)
    assert graded.returncode == 0, graded.stdout + graded.stderr
    with open(root / f"{ASSIGNMENT}-grades.csv", newline="", encoding="utf-8") as handle:
        rows = {row["student"]: row for row in csv.DictReader(handle)}

    row = rows[STUDENT]
    assert samples["ada"].mismatches({name: float(row[name]) for name in samples["ada"].expected}, row["schedule"]) == [], row
    assert "answer cell 'schedule' recovered: it had lost its nbgrader metadata; found by its cell id 'schedule'" in row["note"], row
    assert "answer cell 'tile-arithmetic' recovered" in row["note"] and row["review"] == "1", row
    page = (root / "feedback" / STUDENT / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    assert "Your answer cell &#39;schedule&#39; was graded: it had lost its nbgrader metadata; found by its cell id" in page \
        or "Your answer cell 'schedule' was graded: it had lost its nbgrader metadata; found by its cell id" in page, page[:3000]

    row = rows["ben"]
    assert float(row["correctness"]) == 0 and float(row["tile-arithmetic-marks"]) == float(samples["dev"].expected["tile-arithmetic-marks"][0])
    assert "the answer cell 'schedule' has lost its nbgrader metadata" in row["note"] and row["review"] == "1", row
    page = (root / "feedback" / "ben" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text(encoding="utf-8")
    assert "Not graded: the answer cell" in page and "copy your answer into the released cell" in page
