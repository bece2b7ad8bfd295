"""Per-feature scaling of the data to [0, 1] and exact maps between units."""
from __future__ import annotations

import numpy as np


class Scaling:
    """``x_s = (x - lo) / span`` per feature; constant features map to 0.

    A decision ``(w_s, gamma_s)`` on scaled data has the same values
    ``x_s @ w_s - gamma_s = x @ w - gamma`` as ``w = w_s / span``,
    ``gamma = gamma_s + (w_s / span) @ lo`` on the original data (weights of
    constant features are set to 0).
    """

    def __init__(self, X):
        self.lo = X.min(axis=0)
        span = X.max(axis=0) - self.lo
        self.constant = span == 0
        self.span = np.where(self.constant, 1.0, span)

    def transform(self, X):
        return np.where(self.constant, 0.0, (X - self.lo) / self.span)

    def to_original(self, W_s, gamma_s):
        """(W, gamma) in original units of scaled decisions (rows of ``W_s``)."""
        W = np.where(self.constant, 0.0, W_s / self.span)
        return W, gamma_s + W @ self.lo

    def to_scaled(self, W, gamma):
        """Scaled decisions with the same values on the data this scaling was fit to."""
        W_s = np.where(self.constant, 0.0, W * self.span)
        return W_s, gamma - W @ self.lo
