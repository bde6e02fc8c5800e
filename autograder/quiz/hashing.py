"""The released-copy scheme: canonical answers, a slow salted key, sealed texts, integrity.

This module is the single source of truth for how a released quiz checks answers. The browser
version (WebCrypto PBKDF2 and SHA-256) must reproduce it exactly; quizzes/README.md describes the
same rules in prose. Everything here is PBKDF2-HMAC-SHA256 or SHA-256.

    key(q, purpose, canonical) = PBKDF2-HMAC-SHA256(password = UTF-8(canonical),
                                     salt = UTF-8(SCHEME "\n" salt "\n" q "\n" purpose),
                                     ITERATIONS, 32 bytes)
    check                      = hex(SHA-256(key))
    keystream(key)             = SHA-256(key || be32(0)) || SHA-256(key || be32(1)) || ...
    sealed text                = base64(UTF-8(text) XOR keystream(key))

An answer is correct when its check is among the question's `accept` checks; the matching
entry's sealed text (the explanation) then opens with the same key.

Why PBKDF2: the checks are public, so anyone can test guesses offline; a key that costs
ITERATIONS hash rounds makes each guess cost about as much as a student's own check (some 30 ms
in a browser), so trying every integer up to 100,000 takes about an hour in a page instead of
seconds. It cannot hide a small answer space (four choices, a few orderings) and does not stop
someone with a GPU and patience; see quizzes/README.md, "What the hashing does not do".
"""
from __future__ import annotations

import base64
import functools
import hashlib
import json
import math
import secrets
import struct
import unicodedata

SCHEME = "tvm-course-quiz/v2"
# Part of the scheme (not of the file), so a released copy cannot be edited into a cheap one.
ITERATIONS = 100_000
# Purposes keep the hashed strings of different kinds apart.
ANSWER = "answer"  # the whole answer to a question
CHOICE = "choice"  # one picked choice of a multiple-choice question (canonical: its letter)
# Numeric answers with a tolerance are compared on a grid of this many cells per tolerance.
GRID_CELLS_PER_TOLERANCE = 10
# Floor indices must stay exact integers in IEEE doubles (JavaScript numbers).
MAX_CELL_INDEX = 2**53
LETTERS = "abcdefghijklmnopqrstuvwxyz"
_ASCII_WHITESPACE = " \t\n\r\f\v"


def new_salt() -> str:
    """A fresh random salt: 16 bytes as 32 lowercase hex digits."""
    return secrets.token_hex(16)


def stable_salt(instructor_copy: object) -> str:
    """The salt of a quiz as long as its instructor copy is unchanged: 32 hex digits.

    A rebuilt site then releases the same hashes, so a student's kept answers still apply. It
    is derived from the whole instructor copy (answers, explanations, feedback) with the same
    slow key as the answers: testing a guess against the salt means guessing every secret of
    the quiz at once, at the cost of one check, so it is never a cheaper way in than a check.
    Any change to the quiz gives a new salt, as a new release did before."""
    return _slow_salt(canonical_json(instructor_copy))


@functools.lru_cache(maxsize=256)
def _slow_salt(copy: str) -> str:
    return hashlib.pbkdf2_hmac("sha256", copy.encode("utf-8"), f"{SCHEME}\nsalt".encode(), ITERATIONS, 16).hex()


# Each key costs ITERATIONS rounds, and releasing or checking the same quiz again in one process
# (a site build, `quiz take`, the tests) asks for the same keys again.
@functools.lru_cache(maxsize=16384)
def derive_key(salt: str, question_id: str, purpose: str, canonical: str) -> bytes:
    context = "\n".join((SCHEME, salt, question_id, purpose))
    return hashlib.pbkdf2_hmac("sha256", canonical.encode("utf-8"), context.encode("utf-8"), ITERATIONS, 32)


def check_of(key: bytes) -> str:
    return hashlib.sha256(key).hexdigest()


