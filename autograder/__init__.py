"""tvm-course: lessons, quizzes and a sandboxed autograder for TensorIR schedules.

The names below are loaded on first use, so `import autograder` (and the CLI) stays fast and
does not import TVM until something needs it.
"""
from __future__ import annotations

__all__ = ["check", "grade_source", "Result", "GraderConfig", "PROBLEMS", "get_problem"]


def __getattr__(name: str):
    if name in ("check", "grade_source"):
        from . import notebook_api

        return getattr(notebook_api, name)
    if name == "Result":
        from .engine.report import Result

        return Result
    if name == "GraderConfig":
        from .engine.config import GraderConfig

        return GraderConfig
    if name in ("PROBLEMS", "get_problem"):
        from . import problems

        return getattr(problems, name)
    raise AttributeError(f"module 'autograder' has no attribute {name!r}")
