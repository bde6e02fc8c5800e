"""What the schema cannot say: rules that make a quiz answerable, checkable and spoiler-free.

Each function takes one question's data (already schema-valid) and reports Problems with the
line and key an author needs to fix it.
"""
from __future__ import annotations

import ast
import math
import re
from pathlib import Path
from typing import Callable

from . import hashing
from .diagnostics import Problem, format_path
from .patterns import PatternError, expand
from .yaml_lines import LinedData


class _Reporter:
    def __init__(self, lined: LinedData, file: str, index: int) -> None:
        self.lined, self.file, self.base = lined, file, ("questions", index)
        self.problems: list[Problem] = []

    def __call__(self, rel_path: tuple, message: str, severity: str = "error", line_offset: int = 0) -> None:
        path = self.base + rel_path
        line = self.lined.line_for(path)
        self.problems.append(Problem(self.file, line + line_offset if line else None, format_path(path),
                                     message, severity, path=path))


def duplicate_ids(questions: list, lined: LinedData, file: str) -> list[Problem]:
    seen: dict[str, int] = {}
    problems = []
    for index, question in enumerate(questions):
        qid = question.get("id") if isinstance(question, dict) else None
        if not isinstance(qid, str):
            continue
        path = ("questions", index, "id")
        if qid in seen:
            problems.append(Problem(file, lined.line_for(path), format_path(path),
                                    f"duplicate question id {qid!r} (first used on line {seen[qid]})", path=path))
        else:
            seen[qid] = lined.line_for(path) or 0
    return problems


# With fewer single-choice questions one shared letter is too likely by chance (1 in 4 for two
# questions of four choices) to be worth a warning.
SAME_POSITION_MIN_QUESTIONS = 3


def answer_positions(questions: list, lined: LinedData, file: str) -> list[Problem]:
    """A warning when every single-choice question (of those without errors) has its correct choice
    at the same letter: a student learns the letter instead of the answer."""
    letters = []
    for question in questions:
        if not isinstance(question, dict) or question.get("type") != "single":
            continue
        correct = [i for i, c in enumerate(question.get("choices", [])) if isinstance(c, dict) and c.get("correct")]
        if len(correct) == 1:
            letters.append(hashing.LETTERS[correct[0]])
    if len(letters) < SAME_POSITION_MIN_QUESTIONS or len(set(letters)) != 1:
        return []
    path = ("questions",)
    name = Path(file).name
    return [Problem(file, lined.line_for(path), format_path(path),
                    f"in {name}, all {len(letters)} single-choice questions have their correct answer at "
                    f"choice {letters[0]}: a student who notices can pick {letters[0]} without reading the "
                    "question; reorder the choices so the correct ones fall on different letters",
                    "warning", path=path)]


def longest_choice_correct(questions: list, lined: LinedData, file: str) -> list[Problem]:
    """A warning when, in most single-choice questions (of three or more without errors), the correct
    choice is strictly the longest: students learn to pick the longest answer without reading it."""
    longest = []
    total = 0
    for question in questions:
        if not isinstance(question, dict) or question.get("type") != "single":
            continue
        choices = [c for c in question.get("choices", []) if isinstance(c, dict)]
        correct = [c for c in choices if c.get("correct")]
        if len(correct) != 1:
            continue
        total += 1
        length = len(hashing.normalize_text(correct[0]["text"]))
        if all(len(hashing.normalize_text(c["text"])) < length for c in choices if c is not correct[0]):
            longest.append(question["id"])
    if total < SAME_POSITION_MIN_QUESTIONS or 2 * len(longest) <= total:
        return []
    path = ("questions",)
    return [Problem(file, lined.line_for(path), format_path(path),
                    f"in {Path(file).name}, the correct choice is the longest in {len(longest)} of {total} "
                    f"single-choice questions ({', '.join(longest)}): students learn to pick the longest "
                    "choice; make the wrong choices as substantive and the correct ones concise",
                    "warning", path=path)]


