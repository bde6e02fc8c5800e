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
