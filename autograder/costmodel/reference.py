"""The reference model (full credit), and the adapter every learner is driven through.

A learner, the student's and this one alike, is a feature function and a model class:

    def features(candidates: np.ndarray) -> np.ndarray     # (n, 9) int64 rows (space.COLUMNS) -> (n, f) floats
    class Model:
        def fit(self, X: np.ndarray, seconds: np.ndarray) -> None
        def predict(self, X: np.ndarray) -> np.ndarray       # (n,) scores, higher = faster

The reference is deliberately plain: ridge regression of log(time) on one indicator per
decision value (an additive model: each tile factor, order, vectorise and unroll choice adds its
own cost, whatever the others are), with a pull towards the fastest candidates measured so far
(what steers a search while the regression has seen only a handful). It is what a first attempt
looks like, and it is public (this package ships to students); what it cannot see is how
decisions interact (a vectorised row of 64 columns is not a vectorised row of 8; a register tile
that outgrows the registers), which is the assignment's to find.
"""
from __future__ import annotations

import numpy as np

from .space import COLUMNS

DECISIONS = ("tile_m", "tile_n", "tile_k", "order", "vectorize", "unroll")
RIDGE = 1.0


def features(candidates: np.ndarray) -> np.ndarray:
    """One 0/1 column per value each decision takes among these rows, fixed by the values the
    space can take (so fit and predict agree on the columns)."""
    from .space import FULL, TINY

    candidates = np.asarray(candidates)
    columns = []
    for name in DECISIONS:
        values = sorted(set(getattr(FULL, name)) | set(getattr(TINY, name)))
        column = candidates[:, COLUMNS.index(name)]
        columns += [(column == v).astype(np.float64) for v in values]
    return np.stack(columns, axis=1)


class Model:
    """Ridge regression of log(seconds), plus a pull towards the fastest measured so far.

    The score is minus the predicted log time, plus half the measured times' spread (in log)
    for each feature equal to that of one of the two fastest candidates it was fitted on. With many
    measurements the regression decides; with a handful (a search's first batches) it knows
    little, and candidates like the best so far are the better bet in a space where fast
    schedules come in neighbourhoods."""

    def fit(self, X: np.ndarray, seconds: np.ndarray) -> None:
        X = np.asarray(X, dtype=np.float64)
        y = np.log(np.asarray(seconds, dtype=np.float64))
        self.mean = y.mean()
        design = np.hstack([X, np.ones((len(X), 1))])
        penalty = RIDGE * np.eye(design.shape[1])
        penalty[-1, -1] = 0.0  # the intercept is not shrunk
        self.weights = np.linalg.solve(design.T @ design + penalty, design.T @ (y - self.mean))
        self.fastest = X[np.argsort(y, kind="stable")[:2]]
        self.pull = 0.5 * (float(y.std()) + 1e-9)

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        predicted = np.hstack([X, np.ones((len(X), 1))]) @ self.weights + self.mean
        shared = (X[:, None, :] == self.fastest[None, :, :]).sum(axis=2).max(axis=1)
        return -predicted + self.pull * shared


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


def reference_factory(rows: np.ndarray):
    """A scoring.ModelFactory of the reference over `rows`."""
    return lambda episode: FeatureModel(features, Model, rows)
