"""The map page (index.html): the units of course/syllabus.yaml with their lessons, quizzes and
assignments, each lesson linked to its page and its quiz.

Assignments are listed, not published: their source notebooks hold the solutions, and students
get them from their instructor through nbgrader.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.syllabus import Syllabus

from . import pages


def lesson_page(lesson_id: str) -> str:
    """A lesson page's path relative to the site root."""
    return f"lessons/{lesson_id}.html"


@dataclass
class LessonEntry:
    title: str
    page: str
    notebook: str
    question_count: int


@dataclass
class AssignmentEntry:
    title: str
    problem: str
    after_title: str
    after_page: str


@dataclass
class UnitEntry:
    id: str
    title: str
    summary: str
    lessons: list[LessonEntry]
    assignments: list[AssignmentEntry]


def map_entries(syllabus: Syllabus, question_counts: dict[str, int]) -> list[UnitEntry]:
    """The map's content; `question_counts` maps a lesson id to the number of questions in its quiz."""
    units = []
    for unit in syllabus.units:
        titles = {lesson.id: lesson.title for lesson in unit.lessons}
        lessons = [LessonEntry(lesson.title, lesson_page(lesson.id), lesson.notebook,
                               question_counts.get(lesson.id, 0)) for lesson in unit.lessons]
        assignments = [AssignmentEntry(a.title, a.problem, titles.get(a.after, a.after), lesson_page(a.after))
                       for a in unit.assignments]
        units.append(UnitEntry(unit.id, unit.title, unit.summary, lessons, assignments))
    return units


def render_map(syllabus: Syllabus, question_counts: dict[str, int]) -> str:
    return pages.render("map.html", root="", course=syllabus.course, units=map_entries(syllabus, question_counts))
