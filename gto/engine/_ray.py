"""Long steps: the best vertex along an edge ray of the tree polytope (docs/DESIGN.md §3b).

Along the edge that frees block position q of decision d in direction sigma,
``theta(t) = theta + t sigma M^-1 e_q``: the other n tight rows stay tight, so
wherever another row's slack ``r_t(t) = r_t - t sigma g_t`` reaches 0 (a
*crossing*) the point is again a vertex (that row replaces q in the block).
The first crossing is the ordinary ratio test; a long step moves to the best
crossing instead, in one pivot.

Only decision d moves, so the objective along the ray is a sum over points of
the point error as a function of d's decision values ``z_i(t) = z_i + t h_i``
(``h = sigma H[q]``).  For the product error (eq. 19) that is, between two
crossings of the point, a polynomial in t (``C PL(el) PR(er)``, with el, er
linear in t for p = 1 and quadratic for p = 2, and the coefficients of PL, PR
from :func:`gto.engine._kernels.leaf_terms`).  :func:`product_sweep` sorts the
crossings and keeps the sum of the points' polynomials, changing one point's
polynomial at each crossing: O(N G^2 + B (G^2 + log B)) for B crossings and
degree G.  The minimum, count and lexicographic errors are not polynomial
between crossings; :func:`literal_sums` evaluates them at each crossing
(O(N B)), so their budget is smaller.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import move_sums


def crossings(r, g, sigma, in_block, n_real, threshold, budget):
    """The first ``budget`` crossings along the ray: ``(steps, rows)`` sorted by step.

    ``r``: the rows' slacks, ``g`` the rates of ``a_t @ theta`` along ``M^-1 e_q``
    (a row of the block's ``G``).  A row crosses at ``t = r / (sigma g) > 0``;
    rows in the block, pseudo-rows and rows with ``|g| <= threshold`` (which
    would make the new block ill-conditioned) do not count.
    """
    rate = sigma * g[:n_real]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = r[:n_real] / rate
    ok = (np.abs(rate) > threshold) & ~in_block[:n_real] & (t > 0)
    rows = np.flatnonzero(ok)
    t = t[rows]
    if budget is not None and rows.size > budget:
        keep = np.argpartition(t, budget - 1)[:budget]
        rows, t = rows[keep], t[keep]
    order = np.argsort(t, kind="stable")
    return t[order], rows[order]


@njit(cache=True)
def _times_linear(a, n, c0, c1, p, tmp):
    """``a`` (degree n, in place) times ``(c0 + c1 t)^p``; returns the new degree."""
    for _ in range(p):
        for k in range(n + 1):
            tmp[k] = a[k]
        a[n + 1] = 0.0
        for k in range(n + 1):
            a[k] = tmp[k] * c0
        for k in range(n + 1):
            a[k + 1] += tmp[k] * c1
        n += 1
    return n


@njit(cache=True)
def _side_poly(P, row0, deg, i, c0, c1, active, p, out, tmp):
    """``sum_g P[row0 + g, i] u(t)^g`` with ``u = (c0 + c1 t)^p`` (0 if not
    ``active``), into ``out``; returns its degree (Horner on polynomials)."""
    if not active or deg == 0:
        out[0] = P[row0, i]
        return 0
    out[0] = P[row0 + deg, i]
    n = 0
    for g in range(deg - 1, -1, -1):
        n = _times_linear(out, n, c0, c1, p, tmp)
        out[0] += P[row0 + g, i]
    return n


@njit(cache=True)
def _point_poly(P, L1, dl, dr, i, z, h, al, ar, p, out, left, right, tmp):
    """Point i's product error ``C PL(el) PR(er)`` as a polynomial in t, into ``out``."""
    nl = _side_poly(P, 0, dl, i, 1.0 + z, h, al, p, left, tmp)
    nr = _side_poly(P, L1, dr, i, 1.0 - z, -h, ar, p, right, tmp)
    c = P[2 * L1, i]
    for k in range(nl + nr + 1):
        out[k] = 0.0
    for a in range(nl + 1):
        for b in range(nr + 1):
            out[a + b] += c * left[a] * right[b]
    return nl + nr


@njit(cache=True)
def _shift(a, n, delta):
    """Taylor shift in place: the coefficients of ``a(u + delta)`` (degree n)."""
    for k in range(n):
        for j in range(n - 1, k - 1, -1):
            a[j] += delta * a[j + 1]


@njit(cache=True)
def product_sweep(z, h, P, dl, dr, p, act_left, act_right, steps, points, sides):
    """Product-error sums (eq. 19) at each crossing ``steps[k]`` (sorted) of the ray
    ``z + t h``, swept incrementally.

    ``P``: decision d's rows of :func:`gto.engine._kernels.leaf_terms` (product), with
    degrees ``dl``, ``dr``; ``act_left[i]`` / ``act_right[i]``: whether point
    i's left / right decision error is positive just after t = 0; crossing k
    switches side ``sides[k]`` (-1 left, +1 right) of point ``points[k]``.
    The sum is kept as a polynomial in ``t - c`` with c the last crossing
    (Taylor shifts), and each point's in ``t - c_i`` with c_i the crossing
    where it last changed, so far crossings lose no accuracy to powers of t.
    Returns the sums (len(steps),).
    """
    N = z.shape[0]
    L1 = (P.shape[0] - 4) // 2
    G = p * (dl + dr)
    coef = np.zeros((N, G + 1))
    center = np.zeros(N)
    total = np.zeros(G + 1)
    out = np.zeros(G + 2)
    left = np.zeros(G + 2)
    right = np.zeros(G + 2)
    tmp = np.zeros(G + 2)
    al = act_left.copy()
    ar = act_right.copy()
    for i in range(N):
        n = _point_poly(P, L1, dl, dr, i, z[i], h[i], al[i], ar[i], p, out, left, right, tmp)
        for k in range(n + 1):
            coef[i, k] = out[k]
            total[k] += out[k]
    c = 0.0
    sums = np.empty(steps.shape[0])
    for e in range(steps.shape[0]):
        t = steps[e]
        i = points[e]
        _shift(total, G, t - c)
        c = t
        old = coef[i]
        _shift(old, G, t - center[i])
        if sides[e] < 0:
            al[i] = not al[i]
        else:
            ar[i] = not ar[i]
        n = _point_poly(P, L1, dl, dr, i, z[i] + t * h[i], h[i], al[i], ar[i], p, out, left,
                        right, tmp)
        for k in range(G + 1):
            new = out[k] if k <= n else 0.0
            total[k] += new - old[k]
            old[k] = new
        center[i] = t
        sums[e] = total[0]
    return sums


@njit(cache=True)
def literal_sums(z, h, steps, d, ELt, ERt, LE, sides, point_leaves, weight, p, product):
    """Objective sums (total, count) at each step, by :func:`gto.engine._kernels.move_sums`."""
    out = np.empty((steps.shape[0], 2))
    for e in range(steps.shape[0]):
        out[e, 0], out[e, 1] = move_sums(z, h, steps[e], d, ELt, ERt, LE, sides, point_leaves,
                                         weight, p, product)
    return out
