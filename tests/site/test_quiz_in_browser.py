"""The quiz on a built lesson page, in a real headless Chromium: every browser question type, right,
wrong and unreadable answers, the running score, keyboard use, tampering, answers kept across
reloads, and a page without WebCrypto (plain http)."""
from __future__ import annotations

import re

import pytest

from autograder.quiz.key import answer_key
from autograder.quiz.loading import load_instructor

from quiz_browser import (answer_and_check, check, current_order, fill_answer, order_items, question, score, status,
                          wait_until_ready)
from site_test_course import TINY_QUIZ


@pytest.fixture(scope="module")
def key(tmp_path_factory):
    path = tmp_path_factory.mktemp("key") / "tiny.yaml"
    path.write_text(TINY_QUIZ, encoding="utf-8")
    quiz, _ = load_instructor(path)
    return answer_key(quiz)


@pytest.fixture
def lesson(page, tiny_site):
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    return page


def test_the_key_scores_full_marks_and_unlocks_each_explanation(lesson, key):
    page = lesson
    assert score(page) == "0 / 6 correct"
    explanations = {"pick-one": "224 / 16 = 14 tiles.", "pick-many": "split and reorder both transform loops.",
                    "tile-bytes": "16 x 16 x 4 = 1024 bytes.", "ratio": "About 2.56.", "verb": "It ranks them.",
                    "steps": "Split, reorder, then move."}
    for number, (question_id, explanation) in enumerate(explanations.items(), start=1):
        feedback = answer_and_check(page, question_id, key[question_id])
        assert feedback.startswith("✓ Correct."), (question_id, feedback)
        assert explanation in feedback
        assert status(page, question_id) == "correct"
        assert score(page) == f"{number} / 6 correct"
    assert page.errors == [] and page.remote_requests == []


def test_wrong_answers_show_their_own_feedback_then_the_hint(lesson):
    page = lesson
    feedback = answer_and_check(page, "pick-one", "a")
    assert feedback.startswith("✗ Not yet.") and "That is the tile width, not the number of tiles." in feedback
    assert "224 / 16 = 14 tiles." not in feedback  # the explanation stays sealed
    assert status(page, "pick-one") == "wrong"

    feedback = answer_and_check(page, "pick-many", ["a", "b"])
    assert "(b) ReLU is an operator, not a primitive." in feedback and "Primitives transform loops." in feedback

    feedback = answer_and_check(page, "tile-bytes", 256)
    assert "That counts values; each float32 takes 4 bytes." in feedback and "Values times bytes per value." in feedback

    feedback = answer_and_check(page, "verb", "generates")
    assert "Candidates come from the search, not the model." in feedback

    feedback = answer_and_check(page, "steps", current_order(page, "steps"))  # as shown: never the answer
    assert "You need the split loops before you can reorder them." in feedback
    assert score(page) == "0 / 6 correct"
    assert page.errors == []


def test_answers_are_read_as_in_the_terminal(lesson):
    page = lesson
    for typed in ("1,024 bytes", " 1024 ", "1024BYTES", "1.024e3"):
        assert answer_and_check(page, "tile-bytes", typed).startswith("✓ Correct."), typed
    assert answer_and_check(page, "ratio", "2.58").startswith("✓ Correct.")  # within the tolerance
    assert answer_and_check(page, "ratio", "2.7").startswith("✗ Not yet.")
    for typed in ("  RANKS ", "Scores", "rank"):
        assert answer_and_check(page, "verb", typed).startswith("✓ Correct."), typed

    feedback = answer_and_check(page, "tile-bytes", "about a kilobyte")
    assert "type a number (in bytes), e.g. 42 or 0.5; try again." in feedback
    assert status(page, "tile-bytes") == "invalid"

    question(page, "verb").locator("input[type=text]").fill("   ")
    assert check(page, "verb") == "Answer first, then check."
    assert check(page, "pick-many") == "Answer first, then check."
    assert score(page) == "0 / 6 correct"  # the last check of each question counts, as in the notebook widget


