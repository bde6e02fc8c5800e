"""A schedule MetaSchedule found for the course's workload, as it printed it: for tests.

Made with TVM 0.27's `meta_schedule.tune_tir` on `fused_primfunc()`, the default design space
for the host CPU (`{**Target.from_device(tvm.cpu()).export(), "num-cores": 1}`), 8 trials, then
`print(compile_tir(database, func, target).trace)`. Its `meta_schedule.*` annotations are the
tuner's hints; after `enter_postproc()` come the primitives its post-processors applied.
"""
from __future__ import annotations

PRINTED = '''\
# from tvm import s_tir
def apply_trace(sch: s_tir.Schedule) -> None:
  b0 = sch.get_sblock(name="pad_temp", func_name="main")
  b1 = sch.get_sblock(name="conv2d_nchw", func_name="main")
  b2 = sch.get_sblock(name="T_add", func_name="main")
  b3 = sch.get_sblock(name="root", func_name="main")
  sch.compute_inline(block=b2)
  sch.annotate(block_or_loop=b1, ann_key="meta_schedule.tiling_structure", ann_val="SSRSRS")
  l4, l5, l6, l7, l8, l9, l10 = sch.get_loops(block=b1)
  v11, v12, v13, v14 = sch.sample_perfect_tile(loop=l4, n=4, max_innermost_factor=64, decision=[1, 1, 1, 1])
  l15, l16, l17, l18 = sch.split(loop=l4, factors=[v11, v12, v13, v14], preserve_unit_iters=True, disable_predication=False)
  v19, v20, v21, v22 = sch.sample_perfect_tile(loop=l5, n=4, max_innermost_factor=64, decision=[1, 8, 2, 1])
  l23, l24, l25, l26 = sch.split(loop=l5, factors=[v19, v20, v21, v22], preserve_unit_iters=True, disable_predication=False)
  v27, v28, v29, v30 = sch.sample_perfect_tile(loop=l6, n=4, max_innermost_factor=64, decision=[1, 1, 224, 1])
  l31, l32, l33, l34 = sch.split(loop=l6, factors=[v27, v28, v29, v30], preserve_unit_iters=True, disable_predication=False)
  v35, v36, v37, v38 = sch.sample_perfect_tile(loop=l7, n=4, max_innermost_factor=64, decision=[1, 4, 4, 14])
  l39, l40, l41, l42 = sch.split(loop=l7, factors=[v35, v36, v37, v38], preserve_unit_iters=True, disable_predication=False)
  v43, v44 = sch.sample_perfect_tile(loop=l8, n=2, max_innermost_factor=64, decision=[3, 1])
  l45, l46 = sch.split(loop=l8, factors=[v43, v44], preserve_unit_iters=True, disable_predication=False)
  v47, v48 = sch.sample_perfect_tile(loop=l9, n=2, max_innermost_factor=64, decision=[1, 3])
  l49, l50 = sch.split(loop=l9, factors=[v47, v48], preserve_unit_iters=True, disable_predication=False)
  v51, v52 = sch.sample_perfect_tile(loop=l10, n=2, max_innermost_factor=64, decision=[1, 3])
  l53, l54 = sch.split(loop=l10, factors=[v51, v52], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l15, l23, l31, l39, l16, l24, l32, l40, l45, l49, l53, l17, l25, l33, l41, l46, l50, l54, l18, l26, l34, l42)
  b55, = sch.get_consumers(block=b1)
  sch.reverse_compute_at(block=b55, loop=l40, preserve_unit_loops=True, index=-1)
  sch.annotate(block_or_loop=b3, ann_key="meta_schedule.parallel", ann_val=16)
  sch.annotate(block_or_loop=b3, ann_key="meta_schedule.vectorize", ann_val=64)
  v56 = sch.sample_categorical(candidates=[0, 16, 64, 512], probs=[0.25, 0.25, 0.25, 0.25], decision=2)
  sch.annotate(block_or_loop=b3, ann_key="meta_schedule.unroll_explicit", ann_val=v56)
  l57 = sch.sample_compute_location(block=b0, decision=8)
  sch.compute_at(block=b0, loop=l57, preserve_unit_loops=True, index=-1)
  sch.enter_postproc()
  b58 = sch.get_sblock(name="root", func_name="main")
  sch.unannotate(block_or_loop=b58, ann_key="meta_schedule.parallel")
  sch.unannotate(block_or_loop=b58, ann_key="meta_schedule.vectorize")
  sch.unannotate(block_or_loop=b58, ann_key="meta_schedule.unroll_explicit")
  b59, b60, b61 = sch.get_child_blocks(b58)
  l62, l63, l64, l65, l66, l67, l68, l69, l70, l71, l72, l73, l74 = sch.get_loops(block=b59)
  l75 = sch.fuse(l62, l63, l64, l65, l66, l67, l68, l69, preserve_unit_iters=True)
  sch.parallel(loop=l75)
  l76 = sch.fuse(l74, preserve_unit_iters=True)
  sch.vectorize(loop=l76)
  l77, l78, l79, l80, l81, l82, l83, l84, l85, l86, l87, l88, l89, l90, l91 = sch.get_loops(block=b60)
  l92 = sch.fuse(l77, preserve_unit_iters=True)
  sch.parallel(loop=l92)
  l93 = sch.fuse(l91, preserve_unit_iters=True)
  sch.vectorize(loop=l93)
  sch.annotate(block_or_loop=l92, ann_key="pragma_auto_unroll_max_step", ann_val=64)
  sch.annotate(block_or_loop=l92, ann_key="pragma_unroll_explicit", ann_val=1)
  l94, l95, l96, l97, l98 = sch.get_loops(block=b61)
  l99 = sch.fuse(l98, preserve_unit_iters=True)
  sch.vectorize(loop=l99)
  b100 = sch.get_sblock(name="conv2d_nchw", func_name="main")
  l101, l102, l103, l104, l105, l106, l107, l108, l109, l110, l111, l112, l113, l114, l115 = sch.get_loops(block=b100)
  b116 = sch.decompose_reduction(block=b100, loop=l102)
'''


