"""Short numeric questions that go with the schedule problems: the tile arithmetic.

Each question names the variable the student assigns in an answer cell and knows its right
value, computed from the problem's shape (so the answers follow if a problem's shape
changes). The values live here, in package code, not in the notebook's hidden-test text,
which nbgrader's feedback can quote in a traceback.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Callable, Mapping

from ..problems.workload import ConvShape

FLOAT32_BYTES = 4


@dataclass(frozen=True)
class Question:
    name: str  # the variable the answer cell assigns
    expected: int
    explanation: str  # how the number comes about, for feedback


@dataclass(frozen=True)
class Verdict:
    name: str
    right: bool
    message: str


def cpu_tile_arithmetic(shape: ConvShape = ConvShape(), tile: int = 16) -> tuple[Question, ...]:
    _, channels, height, width = shape.output_shape
    halo = tile + shape.kernel - 1
    return (
        Question(
            "TILES_PER_CHANNEL",
            (height // tile) * (width // tile),
            f"{height}/{tile} = {height // tile} tile rows times {width}/{tile} = {width // tile} tile columns",
        ),
        Question(
            "TILE_BYTES",
            tile * tile * FLOAT32_BYTES,
            f"one {tile}x{tile} tile of float32 conv outputs: {tile}*{tile}*{FLOAT32_BYTES} bytes",
        ),
        Question(
            "WHOLE_BYTES",
            channels * height * width * FLOAT32_BYTES,
            f"the unfused intermediate holds every output: {channels}*{height}*{width}*{FLOAT32_BYTES} bytes",
        ),
        Question(
            "HALO_PIXELS",
            halo * halo,
            f"a {tile}x{tile} output tile of a {shape.kernel}x{shape.kernel} convolution reads a "
            f"({tile}+{shape.kernel - 1})x({tile}+{shape.kernel - 1}) window of each input channel",
        ),
    )


def gpu_tile_arithmetic(shape: ConvShape = ConvShape(), tile: int = 16) -> tuple[Question, ...]:
    _, channels, height, width = shape.output_shape
    tiles = (height // tile) * (width // tile)
    return (
        Question("THREADS_PER_BLOCK", tile * tile, f"one thread per output pixel of a {tile}x{tile} tile"),
        Question(
            "BLOCKS",
            shape.batch * channels * tiles,
            f"one thread block per (channel, tile): {channels} channels times {tiles} tiles",
        ),
        Question(
            "SHARED_BYTES",
            2 * tile * tile * FLOAT32_BYTES,
            f"the conv and bias-add intermediates of one tile in shared memory: 2*{tile}*{tile}*{FLOAT32_BYTES} bytes",
        ),
    )


QUESTION_SETS: dict[str, Callable[[], tuple[Question, ...]]] = {
    "cpu-tile-arithmetic": cpu_tile_arithmetic,
    "gpu-tile-arithmetic": gpu_tile_arithmetic,
}


def get_question_set(name: str) -> tuple[Question, ...]:
    try:
        return QUESTION_SETS[name]()
    except KeyError:
        raise KeyError(f"unknown question set {name!r}; known: {', '.join(QUESTION_SETS)}") from None


def mark_answers(set_name: str, values: Mapping[str, object], problems: Mapping[str, str] | None = None) -> tuple[float, list[Verdict]]:
    """The fraction of the set answered right (each question counts the same), and why."""
    problems = problems or {}
    questions = get_question_set(set_name)
    verdicts = []
    for question in questions:
        given = values.get(question.name)
        if question.name in problems:
            verdicts.append(Verdict(question.name, False, f"{question.name}: could not be read ({problems[question.name]})"))
        elif given is None:
            verdicts.append(Verdict(question.name, False, f"{question.name}: no answer (assign a number to {question.name})"))
        elif not _is_number(given):
            verdicts.append(Verdict(question.name, False, f"{question.name}: {given!r} is not a number"))
        elif abs(float(given) - question.expected) <= 1e-9 * max(1, question.expected):
            verdicts.append(Verdict(question.name, True, f"{question.name} = {_show(given)}: right"))
        else:
            verdicts.append(
                Verdict(question.name, False, f"{question.name} = {_show(given)}: not right; {question.explanation} = {question.expected}")
            )
    right = sum(v.right for v in verdicts)
    return right / len(questions), verdicts


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _show(value) -> str:
    number = float(value)
    return str(int(number)) if number.is_integer() else f"{number:g}"
