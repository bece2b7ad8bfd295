"""The weighted robust LP of one decision, by the block simplex (paper §5.1, §6).

    minimise  sum_t c_t y_t   s.t.  y_t >= 1 - a_t @ theta,  y_t >= 0,  c >= 0

is, at a vertex, ``sum_t c_t max(0, r_t)``.  This is the Frank-Wolfe
subproblem (costs = gradient of the product error) and the robust LP of the
greedy start.  Costs ``ucost`` on the u side (``max(0, -r_t)``) give the L1
penalty of docs/DESIGN.md §3b: on a coordinate row ``r = -w_j``, so costs alpha on
both sides charge ``alpha |w_j|`` (w- and w+).  Primal simplex on the block of :mod:`gto.engine._block`: the entering
edge has the most negative slope; along it the objective is convex piecewise
linear, so the step goes to the breakpoint where the slope turns
non-negative (a long step: every breakpoint passed is a bound flip of a y/u
pair).  Each pivot strictly lowers the objective, so it cannot cycle.
"""
from __future__ import annotations

import time

import numpy as np

from ..utils._interrupt import check_limits, work_per_check
from . import _block
from . import _hinge_loop as _loop
from ._block import (
    PIVOT_RTOL,
    PIVOT_TOL,
    ZERO_TOL,
    DegeneratePivotError,
    SingularBlockError,
    well_conditioned,
)
from ._kernels import pivot_threshold
from ._lp_kernels import edge_slopes as _edge_slopes
from ._lp_kernels import hinge_value, leaving_row

SLOPE_TOL = 1e-10
#: relative rounding error of a computed rate ``a_t @ M^-1 e_q``: it is about
#: ``eps * |a_t| * |M^-1 e_q|`` whatever its true size (a row that is an exact
#: multiple of a block row has rate exactly 0 in exact arithmetic).  A slope is
#: trusted to be negative only beyond ``ROUNDING_RTOL * |M^-1 e_q|_1 * sum c |a_t|``
#: (about 1e4 eps: a margin over m and over rank-one update drift).
ROUNDING_RTOL = 1e-12
#: after the perturbation is removed, a slack this close to 0 is degenerate.
#: Far below the perturbation, far above rounding: theta carries an error of
#: about cond(M) * eps, and a row pushed a rounding error past 0 must not flip
#: its basic variable (that changes the optimal basis into a non-optimal one).
RESTORED_ZERO_TOL = 1e-9


def _padded(block, cost):
    """Costs for the block's rows: 0 on the rows ``cost`` does not reach
    (pseudo-rows, see :mod:`gto.engine._block`)."""
    cost = np.ascontiguousarray(cost, dtype=float)
    if len(cost) == len(block.rows):  # nothing to pad (no run writes the costs)
        return cost
    return np.append(cost, np.zeros(len(block.rows) - len(cost)))


def edge_slopes(block, cost, ucost, zero_tol=ZERO_TOL, rownorm=None):
    """LP reduced costs, true slopes and rounding bounds of the 2m edges
    (sigma=+1 columns first), for padded costs (:func:`_padded`).

    Along ``sigma * M^-1 e_q`` a slack moves at ``-sigma g``.  The reduced
    cost charges every basic y (its cost times its rate, even at 0: the LP
    basis decides) and every basic u (``ucost``, e.g. ``w+`` of a coordinate
    row under the L1 penalty); the true slope charges only slacks that are or
    become nonzero on a charged side.  They differ only at degenerate vertices.

    The rounding bound of a slope (``ROUNDING_RTOL``): with a badly
    conditioned block (points that nearly coincide, another far out:
    ``|M^-1|`` of 1e7) the computed rates carry errors far above
    ``SLOPE_TOL``, and an edge that is flat in exact arithmetic looks like a
    descent edge whose ray never turns up.  ``rownorm``: ``max |a_t|`` per row.
    Returns ``(reduced, slope, noise)`` (compiled: :func:`gto.engine._lp_kernels.edge_slopes`).
    """
    rownorm = np.abs(block.rows).max(axis=1) if rownorm is None else rownorm
    reduced, slope, noise = np.empty(2 * block.m), np.empty(2 * block.m), np.empty(2 * block.m)
    _edge_slopes(block.G, block.r, block.ybasic, block.in_block, block.tight, block.n_real, cost,
                 ucost, zero_tol, block.Binv, rownorm, ROUNDING_RTOL, reduced, slope, noise)
    return reduced, slope, noise


