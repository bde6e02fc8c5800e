"""Shared test settings: GPU tests skip where there is no GPU, grading runs short, and each lesson
notebook is executed once per test run, under its own CPU, for every test that reads it."""
from __future__ import annotations

import functools
import os
import platform
import shutil
import tempfile

import pytest

from bundled_course import ASSIGNMENTS, source_notebook
from device_state import opencl_device

# The CPU each lesson runs for in a test run (autograder.site.executed reads it): lesson 1 for this
# machine's own, lesson 2 for an SSE-only x86 (no FMA, no AVX: what the lessons' claims must also
# hold on). tests/lessons and the site build (tests/site) then read the same executed notebooks.
LESSON_MCPU = "02-tiling-trace=x86-64-v2" if platform.machine().lower() in ("x86_64", "amd64") else ""
_made_cache: list[str] = []


# The CPUs this test process may run on, and that everything it starts inherits: a test that left
# it bound to fewer (TVM's thread pool binds the thread that starts it, engine/threads.py) would
# run the rest of the suite's class runs, kernels and browsers on them. A trial run of the suite
# spent half its time on one core of two that way.
CPUS = os.sched_getaffinity(0)


def pytest_configure(config):
    # Tests that run TVM in this process start its pool here: unbound, as the course's own processes.
    os.environ.setdefault("TVM_BIND_THREADS", "0")
    # One cache for this run, unless the developer chose one (then runs are reused across sessions).
    if not os.environ.get("TVM_COURSE_CACHE"):
        _made_cache.append(tempfile.mkdtemp(prefix="tvm-course-test-cache-"))
        os.environ["TVM_COURSE_CACHE"] = _made_cache[0]
    os.environ.setdefault("TVM_COURSE_LESSON_MCPU", LESSON_MCPU)


def pytest_unconfigure(config):
    for folder in _made_cache:
        shutil.rmtree(folder, ignore_errors=True)


@functools.lru_cache(maxsize=1)
def _gpu_present() -> bool:
    from autograder.engine.runners import gpu_present

    return gpu_present()


# `make test` runs the tests marked `alone` in a phase of their own, collecting only the files
# that say `mark.alone` (collecting all of the suite again costs some 20 s on 2 cores). A test
# marked so any other way would run in neither phase: it loses the mark, so that the first
# phase keeps it, and fails there saying why (a usage error would not reach the terminal from
# an xdist worker).
ALONE_MARK = "mark.alone"


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by mark
def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("alone") and ALONE_MARK not in item.path.read_text(encoding="utf-8"):
            for node in item.listchain():
                node.own_markers[:] = [mark for mark in node.own_markers if mark.name != "alone"]
            item.runtest = functools.partial(pytest.fail, (
                f"{item.nodeid} is marked `alone` in a way its file does not say ({ALONE_MARK!r}): `make test`'s second "
                "phase, which collects only the files that say it, would never run it; mark it with "
                "@pytest.mark.alone or pytestmark = pytest.mark.alone in the file itself"), pytrace=False)
    if any("gpu" in item.keywords for item in items) and not _gpu_present():
        skip = pytest.mark.skip(reason="needs a CUDA GPU: tvm.cuda(0).exist is False on this machine")
        for item in items:
            if "gpu" in item.keywords:
                item.add_marker(skip)
    if any("opencl" in item.keywords for item in items) and opencl_device()[1]:
        skip = pytest.mark.skip(reason=f"needs an OpenCL device that builds kernels: {opencl_device()[1][:600]}")
        for item in items:
            if "opencl" in item.keywords:
                item.add_marker(skip)


@pytest.fixture(autouse=True)
def _keeps_its_cpus(request):
    yield
    now = os.sched_getaffinity(0)
    if now != CPUS:
        os.sched_setaffinity(0, CPUS)  # the rest of the run keeps its CPUs
        pytest.fail(f"{request.node.nodeid} left the test process bound to CPUs {sorted(now)} of {sorted(CPUS)}: everything "
                    "the suite starts after would inherit that (run TVM with engine.threads.tvm_thread_env)", pytrace=False)


@pytest.fixture
def native_opencl():
    """For a test of how a native OpenCL compiler (PoCL) runs kernels (work-items in order, a stray
    write a real fault): skips, saying why, where the device a grading uses is a simulator."""
    device, missing = opencl_device()
    if missing or "oclgrind" in device.lower():
        pytest.skip(f"needs a native OpenCL CPU device (PoCL); a grading here uses {device or 'none'}")
    return device


@pytest.fixture(params=ASSIGNMENTS)
def assignment(request) -> str:
    """Each of the bundled course's assignments in turn (tests/course and tests/nbgrader_ext)."""
    return request.param


@pytest.fixture
def notebook(assignment):
    """The assignment's source notebook, as nbformat reads it."""
    import nbformat

    return nbformat.read(source_notebook(assignment), as_version=4)


@pytest.fixture(scope="session")
def fast_config():
    """Grader settings for tests: fewer timing rounds, short limits for hostile code."""
    from autograder.engine.config import GraderConfig

    return GraderConfig(timing_rounds=5, min_repeat_ms=5.0, student_timeout_s=3.0)


@pytest.fixture(scope="session")
def browser():
    """One real headless Chromium for the whole run, shared by the site's and the hub's browser
    tests: Playwright's sync API runs one instance a process (a second, opened while the first
    lives, fails). Skips saying why where Chromium or Playwright is missing."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent / "site"))
    from site_test_course import launched_chromium

    yield from launched_chromium()

