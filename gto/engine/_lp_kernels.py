"""Compiled loops of the crossover's purification and the hinge LP simplex (numba).

The crossover (:func:`gto.engine._crossover.purify`) and the robust LPs of the starts
(:mod:`gto.engine._hinge_lp`) work on blocks of m = n + 1 columns: with numpy each
step paid far more in call overhead (a fresh ``scipy.linalg.null_space`` SVD,
``np.linalg.cond``, a dozen small array operations) than in arithmetic
(docs/decisions.md).
"""
from __future__ import annotations

import numpy as np
from numba import njit

#: :func:`purify_steps` status: all m rows tight, or Python must supply a random
#: direction (the null space holds no component of theta), or pin the lineality
#: direction left in ``out`` by a pseudo-row.
DONE, NEEDS_DIRECTION, LINEALITY = 0, 1, 2
#: status of the incremental path when it cannot go on: redo exactly
LINEALITY_FAILED = 3
#: :func:`purify_steps` status: ``max_steps`` steps made, the null basis left in
#: ``out[:, :columns]``; call again with ``basis=columns`` to go on where it stopped
#: (the caller checks its time limit and stop request in between)
PAUSED = 4


@njit(cache=True, inline="always")
def conditioned(s, max_cond):
    """True if singular values ``s`` (descending) have ``s[0] / s[-1] <= max_cond``
    (``np.linalg.cond``'s 2-norm ratio; a zero or NaN value is not)."""
    return s[0] / s[-1] <= max_cond


#: square blocks with more columns than this have their 2-norm condition estimated
#: from their inverse (:func:`norm2_estimate`) instead of an SVD, which costs 10-30
#: inverses (m = 2 000: 25 s against 1 s; the block of a sparse-vertex problem on
#: 3 000 features took 42 s a refactorisation)
EXACT_COND_MAX = 400
#: power iterations of :func:`norm2_estimate`
POWER_STEPS = 40


@njit(cache=True, inline="always")
def _copy(dst, src):
    """``dst[:] = src`` for vectors of one length, as a loop: numba's array
    assignment compiles its shape-mismatch error path (with the string formatting
    of its message) in the functions using it (docs/speed.md, cold compile)."""
    for i in range(dst.shape[0]):
        dst[i] = src[i]


@njit(cache=True, inline="always")
def _copy_columns(dst, src, n):
    """``dst[:, :n] = src[:, :n]``, as a loop (see :func:`_copy`)."""
    for i in range(dst.shape[0]):
        for j in range(n):
            dst[i, j] = src[i, j]


@njit(cache=True)
def well_conditioned(M, max_cond, Minv, transposed):
    """True if the rows of ``M`` (k x m, k <= m) are independent within ``max_cond``.

    Exact (an SVD) up to ``EXACT_COND_MAX`` columns or when M is not square;
    above, ``|M|_2 |M^-1|_2`` by :func:`norm2_estimate` with the inverse ``Minv``
    if it is m x m (a block's own ``Binv``; its transpose when ``transposed``),
    else (pass a 0 x 0 array) a fresh one (singular: False).  ``Minv`` is always
    C-ordered: LAPACK's F-ordered inverse is passed as its transpose (the same
    memory), so numba compiles this test once (docs/speed.md, cold compile);
    compiled callers pass ``np.bool_`` flags, as a literal ``True`` or ``False``
    would be a type of its own."""
    k, m = M.shape
    if k < m or m <= EXACT_COND_MAX:
        _, s, _ = np.linalg.svd(M, full_matrices=False)
        return conditioned(s, max_cond)
    if Minv.shape[0] == m:
        return _estimate_within(M, Minv, transposed, max_cond)
    try:
        inverse = np.ascontiguousarray(np.linalg.inv(M))
    except Exception:  # numba: LinAlgError on an exactly singular M
        return False
    return _estimate_within(M, inverse, np.bool_(False), max_cond)


@njit(cache=True)
def _estimate_within(M, Minv, transposed, max_cond):
    if not np.all(np.isfinite(Minv)):
        return False
    return (norm2_estimate(M, POWER_STEPS, np.bool_(False))
            * norm2_estimate(Minv, POWER_STEPS, transposed) <= max_cond)


