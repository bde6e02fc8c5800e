"""The real course site, end to end: built from the real lessons and quizzes, served on 127.0.0.1,
read and answered in a real headless Chromium, and searched for any trace of the plain key.

The lessons are executed through autograder.site.executed (its default cache, or
$TVM_COURSE_CACHE), so a session that already ran them reuses those runs.
"""
from __future__ import annotations

import html
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from autograder import syllabus
from autograder.quiz import load_instructor
from autograder.site.build import build_site
from autograder.site.serve import SiteServer

from axe import serious_violations
from quiz_browser import answer_and_check, question, score, status, wait_until_ready
from site_test_course import REPO

pytestmark = pytest.mark.slow

COURSE = syllabus.load(REPO / "course" / "syllabus.yaml")
LESSONS = [lesson for unit in COURSE.units for lesson in unit.lessons]
# What a released question may hold, by type (see autograder/quiz/release.py); nothing else may leak in.
RELEASED_FIELDS = {"id", "type", "prompt", "feedback", "integrity", "accept", "respond",
                   "choices", "unit", "step", "case_sensitive", "items"}
CODE_FIELDS = {"id", "type", "prompt", "feedback", "integrity", "problem", "starter", "require", "explanation"}


@pytest.fixture(scope="session")
def real_site(tmp_path_factory) -> Path:
    return build_site(tmp_path_factory.mktemp("real-site") / "site").out


@pytest.fixture(scope="session")
def served(real_site):
    with SiteServer(real_site, port=0, quiet=True) as server:
        yield server.url


def _key(quiz_path: str) -> dict:
    """The answer key exactly as an instructor prints it: `tvm-course quiz key QUIZ`."""
    result = subprocess.run([sys.executable, "-m", "autograder.cli", "quiz", "key", str(REPO / quiz_path)],
                            capture_output=True, text=True, timeout=60, check=True)
    return yaml.safe_load(result.stdout)


def _flat(text: str) -> str:
    return " ".join(html.unescape(text).split())


def _as_shown(text: str) -> str:
    """Quiz text as the page shows it: `code` spans lose their backticks."""
    return _flat(text).replace("`", "")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_a_student_reads_the_lesson_and_takes_its_quiz(page, served, lesson):
    page.goto(served)
    assert page.locator("h1").inner_text() == COURSE.course
    page.locator(".lesson-list").get_by_role("link", name=re.compile(re.escape(lesson.title))).click()
    page.wait_for_url(f"**/lessons/{lesson.id}.html")
    wait_until_ready(page)
    assert page.locator("main h1").inner_text().startswith(lesson.title)

    plots = page.locator("article.notebook figure.figure img")
    assert plots.count() >= 1
    for natural, drawn, alt in plots.evaluate_all(
            "imgs => imgs.map(i => [i.naturalWidth, Number(i.getAttribute('width')), i.alt])"):
        assert drawn > 100 and natural >= 2 * drawn - 1, (natural, drawn)  # sharp: twice the pixels it is drawn at
        assert alt and "no text description" not in alt  # each plot has its summary
    assert page.locator("article.notebook .code_cell .highlight").count() >= 3  # the code, highlighted

    quiz, _ = load_instructor(REPO / lesson.quiz)
    scored = [q for q in quiz.questions if q.type != "code"]
    total = len(scored)
    assert score(page) == f"0 / {total} correct"
    key = _key(lesson.quiz)
    for number, q in enumerate(scored, start=1):
        feedback = answer_and_check(page, q.id, key[q.id])
        assert feedback.startswith("✓ Correct."), (q.id, feedback)
        assert _as_shown(q.explanation) in _flat(feedback)  # the sealed explanation, opened
        assert score(page) == f"{number} / {total} correct"
    assert score(page) == f"{total} / {total} correct"

    wrong_question = next(q for q in scored if q.type == "single")
    wrong_letter, wrong_choice = next((letter, choice) for letter, choice in zip("abcdefgh", wrong_question.choices)
                                      if not choice.correct)
    feedback = answer_and_check(page, wrong_question.id, wrong_letter)
    assert feedback.startswith("✗ Not yet.")
    assert _as_shown(wrong_choice.feedback) in _flat(feedback)
    assert status(page, wrong_question.id) == "wrong"
    assert score(page) == f"{total - 1} / {total} correct"

    for code_question in (q for q in quiz.questions if q.type == "code"):
        text = question(page, code_question.id).inner_text()
        assert f"tvm-course grade-schedule {code_question.problem} my_schedule.py" in text
        assert f"tvm-course quiz check {quiz.id}.released.yaml answers.yaml" in text

    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="Course map").click()
    page.wait_for_url(served + "index.html")
    assert page.errors == [] and page.remote_requests == []


def test_lesson_pages_fit_a_phone(browser, served):
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True)
    page = context.new_page()
    for lesson in LESSONS:
        page.goto(f"{served}lessons/{lesson.id}.html")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390, lesson.id
        # Outputs wrap: none is cut off or scrolls sideways.
        cut = page.locator("article.notebook .output_area pre").evaluate_all(
            "ps => ps.filter(p => p.scrollWidth > p.clientWidth).map(p => p.textContent.slice(0, 60))")
        assert cut == [], (lesson.id, cut)
    context.close()


