"""Instructor copy -> student copy: the key becomes salted hashes and sealed texts.

What a released question keeps in plain text: the prompt, the choices or items (in the order
students see them), the unit, the question-level feedback (a hint for any wrong answer), and
everything of a code question except its solution. What it keeps only as hashes: every
accepted answer (`accept`), and every answer with its own feedback (`respond`), each entry
sealing the text that answer unlocks. See hashing.py for the scheme.
"""
from __future__ import annotations

import base64
import dataclasses
import hashlib
import hmac
import json
from pathlib import Path

import yaml

from . import hashing
from .hashing import ANSWER, CHOICE, LETTERS
from .model import Question, Quiz
from .rules import accepted_texts


def release(quiz: Quiz, salt: str | None = None) -> dict:
    """The released document for `quiz`; unless a salt is given, the quiz's stable salt (the
    same for as long as the instructor copy says the same, see hashing.stable_salt)."""
    salt = salt or hashing.stable_salt(instructor_content(quiz))
    questions = [release_question(q, salt) for q in quiz.questions]
    document: dict = {"id": quiz.id, "title": quiz.title, "lesson": quiz.lesson}
    if quiz.intro:
        document["intro"] = quiz.intro
    document["released"] = {"scheme": hashing.SCHEME, "salt": salt}
    document["questions"] = questions
    document["released"]["integrity"] = hashing.header_integrity(document)
    return document


def instructor_content(quiz: Quiz) -> dict:
    """Everything the instructor copy says, without where it says it (file, lines): moving a
    question or adding a comment keeps the salt."""
    def without_places(value):
        if isinstance(value, dict):
            return {k: without_places(v) for k, v in value.items() if k not in ("line", "path")}
        if isinstance(value, list):
            return [without_places(v) for v in value]
        return value

    return without_places(dataclasses.asdict(quiz))


def release_question(q: Question, salt: str) -> dict:
    out: dict = {"id": q.id, "type": q.type, "prompt": q.prompt}
    if q.feedback:
        out["feedback"] = q.feedback

    def entry(purpose: str, canonical: str, text: str) -> dict:
        return hashing.entry(salt, q.id, purpose, canonical, text)

    accept: list[dict] = []
    respond: list[dict] = []
    if q.type == "single":
        out["choices"] = [c.text for c in q.choices]
        for letter, choice in zip(LETTERS, q.choices):
            if choice.correct:
                accept.append(entry(ANSWER, letter, q.explanation))
            elif choice.feedback:
                respond.append(entry(ANSWER, letter, choice.feedback))
    elif q.type == "multiple":
        out["choices"] = [c.text for c in q.choices]
        accept.append(entry(ANSWER, hashing.canonical_letters(q.correct_letters(), keep_order=False),
                            q.explanation))
        for letter, choice in zip(LETTERS, q.choices):
            if choice.feedback and not choice.correct:  # shown when this wrong choice is picked
                respond.append(entry(CHOICE, letter, choice.feedback))
    elif q.type == "numeric":
        if q.unit:
            out["unit"] = q.unit
        step = hashing.grid_step(q.tolerance) if q.tolerance > 0 else None
        if step is not None:
            out["step"] = hashing.format_step(step)
        for canonical in _number_canonicals(q.answer, q.tolerance):
            accept.append(entry(ANSWER, canonical, q.explanation))
        for mistake in q.mistakes:
            for canonical in _number_canonicals(mistake.answer, q.tolerance):
                respond.append(entry(ANSWER, canonical, mistake.feedback))
    elif q.type == "text":
        out["case_sensitive"] = q.case_sensitive
        for canonical in accepted_texts({"accept": q.accept, "patterns": q.patterns,
                                         "case_sensitive": q.case_sensitive}):
            accept.append(entry(ANSWER, canonical, q.explanation))
        for mistake in q.mistakes:
            respond.append(entry(ANSWER, hashing.normalize_text(mistake.answer, q.case_sensitive),
                                 mistake.feedback))
    elif q.type == "ordering":
        out["items"] = [q.items[i] for i in q.display_order()]
        accept.append(entry(ANSWER, hashing.canonical_letters(q.ordering_key(), keep_order=True), q.explanation))
    elif q.type == "code":
        out["problem"] = q.problem
        if q.starter is not None:
            out["starter"] = q.starter
        out["require"] = dict(q.require)
        out["explanation"] = q.explanation
    if q.type in ("single", "multiple"):
        # As many entries as there could be wrong choices, so their number does not tell how
        # many choices are wrong (or right).
        respond += _decoys(q, salt, len(q.choices) - (1 if q.type == "single" else 0) - len(respond))
    if q.type != "code":
        # Sorted by check, so the order of entries says nothing about which choice they belong to.
        out["accept"] = sorted(accept, key=lambda e: e["check"])
        out["respond"] = sorted(respond, key=lambda e: e["check"])
    out["integrity"] = hashing.question_integrity(salt, out)
    return out


