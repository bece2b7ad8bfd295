"""One decision's basis block of the tree polytope (docs/DESIGN.md §3).

For decision d the rows ``a_t = s_t * [x_i, -1]`` of its triples make the
slacks ``r_t = 1 - a_t @ theta`` with ``theta = (w_d, gamma_d)``.  A vertex
is, per decision, n + 1 affinely independent tight triples (r = 0): the block
``M = A[tight]`` with ``theta = M^-1 1``.  Every other triple has either its
y (violated side, r >= 0) or its u (r <= 0) basic; ``ybasic`` records which,
so degenerate triples (r = 0 outside the block) follow the LP exactly.

Sparse vertices (docs/DESIGN.md §3b): rows ``coord .. coord + n_coord - 1`` may be
coordinate rows ``e_j`` with right-hand side 0 (tight: ``w_j = 0``; their
"y" is ``w_j^-``, basic when ``w_j < 0``, their "u" ``w_j^+``).  They enter
and leave like triples: freeing one moves ``w_j`` off zero (sigma = +1 up,
-1 down) and the ratio test stops where a nonzero ``w_k`` reaches 0.  The
weights of tight coordinate rows are set to exactly 0.

Where a decision's points span less than their space, the polytope has a
lineality direction v; the crossover then pins it with a pseudo-row (v with
v @ theta = 1) appended after the ``n_real`` real rows.  A pseudo-row stays
in the block for good: it never leaves and opens no edge.

An edge frees tight triple q in direction sigma: ``theta + t sigma M^-1 e_q``
(sigma = +1: the triple becomes strictly satisfied and u_q enters; sigma = -1:
violated, y_q enters).  The ratio test stops at the first basic y or u that
reaches 0; that triple replaces q in the block (a rank-one update of M^-1).

The block keeps, stored by edge, ``G = (A M^-1)^T`` (row q: the rates ``g``
of the triples' ``a_t @ theta`` along edge q) and, for the points it
tracks, ``H = (X M^-1)^T``, up to date through the same rank-one updates as
``M^-1`` (a simplex tableau pivot), so an edge's ratio test and the points'
new values need no matrix product.
"""
from __future__ import annotations

import numpy as np

from tabu.walker import MoveError

from ._kernels import block_step, block_theta, pivot_threshold, ratio_all, ratio_one, refactor, residual
from ._lp_kernels import well_conditioned as _well_conditioned

PIVOT_TOL = 1e-9  # |sigma g| below this does not block a ray
PIVOT_RTOL = 1e-7  # ... nor below this times the column's largest |g| (conditioning)
ZERO_TOL = 1e-12  # a slack this close to 0 is degenerate: tight, and either y or u basic
REFACTOR_EVERY = 64  # rank-one updates between refactorisations
CHECK_EVERY = 16  # rank-one updates between residual checks
RESIDUAL_TOL = 1e-8  # ||M theta - 1||_inf that forces a refactorisation
MAX_COND = 1e13  # a block more ill-conditioned than this counts as singular


def well_conditioned(M, Minv=None):
    """True if the rows ``M`` are independent within ``MAX_COND`` (the one test of
    when a block, or a block about to be, counts as singular); ``Minv``, M's inverse
    if known, spares a large block a second one (see
    :func:`gto.engine._lp_kernels.well_conditioned`)."""
    M = np.ascontiguousarray(M, dtype=float)
    Minv = np.empty((0, 0)) if Minv is None else np.ascontiguousarray(Minv, dtype=float)
    return bool(np.isfinite(M).all() and _well_conditioned(M, MAX_COND, Minv, False))


def decision_part(flat, off, d, per_row=1):
    """Decision ``d``'s part of a flat buffer holding every decision's per-row values
    in turn, ``per_row`` values a row (``off[d]``: decision d's first row, ``off[-1]``
    all rows): the one layout the problem's rows, a walker's blocks and the compiled
    loop share (:class:`gto.engine._problem.TripleRows`,
    :func:`gto.engine._tabu_loop.adopt_blocks`; compiled, ``_tabu_loop._rows`` and
    ``_mat``).  A view; the caller reshapes it."""
    return flat[per_row * off[d]:per_row * off[d + 1]]


#: the arrays a :class:`Block` may hold in a caller's arrays (``Block(out=...)``)
OUT = ("rhs", "tight", "in_block", "position", "ybasic", "Binv", "G", "theta", "r", "rabs")


def _held(out, name, values, shape, dtype):
    """A new array of ``values`` (broadcast to ``shape``), or ``out[name]`` filled with them."""
    if out is None:
        array = np.empty(shape, dtype=dtype)
    else:
        array = out[name]
    array[...] = values
    return array


class SingularBlockError(ValueError):
    """The chosen tight triples are not affinely independent."""