def submission(printed: str = PRINTED) -> str:
    """The printed trace pasted as a student's `schedule(sch)`: its body, as printed."""
    lines = printed.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("def apply_trace("))
    return "\n".join(["def schedule(sch):", *lines[start + 1:]]) + "\n"


def with_line_after(anchor: str, line: str, printed: str = PRINTED) -> str:
    """The printed trace with `line` inserted after the first line that contains `anchor`."""
    lines = printed.splitlines()
    at = next(i for i, text in enumerate(lines) if anchor in text)
    return "\n".join([*lines[:at + 1], "  " + line, *lines[at + 1:]]) + "\n"

# One of MetaSchedule's GPU design spaces for gpu-fused-conv, as it printed it: TVM 0.27's
# TuneContext(space_generator="post-order-apply") on `fused_primfunc()` for
# Target({"kind": "cuda", "arch": "sm_90", "max_threads_per_block": 1024,
# "max_shared_memory_per_block": 49152, "thread_warp_size": 32}, host="llvm"), rand_state=5, the
# second space (multi-level tiling with shared-memory fetches and software pipelining), whose
# sampled tiles are within the GPU's limits; `print(sch.trace)`. It was never post-processed: its
# cooperative_fetch hints are unconsumed.
GPU_DESIGN_SPACE = '''\
# from tvm import s_tir
def apply_trace(sch: s_tir.Schedule) -> None:
  b0 = sch.get_sblock(name="pad_temp", func_name="main")
  b1 = sch.get_sblock(name="conv2d_nchw", func_name="main")
  b2 = sch.get_sblock(name="T_add", func_name="main")
  b3 = sch.get_sblock(name="compute", func_name="main")
  b4 = sch.get_sblock(name="root", func_name="main")
  sch.annotate(block_or_loop=b1, ann_key="meta_schedule.tiling_structure", ann_val="SSSRRSRS")
  l5, l6, l7, l8, l9, l10, l11 = sch.get_loops(block=b1)
  v12, v13, v14, v15, v16 = sch.sample_perfect_tile(loop=l5, n=5, max_innermost_factor=64, decision=[1, 1, 1, 1, 1])
  l17, l18, l19, l20, l21 = sch.split(loop=l5, factors=[v12, v13, v14, v15, v16], preserve_unit_iters=True, disable_predication=False)
  v22, v23, v24, v25, v26 = sch.sample_perfect_tile(loop=l6, n=5, max_innermost_factor=64, decision=[2, 1, 4, 2, 1])
  l27, l28, l29, l30, l31 = sch.split(loop=l6, factors=[v22, v23, v24, v25, v26], preserve_unit_iters=True, disable_predication=False)
  v32, v33, v34, v35, v36 = sch.sample_perfect_tile(loop=l7, n=5, max_innermost_factor=64, decision=[4, 28, 2, 1, 1])
  l37, l38, l39, l40, l41 = sch.split(loop=l7, factors=[v32, v33, v34, v35, v36], preserve_unit_iters=True, disable_predication=False)
  v42, v43, v44, v45, v46 = sch.sample_perfect_tile(loop=l8, n=5, max_innermost_factor=64, decision=[14, 1, 1, 8, 2])
  l47, l48, l49, l50, l51 = sch.split(loop=l8, factors=[v42, v43, v44, v45, v46], preserve_unit_iters=True, disable_predication=False)
  v52, v53, v54 = sch.sample_perfect_tile(loop=l9, n=3, max_innermost_factor=64, decision=[3, 1, 1])
  l55, l56, l57 = sch.split(loop=l9, factors=[v52, v53, v54], preserve_unit_iters=True, disable_predication=False)
  v58, v59, v60 = sch.sample_perfect_tile(loop=l10, n=3, max_innermost_factor=64, decision=[1, 3, 1])
  l61, l62, l63 = sch.split(loop=l10, factors=[v58, v59, v60], preserve_unit_iters=True, disable_predication=False)
  v64, v65, v66 = sch.sample_perfect_tile(loop=l11, n=3, max_innermost_factor=64, decision=[3, 1, 1])
  l67, l68, l69 = sch.split(loop=l11, factors=[v64, v65, v66], preserve_unit_iters=True, disable_predication=False)
  sch.reorder(l17, l27, l37, l47, l18, l28, l38, l48, l19, l29, l39, l49, l55, l61, l67, l56, l62, l68, l20, l30, l40, l50, l57, l63, l69, l21, l31, l41, l51)
  l70 = sch.fuse(l17, l27, l37, l47, preserve_unit_iters=True)
  sch.bind(loop=l70, thread_axis="blockIdx.x")
  l71 = sch.fuse(l18, l28, l38, l48, preserve_unit_iters=True)
  sch.bind(loop=l71, thread_axis="vthread.x")
  l72 = sch.fuse(l19, l29, l39, l49, preserve_unit_iters=True)
  sch.bind(loop=l72, thread_axis="threadIdx.x")
  sch.annotate(block_or_loop=b1, ann_key="meta_schedule.thread_extent_low_inclusive", ann_val=32)
  sch.annotate(block_or_loop=b1, ann_key="meta_schedule.thread_extent_high_inclusive", ann_val=1024)
  b73 = sch.cache_write(block=b1, write_buffer_index=0, storage_scope="local")
  sch.reverse_compute_at(block=b73, loop=l72, preserve_unit_loops=True, index=-1)
  b74 = sch.cache_read(block=b1, read_buffer_index=0, storage_scope="shared", consumer_blocks=[b1])
  sch.compute_at(block=b74, loop=l67, preserve_unit_loops=True, index=-1)
  l75, l76, l77, l78, l79, l80, l81, l82, l83, l84 = sch.get_loops(block=b74)
  l85 = sch.fuse(l81, l82, l83, l84, preserve_unit_iters=True)
  v86 = sch.sample_categorical(candidates=[1, 2, 3, 4], probs=[0.25, 0.25, 0.25, 0.25], decision=1)
  sch.annotate(block_or_loop=b74, ann_key="meta_schedule.cooperative_fetch", ann_val=v86)
  b87 = sch.cache_read(block=b1, read_buffer_index=1, storage_scope="shared", consumer_blocks=[b1])
  sch.compute_at(block=b87, loop=l67, preserve_unit_loops=True, index=-1)
  l88, l89, l90, l91, l92, l93, l94, l95, l96, l97 = sch.get_loops(block=b87)
  l98 = sch.fuse(l94, l95, l96, l97, preserve_unit_iters=True)
  v99 = sch.sample_categorical(candidates=[1, 2, 3, 4], probs=[0.25, 0.25, 0.25, 0.25], decision=1)
  sch.annotate(block_or_loop=b87, ann_key="meta_schedule.cooperative_fetch", ann_val=v99)
  l100 = sch.fuse(l55, l61, l67, preserve_unit_iters=True)
  sch.annotate(block_or_loop=l100, ann_key="software_pipeline_stage", ann_val=[0, 0, 2])
  sch.annotate(block_or_loop=l100, ann_key="software_pipeline_order", ann_val=[0, 1, 2])
  sch.annotate(block_or_loop=l100, ann_key="software_pipeline_async_stages", ann_val=[0])
  sch.reverse_compute_inline(block=b3)
  sch.reverse_compute_inline(block=b2)
  sch.compute_inline(block=b0)
  v101 = sch.sample_categorical(candidates=[0, 16, 32, 64, 128, 256, 512, 1024], probs=[0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125, 0.125], decision=7)
  sch.annotate(block_or_loop=b4, ann_key="meta_schedule.unroll_explicit", ann_val=v101)
'''