def _plain_texts(data: dict, questions: list[tuple[int, dict]]):
    """(path, description, text) for every text a released copy shows in plain: the intro, and each
    question's prompt, choice texts, items and question-level feedback."""
    if isinstance(data.get("intro"), str):
        yield ("intro",), "the intro", data["intro"]
    for index, question in questions:
        qid = question["id"]
        base = ("questions", index)
        yield base + ("prompt",), f"the prompt of {qid!r}", question["prompt"]
        for i, choice in enumerate(question.get("choices", [])):
            yield base + ("choices", i, "text"), f"choice {hashing.LETTERS[i]} of {qid!r}", choice["text"]
        for i, item in enumerate(question.get("items", [])):
            yield base + ("items", i), f"item {i + 1} of {qid!r}", item
        if isinstance(question.get("feedback"), str):
            yield base + ("feedback",), f"the feedback of {qid!r}", question["feedback"]


def _readable_answers(question: dict) -> list[tuple[str, re.Pattern]]:
    """The answers of a text or numeric question, each with a whole-word pattern that finds it in text."""
    if question["type"] == "text":
        if question.get("case_sensitive"):
            return []  # matched case-blind below, which would over-report; rare enough to leave out
        return [(a, re.compile(rf"(?<![\w.]){re.escape(a)}(?![\w]|\.\d)"))
                for a in accepted_texts(question) if len(a) >= 2]
    if question["type"] == "numeric":
        answer = question["answer"]
        if not (math.isfinite(answer) and float(answer).is_integer()):
            return []
        forms = dict.fromkeys([str(int(answer)), f"{int(answer):,}"])
        return [(f, re.compile(rf"(?<![\w.,]){re.escape(f)}(?![\w]|[.,]\d)")) for f in forms]
    return []


def answers_in_other_texts(data: dict, questions: list, lined: LinedData, file: str) -> list[Problem]:
    """A warning wherever a plain text of the quiz (the intro, a prompt, a choice, an item, a hint)
    contains an accepted answer of a text question or the whole-number answer of a numeric one: all
    questions are on screen together, so one would answer another. A question's own hint is left
    to _warn_if_feedback_gives_away."""
    kept = [(i, q) for i, q in questions if isinstance(q, dict)]
    answers = [(i, q, _readable_answers(q)) for i, q in kept]
    problems = []
    for path, where, text in _plain_texts(data, kept):
        plain = hashing.normalize_text(text)
        for index, question, forms in answers:
            if path == ("questions", index, "feedback"):
                continue
            matches = [a for a, pattern in forms if pattern.search(plain)]
            if not matches:
                continue
            found = max(matches, key=len)
            line = lined.line_of(("questions", index))
            problems.append(Problem(
                file, lined.line_for(path), format_path(path),
                f"{where} contains {found!r}, an answer of question {question['id']!r} (line {line}); "
                "a released copy shows it in plain text next to that question: reword one of them",
                "warning", path=path))
    return problems


def question_problems(question: dict, index: int, lined: LinedData, file: str) -> list[Problem]:
    report = _Reporter(lined, file, index)
    _RULES[question["type"]](question, report)
    if not any(p.is_error for p in report.problems):
        _id_rules(question, report)
    return report.problems


# Words this short ("at", "ir", "l1", "vs") are too common to give an answer away, unless they are
# a whole text answer by themselves.
ID_WORD_MIN_LENGTH = 3


def _words(text: str) -> list[str]:
    """Lower-cased runs of letters and digits: 'tvm.relax IR' -> ['tvm', 'relax', 'ir'],
    'compute_at' -> ['compute', 'at'], a question id -> its hyphen-separated parts."""
    return re.findall(r"[^\W_]+", text.lower())


