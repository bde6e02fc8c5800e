"""The notebook front-end: `show(quiz)` renders a quiz with ipywidgets.

Each question gets an input, a Check button and a feedback area; a label under the quiz keeps
the running score, "k / n correct". It works from the instructor copy or a released copy alike:
a notebook given a released copy never needs the plain key, and one given the instructor copy
checks against its plain key at once (no slow keys), with the same results.
"""
from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from .answers import AnswerError, parse_answer_text
from .checking import QuestionResult, check_question
from .loading import load
from .model import HOW_TO_ANSWER, TYPE_NAMES, ReleasedQuestion, ReleasedQuiz

_CODE_SPAN = re.compile(r"`([^`]+)`")
_WIDE = widgets.Layout(width="100%")


def to_html(text: str) -> str:
    """Escape, then `code` spans and paragraphs: the little Markdown quiz text uses."""
    paragraphs = html.escape(text.strip()).split("\n\n")
    return "".join("<p>" + _CODE_SPAN.sub(r"<code>\1</code>", p) + "</p>" for p in paragraphs)


class QuestionView:
    """One question: its input widget, Check button and feedback; `result` is the last check."""

    def __init__(self, question: ReleasedQuestion, quiz: ReleasedQuiz, number: int, on_checked) -> None:
        self.question, self.quiz, self._on_checked = question, quiz, on_checked
        self.result: QuestionResult | None = None
        self.edited = question.id in quiz.edited
        self.input = self._make_input()
        self.check_button = widgets.Button(description="Check", button_style="primary")
        self.check_button.on_click(lambda _button: self.check())
        self.feedback = widgets.HTML(value="")
        unit = f" (in {question.unit})" if question.unit else ""
        header = widgets.HTML(f"<b>{number}. {TYPE_NAMES[question.type]}{html.escape(unit)}</b>"
                              + to_html(question.prompt))
        parts = [header]
        if question.type == "ordering":
            parts.append(widgets.HTML("<br>".join(f"<b>{letter})</b> {html.escape(t)}"
                                                  for letter, t in zip(question.letters, question.items))))
        parts += [self.input, self.check_button, self.feedback]
        if self.edited:
            # As the terminal and the website: shown, but not checked and not scored.
            self.check_button.disabled = True
            self.feedback.value = ("<i>This question was changed after the quiz was released; "
                                   "it is shown but not scored.</i>")
        self.box = widgets.VBox(parts, layout=widgets.Layout(border="1px solid #ddd", padding="6px", margin="4px 0"))

    def _make_input(self) -> widgets.Widget:
        q = self.question
        if q.type == "single":
            return widgets.RadioButtons(options=[(f"{letter}) {t}", letter) for letter, t in zip(q.letters, q.choices)],
                                        value=None, layout=_WIDE)
        if q.type == "multiple":
            self.checkboxes = [widgets.Checkbox(description=f"{letter}) {t}", value=False, indent=False, layout=_WIDE)
                               for letter, t in zip(q.letters, q.choices)]
            return widgets.VBox(self.checkboxes)
        if q.type == "code":
            return widgets.Textarea(value=q.data.get("starter", ""), rows=14, layout=_WIDE)
        return widgets.Text(placeholder=HOW_TO_ANSWER[q.type], layout=_WIDE)

    def set_answer(self, value: Any) -> None:
        """Fill the input as a student would, from an answers-file value."""
        q = self.question
        if q.type == "single":
            self.input.value = value
        elif q.type == "multiple":
            for letter, box in zip(q.letters, self.checkboxes):
                box.value = letter in value
        elif q.type == "ordering":
            self.input.value = " ".join(value)
        else:
            self.input.value = str(value)

    def answer(self) -> Any:
        """The parsed answer, None when nothing is entered; AnswerError when it cannot be read."""
        q = self.question
        if q.type == "single":
            return self.input.value
        if q.type == "multiple":
            picked = [letter for letter, box in zip(q.letters, self.checkboxes) if box.value]
            return picked or None
        text = self.input.value
        if not text.strip():
            return None
        return text if q.type == "code" else parse_answer_text(q, text)

    def check(self) -> QuestionResult:
        q = self.question
        if self.edited:
            self.result = QuestionResult(q.id, q.type, "edited", messages=["changed after release; not scored"])
            return self.result
        try:
            answer = self.answer()
        except AnswerError as err:
            self.feedback.value = f"<span style='color:#a60'>{html.escape(str(err))}</span>"
            return self.result or QuestionResult(q.id, q.type, "invalid", messages=[str(err)])
        if q.type == "code" and answer is not None:
            self.feedback.value = "<i>grading your schedule (compiles and runs it)...</i>"
        self.result = check_question(q, self.quiz.key, answer)
        self.feedback.value = self._render(self.result)
        self._on_checked()
        return self.result

    @staticmethod
    def _render(result: QuestionResult) -> str:
        if result.status == "correct":
            parts = ["<b style='color:#080'>Correct.</b>"]
            if result.explanation:
                parts.append(to_html(result.explanation))
        elif result.status == "unanswered":
            parts = ["<i>Answer first, then check.</i>"]
        else:
            parts = [f"<b style='color:#b00'>Not yet ({html.escape(result.status)}).</b>"]
            parts += [to_html(f) for f in result.feedback]
        parts += [f"<p><small>{html.escape(m)}</small></p>" for m in result.messages if m != "not answered"]
        return "".join(parts)


class QuizWidget(widgets.VBox):
    """The whole quiz; `views` are the questions, `score` the running "k / n correct" label."""

    def __init__(self, quiz: ReleasedQuiz, **kwargs) -> None:
        self.quiz = quiz
        self.views = [QuestionView(q, quiz, i, self._update_score) for i, q in enumerate(quiz.questions, start=1)]
        self.score = widgets.Label(value="")
        title = widgets.HTML(f"<h3>{html.escape(quiz.title)}</h3>" + (to_html(quiz.intro) if quiz.intro else ""))
        super().__init__([title] + [v.box for v in self.views] + [self.score], **kwargs)
        self._update_score()

    def _update_score(self) -> None:
        scored = [v for v in self.views if not v.edited]
        correct = sum(1 for v in scored if v.result is not None and v.result.correct)
        self.score.value = f"{correct} / {len(scored)} correct"

    def view(self, question_id: str) -> QuestionView:
        return next(v for v in self.views if v.question.id == question_id)


def build_widget(quiz: str | Path | ReleasedQuiz) -> QuizWidget:
    """The quiz widget for a quiz file (either copy) or an already loaded ReleasedQuiz."""
    if not isinstance(quiz, ReleasedQuiz):
        quiz = load(quiz).released
    return QuizWidget(quiz)


def show(quiz: str | Path | ReleasedQuiz) -> None:
    """Render the quiz in the notebook: answer, Check, feedback, and the running score."""
    from IPython.display import display

    display(build_widget(quiz))
