import pytest

import solutions

from autograder.lessons import ir_views, schedules


def test_loop_nest_keeps_loops_and_blocks_only(fused_func):
    nest = ir_views.loop_nest(fused_func)
    assert nest.splitlines() == [
        "for i0, i1, i2, i3 in T.grid(1, 3, 226, 226):",
        "    block pad_temp",
        "for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 16, 224, 224, 3, 3, 3):",
        "    block conv2d_nchw",
        "for ax0, ax1, ax2, ax3 in T.grid(1, 16, 224, 224):",
        "    block T_add",
        "for i0, i1, i2, i3 in T.grid(1, 16, 224, 224):",
        "    block compute",
    ]


def test_journal_diff_shows_the_tile_loop_and_tile_sized_consumers(fused_func):
    journal = schedules.apply(fused_func, schedules.example("journal")).mod["main"]
    diff = ir_views.diff(ir_views.loop_nest(fused_func), ir_views.loop_nest(journal))
    assert "+for nn, ff, yy_0, xx_0 in T.grid(1, 16, 14, 14):" in diff
    assert "+    for yy_1, xx_1, rc, ry, rx in T.grid(16, 16, 3, 3, 3):" in diff
    assert diff.count("+    for ax0, ax1 in T.grid(16, 16):") == 2
    assert " for i0, i1, i2, i3 in T.grid(1, 3, 226, 226):" in diff  # pad_temp unchanged


def test_bound_loops_show_their_thread_axis(fused_func):
    bound = schedules.apply(fused_func, solutions.schedule("gpu_bound")).mod["main"]
    nest = ir_views.loop_nest(bound)
    assert "in blockIdx.x (784):" in nest  # 4 channels x 196 tiles of 16x16
    assert "in threadIdx.x (256):" in nest


def test_compaction_shrinks_the_journal_intermediates_to_one_tile(lab, fused_func):
    journal = schedules.apply(fused_func, schedules.example("journal")).mod["main"]
    before = {a.buffer: a for a in ir_views.allocations(fused_func, lab.target)}
    after = {a.buffer: a for a in ir_views.allocations(journal, lab.target)}
    assert before["conv2d_nchw_intermediate"].nbytes == 16 * 224 * 224 * 4
    assert before["conv2d_nchw_intermediate"].inside == ""
    for name in ("conv2d_nchw_intermediate", "T_add_intermediate"):
        assert after[name].shape == (1, 1, 16, 16)
        assert after[name].nbytes == 1024
        assert after[name].inside == "nn, ff, yy_0, xx_0"
    assert after["pad_temp"].nbytes == 3 * 226 * 226 * 4


def test_compaction_agrees_with_the_autograder_check(lab, fused_func):
    from autograder.engine.checks import compacted_buffer_bytes

    journal = schedules.apply(fused_func, schedules.example("journal")).mod["main"]
    ours = {a.buffer: a.nbytes for a in ir_views.allocations(journal, lab.target)}
    assert ours == compacted_buffer_bytes(journal, lab.target)


def test_gpu_staged_inputs_get_shared_scope_and_intermediates_local(fused_func):
    from autograder.lessons import gpu

    bound = schedules.apply(fused_func, solutions.schedule("gpu_bound")).mod["main"]
    scopes = {a.buffer: a.scope for a in ir_views.allocations(bound, gpu.cuda_target())}
    assert scopes == {"pad_temp_shared": "shared", "w_shared": "shared",
                      "conv2d_nchw_intermediate_local": "local", "T_add_intermediate_local": "local"}


def test_tables_and_excerpts(lab, fused_func):
    journal = schedules.apply(fused_func, schedules.example("journal")).mod["main"]
    table = ir_views.compare_allocations({"unscheduled": fused_func, "journal": journal}, lab.target)
    assert table.column("intermediate buffer")[-1] == "total"
    assert table.column("journal")[1] == "1.0 KiB"
    excerpt = ir_views.lowered_excerpt(journal, lab.target, r"for nn, ff, yy_0, xx_0", lines=6)
    assert "T.sblock_alloc_buffer((1, 1, 16, 16))" in excerpt
    with pytest.raises(ValueError, match="no line matches"):
        ir_views.excerpt("a\nb", "c", 1)
