"""Fixtures for the lesson package's tests: TVM started on one thread, the course workload."""
from __future__ import annotations

import pytest

import autograder.lessons  # noqa: F401  sets TVM_NUM_THREADS=1 before any test starts TVM's thread pool
from autograder.problems.workload import ConvShape

# Small enough to compile and run in well under a second; every dimension still exercises padding.
SMALL = ConvShape(batch=1, in_channels=2, height=8, width=8, out_channels=4, kernel=3, padding=1)


@pytest.fixture(scope="session")
def lab():
    from autograder.lessons import session

    return session.start()


@pytest.fixture(scope="session")
def fused_func(lab):
    """The course's fused Conv2d + Add + ReLU at full size (building it compiles nothing)."""
    from autograder.problems.workload import fused_primfunc

    return fused_primfunc()


@pytest.fixture(scope="session")
def small_func(lab):
    from autograder.problems.workload import fused_primfunc

    return fused_primfunc(SMALL)


def classifier_head():
    """The classifier head lessons 1 and 2 build in a cell, relu(x @ w + b), fused by the same passes."""
    from tvm import relax

    from autograder.lessons.cost_model import HEAD_NAME
    from autograder.problems.workload import fused

    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((64, 512), "float32"))
    w = relax.Var("w", relax.TensorType((512, 256), "float32"))
    b = relax.Var("b", relax.TensorType((1, 256), "float32"))
    with builder.function("main", [x, w, b]):
        with builder.dataflow():
            out = builder.emit_output(relax.op.nn.relu(relax.op.add(relax.op.matmul(x, w), b)))
        builder.emit_func_output(out)
    return fused(builder.get())[HEAD_NAME].with_attr("global_symbol", "main")
