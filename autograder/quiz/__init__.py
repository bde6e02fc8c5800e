"""Self-check quizzes: a YAML format, validation with line numbers, a checker that works from
salted hashes, and three front-ends (terminal, notebook widget, Moodle GIFT export).

    from autograder.quiz import show
    show("quizzes/two-levels.yaml")          # in a notebook

Modules: yaml_lines (YAML with lines), schema + rules (validation), model, loading, patterns,
hashing (the released-copy scheme), release, key, answers, checking, code_questions,
terminal, widget, gift. The format is documented in quizzes/README.md.
"""
from __future__ import annotations

from .checking import QuestionResult, QuizReport, check_question, check_quiz
from .diagnostics import Problem, QuizFileError
from .loading import load, load_instructor
from .model import Question, Quiz, ReleasedQuestion, ReleasedQuiz
from .release import release, write_released

__all__ = [
    "Problem", "Question", "QuestionResult", "Quiz", "QuizFileError", "QuizReport", "ReleasedQuestion",
    "ReleasedQuiz", "build_widget", "check_question", "check_quiz", "load", "load_instructor", "release",
    "show", "write_released",
]


def __getattr__(name: str):
    # ipywidgets is only imported when a notebook asks for the widget.
    if name in ("show", "build_widget", "QuizWidget"):
        from . import widget

        return getattr(widget, name)
    raise AttributeError(f"module 'autograder.quiz' has no attribute {name!r}")
