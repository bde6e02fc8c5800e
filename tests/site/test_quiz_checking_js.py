"""quiz.js checks answers exactly as checking.py does: for every question of the course's quizzes and
a spread of right, wrong and odd answers (text answers also in backticks and with punctuation after
them), the page's checkAnswer gives the status, the feedback and the explanation that check_question
gives, with WebCrypto and with the plain-JavaScript PBKDF2 that plain-http pages use. The plain
JavaScript takes about 270 ms a key, and test_quiz_hashing_js.py checks its keys bit for bit against
Python's hashlib: here it checks the first few answers of each question, WebCrypto all of them."""
from __future__ import annotations

from itertools import combinations, permutations

import pytest

from autograder.quiz.checking import ReleasedKey, check_question
from autograder.quiz.loading import load_instructor
from autograder.quiz.model import ReleasedQuestion
from autograder.quiz.release import release
from autograder.quiz.rules import accepted_texts
from autograder.site.build import STATIC_DIR

from site_test_course import REPO

QUIZZES = sorted((REPO / "quizzes").glob("*.yaml"))
SALT = "00112233445566778899aabbccddeeff"


NO_WEBCRYPTO = "Object.defineProperty(Crypto.prototype, 'subtle', {get: () => undefined});"


@pytest.fixture(scope="module", params=["webcrypto", "plain-js"])
def check_in_page(request, browser, tmp_path_factory):
    """checkAnswer of quiz.js (with quiz-hashing.js) on a page without a quiz section."""
    page_file = tmp_path_factory.mktemp("checking-page") / "checking.html"
    scripts = "".join(f'<script src="{(STATIC_DIR / name).as_uri()}"></script>'
                      for name in ("quiz-hashing.js", "quiz.js"))
    page_file.write_text(f'<!DOCTYPE html><meta charset="utf-8"><title>checking</title>{scripts}', encoding="utf-8")
    context = browser.new_context()
    if request.param == "plain-js":
        context.add_init_script(NO_WEBCRYPTO)
    page = context.new_page()
    page.goto(page_file.as_uri())
    assert page.evaluate("TvmCourseQuizHashing.webCrypto()") == (request.param == "webcrypto")

    def check(question: dict, salt: str, answers: list) -> list[dict]:
        return page.evaluate(
            "([q, salt, answers]) => Promise.all(answers.map(a => TvmCourseQuiz.checkAnswer(q, salt, {value: a})))",
            [question, salt, answers])

    check.mode = request.param
    yield check
    context.close()


PLAIN_JS_ANSWERS = 3  # per question: the first few of the spread answers_for makes


def answers_for(question) -> list:
    """Right, wrong and odd answers for one instructor-copy question."""
    letters = "abcdefgh"[: len(question.choices)]
    if question.type == "single":
        return list(letters)
    if question.type == "multiple":
        return [list(c) for n in range(1, len(letters) + 1) for c in combinations(letters, n)]
    if question.type == "ordering":
        return [list(p) for p in permutations("abcdefgh"[: len(question.items)])][:60]
    if question.type == "numeric":
        tol = question.tolerance
        return [question.answer, question.answer + tol / 2, question.answer + 3 * tol + 1, 0.0, -1.0,
                *(m.answer for m in question.mistakes), 1e300, -1e300, 1e18]
    if question.type == "text":
        texts = accepted_texts({"accept": question.accept, "patterns": question.patterns,
                                "case_sensitive": question.case_sensitive})
        mistakes = [m.answer for m in question.mistakes]
        decorated = [f"`{texts[0]}`", f"{texts[0]}.", f"`{texts[0]}`.", f" ``{texts[-1]}``; ", f"{texts[0]}?!",
                     *(f"`{m}`." for m in mistakes), f".{texts[0]}", f"{texts[0]}-", "`", "..."]
        return [*texts, *mistakes, "  " + texts[0].upper() + " ", "no idea", *decorated]
    return []


@pytest.mark.parametrize("path", QUIZZES, ids=lambda p: p.stem)
def test_the_page_checks_every_answer_as_python_does(check_in_page, path):
    quiz, _ = load_instructor(path)
    document = release(quiz, SALT)
    for question, released in zip(quiz.questions, document["questions"]):
        answers = answers_for(question)
        if check_in_page.mode == "plain-js":
            answers = answers[:PLAIN_JS_ANSWERS]
        if not answers:
            continue
        python = ReleasedQuestion(released)
        in_page = check_in_page(released, SALT, answers)
        for answer, page_result in zip(answers, in_page):
            result = check_question(python, ReleasedKey(SALT), answer)
            assert (page_result["status"], page_result["feedback"], page_result.get("explanation")) == (
                result.status, result.feedback, result.explanation), (question.id, answer)
