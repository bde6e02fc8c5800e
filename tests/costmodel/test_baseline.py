"""The package holds no full-credit answer: the public baseline (costmodel/baseline.py), graded as
a student's answer cell by the class run's rule with the instructor's solution as the bar, earns
less than full credit.

Not on the tiny table: its 24 candidates (two row tiles, two column tiles, four orders) are
nearly linear in the knobs, so least squares on the raw integers ranks them as well as the
solution does, and no search there saves the solution a measurement over random (measured here:
the baseline at full ranking credit, the search pending, on four seeds). The table here is the
assignment's own pool (320 candidates of the default shape) with times from a fixed cost function
of the kind a real machine shows: each decision's cost is not monotone in its value (a middle
tile is best; an order is a name, not a number), which indicators fit and a line through the raw
integers cannot. Both learners are deterministic numpy, so the result is fixed by the table and
the seed: measured, the baseline gets about 0.4 of the ranking credit and under 0.1 of the search
credit. On a measured real-size table `tvm-course bench-cost-model` prints the same comparison."""
from __future__ import annotations

import numpy as np
import pytest

from autograder.costmodel import grade, space
from autograder.costmodel.baseline import BASELINE_SOURCE
from autograder.costmodel.table import Table

from .conftest import solution_source

pytestmark = pytest.mark.slow

# log-time cost of each decision's value (seconds = 10 us * exp(sum) * small noise)
TILE_M = {1: 0.6, 2: 0.2, 4: 0.0, 8: 0.3, 16: 0.9}
TILE_N = {4: 1.0, 8: 0.5, 16: 0.0, 32: 0.2, 64: 0.8}
TILE_K = {1: 0.9, 4: 0.2, 16: 0.0, 64: 0.5}
ORDER = {0: 0.0, 1: 0.8, 2: 0.3, 3: 1.2, 4: 0.9, 5: 0.1}


def a_table_with_a_sweet_spot() -> Table:
    rows = space.candidates(space.DEFAULT_SHAPE, space.FULL)
    log_time = np.array([TILE_M[m] + TILE_N[n] + TILE_K[k] + ORDER[o] - 0.4 * v + 0.05 * u
                         for m, n, k, o, v, u in rows[:, 3:]])
    noise = np.random.default_rng(44).normal(0.0, 0.05, len(rows))
    return Table({"what": "a test's table with a sweet spot"}, rows, 1e-5 * np.exp(log_time + noise))


def test_the_public_baseline_earns_less_than_full_credit_against_the_instructors_solution():
    table = a_table_with_a_sweet_spot()
    result = grade.grade_learner(BASELINE_SOURCE, table, seed=1, bar=solution_source())
    fractions = {name: part.fraction for name, part in result.parts.items()}
    assert None not in fractions.values(), result.to_dict()["parts"]
    assert all(f < 0.75 for f in fractions.values()), result.to_dict()["parts"]
    assert "the instructor's model" in result.parts["ranking"].lines[0]
