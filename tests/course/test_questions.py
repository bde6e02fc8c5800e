"""autograder/nbgrader_ext/questions.py: the tile arithmetic, derived from the problem's shape."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.nbgrader_ext.questions import QUESTION_SETS, cpu_tile_arithmetic, get_question_set, mark_answers
from autograder.problems.workload import ConvShape

RIGHT = {"TILES_PER_CHANNEL": 196, "TILE_BYTES": 1024, "WHOLE_BYTES": 3211264, "HALO_PIXELS": 324}


def test_cpu_answers_match_the_fusion_check_of_the_journal_schedule():
    # The grader's fusion message for the journal's tiling says "1.0 KiB per tile (whole tensor 3.1 MiB)".
    expected = {q.name: q.expected for q in get_question_set("cpu-tile-arithmetic")}
    assert expected == RIGHT
    assert expected["TILE_BYTES"] == 1024 and round(expected["WHOLE_BYTES"] / 2**20, 1) == 3.1


def test_gpu_answers():
    expected = {q.name: q.expected for q in get_question_set("gpu-tile-arithmetic")}
    assert expected == {"THREADS_PER_BLOCK": 256, "BLOCKS": 3136, "SHARED_BYTES": 2048}


def test_answers_follow_the_shape():
    expected = {q.name: q.expected for q in cpu_tile_arithmetic(ConvShape(height=64, width=32, out_channels=8), tile=8)}
    assert expected == {"TILES_PER_CHANNEL": 32, "TILE_BYTES": 256, "WHOLE_BYTES": 8 * 64 * 32 * 4, "HALO_PIXELS": 100}


def test_marking_gives_one_share_per_right_answer_and_explains_wrong_ones():
    answers = dict(RIGHT, TILE_BYTES=256, HALO_PIXELS=np.int64(324))
    fraction, verdicts = mark_answers("cpu-tile-arithmetic", answers)
    assert fraction == 0.75
    wrong = [v for v in verdicts if not v.right]
    assert [v.name for v in wrong] == ["TILE_BYTES"]
    assert "= 1024" in wrong[0].message


@pytest.mark.parametrize(
    "answers, problems, says",
    [({}, {}, "no answer"), ({"TILES_PER_CHANNEL": "196"}, {}, "not a number"), ({}, {"TILES_PER_CHANNEL": "it calls f()"}, "could not be read")],
)
def test_missing_or_unreadable_answers_score_nothing(answers, problems, says):
    fraction, verdicts = mark_answers("cpu-tile-arithmetic", answers, problems)
    assert fraction == 0.0
    assert says in verdicts[0].message


def test_unknown_set_names_the_known_ones():
    with pytest.raises(KeyError, match="cpu-tile-arithmetic"):
        get_question_set("nope")
    assert set(QUESTION_SETS) == {"cpu-tile-arithmetic", "gpu-tile-arithmetic"}
