"""The site on a phone and a laptop, in light and dark (issue 26), in a real headless Chromium at
390x844 and 1366x768 with prefers-color-scheme light and dark: the course-map menu lies inside
the screen and closes with Escape, no copy button covers code, the search finds every lesson and
no answer, the contents list on a wide screen follows the reader, figures keep readable labels
on a phone and say what they show, the notebook downloads from file://, the ordering buttons'
names say what they show, and a student's progress survives a rebuilt site and shows on the map.
axe in both colour schemes is in test_accessibility.py."""
from __future__ import annotations

import re

import pytest
import yaml

from autograder.site.search import read_index_script
from quiz_browser import answer_and_check, question, wait_until_ready
from site_test_course import NEXT_QUIZ, SUMMARY, TINY_QUIZ

VIEWPORTS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
LOOKS = [(size, scheme) for size in VIEWPORTS for scheme in ("light", "dark")]


@pytest.fixture(params=LOOKS, ids=[f"{size}-{scheme}" for size, scheme in LOOKS], scope="module")
def look(request, browser):
    size, scheme = request.param
    viewport = VIEWPORTS[size]
    context = browser.new_context(viewport=viewport, color_scheme=scheme, is_mobile=size == "phone",
                                  has_touch=size == "phone")
    context.size = size
    yield context
    context.close()


def open_page(context, site, name):
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    page.goto((site / name).as_uri())
    page.wait_for_load_state("load")
    return page


