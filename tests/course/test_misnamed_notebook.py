"""A notebook handed in under another name than the released one (autograder/nbgrader_ext/released_names.py).

nbgrader's autograde skips a name it does not know and fails with "No notebooks found": the
submission was grading-failed on every run, with no feedback. Now, where a submission has no
tiling.ipynb: its only other notebook is graded as tiling.ipynb, and the page and the CSV say
so; with two others, neither is guessed at: each part 0, a page under tiling.ipynb that says
which notebook was expected and what was found (the names escaped), and the CSV says the same.
Neither is graded again until its folder changes; a resubmission under the right name replaces
the page; `nbgrader release_feedback` releases the pages. The user's path with nbgrader's real
commands and gradebook: one scratch course, two `tvm-course grade` runs.
"""
from __future__ import annotations

import html as html_module
import os

import pytest

from autograder.course.course_dir import course_directory, load_course_config
from autograder.rehearsal.samples import load_samples, submit
from autograder.rehearsal.scratch_course import copy_course, release_assignment

from .conftest import COURSE
from html_page import live_markup
from .test_refused_feedback import PARTS, page, release_feedback, released_pages
from .test_term import GRADE_OPTIONS, command

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")]

PLANTED = "<img src=x onerror=alert('planted')>\x1b[2J.ipynb"  # a file name is the student's: untrusted


def rows(root) -> dict[str, str]:
    return {line.split(",")[0]: line for line in (root / "tiling-grades.csv").read_text().splitlines()[1:]}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    work = tmp_path_factory.mktemp("misnamed")
    root = copy_course(COURSE, work / "course")
    release_assignment(root, "tiling", students=["dev", "renamed", "twocopies", "scratch"])
    coursedir = course_directory(load_course_config(root))
    dev = next(s for s in load_samples(root, "tiling") if s.student == "dev")
    honest = (submit(coursedir, dev) / "tiling.ipynb").read_bytes()
    for student in ("dev", "renamed", "twocopies", "scratch"):
        folder = submit(coursedir, dev, student)
        (folder / "submission_secret.txt").write_text(f"secret of {student}")  # as `nbgrader submit` leaves it
    submitted = root / "submitted"
    (submitted / "renamed" / "tiling" / "tiling.ipynb").rename(submitted / "renamed" / "tiling" / "Tiling Final.ipynb")
    two = submitted / "twocopies" / "tiling"
    (two / "tiling.ipynb").rename(two / "tiling (1).ipynb")
    (two / PLANTED).write_bytes(honest)
    (two / "notes.txt").write_text("my notes")
    (submitted / "scratch" / "tiling" / "scratch.ipynb").write_bytes(honest)  # beside tiling.ipynb: never graded
    exchange = work / "exchange"
    exchange.mkdir()
    os.chmod(exchange, 0o777)
    first = command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS)
    return root, exchange, honest, first


def test_the_only_notebook_of_another_name_is_graded_as_the_released_one_and_said_so(course):
    root, _, _, first = course
    assert first.returncode == 0, first.stdout + first.stderr
    assert "4 graded" in first.stdout and "grading-failed" not in first.stdout, first.stdout
    csv = rows(root)
    score = csv["dev"].split(",")[1]
    assert csv["renamed"].startswith(f"renamed,{score},14,"), csv["renamed"]
    assert "tiling.ipynb graded from 'Tiling Final.ipynb' (no tiling.ipynb was handed in" in csv["renamed"], csv["renamed"]
    assert "notebook 'tiling.ipynb' handed in as 'Tiling Final.ipynb'" in csv["renamed"]  # changes: flagged for review
    html = html_module.unescape(page(root, "renamed"))
    assert "You handed in 'Tiling Final.ipynb', not tiling.ipynb: as it was your only notebook, it was graded as " \
           "your tiling.ipynb. Hand it in as tiling.ipynb" in html, html[-4000:]
    assert "was not graded" not in html and "Student's answer" in html
    assert not (root / "autograded" / "renamed" / "tiling" / "Tiling Final.ipynb").exists()
    assert csv["scratch"].startswith(f"scratch,{score},14,") and "scratch.ipynb' added" in csv["scratch"]


def test_with_two_other_notebooks_neither_is_guessed_each_part_is_0_and_the_page_lists_what_was_found(course):
    root, _, _, _ = course
    html = page(root, "twocopies")
    assert "Your tiling.ipynb was not graded: 0 points" in html
    shown = html_module.unescape(html)
    found = "found: '<img src=x onerror=alert('planted')>\\x1b[2J.ipynb', 'notes.txt', 'tiling (1).ipynb'"
    assert f"Why: no notebook named tiling.ipynb was handed in ({found})" in shown, shown[-4000:]
    assert f"Score: 0 for every part ({PARTS})." in shown
    assert "What to do: hand in your notebook as tiling.ipynb, the name it was released under" in shown
    assert "<img src=x" not in html and "\x1b" not in html and "submission_secret" not in shown
    assert live_markup(html, page(root, "dev")) == []
    note = rows(root)["twocopies"]
    assert note.startswith("twocopies,0,14,"), note
    assert f"tiling.ipynb not graded, 0 points: no notebook named tiling.ipynb was handed in ({found})".replace('"', '""') in note, note


def test_unchanged_they_are_not_graded_again_a_resubmission_is_and_the_pages_are_released(course):
    root, exchange, honest, _ = course
    released = release_feedback(root, exchange)
    assert released.returncode == 0, released.stderr
    assert "Released feedback on tiling to 4 student(s)" in released.stderr, released.stderr
    assert sum("Your tiling.ipynb was not graded" in html for html in released_pages(exchange).values()) == 1

    # twocopies hands in tiling.ipynb: the next run grades only that folder, and its page is the real feedback
    (root / "submitted" / "twocopies" / "tiling" / "tiling.ipynb").write_bytes(honest)
    again = command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS)
    assert again.returncode == 0 and "1 graded (changed 1)" in again.stdout, again.stdout + again.stderr
    for student in ("dev", "renamed", "scratch"):
        assert f"{student}: unchanged since it was graded" in again.stderr, again.stderr
    html = page(root, "twocopies")
    assert "was not graded" not in html
    assert rows(root)["twocopies"].split(",")[1] == rows(root)["dev"].split(",")[1]
