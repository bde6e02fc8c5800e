"""A submission refused before it can be graded gets a feedback page that says why (issue 35, item 5).

Every way a handed-in file can fail to be a notebook the grader reads (a JSON list, not JSON, a
JSON object without cells, over the size limit, a symbolic link that leads nowhere, a directory
under the notebook's name) scores 0, and the student's page at feedback/STUDENT/ASSIGNMENT/
NOTEBOOK.html says plainly why nothing was graded, each part's 0 and what to do, from the
grader's own words only (nothing of the file, escaped or not, is on it). The page is finished
feedback: `nbgrader release_feedback` releases it; a valid resubmission, graded again, replaces
it with the real feedback, in the course and in the exchange. The user's path with nbgrader's
real commands and gradebook: one scratch course, one `tvm-course grade` run for every kind at
once, then one for the resubmission.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.samples import load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment
from autograder.nbgrader_ext.notebook_file import MAX_NOTEBOOK_BYTES

from .conftest import COURSE
from html_page import live_markup
from .test_term import GRADE_OPTIONS, command

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

PLANTED = "<script>alert('planted')</script>PLANTED-IN-THE-FILE"
PARTS = "correctness 0 / 4, fusion 0 / 3, speed 0 / 3, tile-arithmetic-marks 0 / 4"


def json_list(notebook: Path, honest: bytes) -> None:
    cells = json.loads(honest)["cells"]
    cells[0]["source"] = PLANTED
    notebook.write_text(json.dumps(cells), encoding="utf-8")


def not_json(notebook: Path, honest: bytes) -> None:
    notebook.write_bytes(b"\x89PNG\r\n\x1a\n" + PLANTED.encode())


def no_cells(notebook: Path, honest: bytes) -> None:
    notebook.write_text(json.dumps({"worksheets": [{"cells": [{"source": PLANTED}]}], "metadata": {"x": PLANTED}}))


def too_large(notebook: Path, honest: bytes) -> None:
    with open(notebook, "r+b") as handle:  # sparse: nothing is written, the size is what is refused
        handle.truncate(MAX_NOTEBOOK_BYTES + 2**20)


def dangling_link(notebook: Path, honest: bytes) -> None:
    notebook.unlink()
    notebook.symlink_to(notebook.parent / "gone.ipynb.bak")


def directory(notebook: Path, honest: bytes) -> None:
    notebook.unlink()
    notebook.mkdir()
    (notebook / "tiling.ipynb").write_bytes(honest)


REFUSED = {  # student -> (what was handed in, the grader's words for it)
    "jsonlist": (json_list, "not a notebook: the file is a JSON list"),
    "notjson": (not_json, "not a notebook: not JSON (line 1)"),
    "nocells": (no_cells, "not a notebook: it has no list of cells"),
    "toolarge": (too_large, "the file is 257.0 MiB, over the 256 MiB a notebook may be"),
    "dangling": (dangling_link, "not a regular file (a symbolic link)"),
    "directory": (directory, "not a regular file"),
}


def release_feedback(root, exchange, *options):
    return command("nbgrader", "release_feedback", "tiling", f"--Exchange.root={exchange}", *options, cwd=root)


def released_pages(exchange) -> dict[str, str]:
    folder = exchange / "tvm-course" / "feedback"
    return {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.html")} if folder.is_dir() else {}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    work = tmp_path_factory.mktemp("refused")
    root = copy_course(COURSE, work / "course")
    release_assignment(root, "tiling", students=["dev", *REFUSED])
    coursedir = course_directory(load_course_config(root))
    dev = next(s for s in load_samples(root, "tiling") if s.student == "dev")
    honest = (submit(coursedir, dev) / "tiling.ipynb").read_bytes()
    for student, (hand_in, _) in {"dev": (None, None), **REFUSED}.items():
        folder = submit(coursedir, dev, student)
        (folder / "submission_secret.txt").write_text(f"secret of {student}")  # as `nbgrader submit` leaves it
        if hand_in is not None:
            hand_in(folder / "tiling.ipynb", honest)
    exchange = work / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    graded = command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS)
    return root, exchange, honest, graded


def page(root, student) -> str:
    return (root / "feedback" / student / "tiling" / "tiling.html").read_text(encoding="utf-8")


def test_every_refused_submission_is_graded_0_with_a_page_that_says_why_and_what_to_do(course):
    root, _, _, graded = course
    assert graded.returncode == 0, graded.stdout + graded.stderr
    assert f"{len(REFUSED) + 1} graded" in graded.stdout and "grading-failed" not in graded.stdout, graded.stdout
    honest = page(root, "dev")
    assert "was not graded" not in honest and "Student's answer" in honest
    for student, (_, cause) in REFUSED.items():
        html = page(root, student)
        assert "Your tiling.ipynb was not graded: 0 points" in html, student
        assert f"could not read the file you handed in as a Jupyter notebook ({cause})" in html, (student, html[-3000:])
        assert f"Score: 0 for every part ({PARTS})." in html, student
        assert "What to do: open tiling.ipynb in Jupyter" in html and "as Jupyter saved it" in html, student
        assert "Score: 0.0 / 14.0" in html, student
        # the released notebook unanswered (what scored 0) is not shown as if it were the student's
        assert "Student's answer" not in html and "def schedule" not in html, student
        # nothing of the file is on the page, and nothing on it runs or restyles it
        assert "PLANTED" not in html and "alert(" not in html, student
        assert live_markup(html, honest) == [], student
    rows = {line.split(",")[0]: line for line in (root / "tiling-grades.csv").read_text().splitlines()[1:]}
    for student, (_, cause) in REFUSED.items():
        assert f"not graded, 0 points: {cause}" in rows[student], rows[student]


def test_the_refusal_page_is_finished_feedback_released_and_replaced_by_a_valid_resubmissions(course):
    root, exchange, honest, _ = course
    released = release_feedback(root, exchange)
    assert released.returncode == 0, released.stderr
    assert f"Released feedback on tiling to {len(REFUSED) + 1} student(s)" in released.stderr, released.stderr
    pages = released_pages(exchange)
    assert len(pages) == len(REFUSED) + 1
    assert sum("Your tiling.ipynb was not graded" in html for html in pages.values()) == len(REFUSED)

    # jsonlist hands in the notebook as Jupyter saved it; the next run grades it and writes the real feedback
    (root / "submitted" / "jsonlist" / "tiling" / "tiling.ipynb").write_bytes(honest)
    again = command("tvm-course", "grade", "tiling", "--course", str(root), "--student", "jsonlist", *GRADE_OPTIONS)
    assert again.returncode == 0 and "1 graded (changed 1)" in again.stdout, again.stdout + again.stderr
    html = page(root, "jsonlist")
    assert "was not graded" not in html and "Score: 4.0 / 14.0" in html
    rows = {line.split(",")[0]: line for line in (root / "tiling-grades.csv").read_text().splitlines()[1:]}
    assert "not graded, 0 points" not in rows["jsonlist"] and rows["jsonlist"].startswith("jsonlist,4,14,")

    mine = release_feedback(root, exchange, "--student", "jsonlist")
    assert mine.returncode == 0, mine.stderr
    pages = released_pages(exchange)
    assert len(pages) == len(REFUSED) + 1  # the same page, replaced in place
    assert sum("Your tiling.ipynb was not graded" in html for html in pages.values()) == len(REFUSED) - 1
