from autograder.lessons import roofline, schedules


def test_traffic_model_follows_the_schedule(lab, fused_func):
    arguments = roofline.argument_bytes(fused_func)
    assert arguments == 4 * (3 * 224 * 224 + 16 * 3 * 3 * 3 + 16 + 16 * 224 * 224)
    unscheduled = roofline.traffic_bytes(fused_func, lab.target)
    # pad_temp and the two intermediates, each written once and read once
    assert unscheduled == arguments + 2 * 4 * (3 * 226 * 226 + 2 * 16 * 224 * 224)
    journal = schedules.apply(fused_func, schedules.example("journal")).mod["main"]
    assert roofline.traffic_bytes(journal, lab.target) == arguments + 2 * 4 * 3 * 226 * 226  # the tiles stay in cache
    point = roofline.point("journal", journal, lab.target, 1000, 1e-6)
    assert point.gflops == 1.0 and point.intensity == 1000 / roofline.traffic_bytes(journal, lab.target)


def test_peak_and_bandwidth_are_measured(lab):
    assert roofline.measure_peak(lab.target, lab.device) > 0
    assert roofline.measure_bandwidth(lab.target, lab.device, 1 << 20) > 0


def test_stream_kernel_copies(lab):
    import numpy as np
    import tvm

    module = tvm.compile(tvm.IRModule({"main": roofline.stream_kernel(64)}), lab.target)
    a = tvm.runtime.tensor(np.arange(64, dtype=np.float32), lab.device)
    b = tvm.runtime.empty((64,), "float32", lab.device)
    module["main"](a, b)
    assert np.allclose(b.numpy(), np.arange(64) * 1.0001)


def test_the_roofs_are_the_best_of_interleaved_rounds(lab):
    roofs = roofline.measure_roofs(lab.target, lab.device, {"1 MiB": 1 << 20}, rounds=3)
    assert roofs.rounds == 3 and roofs.peak == roofs.peak_range[1] >= roofs.peak_range[0] > 0
    assert roofs.bandwidths["1 MiB"] == roofs.bandwidth_ranges["1 MiB"][1] > 0
    assert roofs.peak_label == roofline.peak_label(lab.target)
    assert "This core's roofs, measured now in 3 interleaved rounds" in roofs._repr_markdown_()


def test_the_peak_says_what_it_measures():
    from autograder.engine.cpus import cpu_target
    from autograder.lessons import machine_code

    if not machine_code.is_x86(machine_code.target_architecture(cpu_target(None))):
        import pytest

        pytest.skip("x86 targets only")
    assert roofline.peak_label(cpu_target("x86-64-v2")).startswith("multiply + add peak (no FMA")