class DegeneratePivotError(SingularBlockError, MoveError):
    """A pivot whose element is numerically zero: the block is left unchanged."""


class Block:
    """Tight triples, inverse and slacks of one decision at a vertex."""

    def __init__(self, rows, tight, ybasic=None, n_real=None, rhs=None, coord=None, n_coord=0,
                 rows_t=None, out=None):
        """``rows_t``: ``rows`` transposed and C-ordered, if the caller has it (viewed, not
        copied: the rows of a block never change).  ``out``: by name (those of
        :data:`OUT`), arrays of this block's shapes to hold its basis, inverse, tableau
        and slacks instead of new ones (views into a walker's shared buffers,
        :func:`gto.engine._tabu_loop.block_buffers`)."""
        self.rows = rows = np.ascontiguousarray(rows, dtype=float)
        self.coord = len(rows) if coord is None else int(coord)  # first coordinate row
        self.n_coord = int(n_coord)
        # for the slacks after a pivot
        self._rows_t = np.ascontiguousarray(rows.T) if rows_t is None else rows_t
        self.points = np.zeros((0, rows.shape[1]))  # see track
        self.H = np.zeros((rows.shape[1], 0))
        self.n_real = len(rows) if n_real is None else int(n_real)
        T = len(rows)
        # tight means rows @ theta = rhs (1: the margin; 0: a coordinate row)
        self.rhs = _held(out, "rhs", 1.0 if rhs is None else np.asarray(rhs, dtype=float), (T,), float)
        self.rhs0 = self.rhs.copy()  # without perturbation
        self.m = rows.shape[1]
        tight = np.asarray(tight, dtype=np.int64)
        if tight.shape != (self.m,) or len(set(tight.tolist())) != self.m:
            raise SingularBlockError(f"a block needs {self.m} distinct tight triples")
        self.tight = _held(out, "tight", tight, (self.m,), np.int64)
        self.in_block = _held(out, "in_block", False, (T,), bool)
        self.in_block[self.tight] = True
        self.position = _held(out, "position", -1, (T,), np.int64)  # place in the block
        self.position[self.tight] = np.arange(self.m)
        if out is not None:  # refactorise fills arrays of the right shapes in place
            for name in ("Binv", "G", "theta", "r", "rabs"):
                setattr(self, name, out[name])
        self.refactorise()
        if ybasic is None:
            ybasic = self.r >= 0
        self.ybasic = _held(out, "ybasic", np.asarray(ybasic, dtype=bool), (T,), bool)
        self.updates = 0

    # -- factorisation ---------------------------------------------------------
    def refactorise(self):
        """Inverse, tableau rows and vertex afresh from the tight rows
        (:func:`gto.engine._kernels.refactor`); in place once allocated: a compiled
        search holds these arrays (gto.engine._tabu_loop)."""
        m, T = self.m, len(self.rows)
        for name, shape in (("Binv", (m, m)), ("G", (m, T)), ("theta", (m,)), ("r", (T,)),
                            ("rabs", (T,))):
            if getattr(self, name, None) is None or getattr(self, name).shape != shape:
                setattr(self, name, np.empty(shape))
        if not refactor(self.rows, self.tight, self.rhs, self.coord, self.n_coord, self.points,
                        MAX_COND, self.Binv, self.G, self.H, self.theta, self.r, self.rabs):
            raise SingularBlockError("tight triples are (nearly) affinely dependent")

    def set_basis(self, tight, ybasic):
        """Go back to the vertex of block rows ``tight`` (in this order) with ``ybasic``."""
        self.tight[:] = tight
        self.in_block[:] = False
        self.in_block[self.tight] = True
        self.position[:] = -1
        self.position[self.tight] = np.arange(self.m)
        self.refactorise()
        self.ybasic[:] = ybasic

    _STATE = ("Binv", "G", "H", "theta", "r", "rabs", "tight", "ybasic", "in_block", "position")

    def _state(self):
        """Copies of everything a pivot changes (for :meth:`_restore`)."""
        return {name: getattr(self, name).copy() for name in self._STATE}

    def _restore(self, state):
        """Back to a :meth:`_state`, in place (``H`` may be a view into a caller's array)."""
        for name in self._STATE:
            getattr(self, name)[...] = state[name]
        self.updates -= 1

    def track(self, points, out=None):
        """Also keep ``H = (points @ M^-1)^T`` (the points' rates along each edge)
        up to date, in ``out`` (m, len(points)) if given."""
        self.points = points
        self.H = np.empty((self.m, len(points))) if out is None else out
        np.matmul(self.Binv.T, points.T, out=self.H)

    def _set_theta(self):
        block_theta(self.Binv, self.rows, self.rhs, self.tight, self.coord, self.n_coord,
                    self.theta, self.r, self.rabs)

    def residual(self):
        """max |M theta - rhs| over the block rows."""
        return float(residual(self._rows_t, self.tight, self.theta, self.rhs))

    # -- edges -----------------------------------------------------------------
    # A basic y (r >= 0) reaches 0 when r falls, a basic u (r <= 0) when r
    # rises; along sigma * M^-1 e_q, dr/dt = -sigma g.  With h = g for basic y
    # and -g for basic u, the row blocks sigma = +1 when h > tol and sigma = -1
    # when h < -tol, at step |r| / |g| either way.  Ties go to the lowest index.

    def ratio_test(self, q, sigma):
        """First basic y/u to reach 0 along ``sigma * M^-1 e_q``.

        Returns ``(step, leaving)``, ``(inf, -1)`` for an unbounded ray.
        """
        return ratio_one(self.G, q, sigma, self.rabs, self.ybasic, self.in_block, PIVOT_TOL,
                         PIVOT_RTOL)

    def is_leaving(self, q, sigma, leave, rtol=1e-9):
        """True if row ``leave`` blocks the ray freeing position q and ties the
        minimum ratio (degenerate ties)."""
        step, _ = self.ratio_test(q, sigma)
        g = self.G[q]
        h = g[leave] if self.ybasic[leave] else -g[leave]
        threshold = pivot_threshold(g, self.in_block, PIVOT_TOL, PIVOT_RTOL)
        if self.in_block[leave] or not sigma * h > threshold:
            return False
        return self.rabs[leave] / abs(g[leave]) <= step * (1 + rtol) + 1e-12

    def ratio_test_all(self):
        """Ratio tests of all 2m edges: columns q with sigma=+1, then sigma=-1.

        Returns ``(steps, leaving)`` arrays of length 2m (inf / -1 for rays).
        """
        return ratio_all(self.G, self.rabs, self.ybasic, self.in_block, PIVOT_TOL,
                         PIVOT_RTOL)

    def coordinate_ratio_test_all(self):
        """:meth:`ratio_test_all` over the coordinate rows only: where each edge's
        ray first takes a nonzero weight to 0 (rows counted from ``coord``;
        see :func:`gto.engine._kernels.edge_slots`)."""
        c = slice(self.coord, self.coord + self.n_coord)
        return ratio_all(self.G[:, c], self.rabs[c], self.ybasic[c], self.in_block[c], PIVOT_TOL,
                         PIVOT_RTOL)

    def coordinate_ratio_test(self, q, sigma):
        """:meth:`ratio_test` over the coordinate rows only (rows counted from ``coord``)."""
        c = slice(self.coord, self.coord + self.n_coord)
        return ratio_one(self.G[:, c], q, sigma, self.rabs[c], self.ybasic[c], self.in_block[c],
                         PIVOT_TOL, PIVOT_RTOL)

    def set_rhs(self, rhs):
        """Move to the vertex of this basis for right-hand side ``rhs`` (perturbation)."""
        self.rhs = np.asarray(rhs, dtype=float)
        self._set_theta()

    def n_nonzero(self):
        """Weights not pinned to 0 by a tight coordinate row (n without coordinate rows)."""
        t = self.tight
        return self.m - 1 - int(np.sum((t >= self.coord) & (t < self.coord + self.n_coord)))

    def real_positions(self):
        """Bool (m,): block positions holding a real triple (not a pseudo-row)."""
        return self.tight < self.n_real

    def pivot(self, q, sigma, leave):
        """Swap block position q for triple ``leave`` (Sherman-Morrison row update).

        Raises :class:`DegeneratePivotError`, changing nothing, when the pivot
        element is numerically zero (relative to ``PIVOT_TOL``), or when the
        refactorisation due after it finds the new block (nearly) singular
        (beyond ``MAX_COND``): then the block is first restored exactly to the
        vertex before the pivot, so a caller treats both alike, as a refused
        pivot."""
        next_update = self.updates + 1
        due_refactor = next_update % REFACTOR_EVERY == 0
        due_check = next_update % CHECK_EVERY == 0
        before = self._state() if due_refactor or due_check else None  # may refactorise
        code = block_step(self.Binv, self.G, self.H, self._rows_t, self.rhs, self.tight,
                          self.in_block, self.position, self.ybasic, q, leave, sigma, self.theta,
                          self.r, self.rabs, self.coord, self.n_coord, ZERO_TOL, PIVOT_TOL,
                          due_refactor, due_check, RESIDUAL_TOL)
        if code == 0:
            raise DegeneratePivotError(f"row {leave} cannot replace block position {q}: "
                                       "its pivot element is numerically zero")
        self.updates += 1
        if code == 2:
            try:
                self.refactorise()
            except SingularBlockError:
                self._restore(before)
                raise DegeneratePivotError(
                    f"row {leave} cannot replace block position {q}: the new block is "
                    "(nearly) singular") from None
