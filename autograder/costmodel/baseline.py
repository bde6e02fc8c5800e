"""The public baseline (a first attempt, far from full credit), and the adapter a model in this
process is driven through.

A learner, a student's and the instructor's alike, is a feature function and a model class:

    def features(candidates: np.ndarray) -> np.ndarray     # (n, 9) int64 rows (space.COLUMNS) -> (n, f) floats
    class Model:
        def fit(self, X: np.ndarray, seconds: np.ndarray) -> None
        def predict(self, X: np.ndarray) -> np.ndarray       # (n,) scores, higher = faster

The full-credit bar is not here: it is the instructor's solution, read from the course's source
notebook by the class run (nbgrader_ext/plan.py) and run confined like any answer (grade.py).
This package ships to students, so what it holds is only the baseline below: least squares of
log(time) on the raw knob integers, as if a tile of 16 were twice a tile of 8 in cost and an
order were a number. It shows the self-check's scale (a number between random and a model that
learned something) and it earns less than full credit by the class run's rule
(tests/costmodel/test_baseline.py grades its text against the solution).
"""
from __future__ import annotations

import numpy as np

# The baseline as an answer cell's text: the self-check runs it in this process (it is the
# package's own code), and the tests grade it as a student's answer.
BASELINE_SOURCE = '''\
import numpy as np


def features(candidates):
    # the decisions as they come: tile_m, tile_n, tile_k, order, vectorize, unroll
    return np.asarray(candidates, dtype=np.float64)[:, 3:]


class Model:
    def fit(self, X, seconds):
        with_intercept = np.column_stack([X, np.ones(len(X))])
        self.weights = np.linalg.lstsq(with_intercept, np.log(seconds), rcond=None)[0]

    def predict(self, X):
        return -(np.column_stack([X, np.ones(len(X))]) @ self.weights)  # higher = faster
'''


def _baseline():
    namespace: dict = {"__name__": "baseline"}
    exec(compile(BASELINE_SOURCE, "baseline", "exec"), namespace)
    return namespace["features"], namespace["Model"]


class FeatureModel:
    """scoring.Model over a table's rows: features computed once for the pool, then a fresh
    `model_class()` fitted on the rows asked for."""

    def __init__(self, feature_function, model_class, rows: np.ndarray):
        self.model_class = model_class
        self.pool = np.asarray(feature_function(np.asarray(rows)), dtype=np.float64)
        self.model = None

    def fit(self, indices: np.ndarray, seconds: np.ndarray) -> None:
        self.model = self.model_class()
        self.model.fit(self.pool[np.asarray(indices)], np.asarray(seconds, dtype=np.float64))

    def predict(self, indices: np.ndarray) -> np.ndarray:
        return np.asarray(self.model.predict(self.pool[np.asarray(indices)]), dtype=np.float64)


def baseline_factory(rows: np.ndarray):
    """A scoring.ModelFactory of the baseline over `rows`, in this process."""
    features, model_class = _baseline()
    return lambda episode: FeatureModel(features, model_class, rows)
