"""The formgrader's students have names (issue 36, item 6): nbgrader's formgrader lists a student
without first and last name as "None, None". The class enrolled from the LMS's export (`tvm-course
roster`), then released, submitted and graded with `tvm-course grade`: the gradebook, and the
formgrader's API (what its Manage Students and submission pages show), have every name; the demo
hub enrols its accounts the same way, with names (autograder/hub/classroom.py)."""
from __future__ import annotations

import pytest
from nbgrader.api import Gradebook
from nbgrader.apps.api import NbGraderAPI

from autograder.course.course_dir import course_directory, load_course_config
from autograder.lms.roster import enrol
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples
from autograder.hub.accounts import DEMO_NAMES

from .conftest import COURSE
from .test_term import GRADE_OPTIONS, command

pytestmark = pytest.mark.slow


def test_roster_names_reach_the_gradebook_and_the_formgrader(tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    roster = tmp_path / "roster.csv"
    roster.write_text("id,first_name,last_name,email,lms_user_id\ndev,Dev,Devlin,dev@uni.example,\n", encoding="utf-8")
    enrolled = command("tvm-course", "roster", "--from", "csv", str(roster), "--course", str(root))
    assert enrolled.returncode == 0, enrolled.stdout + enrolled.stderr
    release_assignment(root, "tiling", students=[])
    submit_samples(root, "tiling", only=["dev"])
    graded = command("tvm-course", "grade", "tiling", "--course", str(root), *GRADE_OPTIONS)
    assert graded.returncode == 0 and "1 graded" in graded.stdout, graded.stdout + graded.stderr
    config = load_course_config(root)
    coursedir = course_directory(config)
    with Gradebook(coursedir.db_url, coursedir.course_id) as gradebook:
        assert [(s.id, s.first_name, s.last_name) for s in gradebook.students] == [("dev", "Dev", "Devlin")]
    api = NbGraderAPI(coursedir=coursedir, config=config)
    assert [(s["id"], s["first_name"], s["last_name"]) for s in api.get_students()] == [("dev", "Dev", "Devlin")]
    assert [(s["student"], s["first_name"], s["last_name"]) for s in api.get_submissions("tiling")] == [("dev", "Dev", "Devlin")]

    # the demo hub's class, enrolled as classroom._release does it
    enrol(coursedir, [{"id": name, "first_name": first, "last_name": last} for name, (first, last) in DEMO_NAMES.items()])
    names = {s["id"]: (s["first_name"], s["last_name"]) for s in api.get_students()}
    assert names == {"dev": ("Dev", "Devlin"), **DEMO_NAMES}
