"""The site's search index: what the search box (static/site.js) finds, built with the pages.

    assets/search-index.js    window.TvmCourseSearchIndex = [{title, section, url, text}, ...]

A script, not JSON, because a page opened from file:// may load a script but not fetch a file;
site.js loads it only when the reader first uses the search box, so pages do not carry it.

What is indexed: each lesson and guide section (its heading, prose and code, not outputs), each quiz
question's prompt (and the texts of its choices or items, which the page shows anyway), and the
map's units, lessons and assignments. Never a quiz's answers, explanations or feedback: the index
is built from the released document's plain fields only (`QUIZ_FIELDS`), never from the
instructor copy, and the sealed entries are not read.
"""
from __future__ import annotations

import json

from bs4 import BeautifulSoup

from .page_structure import HEADINGS, heading_text
from .pages import script_json

QUIZ_FIELDS = ("prompt", "choices", "items")  # of a released question; nothing else is indexed
INDEXED_LEVELS = ("h2", "h3")


def lesson_entries(lesson_title: str, page: str, body_html: str) -> list[dict]:
    """One entry per h2/h3 section of a rendered lesson or guide (the text before the first: the page's own)."""
    soup = BeautifulSoup(body_html, "html.parser")
    for hidden in soup.select(".output_wrapper, .output_area, .anchor-link, figure"):
        hidden.decompose()
    entries = [{"title": lesson_title, "section": "", "url": page, "parts": []}]
    for element in soup.find_all(True):
        if element.name in INDEXED_LEVELS and element.get("id"):
            entries.append({"title": lesson_title, "section": heading_text(element),
                            "url": f"{page}#{element['id']}", "parts": []})
        elif element.name in ("p", "li", "pre", "td", "th", "blockquote") or (
                element.name in HEADINGS and element.name not in INDEXED_LEVELS):
            if element.find_parent(["p", "li", "pre", "td", "th", "blockquote"]) is None:
                # Code keeps its own spacing; prose elements are joined word by word.
                entries[-1]["parts"].append(element.get_text() if element.name == "pre" else element.get_text(" "))
    return [_entry(e["title"], e["section"], e["url"], " ".join(e["parts"])) for e in entries
            if e["parts"] or e["section"]]


def quiz_entries(lesson_title: str, page: str, document: dict) -> list[dict]:
    entries = []
    for number, question in enumerate(document["questions"], start=1):
        parts = [question.get("prompt") or ""]
        for field in QUIZ_FIELDS[1:]:
            parts += [str(text) for text in question.get(field) or []]
        entries.append(_entry(lesson_title, f"Check yourself, question {number}", f"{page}#q{number}", " ".join(parts)))
    return entries


def map_entries(units) -> list[dict]:
    """`units`: course_map.map_entries()."""
    entries = []
    for unit in units:
        parts = [unit.summary or ""] + [f"Lesson {lesson.number}: {lesson.title}" for lesson in unit.lessons]
        parts += [f"{a.title} (problem {a.problem})" for a in unit.assignments]
        entries.append(_entry("Course map", unit.title, f"index.html#unit-{unit.id}", " ".join(parts)))
    return entries


def _entry(title: str, section: str, url: str, text: str) -> dict:
    return {"title": title, "section": section, "url": url, "text": " ".join(text.split())}


def index_script(entries: list[dict]) -> str:
    return "window.TvmCourseSearchIndex = " + str(script_json(entries)) + ";\n"


def read_index_script(text: str) -> list[dict]:
    """The entries back from index_script's output (for tests and tools)."""
    return json.loads(text.split("=", 1)[1].strip().rstrip(";"))
