"""Predict-then-run exercises: a student writes a guess before a measurement, then compares.

A lesson runs top to bottom in the tests with no student at the keyboard, so an unanswered
prediction is not an error: the cell says what to write and carries on.
"""
from __future__ import annotations

import math


def number(guess: float | None, measured: float, what: str, close: float = 0.25) -> None:
    """Say how a numeric guess compares with what was measured (within `close`, relatively)."""
    if guess is None:
        text = f"Write your prediction of the {what} first (replace None with a number), then run this cell again."
    elif not isinstance(guess, (int, float)) or isinstance(guess, bool) or not math.isfinite(guess):
        text = f"Your prediction should be a number, not {guess!r}."
    else:
        off = (guess - measured) / measured if measured else math.inf
        verdict = "close" if abs(off) <= close else ("too high" if off > 0 else "too low")
        text = f"You predicted {guess:g}; measured here: {measured:.3g}. Your prediction was {verdict} ({off:+.0%})."
    print(text)


def choice(guess: str | None, measured: str, options: tuple[str, ...], what: str) -> None:
    """Say whether a guess among `options` (e.g. "faster" / "slower") matches the measurement."""
    if guess is None:
        text = f"Write your prediction of the {what} first ({' or '.join(repr(o) for o in options)}), then run this cell again."
    elif str(guess).strip().lower() not in options:
        text = f"Your prediction should be one of {', '.join(repr(o) for o in options)}, not {guess!r}."
    elif str(guess).strip().lower() == measured:
        text = f"You predicted {measured!r}, and that is what this machine measured."
    else:
        text = f"You predicted {str(guess).strip().lower()!r}; this machine measured {measured!r}. The text below explains why."
    print(text)
