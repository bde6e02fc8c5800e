"""A lesson page to study from, in a real headless Chromium (issue 14, items 1-3): the course map as a
sidebar (a menu on a phone), a table of contents, breadcrumb and previous / next links, headings in
order, code and tables wider than the prose, outputs wrapped, copy buttons; the notebook to download
(and Colab / Binder with a repository URL); figures sharp at 390 px that open enlarged, with their
summary read once."""
from __future__ import annotations

import re

import nbformat
import pytest

from site_test_course import LONG_CODE, NEXT_NOTEBOOK_CELLS, SUMMARY, TINY_NOTEBOOK_CELLS

DESKTOP = {"width": 1366, "height": 900}


def texts(locator) -> list[str]:
    """The elements' text as written (textContent, spaces collapsed), whatever CSS does to its case."""
    return locator.evaluate_all("es => es.map(e => e.textContent.replace(/\\s+/g, ' ').trim())")

PHONE = {"width": 390, "height": 844}


@pytest.fixture
def open_page(browser, tiny_site):
    contexts = []

    def open_(name: str, viewport=DESKTOP):
        context = browser.new_context(viewport=viewport, is_mobile=viewport["width"] < 700,
                                      has_touch=viewport["width"] < 700, device_scale_factor=2)
        contexts.append(context)
        page = context.new_page()
        page.errors = []
        page.on("pageerror", lambda error: page.errors.append(str(error)))
        page.goto((tiny_site / name).as_uri())
        page.wait_for_load_state("load")
        return page

    yield open_
    for context in contexts:
        context.close()


def test_the_sidebar_holds_the_course_map_and_the_right_column_the_page_contents(open_page):
    page = open_page("lessons/tiny-next.html")
    sidebar = page.locator(".sidebar")
    assert sidebar.is_visible() and page.locator("details.menu").is_hidden()
    course_map = page.get_by_role("navigation", name="Course map")
    assert course_map.count() == 1  # the menu's copy is not shown (nor read) at this width
    assert texts(course_map.get_by_role("link")) == [
        "Course map", "Unit 1: Tiny unit", "1. A tiny lesson", "Unit 2: Second unit", "2. Next steps",
        "For students", "How grading works"]  # then the guides (docs/: site_test_course.py)
    assert course_map.locator("[aria-current=page]").inner_text() == "2. Next steps"
    toc = page.get_by_role("navigation", name="On this page")
    assert toc.count() == 1 and toc.is_visible()
    assert texts(toc.get_by_role("link")) == [
        "Learning goals", "About the numbers", "1. A wide table", "2. A plot", "How it is drawn", "Check yourself"]
    for href in toc.get_by_role("link").evaluate_all("links => links.map(l => l.getAttribute('href'))"):
        assert href.startswith("#") and page.locator(f"[id='{href[1:]}']").count() == 1, href
    toc.get_by_role("link", name="2. A plot").click()
    assert page.evaluate("location.hash") == "#2-a-plot"
    assert page.locator("[id='2-a-plot']").evaluate("h => h.getBoundingClientRect().top") < 100  # scrolled to it
    assert page.locator(".page-toc").evaluate("s => s.getBoundingClientRect().top") >= 0  # still in view (sticky)
    assert page.errors == []


def test_breadcrumb_and_previous_next_lead_through_the_course(open_page):
    page = open_page("index.html")
    pager = page.get_by_role("navigation", name="Previous and next")
    assert texts(pager.get_by_role("link")) == ["Next Lesson 1: A tiny lesson"]
    pager.get_by_role("link").click()
    page.wait_for_url("**/lessons/tiny.html")
    crumbs = page.get_by_role("navigation", name="Breadcrumb")
    assert texts(crumbs.locator("li")) == ["Course map", "Unit 1: Tiny unit", "Lesson 1"]
    assert crumbs.get_by_role("link", name="Unit 1: Tiny unit").get_attribute("href") == "../index.html#unit-tiny-unit"
    pager = page.get_by_role("navigation", name="Previous and next")
    assert texts(pager.get_by_role("link")) == ["Previous Course map", "Next Lesson 2: Next steps"]
    pager.get_by_role("link", name="Next Lesson 2: Next steps").click()
    page.wait_for_url("**/lessons/tiny-next.html")
    assert texts(page.get_by_role("navigation", name="Previous and next").get_by_role("link")) == [
        "Previous Lesson 1: A tiny lesson", "Next Course map"]
    # The lesson's own link to the other notebook goes to that lesson's page.
    page.locator("article.notebook").get_by_role("link", name="the tiny lesson").click()
    page.wait_for_url("**/lessons/tiny.html")
    assert page.errors == []


