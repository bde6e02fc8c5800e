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

import difflib
from typing import NamedTuple

from ..engine.config import GraderConfig
from ..engine.report import Result
from ..problems.variants import Variant

SHOWN_LINES = 3  # IPython lines named in a verdict; the rest are counted


class IPythonLine(NamedTuple):
    number: int  # 1-based, in the cell
    text: str  # the line as written
    runs_as: str  # what IPython runs in its place


def grade_schedule_cell(problem: str, cell_text: str, config: GraderConfig | None = None, target: str | None = None,
                        *, variant: Variant | None = None, student: str | None = None) -> Result:
    """The verdict on a schedule cell's text, the same in the class run and in the self-check."""
    from ..engine.pipeline import grade_source

    return grade_source(problem, cell_text, config, target=target, variant=variant, student=student, explain_syntax_error=ipython_syntax)


def ipython_only_lines(cell_text: str) -> list[IPythonLine]:
    """The lines IPython would run as something else (a magic, a shell command, a help request,
    a prompt or an indentation it strips), found by IPython's own input transformer: each line
    it changes, and for a cell magic its first line (the magic takes the rest of the cell)."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:  # no IPython here: the plain syntax error stands
        return []
    try:
        transformed = TransformerManager().transform_cell(cell_text)
    except Exception:  # IPython cannot read it either: the plain syntax error stands
        return []
    written, runs = cell_text.splitlines(), transformed.splitlines()
    found = []
    for tag, start, end, run_start, run_end in difflib.SequenceMatcher(None, written, runs, autojunk=False).get_opcodes():
        changed = [i for i in range(start, end) if written[i].strip()] if tag in ("replace", "delete") else []
        if not changed:
            continue
        if end - start == run_end - run_start:  # line for line: a line magic, `!`, `?`, a prompt
            found += [IPythonLine(i + 1, written[i], runs[run_start + i - start]) for i in changed]
        else:  # a cell magic: one call in place of the whole cell
            found.append(IPythonLine(changed[0] + 1, written[changed[0]], runs[run_start] if run_start < run_end else ""))
    return found


def ipython_syntax(cell_text: str) -> str | None:
    """For a cell that plain Python cannot compile: which of its lines are IPython's syntax, and
    what to do; None where no line is (the plain syntax error then stands)."""
    lines = ipython_only_lines(cell_text)
    if not lines:
        return None
    named = [f"line {line.number}: {_short(line.text.strip())}   (IPython runs it as {_short(line.runs_as.strip())})"
             for line in lines[:SHOWN_LINES]]
    if len(lines) > SHOWN_LINES:
        named.append(f"and {len(lines) - SHOWN_LINES} more")
    these = "This line is" if len(lines) == 1 else "These lines are"
    return (f"{these} IPython syntax, not Python:\n    " + "\n    ".join(named) + "\n"
            "Your schedule cell is graded as plain Python, alone, in a fresh process (by the self-check and when "
            "you submit alike), where it is a syntax error. Move "
            + ("that line" if len(lines) == 1 else "those lines") + " to another cell.")


def _short(text: str, limit: int = 90) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."
