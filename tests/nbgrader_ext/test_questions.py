"""autograder/nbgrader_ext/questions.py: the tile arithmetic, marked against the instructor's key.

The right values are what the source notebooks' solution cells compute for a student's
variant, not anything in the package students install; the variant-derived numbers below
(instructor-side, in the tests) keep those cells honest, for every variant.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from autograder import nbgrader_ext
from autograder.nbgrader_ext.plan import load_plan
from autograder.nbgrader_ext.questions import QUESTION_SETS, AnswerKeyError, answer_key, get_question_set, keyed_for, mark_answers
from autograder.problems.variants import JOURNAL, VARIANTS, Variant

from bundled_course import source_notebook

RIGHT = {"TILES_PER_CHANNEL": 196, "TILE_BYTES": 1024, "WHOLE_BYTES": 3211264, "HALO_PIXELS": 324}
GPU_RIGHT = {"THREADS_PER_BLOCK": 256, "BLOCKS": 784, "SHARED_BYTES": 3888}
# The GPU design: a block per (4 output channels, tile), whose padded input tile is staged in shared memory.
CHANNELS_PER_BLOCK = 4


def from_variant(variant: Variant = JOURNAL) -> dict[str, dict[str, int]]:
    """The answers, derived from a variant's sizes: what the source notebooks' solutions must compute."""
    shape, rows, cols = variant.shape, variant.tile_rows, variant.tile_cols
    _, channels, height, width = shape.output_shape
    tiles = (height // rows) * (width // cols)
    return {
        "cpu-tile-arithmetic": {
            "TILES_PER_CHANNEL": tiles, "TILE_BYTES": rows * cols * 4,
            "WHOLE_BYTES": channels * height * width * 4,
            "HALO_PIXELS": (rows + shape.kernel - 1) * (cols + shape.kernel - 1),
        },
        "gpu-tile-arithmetic": {
            "THREADS_PER_BLOCK": rows * cols, "BLOCKS": shape.batch * channels // CHANNELS_PER_BLOCK * tiles,
            "SHARED_BYTES": shape.in_channels * (rows + shape.kernel - 1) * (cols + shape.kernel - 1) * 4,
        },
    }


def answer_of(assignment: str):
    plan = load_plan(source_notebook(assignment))
    (answer,) = [a for a in plan.answers.values() if a.kind == "questions"]
    return answer


def key_of(assignment: str, variant: Variant = JOURNAL):
    answer = answer_of(assignment)
    return answer.name, answer.key_for(variant)


def test_the_source_notebooks_solutions_follow_every_variant(assignment):
    answer = answer_of(assignment)
    for variant in (JOURNAL, *VARIANTS):
        key = answer.key_for(variant)
        assert {q.name: q.expected for q in key} == from_variant(variant)[answer.name], variant
        assert all(q.explanation and "{" not in q.explanation for q in key)


def test_no_variant_shares_an_answer_with_the_journal_which_the_lessons_and_quizzes_compute(assignment):
    answer = answer_of(assignment)
    journal = {q.name: q.expected for q in answer.key_for(JOURNAL)}
    for variant in VARIANTS:
        for question in answer.key_for(variant):
            assert question.expected != journal[question.name], (variant, question.name)


def test_explanations_show_the_students_own_numbers():
    variant = Variant(height=192, width=256, out_channels=12, tile_rows=16, tile_cols=32)
    explained = {q.name: q.explanation for q in key_of("tiling", variant)[1]}
    assert "192/16 tile rows times 256/32 tile columns" in explained["TILES_PER_CHANNEL"]
    assert "12*192*256*4" in explained["WHOLE_BYTES"]


def test_a_key_naming_no_constant_or_a_solution_that_cannot_compute_is_refused():
    plain = answer_key("gpu-tile-arithmetic", {n: {"explanation": "x"} for n in GPU_RIGHT})
    braces = answer_key("gpu-tile-arithmetic", {n: {"explanation": "{DEPTH} deep"} for n in GPU_RIGHT})
    with pytest.raises(AnswerKeyError, match="DEPTH"):
        keyed_for(braces, "THREADS_PER_BLOCK = 1\nBLOCKS = 2\nSHARED_BYTES = 3", JOURNAL.constants())
    with pytest.raises(AnswerKeyError, match="cannot give BLOCKS"):
        keyed_for(plain, "THREADS_PER_BLOCK = 1\nBLOCKS = DEPTH\nSHARED_BYTES = 3", JOURNAL.constants())


def test_journal_answers_match_the_fusion_check_of_the_journal_schedule():
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
            # As a number of its own: a measurement such as 1.324 is not the answer 324.
            found = re.search(rf"(?<![\w.]){number}(?!\w|\.\d)", text)
            assert not found, (number, text[max(0, found.start() - 80):found.end() + 80])


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
        ({}, {"TILES_PER_CHANNEL": "line 1: it calls f()"}, "unread (line 1: it calls f())"),
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
        ({"TILES_PER_CHANNEL": {"explanation": "x"}}, "missing"),
        ({n: {"explanation": "x"} for n in [*RIGHT, "EXTRA"]}, "not in the set: \\['EXTRA'\\]"),
        ({n: {"expected": 196, "explanation": "x"} for n in RIGHT}, "the value comes from the solution cell"),
        ({n: {"explanation": 7} for n in RIGHT}, "must be"),
        ({n: {"explanation": " "} for n in RIGHT}, "must be"),
        ({n: "x" for n in RIGHT}, "must be"),
    ],
)
def test_a_malformed_answer_key_is_refused(key, says):
    with pytest.raises(AnswerKeyError, match=says):
        answer_key("cpu-tile-arithmetic", key)


def test_unknown_set_names_the_known_ones():
    with pytest.raises(KeyError, match="cpu-tile-arithmetic"):
        get_question_set("nope")
    assert set(QUESTION_SETS) == {"cpu-tile-arithmetic", "gpu-tile-arithmetic"}
