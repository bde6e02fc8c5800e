"""The course's workload: Conv2d + bias Add + ReLU, fused by Relax the way lesson 1 shows.

TVM is imported inside the functions so that code which only needs a problem's metadata
(the CLI parent, the report) starts without paying for the import.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

import numpy as np

FUSED_NAME = "fused_conv2d_add_relu"


@dataclass(frozen=True)
class ConvShape:
    """NCHW input, OIHW weights, a per-channel bias; stride 1 and symmetric zero padding."""

    batch: int = 1
    in_channels: int = 3
    height: int = 224
    width: int = 224
    out_channels: int = 16
    kernel: int = 3
    padding: int = 1

    @property
    def input_shape(self) -> tuple[int, ...]:
        return (self.batch, self.in_channels, self.height, self.width)

    @property
    def weight_shape(self) -> tuple[int, ...]:
        return (self.out_channels, self.in_channels, self.kernel, self.kernel)

    @property
    def bias_shape(self) -> tuple[int, ...]:
        return (1, self.out_channels, 1, 1)

    @property
    def flops(self) -> int:
        """Multiply-adds of the convolution, counted as two operations each (Add and ReLU aside)."""
        n, k, oh, ow = self.output_shape
        return 2 * n * k * oh * ow * self.in_channels * self.kernel * self.kernel

    @property
    def output_shape(self) -> tuple[int, ...]:
        out_h = self.height + 2 * self.padding - self.kernel + 1
        out_w = self.width + 2 * self.padding - self.kernel + 1
        return (self.batch, self.out_channels, out_h, out_w)

    def to_spec(self) -> str:
        """The shape as one command-line argument (how the grader tells its children)."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_spec(cls, spec: str) -> "ConvShape":
        values = json.loads(spec)
        names = {f.name for f in fields(cls)}
        if not isinstance(values, dict) or set(values) != names or not all(type(v) is int for v in values.values()):
            raise ValueError(f"not a ConvShape: {spec[:200]}")
        if min(v for k, v in values.items() if k != "padding") < 1 or values["padding"] < 0:
            raise ValueError(f"not a ConvShape (sizes must be positive): {spec[:200]}")
        return cls(**values)


def relax_model(shape: ConvShape = ConvShape()):
    """The unfused model as a Relax IRModule: relu(conv2d(x, w) + b)."""
    from tvm import relax

    builder = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(shape.input_shape, "float32"))
    w = relax.Var("w", relax.TensorType(shape.weight_shape, "float32"))
    b = relax.Var("b", relax.TensorType(shape.bias_shape, "float32"))
    with builder.function("main", [x, w, b]):
        with builder.dataflow():
            conv = builder.emit(relax.op.nn.conv2d(x, w, padding=(shape.padding, shape.padding)))
            biased = builder.emit(relax.op.add(conv, b))
            out = builder.emit_output(relax.op.nn.relu(biased))
        builder.emit_func_output(out)
    return builder.get()


def legalized(mod):
    """Each Relax operator lowered to its own TensorIR PrimFunc (no fusion yet)."""
    from tvm import relax

    return relax.transform.LegalizeOps()(mod)


def fused(mod):
    """LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR: the graph-level fusion pipeline."""
    import tvm
    from tvm import relax

    return tvm.transform.Sequential(
        [
            relax.transform.LegalizeOps(),
            relax.transform.AnnotateTIROpPattern(),
            relax.transform.FuseOps(),
            relax.transform.FuseTIR(),
        ]
    )(mod)


def fused_primfunc(shape: ConvShape = ConvShape()):
    """The fused Conv2d + Add + ReLU PrimFunc, named `main` so it compiles on its own."""
    mod = fused(relax_model(shape))
    return mod[FUSED_NAME].with_attr("global_symbol", "main")


def random_inputs(shape: ConvShape, seed: int) -> dict[str, np.ndarray]:
    """Fresh inputs for one grading: standard normal data, weights and bias (float32)."""
    rng = np.random.default_rng(seed)
    return {
        "x": rng.standard_normal(shape.input_shape, dtype=np.float32),
        "w": rng.standard_normal(shape.weight_shape, dtype=np.float32),
        "b": rng.standard_normal(shape.bias_shape, dtype=np.float32),
    }


def reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, padding: int) -> np.ndarray:
    """relu(conv2d(x, w, padding) + b) in float64 numpy: the answer a schedule must reproduce."""
    x64 = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    kh, kw = w.shape[2], w.shape[3]
    windows = np.lib.stride_tricks.sliding_window_view(x64, (kh, kw), axis=(2, 3))
    # windows: (N, C, OH, OW, KH, KW); contract C, KH, KW against (O, C, KH, KW).
    conv = np.einsum("ncyxij,ocij->noyx", windows, w.astype(np.float64), optimize=True)
    return np.maximum(conv + b.astype(np.float64), 0.0)