PERTURBATION = 1e-7  # right-hand sides 1 + U(0, this) in the anti-degeneracy phase


def solve_hinge_lp(block, cost, max_pivots=100_000, ucost=None):
    """Minimise ``sum c max(0, r)`` (plus ``ucost max(0, -r)``) from the block's vertex, in place.

    Perturbation method against stalling at degenerate vertices (real data
    put hundreds of points on one hyperplane): first solve with right-hand
    sides ``1 + delta_t`` (tiny, distinct, seeded), where vertices are
    non-degenerate, then restore 1 and finish with unperturbed pivots (the
    basis stays dual feasible; only rows that were degenerate can change, and
    slacks within ``RESTORED_ZERO_TOL`` of 0 count as degenerate).
    The pivots run compiled (:func:`_simplex`).  Returns ``(objective, pivots)``.
    """
    return perturbed_solve(block, cost, max_pivots, ucost, _simplex)


def perturbed_solve(block, cost, max_pivots, ucost, simplex):
    """:func:`solve_hinge_lp` with the simplex ``simplex`` (:func:`_simplex`, or the
    reference :func:`_simplex_reference` the tests compare it with)."""
    prepared = _prepared(block, cost, ucost)  # the same costs and rows in both phases
    delta = np.random.default_rng(len(block.rows)).uniform(0, PERTURBATION, len(block.rows))
    block.set_rhs(block.rhs0 + delta * (block.rhs0 != 0))  # coordinate rows stay at 0
    try:
        _, first = simplex(block, cost, max_pivots, ucost=ucost, prepared=prepared)
    finally:
        block.set_rhs(block.rhs0)
    value, second = simplex(block, cost, max_pivots, RESTORED_ZERO_TOL, ucost, prepared)
    return value, first + second


def _well_conditioned(block, q, leave):
    """True if the block with row ``leave`` in position q is invertible within ``MAX_COND``."""
    M = block.rows[block.tight].copy()
    M[q] = block.rows[leave]
    return well_conditioned(M)


def _entering(block, negative, reduced, degenerate):
    """The entering edge among ``negative``: the most negative reduced cost, or Bland's
    lowest variable (y_t < u_t, by triple t) after a degenerate pivot."""
    if degenerate:
        variable = 2 * block.tight[negative % block.m] + (negative < block.m)
        return int(negative[np.argmin(variable)])
    return int(negative[np.argmin(reduced[negative])])


def _pivot_row(block, q, sigma, slope, tol, charge, zero_tol, descent, rownorm):
    """``(leave, small)``: the leaving row along ``sigma`` times edge q's rates
    (:func:`gto.engine._lp_kernels.leaving_row`) among rates above the pivot tolerance;
    failing that (``small``) among rates above their rounding bound, if the new
    block stays within ``MAX_COND``; -1 if none."""
    g = block.G[q]
    args = (block.r, block.ybasic, block.in_block, slope, tol)
    pivot_tol = pivot_threshold(g, block.in_block, PIVOT_TOL, PIVOT_RTOL)
    leave = leaving_row(g, sigma, *args, pivot_tol, rownorm, 0.0, charge, zero_tol, descent)
    if leave >= 0:
        return leave, False
    noise = ROUNDING_RTOL * np.abs(block.Binv[:, q]).sum()
    leave = leaving_row(g, sigma, *args, 0.0, rownorm, noise, charge, zero_tol, descent)
    if leave >= 0 and not _well_conditioned(block, q, leave):
        leave = -1
    return leave, True


