"""The hinge LP simplex of :mod:`gto.engine._hinge_lp`, compiled (numba).

The Python loop (:func:`gto.engine._hinge_lp._simplex_reference`) paid about
0.2 ms a pivot in calls (edge slopes, the leaving row, the block's pivot, the
objective, each from Python); here a run of pivots stays in one compiled call
on the block's own arrays (those of :class:`gto.engine._block.Block`, updated in
place) and returns to Python only to check the time limit between runs, at the
end, or when a refactorisation fails.  Every rule, tolerance and kernel is the
reference's, called in the same order on the same arrays, so the pivots - and
the bits of the result - are the same (tests/test_hinge_lp_compiled.py).

Tolerances come in ``params`` (indices below) rather than as compiled-in
globals, so a changed constant in :mod:`gto.engine._block` or
:mod:`gto.engine._hinge_lp` cannot be shadowed by a cached compilation.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import block_step, pivot_threshold, refactor
from ._lp_kernels import edge_slopes, hinge_value, leaving_row, well_conditioned

#: ``params`` indices: the objective tolerance, the degenerate-slack tolerance,
#: the block's pivot tolerances, residual tolerance and condition limit, and the
#: slope rounding factor
TOL, ZERO, PIVOT_ABS, PIVOT_REL, BLOCK_ZERO, RESIDUAL, COND, ROUNDING = range(8)
#: ``state`` indices: pivots made, degenerate (Bland's rule), refactorised at this
#: vertex, the block's rank-one updates, and its refactorisation / check periods
PIVOTS, DEGENERATE, REFACTORISED, UPDATES, REFACTOR_PERIOD, CHECK_PERIOD = range(6)
#: :func:`hinge_run` status: optimal, budget spent (call again), a block that
#: could not be refactorised (raise), ``max_pivots`` reached
OPTIMAL, PAUSED, SINGULAR, PIVOT_LIMIT = range(4)


@njit(cache=True)
def pairwise_sum(a):
    """``a.sum()`` with numpy's pairwise summation (8 accumulators, blocks of 128),
    so a sum over more than 7 values has numpy's bits."""
    n = a.shape[0]
    if n < 8:
        res = 0.0
        for i in range(n):
            res += a[i]
        return res
    if n <= 128:
        acc = a[:8].copy()
        i = 8
        while i < n - n % 8:
            for k in range(8):
                acc[k] += a[i + k]
            i += 8
        res = ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
        while i < n:
            res += a[i]
            i += 1
        return res
    half = n // 2
    half -= half % 8
    return pairwise_sum(a[:half]) + pairwise_sum(a[half:])


@njit(cache=True)
def _side_sum(values, points, go_left, left, scratch):
    """``(values[points][go_left == left].sum(), count)`` with numpy's bits (its pairwise
    sum from 0.0 of a contiguous array): the side's values gathered in order into
    ``scratch``."""
    n = 0
    for t in range(points.shape[0]):
        if go_left[t] == left:
            scratch[n] = values[points[t]]
            n += 1
    return 0.0 + pairwise_sum(scratch[:n]), n


@njit(cache=True)
def _side_mean(X1, points, go_left, left, sums, scratch):
    """Mean of the columns but the last of ``X1[points]`` over the points on ``left``'s
    side, with ``X[go_left == left, :-1].mean(axis=0)``'s bits: numpy adds the rows in
    order from 0.0, or, for one column (a contiguous sum), pairwise from 0.0.  Into
    ``sums``; NaN where the side is empty."""
    n = sums.shape[0]
    sums[:] = 0.0
    count = 0
    if n == 1:
        sums[0], count = _side_sum(X1[:, 0], points, go_left, left, scratch)
    else:
        for t in range(points.shape[0]):
            if go_left[t] == left:
                x = X1[points[t]]
                for j in range(n):
                    sums[j] += x[j]
                count += 1
    for j in range(n):
        sums[j] = sums[j] / count if count else np.nan


