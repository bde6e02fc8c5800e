"""The `tvm-course` console script: grade-schedule's contract (JSON fields, exit codes), demo, bench."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import solutions

from autograder import examples
from autograder.cli import build_parser, main

pytestmark = pytest.mark.slow

FAST = ["--timing-rounds", "3", "--min-repeat-ms", "5"]
TVM_COURSE = str(Path(sys.executable).parent / "tvm-course")


def tvm_course(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([TVM_COURSE, *args], capture_output=True, text=True, timeout=timeout)


def test_grade_schedule_json_contract_and_exit_0_when_passed():
    run = tvm_course("grade-schedule", "tile-fused-conv", str(examples.path("journal")), "--json", *FAST)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)  # exactly one JSON object on stdout
    assert {"problem", "target", "status", "score", "correct", "speedup", "checks", "messages"} <= set(result)
    assert result["problem"] == "tile-fused-conv" and result["target"] == "cpu"
    assert result["status"] == "passed" and result["correct"] is True
    assert all(set(c) == {"name", "passed", "message"} for c in result["checks"])


def test_exit_1_and_still_json_when_the_submission_is_broken(tmp_path):
    broken = tmp_path / "broken.py"
    broken.write_text("def schedule(sch):\n    raise ValueError('nope')\n")
    run = tvm_course("grade-schedule", "tile-fused-conv", str(broken), "--json", *FAST)
    assert run.returncode == 1
    result = json.loads(run.stdout)
    assert result["status"] == "error" and result["score"] == 0 and "ValueError: nope" in result["messages"][0]


def test_human_readable_report_without_json():
    run = tvm_course("grade-schedule", "tile-fused-conv", str(examples.path("journal")), *FAST)
    assert run.stdout.startswith("tile-fused-conv (cpu): PASSED")
    assert "[ok  ] fusion" in run.stdout


@pytest.mark.parametrize(
    "args, expected",
    [
        (["grade-schedule", "no-such-problem", "x.py"], "cannot read"),
        (["grade-schedule", "no-such-problem", str(examples.path("journal"))], "known problems"),
        (["grade-schedule", "tile-fused-conv", str(examples.path("journal")), "--target", "cuda"], "graded on 'cpu'"),
        (["grade-schedule", "tile-fused-conv"], "required"),
    ],
)
def test_usage_errors_exit_2(args, expected):
    run = tvm_course(*args)
    assert run.returncode == 2
    assert expected in run.stderr


@pytest.mark.opencl
def test_gpu_problem_runs_on_the_opencl_device_and_reports_needs_gpu_here():
    run = tvm_course("grade-schedule", "gpu-fused-conv", str(solutions.path("gpu_bound")), "--json", "--target", "cuda")
    result = json.loads(run.stdout)
    if result["status"] == "needs-gpu":  # no GPU: the kernels ran on PoCL; only the speed waits
        assert run.returncode == 1
        assert result["correct"] is True and result["score"] == 0.7 and result["speedup"] is None
        assert {c["name"] for c in result["checks"]} >= {"correctness", "binding", "fusion", "cuda-build"}
    else:  # on a machine with a GPU the same command runs and verifies it
        assert result["status"] == "passed"


def test_bench_grader_prints_stages_and_spread():
    run = tvm_course("bench-grader", "--runs", "2", *FAST)
    assert run.returncode == 0, run.stderr
    assert "wall time per stage" in run.stdout
    assert "evaluate.compile" in run.stdout
    assert "coefficient of variation" in run.stdout


@pytest.mark.opencl
def test_bench_grader_times_a_gpu_grading_with_the_gpu_yardstick_by_default():
    from autograder.engine.runners import gpu_present

    run = tvm_course("bench-grader", "--problem", "gpu-fused-conv", "--runs", "1")
    assert run.returncode == 0, run.stderr
    assert "the gpu-fused-conv yardstick" in run.stdout and "end-to-end: median" in run.stdout
    if not gpu_present():  # its kernels ran on the OpenCL device: the stage is timed
        assert "needs-gpu score 0.70" in run.stdout and "evaluate.opencl" in run.stdout


def test_mcpu_compiles_for_that_cpu_and_the_json_says_which():
    run = tvm_course("grade-schedule", "tile-fused-conv", str(examples.path("journal")), "--json", "--mcpu", "haswell", *FAST)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout)
    assert result["cpu"] == "haswell"
    assert result["yardstick_speedup"] is not None and result["gflops"] > 0


def test_an_unknown_mcpu_is_a_usage_error_exit_2():
    run = tvm_course("grade-schedule", "tile-fused-conv", str(examples.path("journal")), "--mcpu", "pentium-9000", *FAST)
    assert run.returncode == 2 and "does not know a CPU named 'pentium-9000'" in run.stderr


def test_bench_grader_reports_the_spread_against_the_yardstick_per_cpu():
    run = tvm_course("bench-grader", "--runs", "2", "--cpus", "host,haswell", *FAST)
    assert run.returncode == 0, run.stderr
    assert "compiled for this host" in run.stdout and "compiled for haswell" in run.stdout
    table = run.stdout.split("cv between gradings")[-1]
    assert "host" in table and "haswell" in table
    assert "band edges" in run.stdout


@pytest.mark.parametrize("command", sorted(build_parser()._subparsers._group_actions[0].choices))
def test_every_command_prints_its_help(command, capsys):
    """argparse formats help texts with %: a help text with a bare % would crash --help."""
    with pytest.raises(SystemExit) as exit_:
        main([command, "--help"])
    assert exit_.value.code == 0 and command in capsys.readouterr().out


NO_DEVICE_BUILDS = {"POCL_EXTRA_BUILD_FLAGS": "-cl-no-such-option", "TVM_COURSE_OPENCL_DEVICES": "portable computing language"}


def test_doctor_builds_and_runs_a_kernel_and_shows_the_build_log_where_none_builds():
    import os

    from device_state import opencl_device

    device, missing = opencl_device()
    run = tvm_course("doctor")
    row = next(line for line in run.stdout.splitlines() if "where GPU schedules run without a GPU" in line)
    if missing:
        assert row.lstrip().startswith("[no]") and "what to install" in row, row
    else:
        assert row.lstrip().startswith("[ok]") and "kernels build, run and compute right on the OpenCL device" in row, row
    broken = subprocess.run([TVM_COURSE, "doctor"], capture_output=True, text=True, timeout=300,
                            env={**os.environ, **NO_DEVICE_BUILDS})
    row = next(line for line in broken.stdout.splitlines() if "where GPU schedules run without a GPU" in line)
    assert row.lstrip().startswith("[no]") and "Invalid build option: -cl-no-such-option" in row, row
    assert "apt-get install pocl-opencl-icd" in row and "never a zero" in row


def test_grade_schedule_where_no_device_builds_is_a_grader_fault_not_a_zero():
    import os

    from autograder.engine.runners import gpu_present

    if gpu_present():
        pytest.skip("a GPU is present: the kernels run on it, not on an OpenCL device")
    run = subprocess.run([TVM_COURSE, "grade-schedule", "gpu-fused-conv", str(solutions.path("gpu_bound")), "--json"],
                         capture_output=True, text=True, timeout=300, env={**os.environ, **NO_DEVICE_BUILDS})
    result = json.loads(run.stdout)
    assert run.returncode == 1 and result["status"] == "error" and result["grader_fault"] is True, run.stdout
    assert any("Invalid build option" in m for m in result["messages"]), result["messages"]


def test_the_command_line_starts_without_nbgrader_or_tvm():
    # every `tvm-course` call builds the whole parser: a student's `tvm-course quiz check` must not
    # pay for importing nbgrader (a second) or TVM; each command imports what it runs
    probe = ("import sys; from autograder.cli import build_parser; build_parser(); "
             "print(sorted(m for m in ('nbgrader', 'tvm', 'nbformat', 'jupyter_client') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