def test_the_colour_scheme_is_the_readers(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny.html")
    dark = page.evaluate("matchMedia('(prefers-color-scheme: dark)').matches")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    red, green, blue = (int(v) for v in re.findall(r"\d+", background)[:3])
    assert (red + green + blue < 150) if dark else (red + green + blue > 700), background
    page.close()


def test_the_menu_lies_inside_the_screen_and_closes_with_escape(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny-next.html")
    width = page.viewport_size["width"]
    menu = page.locator("details.menu")
    if look.size == "laptop":  # the map is the sidebar here, inside the screen
        assert menu.is_hidden()
        box = page.locator(".sidebar").bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width
        page.close()
        return
    menu.locator("summary").click()
    panel = page.get_by_role("navigation", name="Course map")
    assert panel.is_visible()
    for element in [panel, *panel.get_by_role("link").all()]:
        box = element.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= width, box
    panel.get_by_role("link").last.focus()
    page.keyboard.press("Escape")
    assert menu.get_attribute("open") is None and panel.is_hidden()
    assert page.evaluate("document.activeElement.tagName") == "SUMMARY"  # focus back on the menu's button
    page.close()


def test_no_copy_button_covers_text(look, tiny_site):
    for name in ("lessons/tiny.html", "lessons/tiny-next.html"):
        page = open_page(look, tiny_site, name)
        overlaps = page.evaluate("""() => {
            const hits = [];
            for (const button of document.querySelectorAll('.copy-button')) {
                const b = button.getBoundingClientRect();
                const walker = document.createTreeWalker(button.parentElement.querySelector('pre'), NodeFilter.SHOW_TEXT);
                for (let node; (node = walker.nextNode());) {
                    const range = document.createRange();
                    range.selectNodeContents(node);
                    for (const r of range.getClientRects()) {
                        if (r.width && r.left < b.right && r.right > b.left && r.top < b.bottom && r.bottom > b.top)
                            hits.push(node.textContent.slice(0, 40));
                    }
                }
            }
            return hits;
        }""")
        assert page.locator(".copy-button").count() >= 2
        assert overlaps == [], (name, overlaps)
        page.close()


def search(page, query):
    box = page.get_by_role("searchbox", name="Search the course")
    box.fill(query)
    status = page.locator(".search-status")
    status.wait_for(state="visible")
    page.wait_for_function("q => document.querySelector('.search-status').textContent.includes(q)", arg=query)
    return page.locator(".search-results a")


SEARCHES = [  # a term from each lesson, a quiz question, the map
    ("shows a table", "A tiny lesson"),
    ("Learning goals", "Next steps: Learning goals"),
    ("ax.barh", "Next steps: How it is drawn"),
    ("16x16 float32 tile", "A tiny lesson: Check yourself, question 3"),
    ("Headings, a wide table", "Course map: Second unit"),
]


def test_search_finds_a_term_from_each_lesson_and_goes_there(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny.html")
    for query, title in SEARCHES:
        results = search(page, query)
        assert any(title in text for text in results.all_inner_texts()), (query, results.all_inner_texts())
    results = search(page, "Learning goals")
    page.get_by_role("searchbox").press("ArrowDown")
    assert page.evaluate("document.activeElement.closest('.search-results') !== null")
    page.keyboard.press("Enter")
    page.wait_for_url("**/lessons/tiny-next.html#learning-goals")
    assert page.errors == []
    page.close()


def _secrets(quiz_yaml: str) -> list[str]:
    """What a quiz's instructor copy keeps from students: explanations, feedback, accepted texts and numbers."""
    found = []
    for q in yaml.safe_load(quiz_yaml)["questions"]:
        found += [q.get("explanation"), q.get("feedback"), q.get("solution")]
        found += [c.get("feedback") for c in q.get("choices", [])] + [m["feedback"] for m in q.get("mistakes", [])]
        found += [str(a) for a in q.get("accept", [])] + ([str(q["answer"])] if "answer" in q else [])
    return [text for text in found if text]


def test_the_index_holds_no_answer_explanation_or_feedback(tiny_site):
    entries = read_index_script((tiny_site / "assets" / "search-index.js").read_text(encoding="utf-8"))
    text = " ".join(" ".join(e.values()) for e in entries)
    assert "How many bytes does a 16x16 float32 tile take?" in text  # question text is in it
    secrets = _secrets(TINY_QUIZ) + _secrets(NEXT_QUIZ)
    assert len(secrets) > 15
    for secret in secrets:
        assert " ".join(secret.split()) not in text, secret
    assert not re.search(r'"(check|accept|respond|integrity|salt)"', (tiny_site / "assets" / "search-index.js").read_text())


def test_search_finds_no_answer(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny-next.html")
    for query in ("ranks", "1024", "counts values", "transform loops", "tile width"):
        results = search(page, query)
        assert results.count() == 0, (query, results.all_inner_texts())
        assert page.locator(".search-status").inner_text().startswith("Nothing found")
    page.close()


def test_the_contents_list_follows_the_reader(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny-next.html")
    contents = page.locator(".page-toc")
    if look.size == "phone":  # the contents are the disclosure at the top here
        assert contents.is_hidden() and page.locator("details.toc-inline").is_visible()
        page.close()
        return
    main = page.locator("main").bounding_box()
    box = contents.bounding_box()
    assert box["x"] >= main["x"] + main["width"] and box["x"] + box["width"] <= 1366  # on the right

    def current():
        page.wait_for_timeout(150)  # a frame for the scroll handler
        return contents.locator("[aria-current=location]").all_inner_texts()

    assert current() == ["Learning goals"]
    for heading_id, text in (("how-it-is-drawn", "How it is drawn"), ("1-a-wide-table", "1. A wide table"),
                             ("check-yourself", "Check yourself")):
        page.locator(f"[id='{heading_id}']").evaluate("h => h.scrollIntoView({block: 'start'})")
        assert current() == [text]
        assert contents.is_visible() and contents.bounding_box()["y"] >= 0  # sticky: still in view
    page.close()


def test_figures_keep_readable_labels_and_say_what_they_show(look, tiny_site):
    page = open_page(look, tiny_site, "lessons/tiny-next.html")
    figure = page.locator("figure.figure")
    image = figure.locator("img")
    drawn = int(image.get_attribute("width"))
    assert image.evaluate("i => i.getBoundingClientRect().width") == pytest.approx(drawn, abs=1)  # never shrunk
    frame = figure.locator(".figure-frame")
    if look.size == "phone":  # wider than the screen: the frame scrolls, within the page's width
        assert frame.evaluate("f => f.scrollWidth > f.clientWidth")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    caption = figure.locator("figcaption")
    assert caption.inner_text().startswith("Figure 1. " + SUMMARY)
    assert figure.get_by_role("link", name=SUMMARY).count() == 1  # read once, as the link's name
    assert "figcaption" not in figure.aria_snapshot() or SUMMARY not in figure.locator("figcaption").aria_snapshot()
    page.close()


def test_the_ordering_buttons_are_named_by_what_they_show(browser, tiny_site):
    page = browser.new_page()
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    article = question(page, "steps")
    for button in article.locator("button.move").all():
        visible = button.evaluate("b => [...b.childNodes].filter(n => !(n.classList && n.classList.contains("
                                  "'visually-hidden'))).map(n => n.textContent).join('').replace(/[\\u2190-\\u21ff]/g, '').trim()")
        name = re.search(r'button "([^"]*)"', button.aria_snapshot()).group(1)
        item = button.evaluate("b => b.closest('li').querySelector('.item-text').textContent")
        assert visible in ("Up", "Down") and name.startswith(visible) and item in name, (visible, name)
    first = article.locator(".ordering > li").first
    text = first.locator(".item-text").inner_text()
    first.get_by_role("button", name=re.compile(r"^Down")).click()
    moved = article.locator(".ordering > li").nth(1)
    assert moved.get_by_role("button", name=re.compile(rf"^Up\W+{re.escape(text)}, 2 of 3$")).count() == 1
    page.close()


def test_the_notebook_downloads_from_a_file_url(browser, tiny_site):
    context = browser.new_context(accept_downloads=True)
    page = context.new_page()
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the notebook").click()
    assert download.value.suggested_filename == "tiny.ipynb"
    assert download.value.path().read_bytes() == (tiny_site / "notebooks" / "tiny.ipynb").read_bytes()
    assert page.url.endswith("/lessons/tiny.html")  # not navigated to the raw JSON
    context.close()


@pytest.fixture(scope="module")
def rebuilt_site(tmp_path_factory, tiny_course, session_cache):
    """A site of its own, to be rebuilt in place by the test."""
    from autograder.site.build import build_site

    out = tmp_path_factory.mktemp("rebuilt") / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TVM_COURSE_CACHE", str(session_cache))
        build_site(out, tiny_course)

    def rebuild():
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("TVM_COURSE_CACHE", str(session_cache))
            build_site(out, tiny_course)

    return out, rebuild


def test_progress_survives_a_rebuild_and_shows_on_the_map(browser, rebuilt_site):
    site, rebuild = rebuilt_site
    context = browser.new_context()
    page = context.new_page()
    page.goto((site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    answer_and_check(page, "pick-one", "b")
    answer_and_check(page, "verb", "ranks")
    answer_and_check(page, "tile-bytes", "256")
    assert page.locator("[data-score]").inner_text().startswith("2 / ")
    before = (site / "lessons" / "tiny.html").read_text(encoding="utf-8")
    rebuild()
    assert (site / "lessons" / "tiny.html").read_text(encoding="utf-8") == before  # the same release
    page.reload()
    wait_until_ready(page)
    assert page.locator("[data-score]").inner_text().startswith("2 / ")
    assert question(page, "verb").get_attribute("data-status") == "correct"
    assert question(page, "tile-bytes").get_attribute("data-status") == "wrong"
    page.goto((site / "index.html").as_uri())
    progress = page.locator("[data-quiz-progress=tiny]")
    progress.wait_for(state="visible")
    assert progress.inner_text() == "Your progress: 2 of 6 correct"
    assert page.locator("[data-quiz-progress=tiny-next]").is_hidden()  # not started
    context.close()