def _prepared(block, cost, ucost):
    """Padded ``(cost, ucost)``, the objective tolerance, ``max |a_t|`` per row and
    ``cost + ucost`` of a simplex run (costs must be finite and non-negative): a
    function of the costs and the block's rows only, so both phases of
    :func:`perturbed_solve` share one."""
    cost = _padded(block, cost)
    ucost = np.zeros(len(cost)) if ucost is None else _padded(block, ucost)
    charge = cost + ucost
    total = float(cost.sum() + ucost.sum())
    # no NaN and none negative (NaN fails >=), then all finite: a finite total says so
    # without a pass (a total that overflows asks the costs themselves)
    if not (cost.min() >= 0 and ucost.min() >= 0
            and (np.isfinite(total) or np.isfinite(charge).all())):
        raise ValueError("hinge LP costs must be finite and non-negative")
    tol = SLOPE_TOL * max(1.0, total)
    # max |a_t| from the transposed rows: m long rows reduced elementwise instead of T
    # short rows of m (numpy's slow case); a maximum is exact, so the same values
    rownorm = np.abs(block._rows_t).max(axis=0)
    return cost, ucost, tol, rownorm, charge


#: wall-clock seconds a compiled run of pivots aims at between two checks of the
#: time limit (the run length adapts: pivots cost from microseconds to milliseconds)
RUN_SECONDS = 0.004
#: rows times passes of a simplex's first compiled run (a pass costs some tens of
#: nanoseconds a row): small LPs start with longer runs, so fewer calls, and a large
#: one is still checked after a few passes
FIRST_RUN_ROWS = 16_384


def _first_budget(rows):
    """Passes of the first compiled run on ``rows`` rows: the largest power of two
    within ``FIRST_RUN_ROWS`` passes of rows, from 4 to 256 (the runs chain into
    one loop whatever their lengths, so this sets only how often the time is checked)."""
    return work_per_check(rows, 4, FIRST_RUN_ROWS)


def _params(tol, zero_tol):
    """The tolerances of a compiled run, in the order of :mod:`gto.engine._hinge_loop`'s
    ``params`` indices: the block's read now, as :class:`gto.engine._block.Block` reads them."""
    return np.array([tol, zero_tol, _block.PIVOT_TOL, _block.PIVOT_RTOL, _block.ZERO_TOL,
                     _block.RESIDUAL_TOL, _block.MAX_COND, ROUNDING_RTOL])


assert (_loop.TOL, _loop.ZERO, _loop.PIVOT_ABS, _loop.PIVOT_REL, _loop.BLOCK_ZERO, _loop.RESIDUAL,
        _loop.COND, _loop.ROUNDING) == tuple(range(8)), "_params lists the params in index order"
assert (_loop.PIVOTS, _loop.DEGENERATE, _loop.REFACTORISED, _loop.UPDATES, _loop.REFACTOR_PERIOD,
        _loop.CHECK_PERIOD) == tuple(range(6)), "_simplex lists the state in index order"


