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
import threading
import warnings
from collections import OrderedDict
from pathlib import Path

from nbgrader.api import Gradebook
from sqlalchemy.exc import SAWarning

from .course_dir import CourseError


SHARED_ENGINES = 8  # the gradebooks a process keeps an engine for: the course's, and the current jobs'
_engines: OrderedDict = OrderedDict()
_engines_lock = threading.Lock()


def share_engines() -> None:
    """Make nbgrader's Gradebook reuse one SQLAlchemy engine per database in this process.

    nbgrader opens a new Gradebook, and with it a new engine, at every step of an autograde
    (about a dozen times a submission) and once per feedback; the grading run opens the course's
    for every merge and row. SQLAlchemy caches compiled SQL per engine, so each new engine
    compiled every query again: about 70% of a merge's time (cProfile, 7 submissions).
    Gradebook.close still disposes the engine's connections; the engine, with its cache, stays
    for the next one. The same SQL runs either way.
    """
    import nbgrader.api
    from sqlalchemy import create_engine

    if getattr(nbgrader.api.create_engine, "shared", False):
        return

    def shared_engine(url, **options):
        key = (str(url), tuple(sorted(options.items())))
        with _engines_lock:
            if key in _engines:
                _engines.move_to_end(key)
                return _engines[key]
            engine = _engines[key] = create_engine(url, **options)
            while len(_engines) > SHARED_ENGINES:
                _engines.popitem(last=False)[1].dispose()
            return engine

    shared_engine.shared = True
    nbgrader.api.create_engine = shared_engine


def sqlite_url(path: Path) -> str:
    return f"sqlite:///{Path(path).resolve()}"


def sqlite_path(url: str) -> Path:
    if not url.startswith("sqlite:///"):
        raise CourseError(f"the grading run works with an sqlite gradebook, not {url!r}")
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
    merge_rows(main_url, assignment, student, course_id, submission_rows(worker_url, assignment, student, course_id))


def submission_rows(worker_url: str, assignment: str, student: str, course_id: str) -> dict:
    """What autograde wrote for one submission, as plain data (what a cluster worker sends back):
    {"timestamp": ISO text or None, "notebooks": {name: {"late_submission_penalty", "grades":
    {name: {"auto_score", "needs_manual_grade"}}, "comments": {name: auto_comment}}}}."""
    with Gradebook(worker_url, course_id) as worker:
        graded = worker.find_submission(assignment, student)
        return {
            "timestamp": graded.timestamp.isoformat() if graded.timestamp else None,
            "notebooks": {
                notebook.name: {
                    "late_submission_penalty": notebook.late_submission_penalty,
                    "grades": {g.name: {"auto_score": g.auto_score, "needs_manual_grade": bool(g.needs_manual_grade)} for g in notebook.grades},
                    "comments": {c.name: c.auto_comment for c in notebook.comments},
                }
                for notebook in graded.notebooks
            },
        }


def merge_rows(main_url: str, assignment: str, student: str, course_id: str, rows: dict) -> None:
    """Write one submission's automatic results (`submission_rows`' form) into the main gradebook,
    in one transaction; the same rows twice update in place; manual scores and comments are kept."""
    from datetime import datetime

    timestamp = datetime.fromisoformat(rows["timestamp"]) if rows.get("timestamp") else None
    with warnings.catch_warnings(), Gradebook(main_url, course_id) as main:
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings (as `nbgrader autograde` does)
        warnings.simplefilter("ignore", SAWarning)
        main.update_or_create_student(student)
        main.update_or_create_submission(assignment, student, timestamp=timestamp)
        for name, notebook in rows["notebooks"].items():
            into = main.find_submission_notebook(name, assignment, student)
            into.late_submission_penalty = notebook["late_submission_penalty"]
            for grade_name, grade in notebook["grades"].items():
                kept = main.find_grade(grade_name, name, assignment, student)
                kept.auto_score = grade["auto_score"]
                kept.needs_manual_grade = kept.manual_score is not None or grade["needs_manual_grade"]
            for comment_name, comment in notebook["comments"].items():
                main.find_comment(comment_name, name, assignment, student).auto_comment = comment
        main.db.commit()
