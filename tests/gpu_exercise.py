"""Lesson 3's exercise 2 as a student writes it, for tests: one thread per output pixel, 128 a
block, the bias and ReLU computed where each thread's pixel is (BOUND), the padding bound to
threads of its own (PADDING); and the line the gpu-tiling notebook's step 1 adds to earn the
fusion points, each thread's own intermediates in its registers (LOCAL). Not in the package."""
from __future__ import annotations

BOUND = '''def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    block_loop, thread_loop = sch.split(sch.fuse(nn, ff, yy, xx), factors=[None, 128])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
    sch.reverse_compute_at(sch.get_sblock("T_add"), thread_loop)
    sch.reverse_compute_at(sch.get_sblock("compute"), thread_loop)
'''
PADDING = '''    pad = sch.get_sblock("pad_temp")
    block_loop, thread_loop = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, 128])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
'''
LOCAL = '''    sch.set_scope(conv, 0, "local")
    sch.set_scope(sch.get_sblock("T_add"), 0, "local")
'''
AS_WRITTEN = BOUND + PADDING  # correct, but its intermediates are whole tensors in global memory
WITH_LOCAL = BOUND + LOCAL + PADDING
