"""axe-core 4.14 (vendored, tests/site/vendor/axe-core/) finds no serious or critical violation on any
page of the built site, at desktop width (1366 px) and on a phone (390 px), in the light and the
dark colour scheme, as loaded and in the states a student puts it in: menus and contents opened,
search results shown, answers checked, a figure enlarged, kept answers restored. The real course's pages are checked the same way in test_site_end_to_end.py."""
from __future__ import annotations

import pytest

from axe import serious_violations
from quiz_browser import answer_and_check, wait_until_ready

WIDTHS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGES = ["index.html", "lessons/tiny.html", "lessons/tiny-next.html", "guides/students.html"]


LOOKS = [(width, scheme) for width in WIDTHS for scheme in ("light", "dark")]


@pytest.fixture(params=LOOKS, ids=[f"{width}-{scheme}" for width, scheme in LOOKS], scope="module")
def context(request, browser):
    width, scheme = request.param
    viewport = WIDTHS[width]
    context = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 700,
                                  has_touch=viewport["width"] < 700, color_scheme=scheme)
    yield context
    context.close()


@pytest.mark.parametrize("name", PAGES)
def test_pages_as_loaded(context, tiny_site, name):
    page = context.new_page()
    page.goto((tiny_site / name).as_uri())
    page.wait_for_load_state("load")
    assert serious_violations(page) == []
    page.close()


def test_pages_as_a_student_uses_them(context, tiny_site):
    page = context.new_page()
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    for summary in page.locator("details.menu > summary, details.toc-inline > summary").all():
        if summary.is_visible():
            summary.click()  # the phone's menu and contents, opened
    answer_and_check(page, "pick-one", "a")  # wrong: feedback
    answer_and_check(page, "verb", "ranks")  # right: the explanation
    answer_and_check(page, "tile-bytes", "about a kilobyte")  # unreadable
    page.locator("details.explanation summary").click()
    assert serious_violations(page) == []

    page.reload()  # the kept answers come back, with the notice that says so
    wait_until_ready(page)
    assert "last visit" in page.locator("[data-quiz-notice]").inner_text()
    assert serious_violations(page) == []

    page.goto((tiny_site / "lessons" / "tiny-next.html").as_uri())
    page.wait_for_load_state("load")
    page.get_by_role("searchbox").fill("table")  # search results over the page
    page.locator(".search-results a").first.wait_for()
    assert serious_violations(page) == []
    page.keyboard.press("Escape")
    page.locator("a.figure-link").click()
    page.get_by_role("dialog").wait_for()
    assert serious_violations(page) == []
    page.close()


def test_the_check_finds_what_it_should(browser, tmp_path):
    """Not a vacuous pass: the same check on a page with known faults names them."""
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html lang="en"><title>broken</title><main><h1>Broken</h1>'
                      '<img src="x.png"><pre style="width: 5rem; overflow-x: auto">' + "x" * 200 + "</pre>"
                      '<button></button></main></html>', encoding="utf-8")
    page = browser.new_page()
    page.goto(broken.as_uri())
    found = {line.split(" ", 1)[0] for line in serious_violations(page)}
    assert {"image-alt", "scrollable-region-focusable", "button-name"} <= found, found
    page.close()
