"""Small tables that render as Markdown in a notebook and as aligned text in a terminal."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..engine.checks import human_bytes  # noqa: F401  (the lessons' tables use the grader's units)


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    title: str = ""
    note: str = ""  # a paragraph shown under the table, e.g. why its numbers mean little here

    @classmethod
    def of(cls, columns: Sequence[str], rows: Sequence[Sequence[object]], title: str = "", note: str = "") -> "Table":
        return cls(tuple(columns), tuple(tuple(str(cell) for cell in row) for row in rows), title, note)

    def column(self, name: str) -> list[str]:
        index = self.columns.index(name)
        return [row[index] for row in self.rows]

    def _repr_markdown_(self) -> str:
        def line(cells: Sequence[str]) -> str:
            return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

        lines = [f"**{self.title}**", ""] if self.title else []
        lines += [line(self.columns), line(["---"] * len(self.columns))]
        lines += [line(row) for row in self.rows]
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines)

    def __str__(self) -> str:
        widths = [max(len(cell) for cell in column) for column in zip(self.columns, *self.rows)]

        def line(cells: Sequence[str]) -> str:
            return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()

        lines = [self.title] if self.title else []
        lines += [line(self.columns), line(["-" * w for w in widths])]
        lines += [line(row) for row in self.rows]
        if self.note:
            lines += ["", self.note]
        return "\n".join(lines)

    def __repr__(self) -> str:
        return str(self)


def milliseconds(seconds: float) -> str:
    return f"{seconds * 1e3:.3f} ms"