def _keystream(key: bytes, length: int) -> bytes:
    blocks = []
    for counter in range((length + 31) // 32):
        blocks.append(hashlib.sha256(key + struct.pack(">I", counter)).digest())
    return b"".join(blocks)[:length]


def seal(key: bytes, text: str) -> str:
    data = text.encode("utf-8")
    return base64.b64encode(bytes(a ^ b for a, b in zip(data, _keystream(key, len(data))))).decode("ascii")


def unseal(key: bytes, sealed: str) -> str:
    data = base64.b64decode(sealed.encode("ascii"), validate=True)
    plain = bytes(a ^ b for a, b in zip(data, _keystream(key, len(data))))
    return plain.decode("utf-8", errors="replace")


def entry(salt: str, question_id: str, purpose: str, canonical: str, text: str) -> dict[str, str]:
    """One released entry: the check of an answer and a text only that answer opens."""
    key = derive_key(salt, question_id, purpose, canonical)
    return {"check": check_of(key), "text": seal(key, text)}


def open_entry(entries: list[dict], salt: str, question_id: str, purpose: str, canonical: str) -> str | None:
    """The text of the entry this answer matches, or None when it matches none."""
    key = derive_key(salt, question_id, purpose, canonical)
    check = check_of(key)
    for item in entries:
        if item.get("check") == check:
            return unseal(key, item["text"])
    return None


# ---- canonical answers -------------------------------------------------------------------

def normalize_text(text: str, case_sensitive: bool = False) -> str:
    """NFC; runs of ASCII whitespace become one space; trimmed; lower-cased unless case-sensitive."""
    text = unicodedata.normalize("NFC", text)
    words = [w for w in _split_ascii_whitespace(text) if w]
    text = " ".join(words)
    return text if case_sensitive else text.lower()


def _split_ascii_whitespace(text: str) -> list[str]:
    words, current = [], []
    for char in text:
        if char in _ASCII_WHITESPACE:
            words.append("".join(current))
            current = []
        else:
            current.append(char)
    words.append("".join(current))
    return words


def canonical_letters(letters: list[str], keep_order: bool) -> str:
    """Choice letters joined by commas: sorted for a set (multiple choice), as given for an order."""
    return ",".join(letters if keep_order else sorted(letters))


def grid_step(tolerance: float) -> float:
    return tolerance / GRID_CELLS_PER_TOLERANCE


def format_step(step: float) -> str:
    """The step as released: the shortest decimal that reads back as the same double."""
    return repr(step)


def canonical_exact(value: float) -> str:
    """An exact number: 'exact:' and the 16 hex digits of its big-endian IEEE-754 double."""
    value = float(value)
    if value == 0.0:
        value = 0.0  # -0.0 and 0.0 are the same answer
    return "exact:" + struct.pack(">d", value).hex()


def cell_index(value: float, step: float) -> int:
    quotient = float(value) / step
    if not math.isfinite(quotient):
        raise ValueError(f"{value} is too far from zero for a grid step of {step}")
    index = math.floor(quotient)
    if abs(index) > MAX_CELL_INDEX:
        raise ValueError(f"{value} is too far from zero for a grid step of {step}")
    return index


def canonical_cell(index: int) -> str:
    return f"cell:{index}"


def accepted_cells(answer: float, tolerance: float) -> list[int]:
    """Grid cells that intersect [answer - tolerance, answer + tolerance].

    The ends are nudged outwards by one unit in the last place, so that rounding in
    `answer - tolerance` can never leave an end of the interval outside the accepted cells.
    """
    step = grid_step(tolerance)
    low = math.nextafter(answer - tolerance, -math.inf)
    high = math.nextafter(answer + tolerance, math.inf)
    return list(range(cell_index(low, step), cell_index(high, step) + 1))


def canonical_number(value: float, step: float | None) -> str:
    """How a student's number is hashed: its exact bits, or the grid cell it falls in."""
    if step is None:
        return canonical_exact(value)
    return canonical_cell(cell_index(value, step))


# ---- integrity: catches accidental edits and corruption, not forgery (anyone can recompute) ----------------------------------

def canonical_json(data: object) -> str:
    """Sorted keys, no whitespace, non-ASCII kept: JSON.stringify with keys sorted at every level."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_json(data: object) -> str:
    """Hex SHA-256 of the UTF-8 canonical JSON of `data`."""
    return hashlib.sha256(canonical_json(data).encode("utf-8")).hexdigest()


def question_integrity(salt: str, question: dict) -> str:
    """Over [salt, the question without its `integrity`]: a changed salt breaks every question."""
    return sha256_json([salt, {k: v for k, v in question.items() if k != "integrity"}])


def header_integrity(document: dict) -> str:
    """Over the document with `released.integrity` left out and each question replaced by its integrity."""
    released = {k: v for k, v in document["released"].items() if k != "integrity"}
    questions = [q.get("integrity") if isinstance(q, dict) else None for q in document.get("questions", [])]
    return sha256_json({**document, "released": released, "questions": questions})
