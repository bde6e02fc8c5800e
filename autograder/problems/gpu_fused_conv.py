"""gpu-fused-conv: the same fused function on a CUDA GPU.

Every block must be bound to GPU threads (an unbound block silently compiles for the host,
so it is rejected, naming the block). Speed is credited against the yardstick (one thread per
output pixel, in registers: problems/yardsticks.py) timed beside the candidate; TVM's default GPU
schedule (dlight's Fallback rule) is the baseline a speedup is also reported against. The speed
bands are provisional until a GPU has measured the reference (see the calibration note).
"""
from .base import Problem, SpeedBand, Weights

PROBLEM = Problem(
    name="gpu-fused-conv",
    title="Tile and bind the fused Conv2d + Add + ReLU (CUDA)",
    target="cuda",
    summary=(
        "Write schedule(sch) that binds every block to GPU threads (blockIdx / threadIdx), runs "
        "'T_add' and 'compute' in the thread that computed the sum (reverse_compute_at) with the "
        "intermediates in that thread's registers (set_scope 'local'), and stages what the threads of "
        "a block read in common, the input tile with its halo and the weights, in shared memory "
        "(cache_read or set_scope 'shared', compute_at the block's loop, fetched by all its threads)."
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
        "edges (1.2x, 1.5x, 2.0x the yardstick's speed) are provisional: no GPU was lent to the "
        "sessions that built this, so no GPU has timed the reference schedule (course/solutions/"
        "gpu_bound.py: input tile and weights staged in shared memory, 4 outputs a thread, "
        "intermediates in registers) against the yardstick. What is known is counted, not timed "
        "(lessons/gpu.py counted_costs, on the journal's shape): one kernel against two, about 13 "
        "bytes of global loads and stores per output against about 225, one barrier, 4 outputs a "
        "thread against 1. The speed points stay pending until a GPU grades them. To measure, run "
        "`python -m autograder.engine.gpu_benchmark export build/gpu-benchmark` here and "
        "`python build/gpu-benchmark/time_kernels.py` on the GPU machine (CuPy, no TVM there): it "
        "times the reference and the yardstick interleaved and prints the band edges its "
        "measurements support (docs/speed.md)."
    ),
)
