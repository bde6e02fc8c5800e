"""placement.py: each round runs at a stack position of its own, every alignment class alike."""
from __future__ import annotations

import json
import statistics

import pytest

import solutions
from autograder.engine import placement


def _stack_pointer() -> int:
    """The stack pointer this thread's next system call sees (as the kernel reports it)."""
    with open("/proc/thread-self/syscall") as handle:
        return int(handle.read().split()[-2], 16)


def test_each_step_lowers_the_stack_by_its_own_amount_across_every_alignment_and_a_page():
    shifter = placement.StackShifter()
    for _ in range(16):  # warmed, as stack_offsets warms its own (see there)
        shifter.call(0, _stack_pointer)
    pointers = [shifter.call(step, _stack_pointer) for step in range(placement.STACK_STEPS)]
    assert max(pointers) - min(pointers) >= 4096  # a whole page of offsets
    assert {(pointers[0] - p) % placement.ALIGNMENT for p in pointers} == set(range(0, placement.ALIGNMENT, 16))
    offsets = placement.stack_offsets()  # what the grader groups rounds by: the same differences
    assert [offsets[step] for step in range(placement.STACK_STEPS)] == [pointers[0] - p for p in pointers]


def test_a_shifted_call_returns_what_the_function_returns_and_raises_what_it_raises():
    shifter = placement.StackShifter()
    assert shifter.call(7, lambda: "value") == "value"
    with pytest.raises(ZeroDivisionError):
        shifter.call(12, lambda: 1 / 0)
    assert shifter.call(0, lambda: 3) == 3  # and it is usable again afterwards


def test_the_rounds_visit_every_alignment_class_once_a_cycle_drawn_from_the_seed():
    offsets = placement.stack_offsets()
    steps = placement.draw(11, 44, offsets)
    classes = [offsets[step] % placement.ALIGNMENT // 16 for step in steps]
    for start in range(0, 44, placement.CYCLE):
        assert sorted(classes[start:start + placement.CYCLE]) == list(range(placement.CYCLE))
    assert placement.draw(11, 44, offsets) == steps and placement.draw(12, 44, offsets) != steps
    assert len(set(steps)) > placement.CYCLE  # within a class, the steps vary too (offsets within the page)
    unbalanced = placement.draw(11, 44, None)  # the offsets unknown: drawn uniformly
    assert len(unbalanced) == 44 and all(0 <= step < placement.STACK_STEPS for step in unbalanced)


@pytest.mark.parametrize("text", ["64", "-1", "1,2,x", ",".join(["1"] * 46)])
def test_stack_steps_sent_to_the_runner_are_checked(text):
    with pytest.raises(ValueError):
        placement.parse(text, 45)
    assert placement.parse("0,63,5", 45) == [0, 63, 5] and placement.parse("", 45) == []


@pytest.mark.slow
def test_a_timed_grading_records_where_each_round_ran_and_its_ratio(fast_config):
    """Each round at a stack position of its own, in whole cycles of the stack's alignment
    classes, and the speed the median of the rounds' ratios, recorded in the Result."""
    from autograder.engine.pipeline import grade_source
    from autograder.engine.report import Result

    result = grade_source("tile-fused-conv", solutions.source("blocked_vectorized"), fast_config)
    against = result.yardstick_spread
    rounds = against["placements"]
    assert len(rounds) == against["n"] and against["n"] % placement.CYCLE == 0
    assert all(r["kind"] == "stack" and 0 <= r["step"] < placement.STACK_STEPS for r in rounds)
    offsets = placement.stack_offsets()
    for start in range(0, len(rounds), placement.CYCLE):
        cycle = rounds[start:start + placement.CYCLE]
        assert sorted(offsets[r["step"]] % placement.ALIGNMENT for r in cycle) == [0, 16, 32, 48]
    assert statistics.median(r["ratio"] for r in rounds) == pytest.approx(against["median"])
    assert f"at {len({r['step'] for r in rounds})} stack positions" in result.check("speed").message
    assert Result.from_dict(json.loads(result.to_json())).yardstick_spread["placements"] == rounds
