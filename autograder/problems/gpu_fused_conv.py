"""gpu-fused-conv: the same fused function on a CUDA GPU.

Every block must be bound to GPU threads (an unbound block silently compiles for the host,
so it is rejected, naming the block). Speed is measured against TVM's default GPU schedule
(dlight's Fallback rule) of the same function.
"""
from .base import Problem, SpeedBand, Weights

PROBLEM = Problem(
    name="gpu-fused-conv",
    title="Tile and bind the fused Conv2d + Add + ReLU (CUDA)",
    target="cuda",
    summary=(
        "Write schedule(sch) that tiles 'conv2d_nchw', binds the tile loops to blockIdx / "
        "threadIdx, moves 'T_add' and 'compute' into the tile (reverse_compute_at) and binds "
        "their loops too. Staging inputs in shared memory (cache_read + set_scope) is the "
        "GPU's version of keeping a tile in fast memory."
    ),
    weights=Weights(correctness=0.4, structure=0.3, speed=0.3),
    speed_bands=(
        SpeedBand(1.1, 1 / 3),
        SpeedBand(1.5, 2 / 3),
        SpeedBand(2.0, 1.0),
    ),
    baseline="dlight",
    # Shared memory per block is 48 KiB by default on every CUDA GPU since Kepler; a tile's
    # intermediates must fit beside the staged inputs.
    tile_budget_bytes=48 * 1024,
    calibration=(
        "Not yet calibrated on a GPU: the course machines have none. The bands are set so "
        "that beating dlight's generic Fallback schedule by 10% earns a third of the speed "
        "points; rerun `tvm-course bench-grader --problem gpu-fused-conv` on a GPU host "
        "and move the band edges to at least four times the measured spread."
    ),
)
