"""Answering a quiz on a built lesson page the way a student does: clicks, typing, the keyboard."""
from __future__ import annotations

from typing import Any


def question_number(page, question_id: str) -> int:
    """The question's number on the page (its elements are named by number, not by id)."""
    number = page.evaluate(
        "id => { const section = document.querySelector('section.quiz[data-quiz-json]');"
        " const data = JSON.parse(document.getElementById(section.dataset.quizJson).textContent);"
        " return data.questions.findIndex(q => q.id === id) + 1; }", question_id)
    assert number, f"no question {question_id!r} on the page"
    return number


def question(page, question_id: str):
    return page.locator(f'article.question[data-question="{question_number(page, question_id)}"]')


def wait_until_ready(page) -> None:
    """Until quiz.js has checked the release's integrity and put back any kept answers."""
    page.wait_for_selector("section.quiz[data-quiz-ready]", state="attached")


def fill_answer(page, question_id: str, answer: Any) -> None:
    """Put an answers-file value (as `tvm-course quiz key` prints it) into the question's form."""
    article = question(page, question_id)
    kind = article.get_attribute("data-question-type")
    if kind == "single":
        article.locator(f'input[type=radio][value="{answer}"]').check()
    elif kind == "multiple":
        for box in article.locator("input[type=checkbox]").all():
            box.set_checked(box.get_attribute("value") in answer)
    elif kind == "ordering":
        order_items(page, question_id, list(answer))
    elif kind in ("numeric", "text"):
        article.locator("input[type=text]").fill(str(answer))
    else:
        raise ValueError(f"question {question_id} ({kind}) is not answered in the browser")


def order_items(page, question_id: str, letters: list[str]) -> None:
    """Reorder with the keyboard: focus an item's Move up button and press Enter until it is in place."""
    article = question(page, question_id)
    for position, letter in enumerate(letters):
        current = current_order(page, question_id).index(letter)
        button = article.locator(f'.ordering > li[data-letter="{letter}"] button[data-move="up"]')
        button.focus()
        for _ in range(current - position):
            page.keyboard.press("Enter")
        assert page.evaluate("document.activeElement.getAttribute('data-move')") == "up"  # focus stays put


def current_order(page, question_id: str) -> list[str]:
    return question(page, question_id).locator(".ordering > li").evaluate_all(
        "items => items.map(i => i.getAttribute('data-letter'))")


def check(page, question_id: str) -> str:
    """Press the question's Check button and return the feedback text once the page shows it."""
    article = question(page, question_id)
    handle = article.element_handle()
    page.evaluate("el => { el.querySelector('.feedback').textContent = ''; }", handle)
    article.locator("button[type=submit]").click()
    page.wait_for_function("el => el.querySelector('.feedback').textContent.trim() !== ''", arg=handle)
    return article.locator(".feedback").inner_text()


def answer_and_check(page, question_id: str, answer: Any) -> str:
    fill_answer(page, question_id, answer)
    return check(page, question_id)


def status(page, question_id: str) -> str | None:
    return question(page, question_id).get_attribute("data-status")


def score(page) -> str:
    return page.locator("[data-score]").inner_text()
