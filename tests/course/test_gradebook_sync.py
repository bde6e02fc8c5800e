"""autograder/course/gradebook_sync.py: per-worker gradebook copies merged into nbgrader's real one."""
from __future__ import annotations

import shutil
import sqlite3

import pytest
from nbgrader.api import Gradebook

from autograder.course.course_dir import put_environment_tools_on_path
from autograder.course.gradebook_sync import copy_gradebook, merge_submission, sqlite_path, sqlite_url

COURSE_ID = "tvm-course"
# nbgrader's own add_submission trips SQLAlchemy's autoflush warnings
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")


@pytest.fixture(scope="module")
def released_db(tmp_path_factory):
    """An nbgrader gradebook with one released assignment and two students (made once: alembic is slow)."""
    put_environment_tools_on_path()  # a new gradebook runs `alembic`
    path = tmp_path_factory.mktemp("gradebook") / "gradebook.db"
    with Gradebook(sqlite_url(path), COURSE_ID) as gradebook:
        gradebook.add_assignment("tiling")
        gradebook.add_notebook("tiling", "tiling")
        gradebook.add_solution_cell("schedule", "tiling", "tiling")
        for name, points in (("correctness", 4), ("speed", 3)):
            gradebook.add_grade_cell(name, "tiling", "tiling", max_score=points, cell_type="code")
        for student in ("ada", "ben"):
            gradebook.add_student(student, first_name=student.title())
    return path


@pytest.fixture
def main_db(released_db, tmp_path):
    return shutil.copy(released_db, tmp_path / "gradebook.db")


def grade_in_copy(main, tmp_path, student, scores, name="worker.db"):
    """What a worker does: a copy of the gradebook, autograde results written into it."""
    copy = tmp_path / name
    copy_gradebook(main, copy)
    with Gradebook(sqlite_url(copy), COURSE_ID) as gradebook:
        gradebook.update_or_create_submission("tiling", student)
        for grade_id, score in scores.items():
            grade = gradebook.find_grade(grade_id, "tiling", "tiling", student)
            grade.auto_score, grade.needs_manual_grade = score, score is None
        gradebook.find_comment("schedule", "tiling", "tiling", student).auto_comment = f"{student} answered"
        gradebook.db.commit()
    return copy


def rows(path, table):
    with sqlite3.connect(path) as db:
        return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def scores(path, student):
    with Gradebook(sqlite_url(path), COURSE_ID) as gradebook:
        notebook = gradebook.find_submission_notebook("tiling", "tiling", student)
        return {g.name: (g.auto_score, g.manual_score, g.needs_manual_grade) for g in notebook.grades}


def test_merging_brings_over_scores_and_comments(main_db, tmp_path):
    worker = grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": 2.0})
    merge_submission(sqlite_url(main_db), sqlite_url(worker), "tiling", "ada", COURSE_ID)
    assert scores(main_db, "ada") == {"correctness": (4.0, None, False), "speed": (2.0, None, False)}
    with Gradebook(sqlite_url(main_db), COURSE_ID) as gradebook:
        assert gradebook.find_comment("schedule", "tiling", "tiling", "ada").auto_comment == "ada answered"
        assert gradebook.find_student("ada").first_name == "Ada"  # the roster is the main gradebook's


def test_merging_again_updates_in_place(main_db, tmp_path):
    for attempt, speed in enumerate((1.0, 3.0)):
        worker = grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": speed}, name=f"w{attempt}.db")
        merge_submission(sqlite_url(main_db), sqlite_url(worker), "tiling", "ada", COURSE_ID)
    assert scores(main_db, "ada")["speed"] == (3.0, None, False)
    assert rows(main_db, "grade") == 2 and rows(main_db, "submitted_assignment") == 1


def test_submissions_graded_in_parallel_copies_all_arrive(main_db, tmp_path):
    # Both copies are taken before either merge, as with two workers.
    ada = grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": 3.0}, name="ada.db")
    ben = grade_in_copy(main_db, tmp_path, "ben", {"correctness": 4.0, "speed": 0.0}, name="ben.db")
    for student, copy in (("ben", ben), ("ada", ada)):
        merge_submission(sqlite_url(main_db), sqlite_url(copy), "tiling", student, COURSE_ID)
    assert scores(main_db, "ada")["speed"][0] == 3.0 and scores(main_db, "ben")["speed"][0] == 0.0
    assert rows(main_db, "grade") == 4 and rows(main_db, "submitted_assignment") == 2


def test_a_manual_score_in_the_main_gradebook_is_kept_and_flagged(main_db, tmp_path):
    merge_submission(sqlite_url(main_db), sqlite_url(grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": 1.0})), "tiling", "ada", COURSE_ID)
    with Gradebook(sqlite_url(main_db), COURSE_ID) as gradebook:
        gradebook.find_grade("speed", "tiling", "tiling", "ada").manual_score = 2.5
        gradebook.db.commit()
    worker = grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": 0.0}, name="again.db")
    merge_submission(sqlite_url(main_db), sqlite_url(worker), "tiling", "ada", COURSE_ID)
    assert scores(main_db, "ada")["speed"] == (0.0, 2.5, True)


def test_a_pending_score_stays_pending(main_db, tmp_path):
    worker = grade_in_copy(main_db, tmp_path, "ada", {"correctness": None, "speed": None})
    merge_submission(sqlite_url(main_db), sqlite_url(worker), "tiling", "ada", COURSE_ID)
    assert scores(main_db, "ada")["correctness"] == (None, None, True)


def test_only_sqlite_gradebooks_are_accepted():
    with pytest.raises(ValueError, match="sqlite"):
        sqlite_path("postgresql://host/db")


def test_shared_engines_keep_their_compiled_sql_and_merge_the_same(main_db, tmp_path):
    """share_engines: one engine per gradebook file for nbgrader's many Gradebook opens (its SQL
    compiled once), connections still closed by every Gradebook.close, the same rows merged."""
    import nbgrader.api

    from autograder.course.gradebook_sync import share_engines

    share_engines()
    share_engines()  # once is enough; twice changes nothing
    with Gradebook(sqlite_url(main_db), COURSE_ID) as first:
        engine = first.engine
    assert engine.pool.checkedout() == 0
    with Gradebook(sqlite_url(main_db), COURSE_ID) as second:
        assert second.engine is engine
    for speed in (1.0, 3.0):  # the same worker file, copied again, as a retried job
        worker = grade_in_copy(main_db, tmp_path, "ada", {"correctness": 4.0, "speed": speed}, name="same.db")
        merge_submission(sqlite_url(main_db), sqlite_url(worker), "tiling", "ada", COURSE_ID)
        assert scores(main_db, "ada")["speed"] == (speed, None, False)
    assert rows(main_db, "grade") == 2
    assert getattr(nbgrader.api.create_engine, "shared", False)
