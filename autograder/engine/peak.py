"""This core's practical peak, measured beside the candidate: a kernel of nothing but FMAs.

Each of ACCUMULATORS vector registers goes through STEPS dependent multiply-adds; with ten
independent chains the FMA units stay busy on every x86 core the course has met (latency 4-5
cycles, two pipes). Compiled for the same target as the candidate (so `--mcpu haswell` gives
the AVX2 peak), timed in the runner after the rounds, the best of a few samples. It is
measured every grading rather than cached: a number taken under other load, on another day,
would misstate the fraction it is compared with.
"""
from __future__ import annotations

import numpy as np

ACCUMULATORS = 10
STEPS = 4096
SAMPLES = 3


def lanes(target) -> int:
    """float32 lanes of the target CPU's widest vector register, from the features LLVM gives
    that CPU (llvm_get_vector_width answers for this host, whatever the target)."""
    from tvm.target import codegen

    features = set(codegen.llvm_get_cpu_features(target))
    if "avx512f" in features:
        return 16
    if "avx" in features:
        return 8
    return 4


def flop(width: int) -> int:
    return 2 * ACCUMULATORS * width * STEPS


def kernel(width: int):
    """The FMA-throughput PrimFunc for vectors of `width` float32 lanes."""
    from tvm.script import tirx as T

    size = ACCUMULATORS * width

    @T.prim_func(s_tir=True)
    def fma_peak(x: T.Buffer((size,), "float32"), out: T.Buffer((size,), "float32")):  # type: ignore[valid-type]  # TVMScript's
        T.func_attr({"global_symbol": "main", "tirx.noalias": True})
        acc = T.sblock_alloc_buffer((ACCUMULATORS, width), "float32", scope="local")
        for i, lane in T.grid(ACCUMULATORS, width):
            with T.sblock("load"):
                vi, vl = T.axis.remap("SS", [i, lane])
                acc[vi, vl] = x[vi * width + vl]
        for step in T.serial(STEPS):
            for i in T.unroll(ACCUMULATORS):
                for lane in T.vectorized(width):
                    with T.sblock("fma"):
                        vs = T.axis.opaque(STEPS, step)  # noqa: F841  (keeps the steps in order)
                        vi, vl = T.axis.remap("SS", [i, lane])
                        acc[vi, vl] = acc[vi, vl] * T.float32(0.9999) + T.float32(0.0001)
        for i, lane in T.grid(ACCUMULATORS, width):
            with T.sblock("store"):
                vi, vl = T.axis.remap("SS", [i, lane])
                out[vi * width + vl] = acc[vi, vl]

    return fma_peak


def compile_kernel(target):
    """The kernel compiled for a CPU target, at that CPU's vector width (`lanes`)."""
    import tvm

    return tvm.compile(tvm.IRModule({"main": kernel(lanes(target))}), target=target)


def best_seconds(session, module, width: int, min_repeat_ms: float) -> float:
    """The fastest of a few time_evaluator samples of the kernel."""
    from .bench import tvm_timer

    args = [session.tensor(np.ones(ACCUMULATORS * width, dtype=np.float32)),
            session.tensor(np.zeros(ACCUMULATORS * width, dtype=np.float32))]
    timer = tvm_timer(module, session.device, args, min_repeat_ms)
    return min(timer() for _ in range(SAMPLES))
