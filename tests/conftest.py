"""Shared test settings: GPU tests skip where there is no GPU, and grading runs short."""
from __future__ import annotations

import functools

import pytest


@functools.lru_cache(maxsize=1)
def _gpu_present() -> bool:
    from autograder.engine.runners import gpu_present

    return gpu_present()


def pytest_collection_modifyitems(config, items):
    if any("gpu" in item.keywords for item in items) and not _gpu_present():
        skip = pytest.mark.skip(reason="needs a CUDA GPU: tvm.cuda(0).exist is False on this machine")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def fast_config():
    """Grader settings for tests: fewer timing rounds, short limits for hostile code."""
    from autograder.engine.config import GraderConfig

    return GraderConfig(timing_rounds=5, min_repeat_ms=5.0, student_timeout_s=3.0)
