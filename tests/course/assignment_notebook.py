"""An assignment's source notebook read as its student reads it: the markdown, the "How your
schedule is graded" section, the primitives it lists and its common-errors table. Shared by the
tests of the CPU and the GPU assignments, whose notebooks follow one outline."""
from __future__ import annotations

import re
from dataclasses import dataclass

import nbformat

from .conftest import source_notebook

GRADED_HEADING = "### How your schedule is graded"


@dataclass(frozen=True)
class AssignmentNotebook:
    notebook: nbformat.NotebookNode

    @classmethod
    def read(cls, assignment: str) -> "AssignmentNotebook":
        return cls(nbformat.read(source_notebook(assignment), as_version=4))

    @property
    def markdown(self) -> list[str]:
        return [cell.source for cell in self.notebook.cells if cell.cell_type == "markdown"]

    @property
    def graded(self) -> str:
        """The section that says how the schedule is graded."""
        return next(text for text in self.markdown if text.startswith(GRADED_HEADING))

    def primitives(self) -> tuple[set[str], set[str]]:
        """(allowed, refused): the names in backticks where the section lists the primitives
        that count and those refused."""
        allowed = self.graded.split("only schedule primitives count", 1)[1].split("Refused,", 1)[0]
        refused = self.graded.split("Refused,", 1)[1].split("the points in the test cells", 1)[0]
        return _backticked(allowed), _backticked(refused)

    def common_errors(self) -> list[tuple[str, str]]:
        """(what the student sees, why) for each row of the section's common-errors table."""
        table = self.graded.split("### Common errors", 1)[1].split("###", 1)[0]
        rows = [line.strip().strip("|").split(" | ") for line in table.splitlines() if line.startswith("| ") and "---" not in line]
        return [(seen.strip(), why.strip()) for seen, why in rows[1:]]


def _backticked(text: str) -> set[str]:
    return set(re.findall(r"`([a-z_]+)`", text))
