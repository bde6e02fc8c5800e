"""A lesson's quiz for the website: released from the instructor copy, rendered as a form.

The page gets the RELEASED document only (autograder.quiz.release: answers as salted hashes,
texts sealed), embedded as JSON for static/quiz.js to check against; the instructor copy's
key never reaches the built site. The same released document is written next to the pages as
YAML, so that a student can check code questions on their own machine with
`tvm-course quiz check`.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from autograder.quiz import QuizFileError, load_instructor, release
from autograder.quiz.hashing import LETTERS
from autograder.quiz.model import TYPE_NAMES
from autograder.quiz.release import dump_yaml, released_header

from . import pages
from ..errors import TvmCourseError


class QuizBuildError(ValueError, TvmCourseError):
    """The instructor copy of a quiz has errors; the message lists them with file and line."""


def released_document(quiz_path: str | Path) -> dict:
    """Validate the instructor copy and release it (its stable salt, so a rebuild releases the same
    hashes and students' kept answers still apply); QuizBuildError if it has errors."""
    try:
        quiz, problems = load_instructor(quiz_path)
    except QuizFileError as err:
        raise QuizBuildError(_problem_lines(quiz_path, err.problems)) from None
    errors = [p for p in problems if p.is_error]
    if errors:
        raise QuizBuildError(_problem_lines(quiz_path, errors))
    return release(quiz)


def _problem_lines(path: str | Path, problems) -> str:
    return f"{path}: the quiz has errors; run `tvm-course quiz validate {path}`:\n" + "\n".join(
        f"  {p}" for p in problems)


def released_yaml(document: dict) -> str:
    """The released copy as a student downloads it (what `tvm-course quiz release` writes)."""
    return released_header(document) + dump_yaml(document)


@dataclass
class QuestionView:
    number: int
    data: dict  # the released question

    id = property(lambda self: self.data["id"])
    type = property(lambda self: self.data["type"])
    prompt = property(lambda self: self.data["prompt"])

    @property
    def dom_id(self) -> str:
        """The element id: the question's number, since an id written by the author could name its answer."""
        return f"q{self.number}"

    @property
    def kind(self) -> str:
        return TYPE_NAMES.get(self.type, self.type)

    @property
    def options(self) -> list[tuple[str, str]]:
        """(letter, text) of the choices or the ordering items, in the order students see them."""
        return list(zip(LETTERS, self.data.get("choices") or self.data.get("items") or []))

    @property
    def unit(self) -> str | None:
        return self.data.get("unit")

    @property
    def scored_here(self) -> bool:
        return self.type != "code"


@dataclass
class QuizView:
    document: dict
    released_file: str  # the released YAML's path relative to the page

    @property
    def id(self) -> str:
        return self.document["id"]

    @property
    def title(self) -> str:
        return self.document["title"]

    @property
    def intro(self) -> str | None:
        return self.document.get("intro")

    @property
    def questions(self) -> list[QuestionView]:
        return [QuestionView(n, q) for n, q in enumerate(self.document["questions"], start=1)]

    @property
    def scored_count(self) -> int:
        return sum(q.scored_here for q in self.questions)

    @property
    def code_count(self) -> int:
        return sum(not q.scored_here for q in self.questions)

    @property
    def released_name(self) -> str:
        return Path(self.released_file).name

    @property
    def data_element_id(self) -> str:
        return f"quiz-data-{self.id}"


def render_quiz(document: dict, released_file: str) -> str:
    """The quiz section of a lesson page: the form, the embedded released JSON, the score line."""
    return pages.render("quiz.html", quiz=QuizView(document, released_file))
