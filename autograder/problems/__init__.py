"""The course's problems, by name. Each module defines one `PROBLEM`."""
from __future__ import annotations

from .base import Problem, SpeedBand, Weights
from .gpu_fused_conv import PROBLEM as GPU_FUSED_CONV
from .tile_fused_conv import PROBLEM as TILE_FUSED_CONV
from .workload import ConvShape
from ..errors import ExitCode, TvmCourseError

PROBLEMS: dict[str, Problem] = {p.name: p for p in (TILE_FUSED_CONV, GPU_FUSED_CONV)}


class UnknownProblem(KeyError, TvmCourseError):
    exit_code = ExitCode.USAGE_ERROR

    def __str__(self) -> str:
        return f"unknown problem {self.args[0]!r}; known problems: {', '.join(PROBLEMS)}"


def get_problem(name: str) -> Problem:
    try:
        return PROBLEMS[name]
    except KeyError:
        raise UnknownProblem(name) from None


__all__ = ["ConvShape", "PROBLEMS", "Problem", "SpeedBand", "UnknownProblem", "Weights", "get_problem"]
