"""The answer key of an instructor copy, written as an answers file (`tvm-course quiz key`)."""
from __future__ import annotations

from typing import Any

from .model import Question, Quiz
from .release import dump_yaml


def key_answer(question: Question) -> Any:
    """One answer that earns full marks, in the form an answers file holds."""
    if question.type == "single":
        return question.correct_letters()[0]
    if question.type == "multiple":
        return question.correct_letters()
    if question.type == "numeric":
        value = question.answer
        return int(value) if float(value).is_integer() and abs(value) < 2**53 else value
    if question.type == "text":
        if question.accept:
            return question.accept[0]
        from .patterns import expand

        return expand(question.patterns[0])[0]
    if question.type == "ordering":
        return question.ordering_key()
    if question.type == "code":
        return question.solution
    raise ValueError(f"unknown question type {question.type!r}")


def answer_key(quiz: Quiz) -> dict[str, Any]:
    return {q.id: key_answer(q) for q in quiz.questions}


def key_yaml(quiz: Quiz) -> str:
    header = f"# Answer key for quiz {quiz.id!r} ({quiz.title}). Instructor eyes only.\n"
    return header + dump_yaml(answer_key(quiz))
