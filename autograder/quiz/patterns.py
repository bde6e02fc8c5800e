"""Answer patterns for short-text questions: a finite language, so it can be hashed.

A released quiz can only check answers whose canonical text it can hash in advance, and a
regular expression with `*` or `[a-z]` accepts infinitely many strings. So patterns here are
deliberately small: literal text, groups of alternatives `(a|b|c)`, and `?` after a group to
make it optional. Groups nest; a bare `a|b` at the top means either. A backslash makes the
next character literal.

    (sch\\.)?reverse_compute_at        ->  sch.reverse_compute_at, reverse_compute_at
    (one|1) (tile|tiles) per (axis|side)  ->  8 strings

`expand` lists every string a pattern accepts; the release hashes each of them.
"""
from __future__ import annotations

import itertools

from ..errors import TvmCourseError

MAX_EXPANSIONS = 256
_SPECIAL = "()|?\\"


class PatternError(ValueError, TvmCourseError):
    pass


def expand(pattern: str) -> list[str]:
    """All strings the pattern matches, in a stable order, without duplicates."""
    parser = _Parser(pattern)
    alternatives = parser.alternatives(top_level=True)
    strings = _expand_alternatives(alternatives)
    return list(dict.fromkeys(strings))


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def alternatives(self, top_level: bool) -> list[list]:
        options = [self.sequence()]
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence())
        if top_level and self.pos < len(self.text):
            raise PatternError(f"unmatched ')' at character {self.pos + 1} of {self.text!r}")
        return options

    def sequence(self) -> list:
        parts: list = []
        literal: list[str] = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            if char in "|)":
                break
            if char == "\\":
                if self.pos + 1 >= len(self.text):
                    raise PatternError(f"a pattern cannot end with a backslash: {self.text!r}")
                literal.append(self.text[self.pos + 1])
                self.pos += 2
            elif char == "(":
                if literal:
                    parts.append("".join(literal))
                    literal = []
                parts.append(self.group())
            elif char == "?":
                raise PatternError(
                    f"'?' must follow a group, e.g. '(s)?', at character {self.pos + 1} of {self.text!r}"
                )
            else:
                literal.append(char)
                self.pos += 1
        if literal:
            parts.append("".join(literal))
        return parts

    def group(self) -> tuple[list[list], bool]:
        start = self.pos
        self.pos += 1  # '('
        options = self.alternatives(top_level=False)
        if self.pos >= len(self.text) or self.text[self.pos] != ")":
            raise PatternError(f"unclosed '(' at character {start + 1} of {self.text!r}")
        self.pos += 1
        optional = self.pos < len(self.text) and self.text[self.pos] == "?"
        if optional:
            self.pos += 1
        return options, optional


def _expand_alternatives(options: list[list]) -> list[str]:
    strings: list[str] = []
    for sequence in options:
        strings.extend(_expand_sequence(sequence))
        _check_size(len(strings))
    return strings


def _expand_sequence(parts: list) -> list[str]:
    choices: list[list[str]] = []
    for part in parts:
        if isinstance(part, str):
            choices.append([part])
        else:
            options, optional = part
            expanded = _expand_alternatives(options)
            choices.append(([""] if optional else []) + expanded)
    count = 1
    for options in choices:
        count *= len(options)
        _check_size(count)
    return ["".join(combo) for combo in itertools.product(*choices)]


def _check_size(count: int) -> None:
    if count > MAX_EXPANSIONS:
        raise PatternError(f"the pattern matches more than {MAX_EXPANSIONS} strings; split it up")
