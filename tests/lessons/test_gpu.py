import pytest

import solutions

from autograder.lessons import exercises, gpu, schedules
from autograder.lessons.workload_data import WorkloadData

from .conftest import classifier_head


def test_an_unbound_schedule_silently_builds_for_the_host(fused_func):
    build = schedules.compile_schedule(fused_func, schedules.example("journal"), gpu.cuda_target())
    assert len(build.mod.imports) == 0
    assert not gpu.has_device_code(build)
    with pytest.raises(ValueError, match="never bound"):
        gpu.kernel_source(build)


def test_a_bound_schedule_yields_cuda_source(fused_func):
    build = schedules.compile_schedule(fused_func, solutions.schedule("gpu_bound"), gpu.cuda_target())
    assert gpu.has_device_code(build)
    source = gpu.kernel_source(build)
    kernels = gpu.kernels_only(source)
    assert kernels.startswith('extern "C" __global__')
    facts = gpu.source_facts(source)
    assert facts["kernels"] == 1  # the padding is computed while the input tile is staged
    assert facts["shared bytes per block"] == (3 * 18 * 18 + 4 * 27) * 4  # input tile with its halo, 4 channels' weights
    assert set(facts["threads per block, by kernel"].values()) == {256}


def test_the_reference_counted_costs_beat_the_yardsticks(fused_func):
    """Lesson 3's reasoning, counted on the lowered kernels: staging what several threads read in
    shared memory, keeping each thread's own values in registers and giving a thread several
    outputs moves far fewer bytes through global memory at the price of one barrier."""
    from autograder.problems import get_problem

    problem = get_problem("gpu-fused-conv")
    yardstick = schedules.apply(fused_func, problem.apply_yardstick)
    reference = schedules.apply(fused_func, solutions.schedule("gpu_bound"))
    ours, theirs = gpu.counted_costs(reference.mod), gpu.counted_costs(yardstick.mod)
    assert ours.global_bytes_per_output * 10 < theirs.global_bytes_per_output
    assert ours.kernels < theirs.kernels and ours.outputs_per_thread == 4 > theirs.outputs_per_thread == 1
    assert ours.multiply_adds_per_thread == 4 * 27 and theirs.multiply_adds_per_thread == 27
    assert ours.barriers_per_thread == 1 and theirs.barriers_per_thread == 0
    # shared memory holds only the staged inputs, never a thread's own intermediates
    assert ours.shared_bytes_per_block == (3 * 18 * 18 + 4 * 27) * 4 and theirs.shared_bytes_per_block == 0
    table = gpu.costs_table({"yardstick": yardstick.mod, "reference": reference.mod})
    assert table.columns == ("", "yardstick", "reference") and "only a GPU says" in table.note
    assert table.rows[0] == ("kernels launched", "2", "1")


