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
# at least two thirds of the speed points on every CPU whose vectors its pixel blocks fill
# (tests/engine/test_pipeline.py, and the calibration in problems/tile_fused_conv.py). One whose
# vectors are half the machine's earns what that machine gives it: 8x8 on AVX-512 measured 1.39x
# the yardstick on a Zen 4 (a 256-bit datapath) and 0.90x on a Zen 5 (a 512-bit one).
BLOCKED_VARIANTS = {
    # 2 channels x 32 pixels a block: as many accumulators, another shape
    "2x32": (("ff, factors=[None, 4]", "ff, factors=[None, 2]"), ("xx, factors=[None, 16]", "xx, factors=[None, 32]")),
    # 8 channels x 8 pixels: half a vector of AVX-512, a whole one of AVX2
    "8x8": (("ff, factors=[None, 4]", "ff, factors=[None, 8]"), ("xx, factors=[None, 16]", "xx, factors=[None, 8]")),
    # the window's loops left for LLVM to unroll, or not
    "rolled-window": (("    sch.unroll(rx)\n    sch.unroll(ry)\n", ""),),
}


# How many float32 lanes a variant's innermost pixel vector has.
VARIANT_LANES = {"2x32": 32, "8x8": 8, "rolled-window": 16}


def blocked_variant(name: str) -> str:
    """The solution's source with one of BLOCKED_VARIANTS' changes."""
    text = source("blocked_vectorized")
    for old, new in BLOCKED_VARIANTS[name]:
        assert old in text, old
        text = text.replace(old, new)
    return text
