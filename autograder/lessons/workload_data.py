"""Inputs and the expected output for the course's Conv2d + Add + ReLU, on a device."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problems.workload import ConvShape, random_inputs, reference

TOLERANCE = 1e-4  # float32 sums of 27 products against a float64 reference


@dataclass
class WorkloadData:
    shape: ConvShape
    inputs: dict[str, np.ndarray]  # x, w, b
    expected: np.ndarray  # float64 reference output

    @classmethod
    def make(cls, shape: ConvShape = ConvShape(), seed: int = 0) -> "WorkloadData":
        inputs = random_inputs(shape, seed)
        return cls(shape, inputs, reference(inputs["x"], inputs["w"], inputs["b"], shape.padding))

    def input_tensors(self, device) -> list:
        """x, w, b as TVM tensors on `device` (the arguments a Relax VM takes)."""
        import tvm

        return [tvm.runtime.tensor(self.inputs[name], device) for name in ("x", "w", "b")]

    def primfunc_arguments(self, device) -> list:
        """x, w, b and an output tensor (a compiled PrimFunc writes its result into the last)."""
        import tvm

        output = tvm.runtime.empty(self.shape.output_shape, "float32", device)
        return self.input_tensors(device) + [output]

    def max_error(self, output) -> float:
        """Largest absolute difference between `output` (numpy or TVM tensor) and the reference."""
        values = output.numpy() if hasattr(output, "numpy") else np.asarray(output)
        if values.shape != self.expected.shape:
            raise ValueError(f"output shape {values.shape}, expected {self.expected.shape}")
        return float(np.max(np.abs(values.astype(np.float64) - self.expected)))

    def is_correct(self, output) -> bool:
        values = output.numpy() if hasattr(output, "numpy") else np.asarray(output)
        return bool(np.allclose(values, self.expected, rtol=TOLERANCE, atol=TOLERANCE))