def test_a_changed_answer_changes_the_score(lesson, key):
    page = lesson
    answer_and_check(page, "pick-one", key["pick-one"])
    assert score(page) == "1 / 6 correct"
    answer_and_check(page, "pick-one", "c")
    assert score(page) == "0 / 6 correct"


def test_keyboard_alone_answers_and_checks(lesson, key):
    page = lesson
    text_input = question(page, "verb").locator("input[type=text]")
    text_input.focus()
    page.keyboard.type("ranks")
    page.keyboard.press("Enter")  # submits the question's form
    page.wait_for_function("() => document.querySelector('#q5').dataset.status === 'correct'")

    order_items(page, "steps", key["steps"])  # Move up buttons, pressed with Enter
    assert current_order(page, "steps") == key["steps"]
    assert "now" in question(page, "steps").locator(".ordering-status").inner_text()
    button = question(page, "steps").locator("button[type=submit]")
    button.focus()
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#q6').dataset.status === 'correct'")

    radio = question(page, "pick-one").locator("input[type=radio]").first
    radio.focus()
    page.keyboard.press("ArrowDown")  # moves to and selects b, as radio groups do
    assert question(page, "pick-one").locator("input:checked").get_attribute("value") == key["pick-one"]
    assert score(page) == "2 / 6 correct"


def test_focus_is_visible(lesson):
    page = lesson
    question(page, "verb").locator("input[type=text]").focus()
    page.keyboard.press("Tab")  # to the Check button, by keyboard: :focus-visible applies
    focused = page.evaluate("(() => { const s = getComputedStyle(document.activeElement);"
                            " return [document.activeElement.className, s.outlineStyle, s.outlineWidth]; })()")
    assert focused[0] == "check-button" and focused[1] != "none" and focused[2] != "0px"


def test_code_questions_are_checked_locally_and_not_scored(lesson, tiny_site):
    from autograder.quiz import load

    page = lesson
    article = question(page, "write-it")
    assert article.locator("button[type=submit]").count() == 0
    text = article.inner_text()
    assert "tvm-course grade-schedule tile-fused-conv my_schedule.py" in text
    assert "tvm-course quiz check tiny.released.yaml answers.yaml" in text
    assert not article.locator("details.explanation p").is_visible()  # behind a disclosure
    article.locator("details.explanation summary").click()
    assert "Split is where tiling starts." in article.locator("details.explanation").inner_text()
    href = article.locator("a[download]").get_attribute("href")
    assert href == "../quizzes/tiny.released.yaml"
    released = load(tiny_site / "lessons" / href)  # what `tvm-course quiz check` will read
    assert released.kind == "released" and not released.errors
    assert [q.id for q in released.released.questions][-1] == "write-it"


def test_a_question_changed_after_release_is_shown_but_not_scored(page, tiny_site, tmp_path):
    from conftest import copy_site

    site = copy_site(tiny_site, tmp_path / "tampered")
    lesson = site / "lessons" / "tiny.html"
    html = lesson.read_text(encoding="utf-8")
    assert html.count("How many 16-wide tiles cover 224 pixels?") == 2  # the form and the embedded JSON
    tampered = re.sub(r'("prompt":")How many 16-wide tiles', r"\1How many 8-wide tiles", html)
    lesson.write_text(tampered, encoding="utf-8")
    page.goto(lesson.as_uri())
    page.wait_for_function("document.querySelector('[data-score]').textContent === '0 / 5 correct'")
    article = question(page, "pick-one")
    assert "changed after the quiz was released" in article.inner_text()
    assert article.locator("button[type=submit]").is_disabled()
    assert page.locator("[data-quiz-notice]").is_hidden()  # the header (title, salt, question list) is intact

    retitled = re.sub(r'("title":")Check yourself: a tiny lesson', r"\1Check yourself: a renamed lesson", html)
    lesson.write_text(retitled, encoding="utf-8")
    page.goto(lesson.as_uri())
    page.locator("[data-quiz-notice]").wait_for(state="visible")
    assert "changed after it was released" in page.locator("[data-quiz-notice]").inner_text()
    assert score(page) == "0 / 6 correct"