@njit(cache=True)
def robust_lp_rows(X1, weight, points, go_left):
    """The robust LP of :func:`gto.engine._starts._robust_lp` in one pass: its rows
    ``s [x, -1]`` (s = -1 for the points ``go_left``) and their transpose, the costs
    (each point's weight over its side's total, numpy's pairwise sums) and the two
    sides' mean points, all with the bits of the numpy expressions they replace
    (tests/test_hinge_lp_compiled.py).  Returns ``(rows, rows_t, cost, mean_l, mean_r)``."""
    T, m = points.shape[0], X1.shape[1]
    rows, rows_t, cost = np.empty((T, m)), np.empty((m, T)), np.empty(T)
    scratch = np.empty(T)
    total_left = _side_sum(weight, points, go_left, True, scratch)[0]
    total_right = _side_sum(weight, points, go_left, False, scratch)[0]
    for t in range(T):
        x = X1[points[t]]
        side = -1.0 if go_left[t] else 1.0
        for j in range(m):
            rows[t, j] = side * x[j]
            rows_t[j, t] = rows[t, j]
        cost[t] = weight[points[t]] / (total_left if go_left[t] else total_right)
    mean_l, mean_r = np.empty(m - 1), np.empty(m - 1)
    _side_mean(X1, points, go_left, True, mean_l, scratch)
    _side_mean(X1, points, go_left, False, mean_r, scratch)
    return rows, rows_t, cost, mean_l, mean_r


@njit(cache=True)
def _entering(reduced, noise, flat, tight, tol, degenerate):
    """The entering edge (:func:`gto.engine._hinge_lp._entering`) among the edges whose
    reduced cost is below ``-(tol + noise)`` and not ``flat``; -1 if none."""
    m = tight.shape[0]
    best, key = -1, np.inf
    for k in range(2 * m):
        if not (reduced[k] < -(tol + noise[k])) or flat[k]:
            continue
        value = float(2 * tight[k % m] + (k < m)) if degenerate else reduced[k]
        if best < 0 or value < key:
            best, key = k, value
    return best


@njit(cache=True, inline="always")
def _pivot_row(rows, Binv, G, r, ybasic, in_block, tight, q, sigma, slope, tj, charge, rownorm,
               descent, params):
    """``(leave, small)`` of :func:`gto.engine._hinge_lp._pivot_row`."""
    g = G[q]
    zero = params[ZERO]
    floor = pivot_threshold(g, in_block, params[PIVOT_ABS], params[PIVOT_REL])
    leave = leaving_row(g, sigma, r, ybasic, in_block, slope, tj, floor, rownorm, 0.0, charge,
                        zero, descent)
    if leave >= 0:
        return leave, False
    scale = params[ROUNDING] * pairwise_sum(np.abs(Binv[:, q]))
    leave = leaving_row(g, sigma, r, ybasic, in_block, slope, tj, 0.0, rownorm, scale, charge,
                        zero, descent)
    if leave >= 0:
        M = rows[tight]
        M[q] = rows[leave]
        if not (np.all(np.isfinite(M))
                and well_conditioned(M, params[COND], np.empty((0, 0)), np.bool_(False))):
            leave = -1
    return leave, True


@njit(cache=True, inline="always")
def _block_pivot(rows, rows_t, rhs, coord, n_coord, points, Binv, G, H, theta, r, rabs, tight,
                 ybasic, in_block, position, q, sigma, leave, state, params):
    """:meth:`gto.engine._block.Block.pivot`: False (the block as before) when refused."""
    following = state[UPDATES] + 1
    due_refactor = following % state[REFACTOR_PERIOD] == 0
    due_check = following % state[CHECK_PERIOD] == 0
    saved = (Binv.copy(), G.copy(), H.copy(), theta.copy(), r.copy(), rabs.copy(), tight.copy(),
             ybasic.copy(), in_block.copy(), position.copy()) if due_refactor or due_check else (
        Binv[:0, :0].copy(), G[:0, :0].copy(), H[:0, :0].copy(), theta[:0].copy(), r[:0].copy(),
        rabs[:0].copy(), tight[:0].copy(), ybasic[:0].copy(), in_block[:0].copy(),
        position[:0].copy())
    code = block_step(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave, sigma,
                      theta, r, rabs, coord, n_coord, params[BLOCK_ZERO], params[PIVOT_ABS],
                      due_refactor, due_check, params[RESIDUAL])
    if code == 0:
        return False
    if code == 2 and not refactor(rows, tight, rhs, coord, n_coord, points, params[COND], Binv, G,
                                  H, theta, r, rabs):
        Binv[...], G[...], H[...], theta[...], r[...] = saved[0], saved[1], saved[2], saved[3], \
            saved[4]
        rabs[...], tight[...], ybasic[...] = saved[5], saved[6], saved[7]
        in_block[...], position[...] = saved[8], saved[9]
        return False
    state[UPDATES] += 1
    return True


