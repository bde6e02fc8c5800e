"""The preflight (engine/preflight.py, pipeline.preflight): the journal graded confined before
anyone, once per process and setting, and a pass another process of this machine vouches for."""
from __future__ import annotations

import dataclasses

import pytest

from autograder.engine import pipeline
from autograder.engine.config import GraderConfig
from autograder.engine.pipeline import GraderUnusable, PreflightPassed, preflight

pytestmark = pytest.mark.slow

# With 1 MB for the evaluator, not even the grader's own baseline can run: a preflight that
# grades fails, one that does not grade cannot.
STARVED = GraderConfig(evaluate_memory_mb=1)


@pytest.fixture
def fresh_process_state(monkeypatch):
    monkeypatch.setattr(pipeline, "_passed", set())


def test_a_pass_is_for_these_settings_on_this_machine(fresh_process_state):
    passed = preflight(GraderConfig())
    assert passed.key == pipeline._preflight_key(GraderConfig())
    assert passed == preflight(GraderConfig())  # once per process and setting
    with pytest.raises(GraderUnusable, match="cannot grade on this machine"):
        preflight(STARVED)  # other settings: graded again, and here it fails


def test_a_pass_vouched_by_a_process_of_this_machine_with_these_settings_stands_for_this_ones(fresh_process_state):
    """A class run's local workers: the run's own check stage graded the journal with their
    settings, so they do not grade it again."""
    mine = PreflightPassed(pipeline._preflight_key(STARVED), pipeline._this_machine())
    assert preflight(STARVED, vouched=mine) == mine


@pytest.mark.parametrize("elsewhere", [
    lambda vouch: dataclasses.replace(vouch, machine=("another boot", vouch.machine[1])),
    lambda vouch: dataclasses.replace(vouch, machine=(vouch.machine[0], vouch.machine[1] + 1)),
    lambda vouch: dataclasses.replace(vouch, key=pipeline._preflight_key(GraderConfig())),
], ids=["another machine", "another user", "other settings"])
def test_a_pass_from_another_machine_user_or_setting_is_not_taken(fresh_process_state, elsewhere):
    vouch = elsewhere(PreflightPassed(pipeline._preflight_key(STARVED), pipeline._this_machine()))
    with pytest.raises(GraderUnusable, match="cannot grade on this machine"):
        preflight(STARVED, vouched=vouch)