def _decoys(q: Question, salt: str, count: int) -> list[dict]:
    """`count` entries that no answer opens, shaped like real ones: a check and a sealed text of
    a length the real feedback texts have. They are derived from the question's instructor-only
    texts, so a student can neither recompute them nor tell them apart, and releasing again with
    the same salt gives the same document."""
    secret = hashlib.sha256(json.dumps([q.explanation, [c.feedback for c in q.choices]], default=str).encode()).digest()
    lengths = sorted(len((c.feedback or "").encode()) for c in q.choices if c.feedback) or [len((q.explanation or "x").encode())]
    decoys = []
    for index in range(max(0, count)):
        seed = hmac.new(secret, f"decoy\0{salt}\0{q.id}\0{index}".encode(), hashlib.sha256).digest()
        length = lengths[seed[0] % len(lengths)]
        stream = b"".join(hashlib.sha256(seed + bytes([block])).digest() for block in range(length // 32 + 1))[:length]
        decoys.append({"check": hashlib.sha256(seed + b"check").hexdigest(), "text": base64.b64encode(stream).decode("ascii")})
    return decoys


def _number_canonicals(value: float, tolerance: float) -> list[str]:
    if tolerance == 0:
        return [hashing.canonical_exact(value)]
    return [hashing.canonical_cell(cell) for cell in hashing.accepted_cells(value, tolerance)]


# ---- writing ---------------------------------------------------------------------------------

def released_header(document: dict, made_by: str = "") -> str:
    """The comment that opens a released file: what it is, and what its hashes do and do not hide."""
    return (f"# Released copy of quiz {document['id']!r}: the answers are salted hashes{' ' + made_by if made_by else ''}.\n"
            "# Check your answers with: tvm-course quiz check THIS_FILE ANSWERS.yaml\n"
            "# What the hashes protect: the answers cannot be read off this file, and a wrong answer opens\n"
            "# feedback, not the answer. What they do not: anyone with this file can try answers offline.\n"
            "# Each try costs a slow key (PBKDF2, 100,000 iterations: about 30 ms), which makes guessing\n"
            "# numbers and words slow; which of a few choices is right can be found in seconds. A\n"
            "# self-check, not an exam: see quizzes/README.md in the course repository.\n")


class _BlockStyleDumper(yaml.SafeDumper):
    pass


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockStyleDumper.add_representer(str, _represent_str)


def dump_yaml(data: object) -> str:
    """YAML for people: keys in the order given, multi-line text as literal blocks."""
    return yaml.dump(data, Dumper=_BlockStyleDumper, sort_keys=False, allow_unicode=True, width=100)


def write_released(document: dict, out: Path) -> None:
    """JSON when `out` ends in .json (for the website), YAML otherwise."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if out.suffix.lower() == ".json":
        out.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return
    header = released_header(document, "(tvm-course quiz release)")
    out.write_text(header + dump_yaml(document), encoding="utf-8")
