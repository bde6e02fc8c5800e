"""The course website's entries for the assignments (the map page and the lesson page's "Next"):
each says what is graded and how a student checks their work first, by the assignment's kind;
the cost model's never tells a student to grade a schedule, and shows no line of its solution."""
from __future__ import annotations

import html as html_text

from nbformat.v4 import new_notebook

from autograder import syllabus as course_syllabus
from autograder.site import pages
from autograder.site.course_map import render_map
from autograder.site.executed import MeasuredOn
from autograder.site.navigation import course_nav
from autograder.site.notebook_links import NotebookLinks

from bundled_course import source_notebook


def solution_lines() -> list[str]:
    """The substantive lines of the cost model's full-credit answer (the source notebook's cell)."""
    from autograder.nbgrader_ext.plan import load_plan

    plan = load_plan(source_notebook("cost-model"))
    solution = next(a.solution for a in plan.answers.values() if a.kind == "cost-model")
    return [line.strip() for line in solution.splitlines() if len(line.strip()) > 20 and not line.strip().startswith("#")]


def assignments():
    loaded = course_syllabus.load()
    return loaded, {a.id: a for unit in loaded.units for a in unit.assignments}


def test_the_map_says_how_each_assignment_is_checked_by_its_kind():
    loaded, by_id = assignments()
    page = html_text.unescape(render_map(loaded, {}))
    assert "graded as problem tile-fused-conv" in page and "tvm-course grade-schedule tile-fused-conv my_schedule.py" in page
    cost_model = by_id["cost-model"]
    assert cost_model.graded_on in page and "<code>self_check(features, Model)</code>" in page
    assert "grade-schedule learned-cost-model" not in page  # a model is not a schedule: that command cannot grade it
    assert [line for line in solution_lines() if line in page] == []


def test_the_lesson_before_the_cost_model_points_to_its_self_check():
    loaded, by_id = assignments()
    cost_model = by_id["cost-model"]
    nav = course_nav(loaded)
    lesson = nav.lesson(cost_model.after)
    page = html_text.unescape(pages.render(
        "lesson.html", root="../", course=loaded.course, nav=nav, current=lesson.id, unit=nav.unit_of(lesson.id),
        nav_lesson=lesson, pager=nav.pager(lesson.id), title=lesson.title, toc=[],
        links=NotebookLinks("notebooks/l.ipynb", "l.ipynb"), lesson={"title": lesson.title}, notebook_html="",
        quiz_html="", assignments=[cost_model], measured_on=MeasuredOn.of(new_notebook())))
    entry = page[page.index('id="next-up"'):]
    assert cost_model.title in entry and "how soon it steers a search" in entry
    assert "self-check cell: <code>self_check(features, Model)</code>" in " ".join(entry.split())
    assert "grade-schedule" not in entry
    assert [line for line in solution_lines() if line in page] == []
