"""checks.py: fusion from compacted buffers, interface, GPU binding and limits."""
from __future__ import annotations

import pytest

import solutions

from autograder import examples
from autograder.engine import checks


@pytest.fixture(scope="module")
def func():
    from autograder.problems.workload import fused_primfunc

    return fused_primfunc()


def scheduled(func, example: str | None = None, extra=None):
    from tvm import s_tir

    schedule = s_tir.Schedule(func)
    if example:
        namespace: dict = {}
        exec(examples.source(example) if example in examples.names() else solutions.source(example), namespace)
        namespace["schedule"](schedule)
    if extra:
        extra(schedule)
    return schedule


def cpu():
    import tvm

    return tvm.target.Target.from_device(tvm.cpu())


def cuda():
    """As the evaluator builds it: a CUDA target with the host CPU as its host."""
    import tvm

    return tvm.target.Target({"kind": "cuda", "arch": "sm_90"}, host=tvm.target.Target.from_device(tvm.cpu()))


def test_compaction_shrinks_the_journals_intermediates_to_one_tile(func):
    sizes = checks.compacted_buffer_bytes(scheduled(func, "journal").mod["main"], cpu())
    assert sizes["conv2d_nchw_intermediate"] == 16 * 16 * 4
    assert sizes["T_add_intermediate"] == 16 * 16 * 4
    assert sizes["pad_temp"] == 3 * 226 * 226 * 4  # upstream of the tiles: stays whole


def test_unscheduled_function_fails_fusion_with_advice(func):
    outcome = checks.check_fusion(func, func, cpu(), 32 * 1024)
    assert not outcome.passed
    assert "conv2d_nchw_intermediate" in outcome.message and "3.1 MiB" in outcome.message
    assert "reverse_compute_at" in outcome.message


def test_journal_and_blocked_schedules_pass_fusion(func):
    for name in ("journal", "blocked_vectorized"):
        outcome = checks.check_fusion(func, scheduled(func, name).mod["main"], cpu(), 32 * 1024)
        assert outcome.passed, outcome.message


