"""The quiz as its author wrote it (instructor copy), and as students get it (released copy).

Both are built from data that has already passed the schema, so field access here is safe.
Renderers and the checker only ever see a `ReleasedQuiz`: an instructor copy is shown as its
released copy would be (the same fields, loading.instructor_view) and checked through its plain
key instead of hashes (checking.InstructorKey), so both copies check through the same code.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from . import hashing
from .hashing import LETTERS

TYPE_NAMES = {
    "single": "single choice",
    "multiple": "multiple choice",
    "numeric": "number",
    "text": "short text",
    "ordering": "ordering",
    "code": "code",
}
HOW_TO_ANSWER = {
    "single": "type one letter",
    "multiple": "type every letter that applies, e.g. a c",
    "numeric": "type a number",
    "text": "type a short answer",
    "ordering": "type the letters in order, e.g. c a b d",
    "code": "type the path of a .py file that defines schedule(sch)",
}


@dataclass
class Choice:
    text: str
    correct: bool = False
    feedback: str | None = None


@dataclass
class Mistake:
    """A known wrong answer with its own feedback."""

    answer: float | str
    feedback: str


@dataclass
class Question:
    id: str
    type: str
    prompt: str
    explanation: str
    feedback: str | None = None
    line: int | None = None
    # single / multiple
    choices: list[Choice] = field(default_factory=list)
    # numeric
    answer: float | None = None
    tolerance: float = 0.0
    unit: str | None = None
    # numeric / text
    mistakes: list[Mistake] = field(default_factory=list)
    # text
    accept: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)
    case_sensitive: bool = False
    # ordering: items in the correct order
    items: list[str] = field(default_factory=list)
    # code
    problem: str | None = None
    starter: str | None = None
    solution: str | None = None
    require: dict = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: dict, line: int | None = None) -> "Question":
        fields = {k: v for k, v in data.items() if k not in ("choices", "mistakes")}
        question = cls(line=line, **fields)
        question.choices = [Choice(**c) for c in data.get("choices", [])]
        question.mistakes = [Mistake(**m) for m in data.get("mistakes", [])]
        return question

    def correct_letters(self) -> list[str]:
        return [LETTERS[i] for i, c in enumerate(self.choices) if c.correct]

    def display_order(self) -> list[int]:
        """Indices of `items` in the order students see them: a fixed shuffle that is never the answer."""
        order = list(range(len(self.items)))
        random.Random(f"ordering:{self.id}").shuffle(order)
        if order == sorted(order):
            order = order[1:] + order[:1]
        return order

    def ordering_key(self) -> list[str]:
        """The correct answer as display letters: the letter of the first item, then the second..."""
        position = {item_index: shown for shown, item_index in enumerate(self.display_order())}
        return [LETTERS[position[i]] for i in range(len(self.items))]


@dataclass
class Quiz:
    id: str
    title: str
    lesson: str
    questions: list[Question]
    intro: str | None = None
    path: str = "<quiz>"

    def question(self, question_id: str) -> Question | None:
        return next((q for q in self.questions if q.id == question_id), None)


@dataclass
class ReleasedQuestion:
    """One question of a released copy: the released data, read through properties. From an
    instructor copy, the data has no `accept`, `respond` or `integrity` (its key is plain)."""

    data: dict
    line: int | None = None

    id = property(lambda self: self.data["id"])
    type = property(lambda self: self.data["type"])
    prompt = property(lambda self: self.data["prompt"])
    feedback = property(lambda self: self.data.get("feedback"))
    choices = property(lambda self: self.data.get("choices", []))
    items = property(lambda self: self.data.get("items", []))  # in display order
    unit = property(lambda self: self.data.get("unit"))
    accept = property(lambda self: self.data.get("accept", []))
    respond = property(lambda self: self.data.get("respond", []))

    @property
    def letters(self) -> list[str]:
        return list(LETTERS[: len(self.choices or self.items)])

    @property
    def step(self) -> float | None:
        return float(self.data["step"]) if "step" in self.data else None


class QuizKey:
    """How answers open a quiz's key: `open` gives the text of the entry of `accept` or `respond`
    (`kind`) that an answer's canonical form matches, or None; `choice_rank` orders picked
    choices (see checking.picked_choice_feedback) by their salted check, as the released copy defines it."""

    salt: str

    def open(self, question: ReleasedQuestion, kind: str, purpose: str, canonical: str) -> str | None:
        raise NotImplementedError

    def choice_rank(self, question: ReleasedQuestion, letter: str) -> str:
        return hashing.check_of(hashing.derive_key(self.salt, question.id, hashing.CHOICE, letter))


@dataclass
class ReleasedQuiz:
    id: str
    title: str
    lesson: str
    key: QuizKey  # checking.ReleasedKey (the file's salt and hashes) or checking.InstructorKey
    questions: list[ReleasedQuestion]
    intro: str | None = None
    path: str = "<quiz>"
    # Questions whose content no longer matches its integrity hash: shown, not scored.
    edited: set[str] = field(default_factory=set)
    from_instructor_copy: bool = False