def _answer_words(question: dict) -> list[tuple[str, str]]:
    """(word, what it is) for the words that would name a question's answer: the words of every
    string a text question accepts; a numeric question's whole-number answer; the words of a
    choice question's correct choices that no wrong choice has. Ordering and code questions have
    no answer a word could name."""
    found: dict[str, str] = {}
    if question["type"] == "text":
        for answer in accepted_texts(question):
            words = _words(answer)
            for word in words:
                if len(word) >= ID_WORD_MIN_LENGTH or words == [word]:
                    found.setdefault(word, f"a word of its accepted answer {answer!r}")
    elif question["type"] == "numeric":
        answer = question["answer"]
        if math.isfinite(answer) and float(answer).is_integer():
            found[str(abs(int(answer)))] = f"its answer {_format_number(answer)}"
    elif question["type"] in ("single", "multiple"):
        choices = question["choices"]
        wrong = {w for c in choices if not c.get("correct") for w in _words(c["text"])}
        for i, choice in enumerate(choices):
            if choice.get("correct"):
                for word in _words(choice["text"]):
                    if len(word) >= ID_WORD_MIN_LENGTH and word not in wrong:
                        found.setdefault(word, f"a word of its correct choice {hashing.LETTERS[i]} "
                                               "that no wrong choice has")
    return list(found.items())


def _id_rules(question: dict, report: _Reporter) -> None:
    """A warning when a question's id names its answer. Ids are not secret: the website puts them in
    its pages and a released copy keeps them, next to the question. The id's hyphen-separated
    words are compared, whole and case-blind, with the words of the answer (_answer_words); a word
    the prompt shows anyway gives nothing away and is not reported."""
    id_words = _words(question["id"])
    shown = set(_words(question["prompt"]))
    for word, what in _answer_words(question):
        if word in id_words and word not in shown:
            report(("id",), f"the id {question['id']!r} contains {word!r}, {what}; ids are shown to students "
                            "(in the website's pages and the released copy): rename the question after its "
                            "topic, not its answer", "warning")
            return


def _choice_rules(question: dict, report: _Reporter) -> None:
    choices = question["choices"]
    correct = [i for i, c in enumerate(choices) if c.get("correct")]
    texts: dict[str, int] = {}
    for i, choice in enumerate(choices):
        text = hashing.normalize_text(choice["text"])
        if text in texts:
            report(("choices", i, "text"), f"the same text as choice {hashing.LETTERS[texts[text]]}")
        texts.setdefault(text, i)
    for i, choice in enumerate(choices):
        if not choice.get("correct") and not choice.get("feedback"):
            report(("choices", i), "a wrong choice needs feedback that says why it is wrong")
        if choice.get("correct") and choice.get("feedback"):
            report(("choices", i, "feedback"), "feedback on a correct choice is never shown (it would give the "
                                               "key away): move it into the explanation")
    if question["type"] == "single":
        if len(correct) != 1:
            report(("choices",), f"a single-choice question needs exactly one choice with correct: true "
                                 f"(found {len(correct)})")
    elif not correct:
        report(("choices",), "a multiple-choice question needs at least one choice with correct: true")


def _numeric_rules(question: dict, report: _Reporter) -> None:
    answer, tolerance = question["answer"], question.get("tolerance", 0)
    if not math.isfinite(answer) or not math.isfinite(tolerance):
        report(("answer",), "the answer and the tolerance must be finite numbers")
        return
    try:
        accepted = _numeric_canonicals(answer, tolerance)
    except ValueError as err:
        report(("tolerance",), f"{err}: use a larger tolerance")
        return
    taken: dict[str, int] = {}
    for i, mistake in enumerate(question.get("mistakes", [])):
        try:
            cells = _numeric_canonicals(mistake["answer"], tolerance)
        except ValueError as err:
            report(("mistakes", i, "answer"), str(err))
            continue
        if cells & accepted:
            report(("mistakes", i, "answer"), "this wrong answer is within the tolerance of the right one "
                                              "(on the checking grid); it could never be reached")
        overlap = sorted({taken[c] for c in cells if c in taken})
        if overlap:
            report(("mistakes", i, "answer"), f"this wrong answer overlaps mistake {overlap[0] + 1} within the "
                                              "tolerance; an answer between them would match both")
        for cell in cells:
            taken.setdefault(cell, i)
    _warn_if_feedback_gives_away(question, [_format_number(answer)], report)


