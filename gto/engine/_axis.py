"""The axis-aligned tree of a complete depth-1 or depth-2 structure with the fewest
weighted training errors, its leaf classes fixed (a start for ``max_features=1`` and
the estimator's axis-aligned candidate; docs/speed.md, round 23).

Each feature is cut between consecutive distinct values (every such cut: exact), or,
with ``max_cuts``, at most that many of those cuts, at its quantiles. A point's bin
per feature is then the number of that feature's cuts below it, and a set of points
is summarised by its class weights per feature and bin. For each root feature the
cuts are swept in order: the points of one bin move from the right set to the left
one (``O(N n)`` per root feature), and at every cut each child takes its best stump
(either orientation, every feature and cut, from running sums over the bins) for
both orientations of the root. ``O(n^2 B^2 K + N n^2)`` in all, for ``B`` bins a
feature and ``K`` classes, against ``O(n^2 N^2)`` for enumerating point positions.

Ties go as in a scan of features in order, the orientations in order (``x <= t``
left first) and the cuts in increasing order, a later one replacing the best so far
only when better by more than ``TIE``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..utils._interrupt import check_limits

#: a later (feature, orientation) replaces the best so far only when better by more
TIE = 1e-12


def feature_cuts(X, max_cuts=None):
    """Per feature the thresholds between consecutive distinct values: all of them, or
    with ``max_cuts`` (int) at most that many, those just above the feature's
    ``max_cuts`` evenly spaced inner quantiles. Returns a list of sorted arrays."""
    cuts = []
    for column in np.asarray(X, dtype=float).T:
        v = np.unique(column)
        mid = (v[:-1] + v[1:]) / 2
        if max_cuts is not None and len(mid) > max_cuts:
            q = np.quantile(column, np.linspace(0.0, 1.0, max_cuts + 2)[1:-1])
            mid = np.unique(mid[np.clip(np.searchsorted(v, q, side="right") - 1, 0, len(mid) - 1)])
        cuts.append(mid)
    return cuts


def axis_work(X, max_cuts=None):
    """Steps of :func:`best_axis_splits` on ``X`` (N, n), ``max_cuts`` as
    :func:`feature_cuts` (:func:`_work`)."""
    X = np.asarray(X, dtype=float)
    return _work([len(c) for c in feature_cuts(X, max_cuts)], X.shape)


def _work(n_cuts, shape):
    """Steps of the sweep with ``n_cuts`` cuts per feature on data of ``shape`` (N, n):
    the root's positions (per feature its cuts plus two) times every child's scan of
    every feature's positions, plus the sweep's ``N n`` per root feature."""
    N, n = shape
    return float((np.sum(n_cuts) + 2 * n) ** 2 + N * n**2)


def bin_points(X, cuts):
    """(N, n) bin of each point per feature: how many of that feature's ``cuts`` lie
    below it (a point on a cut counts it as above, as ``x <= t`` goes left)."""
    X = np.asarray(X, dtype=float)
    bins = np.empty(X.shape, dtype=np.int64)
    for g, c in enumerate(cuts):
        bins[:, g] = np.searchsorted(c, X[:, g], side="left")
    return bins


@njit(cache=True, nogil=True, inline="always")
def _weight(everything, first, rest, g, k, c):
    """Class ``c``'s weight in bin ``k`` of feature ``g`` of the set ``first`` or, with
    ``rest``, of ``everything - first``."""
    return everything[g, k, c] - first[g, k, c] if rest else first[g, k, c]


@njit(cache=True, nogil=True)
def _best_stump(everything, first, rest, a, b, n_cuts):
    """Best split of a set into leaf classes ``a`` (``x_g <= cut``) and ``b``, or
    reversed: the set's class weights per feature and bin are ``first`` (n, bins,
    K + 1; the last column: all classes) or, with ``rest``, ``everything - first``.
    Returns ``(errors, feature, cut, reversed)``; cut ``-1`` sends every point right,
    ``n_cuts[g]`` every point left."""
    K = first.shape[2] - 1
    total, A, B = 0.0, 0.0, 0.0
    for j in range(n_cuts[0] + 1):
        total += _weight(everything, first, rest, 0, j, K)
        A += _weight(everything, first, rest, 0, j, a)
        B += _weight(everything, first, rest, 0, j, b)
    best, feature, cut, rev = np.inf, 0, -1, False
    for g in range(first.shape[0]):
        low, low_k = np.inf, -1  # the first bins to a, the rest to b
        low_rev, low_rev_k = np.inf, -1  # the first bins to b, the rest to a
        t, ta, tb = 0.0, 0.0, 0.0
        for k in range(-1, n_cuts[g] + 1):
            if k >= 0:
                t += _weight(everything, first, rest, g, k, K)
                ta += _weight(everything, first, rest, g, k, a)
                tb += _weight(everything, first, rest, g, k, b)
            e = (t - ta) + ((total - t) - (B - tb))
            if e < low:
                low, low_k = e, k
            e = (t - tb) + ((total - t) - (A - ta))
            if e < low_rev:
                low_rev, low_rev_k = e, k
        if low < best - TIE:
            best, feature, cut, rev = low, g, low_k, False
        if low_rev < best - TIE:
            best, feature, cut, rev = low_rev, g, low_rev_k, True
    return best, feature, cut, rev


@njit(cache=True, nogil=True)
def _class_weights(bins, n_cuts, y, w, K):
    """(n, bins, K + 1) class weights of all points per feature and bin (the last
    column: all classes)."""
    N, n = bins.shape
    H = np.zeros((n, n_cuts.max() + 1, K + 1))
    for i in range(N):
        for g in range(n):
            H[g, bins[i, g], y[i]] += w[i]
            H[g, bins[i, g], K] += w[i]
    return H


@njit(cache=True, nogil=True)
def _root_sweep(bins, n_cuts, y, w, leaves, everything, f):
    """The depth-2 sweep of root feature ``f`` (the module docstring); ``everything``:
    :func:`_class_weights` of all points. Returns (2, 10): per root orientation
    (row 1: the points above the cut go left) ``(errors, f, cut, reversed, left
    child's feature, cut, reversed, right child's feature, cut, reversed)``."""
    N, n = bins.shape
    a, b, c, d = leaves[0], leaves[1], leaves[2], leaves[3]
    same = a == c and b == d
    low = np.full((2, 10), np.inf)
    K = everything.shape[2] - 1
    first = np.zeros_like(everything)  # the points with x_f <= cut; the rest: everything - first
    order = np.argsort(bins[:, f], kind="mergesort")
    p = 0
    for k in range(-1, n_cuts[f] + 1):
        while p < N and bins[order[p], f] <= k:
            i = order[p]
            for g in range(n):
                first[g, bins[i, g], y[i]] += w[i]
                first[g, bins[i, g], K] += w[i]
            p += 1
        first_ab = _best_stump(everything, first, False, a, b, n_cuts)
        rest_ab = _best_stump(everything, first, True, a, b, n_cuts)
        first_cd = first_ab if same else _best_stump(everything, first, False, c, d, n_cuts)
        rest_cd = rest_ab if same else _best_stump(everything, first, True, c, d, n_cuts)
        for is_rev in range(2):
            left, right = (rest_ab, first_cd) if is_rev else (first_ab, rest_cd)
            e = left[0] + right[0]
            if e < low[is_rev, 0]:  # the first cut of the fewest errors
                low[is_rev, 0], low[is_rev, 1], low[is_rev, 2], low[is_rev, 3] = e, f, k, is_rev
                low[is_rev, 4], low[is_rev, 5], low[is_rev, 6] = left[1], left[2], left[3]
                low[is_rev, 7], low[is_rev, 8], low[is_rev, 9] = right[1], right[2], right[3]
    return low


def best_axis_splits(X, y, w, leaves, max_cuts=None):
    """Fewest weighted errors of an axis-aligned tree of depth 1 (``leaves`` two
    classes) or 2 (four, left to right) on ``X`` (N, n), labels ``y`` and weights
    ``w``. Returns ``(errors, splits)``: ``splits`` per decision (root, then the left
    and right children) a ``(feature, threshold, reversed)``; reversed sends
    ``x_f >= threshold`` left. ``max_cuts`` as :func:`feature_cuts`."""
    X = np.asarray(X, dtype=float)
    cuts = feature_cuts(X, max_cuts)
    n_cuts = np.array([len(c) for c in cuts], dtype=np.int64)
    labels = np.unique(np.concatenate([np.asarray(y), np.asarray(leaves)]))
    yi = np.searchsorted(labels, y).astype(np.int64)
    li = np.searchsorted(labels, leaves).astype(np.int64)
    bins = bin_points(X, cuts)
    w = np.asarray(w, dtype=float)
    H = _class_weights(bins, n_cuts, yi, w, len(labels))
    if len(leaves) == 2:
        e, g, k, rev = _best_stump(H, H, False, li[0], li[1], n_cuts)
        found = [(g, k, rev)]
    else:
        best = np.full(10, np.inf)
        for f in range(X.shape[1]):  # interruptible between root features
            check_limits(every=1)
            for row in _root_sweep(bins, n_cuts, yi, w, li, H, f):
                if row[0] < best[0] - TIE:
                    best = row
        e = best[0]
        found = [(int(best[1 + 3 * s]), int(best[2 + 3 * s]), bool(best[3 + 3 * s]))
                 for s in range(3)]

    def threshold(g, k):
        if k < 0:
            return X[:, g].min() - 1.0
        return cuts[g][k] if k < len(cuts[g]) else X[:, g].max() + 1.0

    return float(e), [(g, threshold(g, k), rev) for g, k, rev in found]


def cuts_within(X, work_limit, most):
    """The most cuts a feature, at most ``most``, for which :func:`axis_work` stays
    within ``work_limit``, or None when not even one cut a feature does (the work
    falls as the cuts do: each feature keeps ``min(its cuts, max_cuts)``)."""
    X = np.asarray(X, dtype=float)
    distinct = np.array([len(np.unique(column)) for column in X.T])

    def work(m):
        return _work(np.minimum(distinct - 1, m), X.shape)

    if work(1) > work_limit:
        return None
    low, high = 1, most  # work(low) within the limit; find the largest such m
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if work(mid) <= work_limit else (low, mid - 1)
    return low