def _simplex(block, cost, max_pivots, zero_tol=ZERO_TOL, ucost=None, prepared=None):
    """:func:`_simplex_reference` compiled (:func:`gto.engine._hinge_loop.hinge_run`): the
    same pivots on the block's arrays, in runs of about ``RUN_SECONDS`` with
    :func:`gto.utils._interrupt.check_limits` between runs.  ``prepared``:
    :func:`_prepared`'s answer for these costs, if the caller has it.
    Returns ``(objective, pivots)``."""
    cost, ucost, tol, rownorm, charge = prepared or _prepared(block, cost, ucost)
    params = _params(tol, zero_tol)
    state = np.array([0, 0, 0, block.updates, _block.REFACTOR_EVERY, _block.CHECK_EVERY],
                     dtype=np.int64)  # pivots, Bland's flag, refactorised: 0 at the start
    flat, budget = np.zeros(2 * block.m, dtype=bool), _first_budget(len(block.rows))
    block.ybasic = np.ascontiguousarray(block.ybasic)
    while True:
        check_limits()
        start = time.perf_counter()
        status, value = _loop.hinge_run(
            block.rows, block._rows_t, block.rhs, block.coord, block.n_coord, block.n_real,
            block.points, block.Binv, block.G, block.H, block.theta, block.r, block.rabs,
            block.tight, block.ybasic, block.in_block, block.position, cost, ucost, charge,
            rownorm, flat, state, params, budget, max_pivots)
        block.updates = int(state[_loop.UPDATES])
        if status == _loop.OPTIMAL:
            return value, int(state[_loop.PIVOTS])
        if status == _loop.SINGULAR:
            raise SingularBlockError("tight triples are (nearly) affinely dependent")
        if status == _loop.PIVOT_LIMIT:
            raise RuntimeError(f"hinge LP did not converge in {max_pivots} pivots")
        spent = time.perf_counter() - start
        if spent < RUN_SECONDS / 2:
            budget *= 2
        elif spent > 2 * RUN_SECONDS:
            budget = max(1, budget // 2)


def _simplex_reference(block, cost, max_pivots, zero_tol=ZERO_TOL, ucost=None, prepared=None):
    """Primal simplex for ``sum c max(0, r)`` from the block's vertex, in place: the
    reference (Python) loop, which :func:`_simplex` runs compiled and the tests
    compare it with, pivot for pivot.

    The entering edge has the most negative reduced cost (Bland's rule
    after a degenerate pivot, :func:`_entering`).  If the objective really
    falls along it, a long step goes to the breakpoint where its slope turns
    non-negative; otherwise the pivot is degenerate (step 0, the basic y or u
    of a zero slack leaves).  A long step that gains less than the tolerance
    counts as degenerate.  Rounding (docs/DESIGN.md §3): an edge descends only beyond
    ``SLOPE_TOL`` plus its rounding bound (:func:`edge_slopes`); an edge with
    no pivot row (or whose pivot the block refuses as singular), or whose
    pivot raises the objective, is undone and skipped at this vertex (after
    one refactorisation), so the objective never rises.  Raises
    :class:`gto.utils._interrupt.OutOfTime` (checked every pivot) when an enclosing
    :func:`gto.utils._interrupt.limits` runs out.
    ``prepared``: :func:`_prepared`'s answer for these costs, if the caller has it.
    Returns ``(objective, pivots)``.
    """
    cost, ucost, tol, rownorm, charge = prepared or _prepared(block, cost, ucost)
    m = block.m
    degenerate, flat, refactorised = False, np.zeros(2 * m, dtype=bool), False
    for pivots in range(max_pivots):
        check_limits()
        reduced, slope, noise = edge_slopes(block, cost, ucost, zero_tol, rownorm)
        tols = tol + noise
        negative = np.flatnonzero((reduced < -tols) & ~flat)
        if negative.size == 0:
            return hinge_value(cost, ucost, block.r), pivots
        j = _entering(block, negative, reduced, degenerate)
        q, sigma = (j, 1.0) if j < m else (j - m, -1.0)
        descent = slope[j] < -tols[j]
        before = hinge_value(cost, ucost, block.r)
        leave, small = _pivot_row(block, q, sigma, slope[j], tols[j], charge, zero_tol, descent,
                                  rownorm)
        basis, after = (block.tight.copy(), block.ybasic.copy()), None
        if leave >= 0:
            try:
                block.pivot(q, sigma, leave)
                if small:  # a small pivot: a fresh inverse
                    block.refactorise()
            except DegeneratePivotError:  # refused, the block unchanged: as no pivot row
                leave = -1
            except SingularBlockError:  # the fresh inverse failed: undo below, skip the edge
                after = np.inf
            else:
                if descent:
                    block.ybasic = block.r >= 0
        if after is None:
            after = hinge_value(cost, ucost, block.r)
        if leave < 0 or after > before + tol:  # rounding error: refactorise once, then skip
            if leave >= 0:
                block.set_basis(*basis)  # undo (a fresh inverse)
            elif not refactorised:
                block.refactorise()
            flat[j], refactorised = refactorised or leave >= 0, True
            continue
        flat[:], refactorised = False, False
        # a step across slacks within rounding of 0 gains nothing: stay with Bland
        degenerate = not (descent and after < before - tol)
    raise RuntimeError(f"hinge LP did not converge in {max_pivots} pivots")
