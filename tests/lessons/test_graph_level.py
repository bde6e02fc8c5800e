import numpy as np
import pytest

from autograder.lessons import graph_level, schedules
from autograder.lessons.workload_data import WorkloadData

from .conftest import SMALL


def test_unfused_model_has_three_kernels_passing_two_tensors():
    mod = graph_level.unfused_module(SMALL)
    assert [k.name for k in graph_level.kernels(mod)] == ["conv2d", "add", "relu"]
    passed = graph_level.intermediate_tensors(mod)
    out_bytes = int(np.prod(SMALL.output_shape)) * 4
    assert [t.nbytes for t in passed] == [out_bytes, out_bytes]
    inputs = sum(int(np.prod(s)) * 4 for s in (SMALL.input_shape, SMALL.weight_shape, SMALL.bias_shape))
    # conv reads x, w and writes lv; add reads lv, b and writes lv1; relu reads lv1 and writes the output
    assert graph_level.boundary_bytes(mod) == inputs + 5 * out_bytes


def test_fused_model_has_one_kernel_and_nothing_between_kernels():
    mod = graph_level.fused_module(SMALL)
    (kernel,) = graph_level.kernels(mod)
    assert kernel.name == "fused_conv2d_add_relu"
    assert [t.name for t in kernel.inputs] == ["x", "w", "b"]
    assert graph_level.intermediate_tensors(mod) == []
    table = graph_level.boundary_table({"unfused": graph_level.unfused_module(SMALL), "fused": mod})
    assert table.column("kernels") == ["3", "1"]
    assert table.column("tensors passed between kernels")[1] == "none"


@pytest.mark.slow
def test_all_three_builds_compute_the_reference(lab, small_func):
    data = WorkloadData.make(SMALL, seed=1)
    inputs = data.input_tensors(lab.device)
    fused = graph_level.fused_module(SMALL)
    scheduled = schedules.apply(small_func, schedules.pad_inlined).mod["main"]
    replaced = graph_level.with_fused_kernel(fused, scheduled)
    assert "pad_temp" not in replaced["fused_conv2d_add_relu"].script()
    assert "pad_temp" in fused["fused_conv2d_add_relu"].script(), "with_fused_kernel must not change its input"
    for mod in (graph_level.unfused_module(SMALL), fused, replaced):
        output = graph_level.run(graph_level.build(mod, lab.target), lab.device, inputs)
        assert data.is_correct(output)
