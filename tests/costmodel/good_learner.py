import numpy as np

# Each decision's possible values (space.COLUMNS order: M, N, K, tile_m, tile_n, tile_k, order, vectorize, unroll)
DECISION_VALUES = {3: (1, 2, 4, 8, 16), 4: (4, 8, 16, 32, 64), 5: (1, 4, 8, 16, 64), 6: (0, 1, 2, 3, 4, 5), 7: (0, 1), 8: (0, 1)}


def features(candidates):
    """One 0/1 column per value of each decision."""
    c = np.asarray(candidates)
    return np.stack([(c[:, column] == value).astype(np.float64)
                     for column, values in DECISION_VALUES.items() for value in values], axis=1)


class Model:
    def fit(self, X, seconds):
        y = np.log(np.asarray(seconds, dtype=np.float64))
        self.mean = y.mean()
        design = np.hstack([X, np.ones((len(X), 1))])
        penalty = np.eye(design.shape[1])
        penalty[-1, -1] = 0.0
        self.weights = np.linalg.solve(design.T @ design + penalty, design.T @ (y - self.mean))
        self.fastest = X[np.argsort(y, kind="stable")[:2]]
        self.pull = 0.5 * (float(y.std()) + 1e-9)

    def predict(self, X):
        predicted = np.hstack([X, np.ones((len(X), 1))]) @ self.weights + self.mean
        shared = (X[:, None, :] == self.fastest[None, :, :]).sum(axis=2).max(axis=1)
        return -predicted + self.pull * shared
