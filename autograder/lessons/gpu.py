"""CUDA builds that work without a GPU, and timing only where one exists.

`tvm.compile` for a CUDA target produces CUDA C source on any machine; loading and running the
kernel needs the CUDA driver and a GPU. A schedule whose loops are not bound to GPU threads
raises nothing: TVM quietly compiles it for the host CPU, with no device module at all.
"""
from __future__ import annotations

import re

CUDA_ARCH = "sm_90"


def cuda_target():
    """A CUDA target (Hopper) for compiling; needs no GPU on this machine."""
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": CUDA_ARCH})


def has_device_code(executable) -> bool:
    """True when the build carries a device (CUDA) module; False when it all ran on the host."""
    return len(executable.mod.imports) > 0


def kernel_source(executable) -> str:
    """The CUDA C source of the device module."""
    if not has_device_code(executable):
        raise ValueError("this build has no device module: its loops were never bound to GPU threads")
    return executable.mod.imports[0].inspect_source()


def kernels_only(source: str) -> str:
    """The `__global__` kernel definitions, without TVM's header of macros and includes."""
    lines = source.splitlines()
    definitions = [i for i, line in enumerate(lines) if "__global__" in line and line.rstrip().endswith("{")]
    if not definitions:
        raise ValueError("no __global__ kernel definition in the source")
    return "\n".join(lines[definitions[0] :]).strip()


def source_facts(source: str) -> dict[str, object]:
    """Counts a reader checks first in a kernel: kernels, shared arrays and their bytes, barriers."""
    shared = re.findall(r"__shared__[^;]*?float\s+(\w+)\[(\d+)\]", source)
    return {
        "kernels": len(re.findall(r"__global__[^;{]*\{", source)),
        "shared arrays": [name for name, _ in shared],
        "shared bytes per block": sum(4 * int(n) for _, n in shared),
        "__syncthreads() calls": source.count("__syncthreads()"),
        "threads per block, by kernel": dict(
            (name, int(threads)) for threads, name in re.findall(r"__launch_bounds__\((\d+)\)\s+(\w+)\([^;]*?\{", source)
        ),
    }


def timing_report(executable, data) -> str:
    """The kernel's time on this machine's GPU, or a plain statement that there is none."""
    from .session import cuda_device_name

    seconds = time_on_gpu(executable, data)
    if seconds is None:
        return (
            "No CUDA GPU on this machine (tvm.cuda(0).exist is False): the kernel above was compiled "
            "to CUDA source, not run, and no GPU time is shown."
        )
    return f"On {cuda_device_name()}: {seconds * 1e3:.3f} ms per run (median; output checked against the reference)."


def time_on_gpu(executable, data, rounds: int = 7) -> float | None:
    """Median seconds per run on CUDA device 0, output checked; None where there is no GPU."""
    from .session import cuda_device_name

    if cuda_device_name() is None:
        return None
    import numpy as np
    import tvm

    device = tvm.cuda(0)
    arguments = data.primfunc_arguments(device)
    executable["main"](*arguments)
    device.sync()
    if not data.is_correct(arguments[-1]):
        raise AssertionError(f"the GPU output is wrong: max error {data.max_error(arguments[-1]):.3g}")
    evaluator = executable.mod.time_evaluator("main", device, number=1, repeat=rounds, min_repeat_ms=20)
    return float(np.median(evaluator(*arguments).results))
