"""Answers: an answers file (YAML mapping question id -> answer), or text typed by a student.

Each answer is turned into one canonical Python value per question type, or refused with a
message that says what the question expects:

    single    'b'                    multiple  ['a', 'c']        numeric  14 or 0.5
    text      'reverse_compute_at'   ordering  ['c', 'a', 'b']   code     Python source
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .diagnostics import Problem, QuizFileError, describe_value
from .model import ReleasedQuiz, ReleasedQuestion
from .yaml_lines import YamlProblem, load_lined_file
from ..errors import TvmCourseError

_LETTER_LIST_SPLIT = re.compile(r"[\s,;]+")
# ASCII digits only ([0-9], not \d, which in Python also matches "１４" or "١٤"): as quiz-hashing.js.
_NUMBER = re.compile(r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$")
_THOUSANDS = re.compile(r"^[+-]?[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$")  # 3,211,264


class AnswerError(ValueError, TvmCourseError):
    """An answer of the wrong shape for its question; the message says what was expected."""


@dataclass
class AnswerSheet:
    """Parsed answers by question id; refused answers by id with the reason; file problems."""

    answers: dict[str, Any] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)


def parse_answer(question: ReleasedQuestion, value: Any) -> Any:
    """A value from an answers file, checked against what `question` expects."""
    kind = question.type
    if kind == "single":
        return _letter(question, value)
    if kind in ("multiple", "ordering"):
        if isinstance(value, str):
            value = [v for v in _LETTER_LIST_SPLIT.split(value.strip()) if v]
            if kind == "ordering" and len(value) == 1 and len(value[0]) > 1:
                value = list(value[0])  # "cab"
        if not isinstance(value, list):
            raise AnswerError(f"expected a list of letters such as [a, c], found {describe_value(value)}")
        letters = [_letter(question, v) for v in value]
        if len(set(letters)) != len(letters):
            raise AnswerError("each letter may appear only once")
        if kind == "ordering" and sorted(letters) != question.letters:
            raise AnswerError(f"put every item in order exactly once: use all of {', '.join(question.letters)}")
        return letters
    if kind == "numeric":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            hint = ": remove the quotes" if isinstance(value, str) and _NUMBER.match(value.strip()) else ""
            raise AnswerError(f"expected a number, found {describe_value(value)}{hint}")
        if not math.isfinite(value):
            raise AnswerError("expected a finite number")
        return float(value)
    if kind == "text":
        if isinstance(value, bool) or value is None:
            raise AnswerError(f"expected text, found {describe_value(value)}; put the answer in quotes")
        if isinstance(value, (int, float)):
            return str(value)
        if not isinstance(value, str):
            raise AnswerError(f"expected text, found {describe_value(value)}")
        return value
    if kind == "code":
        if not isinstance(value, str) or not value.strip():
            raise AnswerError(f"expected Python source that defines schedule(sch), found {describe_value(value)}")
        return value
    raise AnswerError(f"unknown question type {kind!r}")


def parse_answer_text(question: ReleasedQuestion, text: str) -> Any:
    """What a student typed (terminal or notebook) -> the same value an answers file would hold."""
    text = text.strip()
    if question.type == "numeric":
        number = text
        if question.unit and number.lower().endswith(question.unit.lower()):
            number = number[: -len(question.unit)].strip()
        if _THOUSANDS.match(number):
            number = number.replace(",", "")
        if not _NUMBER.match(number):
            unit = f" (in {question.unit})" if question.unit else ""
            raise AnswerError(f"type a number{unit}, e.g. 42 or 0.5")
        return parse_answer(question, float(number))
    return parse_answer(question, text)


def _letter(question: ReleasedQuestion, value: Any) -> str:
    options = question.letters
    if isinstance(value, str) and value.strip().lower() in options:
        return value.strip().lower()
    raise AnswerError(f"expected one of the letters {', '.join(options)}, found {describe_value(value)}")


def load_answers(path: str | Path, quiz: ReleasedQuiz) -> AnswerSheet:
    """Read an answers file; unknown ids and badly typed answers are reported, not fatal."""
    file = str(path)
    try:
        lined = load_lined_file(Path(file))
    except YamlProblem as err:
        raise QuizFileError([Problem(file, err.line, "", err.message)]) from None
    except OSError as err:
        raise QuizFileError([Problem(file, None, "", f"cannot read the answers file: {err.strerror}")]) from None
    if lined.data is None:
        lined.data = {}
    if not isinstance(lined.data, dict):
        raise QuizFileError([Problem(file, 1, "", "an answers file is a YAML mapping: question id -> answer")])
    sheet = AnswerSheet()
    by_id = {q.id: q for q in quiz.questions}
    for key, value in lined.data.items():
        qid = str(key)
        line = lined.line_for((key,))
        question = by_id.get(qid)
        if question is None:
            known = ", ".join(by_id)
            sheet.problems.append(Problem(file, line, qid, f"no question {qid!r} in quiz {quiz.id!r}; "
                                          f"ignored (the ids are: {known})", "warning", path=(key,)))
            continue
        try:
            sheet.answers[qid] = parse_answer(question, value)
        except AnswerError as err:
            sheet.refused[qid] = str(err)
            sheet.problems.append(Problem(file, lined.line_of((key,)), qid, f"{err}; not counted", path=(key,)))
    return sheet
