"""The instructor's reference solutions (course/solutions/), for tests: not in the package."""
from __future__ import annotations

from pathlib import Path

DIRECTORY = Path(__file__).resolve().parents[1] / "course" / "solutions"


def path(name: str) -> Path:
    return DIRECTORY / f"{name}.py"


def source(name: str) -> str:
    return path(name).read_text(encoding="utf-8")


def schedule(name: str):
    namespace: dict = {}
    exec(compile(source(name), str(path(name)), "exec"), namespace)
    return namespace["schedule"]


# Register-blocked variants of the tiling solution: the same idea with other choices. Each must earn
# at least two thirds of the speed points on every CPU (tests/engine/test_pipeline.py, and the
# calibration in problems/tile_fused_conv.py).
BLOCKED_VARIANTS = {
    # 2 channels x 32 pixels a block: as many accumulators, another shape
    "2x32": (("ff, factors=[None, 4]", "ff, factors=[None, 2]"), ("xx, factors=[None, 16]", "xx, factors=[None, 32]")),
    # 8 channels x 8 pixels: half a vector of AVX-512, a whole one of AVX2
    "8x8": (("ff, factors=[None, 4]", "ff, factors=[None, 8]"), ("xx, factors=[None, 16]", "xx, factors=[None, 8]")),
    # the window's loops left for LLVM to unroll, or not
    "rolled-window": (("    sch.unroll(rx)\n    sch.unroll(ry)\n", ""),),
}


def blocked_variant(name: str) -> str:
    """The solution's source with one of BLOCKED_VARIANTS' changes."""
    text = source("blocked_vectorized")
    for old, new in BLOCKED_VARIANTS[name]:
        assert old in text, old
        text = text.replace(old, new)
    return text
