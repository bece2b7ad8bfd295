"""The weighted robust LP of one decision, by the block simplex (paper §5.1, §6).

    minimise  sum_t c_t y_t   s.t.  y_t >= 1 - a_t @ theta,  y_t >= 0,  c >= 0

is, at a vertex, ``sum_t c_t max(0, r_t)``.  This is the Frank-Wolfe
subproblem (costs = gradient of the product error) and the robust LP of the
greedy start.  Costs ``ucost`` on the u side (``max(0, -r_t)``) give the L1
penalty of DESIGN §3b: on a coordinate row ``r = -w_j``, so costs alpha on
both sides charge ``alpha |w_j|`` (w- and w+).  Primal simplex on the block of :mod:`gto.block`: the entering
edge has the most negative slope; along it the objective is convex piecewise
linear, so the step goes to the breakpoint where the slope turns
non-negative (a long step: every breakpoint passed is a bound flip of a y/u
pair).  Each pivot strictly lowers the objective, so it cannot cycle.
"""
from __future__ import annotations

import numpy as np

from .block import PIVOT_RTOL, PIVOT_TOL, ZERO_TOL

SLOPE_TOL = 1e-10
#: after the perturbation is removed, a slack this close to 0 is degenerate.
#: Far below the perturbation, far above rounding: theta carries an error of
#: about cond(M) * eps, and a row pushed a rounding error past 0 must not flip
#: its basic variable (that changes the optimal basis into a non-optimal one).
RESTORED_ZERO_TOL = 1e-9


def _padded(block, cost):
    """Costs for the block's rows: 0 on the rows ``cost`` does not reach
    (pseudo-rows, see :mod:`gto.block`)."""
    cost = np.asarray(cost, dtype=float)
    return np.append(cost, np.zeros(len(block.rows) - len(cost)))


def hinge_objective(block, cost, ucost=None):
    """``sum cost max(0, r) + ucost max(0, -r)`` at the block's vertex."""
    value = _padded(block, cost) @ np.maximum(0.0, block.r)
    if ucost is not None:
        value += _padded(block, ucost) @ np.maximum(0.0, -block.r)
    return float(value)


def edge_slopes(block, cost, zero_tol=ZERO_TOL, ucost=None):
    """LP reduced costs and true slopes of the 2m edges (sigma=+1 columns first).

    Along ``sigma * M^-1 e_q`` a slack moves at ``-sigma g``.  The reduced
    cost charges every basic y (its cost times its rate, even at 0: the LP
    basis decides) and every basic u (``ucost``, e.g. ``w+`` of a coordinate
    row under the L1 penalty); the true slope charges only slacks that are or
    become nonzero on a charged side.  They differ only at degenerate vertices.
    """
    ucost = np.zeros_like(cost) if ucost is None else ucost
    G = block.G.T  # (T, m): column q holds edge q's rates
    r = block.r
    block.ybasic[r > zero_tol] = True  # only zero slacks may have either basic
    block.ybasic[r < -zero_tol] = False
    free = ~block.in_block
    own, uown = cost[block.tight], ucost[block.tight]
    basic = (cost * (block.ybasic & free) - ucost * (~block.ybasic & free)) @ G
    reduced = np.concatenate([-basic + uown, basic + own])
    zero = np.abs(r) <= zero_tol
    pos = (cost * (free & (r > zero_tol)) - ucost * (free & (r < -zero_tol))) @ G
    zc, zu = cost * (free & zero), ucost * (free & zero)
    up, down = np.maximum(0.0, G), np.maximum(0.0, -G)
    slope = np.concatenate(
        [-pos + zc @ down + zu @ up + uown, pos + zc @ up + zu @ down + own]
    )
    pseudo = np.tile(~block.real_positions(), 2)
    reduced[pseudo] = slope[pseudo] = np.inf  # pseudo-rows never leave the block
    return reduced, slope, G


PERTURBATION = 1e-7  # right-hand sides 1 + U(0, this) in the anti-degeneracy phase


