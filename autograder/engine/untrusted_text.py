"""Text that came from a submission, made safe for every place a grade is shown.

A submission controls its printed output, its exception messages and anything it sends on its
channel. Shown raw, an escape sequence repaints a terminal (a forged "PASSED"), a carriage
return overwrites a line, a bidirectional override reorders what an instructor reads, and a
lone surrogate makes the report itself fail to encode. So every such text is passed through
`visible` once, where a Result is made: control and formatting characters become visible
escapes (`\\x1b`, `\\u202e`), characters no encoding can write become U+FFFD, newlines and tabs
stay. Each output mode (text, JSON, HTML, nbgrader feedback, CSV) then prints whatever arrived.
"""
from __future__ import annotations

import re
import unicodedata

# Everything of category Cc (C0, DEL, C1), Cf (bidi controls, zero-width joiners, BOM), Cs
# (surrogates), Co/Cn (private and unassigned) and the two Unicode line separators, except
# the two layout characters every report uses.
_KEEP = {"\n", "\t"}
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
_CANDIDATE = re.compile(r"[^\x20-\x7e\n\t]")  # fast path: plain ASCII needs no look-up


def visible(text: str) -> str:
    """`text` with control and formatting characters escaped and lone surrogates replaced."""
    if not isinstance(text, str):
        text = str(text)
    return _CANDIDATE.sub(_escape, text)


def _escape(match: re.Match) -> str:
    char = match.group()
    if char in _KEEP:
        return char
    category = unicodedata.category(char)
    if category == "Cs":
        return "\ufffd"
    if category in _UNSAFE_CATEGORIES:
        code = ord(char)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
    return char