def test_on_a_phone_the_map_is_a_menu_and_the_contents_a_disclosure(open_page):
    page = open_page("lessons/tiny-next.html", PHONE)
    assert page.locator(".sidebar").is_hidden()
    menu = page.locator("details.menu")
    menu.locator("summary").click()
    course_map = page.get_by_role("navigation", name="Course map")
    assert course_map.is_visible() and course_map.count() == 1
    assert course_map.locator("[aria-current=page]").inner_text() == "2. Next steps"
    menu.locator("summary").click()  # closes again
    contents = page.locator("details.toc-inline")
    assert contents.is_visible() and not contents.get_attribute("open") is not None
    contents.locator("summary").click()
    toc = page.get_by_role("navigation", name="On this page")
    assert toc.is_visible() and "2. A plot" in toc.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_headings_are_in_order_with_one_h1(open_page):
    for name in ("index.html", "lessons/tiny.html", "lessons/tiny-next.html"):
        page = open_page(name)
        levels = page.locator("h1, h2, h3, h4, h5, h6").evaluate_all("hs => hs.map(h => Number(h.tagName[1]))")
        assert levels.count(1) == 1 and levels[0] == 1, (name, levels)
        assert all(b - a <= 1 for a, b in zip(levels, levels[1:])), (name, levels)


def test_code_and_tables_may_be_wider_than_the_prose_and_outputs_wrap(open_page):
    page = open_page("lessons/tiny-next.html")
    prose = page.locator("article.notebook .text_cell_render p").first.evaluate(
        "p => parseFloat(getComputedStyle(p).maxWidth)")
    code = page.locator("article.notebook .input_area").first.evaluate("e => e.getBoundingClientRect().width")
    column = page.locator("main").evaluate("e => e.getBoundingClientRect().width")
    # Code takes the whole column, beside the course map and the contents, which is wider than prose.
    assert code == pytest.approx(column, abs=2) and code > prose + 50, (code, column, prose)
    assert page.locator(".table-wrap").count() == 1
    for width in (DESKTOP, PHONE):
        page = open_page("lessons/tiny-next.html", width)
        outputs = page.locator("article.notebook .output_area pre")
        assert outputs.count() >= 1
        for sizes in outputs.evaluate_all("ps => ps.map(p => [p.scrollWidth, p.clientWidth, p.textContent])"):
            assert sizes[0] <= sizes[1], sizes  # wrapped, nothing cut off or scrolled away
        verdict = page.locator("article.notebook .output_area pre", has_text="verdict:")
        assert verdict.evaluate("p => p.getBoundingClientRect().height") > 30  # over more than one line
    # On the phone the long code line scrolls inside its block (focusable, so keys can scroll it) ...
    block = page.locator("article.notebook .input_area pre", has_text="speedups =")
    assert block.evaluate("p => p.scrollWidth > p.clientWidth") and block.get_attribute("tabindex") == "0"
    # ... and a block that fits is left out of the tab order.
    short = page.locator("article.notebook .input_area pre", has_text="import base64")
    assert short.evaluate("p => p.scrollWidth <= p.clientWidth") or short.get_attribute("tabindex") == "0"
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]


def test_a_copy_button_copies_the_code(open_page):
    page = open_page("lessons/tiny-next.html")
    page.evaluate("() => { window.copied = []; navigator.clipboard.writeText = t => { copied.push(t);"
                  " return Promise.resolve(); }; }")
    blocks = page.locator("article.notebook .input_area")
    assert blocks.count() == 2 and blocks.locator("button.copy-button").count() == 2
    assert blocks.first.get_by_role("button", name="Copy the code").count() == 1
    button = blocks.first.locator("button.copy-button")
    button.click()
    copied = page.evaluate("copied")
    assert copied == [[c for k, c in NEXT_NOTEBOOK_CELLS if k == "code"][0]]
    assert copied[0].startswith(LONG_CODE)
    page.wait_for_function("b => b.textContent.startsWith('Copied')", arg=button.element_handle())
    page.wait_for_function("() => document.querySelector('[role=status].visually-hidden')"
                           ".textContent.includes('Copied')")
    # The quiz's command blocks get one too.
    lesson = open_page("lessons/tiny.html")
    assert lesson.locator(".quiz pre.command").count() == lesson.locator(".quiz .copy-holder .copy-button").count() - 1