def solve_hinge_lp(block, cost, max_pivots=100_000, ucost=None):
    """Minimise ``sum c max(0, r)`` (plus ``ucost max(0, -r)``) from the block's vertex, in place.

    Perturbation method against stalling at degenerate vertices (real data
    put hundreds of points on one hyperplane): first solve with right-hand
    sides ``1 + delta_t`` (tiny, distinct, seeded), where vertices are
    non-degenerate, then restore 1 and finish with unperturbed pivots (the
    basis stays dual feasible; only rows that were degenerate can change, and
    slacks within ``RESTORED_ZERO_TOL`` of 0 count as degenerate).
    Returns ``(objective, pivots)``.
    """
    delta = np.random.default_rng(len(block.rows)).uniform(0, PERTURBATION, len(block.rows))
    block.set_rhs(block.rhs0 + delta * (block.rhs0 != 0))  # coordinate rows stay at 0
    try:
        _, first = _simplex(block, cost, max_pivots, ucost=ucost)
    finally:
        block.set_rhs(block.rhs0)
    value, second = _simplex(block, cost, max_pivots, RESTORED_ZERO_TOL, ucost)
    return value, first + second


def _simplex(block, cost, max_pivots, zero_tol=ZERO_TOL, ucost=None):
    """Primal simplex for ``sum c max(0, r)`` from the block's vertex, in place.

    Primal simplex: the entering edge has the most negative reduced cost
    (Bland's lowest variable while pivots do not lower the objective, so it
    cannot cycle).  If the objective really falls along it, a long step goes
    to the breakpoint where its slope turns non-negative; otherwise the pivot
    is degenerate (step 0, the basic y or u of a zero slack leaves).  A long
    step that gains less than the tolerance (slacks a rounding error away
    from 0) counts as degenerate.  Returns ``(objective, pivots)``.
    """
    cost = _padded(block, cost)
    ucost = np.zeros_like(cost) if ucost is None else _padded(block, ucost)
    m = block.m
    tol = SLOPE_TOL * max(1.0, float(cost.sum() + ucost.sum()))
    degenerate = False
    for pivots in range(max_pivots):
        reduced, slope, G = edge_slopes(block, cost, zero_tol, ucost)
        negative = np.flatnonzero(reduced < -tol)
        if negative.size == 0:
            return hinge_objective(block, cost, ucost), pivots
        if degenerate:  # Bland: the lowest entering variable (y_t < u_t, by triple t)
            variable = 2 * block.tight[negative % m] + (negative < m)
            j = int(negative[np.argmin(variable)])
        else:
            j = int(negative[np.argmin(reduced[negative])])
        q, sigma = (j, 1.0) if j < m else (j - m, -1.0)
        sg = sigma * G[:, q]
        free = ~block.in_block
        pivot_tol = max(PIVOT_TOL, PIVOT_RTOL * np.abs(sg[free]).max(initial=0.0))
        if slope[j] < -tol:  # long step along a real descent edge
            before = hinge_objective(block, cost, ucost)
            r = block.r
            cross = (np.abs(sg) > pivot_tol) & (r * sg > 0) & (np.abs(r) > zero_tol)
            idx = np.flatnonzero(cross & free)
            steps = r[idx] / sg[idx]
            order = np.argsort(steps, kind="stable")
            climb = slope[j] + np.cumsum((cost + ucost)[idx[order]] * np.abs(sg[idx[order]]))
            stop = int(np.argmax(climb >= -tol)) if np.any(climb >= -tol) else len(order)
            if stop == len(order):
                raise RuntimeError("hinge LP ray does not turn up: costs must be non-negative")
            block.pivot(q, sigma, int(idx[order[stop]]))
            block.ybasic = block.r >= 0
            # a step across slacks within rounding of 0 gains nothing: stay with Bland
            degenerate = not hinge_objective(block, cost, ucost) < before - tol
        else:  # degenerate: a basic y or u at 0 would turn negative, it leaves at step 0
            zero = free & (np.abs(block.r) <= zero_tol)
            falls = np.where(block.ybasic, sg > pivot_tol, sg < -pivot_tol)
            blocking = np.flatnonzero(zero & falls)
            block.pivot(q, sigma, int(blocking[0]))
            degenerate = True
    raise RuntimeError(f"hinge LP did not converge in {max_pivots} pivots")
