"""The guides (the repository's docs/, autograder/site/guides.py) as pages of the website: built
beside the lessons with the site's own navigation, their links made to work in the site, searchable,
and holding nothing a student must not receive.

The tiny course's site (conftest's tiny_site, built once per session) carries two small guides; the
real guides are rendered here without building the real site, which executes the lessons (the
end-to-end test checks them in the real site).
"""
from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import unquote, urlsplit

import pytest

from autograder.site import guides
from autograder.site.notebook_links import Repository
from autograder.site.search import read_index_script

from site_test_course import REPO

REAL_GUIDES = guides.render_guides(REPO, Repository.parse("https://github.com/OWNER/REPO"))


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        if tag == "a" and attrs.get("href"):
            self.hrefs.append(attrs["href"])


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def test_the_guides_are_pages_beside_the_lessons_and_the_architecture_is_not(tiny_site):
    assert sorted(p.name for p in (tiny_site / "guides").iterdir()) == ["grading.html", "students.html"]
    page = (tiny_site / "guides" / "students.html").read_text(encoding="utf-8")
    assert "<title>For students | A tiny course</title>" in page
    assert '<h1>For students</h1>' in page and "For the tiny course's students." in page
    assert 'class="notebook guide"' in page and "<table>" in page and "make lab" in page
    # On this page: the guide's sections; previous / next through the guides, then the map.
    assert 'href="#getting-started">Getting started</a>' in page
    assert 'rel="next" href="../guides/grading.html"' in page and 'rel="prev" href="../index.html"' in page


def test_every_page_lists_the_guides_and_the_map_links_them(tiny_site):
    for name in ("index.html", "lessons/tiny.html", "guides/grading.html"):
        html = (tiny_site / name).read_text(encoding="utf-8")
        nav = html.split('<nav class="course-nav"', 1)[1].split("</nav>", 1)[0]
        assert "Guides" in nav and "guides/students.html" in nav and "guides/grading.html" in nav, name
    grading = (tiny_site / "guides" / "grading.html").read_text(encoding="utf-8")
    assert re.search(r'<a href="\.\./guides/grading\.html" aria-current="page">How grading works</a>', grading)
    index = (tiny_site / "index.html").read_text(encoding="utf-8")
    assert 'id="guides"' in index and 'href="guides/students.html">For students</a>' in index


def test_links_between_guides_go_to_the_page_and_section(tiny_site):
    students = _parse((tiny_site / "guides" / "students.html").read_text(encoding="utf-8"))
    grading = _parse((tiny_site / "guides" / "grading.html").read_text(encoding="utf-8"))
    assert "grading.html" in students.hrefs
    assert "grading.html#what-is-graded-and-how" in students.hrefs and "what-is-graded-and-how" in grading.ids
    assert "#the-lessons-one-by-one" in students.hrefs and "the-lessons-one-by-one" in students.ids
    assert "students.html#getting-started" in grading.hrefs


def test_a_link_to_a_file_outside_the_site_is_plain_text_without_a_repository(tiny_site):
    html = (tiny_site / "guides" / "students.html").read_text(encoding="utf-8")
    assert "README.md" not in html and "architecture.md" not in html
    assert "The README is the repository's" in " ".join(re.sub(r"<[^>]+>", "", html).split())


def test_the_search_finds_a_guide_section(tiny_site):
    text = (tiny_site / "assets" / "search-index.js").read_text(encoding="utf-8")
    entries = read_index_script(text)
    found = [e for e in entries if e["url"] == "guides/grading.html#tiles-per-axis"]
    assert found and found[0]["title"] == "How grading works" and "224 / 16 = 14" in found[0]["text"]


# ---- the real guides ------------------------------------------------------------------------------


def test_every_listed_guide_is_in_docs_and_has_its_title():
    assert [g.name for g in REAL_GUIDES] == [name for name, _ in guides.GUIDES]
    for guide in REAL_GUIDES:
        assert guide.title and guide.toc, guide.name
        assert not (REPO / "docs" / "architecture.md").resolve() == guide.source


@pytest.mark.parametrize("guide", REAL_GUIDES, ids=lambda g: g.name)
def test_every_link_of_a_real_guide_works_in_the_site(guide):
    pages = {g.page: _parse(g.body_html).ids for g in REAL_GUIDES}
    own = _parse(guide.body_html)
    for href in own.hrefs:
        parts = urlsplit(href)
        if parts.scheme:
            assert parts.scheme in ("https", "http"), href
            if href.startswith("https://github.com/OWNER/REPO/blob/main/"):
                path = unquote(parts.path.split("/blob/main/", 1)[1])
                assert (REPO / path).exists(), f"{guide.name}: {href} names no file of the repository"
            continue
        target = f"guides/{parts.path}" if parts.path else guide.page
        assert target in pages, f"{guide.name}: {href} is no page of the site"
        if parts.fragment:
            assert parts.fragment in pages[target], f"{guide.name}: {href}: no such section"


def test_the_real_guides_hold_nothing_a_student_must_not_receive(tmp_path):
    """The site goes to students (the student edition carries it): its own check finds nothing."""
    from autograder.edition.build import find_leaks
    from autograder.site import pages

    for guide in REAL_GUIDES:
        html = pages.render("guide.html", root="../", course="c", nav=_nav(), current=None, pager=_nav().pager(None),
                            title=guide.title, nav_title=guide.nav_title, toc=guide.toc, body_html=guide.body_html)
        (tmp_path / "guides").mkdir(exist_ok=True)
        (tmp_path / "guides" / f"{guide.name}.html").write_text(html, encoding="utf-8")
    assert find_leaks(tmp_path, course=REPO / "course") == []


def _nav():
    from autograder.site.navigation import CourseNav

    return CourseNav(())
