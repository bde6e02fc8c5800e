"""Check answers against a quiz; the same code serves both copies and every front-end.

What differs between the copies is only how an answer opens an entry of the key (model.QuizKey): a
released copy holds salted hashes and each try costs a slow key (ReleasedKey); an instructor copy
holds the key in plain text, so its answers are looked up in the same entries release() would
hash, without deriving a key (InstructorKey). Everything else (canonical forms, the order in which
they are tried, which feedback is shown) is one code path, so both copies give the same results.
"""
from __future__ import annotations

import functools
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from . import code_questions, hashing
from .answers import AnswerSheet
from .diagnostics import Problem
from .model import Quiz, QuizKey, ReleasedQuestion, ReleasedQuiz
from .release import ACCEPT, RESPOND, instructor_content, key_entries

# A text answer that matches nothing as typed is tried again without what a student adds when
# writing a sentence or Markdown: first without the backticks around it (`compute_at`), then also
# without punctuation after it (compute_at.). Applied to the normalised text, so only ASCII
# characters are involved; quiz.js does the same.
_BACKTICKS = re.compile(r"^[` ]+|[` ]+$")
_BACKTICKS_AND_PUNCTUATION = re.compile(r"^[` ]+|[`.,;:!? ]+$")

# Statuses that count towards the total, and those that do not.
SCORED = ("correct", "wrong", "unanswered", "invalid", "ungraded")
NOT_SCORED = ("edited", "skipped")


class ReleasedKey(QuizKey):
    """A released copy's key: salted hashes, each try a slow key (hashing.open_entry)."""

    def __init__(self, salt: str) -> None:
        self.salt = salt

    def open(self, question, kind, purpose, canonical):
        entries = question.accept if kind == ACCEPT else question.respond
        return hashing.open_entry(entries, self.salt, question.id, purpose, canonical)


class InstructorKey(QuizKey):
    """An instructor copy's key, in plain text: the entries release() hashes (release.key_entries),
    looked up directly. An answer opens what it would open in the released copy (the first entry
    with its canonical form, as the hashed entries are sorted stably), and no key is derived. Only
    choice_rank needs the salt and slow keys, when two picked choices both have feedback; the
    salt is then derived once (lazily), as release() does. Nothing built from this is released:
    what students get is always release()'s slow hashes."""

    def __init__(self, quiz: Quiz) -> None:
        self._quiz = quiz
        self._tables: dict[tuple[str, str], dict[tuple[str, str], str]] = {}
        for question in quiz.questions:
            for kind in (ACCEPT, RESPOND):
                table = self._tables.setdefault((question.id, kind), {})
                for purpose, canonical, text in key_entries(question, kind):
                    table.setdefault((purpose, canonical), text)

    @functools.cached_property
    def salt(self) -> str:
        return hashing.stable_salt(instructor_content(self._quiz))

    def open(self, question, kind, purpose, canonical):
        return self._tables.get((question.id, kind), {}).get((purpose, canonical))


@dataclass
class QuestionResult:
    id: str
    type: str
    status: str  # one of SCORED or NOT_SCORED
    feedback: list[str] = field(default_factory=list)  # for a wrong answer
    explanation: str | None = None  # unlocked by a correct answer
    messages: list[str] = field(default_factory=list)

    @property
    def correct(self) -> bool:
        return self.status == "correct"


@dataclass
class QuizReport:
    quiz: str
    title: str
    results: list[QuestionResult]
    problems: list[Problem] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(r.status in SCORED for r in self.results)

    @property
    def correct(self) -> int:
        return sum(r.correct for r in self.results)

    @property
    def all_correct(self) -> bool:
        return self.total > 0 and self.correct == self.total and not any(p.is_error for p in self.problems)

    def summary(self) -> str:
        return f"{self.correct} / {self.total} correct"

    def to_dict(self) -> dict[str, Any]:
        return {
            "quiz": self.quiz,
            "correct": self.correct,
            "total": self.total,
            "score": round(self.correct / self.total, 4) if self.total else 0.0,
            "questions": [asdict(r) for r in self.results],
            "problems": [p.to_dict() for p in self.problems],
        }