def _plain_http_page(browser, site, host="course.example"):
    """The site as served over plain http from a host that is not this machine: not a secure
    context, so the page has no WebCrypto. Requests to the host are answered from the folder."""
    context = browser.new_context()

    def serve(route):
        path = route.request.url.split(host, 1)[1].split("?")[0].split("#")[0].lstrip("/") or "index.html"
        file = site / path
        if file.is_file():
            route.fulfill(path=str(file))
        else:
            route.fulfill(status=404, body="not found")

    context.route(f"http://{host}/**", serve)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda error: page.errors.append(str(error)))
    return context, page


def test_without_webcrypto_on_plain_http_the_quiz_still_checks(browser, tiny_site, key):
    context, page = _plain_http_page(browser, tiny_site)
    page.goto("http://course.example/lessons/tiny.html")
    assert page.evaluate("window.isSecureContext") is False
    assert page.evaluate("!(window.crypto && window.crypto.subtle)")  # no WebCrypto here
    wait_until_ready(page)
    for question_id in ("pick-one", "pick-many", "tile-bytes", "ratio", "verb", "steps"):
        assert answer_and_check(page, question_id, key[question_id]).startswith("✓ Correct."), question_id
    assert score(page) == "6 / 6 correct"
    assert "That is the tile width" in answer_and_check(page, "pick-one", "a")
    assert page.locator("[data-quiz-notice]").inner_text() == ""  # nothing to apologise for
    assert page.errors == []
    context.close()


def test_text_answers_ignore_backticks_and_trailing_punctuation(lesson):
    page = lesson
    for typed in ("ranks.", "`ranks`", "`Ranks`.", "scores!", " ranks ; "):
        assert answer_and_check(page, "verb", typed).startswith("✓ Correct."), typed
    assert "Candidates come from the search" in answer_and_check(page, "verb", "`generates`.")
    assert answer_and_check(page, "verb", ".ranks").startswith("✗ Not yet.")


def test_answers_are_kept_across_a_reload_and_cleared_by_starting_again(lesson, key):
    page = lesson
    answer_and_check(page, "pick-one", key["pick-one"])
    answer_and_check(page, "pick-many", ["a", "b"])  # wrong, with its feedback
    fill_answer(page, "tile-bytes", "1024")  # typed, never checked
    order_items(page, "steps", key["steps"])
    check(page, "steps")
    assert score(page) == "2 / 6 correct"

    page.reload()
    wait_until_ready(page)
    assert score(page) == "2 / 6 correct"
    assert status(page, "pick-one") == "correct" and status(page, "steps") == "correct"
    assert status(page, "pick-many") == "wrong"
    assert "ReLU is an operator" in question(page, "pick-many").locator(".feedback").inner_text()
    assert question(page, "tile-bytes").locator("input[type=text]").input_value() == "1024"
    assert status(page, "tile-bytes") is None  # typed but not checked: still not checked
    assert current_order(page, "steps") == key["steps"]
    assert "from your last visit are back (2 / 6 correct)" in page.locator("[data-quiz-notice]").inner_text()

    page.get_by_role("button", name="Start again").click()
    assert score(page) == "0 / 6 correct"
    assert status(page, "pick-one") is None and question(page, "pick-one").locator("input:checked").count() == 0
    assert question(page, "tile-bytes").locator("input[type=text]").input_value() == ""
    assert current_order(page, "steps") == ["a", "b", "c"]
    assert question(page, "pick-one").locator(".feedback").inner_text() == ""
    page.reload()
    wait_until_ready(page)
    assert score(page) == "0 / 6 correct" and status(page, "pick-one") is None
    assert page.errors == []


