"""Grading through TVM's RPC tracker: a real tracker and CPU server on 127.0.0.1.

The GPU problem is measured this way from an instructor machine without a GPU; here the CPU
problem proves the path end to end: tracker request, export, upload, remote load, remote runs.
"""
from __future__ import annotations

import csv
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from autograder.engine.config import GraderConfig
from autograder.course.course_dir import CourseError
from autograder.course.grading_run import GradingOptions, grade_assignment
from autograder.rehearsal.scratch_course import copy_course, release_assignment, submit_samples
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


@pytest.mark.opencl
def test_pending_gpu_grades_wait_for_a_cuda_device_and_a_cpu_server_is_refused(tracker, tmp_path):
    """gpu-tiling graded here (no GPU): correctness and fusion are graded from the kernels run on
    the OpenCL device, the speed is left pending: shown as pending in the feedback, kept out of
    every export as a number, not regraded by a run that still has no GPU, and a run pointed at
    the CPU server is refused before it grades anything."""
    from autograder.course.course_dir import course_directory, load_course_config
    from autograder.lms.export import export_grades

    root = copy_course(COURSE, tmp_path / "course")
    release_assignment(root, "gpu-tiling", students=["ada"])
    submit_samples(root, "gpu-tiling", only=["ada"])
    first = grade_assignment(GradingOptions("gpu-tiling", course=root, workers=1, progress=None))
    (ada,) = first.rows
    assert ada.status == "pending" and ada.schedule == "needs-gpu"
    assert ada.parts["correctness"] == 4.0 and ada.parts["fusion"] == 3.0 and ada.parts["speed"] is None
    assert any("a later run that has a GPU grades them without --force" in w for w in first.warnings)

    html = (root / "feedback" / "ada" / "gpu-tiling" / "gpu-tiling.html").read_text(encoding="utf-8")
    assert "Score: pending / 3.0" in html and "points pending: not graded yet" in html, html[-3000:]
    assert "correct on an OpenCL device" in html and "Score: 0.0 / 3.0" not in html

    exported = subprocess.run([str(Path(sys.executable).parent / "nbgrader"), "export", "--to", str(tmp_path / "nbgrader.csv")],
                              cwd=root, capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    (row,) = csv.DictReader(open(tmp_path / "nbgrader.csv", newline=""))
    assert row["score"] == "" and row["raw_score"] == "" and float(row["pending"]) == 3  # not "10.0", which reads as a real 10
    coursedir = course_directory(load_course_config(root))
    report = export_grades(coursedir, "gpu-tiling", "csv", tmp_path / "grades.csv")
    assert report.scored == 0 and "pending: speed" in report.empty
    (ours,) = csv.DictReader(open(tmp_path / "grades.csv", newline=""))
    assert ours["score"] == "" and ours["status"] == "pending: speed"

    again = grade_assignment(GradingOptions("gpu-tiling", course=root, workers=1, progress=None))
    assert again.graded == [] and again.decisions["ada"].reason == "pending-gpu" and "--rpc" in again.decisions["ada"].detail
    graded = root / "autograded" / "ada" / "gpu-tiling" / "gpu-tiling.ipynb"
    before = graded.read_bytes()
    with pytest.raises(CourseError, match=f"refusing to grade gpu-fused-conv on the RPC device '{KEY}'.*not a CUDA device"):
        grade_assignment(GradingOptions("gpu-tiling", course=root, workers=1, progress=None,
                                        grader_settings={"rpc_tracker": tracker, "rpc_key": KEY}))
    assert graded.read_bytes() == before  # nothing was graded


def test_the_devices_architecture_must_be_the_one_compiled_for(monkeypatch):
    """No CUDA device is here to say its architecture: what one says is given to the check."""
    from autograder.course import grading_run
    from autograder.engine import runners

    a100 = runners.RemoteDevice("RPC device 'a100' via gpu-host:9190", True, True, arch="sm_80", name="NVIDIA A100-SXM4-80GB")
    monkeypatch.setattr(runners, "probe_device", lambda tracker, key: a100)
    with pytest.raises(CourseError, match="is sm_80 .*NVIDIA A100.*compiled for sm_90: pass --cuda-arch sm_80"):
        grading_run._check_rpc_device("gpu-host:9190", "a100", ["gpu-fused-conv"], "sm_90")
    assert "NVIDIA A100" in grading_run._check_rpc_device("gpu-host:9190", "a100", ["gpu-fused-conv"], "sm_80")
    assert grading_run._check_rpc_device("gpu-host:9190", "a100", [], "sm_90") is None  # a CPU assignment: its CPU will do


def test_the_probe_says_what_a_real_cpu_server_is(tracker):
    from autograder.engine.runners import probe_device

    device = probe_device(tracker, KEY)
    assert device.cpu and not device.cuda and device.problem and device.where == f"RPC device '{KEY}' via {tracker}"


@pytest.mark.gpu
def test_pending_gpu_grades_are_graded_by_the_next_run_with_a_cuda_rpc_device(tmp_path):
    """Where there is a GPU: graded first with the GPU hidden (pending), then through a tracker and
    a server that sees it, without --force."""
    logs = tmp_path / "rpc"
    logs.mkdir()
    port, server_port = free_port(), free_port()
    python = [sys.executable, "-m"]
    started = [subprocess.Popen(python + ["tvm.exec.rpc_tracker", "--host", "127.0.0.1", "--port", str(port), "--port-end", str(port + 1)],
                                stdout=open(logs / "tracker.log", "w"), stderr=subprocess.STDOUT)]
    try:
        _wait_for(lambda: _reachable(port), 60, "the tracker to listen", logs / "tracker.log")
        started.append(subprocess.Popen(python + ["tvm.exec.rpc_server", "--tracker", f"127.0.0.1:{port}", "--key", "gpu",
                                                  "--host", "127.0.0.1", "--port", str(server_port), "--port-end", str(server_port + 1)],
                                        stdout=open(logs / "server.log", "w"), stderr=subprocess.STDOUT))
        root = copy_course(COURSE, tmp_path / "course")
        release_assignment(root, "gpu-tiling", students=["ada"])
        submit_samples(root, "gpu-tiling", only=["ada"])
        hidden = {**os.environ, "CUDA_VISIBLE_DEVICES": ""}
        command = [sys.executable, "-m", "autograder.cli", "grade", "gpu-tiling", "--course", str(root), "--workers", "1"]
        first = subprocess.run(command, capture_output=True, text=True, cwd=REPO, env=hidden, timeout=300)
        assert first.returncode == 0 and "needs-gpu" in first.stdout, first.stderr
        from tvm import rpc

        _wait_for(lambda: rpc.connect_tracker("127.0.0.1", port).summary().get("queue_info", {}).get("gpu", {}).get("free", 0) > 0,
                  60, "the server to register", logs / "server.log")
        from autograder.engine.runners import probe_device

        arch = probe_device(f"127.0.0.1:{port}", "gpu").arch
        second = subprocess.run(command + ["--rpc", f"127.0.0.1:{port}", "--key", "gpu", "--cuda-arch", arch],
                                capture_output=True, text=True, cwd=REPO, env=hidden, timeout=300)
        assert second.returncode == 0, second.stderr
        assert "1 graded (pending-gpu 1)" in second.stdout
        graded = json.loads((root / "autograded" / "ada" / "gpu-tiling" / "gpu-tiling.ipynb").read_text())
        assert graded["metadata"]["tvm_course"]["results"]["schedule"]["status"] == "passed"
    finally:
        for process in reversed(started):
            kill_tree(process.pid)