def test_the_notebooks_costs_table_counts_a_students_schedule_or_says_why_not():
    from autograder.problems.variants import VARIANTS

    variant = VARIANTS[0]
    table = gpu.costs_beside_yardstick(bind_pixels(128, scope="local"), variant)
    assert table.columns[1:] == ("yardstick (one thread per pixel)", "your schedule")
    assert table.column("your schedule")[4] == "128"  # threads per block
    assert table.column("yardstick (one thread per pixel)")[5] == str(variant.out_channels * variant.height * variant.width // 256)

    def raises(sch):
        sch.get_sblock("no_such_block")

    unbound = gpu.costs_beside_yardstick(lambda sch: None, variant)
    assert "not counted" in unbound.note and "'pad_temp' is not bound" in unbound.note
    assert "your schedule raised" in gpu.costs_beside_yardstick(raises, variant).note


def test_source_facts_on_a_small_kernel():
    source = """
extern "C" __global__ void __launch_bounds__(128) k(float* a) {
  __shared__ alignas(64) float tile[324];
  __syncthreads();
}
"""
    facts = gpu.source_facts(source)
    assert facts == {
        "kernels": 1,
        "shared arrays": ["tile"],
        "shared bytes per block": 1296,
        "__syncthreads() calls": 1,
        "threads per block, by kernel": {"k": 128},
    }
    with pytest.raises(ValueError, match="no __global__"):
        gpu.kernels_only("int main() {}")


def test_timing_report_says_plainly_when_there_is_no_gpu(lab, fused_func):
    if lab.gpu is not None:
        pytest.skip("a GPU is present: the report times the kernel instead (see the gpu-marked test)")
    build = schedules.compile_schedule(fused_func, solutions.schedule("gpu_bound"), gpu.cuda_target())
    assert gpu.time_on_gpu(build, WorkloadData.make()) is None
    assert gpu.timing_report(build, WorkloadData.make()).startswith("No CUDA GPU on this machine")


@pytest.mark.gpu
def test_the_bound_kernel_runs_correctly_on_the_gpu(fused_func):
    build = schedules.compile_schedule(fused_func, solutions.schedule("gpu_bound"), gpu.cuda_target())
    seconds = gpu.time_on_gpu(build, WorkloadData.make())
    assert seconds is not None and seconds > 0
    assert "ms per run" in gpu.timing_report(build, WorkloadData.make())


SOURCE_WITH_LOOPS = """
extern "C" __global__ void __launch_bounds__(256) main_kernel(float* a);
extern "C" __global__ void __launch_bounds__(256) main_kernel(float* a) {
  __shared__ alignas(64) float s[256];
  for (int k_0 = 0; k_0 < 32; ++k_0) {
    __syncthreads();
    for (int k_1 = 0; k_1 < 16; ++k_1) {
      __syncthreads();
      if (a) { a[0] = 1; }
    }
  }
  __syncthreads();
}
extern "C" __global__ void __launch_bounds__(64) other(float* a) {
  __syncthreads();
}
"""


def test_barriers_are_counted_per_iteration_of_their_loops():
    assert gpu.barriers_per_thread(SOURCE_WITH_LOOPS) == {"main_kernel": 32 + 32 * 16 + 1, "other": 1}
    with pytest.raises(ValueError, match="one kernel"):
        gpu.kernel_facts(SOURCE_WITH_LOOPS)


def _bound_head(threads=(16, 16)):
    import tvm

    sch = tvm.s_tir.Schedule(classifier_head())
    i, j, k = sch.get_loops(sch.get_sblock("matmul"))
    i_block, i_thread = sch.split(i, factors=[None, threads[0]])
    j_block, j_thread = sch.split(j, factors=[None, threads[1]])
    sch.reorder(i_block, j_block, i_thread, j_thread)
    for loop, axis in ((i_block, "blockIdx.y"), (j_block, "blockIdx.x"), (i_thread, "threadIdx.y"), (j_thread, "threadIdx.x")):
        sch.bind(loop, axis)
    sch.reverse_compute_at(sch.cache_write(sch.get_sblock("matmul"), 0, "local"), j_thread)
    sch.compute_inline(sch.get_sblock("T_add"))
    sch.reverse_compute_inline(sch.get_sblock("compute"))
    return sch


LIMITS = {"max_threads_per_block": 1024, "max_shared_memory_per_block": 48 * 1024}


def test_verify_gpu_code_catches_what_compile_does_not():
    import tvm

    ok, too_big = _bound_head(), _bound_head((32, 64))
    kernels = gpu.device_functions(ok.mod, gpu.cuda_target())
    assert list(kernels) == ["main_kernel"]
    assert gpu.gpu_code_violations(ok.mod, gpu.cuda_target(), LIMITS) == []
    assert gpu.has_device_code(tvm.compile(too_big.mod, target=gpu.cuda_target()))  # compiles anyway
    assert gpu.gpu_code_violations(too_big.mod, gpu.cuda_target(), LIMITS) == [
        "Used threads per block (2048) is greater than the allowed maximum (1024)"
    ]
    facts = gpu.kernel_facts(gpu.kernel_source(tvm.compile(ok.mod, target=gpu.cuda_target())))
    assert facts == {"threads per block": 256, "shared bytes per block": 0, "barriers per thread": 0}


def test_matmul_data_checks_a_head_build(lab):
    import tvm

    head = classifier_head()
    data = gpu.MatmulData.make(head)
    arguments = data.primfunc_arguments(lab.device)
    tvm.compile(head, target=lab.target)["main"](*arguments)
    assert data.is_correct(arguments[-1]) and data.max_error(arguments[-1]) < 1e-3
    assert not data.is_correct(arguments[-1].numpy() + 1)


def test_timing_table_times_nothing_without_a_gpu(lab):
    if lab.gpu is not None:
        pytest.skip("a GPU is present")
    table = gpu.timing_table({"a": (None, None), "b": (None, None)})
    assert table.column("median time per run") == ["not run", "not run"]
    assert table.note.startswith("No CUDA GPU on this machine")


@pytest.mark.gpu
def test_the_head_runs_correctly_on_the_gpu():
    import tvm

    build = tvm.compile(_bound_head().mod, target=gpu.cuda_target())
    data = gpu.MatmulData.make(classifier_head())
    assert gpu.time_on_gpu(build, data) > 0
    assert "ms" in str(gpu.timing_table({"head": (build, data)}))


# ---- Exercise 7 and the kernels run without a GPU (on the OpenCL device) ---------------------

def bind_pixels(threads: int, T_add_at_thread: bool = True, scope: str | None = None):
    def schedule(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        blocks, thread = sch.split(sch.fuse(nn, ff, yy, xx), factors=[None, threads])
        sch.bind(blocks, "blockIdx.x")
        sch.bind(thread, "threadIdx.x")
        for name in ("T_add", "compute"):
            sch.reverse_compute_at(sch.get_sblock(name), thread if T_add_at_thread else blocks)
        if scope:
            sch.set_scope(conv, 0, scope)
        if not T_add_at_thread:
            for name in ("T_add", "compute"):
                sch.bind(sch.get_loops(sch.get_sblock(name))[-1], "threadIdx.x")
        pad = sch.get_sblock("pad_temp")
        blocks, thread = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, threads])
        sch.bind(blocks, "blockIdx.x")
        sch.bind(thread, "threadIdx.x")
    return schedule


