"""Compiled inner loops of the structured walker (numba).

numpy's per-call overhead dominates at the walker's sizes (a few thousand
triples, tens of moves): ``experiments/bench_gto.py`` measured about 1 ms for
one full neighbourhood in numpy against ~0.1 ms here.  Each kernel is a
plain loop over arrays the walker already holds; the matrix products stay in
BLAS.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .objectives import COUNT_TOL


@njit(cache=True)
def ratio_one(g, rabs, ybasic, in_block, sigma, tol):
    """First blocking row along ``sigma * M^-1 e_q``: (step, row) or (inf, -1).

    A basic y (ybasic) blocks when sigma * g > tol, a basic u when
    sigma * g < -tol; the step is |r| / |g|; ties go to the lowest row.
    """
    best, row = np.inf, -1
    for t in range(g.shape[0]):
        if in_block[t]:
            continue
        h = g[t] if ybasic[t] else -g[t]
        if sigma * h > tol:
            ratio = rabs[t] / abs(g[t])
            if ratio < best:
                best, row = ratio, t
    return best, row


@njit(cache=True)
def ratio_all(G, rabs, ybasic, in_block, tol):
    """Ratio tests of every edge: columns q (sigma=+1) then q (sigma=-1) of G.

    Same rule as :func:`ratio_one`; a ratio is only divided out when it wins
    (``|r| < step * |h|``).
    """
    T, m = G.shape
    steps = np.full(2 * m, np.inf)
    rows = np.full(2 * m, -1)
    for t in range(T):
        if in_block[t]:
            continue
        r = rabs[t]
        sign = 1.0 if ybasic[t] else -1.0
        for q in range(m):
            h = sign * G[t, q]
            if h > tol:
                if r < steps[q] * h:
                    steps[q] = r / h
                    rows[q] = t
            elif h < -tol:
                if r < steps[m + q] * -h:
                    steps[m + q] = r / -h
                    rows[m + q] = t
    return steps, rows


@njit(cache=True)
def move_sums(Zd, ELd, ERd, LE, point_leaves, side_d, weight, p, product):
    """Per candidate column of ``Zd`` (decision d's new values): sums over points.

    Returns ``(s0, s1)``, each (M,): s0 the weighted sum of the product
    (``product``) or minimum of the class-leaf errors, s1 the weighted count
    of points whose minimum exceeds COUNT_TOL.  ``point_leaves[i]`` lists the
    leaves of point i's class (padded with -1); ``side_d[k]`` is -1/+1/0 for
    leaf k at d.  A class leaf left of d has error ``left + el`` after a move
    (its cached error less d's old left error), a right one ``right + er``;
    the others keep theirs.  Loops are split so the common case (at most one
    class leaf on each side of d) runs straight through the moves.
    """
    N, M = Zd.shape
    L = point_leaves.shape[1]
    s0 = np.zeros(M)
    s1 = np.zeros(M)
    left = np.empty(L)
    right = np.empty(L)
    for i in range(N):
        nl = 0
        nr = 0
        prod = weight[i]
        low = np.inf
        for a in range(L):
            k = point_leaves[i, a]
            if k < 0:
                break
            s = side_d[k]
            if s < 0:
                left[nl] = LE[i, k] - ELd[i]
                nl += 1
            elif s > 0:
                right[nr] = LE[i, k] - ERd[i]
                nr += 1
            else:
                prod *= LE[i, k]
                low = min(low, LE[i, k])
        row = Zd[i]
        if product and nl <= 1 and nr <= 1:
            a0 = left[0] if nl else 1.0
            ml = 1.0 if nl else 0.0
            b0 = right[0] if nr else 1.0
            mr = 1.0 if nr else 0.0
            if p == 1:
                for j in range(M):
                    z = row[j]
                    s0[j] += prod * (a0 + ml * max(1.0 + z, 0.0)) * (b0 + mr * max(1.0 - z, 0.0))
            else:
                for j in range(M):
                    z = row[j]
                    el = max(1.0 + z, 0.0)
                    er = max(1.0 - z, 0.0)
                    s0[j] += prod * (a0 + ml * el * el) * (b0 + mr * er * er)
        elif product:  # two class leaves on one side of d
            for j in range(M):
                el = max(1.0 + row[j], 0.0) ** p
                er = max(1.0 - row[j], 0.0) ** p
                acc = prod
                for a in range(nl):
                    acc *= left[a] + el
                for a in range(nr):
                    acc *= right[a] + er
                s0[j] += acc
        else:  # min_k (base_k + e) = min_k base_k + e
            w = weight[i]
            a0 = np.inf
            for a in range(nl):
                a0 = min(a0, left[a])
            b0 = np.inf
            for a in range(nr):
                b0 = min(b0, right[a])
            for j in range(M):
                el = max(1.0 + row[j], 0.0) ** p
                er = max(1.0 - row[j], 0.0) ** p
                acc = min(low, min(a0 + el, b0 + er))
                s0[j] += w * acc
                if acc > COUNT_TOL:
                    s1[j] += w
    return s0, s1


@njit(cache=True)
def strict_errors(Z, child_kind, child_index, leaf_ok_for_point, weight):
    """Weighted misclassified count: walk each point down (z <= 0 goes left).

    ``child_kind[d, s]`` is 0 for a decision, 1 for a leaf (s = 0 left, 1
    right); ``leaf_ok_for_point[i, k]`` is True when leaf k has i's class.
    """
    total = 0.0
    for i in range(Z.shape[0]):
        node = 0
        while True:
            s = 1 if Z[i, node] > 0 else 0
            if child_kind[node, s] == 1:
                if not leaf_ok_for_point[i, child_index[node, s]]:
                    total += weight[i]
                break
            node = child_index[node, s]
    return total
