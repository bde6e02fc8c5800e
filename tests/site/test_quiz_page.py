"""A lesson's quiz section: built from the released copy only, real form controls, a clear error for a broken quiz."""
from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from autograder.quiz import load_instructor
from autograder.quiz.hashing import LETTERS
from autograder.site.quiz_html import QuizBuildError, released_document, released_yaml, render_quiz

from site_test_course import REPO, TINY_QUIZ

REAL_QUIZZES = sorted((REPO / "quizzes").glob("*.yaml"))


@pytest.fixture(scope="module")
def tiny_quiz_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("quiz") / "tiny.yaml"
    path.write_text(TINY_QUIZ, encoding="utf-8")
    return path


def _embedded_json(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="quiz-data-[\w-]+">(.*?)</script>', html, re.S)
    assert match, "the released quiz is embedded as JSON"
    return json.loads(match.group(1))


class _Controls(HTMLParser):
    """Inputs, their labels and buttons, as a browser would see them."""

    def __init__(self) -> None:
        super().__init__()
        self.inputs: list[dict] = []
        self.label_for: set[str] = set()
        self.wrapped: int = 0
        self.buttons: list[dict] = []
        self._in_label = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "label":
            self._in_label += 1
            if "for" in attrs:
                self.label_for.add(attrs["for"])
        elif tag == "input":
            self.inputs.append({**attrs, "in_label": self._in_label > 0})
        elif tag == "button":
            self.buttons.append(attrs)

    def handle_endtag(self, tag):
        if tag == "label":
            self._in_label -= 1


def test_the_page_embeds_the_released_copy_and_shows_every_question(tiny_quiz_path):
    document = released_document(tiny_quiz_path)
    html = render_quiz(document, "../quizzes/tiny.released.yaml")
    assert _embedded_json(html) == document
    assert "released" in document and document["released"]["salt"]
    for number in range(1, len(document["questions"]) + 1):
        assert f'<article class="question" id="q{number}" data-question="{number}"' in html
    assert '<p class="score" data-score aria-live="polite">0 / 6 correct</p>' in html  # the code question is not scored here
    assert "not scored here" in html


def test_every_answer_has_a_labelled_control_and_a_check_button(tiny_quiz_path):
    document = released_document(tiny_quiz_path)
    controls = _Controls()
    controls.feed(render_quiz(document, "../quizzes/tiny.released.yaml"))
    assert controls.inputs
    for control in controls.inputs:
        assert control["in_label"] or control["id"] in controls.label_for, control
    kinds = [c["type"] for c in controls.inputs]
    assert kinds.count("radio") == 3 and kinds.count("checkbox") == 3 and kinds.count("text") == 3
    submits = [b for b in controls.buttons if b.get("type") == "submit"]
    assert len(submits) == 6
    moves = [b for b in controls.buttons if b.get("data-move")]
    assert len(moves) == 2 * 3  # up and down for each ordering item


def test_code_questions_show_how_to_check_them_locally(tiny_quiz_path):
    html = render_quiz(released_document(tiny_quiz_path), "../quizzes/tiny.released.yaml")
    assert "tvm-course grade-schedule tile-fused-conv my_schedule.py" in html
    assert "tvm-course quiz check tiny.released.yaml answers.yaml" in html
    assert 'href="../quizzes/tiny.released.yaml"' in html
    assert "def schedule(sch):\n    pass" in html  # the starter
    assert "sch.split(loops[2]" not in html  # never the solution


@pytest.mark.parametrize("quiz_path", REAL_QUIZZES, ids=lambda p: p.stem)
def test_no_key_in_the_quiz_section_of_a_real_quiz(quiz_path):
    quiz, _ = load_instructor(quiz_path)
    document = released_document(quiz_path)
    html = render_quiz(document, f"../quizzes/{quiz.id}.released.yaml") + released_yaml(document)
    assert not re.search(r"correct\W{0,3}\s*true", html, re.I)
    assert "solution" not in html.lower()
    for question in quiz.questions:
        if question.type == "code":
            assert question.solution.strip() not in html
            continue
        assert question.explanation.strip() not in html, f"{question.id}: its explanation is sealed"
        for choice in question.choices:
            if choice.feedback:
                assert choice.feedback.strip() not in html, f"{question.id}: choice feedback is sealed"
        for mistake in question.mistakes:
            assert mistake.feedback.strip() not in html, f"{question.id}: mistake feedback is sealed"
        if question.type == "numeric":
            value = question.answer
            shown = {repr(value), f"{value:g}", f"{value:,.0f}" if float(value).is_integer() else repr(value)}
            if float(value).is_integer():
                shown.add(str(int(value)))
            data = json.dumps([q for q in document["questions"] if q["id"] == question.id])
            for text in shown:
                assert not re.search(rf"(?<![\w.]){re.escape(text)}(?![\w.])", data), f"{question.id}: {text} in plain text"
        if question.type == "text":
            data = json.dumps([q for q in document["questions"] if q["id"] == question.id]).lower()
            for accepted in question.accept:
                assert f'"{accepted.lower()}"' not in data, f"{question.id}: accepted answer {accepted!r} in plain text"


def test_released_yaml_is_the_same_document(tiny_quiz_path):
    document = released_document(tiny_quiz_path)
    text = released_yaml(document)
    assert text.startswith("# Released copy of quiz 'tiny'")
    assert yaml.safe_load(text) == document


def test_script_json_cannot_close_its_script_element(tmp_path):
    text = TINY_QUIZ.replace("Put the steps in order.", "Put the steps in order. </script><b>x</b>")
    path = tmp_path / "tricky.yaml"
    path.write_text(text, encoding="utf-8")
    document = released_document(path)
    html = render_quiz(document, "../quizzes/tricky.released.yaml")
    assert _embedded_json(html) == document
    assert html.count("</script>") == 1


def test_a_broken_quiz_stops_the_build_with_file_and_line(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text(TINY_QUIZ.replace("        correct: true\n", "", 1), encoding="utf-8")
    with pytest.raises(QuizBuildError) as raised:
        released_document(path)
    message = str(raised.value)
    assert str(path) in message and "tvm-course quiz validate" in message
    assert re.search(r"broken\.yaml:\d+: error: .*exactly one choice with correct: true", message)


def test_an_unreadable_quiz_is_a_build_error(tmp_path):
    path = tmp_path / "not-yaml.yaml"
    path.write_text("id: [unclosed\n", encoding="utf-8")
    with pytest.raises(QuizBuildError, match="not-yaml.yaml"):
        released_document(path)


def test_choice_letters_match_the_released_order(tiny_quiz_path):
    document = released_document(tiny_quiz_path)
    html = render_quiz(document, "x")
    single = next(q for q in document["questions"] if q["type"] == "single")
    for letter, text in zip(LETTERS, single["choices"]):
        assert re.search(rf'value="{letter}">\s*<span class="letter">{letter}\)</span> <span class="choice-text">{re.escape(text)}</span>', html)


def test_live_regions_are_in_the_page_from_the_start(tiny_quiz_path):
    # A live region that appears and fills in one step is not announced: each must be rendered,
    # empty, before the page writes into it.
    html = render_quiz(released_document(tiny_quiz_path), "../quizzes/tiny.released.yaml")
    regions = re.findall(r'<[^>]+(?:role="status"|aria-live=)[^>]*>', html)
    assert regions and all(not re.search(r"\shidden(\s|>|=)", region) for region in regions), regions


def test_no_element_id_or_data_attribute_names_a_question_or_its_answer(tiny_quiz_path):
    """Ids and data attributes number the questions; an author's question id (which could name its
    answer) and anything of the key stay out of them, and so does any count of wrong choices."""
    from autograder.quiz.key import answer_key

    quiz, _ = load_instructor(tiny_quiz_path)
    html = render_quiz(released_document(tiny_quiz_path), "../quizzes/tiny.released.yaml")
    attributes = re.findall(r'\s((?:id|for|name|aria-labelledby|aria-describedby|data-[\w-]+))="([^"]*)"', html)
    assert attributes
    key = answer_key(quiz)
    secrets = {q.id for q in quiz.questions} | {str(v) for v in key.values() if not isinstance(v, list)}
    secrets |= {"ranks", "rank", "score", "scores", "1024"}
    for name, value in attributes:
        if name == "data-quiz-json" or (name == "id" and value == "quiz-data-tiny"):
            continue  # names the quiz, whose id is its file name
        words = set(re.split(r"[\s-]+", value))
        assert not any(secret in words or secret == value for secret in secrets if len(secret) > 1), (name, value)
        assert not re.search(r"wrong|correct|feedback|answer-count|choices", name), (name, value)
    data_names = {name for name, _value in attributes if name.startswith("data-")}
    assert data_names <= {"data-quiz-json", "data-quiz-notice", "data-question", "data-question-type", "data-letter",
                          "data-move", "data-score", "data-quiz-reset"}, data_names
