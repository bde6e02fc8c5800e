"""Problems found in a quiz or answers file: where (file, line, key) and what to do about it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .yaml_lines import DataPath
from ..errors import TvmCourseError


def format_path(path: DataPath) -> str:
    """('questions', 2, 'choices', 0) -> 'questions[2].choices[0]'."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += ("." if text else "") + str(part)
    return text


@dataclass(frozen=True)
class Problem:
    file: str
    line: int | None
    key: str  # e.g. "questions[2].choices[1].feedback"; "" for the whole file
    message: str
    severity: str = "error"  # or "warning"
    path: tuple = field(default=(), compare=False)  # the data path `key` was made from

    @property
    def question_index(self) -> int | None:
        """The index of the question this problem is in, if it is inside one."""
        if len(self.path) >= 2 and self.path[0] == "questions" and isinstance(self.path[1], int):
            return self.path[1]
        return None

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        key = f" {self.key}:" if self.key else ""
        return f"{where}: {self.severity}:{key} {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.file, "line": self.line, "key": self.key,
                "message": self.message, "severity": self.severity}


class QuizFileError(TvmCourseError):
    """A file that cannot be used at all (unreadable, not YAML, not a quiz); no traceback."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(p) for p in problems))
        self.problems = problems


def describe_value(value: Any) -> str:
    """How a wrong value reads in a message: its YAML type and a short repr."""
    if value is None:
        return "nothing (the value is empty)"
    if isinstance(value, bool):
        return f"a boolean ({str(value).lower()})"
    if isinstance(value, (int, float)):
        return f"a number ({value})"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"text ({shown!r})"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    return type(value).__name__
