"""autograder/nbgrader_ext/questions.py: the tile arithmetic, marked against the instructor's key.

The right values live in the source notebooks' metadata, not in the package students install;
the shape-derived numbers below (instructor-side, in the tests) keep that key honest.
"""
from __future__ import annotations

import numpy as np
import pytest

from autograder import nbgrader_ext
from autograder.nbgrader_ext.plan import load_plan
from autograder.nbgrader_ext.questions import QUESTION_SETS, AnswerKeyError, answer_key, get_question_set, mark_answers
from autograder.problems.workload import ConvShape

from .conftest import source_notebook

RIGHT = {"TILES_PER_CHANNEL": 196, "TILE_BYTES": 1024, "WHOLE_BYTES": 3211264, "HALO_PIXELS": 324}
GPU_RIGHT = {"THREADS_PER_BLOCK": 256, "BLOCKS": 3136, "SHARED_BYTES": 2048}


def from_shape(shape: ConvShape = ConvShape(), tile: int = 16) -> dict[str, dict[str, int]]:
    """The answers, derived from the problems' shape: what the source notebooks' keys must say."""
    _, channels, height, width = shape.output_shape
    tiles = (height // tile) * (width // tile)
    halo = tile + shape.kernel - 1
    return {
        "cpu-tile-arithmetic": {
            "TILES_PER_CHANNEL": tiles, "TILE_BYTES": tile * tile * 4,
            "WHOLE_BYTES": channels * height * width * 4, "HALO_PIXELS": halo * halo,
        },
        "gpu-tile-arithmetic": {"THREADS_PER_BLOCK": tile * tile, "BLOCKS": shape.batch * channels * tiles, "SHARED_BYTES": 2 * tile * tile * 4},
    }


def key_of(assignment: str):
    plan = load_plan(source_notebook(assignment))
    (answer,) = [a for a in plan.answers.values() if a.kind == "questions"]
    return answer.name, answer.key


def test_the_source_notebooks_keys_follow_the_problems_shape(assignment):
    set_name, key = key_of(assignment)
    assert {q.name: q.expected for q in key} == from_shape()[set_name]
    assert all(q.explanation for q in key)


def test_cpu_answers_match_the_fusion_check_of_the_journal_schedule():
    # The grader's fusion message for the journal's tiling says "1.0 KiB per tile (whole tensor 3.1 MiB)".
    _, key = key_of("tiling")
    expected = {q.name: q.expected for q in key}
    assert expected == RIGHT and round(expected["WHOLE_BYTES"] / 2**20, 1) == 3.1
    assert {q.name: q.expected for q in key_of("gpu-tiling")[1]} == GPU_RIGHT


def test_the_package_students_install_holds_no_answers():
    # get_question_set is public (the notebook's format check uses it): it names the variables only.
    for set_name in QUESTION_SETS:
        for question in get_question_set(set_name):
            assert set(vars(question)) == {"name"}
    # Nor does any module of the package spell the key out.
    package = __import__("pathlib").Path(nbgrader_ext.__file__).parents[1]
    text = "\n".join(p.read_text(encoding="utf-8") for p in package.rglob("*.py"))
    for number in (*RIGHT.values(), *GPU_RIGHT.values()):
        if number not in (1024, 256, 2048):  # too common to mean anything
            assert str(number) not in text, number


def test_marking_gives_one_share_per_right_answer_and_explains_wrong_ones():
    _, key = key_of("tiling")
    answers = dict(RIGHT, TILE_BYTES=256, HALO_PIXELS=np.int64(324))
    fraction, verdicts = mark_answers(key, answers)
    assert fraction == 0.75
    wrong = [v for v in verdicts if not v.right]
    assert [v.name for v in wrong] == ["TILE_BYTES"]
    assert "16*16*4 bytes = 1024" in wrong[0].message


@pytest.mark.parametrize(
    "answers, problems, says",
    [
        ({}, {}, "no answer"),
        ({"TILES_PER_CHANNEL": "196"}, {}, "not a number"),
        ({}, {"TILES_PER_CHANNEL": "it calls f()"}, "could not be read"),
        ({"TILES_PER_CHANNEL": 10**400}, {}, "not right"),
    ],
)
def test_missing_or_unreadable_answers_score_nothing(answers, problems, says):
    fraction, verdicts = mark_answers(key_of("tiling")[1], answers, problems)
    assert fraction == 0.0
    assert says in verdicts[0].message


@pytest.mark.parametrize(
    "key, says",
    [
        (None, "needs an answer key"),
        ({"TILES_PER_CHANNEL": {"expected": 196, "explanation": "x"}}, "missing"),
        ({n: {"expected": 1, "explanation": "x"} for n in [*RIGHT, "EXTRA"]}, "not in the set: \\['EXTRA'\\]"),
        ({n: {"expected": "196", "explanation": "x"} for n in RIGHT}, "must be"),
        ({n: {"expected": True, "explanation": "x"} for n in RIGHT}, "must be"),
        ({n: {"expected": 1} for n in RIGHT}, "must be"),
    ],
)
def test_a_malformed_answer_key_is_refused(key, says):
    with pytest.raises(AnswerKeyError, match=says):
        answer_key("cpu-tile-arithmetic", key)


def test_unknown_set_names_the_known_ones():
    with pytest.raises(KeyError, match="cpu-tile-arithmetic"):
        get_question_set("nope")
    assert set(QUESTION_SETS) == {"cpu-tile-arithmetic", "gpu-tile-arithmetic"}