@njit(cache=True)
def norm2_estimate(A, steps, transposed):
    """The largest singular value of ``A`` (m x m) from below, by ``steps`` power
    iterations on ``A^T A`` (O(m^2) each) from a fixed start (reproducible): the
    estimate rises to ``|A|_2`` at the rate of the two largest singular values'
    ratio squared, so a condition number is under-estimated by a small factor at
    most, never by orders of magnitude unless the top two are nearly equal - and
    then either is as large.

    ``transposed``: ``A`` holds the transpose of the matrix (C-ordered).  Its
    products ``x @ A`` and ``A @ y`` are then the very BLAS calls (``gemv``, same
    operands and flags) of the matrix's own ``B @ x`` and ``y @ B`` with ``B``
    F-ordered, so the estimate has the same bits as from ``B`` itself."""
    m = A.shape[1]
    x = 1.0 + 0.5 * np.sin(np.arange(m) + 1.0)
    x /= np.sqrt(x @ x)
    sigma = 0.0
    for _ in range(steps):
        y = x @ A if transposed else A @ x
        sigma = np.sqrt(y @ y)
        x = A @ y if transposed else y @ A  # the matrix's transpose times y
        size = np.sqrt(x @ x)
        if size == 0.0 or not np.isfinite(size):
            return sigma if size == 0.0 else np.inf
        x /= size
    y = x @ A if transposed else A @ x
    return max(sigma, np.sqrt(y @ y))


@njit(cache=True, inline="always")
def null_basis(M, out):
    """Orthonormal basis of the null space of ``M`` (k x m) written in the first
    columns of ``out`` (m x m); returns their number.  The rank counts singular
    values above ``max(k, m) * eps * s_max``, as ``scipy.linalg.null_space``.
    Inlined in its one compiled call (:func:`purify_steps`): numba would otherwise
    optimise it again there (docs/speed.md, cold compile)."""
    k, m = M.shape
    if k == 0:
        for i in range(m):
            for j in range(m):
                out[i, j] = 1.0 if i == j else 0.0
        return m
    _, s, vh = np.linalg.svd(M, full_matrices=True)
    return _null_from_svd(s, vh, k, out)


@njit(cache=True, inline="always")
def _null_from_svd(s, vh, k, out):
    m = vh.shape[0]
    tol = s.max() * max(k, m) * np.finfo(np.float64).eps
    rank = 0
    for v in s:
        rank += v > tol
    for j in range(m - rank):
        _copy(out[:, j], vh[rank + j])
    return m - rank


@njit(cache=True)
def drop_direction(Q, nq, a, dep_rtol, theta, coef):
    """Remove row ``a``'s direction from the orthonormal null basis ``Q[:, :nq]``
    (a Householder reflection of its coordinates ``u = Q^T a``), in place.
    Returns the new number of columns, or -1 (``Q`` and ``coef`` unchanged) if
    ``a`` is dependent: ``|u| <= dep_rtol |a|`` (then ``cond >= 1 / dep_rtol`` for
    the rows with ``a``).  O(m nq) instead of an SVD of the tight rows.

    In the same pass over ``Q``, row by row while the row is in cache: the
    reflected columns 1.. moved to 0.., and ``coef = -Q^T theta`` over the new
    basis (the next step's projection of ``-theta``, :func:`purify_steps`).  Each
    value is the one of a pass of its own (the same operations on the same
    values, each sum in the order of the rows); on wide data, where ``Q`` is
    megabytes, the passes over it are most of a step (docs/speed.md, round 17)."""
    m = Q.shape[0]
    u = np.zeros(nq)
    for j in range(m):  # row by row: Q is C-ordered (each sum keeps its order of terms)
        for c in range(nq):
            u[c] += Q[j, c] * a[j]
    norm_u = np.sqrt(u @ u)
    if nq == 0 or norm_u <= dep_rtol * np.sqrt(a @ a):
        return -1
    # H = I - 2 h h^T / (h^T h) with h = u + sign(u0) |u| e0 maps u to a multiple of e0,
    # so the columns 1.. of Q H span the null space without a's direction
    h = u.copy()
    h[0] += norm_u if u[0] >= 0 else -norm_u
    hh = h @ h
    for c in range(nq - 1):
        coef[c] = 0.0
    for j in range(m):
        acc = 0.0
        for c in range(nq):
            acc += Q[j, c] * h[c]
        f = 2.0 * acc / hh
        tj = theta[j]
        for c in range(1, nq):
            x = Q[j, c] - f * h[c]
            Q[j, c - 1] = x
            coef[c - 1] -= x * tj
    return nq - 1


