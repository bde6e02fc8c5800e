"""The lab journal's schedule: 16x16 spatial tiles, Add and ReLU computed inside each tile."""


def schedule(sch):
    conv = sch.get_sblock("conv2d_nchw")
    nn, ff, yy, xx, rc, ry, rx = sch.get_loops(conv)
    y_outer, y_inner = sch.split(yy, factors=[None, 16])  # 224 = 14 x 16
    x_outer, x_inner = sch.split(xx, factors=[None, 16])
    sch.reorder(y_outer, x_outer, y_inner, x_inner)
    sch.reverse_compute_at(sch.get_sblock("T_add"), x_outer)
    sch.reverse_compute_at(sch.get_sblock("compute"), x_outer)
