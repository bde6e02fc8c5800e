"""The graph level: the model in Relax, compiled with and without operator fusion.

The unfused build runs three kernels (conv2d, add, relu) and passes two full-size tensors
between them through memory; the fused build runs one. `kernels()` lists what each kernel
reads and writes, which is where the byte counts in lesson 1 come from.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..problems.workload import FUSED_NAME, ConvShape, fused, legalized, relax_model
from .tables import Table, human_bytes


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class Kernel:
    """One `call_tir` in the Relax main function: a PrimFunc and the tensors it touches."""

    name: str
    inputs: tuple[TensorInfo, ...]
    output: TensorInfo


def _tensor(var) -> TensorInfo:
    ty = var.ty
    return TensorInfo(var.name, tuple(int(d) for d in ty.shape.values), str(ty.dtype))


def kernels(mod) -> list[Kernel]:
    """The kernels `main` calls, in order."""
    found = []
    for block in mod["main"].body.blocks:
        for binding in block.bindings:
            call = binding.value
            if getattr(getattr(call, "op", None), "name", None) != "relax.call_tir":
                continue
            callee, arguments = call.args[0], call.args[1]
            found.append(Kernel(callee.name_hint, tuple(_tensor(a) for a in arguments), _tensor(binding.var)))
    return found


def intermediate_tensors(mod) -> list[TensorInfo]:
    """Tensors one kernel writes and a later kernel reads: they go through memory."""
    calls = kernels(mod)
    read_later = {t.name for kernel in calls for t in kernel.inputs}
    return [kernel.output for kernel in calls if kernel.output.name in read_later]


def boundary_bytes(mod) -> int:
    """Bytes read and written at kernel boundaries: every kernel's inputs once, its output once."""
    return sum(t.nbytes for kernel in kernels(mod) for t in (*kernel.inputs, kernel.output))


def kernel_table(mod, title: str = "") -> Table:
    rows = [
        (
            kernel.name,
            ", ".join(t.name for t in kernel.inputs),
            kernel.output.name,
            human_bytes(sum(t.nbytes for t in (*kernel.inputs, kernel.output))),
        )
        for kernel in kernels(mod)
    ]
    return Table.of(("kernel", "reads", "writes", "bytes in + out"), rows, title)


def boundary_table(modules: dict, title: str = "") -> Table:
    """Per build: kernels launched, tensors passed between kernels, bytes at kernel boundaries."""
    rows = []
    for label, mod in modules.items():
        passed = intermediate_tensors(mod)
        rows.append(
            (
                label,
                str(len(kernels(mod))),
                ", ".join(f"{t.name} ({human_bytes(t.nbytes)})" for t in passed) or "none",
                human_bytes(boundary_bytes(mod)),
            )
        )
    return Table.of(("build", "kernels", "tensors passed between kernels", "bytes read + written at kernel boundaries"), rows, title)


def model(shape: ConvShape = ConvShape()):
    """The model as the graph level first sees it: three Relax operators."""
    return relax_model(shape)


def unfused_module(shape: ConvShape = ConvShape()):
    """Each operator legalized to its own PrimFunc; no fusion."""
    return legalized(relax_model(shape))


def fused_module(shape: ConvShape = ConvShape()):
    """LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR: one fused PrimFunc."""
    return fused(relax_model(shape))


def with_fused_kernel(mod, func):
    """`mod` with its fused kernel replaced by `func` (for example a scheduled copy of it)."""
    replaced = mod.clone()
    replaced.update_func(replaced.get_global_var(FUSED_NAME), func.without_attr("global_symbol"))
    return replaced


def build(mod, target):
    """Compile a Relax module as it is: the build pipeline lowers it but fuses nothing more."""
    import tvm
    from tvm import relax

    return tvm.compile(mod, target, relax_pipeline=relax.pipeline.default_build_pipeline())


def run(executable, device, input_tensors):
    """Run `main` of a compiled Relax module on the Relax VM; returns the output tensor."""
    from tvm import relax

    return relax.VirtualMachine(executable, device)["main"](*input_tensors)
