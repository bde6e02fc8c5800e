"""The terminal front-end: `tvm-course quiz take`, and the text form of a check report."""
from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Callable, TextIO

from .answers import AnswerError, parse_answer_text
from .checking import QuestionResult, QuizReport, check_question
from .model import HOW_TO_ANSWER, TYPE_NAMES, ReleasedQuestion, ReleasedQuiz

_MARKS = {"correct": "[ok]", "wrong": "[no]", "unanswered": "[--]", "invalid": "[??]",
          "ungraded": "[??]", "edited": "[!!]", "skipped": "[..]"}


def _wrap(text: str, indent: str = "     ") -> str:
    paragraphs = [textwrap.fill(p, width=92, initial_indent=indent, subsequent_indent=indent)
                  for p in text.strip().split("\n\n")]
    return "\n\n".join(paragraphs)


def format_result(result: QuestionResult) -> str:
    lines = [f"{_MARKS.get(result.status, '[  ]')} {result.id}: {result.status}"]
    lines += [_wrap(m) for m in result.messages]
    lines += [_wrap(f) for f in result.feedback]
    if result.explanation:
        lines.append(_wrap(result.explanation))
    return "\n".join(lines)


def format_report(report: QuizReport) -> str:
    lines = [str(p) for p in report.problems]
    lines += [format_result(r) for r in report.results]
    lines.append(report.summary())
    return "\n".join(lines)


def format_question(question: ReleasedQuestion, number: int, count: int) -> str:
    unit = f" (in {question.unit})" if question.unit else ""
    lines = [f"Question {number} of {count} ({TYPE_NAMES[question.type]}){unit}", _wrap(question.prompt, "  ")]
    for letter, text in zip(question.letters, question.choices or question.items):
        lines.append(textwrap.fill(text, width=92, initial_indent=f"  {letter}) ", subsequent_indent="     "))
    if question.type == "code":
        lines.append(f"  (graded by the schedule autograder, problem {question.data['problem']})")
        if question.data.get("starter"):
            lines.append(textwrap.indent(question.data["starter"].rstrip(), "    "))
    return "\n".join(lines)


def _read_answer(question: ReleasedQuestion, ask: Callable[[str], str], out: TextIO):
    """A parsed answer, or None when the student skips (empty line) or input ends."""
    while True:
        try:
            text = ask(f"  {HOW_TO_ANSWER[question.type]} (empty to skip)> ")
        except EOFError:
            return None
        if not text.strip():
            return None
        try:
            if question.type == "code":
                path = Path(text.strip()).expanduser()
                if not path.is_file():
                    raise AnswerError(f"no file {str(path)!r}")
                try:
                    return path.read_text(encoding="utf-8")
                except UnicodeDecodeError:
                    raise AnswerError(f"cannot read {str(path)!r}: it is not UTF-8 text") from None
                except OSError as err:
                    raise AnswerError(f"cannot read {str(path)!r}: {err.strerror or err}") from None
            return parse_answer_text(question, text)
        except AnswerError as err:
            print(f"  {err}; try again.", file=out)


def ask_stdin(prompt: str) -> str:
    """input(), echoing the answer when stdin is not a terminal (so piped runs read clearly)."""
    text = input(prompt)
    if not sys.stdin.isatty():
        print(text)
    return text


def take(quiz: ReleasedQuiz, ask: Callable[[str], str] = ask_stdin, out: TextIO = sys.stdout,
         skip_code: bool = False) -> QuizReport:
    """Ask every question in turn, check each answer at once, and end with 'k / n correct'."""
    print(quiz.title, file=out)
    if quiz.intro:
        print(_wrap(quiz.intro, ""), file=out)
    results = []
    count = len(quiz.questions)
    for number, question in enumerate(quiz.questions, start=1):
        print("", file=out)
        print(format_question(question, number, count), file=out)
        if question.id in quiz.edited:
            result = QuestionResult(question.id, question.type, "edited", messages=["changed after release; not scored"])
        elif question.type == "code" and skip_code:
            result = check_question(question, quiz.key, None, skip_code=True)
        else:
            answer = _read_answer(question, ask, out)
            if question.type == "code" and answer is not None and not skip_code:
                print("  grading your schedule (this compiles and runs it)...", file=out, flush=True)
            result = check_question(question, quiz.key, answer, skip_code=skip_code)
        results.append(result)
        print(format_result(result), file=out)
    report = QuizReport(quiz.id, quiz.title, results)
    print("", file=out)
    print(report.summary(), file=out)
    return report
