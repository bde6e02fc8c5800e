"""The ways around the site that every page shares: the course map as a sidebar, the breadcrumb,
and the previous / next links, all from course/syllabus.yaml; and, after the units, the guides
(guides.py), which have previous / next links of their own.

Lessons are numbered through the whole course (lesson 3 is the first of unit 2 when unit 1 has
two), the way the map page lists them. Paths are relative to the site root; templates put
`root` in front of them.
"""
from __future__ import annotations

from dataclasses import dataclass

from autograder.syllabus import Syllabus

MAP_PAGE = "index.html"


def lesson_page(lesson_id: str) -> str:
    """A lesson page's path relative to the site root."""
    return f"lessons/{lesson_id}.html"


def unit_anchor(unit_id: str) -> str:
    """The map's section for a unit, relative to the site root."""
    return f"{MAP_PAGE}#unit-{unit_id}"


@dataclass(frozen=True)
class NavLesson:
    number: int  # through the whole course, from 1
    id: str
    title: str
    page: str
    unit_number: int


@dataclass(frozen=True)
class NavUnit:
    number: int
    id: str
    title: str
    anchor: str
    lessons: tuple[NavLesson, ...]
    assignments: tuple[str, ...]  # titles: assignments come from the instructor, not from the site


@dataclass(frozen=True)
class NavGuide:
    name: str
    title: str
    page: str

    @property
    def current(self) -> str:
        """What a page passes as `current` to mark this guide in the sidebar (never a lesson id)."""
        return f"guide:{self.name}"


@dataclass(frozen=True)
class Link:
    title: str
    href: str  # relative to the site root
    kind: str  # "lesson", "guide" or "map"


@dataclass(frozen=True)
class Pager:
    previous: Link | None
    next: Link | None


@dataclass(frozen=True)
class CourseNav:
    units: tuple[NavUnit, ...]
    guides: tuple[NavGuide, ...] = ()

    @property
    def lessons(self) -> list[NavLesson]:
        return [lesson for unit in self.units for lesson in unit.lessons]

    def lesson(self, lesson_id: str) -> NavLesson:
        return next(lesson for lesson in self.lessons if lesson.id == lesson_id)

    def unit_of(self, lesson_id: str) -> NavUnit:
        return next(unit for unit in self.units if any(lesson.id == lesson_id for lesson in unit.lessons))

    def pager(self, lesson_id: str | None) -> Pager:
        """Previous and next for a lesson; for the map (None), the first lesson comes next.

        Before the first lesson and after the last one is the map."""
        lessons = self.lessons
        course_map = Link("Course map", MAP_PAGE, "map")
        if lesson_id is None:
            first = lessons[0] if lessons else None
            return Pager(None, _link(first) if first else None)
        index = next(i for i, lesson in enumerate(lessons) if lesson.id == lesson_id)
        previous = _link(lessons[index - 1]) if index > 0 else course_map
        following = _link(lessons[index + 1]) if index + 1 < len(lessons) else course_map
        return Pager(previous, following)


    def guide_pager(self, name: str) -> Pager:
        """Previous and next through the guides; before the first and after the last is the map."""
        course_map = Link("Course map", MAP_PAGE, "map")
        index = next(i for i, guide in enumerate(self.guides) if guide.name == name)
        previous = self.guides[index - 1] if index > 0 else None
        following = self.guides[index + 1] if index + 1 < len(self.guides) else None
        return Pager(Link(previous.title, previous.page, "guide") if previous else course_map,
                     Link(following.title, following.page, "guide") if following else course_map)


def _link(lesson: NavLesson) -> Link:
    return Link(f"Lesson {lesson.number}: {lesson.title}", lesson.page, "lesson")


def course_nav(syllabus: Syllabus, guides: tuple[NavGuide, ...] = ()) -> CourseNav:
    units, number = [], 0
    for unit_number, unit in enumerate(syllabus.units, start=1):
        lessons = []
        for lesson in unit.lessons:
            number += 1
            lessons.append(NavLesson(number, lesson.id, lesson.title, lesson_page(lesson.id), unit_number))
        units.append(NavUnit(unit_number, unit.id, unit.title, unit_anchor(unit.id), tuple(lessons),
                             tuple(a.title for a in unit.assignments)))
    return CourseNav(tuple(units), tuple(guides))
