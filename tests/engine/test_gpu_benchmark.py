"""autograder/engine/gpu_benchmark.py and gpu_kernel_timer.py: GPU schedules written out here for a
GPU machine without TVM. The export runs here; the timing needs a CUDA GPU and runs only there
(the `device` tool's lent machines): here its pure parts are tested, and it says it has no GPU."""
from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

import solutions

from autograder.engine import gpu_benchmark, gpu_kernel_timer, opencl
from autograder.problems import get_problem
from autograder.problems.workload import ConvShape, random_inputs, reference

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    directory = tmp_path_factory.mktemp("gpu-benchmark")
    schedules = {"yardstick": get_problem("gpu-fused-conv").apply_yardstick, "reference": solutions.schedule("gpu_bound")}
    return gpu_benchmark.export(directory, schedules, with_ptx=False)


def test_the_export_writes_each_schedules_cuda_source_and_the_launches_its_host_code_makes(exported):
    import tvm
    from tvm import s_tir

    plan = json.loads((exported / gpu_benchmark.PLAN_FILE).read_text())
    assert plan["format"] == gpu_benchmark.PLAN_FORMAT and plan["yardstick"] == "yardstick"
    assert plan["shape"]["output"] == [1, 16, 224, 224] and plan["bands"][-1] == [2.0, 1.0]
    assert set(plan["schedules"]) == {"yardstick", "reference"}
    problem = get_problem("gpu-fused-conv")
    for name, schedule in (("yardstick", problem.apply_yardstick), ("reference", solutions.schedule("gpu_bound"))):
        entry = plan["schedules"][name]
        source = (exported / entry["source"]).read_text()
        roles = {b["name"]: b["role"] for b in entry["buffers"]}
        assert {"x", "w", "b", "output"} <= set(roles.values())
        # the launches are the ones the OpenCL runner proves right on the same lowering
        sch = s_tir.Schedule(problem.workload())
        schedule(sch)
        program = opencl.build_program(tvm.IRModule({"main": sch.mod["main"]}), "llvm")
        assert [(launch["kernel"], tuple(launch["grid"]), tuple(launch["block"])) for launch in entry["launches"]] == \
            [(launch.kernel, launch.groups, launch.local) for launch in program.launches]
        for launch in entry["launches"]:
            assert f" {launch['kernel']}(" in source and 'extern "C" __global__' in source
            assert all(a[0] == "buffer" and a[1] in roles or a[0] == "scalar" for a in launch["args"])
    yardstick = plan["schedules"]["yardstick"]
    assert [launch["kernel"] for launch in yardstick["launches"]] == ["main_kernel", "main_kernel_1"]  # padding, then conv
    assert next(b for b in yardstick["buffers"] if b["role"] == "scratch")["elements"] == 3 * 226 * 226
    assert len(plan["schedules"]["reference"]["launches"]) == 1
    with open(gpu_kernel_timer.__file__, encoding="utf-8") as timer:
        assert (exported / gpu_benchmark.TIMER_FILE).read_text() == timer.read()


def test_the_timer_says_where_it_cannot_run(exported):
    """Here: no CuPy, or no CUDA GPU. It exits 3 saying which, and times nothing."""
    run = subprocess.run([sys.executable, str(exported / gpu_benchmark.TIMER_FILE)], capture_output=True, text=True, timeout=120)
    assert run.returncode == 3, run.stdout + run.stderr
    assert "CUDA GPU" in run.stderr


def test_the_timers_inputs_and_reference_are_the_graders():
    plan = {"seed": 7, "shape": {"input": [1, 3, 32, 32], "weight": [4, 3, 3, 3], "bias": [1, 4, 1, 1]}}
    ours = gpu_kernel_timer.seeded_inputs(plan)
    shape = ConvShape(height=32, width=32, out_channels=4)
    theirs = random_inputs(shape, 7)
    for role in ("x", "w", "b"):
        assert np.array_equal(ours[role], theirs[role])
    assert np.array_equal(gpu_kernel_timer.reference_output(ours["x"], ours["w"], ours["b"], 1),
                          reference(theirs["x"], theirs["w"], theirs["b"], 1))


def test_the_median_interval_is_distribution_free_order_statistics():
    assert gpu_kernel_timer.median_interval([1.0] * 5) is None  # 2 P(Bin(5, 1/2) <= 0) = 1/16 > 1%
    ratios = [float(i) for i in range(1, 31)]
    low, high = gpu_kernel_timer.median_interval(ratios)
    k = int(low)
    assert high == 31 - k
    # k is the largest rank whose two tails together stay within 1%
    def tail(r):
        return 2 * sum(math.comb(30, i) for i in range(r)) / 2 ** 30

    assert tail(k) <= 0.01 < tail(k + 1)


def test_band_edges_follow_the_references_interval_or_are_refused():
    thirds = [1 / 3, 2 / 3, 1.0]
    # top: 2.5 / 1.1 = 2.27, rounded down to 2.25; then a third and two thirds of the way from 1x
    assert gpu_kernel_timer.suggest_bands(2.5, thirds) == [1.42, 1.83, 2.25]
    assert gpu_kernel_timer.suggest_bands(1.2, thirds) is None  # 1.2 / 1.1 = 1.09: separates nothing


def test_a_schedule_that_leaves_a_block_on_the_host_is_not_exported(tmp_path):
    with pytest.raises(gpu_benchmark.ExportError, match="unbound: block 'pad_temp' is not bound"):
        gpu_benchmark.export(tmp_path, {"yardstick": get_problem("gpu-fused-conv").apply_yardstick,
                                        "unbound": lambda sch: None}, with_ptx=False)
    with pytest.raises(gpu_benchmark.ExportError, match="must include the yardstick"):
        gpu_benchmark.export(tmp_path, {"reference": solutions.schedule("gpu_bound")}, with_ptx=False)