@njit(cache=True)
def purify_steps(rows, rows_t, rhs, cost, theta, tight, k, dependent, direction, out, zero_tol,
                 pivot_tol, max_cond, dep_rtol=0.0, max_steps=1 << 30, basis=-1):
    """The moves of :func:`gto.engine._crossover.purify` from ``k`` tight rows (``tight[:k]``), in place.

    Each step projects ``-theta`` (or ``direction``, if given, for the first
    step) on the null space of the tight rows, moves ``theta`` along it or its
    opposite (the one of lower weighted violation ``sum cost max(0, r)``,
    ties to the first) until one more slack reaches 0 without any changing
    sign, and takes that row as tight unless the tight rows would exceed
    ``max_cond`` (then it is marked ``dependent`` and passed over).  With
    ``dep_rtol > 0`` the null basis is updated by :func:`drop_direction` and a
    row counts as dependent by its test instead (the caller checks the final
    block's condition, :func:`well_conditioned`).  Returns
    ``(status, k, columns)``: :data:`DONE`; :data:`NEEDS_DIRECTION` (the null
    basis is in ``out[:, :columns]``); :data:`LINEALITY` (no slack moves along
    ``out[:, 0]``); :data:`LINEALITY_FAILED` (the incremental path met a
    dependent pseudo-row: redo with ``dep_rtol = 0``); :data:`PAUSED` after
    ``max_steps`` steps, with the null basis in ``out[:, :columns]``: passing
    ``basis=columns`` resumes from it, so pausing does not change the result.
    ``dependent`` covers the first ``len(dependent)`` rows.  ``rows_t``: ``rows``
    transposed, C-ordered, for the rates and slacks of all rows (:func:`_rates`).
    """
    T, m = rows.shape
    Q = np.empty((m, m))
    if basis >= 0:  # resume after PAUSED: the null basis of tight[:k] is in out
        nq = basis
        _copy_columns(Q, out, nq)
    else:
        nq = null_basis(rows[tight[:k]], Q)
    is_tight = np.zeros(T, dtype=np.bool_)  # the rows tight[:k], as flags
    for i in range(k):
        is_tight[tight[i]] = True
    r = np.empty(T)
    rate = np.empty(T)
    best_theta = np.empty(m)
    coef = np.empty(m)
    v = np.empty(m)
    given = direction.shape[0] == m
    coef_ready = False  # coef = -Q^T theta already, for the current basis and theta
    steps = 0
    while k < m:
        if steps == max_steps:
            _copy_columns(out, Q, nq)
            return PAUSED, k, nq
        steps += 1
        if given:
            _copy(v, direction)
            given = False
        else:  # -theta projected on the null space of the tight rows (Q row by row)
            if not coef_ready:  # else drop_direction made coef with the new basis
                for c in range(nq):
                    coef[c] = 0.0
                for j in range(m):
                    for c in range(nq):
                        coef[c] -= Q[j, c] * theta[j]
            coef_ready = False
            for j in range(m):
                v[j] = 0.0
            for j in range(m):
                for c in range(nq):
                    v[j] += coef[c] * Q[j, c]
            if np.sqrt(v @ v) <= 1e-12 * max(1.0, np.sqrt(theta @ theta)):
                _copy_columns(out, Q, m)
                return NEEDS_DIRECTION, k, nq
        top = _rates(rows_t, rhs, theta, v, rate, r)
        thr = pivot_tol * max(1.0, top)
        up, up_row, down, down_row = _ratios(rate, r, dependent, is_tight, thr, zero_tol)
        up_violation, down_violation = _violations(rate, r, cost, up, down)
        best_violation = np.inf
        best_row = -1
        if up_row >= 0:
            best_violation, best_row = up_violation, up_row
            for j in range(m):
                best_theta[j] = theta[j] + up * v[j]
        if down_row >= 0 and (best_row < 0 or down_violation < best_violation):
            best_violation, best_row = down_violation, down_row
            for j in range(m):
                best_theta[j] = theta[j] - down * v[j]
        if best_row < 0:  # a lineality direction: Python pins it with a pseudo-row
            _copy(out[:, 0], v)
            return LINEALITY, k, 1
        if dep_rtol > 0:  # incremental null basis
            left = drop_direction(Q, nq, rows[best_row], dep_rtol, best_theta, coef)
            if left < 0:
                if best_row < dependent.shape[0]:
                    dependent[best_row] = True
                    continue
                _copy(out[:, 0], v)  # a pseudo-row cannot be dependent; let the caller redo
                return LINEALITY_FAILED, k, 0
            _copy(theta, best_theta)
            tight[k] = best_row
            is_tight[best_row] = True
            k += 1
            nq = left
            coef_ready = True
            continue
        M = np.empty((k + 1, m))
        for i in range(k):
            _copy(M[i], rows[tight[i]])
        _copy(M[k], rows[best_row])
        _, s, vh = np.linalg.svd(M, full_matrices=True)
        if best_row < dependent.shape[0] and not conditioned(s, max_cond):
            dependent[best_row] = True
            continue
        _copy(theta, best_theta)
        tight[k] = best_row
        is_tight[best_row] = True
        k += 1
        nq = _null_from_svd(s, vh, k, Q)
    return DONE, k, 0


