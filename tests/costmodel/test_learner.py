"""A student's learner is untrusted: each hostile one gets a clear verdict and a zero for its part,
and nothing else is harmed (the grader, the other part, files outside its sandbox)."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.costmodel import grade, space
from autograder.costmodel.learner import LearnerChild, LearnerFailure, LearnerLimits, check_scores

from .conftest import solution_source

pytestmark = pytest.mark.slow

GOOD = solution_source()
ROWS = space.candidates(space.TINY_SHAPE, space.TINY)
SHORT = LearnerLimits(episode_s=3.0, memory_mb=256)


def episode(source: str, limits: LearnerLimits = SHORT) -> np.ndarray:
    """Fit on the first 8 candidates, predict the rest, in one confined child."""
    with LearnerChild(source, ROWS, limits, "a test") as child:
        child.fit(np.arange(8), np.linspace(1.0, 2.0, 8))
        return child.predict(np.arange(8, len(ROWS)))


def failure(source: str, limits: LearnerLimits = SHORT) -> str:
    with pytest.raises(LearnerFailure) as raised:
        episode(source, limits)
    return str(raised.value)


MODEL_RETURNING = """
import numpy as np
def features(candidates):
    return candidates.astype(float)
class Model:
    def fit(self, X, seconds):
        pass
    def predict(self, X):
        return {expression}
"""


def test_a_good_learner_answers_with_one_finite_score_a_candidate():
    scores = episode(GOOD)
    assert scores.shape == (len(ROWS) - 8,) and np.all(np.isfinite(scores))


@pytest.mark.parametrize("expression, said", [
    ("np.full(len(X), np.nan)", "NaN or infinite"),
    ("np.ones(len(X))", "the same score"),
    ("np.ones(3)", "3 scores for 16 candidates"),
    ("np.ones((len(X), 2))", "shape (16, 2)"),
    ("['fast'] * len(X)", "not numbers"),
])
def test_bad_scores_are_refused_saying_what_is_wrong(expression, said):
    assert said in failure(MODEL_RETURNING.format(expression=expression))


def test_the_parent_checks_scores_whatever_the_child_says():
    with pytest.raises(LearnerFailure, match="same score"):
        check_scores([1.0] * 5, 5)
    with pytest.raises(LearnerFailure, match="other than numbers"):
        check_scores([True, False, 1.0], 3)
    with pytest.raises(LearnerFailure, match="2 scores for 3"):
        check_scores([1.0, 2.0], 3)
    assert check_scores([1, 2.5, 3], 3).dtype == np.float64


def test_an_endless_fit_is_stopped_at_its_time_limit():
    source = GOOD.replace("    def fit(self, X, seconds):\n", "    def fit(self, X, seconds):\n        while True:\n            pass\n")
    said = failure(source)
    assert "did not finish" in said and "3 s of CPU time" in said and "in Model.fit" in said


def test_a_sleeping_fit_is_a_hang_too():
    source = "import time\n" + GOOD.replace("    def fit(self, X, seconds):\n", "    def fit(self, X, seconds):\n        time.sleep(3600)\n")
    assert "did not finish" in failure(source, LearnerLimits(episode_s=2.0, memory_mb=256))


def test_a_crash_in_native_code_is_said():
    source = "import ctypes\n" + GOOD.replace("    def predict(self, X):\n", "    def predict(self, X):\n        ctypes.string_at(0)\n")
    assert "killed by SIGSEGV" in failure(source)


def test_memory_past_the_limit_is_refused():
    source = GOOD.replace("    def fit(self, X, seconds):\n", "    def fit(self, X, seconds):\n        self.hog = np.ones(2**28)\n")
    assert "memory" in failure(source)


def test_an_exception_is_quoted_from_the_students_own_lines():
    source = GOOD.replace("    def predict(self, X):\n", "    def predict(self, X):\n        raise ValueError('my bug')\n")
    said = failure(source)
    assert "in Model.predict" in said and "ValueError: my bug" in said and "line " in said


def test_files_outside_the_sandbox_cannot_be_read(tmp_path):
    secret = tmp_path / "variant-secret"
    secret.write_text("the course's secret")
    source = f"open({str(secret)!r}).read()\n" + GOOD
    said = failure(source)
    assert said.startswith("while computing the features") and ("PermissionError" in said or "FileNotFoundError" in said)
    assert "the course's secret" not in said


def test_huge_output_is_cut_and_a_flooded_channel_stops_the_learner():
    printing = GOOD.replace("    def fit(self, X, seconds):\n", "    def fit(self, X, seconds):\n        print('x' * 10**7)\n")
    assert episode(printing).shape == (len(ROWS) - 8,)  # printing is allowed; only a tail is kept
    flooding = "import os, sys\n" + GOOD.replace(
        "    def fit(self, X, seconds):\n",
        "    def fit(self, X, seconds):\n        os.write(int(sys.argv[1]), b'{\"kind\": \"fitted\", \"pad\": \"' + b'x' * 2**22 + b'\"}\\n')\n")
    assert "flooded" in failure(flooding)


def test_a_forged_answer_on_the_channel_is_refused():
    forging = "import os, sys\n" + GOOD.replace(
        "    def fit(self, X, seconds):\n",
        "    def fit(self, X, seconds):\n        os.write(int(sys.argv[1]), b'{\"kind\": \"scores\", \"id\": 2, \"scores\": [1, 2]}\\n')\n")
    assert "forged" in failure(forging)


def test_a_hostile_part_scores_zero_and_the_other_part_is_graded(tiny_table):
    # predict fails in a child whose first fit had 8 candidates (a ranking split's), not 2 (a search's)
    source = "FIRST_FIT = []\n" + GOOD.replace(
        "    def fit(self, X, seconds):\n", "    def fit(self, X, seconds):\n        FIRST_FIT.append(len(seconds))\n").replace(
        "    def predict(self, X):\n", "    def predict(self, X):\n        assert FIRST_FIT[0] < 8, 'too many'\n")
    result = grade.grade_learner(source, tiny_table, seed=3, limits=SHORT, bar=GOOD)
    assert result.parts["ranking"].fraction == 0.0 and "too many" in result.parts["ranking"].lines[0]
    assert result.parts["ranking"].failed and result.parts["ranking"].gist.startswith("learner failed: ")
    assert "too many" in result.parts["ranking"].gist and len(result.parts["ranking"].gist) <= 120
    assert not result.parts["search"].failed
    assert result.parts["search"].fraction is not None and result.parts["search"].fraction > 0.0 or \
        "pending" in result.parts["search"].lines[0]


def test_a_syntax_error_scores_zero_in_both_parts_and_runs_nothing(tiny_table):
    result = grade.grade_learner("def features(:\n", tiny_table, bar=GOOD)
    assert all(p.fraction == 0.0 and "syntax error on line 1" in p.lines[0] for p in result.parts.values())
    assert all(p.failed and p.gist.startswith("answer cell cannot run: syntax error") for p in result.parts.values())


def test_missing_names_are_said():
    assert "does not define class Model" in failure("def features(c):\n    return c\n")
