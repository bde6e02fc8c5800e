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
    # Speed relative to the yardstick (one thread per pixel), timed beside the candidate.
    speed_bands=(
        SpeedBand(1.2, 1 / 3),
        SpeedBand(1.5, 2 / 3),
        SpeedBand(2.0, 1.0),
    ),
    baseline="dlight",
    yardstick="bound_pixels",
    yardstick_title="one thread per pixel, fused in registers",
    # Shared memory per block is 48 KiB by default on every CUDA GPU since Kepler; a tile's
    # intermediates must fit beside the staged inputs.
    tile_budget_bytes=48 * 1024,
    calibration=(
        "Speed is credited against the yardstick (problems/yardsticks.py: bound_pixels, one thread "
        "per output pixel convolving, biasing and rectifying it in registers, no tiling or shared "
        "memory), compiled and timed on the same GPU in the same interleaved rounds as the "
        "candidate, so a GPU host or an RPC device needs no calibration of its own. The band "
        "edges (1.2x, 1.5x, 2.0x the yardstick's speed) are not yet measured on a GPU: no GPU was "
        "lent to the sessions that built this. On a GPU host, `tvm-course bench-grader --problem "
        "gpu-fused-conv --file course/solutions/gpu_bound.py` (and `--file` with the yardstick) print the ratio "
        "and its spread; the edges should sit four spreads from the reference schedules."
    ),
)
