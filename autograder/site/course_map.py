"""The map page (index.html): the units of course/syllabus.yaml with their lessons, quizzes and
assignments, each lesson linked to its page and its quiz.

Assignments are listed, not published: their source notebooks hold the solutions, and students
get them from their instructor through nbgrader.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.syllabus import Syllabus

from . import pages
from .navigation import course_nav, lesson_page  # noqa: F401 (lesson_page: where lesson pages are)


@dataclass(frozen=True)
class QuizCount:
    """How many questions a lesson's quiz page scores, and how many it leaves to the grader."""

    scored: int  # checked and scored in the page
    code: int  # code questions: checked on the student's machine by the grader, not scored in the page

    @classmethod
    def of(cls, document: dict) -> "QuizCount":
        """The counts of a released quiz document, as its page (quiz_html.QuizView) counts them."""
        from .quiz_html import QuizView

        view = QuizView(document, released_file="")
        return cls(view.scored_count, view.code_count)

    def link_text(self) -> str:
        """The map's words for the quiz: what the page scores first, then what the grader checks."""
        scored = f"{self.scored} question{'' if self.scored == 1 else 's'}"
        if not self.code:
            return scored
        if not self.scored:
            return f"{self.code} question{'' if self.code == 1 else 's'} to check with the grader"
        return f"{scored}, plus {self.code} to check with the grader"


@dataclass
class LessonEntry:
    title: str
    page: str
    notebook: str
    quiz: QuizCount
    number: int = 0  # through the whole course, as the sidebar numbers lessons
    released: dict | None = None  # the released quiz's id and integrity, for the reader's progress


@dataclass
class AssignmentEntry:
    title: str
    problem: str
    after_title: str
    after_page: str
    graded_on: str = ""  # syllabus.Assignment's: what is graded, and how to check it first
    check_it: tuple[str, str] = ("", "")


@dataclass
class UnitEntry:
    id: str
    title: str
    summary: str
    lessons: list[LessonEntry]
    assignments: list[AssignmentEntry]


def map_entries(syllabus: Syllabus, question_counts: dict[str, QuizCount]) -> list[UnitEntry]:
    """The map's content; `question_counts` maps a lesson id to its quiz's counts."""
    units = []
    numbers = {lesson.id: lesson.number for lesson in course_nav(syllabus).lessons}
    for unit in syllabus.units:
        titles = {lesson.id: lesson.title for lesson in unit.lessons}
        lessons = [LessonEntry(lesson.title, lesson_page(lesson.id), lesson.notebook,
                               question_counts.get(lesson.id, QuizCount(0, 0)), numbers[lesson.id])
                   for lesson in unit.lessons]
        assignments = [AssignmentEntry(a.title, a.problem, titles.get(a.after, a.after), lesson_page(a.after), a.graded_on,
                                       a.check_it) for a in unit.assignments]
        units.append(UnitEntry(unit.id, unit.title, unit.summary, lessons, assignments))
    return units


def render_map(syllabus: Syllabus, question_counts: dict[str, QuizCount],
               released: dict[str, dict] | None = None, nav=None) -> str:
    """`released` maps a lesson id to its released quiz: the map then shows the reader's progress
    in it, as the quiz's page last counted it (site.js, from what quiz.js kept). `nav`: the
    site's navigation.CourseNav (with its guides); by default the syllabus's alone."""
    nav = nav or course_nav(syllabus)
    quizzes = {lesson_id: {"id": document["id"], "integrity": document["released"]["integrity"]}
               for lesson_id, document in (released or {}).items()}
    units = map_entries(syllabus, question_counts)
    for unit, syllabus_unit in zip(units, syllabus.units):
        for lesson, syllabus_lesson in zip(unit.lessons, syllabus_unit.lessons):
            lesson.released = quizzes.get(syllabus_lesson.id)
    return pages.render("map.html", root="", course=syllabus.course, units=units, guides=nav.guides,
                        nav=nav, current=None, toc=[], pager=nav.pager(None))
