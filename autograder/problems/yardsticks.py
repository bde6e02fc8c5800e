"""Reference schedules timed beside every submission, so that speed credit means the same
on every machine: a band says "this fast compared with the yardstick, on this CPU, now".

A yardstick is a fair, ordinary schedule, not the best one: students can read this file, and
matching a yardstick earns no speed credit (see each problem's calibration note). It is
trusted code, applied by the evaluator to the pristine workload; it never goes through the
trace schema.
"""
from __future__ import annotations


def vectorised_tiles(sch) -> None:
    """CPU: Add and ReLU fused into 1-channel x 16-pixel tiles, each row of a tile one vector;
    the 3x3 window unrolled. No register blocking across channels: one accumulator chain per
    tile, so it is as fast as the FMA latency allows, on every vector width alike."""
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    xx_outer, xx_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(nn, ff, yy, xx_outer, rc, ry, rx, xx_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), xx_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), xx_outer)
    sch.vectorize(xx_inner)
    sch.unroll(rx)
    sch.unroll(ry)
    sch.decompose_reduction(conv, rc)
    for name in ("T_add", "compute"):
        sch.vectorize(sch.get_loops(sch.get_sblock(name))[-1])


def bound_pixels(sch) -> None:
    """GPU: one thread per output pixel, 256 pixels a block; each thread convolves, biases and
    rectifies its pixel in registers. No tiling, nothing staged in shared memory: the direct
    mapping a first CUDA kernel would use."""
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    block_loop, thread_loop = sch.split(sch.fuse(nn, ff, yy, xx), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
    sch.reverse_compute_at(sch.get_sblock("T_add"), thread_loop)
    sch.reverse_compute_at(sch.get_sblock("compute"), thread_loop)
    sch.set_scope(conv, 0, "local")
    sch.set_scope(sch.get_sblock("T_add"), 0, "local")
    pad = sch.get_sblock("pad_temp")
    block_loop, thread_loop = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")


YARDSTICKS = {"vectorised_tiles": vectorised_tiles, "bound_pixels": bound_pixels}


def as_submission(name: str) -> str:
    """A yardstick's source as a student would hand it in: `def schedule(sch):`."""
    import inspect

    source = inspect.getsource(YARDSTICKS[name])
    return source.replace(f"def {name}(sch) -> None:", "def schedule(sch):", 1)
