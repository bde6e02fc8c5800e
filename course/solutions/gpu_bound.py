"""The journal's tiling, made real on a GPU: tiles bound to thread blocks, pixels to threads.

One thread block per (channel, 16x16 tile); one thread per pixel of the tile. The conv and
bias-add intermediates live in shared memory, so a tile is convolved, biased and rectified
without its intermediates touching global memory. The padding block gets its own kernel.
"""


def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 16])
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)
    # Keep the tile's intermediates in shared memory: a global buffer never shrinks to a tile.
    sch.set_scope(conv, 0, "shared")
    sch.set_scope(sch.get_sblock("T_add"), 0, "shared")
    sch.bind(sch.fuse(nn, ff, y_outer, x_outer), "blockIdx.x")
    sch.bind(sch.fuse(y_inner, x_inner), "threadIdx.x")
    for name in ("T_add", "compute"):
        loops = sch.get_loops(sch.get_sblock(name))
        sch.bind(sch.fuse(*loops[-2:]), "threadIdx.x")
    pad = sch.get_sblock("pad_temp")
    block_loop, thread_loop = sch.split(sch.fuse(*sch.get_loops(pad)), factors=[None, 256])
    sch.bind(block_loop, "blockIdx.x")
    sch.bind(thread_loop, "threadIdx.x")
