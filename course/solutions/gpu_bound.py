"""The journal's tiling made real on a GPU, by lesson 3's rule: shared memory for what several
threads read, registers for what one thread alone uses.

One thread block per (4 output channels, 16x16 tile); one thread per pixel of the tile, which
computes that pixel's 4 channels. The block's threads first copy the tile's padded input (3
channels, 18x18 with the halo) and the 4 channels' weights into shared memory, together, one
value each at a time: every input value there is read by up to 9 threads, every weight by all
256. Each thread then keeps its 4 sums, bias-adds and ReLUs in registers (`local`) and writes
its 4 outputs. The padding is computed while staging, so there is one kernel and one barrier.
lessons/gpu.py's `counted_costs` reads what this saves from the lowered kernels, beside the
yardstick's; whether it is faster on a GPU, and by how much, only a GPU can say
(scripts/gpu_benchmark.py).
"""


def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    f_outer, f_inner = sch.split(ff, factors=[None, 4])
    y_outer, y_inner = sch.split(yy, factors=[None, 16])
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    # The 4 channels innermost: each input value read from shared memory serves 4 sums.
    sch.reorder(f_outer, y_outer, x_outer, y_inner, x_inner, rc, ry, rx, f_inner)
    tile = sch.fuse(nn, f_outer, y_outer, x_outer)
    pixel = sch.fuse(y_inner, x_inner)
    sch.bind(tile, "blockIdx.x")
    sch.bind(pixel, "threadIdx.x")
    # Each thread's own sums, bias-adds and ReLUs: registers.
    sch.reverse_compute_at(sch.get_sblock("T_add"), pixel)
    sch.reverse_compute_at(sch.get_sblock("compute"), pixel)
    sch.set_scope(conv, 0, "local")
    sch.set_scope(sch.get_sblock("T_add"), 0, "local")
    # What the block's threads share: the padded input tile and the weights, staged by all of them.
    pad = sch.get_sblock("pad_temp")
    sch.set_scope(pad, 0, "shared")
    sch.compute_at(pad, tile)
    weights = sch.cache_read(conv, 1, "shared")
    sch.compute_at(weights, tile)
    for staged in (pad, weights):
        _, fetcher = sch.split(sch.fuse(*sch.get_loops(staged)[1:]), factors=[None, 256])
        sch.bind(fetcher, "threadIdx.x")
    sch.decompose_reduction(conv, rc)
