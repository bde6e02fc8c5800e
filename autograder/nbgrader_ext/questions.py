"""Short numeric questions that go with the schedule problems: the tile arithmetic.

A question set names the variables a student assigns in an answer cell; that much is public
(the visible check in the notebook looks for them). The right values are not here: this
package is installed on the students' machines, so anything in it is theirs to read. Every
student has their own variant (problems/variants.py), so the right values are computed for
each: by the solution cell of the course's *source* notebook, read as arithmetic on the
variant's constants (HEIGHT, WIDTH, OUT_CHANNELS, TILE_ROWS, ...). The explanations are in the
`tvm_course` metadata of that cell (read with the grading plan, see plan.py); neither is
released (`nbgrader generate_assignment` clears the solution and course/nbgrader_config.py
strips the metadata):

    {"answer": "questions", "questions": "cpu-tile-arithmetic",
     "key": {"TILE_BYTES": {"explanation": "one {TILE_ROWS}x{TILE_COLS} tile of float32: ..."}, ...}}

An explanation may name the variant's constants in braces; feedback shows the student's own
numbers there.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Mapping, Sequence

from ..errors import TvmCourseError

# question set -> the variables its answer cell assigns, in the order they are marked
QUESTION_SETS: dict[str, tuple[str, ...]] = {
    "cpu-tile-arithmetic": ("TILES_PER_CHANNEL", "TILE_BYTES", "WHOLE_BYTES", "HALO_PIXELS"),
    "gpu-tile-arithmetic": ("THREADS_PER_BLOCK", "BLOCKS", "SHARED_BYTES"),
}


@dataclass(frozen=True)
class Question:
    name: str  # the variable the answer cell assigns


@dataclass(frozen=True)
class Explained:
    """A question of the answer key: how its answer comes about, in terms of the variant."""

    name: str
    explanation: str  # may name the variant's constants: {HEIGHT}, {TILE_ROWS}, ...


@dataclass(frozen=True)
class KeyedQuestion:
    """A question with its right value: built only from the instructor's answer key."""

    name: str
    expected: float
    explanation: str  # how the number comes about, for feedback


@dataclass(frozen=True)
class Verdict:
    name: str
    right: bool
    message: str


class AnswerKeyError(ValueError, TvmCourseError):
    """The answer key in the source notebook does not fit its question set; the message says how."""


def get_question_set(name: str) -> tuple[Question, ...]:
    """The questions of a set, without their answers."""
    try:
        return tuple(Question(n) for n in QUESTION_SETS[name])
    except KeyError:
        raise KeyError(f"unknown question set {name!r}; known: {', '.join(QUESTION_SETS)}") from None


def answer_key(set_name: str, key: object) -> tuple[Explained, ...]:
    """The questions of `set_name` with their explanations, from the source notebook's `key` entry."""
    names = [q.name for q in get_question_set(set_name)]
    if not isinstance(key, Mapping):
        raise AnswerKeyError(f"question set {set_name!r} needs an answer key: 'key': {{NAME: {{'explanation': text}}}}")
    if set(key) != set(names):
        missing, extra = sorted(set(names) - set(key)), sorted(set(key) - set(names))
        raise AnswerKeyError(f"the answer key of {set_name!r} must answer exactly {', '.join(names)} (missing: {missing}, not in the set: {extra})")
    explained = []
    for name in names:
        entry = key[name]
        explanation = entry.get("explanation") if isinstance(entry, Mapping) else None
        if not isinstance(entry, Mapping) or set(entry) != {"explanation"} or not isinstance(explanation, str) or not explanation.strip():
            raise AnswerKeyError(f"the answer key's {name} must be {{'explanation': text}} (the value comes from the solution cell), not {entry!r}")
        explained.append(Explained(name, explanation))
    return tuple(explained)


def keyed_for(key: Sequence[Explained], solution: str, constants: Mapping[str, int]) -> tuple[KeyedQuestion, ...]:
    """The key's questions with their right values for one variant: what the solution cell
    computes from the variant's `constants`, explained in the variant's own numbers."""
    from .safe_arithmetic import read_assignments

    read = read_assignments(solution, dict(constants))
    keyed = []
    for question in key:
        expected = read.values.get(question.name)
        if expected is None:
            why = read.problem(question.name) or "it does not assign it"
            raise AnswerKeyError(f"the solution cell cannot give {question.name} for {dict(constants)}: {why}")
        try:
            explanation = question.explanation.format_map(dict(constants))
        except (KeyError, ValueError, IndexError) as error:
            raise AnswerKeyError(f"the explanation of {question.name} names {error} in braces, which is not one of {', '.join(constants)}") from None
        keyed.append(KeyedQuestion(question.name, expected, explanation))
    return tuple(keyed)


def mark_answers(key: Sequence[KeyedQuestion], values: Mapping[str, object], problems: Mapping[str, str] | None = None) -> tuple[float, list[Verdict]]:
    """The fraction of the questions in `key` answered right (each counts the same), and why.
    `problems`: why an answer's last binding is unread ("line N: why"), which no value given
    for it overrides (safe_arithmetic.ReadAnswers.problems_for)."""
    problems = problems or {}
    verdicts = []
    for question in key:
        given = values.get(question.name)
        if question.name in problems:
            verdicts.append(Verdict(question.name, False, f"{question.name}: unread ({problems[question.name]})"))
        elif given is None:
            verdicts.append(Verdict(question.name, False, f"{question.name}: no answer (assign a number to {question.name})"))
        elif not _is_number(given):
            verdicts.append(Verdict(question.name, False, f"{question.name}: {given!r} is not a number"))
        elif _equal(given, question.expected):
            verdicts.append(Verdict(question.name, True, f"{question.name} = {_show(given)}: right"))
        else:
            verdicts.append(
                Verdict(question.name, False, f"{question.name} = {_show(given)}: not right; {question.explanation} = {_show(question.expected)}")
            )
    right = sum(v.right for v in verdicts)
    return (right / len(verdicts) if verdicts else 0.0), verdicts


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _equal(given, expected) -> bool:
    try:
        return abs(float(given) - float(expected)) <= 1e-9 * max(1.0, abs(float(expected)))
    except (OverflowError, ValueError):  # an int too large for a float is no tile size
        return False


def _show(value) -> str:
    try:
        number = float(value)
    except OverflowError:
        return "a very large number"
    return str(int(number)) if number.is_integer() else f"{number:g}"
