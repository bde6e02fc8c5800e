"""A schedule answer cell's text, and the one rule that grades it.

What is graded is the schedule cell's whole text, as plain Python, alone, in a fresh process:
in the class run the cell as submitted (trusted.TrustedGrading), in the student's kernel the
cell that defined `schedule` (kernel_side.self_check finds its text in IPython's input
history). Both call `grade_schedule_cell` on that text, so the self-check says what the class
run gives: a line that only works in the student's kernel (a name another cell defined, such
as `show_workload`) fails both, naming the line (engine/student_runner.py), and a line of
IPython's own syntax (`%time`, `%%time`, `!ls`, `x?`), which plain Python cannot compile,
fails both with the line and what to do (`ipython_syntax`).
"""
from __future__ import annotations

from typing import NamedTuple

from ..engine.config import GraderConfig
from ..engine.report import Result
from ..problems.variants import Variant

SHOWN_LINES = 3  # IPython lines named in a verdict; past them it says "and more"


class IPythonLine(NamedTuple):
    number: int  # 1-based, in the cell
    text: str  # the line as written
    runs_as: str  # what IPython runs in its place


def grade_schedule_cell(problem: str, cell_text: str, config: GraderConfig | None = None, target: str | None = None,
                        *, variant: Variant | None = None, student: str | None = None) -> Result:
    """The verdict on a schedule cell's text, the same in the class run and in the self-check."""
    from ..engine.pipeline import grade_source

    return grade_source(problem, cell_text, config, target=target, variant=variant, student=student, explain_syntax_error=ipython_syntax)


def ipython_only_lines(cell_text: str, most: int = SHOWN_LINES + 1) -> list[IPythonLine]:
    """Up to `most` lines of the cell that plain Python cannot compile and IPython runs as
    something else (a line or cell magic, a shell command, a help request, a prompt), in order.
    Parse and compare: the line a SyntaxError points at is one where IPython's own input
    transformer changes it (its indentation aside, which is Python's to judge); set aside, the
    cell is compiled again for the next. Each round is one compile of the cell and one line
    through IPython, so a hostile cell costs at most `most` of each (IPython's transformer on a
    whole cell re-reads it for every line it changes: minutes for 64 KiB)."""
    lines = cell_text.splitlines()
    found: list[IPythonLine] = []
    while len(found) < most:
        try:
            compile("\n".join(lines), "cell", "exec", dont_inherit=True)
            break
        except SyntaxError as error:
            number = error.lineno
        except (ValueError, RecursionError, MemoryError):
            break
        if not number or not 0 < number <= len(lines):
            break
        written = lines[number - 1]
        runs = _ipython_runs(written.strip())
        if runs is None:  # not IPython's syntax: the plain syntax error stands
            break
        found.append(IPythonLine(number, written, runs))
        lines[number - 1] = written[: len(written) - len(written.lstrip())] + "pass"
    return found


def _ipython_runs(line: str) -> str | None:
    """What IPython runs for one line of a cell, where that differs from the line; else None."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython here
        return None
    try:
        runs = TransformerManager().transform_cell(line).strip()
    except Exception:  # IPython cannot read it either
        return None
    return runs if runs != line else None


def ipython_syntax(cell_text: str) -> str | None:
    """For a cell that plain Python cannot compile: which of its lines are IPython's syntax, and
    what to do; None where no line is (the plain syntax error then stands)."""
    lines = ipython_only_lines(cell_text)
    if not lines:
        return None
    named = [f"line {line.number}: {_short(line.text.strip())}   (IPython runs it as {_short(line.runs_as.strip())})"
             for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        named.append("and more")
    these = "This line is" if len(lines) == 1 else "These lines are"
    return (f"{these} IPython syntax, not Python:\n    " + "\n    ".join(named) + "\n"
            "Your schedule cell is graded as plain Python, alone, in a fresh process (by the self-check and when "
            "you submit alike), where it is a syntax error. Move "
            + ("that line" if len(lines) == 1 else "those lines") + " to another cell.")


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
