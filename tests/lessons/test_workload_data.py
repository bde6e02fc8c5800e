import numpy as np
import pytest

from autograder.lessons.workload_data import WorkloadData

from .conftest import SMALL


def test_reference_checks_against_numpy_arrays():
    data = WorkloadData.make(SMALL, seed=3)
    assert data.expected.shape == SMALL.output_shape
    assert data.max_error(data.expected.astype(np.float32)) < 1e-5
    assert data.is_correct(data.expected)
    wrong = data.expected.copy()
    wrong[0, 0, 0, 0] += 1.0
    assert not data.is_correct(wrong)
    assert data.max_error(wrong) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="shape"):
        data.max_error(np.zeros((1, 2, 3)))


def test_tensors_on_the_device(lab):
    data = WorkloadData.make(SMALL)
    tensors = data.primfunc_arguments(lab.device)
    assert [tuple(t.shape) for t in tensors] == [SMALL.input_shape, SMALL.weight_shape, SMALL.bias_shape, SMALL.output_shape]
    np.testing.assert_array_equal(tensors[0].numpy(), data.inputs["x"])
