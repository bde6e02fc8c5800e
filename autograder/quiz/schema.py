"""The quiz formats' JSON Schemas, and schema errors turned into messages with lines.

The schema files next to this module are the source of truth for structure (which keys, which
types); `rules.py` checks what JSON Schema cannot say (exactly one correct choice, ...).
"""
from __future__ import annotations

import difflib
import functools
import json
import re
from importlib import resources

from .diagnostics import Problem, describe_value, format_path
from .yaml_lines import LinedData

SCHEMA_FILES = {"instructor": "quiz.schema.json", "released": "released.schema.json"}
_TYPE_WORDS = {"number": "a number", "string": "text", "boolean": "true or false",
               "array": "a list", "object": "a mapping", "integer": "a whole number"}
_NUMBER_TEXT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$", re.ASCII)


@functools.cache
def load_schema(kind: str = "instructor") -> dict:
    text = resources.files(__package__).joinpath(SCHEMA_FILES[kind]).read_text(encoding="utf-8")
    return json.loads(text)


def schema_text(kind: str = "instructor") -> str:
    return json.dumps(load_schema(kind), indent=2)


def schema_problems(lined: LinedData, file: str, kind: str = "instructor") -> list[Problem]:
    import jsonschema  # about a second to import: only when a file is validated

    validator = jsonschema.Draft202012Validator(load_schema(kind))
    problems: list[Problem] = []
    for error in validator.iter_errors(lined.data):
        problems.extend(_translate(error, lined, file))
    unique = list(dict.fromkeys(problems))
    return sorted(unique, key=lambda p: (p.line or 0, p.key))


def _translate(error, lined: LinedData, file: str) -> list[Problem]:
    path = tuple(error.absolute_path)
    key = format_path(path)
    line = lined.line_for(path)
    kind = error.validator
    if kind == "additionalProperties":
        allowed = sorted(error.schema.get("properties", {}))
        found = []
        for extra in sorted(set(error.instance) - set(allowed), key=str):
            hint = difflib.get_close_matches(str(extra), allowed, n=1)
            suggestion = f"; did you mean {hint[0]!r}?" if hint else f"; allowed keys: {', '.join(allowed)}"
            found.append(Problem(file, lined.line_for(path + (extra,)), format_path(path + (extra,)),
                                 f"unknown key {extra!r}{suggestion}", path=path + (extra,)))
        return found
    if kind == "required":
        missing = [name for name in error.validator_value if name not in error.instance]
        return [Problem(file, line, key or "(top level)", f"missing key {name!r}", path=path)
                for name in missing]
    if kind == "enum" and path and path[-1] == "type":
        options = error.validator_value
        hint = difflib.get_close_matches(str(error.instance), options, n=1)
        tail = f"; did you mean {hint[0]!r}?" if hint else ""
        return [Problem(file, line, key, f"unknown question type {error.instance!r}; the types are "
                        f"{', '.join(options)}{tail}", path=path)]
    if kind == "type":
        return [Problem(file, line, key, _type_message(error.validator_value, error.instance), path=path)]
    if kind == "pattern" and path and path[-1] in ("id", "lesson"):
        return [Problem(file, line, key, f"{error.instance!r} is not a valid id: use lower-case letters, "
                        "digits and hyphens, starting with a letter or digit", path=path)]
    messages = {
        "minItems": lambda: f"needs at least {error.validator_value} item(s)",
        "maxItems": lambda: f"allows at most {error.validator_value} items",
        "minLength": lambda: "must not be empty",
        "minimum": lambda: f"must be at least {error.validator_value}",
        "minProperties": lambda: "name at least one of: " + ", ".join(error.schema.get("properties", {})),
        "enum": lambda: f"{error.instance!r} is not one of: {', '.join(map(str, error.validator_value))}",
        "const": lambda: f"must be {error.validator_value!r}",
    }
    message = messages[kind]() if kind in messages else error.message
    return [Problem(file, line, key, message, path=path)]


def _type_message(expected: str | list, value: object) -> str:
    wanted = " or ".join(_TYPE_WORDS.get(t, t) for t in ([expected] if isinstance(expected, str) else expected))
    message = f"expected {wanted}, found {describe_value(value)}"
    if "number" in str(expected) and isinstance(value, str) and _NUMBER_TEXT.match(value.strip()):
        if "." not in value and "e" in value.lower():
            message += "; YAML reads '1e-3' as text: write 0.001 or 1.0e-3"
        else:
            message += ": remove the quotes"
    elif expected == "string" and isinstance(value, bool):
        message += "; YAML reads yes/no/on/off/true/false as booleans: put the text in quotes"
    elif expected == "string" and isinstance(value, (int, float)):
        message += ": put it in quotes"
    return message
