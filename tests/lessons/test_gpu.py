import pytest

import solutions

from autograder.lessons import gpu, schedules
from autograder.lessons.workload_data import WorkloadData


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
    assert facts["kernels"] == 2
    assert facts["shared bytes per block"] == 16 * 16 * 4
    assert set(facts["threads per block, by kernel"].values()) == {256}


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
