"""Fixtures for the quiz tests: the course's quizzes, and a small quiz with every hashed type."""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
COURSE_QUIZZES = sorted((REPO / "quizzes").glob("*.yaml"))

# One question of each type that checks from hashes; line numbers matter to some tests.
SAMPLE_QUIZ = """\
id: sample
title: Sample quiz
lesson: two-levels
questions:
  - id: pick-one
    type: single
    prompt: Which is right?
    choices:
      - text: wrong one
        feedback: one is not it
      - text: right one
        correct: true
      - text: wrong two
        feedback: two is not it either
    explanation: the right one is right
  - id: pick-many
    type: multiple
    prompt: Which are right?
    choices:
      - text: yes A
        correct: true
      - text: no B
        feedback: B is a distractor
      - text: yes C
        correct: true
    feedback: some are right, some are not
    explanation: A and C
  - id: count
    type: numeric
    prompt: How many?
    answer: 14
    unit: tiles
    mistakes:
      - answer: 196
        feedback: that is both axes
    feedback: divide the extent by the factor
    explanation: 224 / 16
  - id: ratio
    type: numeric
    prompt: What ratio?
    answer: 2.5
    tolerance: 0.1
    feedback: old over new
    explanation: about two and a half
  - id: name
    type: text
    prompt: Which primitive?
    accept: [compute_at]
    patterns: ["(sch\\\\.)?compute_at(\\\\(\\\\))?"]
    mistakes:
      - answer: reverse_compute_at
        feedback: that moves a consumer
    feedback: think of the mirror image
    explanation: compute_at moves a producer
  - id: order
    type: ordering
    prompt: Put in order
    items: [first, second, third, fourth]
    feedback: what needs what
    explanation: first, second, third, fourth
"""

SAMPLE_KEY = {
    "pick-one": "b",
    "pick-many": ["a", "c"],
    "count": 14,
    "ratio": 2.5,
    "name": "compute_at",
}


@pytest.fixture
def sample_quiz_file(tmp_path: Path) -> Path:
    path = tmp_path / "sample.yaml"
    path.write_text(SAMPLE_QUIZ, encoding="utf-8")
    return path


@pytest.fixture
def write_file(tmp_path: Path):
    """Write text to a file under tmp_path and return its path."""

    def write(name: str, text: str) -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path

    return write
