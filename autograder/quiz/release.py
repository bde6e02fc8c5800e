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
    out = shown_fields(q)
    if q.type != "code":
        accept = [hashing.entry(salt, q.id, *plain) for plain in key_entries(q, ACCEPT)]
        respond = [hashing.entry(salt, q.id, *plain) for plain in key_entries(q, RESPOND)]
        if q.type in ("single", "multiple"):
            # As many entries as there could be wrong choices, so their number does not tell how
            # many choices are wrong (or right).
            respond += _decoys(q, salt, len(q.choices) - (1 if q.type == "single" else 0) - len(respond))
        # Sorted by check, so the order of entries says nothing about which choice they belong to.
        out["accept"] = sorted(accept, key=lambda e: e["check"])
        out["respond"] = sorted(respond, key=lambda e: e["check"])
    out["integrity"] = hashing.question_integrity(salt, out)
    return out


def shown_fields(q: Question) -> dict:
    """What a released question shows in plain text: everything but its `accept`, `respond` and
    `integrity`. An instructor copy taken or checked in memory shows exactly this (loading.instructor_view)."""
    out: dict = {"id": q.id, "type": q.type, "prompt": q.prompt}
    if q.feedback:
        out["feedback"] = q.feedback
    if q.type in ("single", "multiple"):
        out["choices"] = [c.text for c in q.choices]
    elif q.type == "numeric":
        if q.unit:
            out["unit"] = q.unit
        if q.tolerance > 0:
            out["step"] = hashing.format_step(hashing.grid_step(q.tolerance))
    elif q.type == "text":
        out["case_sensitive"] = q.case_sensitive
    elif q.type == "ordering":
        out["items"] = [q.items[i] for i in q.display_order()]
    elif q.type == "code":
        out["problem"] = q.problem
        if q.starter is not None:
            out["starter"] = q.starter
        out["require"] = dict(q.require)
        out["explanation"] = q.explanation
    return out


ACCEPT, RESPOND = "accept", "respond"  # the two lists of a released question's key


def key_entries(q: Question, kind: str) -> list[tuple[str, str, str]]:
    """The plain key of a question: (purpose, canonical answer, text it opens) for every entry
    of its `accept` or `respond` (`kind`), in the order given here, before hashing and decoys.
    release_question hashes these; checking.InstructorKey looks answers up in them directly."""
    entries: list[tuple[str, str, str]] = []
    if q.type == "single":
        for letter, choice in zip(LETTERS, q.choices):
            if kind == ACCEPT and choice.correct:
                entries.append((ANSWER, letter, q.explanation))
            elif kind == RESPOND and not choice.correct and choice.feedback:
                entries.append((ANSWER, letter, choice.feedback))
    elif q.type == "multiple":
        if kind == ACCEPT:
            entries.append((ANSWER, hashing.canonical_letters(q.correct_letters(), keep_order=False), q.explanation))
        else:
            for letter, choice in zip(LETTERS, q.choices):
                if choice.feedback and not choice.correct:  # shown when this wrong choice is picked
                    entries.append((CHOICE, letter, choice.feedback))
    elif q.type == "numeric":
        if kind == ACCEPT:
            entries += [(ANSWER, canonical, q.explanation) for canonical in _number_canonicals(q.answer, q.tolerance)]
        else:
            for mistake in q.mistakes:
                entries += [(ANSWER, canonical, mistake.feedback)
                            for canonical in _number_canonicals(mistake.answer, q.tolerance)]
    elif q.type == "text":
        if kind == ACCEPT:
            entries += [(ANSWER, canonical, q.explanation)
                        for canonical in accepted_texts({"accept": q.accept, "patterns": q.patterns,
                                                         "case_sensitive": q.case_sensitive})]
        else:
            entries += [(ANSWER, hashing.normalize_text(m.answer, q.case_sensitive), m.feedback) for m in q.mistakes]
    elif q.type == "ordering" and kind == ACCEPT:
        entries.append((ANSWER, hashing.canonical_letters(q.ordering_key(), keep_order=True), q.explanation))
    return entries


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
