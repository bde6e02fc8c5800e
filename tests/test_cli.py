"""The `tvm-course` console script: grade-schedule's contract (JSON fields, exit codes), demo, bench."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import solutions

from autograder import examples
from autograder.cli import build_parser, main
from autograder.errors import ExitCode, TvmCourseError

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


# A command module of the test's own, beside the real ones: its handlers raise what a real command
# may let through, and `cli.main` must answer each the way the exit codes promise.
PROBE_COMMANDS = '''
from autograder.errors import UsageError
from autograder.course.course_dir import CourseError


def _raise(error):
    def handler(args):
        raise error
    return handler


def register(subparsers):
    for name, error in [("usage", UsageError("--size must be positive")),
                        ("course", CourseError("no nbgrader_config.py here")),
                        ("bug", ZeroDivisionError("division by zero in the grader")),
                        ("interrupt", KeyboardInterrupt())]:
        subparsers.add_parser(name).set_defaults(handler=_raise(error))
'''


def probe_cli(tmp_path: Path, command: str) -> subprocess.CompletedProcess:
    (tmp_path / "probe_commands.py").write_text(PROBE_COMMANDS)
    script = ("import sys; from autograder import cli; cli.COMMAND_MODULES.append('probe_commands'); "
              f"sys.exit(cli.main([{command!r}]))")
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(tmp_path)})


@pytest.mark.parametrize("command, message", [("usage", "--size must be positive"),
                                              ("course", "no nbgrader_config.py here")])
def test_an_error_the_package_raises_for_the_caller_exits_2_with_its_message_and_no_traceback(tmp_path, command, message):
    run = probe_cli(tmp_path, command)
    assert run.returncode == ExitCode.USAGE_ERROR == 2
    assert run.stderr.strip() == f"tvm-course {command}: {message}"


def test_an_internal_bug_shows_its_traceback_and_is_not_a_usage_error(tmp_path):
    run = probe_cli(tmp_path, "bug")
    assert run.returncode not in (0, ExitCode.USAGE_ERROR), run.stderr
    assert "Traceback (most recent call last)" in run.stderr
    assert "ZeroDivisionError: division by zero in the grader" in run.stderr


def test_ctrl_c_exits_130(tmp_path):
    run = probe_cli(tmp_path, "interrupt")
    assert run.returncode == ExitCode.INTERRUPTED == 130
    assert run.stderr.strip() == "interrupted"
    assert "Traceback" not in run.stderr


def test_every_error_class_of_the_package_derives_from_the_root_and_keeps_its_builtin_base():
    # every `except ValueError` (RuntimeError, OSError, ...) elsewhere still catches what it caught;
    # a module's private signal (a leading underscore) never leaves it and needs no exit code
    import importlib
    import pkgutil

    import autograder

    errors = []
    for module in pkgutil.walk_packages(autograder.__path__, "autograder."):
        loaded = importlib.import_module(module.name)
        errors += [value for value in vars(loaded).values() if isinstance(value, type) and issubclass(value, Exception)
                   and value.__module__ == module.name and not value.__name__.startswith("_")]
    assert len(errors) > 40
    off_the_root = {f"{error.__module__}.{error.__qualname__}" for error in errors if not issubclass(error, TvmCourseError)}
    assert off_the_root == set()
    assert all(isinstance(error.exit_code, ExitCode) for error in errors if issubclass(error, TvmCourseError))
    assert issubclass(autograder.course.course_dir.CourseError, ValueError)
    assert issubclass(autograder.engine.world.WorldUnavailable, OSError)


def test_every_command_module_takes_its_exit_codes_from_the_enum():
    commands = Path(autograder_package_dir(), "commands")
    for module in sorted(commands.glob("*.py")):
        text = module.read_text()
        assert not re.search(r"\bEXIT_[A-Z]+\b", text), f"{module.name} defines its own exit codes"
        assert not re.search(r"^\s*return -?\d+\b", text, re.M), f"{module.name} returns a bare number"
    cli_text = Path(autograder_package_dir(), "cli.py").read_text()
    assert not re.search(r"^\s*return -?\d+\b", cli_text, re.M)


def autograder_package_dir() -> Path:
    import autograder

    return Path(autograder.__file__).parent