def test_progress_is_kept_per_quiz_and_release(page, tiny_site, tmp_path, key):
    from conftest import copy_site

    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    answer_and_check(page, "pick-one", key["pick-one"])
    keys = page.evaluate("Object.keys(localStorage).sort()")
    data = page.evaluate("JSON.parse(document.querySelector('script[type=\"application/json\"]').textContent)")
    store_key = f"tvm-course-quiz:tiny:{data['released']['integrity']}"
    assert keys == ["tvm-course-progress:tiny", store_key]
    stored = page.evaluate("k => JSON.parse(localStorage.getItem(k))", store_key)
    assert stored == {"answers": {"pick-one": key["pick-one"]}, "checked": ["pick-one"]}  # answers, never verdicts
    # For the map: the count the page last showed, with the release it was counted on.
    assert page.evaluate("JSON.parse(localStorage.getItem('tvm-course-progress:tiny'))") == {
        "integrity": data["released"]["integrity"], "correct": 1, "scored": 6, "checked": 1}

    # Another release of the quiz (a changed instructor copy gets a new salt) starts afresh.
    site = copy_site(tiny_site, tmp_path / "rereleased")
    lesson = site / "lessons" / "tiny.html"
    html = lesson.read_text(encoding="utf-8")
    lesson.write_text(html.replace(data["released"]["integrity"], "0" * 64), encoding="utf-8")
    page.goto(lesson.as_uri())
    wait_until_ready(page)
    assert score(page) == "0 / 6 correct" and status(page, "pick-one") is None


def test_the_score_stays_in_view_while_answering(browser, tiny_site):
    context = browser.new_context(viewport={"width": 390, "height": 700}, is_mobile=True, has_touch=True)
    page = context.new_page()
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    wait_until_ready(page)
    for question_id in ("pick-one", "verb"):
        question(page, question_id).scroll_into_view_if_needed()
        box = page.locator("[data-score]").bounding_box()
        assert 0 <= box["y"] and box["y"] + box["height"] <= 700, question_id  # on screen
    assert page.get_by_role("button", name="Start again").is_visible()
    context.close()


def test_map_links_to_the_lesson_and_back(page, tiny_site):
    page.goto((tiny_site / "index.html").as_uri())
    assert page.locator("h1").inner_text() == "A tiny course"
    page.locator(".lesson-list").get_by_role("link", name="A tiny lesson").click()
    page.wait_for_url("**/lessons/tiny.html")
    assert page.locator("section.quiz h2").inner_text() == "Check yourself"
    page.get_by_role("navigation", name="Breadcrumb").get_by_role("link", name="Course map").click()
    page.wait_for_url("**/index.html")
    page.get_by_role("link", name=re.compile("Check yourself")).first.click()
    page.wait_for_url("**/lessons/tiny.html#check-yourself")
    assert page.errors == [] and page.remote_requests == []


@pytest.mark.parametrize("width", [320, 390, 768])
def test_phone_and_tablet_widths_need_no_sideways_scrolling(browser, tiny_site, width):
    context = browser.new_context(viewport={"width": width, "height": 800}, is_mobile=width < 700, has_touch=True)
    page = context.new_page()
    for name in ("index.html", "lessons/tiny.html", "lessons/tiny-next.html"):
        page.goto((tiny_site / name).as_uri())
        assert page.evaluate("document.documentElement.scrollWidth") <= width, name
    page.goto((tiny_site / "lessons" / "tiny.html").as_uri())
    # Choices are comfortable to tap.
    heights = question(page, "pick-one").locator("label.choice").evaluate_all(
        "labels => labels.map(l => l.getBoundingClientRect().height)")
    assert min(heights) >= 44
    context.close()


def test_a_number_too_far_out_for_the_grid_is_wrong_as_in_python(lesson):
    page = lesson
    feedback = answer_and_check(page, "ratio", "1e300")
    assert feedback.startswith("✗ Not yet.") and "far outside any accepted answer" in feedback
    assert "Speedup is the old time over the new time." in feedback
    assert status(page, "ratio") == "wrong"
    assert page.errors == []