def _numeric_canonicals(value: float, tolerance: float) -> set[str]:
    if not math.isfinite(value):
        raise ValueError(f"{value} is not a finite number")
    if tolerance == 0:
        return {hashing.canonical_exact(value)}
    return {hashing.canonical_cell(c) for c in hashing.accepted_cells(value, tolerance)}


def _format_number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def accepted_texts(question: dict) -> list[str]:
    """Every normalised string a short-text question accepts (literals, then pattern expansions)."""
    strings = list(question.get("accept", []))
    for pattern in question.get("patterns", []):
        strings.extend(expand(pattern))
    case = question.get("case_sensitive", False)
    return list(dict.fromkeys(hashing.normalize_text(s, case) for s in strings))


def _text_rules(question: dict, report: _Reporter) -> None:
    if not question.get("accept") and not question.get("patterns"):
        report((), "a short-text question needs 'accept' answers or 'patterns'")
        return
    case = question.get("case_sensitive", False)
    for i, literal in enumerate(question.get("accept", [])):
        if not hashing.normalize_text(literal, case):
            report(("accept", i), "this accepted answer is only whitespace")
    for i, pattern in enumerate(question.get("patterns", [])):
        try:
            expand(pattern)
        except PatternError as err:
            report(("patterns", i), str(err))
            return
    accepted = set(accepted_texts(question))
    seen: set[str] = set()
    for i, mistake in enumerate(question.get("mistakes", [])):
        text = hashing.normalize_text(mistake["answer"], case)
        if text in accepted:
            report(("mistakes", i, "answer"), "this 'wrong' answer is also an accepted answer")
        if text in seen:
            report(("mistakes", i, "answer"), "the same wrong answer is listed twice")
        seen.add(text)
    _warn_if_feedback_gives_away(question, sorted(accepted), report)


def _ordering_rules(question: dict, report: _Reporter) -> None:
    seen: dict[str, int] = {}
    for i, item in enumerate(question["items"]):
        text = hashing.normalize_text(item)
        if text in seen:
            report(("items", i), f"the same text as item {seen[text] + 1}; students could not tell them apart")
        seen.setdefault(text, i)


def _code_rules(question: dict, report: _Reporter) -> None:
    from autograder.problems import PROBLEMS  # metadata only: does not import TVM

    if question["problem"] not in PROBLEMS:
        report(("problem",), f"unknown problem {question['problem']!r}; known problems: {', '.join(PROBLEMS)}")
    for key in ("solution", "starter"):
        if key in question:
            _python_source_rules(question[key], key, report, needs_schedule=(key == "solution"))


def _python_source_rules(source: str, key: str, report: _Reporter, needs_schedule: bool) -> None:
    # A block scalar's value starts on the line of its '|', one line before the code.
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        report((key,), f"Python syntax error in the {key}: {err.msg} (line {err.lineno} of the code)",
               line_offset=err.lineno or 0)
        return
    names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
    if needs_schedule and "schedule" not in names:
        report((key,), f"the {key} must define a top-level function schedule(sch)")


def _warn_if_feedback_gives_away(question: dict, answers: list[str], report: _Reporter) -> None:
    """Question-level feedback stays plain text in a released copy: it must not contain the answer."""
    feedback = question.get("feedback")
    if not feedback:
        return
    text = hashing.normalize_text(feedback)
    for answer in answers:
        if len(answer) >= 2 and re.search(rf"(?<![\w.]){re.escape(answer.lower())}(?![\w]|\.\d)", text):
            report(("feedback",), f"the feedback contains the answer {answer!r} and is readable in a released "
                                  "copy; say it in a mistake's feedback or the explanation instead", "warning")
            return


_RULES: dict[str, Callable[[dict, _Reporter], None]] = {
    "single": _choice_rules,
    "multiple": _choice_rules,
    "numeric": _numeric_rules,
    "text": _text_rules,
    "ordering": _ordering_rules,
    "code": _code_rules,
}
