"""Reading a record that crossed a process boundary, field by field.

A child's message arrives over its channel as a JSON object (sandbox.parse_message), a worker's
as an unpickled object; neither is a record yet. `Fields` reads one: every accessor checks its
field's type and range and raises `MalformedMessage` naming the record and the field, so a
reader either holds a typed record or knows exactly what was wrong. Fields a reader does not
ask for are ignored (a newer sender may add some). Whose fault a malformed message is belongs
to the reader to say: from the trusted side (the evaluator, a worker) a grader fault, never a
student's zero; from an untrusted child (the student's, a runner of compiled code) the
submission's verdict.

This module leans on nothing of the package but errors.py.
"""
from __future__ import annotations

import math
from typing import Any, NoReturn, TypeVar

from ..errors import TvmCourseError

Choice = TypeVar("Choice", bound=str)


class MalformedMessage(ValueError, TvmCourseError):
    """A record read from another process has a field of the wrong type or out of range."""

    def __init__(self, record: str, field: str, why: str):
        super().__init__(f"{record}: field {field!r} {why}")
        self.record, self.field = record, field


def _kind(value: object) -> str:
    return "null" if value is None else type(value).__name__


class Fields:
    """The fields of one message `obj`, read as the record `record` (named in every error)."""

    def __init__(self, obj: object, record: str, prefix: str = ""):
        if not isinstance(obj, dict):
            raise MalformedMessage(record, prefix.rstrip(".") or "(the message)", f"is {_kind(obj)}, not an object")
        self.obj: dict[str, Any] = obj
        self.record = record
        self.prefix = prefix  # a nested object's fields are named by their path: "speedup.median"

    def fail(self, name: str, why: str) -> NoReturn:
        raise MalformedMessage(self.record, self.prefix + name, why)

    def has(self, name: str) -> bool:
        return self.obj.get(name) is not None

    def _required(self, name: str) -> Any:
        if name not in self.obj:
            self.fail(name, "is missing")
        return self.obj[name]

    def text(self, name: str, default: str | None = None) -> str:
        value = self.obj.get(name, default) if default is not None else self._required(name)
        if not isinstance(value, str):
            self.fail(name, f"is {_kind(value)}, not text")
        return value

    def optional_text(self, name: str) -> str | None:
        return self.text(name) if self.has(name) else None

    def choice(self, name: str, choices: tuple[Choice, ...]) -> Choice:
        value = self._required(name)
        for choice in choices:
            if value == choice:
                return choice
        shown = repr(value)[:60] if isinstance(value, str) else _kind(value)
        self.fail(name, f"is {shown}, not one of {', '.join(choices)}")

    def boolean(self, name: str) -> bool:
        value = self._required(name)
        if not isinstance(value, bool):
            self.fail(name, f"is {_kind(value)}, not true or false")
        return value

    def optional_boolean(self, name: str) -> bool | None:
        return self.boolean(name) if self.has(name) else None

    def number(self, name: str, minimum: float | None = None, maximum: float | None = None) -> float:
        return check_number(self, name, self._required(name), minimum, maximum)

    def integer(self, name: str, minimum: int | None = None, maximum: int | None = None) -> int:
        value = self._required(name)
        if not isinstance(value, int) or isinstance(value, bool):
            self.fail(name, f"is {_kind(value)}, not a whole number")
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.fail(name, f"is {value}, outside {minimum}..{maximum}")
        return value

    def optional_integer(self, name: str, minimum: int | None = None, maximum: int | None = None) -> int | None:
        return self.integer(name, minimum, maximum) if self.has(name) else None

    def texts(self, name: str, default: list[str] | None = None) -> list[str]:
        value = self.obj.get(name, default) if default is not None else self._required(name)
        if not isinstance(value, list):
            self.fail(name, f"is {_kind(value)}, not a list of text")
        for index, item in enumerate(value):
            if not isinstance(item, str):
                self.fail(f"{name}[{index}]", f"is {_kind(item)}, not text")
        return list(value)

    def optional_texts(self, name: str) -> list[str] | None:
        return self.texts(name) if self.has(name) else None

    def numbers(self, name: str, minimum: float | None = None, maximum: float | None = None) -> list[float]:
        value = self._required(name)
        if not isinstance(value, list):
            self.fail(name, f"is {_kind(value)}, not a list of numbers")
        return [check_number(self, f"{name}[{index}]", item, minimum, maximum) for index, item in enumerate(value)]

    def number_map(self, name: str, minimum: float | None = None) -> dict[str, float]:
        """An object of named numbers (seconds per stage, GFLOP/s per function); {} where absent."""
        value = self.obj.get(name, {})
        if not isinstance(value, dict):
            self.fail(name, f"is {_kind(value)}, not an object of numbers")
        return {key: check_number(self, f"{name}.{key}", item, minimum, None) for key, item in value.items()}

    def mapping(self, name: str) -> "Fields":
        """A nested object, read the same way (its errors name `name.field`)."""
        value = self._required(name)
        if not isinstance(value, dict):
            self.fail(name, f"is {_kind(value)}, not an object")
        return Fields(value, self.record, f"{self.prefix}{name}.")

    def raw(self, name: str) -> Any:
        """A field the caller checks itself (a trace: trace_schema's to check)."""
        return self.obj.get(name)


def check_number(fields: Fields, name: str, value: object, minimum: float | None, maximum: float | None) -> float:
    """A finite number (a whole one too; never true or false) within [minimum, maximum]."""
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        fields.fail(name, f"is {_kind(value)}, not a number")
    if not math.isfinite(value):
        fields.fail(name, f"is {value}, not a finite number")
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        fields.fail(name, f"is {value:g}, outside {minimum if minimum is not None else '-inf'}..{maximum if maximum is not None else 'inf'}")
    return float(value)
