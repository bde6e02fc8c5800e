"""gpu-fused-conv: the compile-only path runs here; the GPU path runs where a GPU is present."""
from __future__ import annotations

import pytest

import solutions
from gpu_exercise import AS_WRITTEN, WITH_LOCAL

from autograder.engine.pipeline import grade_source

pytestmark = pytest.mark.slow

UNBOUND_RELU = '''
def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    sch.bind(sch.fuse(nn, ff), "blockIdx.x")
    sch.bind(yy, "threadIdx.x")
    for name in ("pad_temp", "T_add"):
        block = sch.get_sblock(name)
        outer, inner = sch.split(sch.fuse(*sch.get_loops(block)), [None, 256])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")
'''


def test_unscheduled_gpu_submission_is_rejected_naming_the_first_block(fast_config):
    result = grade_source("gpu-fused-conv", "def schedule(sch):\n    pass\n", fast_config)
    assert result.status == "rejected" and result.score == 0
    assert "block 'pad_temp' is not bound to GPU threads" in result.messages[0]
    assert "sch.bind" in result.messages[0]


def test_a_partly_bound_schedule_is_rejected_naming_the_unbound_block(fast_config):
    result = grade_source("gpu-fused-conv", UNBOUND_RELU, fast_config)
    assert result.status == "rejected"
    assert result.messages[0].startswith("block 'compute' is not bound")


@pytest.mark.opencl
def test_bound_schedule_compiles_to_cuda_and_ptx_without_a_gpu(fast_config):
    from autograder.engine.runners import gpu_present

    if gpu_present():
        pytest.skip("a GPU is present: the run path is tested by test_bound_schedule_runs_on_the_gpu")
    result = grade_source("gpu-fused-conv", solutions.source("gpu_bound"), fast_config)
    assert result.status == "needs-gpu"
    # its kernels ran on the OpenCL device (tests/engine/test_opencl.py); only the speed waits
    assert result.correct is True and result.score == 0.7 and "speed" not in result.credit
    build = result.check("cuda-build")
    assert build.passed and "1 kernel)" in build.message  # the padding is staged inside the conv's kernel
    import shutil

    if shutil.which("nvcc"):
        assert "PTX by nvcc" in build.message
    assert result.check("fusion").passed and result.check("binding").passed


def test_a_gpu_schedule_over_the_thread_limit_is_rejected(fast_config):
    source = solutions.source("gpu_bound").replace("factors=[None, 256]", "factors=[None, 2048]")
    result = grade_source("gpu-fused-conv", source, fast_config)
    assert result.status == "rejected" and "1024 threads" in result.messages[0]


@pytest.mark.gpu
def test_bound_schedule_runs_on_the_gpu(fast_config):
    result = grade_source("gpu-fused-conv", solutions.source("gpu_bound"), fast_config)
    assert result.status == "passed", result.to_text()
    assert result.correct is True and result.speedup is not None
    # timed beside the yardstick on the same GPU, inside the confined runner
    assert result.yardstick_speedup is not None and result.yardstick_spread["n"] >= fast_config.timing_rounds
    assert "ran on this machine, confined" in result.messages


@pytest.mark.gpu
def test_the_gpu_yardstick_itself_runs_and_earns_no_speed_credit(fast_config):
    import inspect

    from autograder.problems import yardsticks

    source = inspect.getsource(yardsticks.bound_pixels).replace("def bound_pixels(sch) -> None:", "def schedule(sch):")
    result = grade_source("gpu-fused-conv", source, fast_config)
    assert result.correct is True, result.to_text()
    assert 0.8 < result.yardstick_speedup < 1.2 and result.credit["speed"] == 0.0


def test_the_gpu_yardstick_compiles_to_cuda_and_passes_the_static_checks():
    """Here without a GPU: what a GPU host would time beside every submission builds."""
    import tvm
    from tvm import s_tir

    from autograder.engine import checks
    from autograder.problems import get_problem

    problem = get_problem("gpu-fused-conv")
    schedule = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(schedule)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90"}, host=tvm.target.Target.from_device(tvm.cpu()))
    assert checks.check_binding(schedule).passed
    assert checks.check_host_touches_no_device_buffer(schedule.mod["main"], target).passed
    executable = tvm.compile(schedule.mod, target=target)
    assert "__global__" in executable.mod.imports[0].inspect_source()


def test_a_schedule_bound_only_to_vthreads_is_rejected_with_the_fix(fast_config):
    result = grade_source(
        "gpu-fused-conv",
        "def schedule(sch):\n"
        "    for name in ('pad_temp', 'conv2d_nchw', 'T_add', 'compute'):\n"
        "        sch.bind(sch.get_loops(sch.get_sblock(name))[0], 'vthread.x')\n",
        fast_config,
    )
    assert result.status == "rejected" and result.score == 0
    assert "bound only to virtual threads" in result.messages[0] and "blockIdx.x" in result.messages[0]


def test_lesson_3s_exercise_as_written_loses_the_fusion_points_and_the_hint_names_local(fast_config):
    result = grade_source("gpu-fused-conv", AS_WRITTEN, fast_config)
    fusion = result.check("fusion")
    assert not fusion.passed and "still 3.1 MiB" in fusion.message, result.to_text()
    assert "set_scope(sch.get_sblock('conv2d_nchw'), 0, 'local')" in fusion.message
    assert "'shared' is for data that several threads of a block read" in fusion.message


@pytest.mark.opencl
def test_lesson_3s_exercise_with_local_intermediates_earns_correctness_and_fusion_on_the_opencl_device(fast_config):
    from autograder.engine.runners import gpu_present
    from autograder.nbgrader_ext.credit import score_part

    if gpu_present():
        pytest.skip("a GPU is present: there the speed is timed too")
    assert WITH_LOCAL != AS_WRITTEN
    result = grade_source("gpu-fused-conv", WITH_LOCAL, fast_config)
    assert result.status == "needs-gpu" and result.correct is True, result.to_text()
    assert result.check("fusion").passed
    assert score_part(result, "correctness").fraction == 1.0 and score_part(result, "fusion").fraction == 1.0
    assert score_part(result, "speed").fraction is None  # pending until a GPU times it


def test_a_vector_no_gpu_can_hold_is_refused_before_anything_lowers_it(fast_config):
    """Every block bound, and the Add's 224x224 plane one vectorized loop: TVM's lane count
    overflows its 16 bits, and compiling it for CUDA failed with "Can't fetch the lanes of a
    scalable vector". The same bound as on the CPU refuses it first, saying why."""
    source = '''
def schedule(sch):
    for name in ("pad_temp", "conv2d_nchw", "compute"):
        loops = sch.get_loops(sch.get_sblock(name))
        outer, inner = sch.split(sch.fuse(*loops[:4]), [None, 256])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")
    n, c, h, w = sch.get_loops(sch.get_sblock("T_add"))
    sch.bind(c, "blockIdx.x")
    sch.vectorize(sch.fuse(h, w))
'''
    result = grade_source("gpu-fused-conv", source, fast_config)
    assert result.status == "rejected" and result.score == 0
    assert not result.check("vector-width").passed
    assert "a loop of 50176 iterations around block 'T_add'" in result.messages[0]
