"""Writing grades from parallel workers into one sqlite gradebook, without losing or doubling any.

nbgrader's gradebook is one sqlite file, and autograde writes to it at several points of a
grading. Rather than share it between processes, each submission is graded against its own
copy of the gradebook (taken with sqlite's backup API, so the copy is consistent), and only
the process that runs the grading run writes to the real one: it merges a finished
submission's automatic results, one transaction at a time. The rows are nbgrader's own (one
grade per grade cell and submission, found by name), so merging the same submission twice
updates it in place; manual scores and comments entered in the real gradebook are kept.
"""
from __future__ import annotations

import sqlite3
import warnings
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def sqlite_path(url: str) -> Path:
    if not url.startswith("sqlite:///"):
        raise ValueError(f"the grading run works with an sqlite gradebook, not {url!r}")
    return Path(url[len("sqlite:///"):])


def copy_gradebook(source: Path, destination: Path) -> None:
    """A consistent copy of the gradebook, even while another connection has it open."""
    src, dst = sqlite3.connect(source), sqlite3.connect(destination)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()


def merge_submission(main_url: str, worker_url: str, assignment: str, student: str, course_id: str) -> None:
    """Copy what autograde wrote for one submission from a worker's gradebook into the main one."""
    with warnings.catch_warnings(), Gradebook(worker_url, course_id) as worker, Gradebook(main_url, course_id) as main:
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings (as `nbgrader autograde` does)
        warnings.simplefilter("ignore", SAWarning)
        graded = worker.find_submission(assignment, student)
        main.update_or_create_student(student)
        main.update_or_create_submission(assignment, student, timestamp=graded.timestamp)
        for notebook in graded.notebooks:
            into = main.find_submission_notebook(notebook.name, assignment, student)
            into.late_submission_penalty = notebook.late_submission_penalty
            for grade in notebook.grades:
                kept = main.find_grade(grade.name, notebook.name, assignment, student)
                kept.auto_score = grade.auto_score
                kept.needs_manual_grade = kept.manual_score is not None or grade.needs_manual_grade
            for comment in notebook.comments:
                main.find_comment(comment.name, notebook.name, assignment, student).auto_comment = comment.auto_comment
        main.db.commit()