@njit(cache=True, inline="always")
def _set_basis(rows, rhs, coord, n_coord, points, Binv, G, H, theta, r, rabs, tight, ybasic,
               in_block, position, basis, basic, params):
    """:meth:`gto.engine._block.Block.set_basis`; False if the block cannot be refactorised
    (left as the reference leaves it: rows set, inverse and ``ybasic`` untouched)."""
    tight[:] = basis
    in_block[:] = False
    position[:] = -1
    for c in range(tight.shape[0]):
        in_block[tight[c]] = True
        position[tight[c]] = c
    if not refactor(rows, tight, rhs, coord, n_coord, points, params[COND], Binv, G, H, theta, r,
                    rabs):
        return False
    ybasic[:] = basic
    return True


@njit(cache=True)
def hinge_run(rows, rows_t, rhs, coord, n_coord, n_real, points, Binv, G, H, theta, r, rabs, tight,
              ybasic, in_block, position, cost, ucost, charge, rownorm, flat, state, params,
              budget, max_pivots):
    """Up to ``budget`` passes of the simplex from the block's vertex, in place; the
    pass count, Bland's flag, the refactorised flag and the block's update count
    carry over in ``state``, the skipped edges in ``flat``, so runs chain into the
    reference's single loop.  Returns ``(status, objective)`` (objective: at OPTIMAL).

    Each pass is one of :func:`gto.engine._hinge_lp._simplex_reference`'s loop:
    optimal, or a pivot made, an edge undone or skipped, or a block that cannot be
    refactorised.  The pass is written in the loop, not a compiled function of its
    own, and its helpers called once (:func:`_pivot_row`, :func:`_block_pivot`,
    :func:`_set_basis`) are inlined (numba's IR): numba optimises every callee again
    inside each compiled caller, so each level less saves seconds of a cold compile
    (docs/speed.md)."""
    m = tight.shape[0]
    tol = params[TOL]
    reduced, slope, noise = np.empty(2 * m), np.empty(2 * m), np.empty(2 * m)
    value = np.nan  # the objective at the vertex, once known (r unchanged since)
    for _ in range(budget):
        if state[PIVOTS] >= max_pivots:
            return PIVOT_LIMIT, np.nan
        edge_slopes(G, r, ybasic, in_block, tight, n_real, cost, ucost, params[ZERO], Binv,
                    rownorm, params[ROUNDING], reduced, slope, noise)
        j = _entering(reduced, noise, flat, tight, tol, state[DEGENERATE] != 0)
        if j < 0:
            return OPTIMAL, hinge_value(cost, ucost, r) if np.isnan(value) else value
        q, sigma = (j, 1.0) if j < m else (j - m, -1.0)
        tj = tol + noise[j]
        descent = slope[j] < -tj
        before = hinge_value(cost, ucost, r) if np.isnan(value) else value
        leave, small = _pivot_row(rows, Binv, G, r, ybasic, in_block, tight, q, sigma, slope[j],
                                  tj, charge, rownorm, descent, params)
        basis, basic = tight.copy(), ybasic.copy()
        after = np.nan
        if leave >= 0:
            if not _block_pivot(rows, rows_t, rhs, coord, n_coord, points, Binv, G, H, theta, r,
                                rabs, tight, ybasic, in_block, position, q, sigma, leave, state,
                                params):
                leave = -1
            elif small and not refactor(rows, tight, rhs, coord, n_coord, points, params[COND],
                                        Binv, G, H, theta, r, rabs):
                after = np.inf
            elif descent:
                for t in range(r.shape[0]):
                    ybasic[t] = r[t] >= 0
        if np.isnan(after):
            after = hinge_value(cost, ucost, r)
        if leave < 0 or after > before + tol:  # rounding error: refactorise once, then skip
            if leave >= 0:
                if not _set_basis(rows, rhs, coord, n_coord, points, Binv, G, H, theta, r, rabs,
                                  tight, ybasic, in_block, position, basis, basic, params):
                    return SINGULAR, np.nan
            elif state[REFACTORISED] == 0:
                if not refactor(rows, tight, rhs, coord, n_coord, points, params[COND], Binv, G,
                                H, theta, r, rabs):
                    return SINGULAR, np.nan
            flat[j] = state[REFACTORISED] != 0 or leave >= 0
            state[REFACTORISED] = 1
            value = np.nan  # r undone or refactorised
        else:
            value = after  # the next pass starts from this vertex
            flat[:] = False
            state[REFACTORISED] = 0
            state[DEGENERATE] = 0 if descent and after < before - tol else 1
        state[PIVOTS] += 1
    return PAUSED, np.nan