def test_tiles_larger_than_the_budget_fail_fusion(func):
    # 112 x 112 tiles: Add and ReLU do run inside the tile loops, but a tile is 49 KiB.
    def big_tiles(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, *_ = sch.get_loops(conv)
        yo, yi = sch.split(yy, [None, 112])
        xo, xi = sch.split(xx, [None, 112])
        sch.reorder(yo, xo, yi, xi)
        sch.reverse_compute_at(sch.get_sblock("T_add"), xo)
        sch.reverse_compute_at(sch.get_sblock("compute"), xo)

    outcome = checks.check_fusion(func, scheduled(func, extra=big_tiles).mod["main"], cpu(), 32 * 1024)
    assert not outcome.passed and "49.0 KiB" in outcome.message


def test_inlining_the_add_counts_as_fused(func):
    def inline_add(sch):
        sch.compute_inline(sch.get_sblock("T_add"))

    outcome = checks.check_fusion(func, scheduled(func, "journal", inline_add).mod["main"], cpu(), 32 * 1024)
    assert outcome.passed and "T_add_intermediate: not allocated, inlined into 'compute'" in outcome.message


def test_a_stride_padded_tile_is_sized_by_the_memory_it_spans(func):
    """storage_align pads each row of the conv's 16x16 tile to 1023 floats: the tile holds
    1 KiB but its allocation spans 16 rows of 1023 floats, over the budget."""

    def align_rows(sch):
        sch.storage_align(sch.get_sblock("conv2d_nchw"), 0, axis=2, factor=1024, offset=1023)

    aligned = scheduled(func, "journal", align_rows).mod["main"]
    allocation = checks.allocations(aligned, cpu())["conv2d_nchw_intermediate"]
    assert (allocation.tile_bytes, allocation.bytes) == (16 * 16 * 4, 16 * 1023 * 4)
    outcome = checks.check_fusion(func, aligned, cpu(), 32 * 1024)
    assert not outcome.passed
    assert "conv2d_nchw_intermediate (written by 'conv2d_nchw') is 63.9 KiB allocated for a 1x1x16x16 tile of 1.0 KiB" in outcome.message
    assert "storage_align" in outcome.message
    # an alignment that pads a little stays within budget, and is said as allocated
    def align_a_little(sch):
        sch.storage_align(sch.get_sblock("conv2d_nchw"), 0, axis=2, factor=32, offset=17)

    outcome = checks.check_fusion(func, scheduled(func, "journal", align_a_little).mod["main"], cpu(), 32 * 1024)
    assert outcome.passed and "conv2d_nchw_intermediate: 1.1 KiB allocated for a 1x1x16x16 tile of 1.0 KiB" in outcome.message


def test_a_computation_the_schedule_deleted_is_said_gone_not_inlined(func):
    """decompose_padding given a loop that the padding shares with the conv, Add and ReLU
    removes them (TVM 0.27): nothing computes the conv's result any more."""

    def decompose_at_a_shared_loop(sch):
        x_outer = sch.get_loops(sch.get_sblock("conv2d_nchw"))[3]
        pad = sch.get_sblock("pad_temp")
        sch.compute_at(pad, x_outer)
        sch.decompose_padding(pad, sch.get_loops(pad)[3])

    outcome = checks.check_fusion(func, scheduled(func, "journal", decompose_at_a_shared_loop).mod["main"], cpu(), 32 * 1024)
    assert not outcome.passed and "inlined" not in outcome.message
    assert "block 'conv2d_nchw' is gone and nothing computes its values any more: no block left reads w" in outcome.message
    assert "blocks left: 'pad_temp_pad_const', 'pad_temp'" in outcome.message and "decompose_padding" in outcome.message


def test_a_vector_wider_than_any_register_file_is_refused_before_compiling(func):
    """A 50176-lane vectorize (the Add's whole 224x224 plane) made LLVM abort the evaluator:
    TVM keeps lanes in 16 bits. Refused, saying why, at any width over the bound."""

    def vectorize_a_plane(sch):
        _, _, h, w = sch.get_loops(sch.get_sblock("T_add"))
        sch.vectorize(sch.fuse(h, w))

    outcome = checks.check_vector_width(scheduled(func, extra=vectorize_a_plane).mod["main"])
    assert not outcome.passed
    assert "a loop of 50176 iterations around block 'T_add'" in outcome.message
    assert f"over the {checks.MAX_VECTOR_LANES} the grader compiles" in outcome.message
    assert "over 32767 lanes" in outcome.message and "sch.split(loop, [None, 16])" in outcome.message

    def vectorize(lanes):
        def apply(sch):
            _, inner = sch.split(sch.fuse(*sch.get_loops(sch.get_sblock("T_add"))), [None, lanes])
            sch.vectorize(inner)
        return apply

    wide = checks.check_vector_width(scheduled(func, extra=vectorize(checks.MAX_VECTOR_LANES * 2)).mod["main"])
    assert not wide.passed and "over 32767" not in wide.message
    for fine in (scheduled(func, "blocked_vectorized"), scheduled(func, extra=vectorize(checks.MAX_VECTOR_LANES)),
                 scheduled(func)):
        assert checks.check_vector_width(fine.mod["main"]).passed


def test_every_variants_padded_row_is_within_the_vector_bound():
    from autograder.problems.variants import WIDTHS

    assert max(WIDTHS) + 2 <= checks.MAX_VECTOR_LANES < checks.TVM_MAX_LANES


def test_compile_load_names_the_widest_vector_and_the_unrolled_copies(func):
    load = checks.compile_load(scheduled(func, "blocked_vectorized").mod["main"])
    assert load["widest_vector"] == 16 and load["vector_block"].startswith("conv2d_nchw")
    assert load["unrolled_copies"] == 4 * 3 * 3  # ff_inner x ry x rx around the update


def test_interface_is_kept_by_any_schedule(func):
    assert checks.check_interface(func, scheduled(func, "blocked_vectorized").mod["main"]).passed


def test_binding_names_every_unbound_block(func):
    outcome = checks.check_binding(scheduled(func))
    assert not outcome.passed
    assert "block 'pad_temp' is not bound" in outcome.message
    assert "'conv2d_nchw'" in outcome.message and "sch.bind" in outcome.message


def test_binding_hint_moves_a_producer_with_compute_at_and_a_consumer_with_reverse_compute_at(func):
    def bind_the_conv(sch, pad_at_thread=False, leave=()):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, *_ = sch.get_loops(conv)
        blocks, thread = sch.split(sch.fuse(nn, ff, yy, xx), [None, 128])
        sch.bind(blocks, "blockIdx.x")
        sch.bind(thread, "threadIdx.x")
        for name in ("T_add", "compute"):
            if name not in leave:
                sch.reverse_compute_at(sch.get_sblock(name), thread)
        if pad_at_thread:
            sch.compute_at(sch.get_sblock("pad_temp"), thread)

    pad = checks.check_binding(scheduled(func, extra=bind_the_conv)).message
    assert pad.startswith("block 'pad_temp' is not bound") and "sch.compute_at(b, <a bound loop of 'conv2d_nchw'>)" in pad
    assert "reverse_compute_at" not in pad  # pad_temp is a producer: reverse_compute_at cannot move it
    # the hint, followed, binds it
    assert checks.check_binding(scheduled(func, extra=lambda sch: bind_the_conv(sch, pad_at_thread=True))).passed
    relu = checks.check_binding(scheduled(func, extra=lambda sch: bind_the_conv(sch, pad_at_thread=True, leave=("compute",))))
    assert relu.message.startswith("block 'compute' is not bound")
    assert "sch.reverse_compute_at(b, <a bound loop of 'T_add'>)" in relu.message


def test_partly_bound_schedule_names_the_block_left_on_the_host(func):
    schedule = scheduled(func, "gpu_bound")
    assert checks.check_binding(schedule).passed

    def bind_all_but_relu(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yy, xx, *_ = sch.get_loops(conv)
        sch.bind(sch.fuse(nn, ff), "blockIdx.x")
        sch.bind(yy, "threadIdx.x")
        pad = sch.get_sblock("pad_temp")
        outer, inner = sch.split(sch.fuse(*sch.get_loops(pad)), [None, 256])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")
        add = sch.get_sblock("T_add")
        outer, inner = sch.split(sch.fuse(*sch.get_loops(add)), [None, 256])
        sch.bind(outer, "blockIdx.x")
        sch.bind(inner, "threadIdx.x")

    outcome = checks.check_binding(scheduled(func, extra=bind_all_but_relu))
    assert not outcome.passed
    assert outcome.message.startswith("block 'compute' is not bound")


def test_gpu_limits_catch_too_many_threads(func):
    def wide_blocks(sch):
        for name in ("pad_temp", "conv2d_nchw", "T_add", "compute"):
            block = sch.get_sblock(name)
            loops = sch.get_loops(block)
            spatial = loops[:4]
            outer, inner = sch.split(sch.fuse(*spatial), [None, 2048])
            sch.bind(outer, "blockIdx.x")
            sch.bind(inner, "threadIdx.x")

    outcome = checks.check_gpu_limits(scheduled(func, extra=wide_blocks).mod["main"], cuda())
    assert not outcome.passed and "1024 threads" in outcome.message
    assert checks.check_gpu_limits(scheduled(func, "gpu_bound").mod["main"], cuda()).passed


def test_gpu_fusion_needs_a_fast_scope(func):
    """Bound tiles alone leave the global intermediates whole; the hint says which scope shrinks them."""

    def journal_bound_without_scope(sch):
        conv = sch.get_sblock("conv2d_nchw")
        nn, ff, yo, xo, yi, xi, *_ = sch.get_loops(conv)
        sch.bind(sch.fuse(nn, ff, yo, xo), "blockIdx.x")
        sch.bind(sch.fuse(yi, xi), "threadIdx.x")

    unscoped = scheduled(func, "journal", journal_bound_without_scope).mod["main"]
    outcome = checks.check_fusion(func, unscoped, cuda(), 48 * 1024)
    assert not outcome.passed and "set_scope(sch.get_sblock('conv2d_nchw'), 0, 'local')" in outcome.message
    assert checks.check_fusion(func, scheduled(func, "gpu_bound").mod["main"], cuda(), 48 * 1024).passed


def test_human_bytes():
    assert checks.human_bytes(1024) == "1.0 KiB"
    assert checks.human_bytes(3 * 2**20 + 2**19) == "3.5 MiB"
    assert checks.human_bytes(12) == "12 B"


def bind_only_to_vthreads(sch):
    for name in ("pad_temp", "conv2d_nchw", "T_add", "compute"):
        sch.bind(sch.get_loops(sch.get_sblock(name))[0], "vthread.x")


def test_a_block_under_vthreads_alone_is_not_bound(func):
    outcome = checks.check_binding(scheduled(func, extra=bind_only_to_vthreads))
    assert not outcome.passed
    assert "block 'pad_temp' is bound only to virtual threads (vthread.x)" in outcome.message
    assert "blockIdx.x" in outcome.message and "threadIdx.x" in outcome.message


def test_after_lowering_the_host_may_touch_no_device_buffer(func):
    """Defence behind the binding check: whatever the reason a loop nest stays on the host,
    the lowered host function that still stores into a tensor is caught."""
    good = checks.check_host_touches_no_device_buffer(scheduled(func, "gpu_bound").mod["main"], cuda())
    assert good.passed, good.message
    for escaped in (scheduled(func, extra=bind_only_to_vthreads), scheduled(func)):
        outcome = checks.check_host_touches_no_device_buffer(escaped.mod["main"], cuda())
        assert not outcome.passed and "host function 'main'" in outcome.message


def test_the_ir_walk_survives_a_nest_deeper_than_pythons_recursion_limit(func):
    import sys

    def split_deep(sch):
        loop = sch.get_loops(sch.get_sblock("compute"))[-1]
        for _ in range(200):
            loop = sch.split(loop, [None, 1])[1]

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(150)  # what a deep nest does to a recursive walk, at the default limit
    try:
        found = checks.blocks(scheduled(func, extra=split_deep).mod["main"])
    finally:
        sys.setrecursionlimit(limit)
    assert {b.name_hint for b in found} >= {"conv2d_nchw", "T_add", "compute"}


def test_a_buffer_any_primitive_adds_is_judged_too(func):
    """rfactor keeps the conv's partial sums in a new whole-tensor buffer (9.2 MiB) while the
    named intermediates are tile-sized: fusion judges every buffer allocated, whatever made it."""

    def rfactor_the_channels(sch):
        conv = sch.get_sblock("conv2d_nchw")
        sch.rfactor(sch.get_loops(conv)[-3], 0)

    outcome = checks.check_fusion(func, scheduled(func, "journal", rfactor_the_channels).mod["main"], cpu(), 32 * 1024)
    assert not outcome.passed
    assert ".rf" in outcome.message and "MiB" in outcome.message and "rfactor" in outcome.message


def test_a_copy_of_an_input_or_the_padding_is_not_an_intermediate(func):
    def copy_the_padding_whole(sch):
        sch.cache_read(sch.get_sblock("conv2d_nchw"), 0, "global")

    outcome = checks.check_fusion(func, scheduled(func, "journal", copy_the_padding_whole).mod["main"], cpu(), 32 * 1024)
    assert outcome.passed, outcome.message


def test_sized_from_strides_where_flattening_is_not_reached_the_same(func):
    """The fallback for a function lowering refuses (the compile then says why) sizes as
    flattening does: checked against it on a padded tile and a plain one."""
    def align_rows(sch):
        sch.storage_align(sch.get_sblock("conv2d_nchw"), 0, axis=2, factor=1024, offset=1023)

    aligned = scheduled(func, "journal", align_rows).mod["main"]
    flattened = checks.allocations(aligned, cpu())
    for block in checks.blocks(checks.compacted_module(aligned, cpu())["main"]):
        for buffer in block.alloc_buffers:
            assert checks._from_strides(buffer) == flattened[buffer.name]
