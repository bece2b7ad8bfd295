"""Internal feature scaling, with trees mapped back to original units.

The search runs on standardised data ``x' = (x - mean) / scale``; where the
data do not span their space (constant or collinear features) it runs on the
principal components that do, so the tree polytope always has vertices
(unless ``diagonal``: sparse weights need the features themselves, and
coordinate rows then pin the directions the data do not span).
"""
from __future__ import annotations

import numpy as np


class Scaler:
    """Affine map ``x' = (x - mean) @ V`` to ``r`` well-conditioned coordinates."""

    def __init__(self, X, rtol=1e-9, diagonal=False):
        self.mean = X.mean(axis=0)
        centred = X - self.mean
        scale = centred.std(axis=0)
        scale[scale == 0] = 1.0
        _, sv, Vt = np.linalg.svd(centred / scale, full_matrices=False)
        rank = int(np.sum(sv > rtol * max(sv[0], 1e-300))) if sv.size else 0
        if rank == X.shape[1] or diagonal:  # diagonal: keep features (sparse weights)
            self.V = np.diag(1.0 / scale)
        else:  # project onto the principal directions the data span
            self.V = (Vt[:rank].T / scale[:, None]) * np.sqrt(len(X)) / sv[:rank]
        self.n_components = self.V.shape[1]

    def transform(self, X):
        return (X - self.mean) @ self.V

    def to_original(self, W_scaled, gamma_scaled):
        """(W, gamma) in original units giving the same decision values.

        ``x' @ w' - g' = x @ (V w') - (g' + mean @ V w')``.
        """
        W = W_scaled @ self.V.T
        return W, gamma_scaled + W @ self.mean

    def to_scaled(self, W, gamma):
        """(W', gamma') in scaled units for a tree given in original units.

        Exact when the data span their space; otherwise the component of w
        outside the data's span (which does not change any training decision
        value up to the mean) is dropped.
        """
        W_scaled = np.linalg.lstsq(self.V, W.T, rcond=None)[0].T
        return W_scaled, gamma - W @ self.mean
