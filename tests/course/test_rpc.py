"""Grading through TVM's RPC tracker: a real tracker and CPU server on 127.0.0.1.

The GPU problem is measured this way from an instructor machine without a GPU; here the CPU
problem proves the path end to end: tracker request, export, upload, remote load, remote runs.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from autograder.engine.config import GraderConfig
from autograder.course.course_dir import CourseError
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.course.scratch_course import copy_course, release_assignment, submit_samples
from autograder.course.workers import kill_tree
from autograder.examples import source as example_source
from autograder.engine.pipeline import grade_source

from .conftest import COURSE, REPO

pytestmark = pytest.mark.slow
KEY = "cpu"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def tracker(tmp_path_factory):
    """HOST:PORT of a tracker with one CPU server registered under KEY; both stopped afterwards."""
    logs = tmp_path_factory.mktemp("rpc")
    port, server_port = free_port(), free_port()
    python = [sys.executable, "-m"]
    started = [
        subprocess.Popen(python + ["tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port), "--port-end", str(port + 1)],
                         stdout=open(logs / "tracker.log", "w"), stderr=subprocess.STDOUT)
    ]
    try:
        address = f"127.0.0.1:{port}"
        _wait_for(lambda: _reachable(port), 60, "the tracker to listen", logs / "tracker.log")
        started.append(
            subprocess.Popen(python + ["tvm.exec.rpc_server", "--tracker", address, "--key", KEY, "--host", "127.0.0.1",
                                       "--port", str(server_port), "--port-end", str(server_port + 1)],
                             stdout=open(logs / "server.log", "w"), stderr=subprocess.STDOUT)
        )
        _wait_for(lambda: _free_servers(port) > 0, 60, "the server to register", logs / "server.log")
        yield address
    finally:
        for process in reversed(started):
            kill_tree(process.pid)  # the server's popen_worker children too


def _reachable(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False


def _free_servers(port: int) -> int:
    from tvm import rpc

    return rpc.connect_tracker("127.0.0.1", port).summary().get("queue_info", {}).get(KEY, {}).get("free", 0)


def _wait_for(condition, seconds: float, what: str, log) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"timed out waiting for {what}:\n{log.read_text()[-2000:]}")


def test_a_schedule_is_run_and_timed_on_the_remote_device(tracker):
    config = GraderConfig(rpc_tracker=tracker, rpc_key=KEY, timing_rounds=3, min_repeat_ms=5.0)
    result = grade_source("tile-fused-conv", example_source("journal"), config)
    assert result.status == "passed" and result.correct and result.speedup is not None
    assert f"ran on RPC device '{KEY}' via {tracker}" in result.messages


def test_the_grading_run_measures_through_the_tracker(tracker, tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "tiling")
    submit_samples(root, "tiling", only=["ben"])
    command = [sys.executable, "-m", "autograder.cli", "grade", "tiling", "--course", str(root), "--workers", "1",
               "--rpc", tracker, "--key", KEY, "--timing-rounds", "3", "--min-repeat-ms", "5"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stderr
    graded = json.loads((root / "autograded" / "ben" / "tiling" / "tiling.ipynb").read_text())
    result = graded["metadata"]["tvm_course"]["results"]["schedule"]
    assert result["status"] == "passed" and f"ran on RPC device '{KEY}' via {tracker}" in result["messages"]


def test_a_wrong_key_or_an_unreachable_tracker_stops_the_run_before_grading(tracker, tmp_path):
    root = copy_course(COURSE, tmp_path / "course")
    with pytest.raises(CourseError, match="no device with key 'h100'"):
        grade_assignment(GradingOptions("tiling", course=root, grader_settings={"rpc_tracker": tracker, "rpc_key": "h100"}, progress=None))
    with pytest.raises(CourseError, match="cannot reach the RPC tracker"):
        grade_assignment(GradingOptions("tiling", course=root, grader_settings={"rpc_tracker": f"127.0.0.1:{free_port()}", "rpc_key": KEY}, progress=None))