@pytest.mark.parametrize("width", [1366, 390])
def test_every_page_is_clean_for_axe(browser, served, width):
    context = browser.new_context(viewport={"width": width, "height": 900}, is_mobile=width < 700, has_touch=width < 700)
    page = context.new_page()
    for name in ["index.html", *(f"lessons/{lesson.id}.html" for lesson in LESSONS)]:
        page.goto(served + name)
        page.wait_for_load_state("load")
        assert serious_violations(page) == [], (name, width)
        levels = page.locator("h1, h2, h3, h4, h5, h6").evaluate_all("hs => hs.map(h => Number(h.tagName[1]))")
        assert levels.count(1) == 1 and all(b - a <= 1 for a, b in zip(levels, levels[1:])), (name, levels)
        assert page.get_by_role("navigation", name="Previous and next").count() == 1
    context.close()


def test_each_lesson_page_has_contents_a_course_map_and_its_notebook(browser, served, real_site):
    import nbformat

    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    for number, lesson in enumerate(LESSONS, start=1):
        page.goto(f"{served}lessons/{lesson.id}.html")
        course_map = page.get_by_role("navigation", name="Course map")
        assert course_map.locator("[aria-current=page]").inner_text() == f"{number}. {lesson.title}"
        toc = page.get_by_role("navigation", name="On this page").get_by_role("link")
        assert toc.count() >= 4 and toc.last.inner_text() in ("Check yourself", "Next: the assignments",
                                                               "Next: the assignment")
        download = page.get_by_role("link", name="Download the notebook (.ipynb)").get_attribute("href")
        notebook = nbformat.read(real_site / "lessons" / download, as_version=4)
        source = nbformat.read(REPO / lesson.notebook, as_version=4)
        assert [c.source for c in notebook.cells] == [c.source for c in source.cells]
        assert all(not c.get("outputs") for c in notebook.cells)
    context.close()


def _instructor_only_texts() -> list[tuple[str, str]]:
    """(where, text) for every text a released copy must only carry sealed."""
    found = []
    for lesson in LESSONS:
        quiz, _ = load_instructor(REPO / lesson.quiz)
        for q in quiz.questions:
            if q.type == "code":
                continue  # its explanation is plain by design; its solution is checked below
            found.append((f"{quiz.id}/{q.id} explanation", q.explanation))
            found += [(f"{quiz.id}/{q.id} choice feedback", c.feedback) for c in q.choices if c.feedback]
            found += [(f"{quiz.id}/{q.id} mistake feedback", m.feedback) for m in q.mistakes]
    return found


def test_the_guides_are_pages_of_the_real_site_and_the_architecture_is_not(real_site):
    from autograder.site.guides import GUIDES

    built = sorted(p.name for p in (real_site / "guides").iterdir())
    assert built == sorted(f"{name}.html" for name, _ in GUIDES)
    for name, title in GUIDES:
        html_text = (real_site / "guides" / f"{name}.html").read_text(encoding="utf-8")
        assert f'aria-current="page">{title}</a>' in html_text, name  # marked in the course map
        assert '<article class="notebook guide">' in html_text and 'class="toc"' in html_text, name
    index = (real_site / "index.html").read_text(encoding="utf-8")
    assert all(f'href="guides/{name}.html"' in index for name, _ in GUIDES)


def test_no_plain_key_anywhere_in_the_built_site(real_site):
    files = {p.relative_to(real_site).as_posix(): _flat(p.read_text(encoding="utf-8"))
             for p in real_site.rglob("*") if p.is_file() and p.suffix not in (".png", ".jpg")}
    assert any(name.startswith("lessons/") for name in files) and any(name.endswith(".yaml") for name in files)
    for name, text in files.items():
        assert not re.search(r'correct"?\s*:\s*true', text), f"{name} carries a correct: true marker"
        assert not re.search(r'"?solution"?\s*:', text), f"{name} carries a solution"
        for where, secret in _instructor_only_texts():
            assert _flat(secret) not in text, f"{name} shows the {where} in plain text"


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.id)
def test_the_quiz_data_in_the_site_is_the_released_copy_only(real_site, lesson):
    quiz, _ = load_instructor(REPO / lesson.quiz)
    page = (real_site / "lessons" / f"{lesson.id}.html").read_text(encoding="utf-8")
    embedded = re.search(r'<script type="application/json" id="quiz-data-[\w-]+">(.*?)</script>', page, re.S)
    document = json.loads(embedded.group(1))
    released = yaml.safe_load((real_site / "quizzes" / f"{quiz.id}.released.yaml").read_text(encoding="utf-8"))
    assert released == document
    assert set(document) <= {"id", "title", "lesson", "intro", "released", "questions"}
    assert set(document["released"]) == {"scheme", "salt", "integrity"}
    section = page[page.index('<section class="quiz"'):]
    for q, data in zip(quiz.questions, document["questions"]):
        assert data["id"] == q.id
        if q.type == "code":
            assert set(data) <= CODE_FIELDS
            assert _flat(q.solution) not in _flat(section)
            continue
        assert set(data) <= RELEASED_FIELDS, f"{q.id}: {set(data) - RELEASED_FIELDS}"
        for entry in data["accept"] + data["respond"]:
            assert set(entry) == {"check", "text"} and re.fullmatch(r"[0-9a-f]{64}", entry["check"])
        plain = json.dumps({k: v for k, v in data.items() if k not in ("accept", "respond", "integrity")})
        if q.type == "numeric":
            assert not re.search(rf"(?<![\w.]){re.escape(f'{q.answer:g}')}(?![\w])", plain), q.id
        if q.type == "text":
            for accepted in q.accept:
                assert f'"{accepted}"' not in plain, q.id