def test_every_lesson_page_offers_its_notebook_without_outputs(open_page, tiny_site, tiny_course):
    page = open_page("lessons/tiny.html")
    link = page.get_by_role("link", name="Download the notebook (.ipynb)")
    assert link.get_attribute("href") == "../notebooks/tiny.ipynb" and link.get_attribute("download") == "tiny.ipynb"
    assert page.get_by_role("link", name="Open in Colab").count() == 0  # built without a repository URL
    for name, cells in (("tiny", TINY_NOTEBOOK_CELLS), ("tiny-next", NEXT_NOTEBOOK_CELLS)):
        downloaded = nbformat.read(tiny_site / "notebooks" / f"{name}.ipynb", as_version=4)
        nbformat.validate(downloaded)
        assert [c.source for c in downloaded.cells] == [source for _kind, source in cells]
        for cell in downloaded.cells:
            assert cell.get("outputs", []) == [] and cell.get("execution_count") is None
        assert "tvm_course_execution" not in downloaded.metadata
        source = nbformat.read(tiny_course.parents[1] / "lessons" / f"{name}.ipynb", as_version=4)
        assert [c.id for c in downloaded.cells] == [c.id for c in source.cells]


def test_with_a_repository_url_pages_open_in_colab_and_binder(use_cache, tiny_course, tmp_path, browser):
    from autograder.site.build import build_site

    site = build_site(tmp_path / "site", tiny_course, repo_url="https://github.com/ml-course/tvm-course.git",
                      repo_branch="spring-2026").out
    html = (site / "lessons" / "tiny-next.html").read_text(encoding="utf-8")
    assert ('href="https://colab.research.google.com/github/ml-course/tvm-course/blob/spring-2026/'
            'lessons/tiny-next.ipynb"') in html
    assert ('href="https://mybinder.org/v2/gh/ml-course/tvm-course/spring-2026?labpath=lessons%2Ftiny-next.ipynb"'
            in html)
    assert 'href="../notebooks/tiny-next.ipynb"' in html


@pytest.mark.parametrize("url", ["https://gitlab.com/a/b", "git@github.com:a/b.git", "https://github.com/a",
                                 "http://github.com/a/b", "https://github.com/a/b/tree/main"])
def test_a_repository_url_that_is_not_a_github_repository_is_refused(url):
    from autograder.site.notebook_links import Repository, RepositoryURLError

    with pytest.raises(RepositoryURLError, match="https://github.com/OWNER/REPO"):
        Repository.parse(url)


def test_figures_are_sharp_at_390_px_and_open_enlarged(open_page):
    page = open_page("lessons/tiny-next.html", PHONE)
    image = page.locator("figure.figure img")
    natural, shown = image.evaluate("i => [i.naturalWidth, i.getBoundingClientRect().width]")
    assert natural >= 2 * shown - 1  # two image pixels (at least) per CSS pixel
    drawn = int(image.get_attribute("width"))
    assert natural >= 2 * drawn - 1  # the file has twice the pixels of its drawn size
    assert shown == pytest.approx(drawn, abs=1) and drawn > PHONE["width"]  # kept at its size, scrolled: ...
    page.locator("figure.figure a.figure-link").tap()  # ... and a tap shows it larger still
    dialog = page.get_by_role("dialog", name="Figure 1, enlarged")
    assert dialog.is_visible()
    enlarged = dialog.locator("img").evaluate("i => i.getBoundingClientRect().width")
    assert enlarged >= drawn and enlarged >= 1.5 * shown
    body = dialog.locator(".figure-dialog-body")
    assert body.evaluate("b => b.scrollWidth > b.clientWidth") and body.get_attribute("tabindex") == "0"
    assert page.evaluate("document.activeElement.textContent") == "Close"
    page.keyboard.press("Escape")
    assert not dialog.is_visible()
    assert page.evaluate("document.activeElement.className") == "figure-link"  # focus back where it was
    # Without scripts the figure is a link to its own file, which a phone shows full screen.
    assert page.locator("figure.figure a.figure-link").get_attribute("href") == image.get_attribute("src")


def test_a_figure_summary_is_its_alt_text_and_is_not_printed_again(open_page):
    page = open_page("lessons/tiny-next.html")
    figure = page.get_by_role("figure", name="Figure 1")
    assert figure.get_by_role("img").get_attribute("alt") == SUMMARY
    assert figure.get_by_role("link", name=SUMMARY).count() == 1  # the link is named by the summary
    # The helper printed the summary after the plot; the page keeps one copy for sight, the caption.
    outputs = page.locator("article.notebook .output_area pre").all_inner_texts()
    assert not any(SUMMARY in text for text in outputs)
    assert SUMMARY in figure.locator("figcaption").inner_text()
    # What a screen reader meets: the summary once, as the figure link's (and image's) name.
    tree = figure.aria_snapshot()
    assert "paragraph" not in tree and re.search(r'link "[^"]*fused 1\.20x', tree), tree
    assert not re.search(r"text:.*fused 1\.20x", tree), tree  # the caption's copy is not read