@njit(cache=True, inline="always")
def _rates(rows_t, rhs, theta, v, rate, r):
    """Every row's rate ``a_t @ v`` and slack ``rhs_t - a_t @ theta`` into ``rate`` and
    ``r``; returns ``max |rate|``.  Column by column over the rows' transpose: each
    dot product still adds its terms in the order of the columns (the bits of a
    row-by-row loop), but the rows are independent, so the loop over them runs in
    SIMD lanes (a row-by-row loop waits on each addition)."""
    m, T = rows_t.shape
    for t in range(T):
        rate[t] = 0.0
        r[t] = 0.0  # a_t @ theta first
    for j in range(m):
        vj = v[j]
        thj = theta[j]
        for t in range(T):
            rate[t] += rows_t[j, t] * vj
            r[t] += rows_t[j, t] * thj
    top = 0.0
    for t in range(T):
        r[t] = rhs[t] - r[t]
        top = max(top, abs(rate[t]))
    return top


@njit(cache=True, inline="always")
def _ratios(rate, r, dependent, is_tight, thr, zero_tol):
    """The ratio tests of the moves along ``+v`` and ``-v``, in one pass over the rows:
    ``(up, up_row, down, down_row)``, the step to the first slack reaching 0 and
    its row (-1: none), ties to the lower row.  Rows with ``|rate| <= thr``, flagged
    ``dependent`` or tight are passed over; a zero slack blocks, at step 0, the
    direction that would make it positive."""
    T = rate.shape[0]
    n_dep = dependent.shape[0]
    up, up_row, down, down_row = np.inf, -1, np.inf, -1
    for t in range(T):
        rt = rate[t]
        if abs(rt) <= thr or (t < n_dep and dependent[t]):
            continue
        if abs(r[t]) <= zero_tol:  # sign * rate must be negative
            if rt < 0:
                if 0.0 < up and not is_tight[t]:
                    up, up_row = 0.0, t
            elif -rt < 0:
                if 0.0 < down and not is_tight[t]:
                    down, down_row = 0.0, t
            continue
        if r[t] * rt > 0:
            s = r[t] / rt
            if s < up and not is_tight[t]:
                up, up_row = s, t
        a = -rt
        if r[t] * a > 0:
            s = r[t] / a
            if s < down and not is_tight[t]:
                down, down_row = s, t
    return up, up_row, down, down_row


@njit(cache=True, inline="always")
def _violations(rate, r, cost, up, down):
    """``sum cost max(0, slack)`` at the ends of the moves ``up`` along +v and ``down``
    along -v (the slacks ``r - step * sign * rate``, linear: ``r - up rate`` and
    ``r + down rate``, the same bits, as a product by -1 and a subtraction of a
    negation are exact), in one pass; a step of inf (no move that way) gives a
    value nobody reads."""
    T = rate.shape[0]
    up_violation = 0.0
    down_violation = 0.0
    for t in range(T):
        slack = r[t] - up * rate[t]
        if slack > 0:
            up_violation += cost[t] * slack
        slack = r[t] + down * rate[t]
        if slack > 0:
            down_violation += cost[t] * slack
    return up_violation, down_violation


# -- the hinge LP simplex (gto.engine._hinge_lp) ---------------------------------------

@njit(cache=True)
def hinge_value(cost, ucost, r):
    """``sum cost max(0, r) + ucost max(0, -r)``."""
    value = 0.0
    for t in range(r.shape[0]):
        if r[t] > 0:
            value += cost[t] * r[t]
        elif r[t] < 0:
            value -= ucost[t] * r[t]
    return value


@njit(cache=True, inline="always")
def _zero_terms(gt, ct, ut, zplus, zminus):
    """A zero slack's terms of :func:`edge_slopes`: charged along sigma = -1 (by its
    cost) and +1 (by its u cost) when its rate is positive, the other way otherwise."""
    if gt > 0:
        return zplus + ut * gt, zminus + ct * gt
    return zplus - ct * gt, zminus - ut * gt


