"""The GTO formulation: (point, decision, side) triples and the LP of eq. 16/18/20.

For point i, decision d and side s (-1 left, +1 right) the slack is
``r = 1 - s * (x_i @ w_d - gamma_d)``; the triple exists only when a leaf of
the point's class lies on side s of decision d (docs/DESIGN.md §2).  The polyhedron
is ``y_t >= r_t, y_t >= 0``; in standard form each triple is a row

    s * x_i @ w_d - s * gamma_d + y_t - u_t = 1,   y_t, u_t >= 0,

over the columns ``[theta_0 .. theta_{D-1} | y | u]`` with
``theta_d = (w_d, gamma_d)`` free.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..utils._validation import check_fit_data


def merge_duplicates(X, y, sample_weight):
    """Merge identical (x, label) rows into one row whose weight is the sum.

    Returns ``(X, y, weight, inverse)`` where ``inverse`` maps each original
    row to its merged row.
    """
    _, codes = np.unique(y, return_inverse=True)
    keyed = np.column_stack([X, codes.astype(float)])
    if keyed.dtype == np.float64 and len(keyed):
        first, inverse = _unique_rows(keyed)
    else:  # no rows, or not numbers: numpy's own
        _, first, inverse = np.unique(keyed, axis=0, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
    weight = np.bincount(inverse, weights=sample_weight, minlength=len(first))
    return X[first], y[first], weight, inverse


def _unique_rows(keyed):
    """``(first, inverse)`` of ``np.unique(keyed, axis=0, return_index=True,
    return_inverse=True)`` for float rows, faster (docs/speed.md): numpy sorts the rows
    as a structured array (a comparison function per field, NaN last, -0.0 equal
    to 0.0); a stable ``np.lexsort`` on the columns (the first the primary key)
    gives the same order, ties (equal rows) by index, so each unique row's first
    index is the same (a row with NaN equals no row, as there)."""
    order = np.lexsort(keyed.T[::-1])
    rows = keyed[order]
    new = np.empty(len(rows), dtype=bool)
    new[0] = True
    np.any(rows[1:] != rows[:-1], axis=1, out=new[1:])
    inverse = np.empty(len(rows), dtype=np.intp)
    inverse[order] = np.cumsum(new) - 1
    return order[new], inverse


def class_leaf_mask(tree, y):
    """(N, K) bool: leaf k carries the class of point i."""
    return np.asarray(y)[:, None] == tree.leaf_classes[None, :]


@dataclass
class Triples:
    """The (point, decision, side) triples of a tree on data, grouped by decision.

    ``point[t], decision[t], side[t]``; triples of decision d are the slice
    ``start[d]:start[d + 1]``.
    """

    point: np.ndarray
    decision: np.ndarray
    side: np.ndarray
    start: np.ndarray

    def __len__(self):
        return len(self.point)


def build_triples(tree, y):
    """Triples (i, d, s) for which a leaf of y_i's class lies on side s of d."""
    mask = class_leaf_mask(tree, y).astype(np.int64)  # (N, K)
    S = tree.sides
    has_left = (mask @ (S == -1).astype(np.int64)) > 0  # (N, D)
    has_right = (mask @ (S == +1).astype(np.int64)) > 0
    points, decisions, sides = [], [], []
    start = [0]
    for d in range(tree.n_decisions):
        for s, has in ((-1, has_left[:, d]), (+1, has_right[:, d])):
            idx = np.flatnonzero(has)
            points.append(idx)
            decisions.append(np.full(idx.size, d))
            sides.append(np.full(idx.size, s, dtype=np.int8))
        start.append(start[-1] + int(has_left[:, d].sum() + has_right[:, d].sum()))
    return Triples(
        np.concatenate(points), np.concatenate(decisions), np.concatenate(sides), np.array(start)
    )


def decision_values(tree, X):
    """Z = X @ W.T - gamma, (N, D)."""
    return X @ tree.W.T - tree.gamma


def decision_errors(Z, p=1):
    """Left and right decision errors max(0, 1 + z)^p and max(0, 1 - z)^p (paper §3)."""
    left = np.maximum(0.0, 1.0 + Z)
    right = np.maximum(0.0, 1.0 - Z)
    if p != 1:
        left, right = left**p, right**p
    return left, right


def leaf_errors(tree, Z, p=1):
    """LeafErr(i, k): sum of decision errors along the path to leaf k (eq. 13-14)."""
    left, right = decision_errors(Z, p)
    S = tree.sides
    return left @ (S == -1).T.astype(float) + right @ (S == +1).T.astype(float)


@dataclass
class StandardForm:
    """``A x = b``, ``x >= 0`` except the ``free`` columns (eq. 16/18/20)."""

    A: sp.csr_matrix
    b: np.ndarray
    free: np.ndarray
    triples: Triples
    n_theta: int  # D * (n + 1) free columns come first

    def point(self, tree, X):
        """Standard-form x at (W, gamma): y = max(0, r), u = max(0, -r)."""
        t = self.triples
        z = np.einsum("ij,ij->i", X[t.point], tree.W[t.decision]) - tree.gamma[t.decision]
        r = 1.0 - t.side * z
        theta = np.column_stack([tree.W, tree.gamma]).ravel()
        return np.concatenate([theta, np.maximum(0.0, r), np.maximum(0.0, -r)])


def standard_form(tree, X, y, sample_weight=None, merge=True):
    """The tree LP in standard form over (merged) data.

    Returns ``(StandardForm, X, y, weight)`` with the data the rows refer to.
    """
    X, y, w = check_fit_data(tree, X, y, sample_weight)
    if merge:
        X, y, w, _ = merge_duplicates(X, y, w)
    t = build_triples(tree, y)
    T, n, D = len(t), tree.n_features, tree.n_decisions
    n_theta = D * (n + 1)
    rows = np.repeat(np.arange(T), n + 1)
    cols = (t.decision[:, None] * (n + 1) + np.arange(n + 1)[None, :]).ravel()
    vals = (t.side[:, None] * np.column_stack([X[t.point], -np.ones(T)])).ravel()
    rows = np.concatenate([rows, np.arange(T), np.arange(T)])
    cols = np.concatenate([cols, n_theta + np.arange(T), n_theta + T + np.arange(T)])
    vals = np.concatenate([vals, np.ones(T), -np.ones(T)])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(T, n_theta + 2 * T))
    free = np.zeros(n_theta + 2 * T, dtype=bool)
    free[:n_theta] = True
    return StandardForm(A, np.ones(T), free, t, n_theta), X, y, w
