"""Crossover from any (w, gamma) to a vertex that misclassifies no more points.

Theorem 4.1 / LP eq. 21: minimise the slacks that are zero for the correctly
classified points.  The LP splits by decision; per decision we purify: move
theta inside the null space of the triples already tight until one more
triple's slack reaches 0, n + 1 times.  Since every move stops at the first
slack that reaches 0, no slack changes sign, so every triple that was
satisfied stays satisfied (the objective of eq. 21 stays 0).
"""
from __future__ import annotations

import numpy as np

from ..utils._interrupt import check_limits, work_per_check
from ._block import MAX_COND, PIVOT_TOL, ZERO_TOL, Block, SingularBlockError
from ._lp_kernels import DONE, LINEALITY_FAILED, NEEDS_DIRECTION, PAUSED, purify_steps

#: purification steps between checks of the time limit and stop request
#: (:func:`gto.utils._interrupt.check_limits`); the kernel resumes where it paused
STEPS_PER_CHECK = 8
#: ... or more on few rows: about this many rows times steps between checks (a step
#: costs some nanoseconds a row), so a small purification is one kernel call
CHECK_ROWS = 16_384


#: the incremental purification counts a row dependent when at most this share of it
#: (relative norm) lies outside the tight rows' span (cond >= 1 / DEP_RTOL)
DEP_RTOL = 1e-10
MARGIN_SAFETY = 1e-9  # scale to |z| >= 1 + this, so round-off cannot put a point inside


def margin_scaled(Z):
    """Per-decision shift and scale that keep every point's side and give |z| > 1.

    ``Z`` is (N, D).  Returns ``(shift, scale)`` with new values
    ``scale * (Z - shift)``: z <= 0 goes below -1 and z > 0 above 1.
    """
    D = Z.shape[1]
    shift, scale = np.zeros(D), np.ones(D)
    for d in range(D):
        z = Z[:, d]
        positive = z[z > 0]
        shift[d] = positive.min() / 2 if positive.size else max(1.0, np.abs(z).max())
        smallest = np.abs(z - shift[d]).min()
        scale[d] = (1.0 + MARGIN_SAFETY) / smallest
    return shift, scale


def purify(rows, theta, cost, rng=None, rhs=None, coord=None, n_coord=0, rows_t=None, out=None):
    """A vertex block reached from ``theta`` without any slack changing sign.

    ``rows`` are the decision's triples ``s [x, -1]``, ``cost`` the weights used
    to choose between the two directions of each move (lower weighted
    violation ``sum cost * max(0, r)`` wins).  A direction along which no
    slack moves (the points do not span their space) is pinned by a
    pseudo-row (see :mod:`gto.engine._block`).

    With coordinate rows (``rhs`` 0 on rows ``coord .. coord + n_coord - 1``,
    docs/DESIGN.md §3b) every zero weight of ``theta`` starts tight and so stays 0;
    a weight that reaches 0 on the way becomes tight too.

    A row that would leave the tight rows more ill-conditioned than
    ``MAX_COND`` depends on them: its rate along the null space is rounding
    error (points a sliver apart, another far out), so it is passed over.
    The null space of the tight rows is updated row by row (a Householder
    reflection, O(m^2) a step) with a row counted dependent when at most
    ``DEP_RTOL`` of it lies outside their span; if the block reached is not
    within ``MAX_COND`` the purification is redone with an SVD of the tight
    rows at every step (O(m^3) a step: 2-4 s per decision at m = 169).

    ``rows_t``: ``rows`` transposed and C-ordered, if the caller has it (the
    problem's, :class:`gto.engine._problem.TripleRows`): the block then views it.
    ``out``: arrays for the block to hold its state in (``Block(out=...)``), used
    unless pseudo-rows change its shape.

    Raises :class:`gto.utils._interrupt.OutOfTime` when the time limit or a
    stop request of an enclosing :func:`gto.utils._interrupt.limits` passes
    (checked every ``STEPS_PER_CHECK`` steps or more on few rows,
    :func:`gto.utils._interrupt.work_per_check`; pausing does not change the purification).
    """
    rng = np.random.default_rng(rng)
    state = rng.bit_generator.state
    try:
        return _purify(rows, theta, cost, rng, rhs, coord, n_coord, DEP_RTOL, rows_t, out)
    except SingularBlockError:
        rng.bit_generator.state = state
        return _purify(rows, theta, cost, rng, rhs, coord, n_coord, 0.0, rows_t, out)