@njit(cache=True, inline="always")
def _column_sums(G, kind, cb, cost, ucost, q0, basic, pos, zplus, zminus):
    """The sums of :func:`edge_slopes` for columns q0 .. q0 + 3 (those below m), each
    over the rows in order (``kind``, ``cb``: the rows' classes and coefficients).

    Four columns at once in scalars: each sum is a chain of dependent additions, so
    one column at a time waited on the adder's latency at every row; four columns
    keep it busy.  The terms and their order are those of one column at a time.
    A nonzero slack's basic variable is that of its sign, so its term in ``pos``
    is its term in ``basic``: one product for both."""
    m, T = G.shape
    last = m - 1
    ga, gb, gc, gd = G[q0], G[min(q0 + 1, last)], G[min(q0 + 2, last)], G[min(q0 + 3, last)]
    b0 = b1 = b2 = b3 = p0 = p1 = p2 = p3 = 0.0
    zp0 = zp1 = zp2 = zp3 = zm0 = zm1 = zm2 = zm3 = 0.0
    for t in range(T):
        k = kind[t]
        if k == 0:
            continue
        c = cb[t]
        a0, a1, a2, a3 = ga[t], gb[t], gc[t], gd[t]
        x0, x1, x2, x3 = c * a0, c * a1, c * a2, c * a3
        b0 += x0
        b1 += x1
        b2 += x2
        b3 += x3
        if k == 1:
            p0 += x0
            p1 += x1
            p2 += x2
            p3 += x3
        else:
            ct, ut = cost[t], ucost[t]
            zp0, zm0 = _zero_terms(a0, ct, ut, zp0, zm0)
            zp1, zm1 = _zero_terms(a1, ct, ut, zp1, zm1)
            zp2, zm2 = _zero_terms(a2, ct, ut, zp2, zm2)
            zp3, zm3 = _zero_terms(a3, ct, ut, zp3, zm3)
    sums = ((b0, p0, zp0, zm0), (b1, p1, zp1, zm1), (b2, p2, zp2, zm2), (b3, p3, zp3, zm3))
    for i in range(min(4, m - q0)):
        basic[q0 + i], pos[q0 + i], zplus[q0 + i], zminus[q0 + i] = sums[i]


@njit(cache=True, inline="always")
def _basic_sums(G, kind, cb, q0, basic):
    """``basic`` of :func:`_column_sums` for columns q0 .. q0 + 3 (those below m),
    when no row outside the block has a zero slack: then ``pos`` has the same terms."""
    m, T = G.shape
    last = m - 1
    ga, gb, gc, gd = G[q0], G[min(q0 + 1, last)], G[min(q0 + 2, last)], G[min(q0 + 3, last)]
    b0 = b1 = b2 = b3 = 0.0
    for t in range(T):
        if kind[t] == 0:
            continue
        c = cb[t]
        b0 += c * ga[t]
        b1 += c * gb[t]
        b2 += c * gc[t]
        b3 += c * gd[t]
    sums = (b0, b1, b2, b3)
    for i in range(min(4, m - q0)):
        basic[q0 + i] = sums[i]


