"""Each quiz key against the quiz's own words, where that can be checked mechanically.

A fill-in-the-blank question ("the learned cost model does not invent schedules, it ____ them")
is disputable when the quiz itself, in a feedback or an explanation, fills the same blank with a
word the key refuses ("The model judges candidates"): a careful student who answers with the
quiz's own word is marked wrong. So: every word that any text of the quiz puts into the blank's
sentence frame (the blank's subject, then one word, then its object) is accepted by the key or
is a listed mistake with feedback saying why not, and the question's own explanation puts no
listed mistake into the frame.

The frame is read off the prompt: the word before the blank and the word after it, widened to
the nouns they stand for (the prompt's subject noun for a pronoun subject; the prompt's and the
explanation's plural nouns for a pronoun object).
"""
from __future__ import annotations

import re

import pytest

from autograder.quiz.hashing import normalize_text
from autograder.quiz.loading import load_instructor
from autograder.quiz.patterns import expand

from .conftest import COURSE_QUIZZES

BLANK = re.compile(r"(\w+)\s+_{3,}\s+(\w+)")
PRONOUN_SUBJECTS = {"it", "they", "he", "she"}
PRONOUN_OBJECTS = {"them", "it"}
# Words ending in s that are not plural nouns (verbs, pronouns, adverbs).
NOT_PLURAL = {"does", "is", "was", "has", "its", "this", "thus", "less", "always", "across", "as", "us"}


def accepted(question) -> set[str]:
    answers = set(question.accept)
    for pattern in question.patterns:
        answers.update(expand(pattern))
    return {normalize_text(a, question.case_sensitive) for a in answers}


def plural_nouns(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 3 and w.endswith("s") and w not in NOT_PLURAL}


def frame(question) -> tuple[set[str], set[str]] | None:
    """(subjects, objects) of the blank's sentence, or None for a question without a blank."""
    found = BLANK.search(question.prompt)
    if not found:
        return None
    subject, obj = found.group(1).lower(), found.group(2).lower()
    subjects, objects = {subject}, {obj}
    before = question.prompt[: found.start()]
    if subject in PRONOUN_SUBJECTS:
        # the noun the pronoun stands for: the last noun before the sentence's first verb
        head = re.search(r"(\w+)\s+(does|do|is|are|can|will|has)\b", before)
        if head:
            subjects.add(head.group(1).lower())
    if obj in PRONOUN_OBJECTS:
        objects |= plural_nouns(before) | plural_nouns(question.explanation)
    return subjects, objects


def texts(quiz):
    """Every text of the quiz, with where it is: prompts, choices, feedback, explanations."""
    for question in quiz.questions:
        yield f"{question.id} prompt", question.prompt
        yield f"{question.id} explanation", question.explanation
        if question.feedback:
            yield f"{question.id} feedback", question.feedback
        for choice in question.choices:
            yield f"{question.id} choice", choice.text
            if choice.feedback:
                yield f"{question.id} choice feedback", choice.feedback
        for mistake in question.mistakes:
            yield f"{question.id} mistake {mistake.answer!r}", mistake.feedback


def fillers(text: str, subjects: set[str], objects: set[str]) -> set[str]:
    """The words `text` puts between one of the subjects and one of the objects."""
    words = re.findall(r"[a-z]+", text.lower())
    return {words[i + 1] for i in range(len(words) - 2) if words[i] in subjects and words[i + 2] in objects}


def blank_questions():
    for path in COURSE_QUIZZES:
        quiz, _ = load_instructor(path)
        for question in quiz.questions:
            if question.type == "text" and frame(question):
                yield pytest.param(quiz, question, id=question.id)


@pytest.mark.parametrize("quiz,question", list(blank_questions()))
def test_every_word_the_quiz_puts_in_the_blank_is_accepted_or_explained(quiz, question):
    subjects, objects = frame(question)
    key = accepted(question)
    mistakes = {normalize_text(str(m.answer), question.case_sensitive) for m in question.mistakes}
    used = {}
    for where, text in texts(quiz):
        for word in fillers(text, subjects, objects) - {"prompt"}:
            used.setdefault(word, where)
    refused = {word: where for word, where in used.items() if word not in key and word not in mistakes}
    assert not refused, (f"the quiz fills the blank of {question.id!r} with words its key refuses: "
                         + ", ".join(f"{w!r} ({where})" for w, where in refused.items()))
    own = fillers(question.explanation, subjects, objects)
    assert own & key, f"{question.id!r}'s explanation does not state an accepted answer in the blank's frame"
    assert not own & mistakes, f"{question.id!r}'s explanation uses a listed mistake: {own & mistakes}"


def test_the_frame_catches_the_disputed_verb():
    """The case that made this test: the quiz said 'the model judges candidates' while the key
    refused 'judges'. A key without it is caught; the course's key accepts it."""
    quiz, _ = load_instructor(next(p for p in COURSE_QUIZZES if p.stem == "two-levels"))
    question = quiz.question("cost-model-verb")
    subjects, objects = frame(question)
    assert {"it", "model"} <= subjects and {"them", "schedules", "candidates"} <= objects
    used = set().union(*(fillers(text, subjects, objects) for _, text in texts(quiz)))
    assert "judges" in used and "ranks" in used
    assert {"judges", "ranks"} <= accepted(question)
