"""What a notebook cell calls: `autograder.check("tile-fused-conv", schedule)`.

The result is the same Result the command line and the instructor's grading run produce; in
Jupyter it shows itself as a small table. The function's source is what gets graded, in a
fresh process: it must be self-contained (what it uses from elsewhere in the notebook is not
there when it is graded).
"""
from __future__ import annotations

import dataclasses
import inspect
import textwrap
from typing import Callable

from .engine.config import GraderConfig
from .engine.pipeline import grade_source as _grade_source
from .engine.report import Result
from .problems.variants import Variant


def schedule_source(schedule: Callable | str) -> str:
    """Source text defining `schedule(sch)`, from a function or a string."""
    if isinstance(schedule, str):
        return schedule
    try:
        source = textwrap.dedent(inspect.getsource(schedule))
    except (OSError, TypeError) as error:
        raise ValueError(f"cannot read the source of {schedule!r}: define it in a cell or a file") from error
    if schedule.__name__ != "schedule":
        source += f"\n\nschedule = {schedule.__name__}\n"
    return source


def check(problem: str, schedule: Callable | str, target: str | None = None, variant: Variant | None = None,
          student: str | None = None, **settings) -> Result:
    """Grade `schedule` on `problem`, on `variant`'s workload (default: the journal's); keyword
    settings override GraderConfig fields."""
    config = dataclasses.replace(GraderConfig(), **settings)
    return _grade_source(problem, schedule_source(schedule), config, target, variant=variant, student=student)


def grade_source(problem: str, source: str, config: GraderConfig | None = None, target: str | None = None) -> Result:
    return _grade_source(problem, source, config, target)