@njit(cache=True)
def edge_slopes(G, r, ybasic, in_block, tight, n_real, cost, ucost, zero_tol, Binv, rownorm,
                rounding_rtol, reduced, slope, noise):
    """Reduced costs, true slopes and slope rounding bounds of the 2m edges of a
    block (sigma=+1 columns first), into ``reduced``, ``slope`` and ``noise``;
    see :func:`gto.engine._hinge_lp.edge_slopes`.

    A slack beyond ``zero_tol`` fixes which of its y or u is basic (``ybasic``
    is updated in place).  Edges freeing a pseudo-row (``tight >= n_real``)
    get inf.  Each row is classified once (in the block, a nonzero or a zero
    slack) and the column sums are taken four columns at a time
    (:func:`_column_sums`), each sum with the terms and order of one column at a
    time (the same bits); without zero slacks outside the block (most vertices of
    the perturbed phase) ``pos`` has the terms of ``basic`` (:func:`_basic_sums`).
    """
    m, T = G.shape
    charged = 0.0
    kind = np.empty(T, dtype=np.int8)  # each row classified once: 0 in the block, 1 a slack
    cb = np.empty(T)  # beyond zero_tol, 2 a zero slack; its coefficient in basic
    zeros = 0
    for t in range(T):
        rt = r[t]
        if rt > zero_tol:
            ybasic[t] = True
        elif rt < -zero_tol:
            ybasic[t] = False
        if in_block[t]:
            kind[t] = 0
            continue
        ct, ut = cost[t], ucost[t]
        charged += (ct + ut) * rownorm[t]
        cb[t] = ct if ybasic[t] else -ut  # x - u g is x + (-u) g, the same bits
        nonzero = rt > zero_tol or rt < -zero_tol
        kind[t] = 1 if nonzero else 2
        zeros += not nonzero
    basic, pos, zplus, zminus = np.empty(m), np.empty(m), np.zeros(m), np.zeros(m)
    for q0 in range(0, m, 4):
        if zeros:
            _column_sums(G, kind, cb, cost, ucost, q0, basic, pos, zplus, zminus)
        else:
            _basic_sums(G, kind, cb, q0, basic)
    if not zeros:
        _copy(pos, basic)
    for q in range(m):
        own, uown = cost[tight[q]], ucost[tight[q]]
        column = 0.0  # |M^-1 e_q|_1
        for i in range(m):
            column += abs(Binv[i, q])
        noise[q] = noise[m + q] = rounding_rtol * column * charged
        if tight[q] >= n_real:  # a pseudo-row never leaves the block
            reduced[q] = reduced[m + q] = slope[q] = slope[m + q] = np.inf
        else:
            reduced[q], reduced[m + q] = -basic[q] + uown, basic[q] + own
            slope[q], slope[m + q] = -pos[q] + zplus[q] + uown, pos[q] + zminus[q] + own


@njit(cache=True, inline="always")
def _sift_down(ratio, idx, i, n):
    """Restore the heap of ``(ratio, idx)[:n]`` below position i: a parent comes before
    its children in order of ratio, ties by row (``idx``), as a stable sort of the rows
    by ratio orders them."""
    while True:
        first = i
        for child in (2 * i + 1, 2 * i + 2):
            if child < n and (ratio[child] < ratio[first]
                              or (ratio[child] == ratio[first] and idx[child] < idx[first])):
                first = child
        if first == i:
            return
        ratio[i], ratio[first] = ratio[first], ratio[i]
        idx[i], idx[first] = idx[first], idx[i]
        i = first


@njit(cache=True)
def leaving_row(g, sigma, r, ybasic, in_block, slope, tol, floor, rownorm, scale, charge,
                zero_tol, descent):
    """The row leaving the block along the ray with slack rates ``-sigma g``, among
    rows with ``|g| > max(floor, scale * rownorm)``; -1 if none (the rule of
    :func:`gto.engine._hinge_lp._leaving`).

    Descent: the crossing (in order of step, ties to the lower row) where the
    slope, climbing by ``charge |g|`` at each, turns ``>= -tol``.  The climb
    usually stops after a few of hundreds of crossings, so they are taken from a
    heap (:func:`_sift_down`) in that order rather than all sorted: the same row,
    the same sum in the same order.  (A ratio ``r / sg`` of two nonzero finite
    numbers of one sign is never NaN, so the order is total.)  Otherwise the
    first zero slack whose basic y or u would turn negative.
    """
    T = g.shape[0]
    if descent:
        idx = np.empty(T, dtype=np.int64)
        ratio = np.empty(T)
        n = 0
        for t in range(T):  # without branches: about half the rows cross, unpredictably
            sg, rt = sigma * g[t], r[t]
            idx[n] = t
            ratio[n] = rt / (sg if sg != 0.0 else 1.0)  # kept only if the row crosses (sg != 0)
            n += ((not in_block[t]) & (abs(sg) > max(floor, scale * rownorm[t])) & (rt * sg > 0)
                  & (abs(rt) > zero_tol))
        for i in range(n // 2 - 1, -1, -1):
            _sift_down(ratio, idx, i, n)
        climb = slope
        while n > 0:  # the crossings in order of (step, row), the first ones only
            t = idx[0]
            climb += charge[t] * abs(g[t])
            if climb >= -tol:
                return t
            n -= 1
            ratio[0], idx[0] = ratio[n], idx[n]
            _sift_down(ratio, idx, 0, n)
        return -1
    for t in range(T):
        sg = sigma * g[t]
        thr = max(floor, scale * rownorm[t])
        if (not in_block[t] and abs(r[t]) <= zero_tol
                and ((ybasic[t] and sg > thr) or (not ybasic[t] and sg < -thr))):
            return t
    return -1