def _purify(rows, theta, cost, rng, rhs, coord, n_coord, dep_rtol, rows_t=None, block_out=None):
    m = rows.shape[1]
    n_real = len(rows)
    given = rows = np.ascontiguousarray(rows, dtype=float)
    theta = np.array(theta, dtype=float)
    rhs = np.ones(n_real) if rhs is None else np.ascontiguousarray(rhs, dtype=float)
    coord = n_real if coord is None else int(coord)
    if n_coord and np.any(theta[:n_coord] == 0.0):
        return _purify_free(rows, theta, cost, rng, rhs, coord, n_coord)
    cost = np.append(cost, np.zeros(n_real - len(cost)))  # coordinate rows cost nothing
    tight = np.zeros(m, dtype=np.int64)
    zeros = [coord + j for j in range(n_coord) if theta[j] == 0.0]
    k = len(zeros)
    tight[:k] = zeros
    if k == 0 and n_real < m:  # fewer rows than columns: pin every unseen direction at once
        theta, rows, rhs, cost, k = _pin_lineality(rows, theta, rhs, cost, tight)
    dependent = np.zeros(n_real, dtype=bool)
    if rows_t is None or rows is not given:  # none given, or pseudo-rows added
        rows_t = np.ascontiguousarray(rows.T)
    out, none = np.empty((m, m)), np.empty(0)
    direction = none
    basis = -1
    steps = work_per_check(len(rows), STEPS_PER_CHECK, CHECK_ROWS)
    while True:
        check_limits(every=1)
        status, k, columns = purify_steps(rows, rows_t, rhs, cost, theta, tight, k, dependent,
                                          direction, out, ZERO_TOL, PIVOT_TOL, MAX_COND,
                                          dep_rtol, steps, basis)
        direction, basis = none, -1
        if status == DONE:
            break
        if status == PAUSED:  # the null basis is in out: go on from it
            basis = columns
            continue
        if status == LINEALITY_FAILED:
            raise SingularBlockError("the incremental null space lost a pinned direction")
        if status == NEEDS_DIRECTION:  # theta has no part in the null space: a random one
            direction = out[:, :columns] @ rng.standard_normal(columns)
            continue
        v = out[:, 0] / np.linalg.norm(out[:, 0])  # a lineality direction: pin it
        theta = theta + (1.0 - v @ theta) * v  # now v @ theta = 1; no slack moves
        rows = np.vstack([rows, v])
        rows_t = np.ascontiguousarray(rows.T)
        rhs = np.append(rhs, 1.0)
        cost = np.append(cost, 0.0)
        tight[k] = len(rows) - 1
        k += 1
    return Block(rows, tight, n_real=n_real, rhs=rhs, coord=coord, n_coord=n_coord, rows_t=rows_t,
                 out=block_out if rows is given else None)


def _pin_lineality(rows, theta, rhs, cost, tight):
    """Pseudo-rows for all the directions no row sees (the null space of ``rows``,
    within ``PIVOT_TOL`` of the largest singular value), each with ``v @ theta = 1``
    (no slack moves), tight from the start: one SVD of the rows instead of one
    purification pass per direction (20 points in 300 columns: 281 directions).
    Returns ``(theta, rows, rhs, cost, k)``."""
    _, s, vh = np.linalg.svd(rows, full_matrices=True)
    rank = int(np.sum(s > PIVOT_TOL * s.max())) if s.size and s.max() > 0 else 0
    V = vh[rank:]
    theta = theta + V.T @ (1.0 - V @ theta)
    k = len(V)
    tight[:k] = len(rows) + np.arange(k)
    return (theta, np.vstack([rows, V]), np.append(rhs, np.ones(k)), np.append(cost, np.zeros(k)),
            k)


def _purify_free(rows, theta, cost, rng, rhs, coord, n_coord):
    """:func:`purify` with zero weights: their coordinate rows are tight from the start
    and stay so, and every move keeps those weights at 0, so the moves live in the
    other columns: purify there (rows restricted to the free columns, without the
    zero weights' coordinate rows), then the block of the full rows with the zero
    weights' coordinate rows added.  Each step's null space is then that of at most
    ``m - zeros`` rows in as many columns (a CART start on 3 000 features has 2 999
    zeros per decision: two steps on 2 columns instead of on 3 001)."""
    n_real, m = rows.shape
    zero = np.flatnonzero(theta[:n_coord] == 0.0)
    free = np.setdiff1d(np.arange(m), zero)  # nonzero weights and gamma (and uncapped columns)
    kept_coord = coord + np.setdiff1d(np.arange(n_coord), zero)
    keep = np.concatenate([np.arange(coord), kept_coord,
                           np.arange(coord + n_coord, n_real)]).astype(np.int64)
    cost = np.append(cost, np.zeros(n_real - len(cost)))  # coordinate rows cost nothing
    small = purify(rows[np.ix_(keep, free)], theta[free], cost[keep], rng, rhs[keep],
                   coord=coord, n_coord=len(kept_coord))
    pseudo = small.rows[len(keep):]  # lineality pins, in the free columns
    full_pseudo = np.zeros((len(pseudo), m))
    full_pseudo[:, free] = pseudo
    index = np.concatenate([keep, n_real + np.arange(len(pseudo))])
    tight = np.concatenate([coord + zero, index[small.tight]])
    return Block(np.vstack([rows, full_pseudo]), tight, n_real=n_real,
                 rhs=np.concatenate([rhs, small.rhs[len(keep):]]), coord=coord,
                 n_coord=n_coord)


def crossover_blocks(decision_rows, triple_costs, Theta, rng=None, rhs=None, n_point=None,
                     n_coord=0, rows_t=None, out=None):
    """Blocks of a vertex no worse than ``Theta`` (D, n + 1) in misclassified count.

    ``Theta`` must already be margin-scaled (every |z| >= 1, see
    :func:`margin_scaled`) so that each correctly classified point has zero
    slack along its path.  With coordinate rows (``rhs``, ``n_point`` triples
    per decision then ``n_coord`` coordinate rows, as in
    :class:`gto.engine._problem.TreeProblem`) zero weights stay zero.
    ``rows_t``, ``out``: per decision, see :func:`purify`.
    """
    rng = np.random.default_rng(rng)
    D = len(decision_rows)
    rhs = [None] * D if rhs is None else rhs
    n_point = [len(r) for r in decision_rows] if n_point is None else n_point
    rows_t = [None] * D if rows_t is None else rows_t
    out = [None] * D if out is None else out
    return [
        purify(rows, theta, cost, rng, rhs[d], n_point[d], n_coord, rows_t[d], out[d])
        for d, (rows, cost, theta) in enumerate(zip(decision_rows, triple_costs, Theta))
    ]