@pytest.mark.opencl
@pytest.mark.slow
def test_exercise_7_accepts_a_right_binding_run_on_the_opencl_device(fused_func):
    feedback = exercises.gpu_binding(fused_func, bind_pixels(128))
    assert feedback.passed, str(feedback)
    assert "128 threads in each of" in str(feedback) and "max abs error" in str(feedback)


def test_exercise_7_names_what_is_missing(fused_func):
    def nothing_yet(sch):
        sch.get_loops(sch.get_sblock("conv2d_nchw"))

    assert exercises.gpu_binding(fused_func, nothing_yet).status == "no answer yet"
    feedback = exercises.gpu_binding(fused_func, bind_pixels(256))
    assert not feedback.passed and "asks for 128 threads per block" in str(feedback)

    def raises(sch):
        sch.get_sblock("no_such_block")

    assert "your schedule raised" in str(exercises.gpu_binding(fused_func, raises))


def test_exercise_7_without_the_padding_bound_hints_compute_at_once(fused_func):
    def conv_and_consumers_only(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
        blocks, thread = sch.split(sch.fuse(nn, ff, yy, xx), factors=[None, 128])
        sch.bind(blocks, "blockIdx.x")
        sch.bind(thread, "threadIdx.x")
        for name in ("T_add", "compute"):
            sch.reverse_compute_at(sch.get_sblock(name), thread)

    feedback = exercises.gpu_binding(fused_func, conv_and_consumers_only)
    text = str(feedback)
    assert not feedback.passed and text.count("'pad_temp' is not bound") == 1, text
    assert "sch.compute_at(b, <a bound loop of 'conv2d_nchw'>)" in text and "reverse_compute_at it" not in text


@pytest.mark.opencl
@pytest.mark.slow
def test_exercise_7_refuses_kernels_that_go_wrong_when_run(fused_func, native_opencl):
    # T_add and ReLU at the block loop, the conv's sums in each thread's own registers (a whole
    # block's worth per thread): it binds and compiles, and its kernels go wrong when they run.
    feedback = exercises.gpu_binding(fused_func, bind_pixels(128, T_add_at_thread=False, scope="local"))
    assert not feedback.passed and "its kernels failed on the OpenCL device (crashed)" in str(feedback), str(feedback)


@pytest.mark.opencl
@pytest.mark.slow
def test_the_lesson_runs_the_yardstick_kernels_on_the_opencl_device():
    from tvm import s_tir

    from autograder.problems import get_problem

    problem = get_problem("gpu-fused-conv")
    yardstick = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(yardstick)
    run = gpu.run_on_opencl(yardstick.mod)
    assert run.correct and run.launches == 2 and "OpenCL device" in run.device


def test_where_no_device_builds_kernels_the_lesson_says_what_it_could_not_run_and_goes_on(monkeypatch):
    # PoCL refusing every build, and only PoCL tried: a CPU newer than PyPI's PoCL, with no simulator
    from tvm import s_tir

    from autograder.problems import get_problem

    import importlib.util

    if importlib.util.find_spec("pocl_binary_distribution") is None:
        pytest.skip("PyPI's PoCL is not installed here (the course's pyproject installs it on x86-64 Linux)")
    monkeypatch.setenv("POCL_EXTRA_BUILD_FLAGS", "-cl-no-such-option")
    monkeypatch.setenv("TVM_COURSE_OPENCL_DEVICES", "portable computing language")
    problem = get_problem("gpu-fused-conv")
    yardstick = s_tir.Schedule(problem.workload())
    problem.apply_yardstick(yardstick)
    table = gpu.opencl_table({"the yardstick": yardstick.mod})
    assert table.title == "Not run: no OpenCL device here builds kernels"
    assert table.column("correct") == ["not run here"]
    assert "Invalid build option: -cl-no-such-option" in table.note and "apt-get install pocl-opencl-icd" in table.note