def check_question(question: ReleasedQuestion, key: QuizKey, answer: Any, *, skip_code: bool = False) -> QuestionResult:
    """Check one parsed answer (see answers.parse_answer) against the quiz's key; None means unanswered."""
    result = QuestionResult(question.id, question.type, "unanswered")
    if question.type == "code" and skip_code:
        result.status = "skipped"
        result.messages.append("code answers were not graded (--skip-code)")
        return result
    if answer is None:
        result.messages.append("not answered")
        return result
    if question.type == "code":
        result.status, result.feedback, result.messages = code_questions.check_code(question, answer)
        if result.correct:
            result.explanation = question.data.get("explanation")
        return result
    try:
        canonicals = canonical_answers(question, answer)
    except ValueError:
        # A number too far out to place on the tolerance grid is far from every accepted answer.
        result.status = "wrong"
        result.feedback = [question.feedback] if question.feedback else []
        result.messages.append(f"{answer} is far outside any accepted answer")
        return result
    for canonical in canonicals:
        explanation = key.open(question, ACCEPT, hashing.ANSWER, canonical)
        if explanation is not None:
            result.status, result.explanation = "correct", explanation
            return result
    result.status = "wrong"
    result.feedback = _targeted_feedback(question, key, answer, canonicals)
    if question.feedback:
        result.feedback.append(question.feedback)
    return result


def canonical_answers(question: ReleasedQuestion, answer: Any) -> list[str]:
    """The canonical forms to look up, in order: the answer's own, then (text only) undecorated ones."""
    canonical = canonical_answer(question, answer)
    if question.type != "text":
        return [canonical]
    return list(dict.fromkeys(form for form in (canonical, *undecorated_texts(canonical)) if form))


def undecorated_texts(normalised: str) -> tuple[str, str]:
    """A normalised text answer without surrounding backticks; and also without trailing .,;:!?"""
    return _BACKTICKS.sub("", normalised), _BACKTICKS_AND_PUNCTUATION.sub("", normalised)


def canonical_answer(question: ReleasedQuestion, answer: Any) -> str:
    if question.type == "single":
        return answer
    if question.type in ("multiple", "ordering"):
        return hashing.canonical_letters(answer, keep_order=question.type == "ordering")
    if question.type == "numeric":
        return hashing.canonical_number(answer, question.step)
    if question.type == "text":
        return hashing.normalize_text(answer, bool(question.data.get("case_sensitive")))
    raise ValueError(f"no canonical form for a {question.type} question")


def _targeted_feedback(question: ReleasedQuestion, key: QuizKey, answer: Any, canonicals: list[str]) -> list[str]:
    if question.type == "multiple":
        return picked_choice_feedback(question, key, answer)
    for canonical in canonicals:
        text = key.open(question, RESPOND, hashing.ANSWER, canonical)
        if text:
            return [text]
    return []


def picked_choice_feedback(question: ReleasedQuestion, key: QuizKey, letters: list[str]) -> list[str]:
    """The feedback of at most one picked wrong choice of a multiple-choice question.

    Showing the feedback of every wrong pick would make ticking every box an oracle: the choices
    without feedback are the key. So one is shown: of the picked letters whose `choice` entry opens,
    the one whose check (hex) is smallest. The check is salted, so this order is new with every
    release and says nothing about the other picks; quiz.js targetedFeedback does the same.
    """
    opened = {}
    for letter in dict.fromkeys(letters):
        text = key.open(question, RESPOND, hashing.CHOICE, letter)
        if text:
            opened[letter] = text
    if not opened:
        return []
    # Ranked only when there is a choice to make: from an instructor copy, ranking costs slow keys.
    letter = next(iter(opened)) if len(opened) == 1 else min(opened, key=lambda each: key.choice_rank(question, each))
    return [f"({letter}) {opened[letter]}"]


def check_quiz(quiz: ReleasedQuiz, sheet: AnswerSheet, *, skip_code: bool = False,
               problems: list[Problem] | None = None) -> QuizReport:
    results = []
    for question in quiz.questions:
        if question.id in quiz.edited:
            results.append(QuestionResult(question.id, question.type, "edited",
                                          messages=["changed after release; not scored"]))
        elif question.id in sheet.refused:
            results.append(QuestionResult(question.id, question.type, "invalid", messages=[sheet.refused[question.id]]))
        else:
            results.append(check_question(question, quiz.key, sheet.answers.get(question.id), skip_code=skip_code))
    return QuizReport(quiz.id, quiz.title, results, list(problems or []) + sheet.problems)
