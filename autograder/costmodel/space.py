"""The workload and the design space a student's cost model ranks.

The workload is the network's classifier head, relu(x @ w + b) with x (M, K), w (K, N) and
b (N,), the kernel lesson 1 searches in the open: a matmul, not the convolution, so nothing this
assignment measures or a search over it finds is a schedule of the tiling assignment's (a
convolution's loops, halo and channels are not in this PrimFunc at all, and lesson 1 already
shows the head's fast schedules). Each student has a shape of their own: a fixed public
function of their tiling variant (problems/variants.py: an HMAC of their id under the course
secret), so one released variants.json serves both assignments.

Every candidate is the same template with different decisions, and a candidate is given to a
learner as one row of numbers (COLUMNS): its shape and its decisions, nothing else (no TVM
object). The template splits the matmul's three loops by tile factors, orders the three inner loops
one of six ways under the outer ones, vectorises the innermost loop where it is the columns'
tile (the only loop that can be), asks LLVM to unroll the row tiles or not, computes each
tile's ReLU right after it, and decomposes the reduction's initialisation. The grid's valid
points are many more than are measured: a pool of them, drawn with a public seed of the shape,
is the table.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from itertools import product

import numpy as np

SPACE_VERSION = "dense-relu/2"  # part of a table's cache key: change it when the template changes

COLUMNS = ("M", "N", "K", "tile_m", "tile_n", "tile_k", "order", "vectorize", "unroll")
# The inner loops' order under i0 j0 k0 (tile rows, tile columns, the sum's tile): every
# permutation. Only where the columns are innermost can they be vectorised.
INNER_ORDERS = (("i1", "k1", "j1"), ("k1", "i1", "j1"), ("i1", "j1", "k1"),
                ("j1", "i1", "k1"), ("k1", "j1", "i1"), ("j1", "k1", "i1"))
ORDERS = tuple("i0 j0 k0 " + " ".join(inner) for inner in INNER_ORDERS)
UNROLL_STEPS = 64  # pragma_auto_unroll_max_step where `unroll` is 1


@dataclass(frozen=True)
class DenseShape:
    """relu(x @ w + b): x is M x K, w is K x N."""

    M: int
    N: int
    K: int

    @property
    def flops(self) -> int:
        return 2 * self.M * self.N * self.K

    def describe(self) -> str:
        return f"x {self.M}x{self.K} @ w {self.K}x{self.N} + b, then ReLU"

    def to_dict(self) -> dict[str, int]:
        return {"M": self.M, "N": self.N, "K": self.K}

    @classmethod
    def from_dict(cls, data: object) -> "DenseShape":
        if not isinstance(data, dict) or set(data) != {"M", "N", "K"} or not all(type(v) is int for v in data.values()):
            raise ValueError(f"not a DenseShape: {str(data)[:200]}")
        shape = cls(**data)
        if shape not in _KNOWN_SHAPES:
            raise ValueError(f"not one of the course's shapes: {shape.describe()}")
        return shape


@dataclass(frozen=True)
class Grid:
    """The decisions a space draws from; every combination is one candidate."""

    tile_m: tuple[int, ...]
    tile_n: tuple[int, ...]
    tile_k: tuple[int, ...]
    order: tuple[int, ...] = tuple(range(len(INNER_ORDERS)))
    vectorize: tuple[int, ...] = (0, 1)
    unroll: tuple[int, ...] = (0, 1)
    pool: int | None = None  # the candidates measured: this many of the grid's points, or all

    def points(self):
        """Every valid combination (vectorised only where the columns' tile is innermost)."""
        return [p for p in product(self.tile_m, self.tile_n, self.tile_k, self.order, self.vectorize, self.unroll)
                if not p[4] or INNER_ORDERS[p[3]][-1] == "j1"]


# The lesson's head (x 64x512, w 512x256) is no student's: its fast schedules are printed there.
LESSON_SHAPE = DenseShape(M=64, N=256, K=512)
SHAPES: tuple[DenseShape, ...] = tuple(
    DenseShape(M=m, N=n, K=k) for m, n, k in product((32, 48, 64, 96), (128, 192, 256), (256, 384, 512))
    if DenseShape(M=m, N=n, K=k) != LESSON_SHAPE
)
# Grading without a student (a demo, `grade-schedule`): one fixed shape of the list.
DEFAULT_SHAPE = DenseShape(M=48, N=192, K=384)
# The tests' and a quick self-check's: small enough to measure in seconds.
TINY_SHAPE = DenseShape(M=16, N=64, K=64)
_KNOWN_SHAPES = frozenset(SHAPES) | {TINY_SHAPE, LESSON_SHAPE}

# 1600 points, of which a pool of 320 is measured; a good schedule is rare in it (a few in a
# hundred), so a search that finds one quickly is a model's doing, not luck.
FULL = Grid(tile_m=(1, 2, 4, 8, 16), tile_n=(4, 8, 16, 32, 64), tile_k=(1, 4, 16, 64), pool=320)
TINY = Grid(tile_m=(1, 4), tile_n=(8, 32), tile_k=(8,), order=(0, 1, 2, 3), vectorize=(0, 1), unroll=(0,))  # 24
GRIDS = {"full": FULL, "tiny": TINY}


def shape_for(variant_dict: dict | None) -> DenseShape:
    """A student's shape from their tiling variant (its fields as a dict); DEFAULT_SHAPE for None.
    A public function: the secret is in the variant already."""
    if variant_dict is None:
        return DEFAULT_SHAPE
    text = json.dumps(variant_dict, sort_keys=True).encode()
    digest = hashlib.sha256(b"tvm-course cost-model shape\0" + text).digest()
    return SHAPES[int.from_bytes(digest[:8], "big") % len(SHAPES)]


def candidates(shape: DenseShape, grid: Grid = FULL) -> np.ndarray:
    """The pool as an (n, len(COLUMNS)) int64 array, one candidate a row, in a fixed order: the
    grid's points that fit the shape, or `grid.pool` of them drawn with a public seed."""
    rows = [(shape.M, shape.N, shape.K, *point) for point in grid.points()
            if shape.M % point[0] == 0 and shape.N % point[1] == 0 and shape.K % point[2] == 0]
    rows = np.array(rows, dtype=np.int64).reshape(-1, len(COLUMNS))
    if grid.pool is not None and grid.pool < len(rows):
        keep = np.random.default_rng([shape.M, shape.N, shape.K]).choice(len(rows), size=grid.pool, replace=False)
        rows = rows[np.sort(keep)]
    return rows


def describe(row) -> str:
    """One candidate in words, for tables and messages."""
    values = dict(zip(COLUMNS, (int(v) for v in row)))
    return (f"tiles {values['tile_m']}x{values['tile_n']}x{values['tile_k']}, loops {ORDERS[values['order']]}"
            f"{', vectorised' if values['vectorize'] else ''}{', unrolled' if values['unroll'] else ''}")


def workload(shape: DenseShape):
    """The head as a PrimFunc: blocks `matmul` and `compute` (bias add and ReLU)."""
    import tvm
    from tvm import te

    x = te.placeholder((shape.M, shape.K), "float32", name="x")
    w = te.placeholder((shape.K, shape.N), "float32", name="w")
    b = te.placeholder((shape.N,), "float32", name="b")
    k = te.reduce_axis((0, shape.K), name="k")
    product_ = te.compute((shape.M, shape.N), lambda i, j: te.sum(x[i, k] * w[k, j], axis=k), name="matmul")
    zero = tvm.tirx.const(0.0, "float32")
    out = te.compute((shape.M, shape.N), lambda i, j: te.max(product_[i, j] + b[j], zero), name="compute")
    return te.create_prim_func([x, w, b, out])


def schedule(func, row):
    """The template with one candidate's decisions applied: a tvm.s_tir.Schedule."""
    from tvm import s_tir

    values = dict(zip(COLUMNS, (int(v) for v in row)))
    sch = s_tir.Schedule(func)
    matmul = sch.get_sblock("matmul")
    i, j, k = sch.get_loops(matmul)
    i0, i1 = sch.split(i, [None, values["tile_m"]])
    j0, j1 = sch.split(j, [None, values["tile_n"]])
    k0, k1 = sch.split(k, [None, values["tile_k"]])
    inner = {"i1": i1, "j1": j1, "k1": k1}
    sch.reorder(i0, j0, k0, *(inner[name] for name in INNER_ORDERS[values["order"]]))
    if values["vectorize"]:
        sch.vectorize(j1)
    if values["unroll"]:
        sch.annotate(i0, "pragma_auto_unroll_max_step", UNROLL_STEPS)
        sch.annotate(i0, "pragma_unroll_explicit", 1)
    sch.reverse_compute_at(sch.get_sblock("compute"), j0)  # each tile's ReLU right after the tile
    sch.decompose_reduction(matmul, k0)
    return sch


def inputs(shape: DenseShape, seed: int = 0) -> tuple[list[np.ndarray], np.ndarray]:
    """Seeded x, w, b, a zeroed output, and the float64 answer."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((shape.M, shape.K), dtype=np.float32)
    w = rng.standard_normal((shape.K, shape.N), dtype=np.float32)
    b = rng.standard_normal((shape.N,), dtype=np.float32)
    expected = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0.0)
    return [x, w, b, np.zeros((shape.M, shape.N), dtype=np.float32)], expected
