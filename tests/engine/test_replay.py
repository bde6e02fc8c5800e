"""replay.py: a trace survives JSON and replays to the same program; replay checks the schema too."""
from __future__ import annotations

import json

import pytest

from autograder import examples
from autograder.engine.trace_schema import TraceRejected, validate_trace


def inst(kind, inputs=(), attrs=(), outputs=()):
    return [kind, list(inputs), list(attrs), list(outputs)]


def journal_trace():
    from tvm import s_tir

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import trace_to_json

    schedule = s_tir.Schedule(fused_primfunc())
    namespace: dict = {}
    exec(examples.source("journal"), namespace)
    namespace["schedule"](schedule)
    return schedule, trace_to_json(schedule.trace)


def test_a_trace_survives_json_and_replays_to_the_same_program():
    import tvm

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import replay

    original, trace = journal_trace()
    trace = json.loads(json.dumps(trace))  # what travels between processes
    validate_trace(trace)
    replayed = replay(fused_primfunc(), trace)
    tvm.ir.assert_structural_equal(replayed.mod["main"], original.mod["main"])


def test_a_trace_naming_a_missing_block_fails_to_replay_with_tvms_reason():
    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import replay

    trace = [[inst("GetSBlock", [], ["conv2d_nhwc", "main"], ["b0"])], []]
    validate_trace(trace)
    with pytest.raises(Exception, match="conv2d_nhwc"):
        replay(fused_primfunc(), trace)


def test_every_example_schedule_trace_passes_the_schema():
    from tvm import s_tir

    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import trace_to_json

    for name in examples.names():
        schedule = s_tir.Schedule(fused_primfunc())
        namespace: dict = {}
        exec(examples.source(name), namespace)
        namespace["schedule"](schedule)
        validate_trace(json.loads(json.dumps(trace_to_json(schedule.trace))), "cuda" if name.startswith("gpu") else "cpu")


def test_replay_itself_refuses_a_trace_the_schema_rejects():
    from autograder.problems.workload import fused_primfunc
    from autograder.engine.replay import replay

    payload = '{"root_index": 0, "nodes": [{"type": "None"}]}'
    with pytest.raises(TraceRejected, match="annotate"):
        replay(fused_primfunc(), [[inst("GetSBlock", [], ["compute", "main"], ["b0"]),
                                   inst("Annotate", ["b0", payload], ["pragma_auto_unroll_max_step"])], []])
