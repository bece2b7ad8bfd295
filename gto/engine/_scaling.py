"""Internal feature scaling, with trees mapped back to original units.

The search runs on scaled data.  First each feature is mapped onto [-1, 1] by
its range, ``u = (x - c) / s`` with ``c`` the midpoint and ``s`` the
half-range, computed with halved values so that features near the float
limits (1e308) or far below 1 (1e-200) neither overflow nor underflow;
constant features (``s = 0``) are left out of the search (their weight is 0).
Then ``x' = (u - mean) @ V`` standardises the rest; where the data do not span
their space (collinear features) ``V`` projects onto the principal
components that do, so the tree polytope always has vertices (unless
``diagonal``: sparse weights need the features themselves, and coordinate
rows then pin the directions the data do not span).
"""
from __future__ import annotations

import numpy as np


class Scaler:
    """Affine map from original features to ``r`` well-conditioned coordinates."""

    def __init__(self, X, rtol=1e-9, diagonal=False):
        X = np.asarray(X, dtype=float)
        lo, hi = X.min(axis=0), X.max(axis=0)
        self.center = 0.5 * lo + 0.5 * hi
        self.half_range = 0.5 * hi - 0.5 * lo
        self.varying = self.half_range > 0
        U = self._unit(X)[:, self.varying]
        self.mean2 = U.mean(axis=0)
        centred = U - self.mean2
        scale = centred.std(axis=0)
        scale[scale == 0] = 1.0
        n = X.shape[1]
        V = np.zeros((n, 0))
        self.diagonal = None  # V = diag(self.diagonal), kept as a vector (n x n would not fit)
        if diagonal:  # keep the features themselves (sparse weights); constant ones stay 0
            self.diagonal = np.ones(n)
            self.diagonal[self.varying] = 1.0 / scale
        elif U.shape[1]:
            _, sv, Vt = np.linalg.svd(centred / scale, full_matrices=False)
            rank = int(np.sum(sv > rtol * max(sv[0], 1e-300)))
            if rank == U.shape[1]:
                Vv = np.diag(1.0 / scale)
            else:  # project onto the principal directions the data span
                Vv = (Vt[:rank].T / scale[:, None]) * np.sqrt(len(X)) / sv[:rank]
            V = np.zeros((n, Vv.shape[1]))
            V[self.varying] = Vv
        self.V = V
        self.mean = np.zeros(n)
        self.mean[self.varying] = self.mean2
        self.n_components = n if diagonal else V.shape[1]

    def _unit(self, X):
        """``(X - c) / s`` per feature without overflow; constant features give 0."""
        s = np.where(self.half_range > 0, 0.5 * self.half_range, 1.0)
        return np.where(self.half_range > 0, (0.5 * X - 0.5 * self.center) / s, 0.0)

    def transform(self, X):
        centred = self._unit(np.asarray(X, dtype=float)) - self.mean
        return centred * self.diagonal if self.diagonal is not None else centred @ self.V

    def to_original(self, W_scaled, gamma_scaled):
        """(W, gamma) in original units giving the same decision values.

        With ``a = V w'``: ``x' @ w' - g' = u @ a - (g' + mean @ a)`` and
        ``u @ a = x @ (a / s) - c @ (a / s)``.
        """
        A = W_scaled * self.diagonal if self.diagonal is not None else W_scaled @ self.V.T
        W = np.where(self.varying, A / np.where(self.varying, self.half_range, 1.0), 0.0)
        return W, gamma_scaled + A @ self.mean + W @ self.center

    def to_scaled(self, W, gamma):
        """(W', gamma') in scaled units for a tree given in original units.

        Exact when the data span their space; otherwise the component of w
        outside the data's span (including constant features, which do not
        change any training decision value beyond a constant) is dropped into
        the threshold.
        """
        W = np.asarray(W, dtype=float)
        shift = W @ self.center  # constant features enter through the threshold
        A = np.where(self.varying, W * self.half_range, 0.0)
        if self.diagonal is not None:
            return A / self.diagonal, gamma - A @ self.mean - shift
        W_scaled = np.linalg.lstsq(self.V, A.T, rcond=None)[0].T
        return W_scaled, gamma - A @ self.mean - shift
