"""Export an instructor copy to Moodle's GIFT format.

Mapping: single -> multiple choice with one right answer; multiple -> multiple choice with
weights (right answers share 100%, wrong ones -100%); numeric -> numerical with tolerance;
text -> short answer (every accepted string, patterns expanded); ordering -> matching (each item
to its position). Code questions have no GIFT form: they are skipped with a comment.
"""
from __future__ import annotations

from .model import Question, Quiz
from .rules import accepted_texts

_SPECIAL = "\\~=#{}:"


def escape(text: str) -> str:
    """GIFT-escape the special characters and keep line breaks as '\\n' (a blank line ends a question)."""
    escaped = "".join("\\" + c if c in _SPECIAL else c for c in text.strip())
    return escaped.replace("\r\n", "\n").replace("\n", "\\n")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _weight(percent: float) -> str:
    return f"%{percent:.5f}".rstrip("0").rstrip(".") + "%"


def _answer_block(q: Question) -> list[str] | None:
    lines: list[str] = []
    if q.type == "single":
        for choice in q.choices:
            mark = "=" if choice.correct else "~"
            fb = f"#{escape(choice.feedback)}" if choice.feedback else ""
            lines.append(f"{mark}{escape(choice.text)}{fb}")
    elif q.type == "multiple":
        right = len(q.correct_letters())
        for choice in q.choices:
            weight = _weight(100 / right) if choice.correct else _weight(-100)
            fb = f"#{escape(choice.feedback)}" if choice.feedback and not choice.correct else ""
            lines.append(f"~{weight}{escape(choice.text)}{fb}")
    elif q.type == "numeric":
        lines.append("#")
        lines.append(f"={_number(q.answer)}:{_number(q.tolerance)}")
        for mistake in q.mistakes:
            lines.append(f"=%0%{_number(mistake.answer)}:{_number(q.tolerance)}#{escape(mistake.feedback)}")
    elif q.type == "text":
        texts = accepted_texts({"accept": q.accept, "patterns": q.patterns, "case_sensitive": q.case_sensitive})
        lines.extend(f"={escape(t)}" for t in texts)
        lines.extend(f"=%0%{escape(m.answer)}#{escape(m.feedback)}" for m in q.mistakes)
    elif q.type == "ordering":
        lines.extend(f"={escape(item)} -> {position}" for position, item in enumerate(q.items, start=1))
    else:
        return None
    lines.append(f"####{escape(q.explanation)}")
    return lines


def _prompt(q: Question) -> str:
    prompt = q.prompt
    if q.type == "numeric" and q.unit:
        prompt += f" (in {q.unit})"
    if q.type == "ordering":
        prompt += "\n\nGive each item its position in the order (1 = first)."
    if q.type == "multiple":
        prompt += "\n\nSelect all that apply."
    return escape(prompt)


def to_gift(quiz: Quiz) -> tuple[str, list[str]]:
    """The GIFT text, and notes on what was left out or approximated."""
    notes: list[str] = []
    out = [f"// {quiz.title} (quiz {quiz.id}, lesson {quiz.lesson}); exported by tvm-course quiz gift",
           f"$CATEGORY: tvm-course/{quiz.lesson}", ""]
    for q in quiz.questions:
        block = _answer_block(q)
        if block is None:
            note = (f"skipped {q.type} question {q.id!r}: GIFT cannot grade code; "
                    f"students check it with tvm-course (problem {q.problem})")
            notes.append(note)
            out += [f"// {note}", ""]
            continue
        if q.type == "text" and q.case_sensitive:
            notes.append(f"question {q.id!r} is case-sensitive here; Moodle's short answer will ignore case")
        if q.type == "ordering":
            notes.append(f"ordering question {q.id!r} exported as a matching question (item -> position)")
        out.append(f"::{escape(q.id)}::[markdown]{_prompt(q)} {{")
        out.extend(block)
        out += ["}", ""]
    return "\n".join(out), notes
