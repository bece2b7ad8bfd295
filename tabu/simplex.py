"""Revised simplex on the standard form {x : A x = b, x_j >= 0 unless column j is free}.

Phase 1 (:func:`phase_one`) finds a first basic feasible solution with
artificial columns (slack-like singleton columns start basic where they can);
Phase 2 (:meth:`RevisedSimplex.optimize`) runs the primal simplex with Dantzig
pricing and a Harris two-pass ratio test, switching to Bland's rule (smallest
index entering, smallest basic index leaving among ratio ties) after
``bland_after`` consecutive degenerate pivots so that degenerate vertices cannot
cycle.  :meth:`RevisedSimplex.edges` and :meth:`RevisedSimplex.pivot` are the
vertex-adjacency operations EPTS walks with (paper §5.2).

Tolerances (absolute, so the data should be reasonably scaled):

* ``feas_tol`` (1e-9): a nonnegative basic variable above ``-feas_tol`` is
  feasible; Harris' first pass relaxes the bounds by it.
* ``pivot_tol`` (1e-9): row ``r`` takes part in a ratio test only if its
  direction entry exceeds ``pivot_tol``.
* ``opt_tol`` (1e-9): a column may enter when its reduced cost is below
  ``-opt_tol * max(1, max|c|)`` (free columns: when its absolute value exceeds it).
* ``ratio_tol`` (1e-9): in :meth:`edges`, ratios within ``ratio_tol * (1 + t_min)``
  of the minimum tie; the tie goes to the largest direction entry, then the
  first basis position.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .lu import BasisFactor, SingularBasisError

OPTIMAL, ITERATION_LIMIT, INFEASIBLE, UNBOUNDED, NUMERICAL = 0, 1, 2, 3, 4


class RevisedSimplex:
    """A basis of ``{x : A x = b, x >= 0 (except free columns)}`` and its basic solution.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix, shape (m, n), full row rank
    b : array, shape (m,)
    basis : int array, shape (m,)
        Columns of a nonsingular basis (need not be feasible).
    free : bool array, shape (n,), optional
        Columns without the sign constraint.
    """

    def __init__(self, A, b, basis, free=None, *, feas_tol=1e-9, pivot_tol=1e-9,
                 ratio_tol=1e-9, refactor_every=64, check_every=16):
        self.factor = BasisFactor(A, basis, refactor_every=refactor_every)
        self.A = self.factor.A
        self.m, self.n = self.A.shape
        self.b = np.asarray(b, dtype=float)
        if self.b.shape != (self.m,):
            raise ValueError(f"b must have shape ({self.m},), got {self.b.shape}")
        self.free = np.zeros(self.n, bool) if free is None else np.asarray(free, bool)
        if self.free.shape != (self.n,):
            raise ValueError(f"free must have shape ({self.n},), got {self.free.shape}")
        basis = self.factor.basis
        if basis.size and (basis.min() < 0 or basis.max() >= self.n or np.unique(basis).size != self.m):
            raise ValueError("basis must hold distinct column indices in range")
        self.feas_tol, self.pivot_tol, self.ratio_tol = feas_tol, pivot_tol, ratio_tol
        self.check_every = int(check_every)
        self.pos = np.full(self.n, -1, dtype=np.intp)
        self.pos[basis] = np.arange(self.m)
        self.nit = 0
        self.b_scale = 1.0 + (float(np.abs(self.b).max()) if self.m else 0.0)
        self._refresh()

    # ------------------------------------------------------------------ state
    @property
    def basis(self) -> np.ndarray:
        """Basic columns, by basis position."""
        return self.factor.basis

    def _refresh(self) -> None:
        """Recompute the basic solution from the factor: ``x_B = B^{-1} b``."""
        self.x_B = self.factor.solve(self.b)
        self._since_check = 0
        self._clip()

    def _clip(self) -> None:
        """Round tiny negative values of sign-constrained basic variables up to 0."""
        tiny = (self.x_B < 0) & (self.x_B > -1e-7 * self.b_scale) & ~self.free[self.basis]
        self.x_B[tiny] = 0.0

    def x(self) -> np.ndarray:
        """The basic solution as a full vector."""
        out = np.zeros(self.n)
        out[self.basis] = self.x_B
        return out

    def infeasibility(self) -> float:
        """Largest violation of ``x >= 0`` by a sign-constrained basic variable."""
        if self.m == 0:
            return 0.0
        return float(max(0.0, -np.min(np.where(self.free[self.basis], 0.0, self.x_B))))

    def residual(self) -> float:
        """``max |B x_B - b|``."""
        return self.factor.residual(self.x_B, self.b)

    # ------------------------------------------------------------- adjacency
    def direction(self, q: int) -> np.ndarray:
        """``B^{-1} a_q``: basic variables decrease by ``t * w`` when ``x_q`` rises to ``t``."""
        return self.factor.solve(self.factor.columns(q))

    def ratio_test(self, w: np.ndarray, bland: bool = False) -> tuple[int, float]:
        """Leaving basis position and step length along ``-w`` (``(-1, inf)`` if unbounded).

        Harris two-pass test by default; with ``bland`` the textbook minimum
        ratio with ties to the smallest basic variable index.
        """
        rows = np.flatnonzero((w > self.pivot_tol) & ~self.free[self.basis])
        if rows.size == 0:
            return -1, np.inf
        wr = w[rows]
        xr = np.maximum(self.x_B[rows], 0.0)
        ratios = xr / wr
        if bland:
            tmin = ratios.min()
            ties = rows[ratios <= tmin + 1e-12 * (1.0 + tmin)]
            r = int(ties[np.argmin(self.basis[ties])])
        else:
            tmax = np.min((xr + self.feas_tol) / wr)
            cand = ratios <= tmax
            r = int(rows[cand][np.argmax(wr[cand])])
        return r, max(self.x_B[r], 0.0) / w[r]

    def edges(self, cols) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ratio tests for many entering columns at once.

        Returns ``(W, rows, steps)``: the directions ``B^{-1} A[:, cols]``
        (m, k), the leaving basis position per column (tie rule in the module
        docstring) and the step lengths, ``inf`` for unbounded rays.
        """
        cols = np.asarray(cols, dtype=np.intp)
        W = self.factor.solve(self.factor.columns(cols))
        if self.m == 0:
            return W, np.zeros(cols.size, np.intp), np.full(cols.size, np.inf)
        ok = (W > self.pivot_tol) & ~self.free[self.basis][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            R = np.where(ok, np.maximum(self.x_B, 0.0)[:, None] / np.where(ok, W, 1.0), np.inf)
        tmin = R.min(axis=0)
        ties = ok & (R <= tmin + self.ratio_tol * (1.0 + tmin))
        rows = np.where(ties, W, -np.inf).argmax(axis=0)
        return W, rows, tmin

    def pivot(self, q: int, r: int, w: np.ndarray, theta: float) -> None:
        """Enter column ``q`` at value ``theta`` in basis position ``r``; ``w = B^{-1} a_q``."""
        self.x_B -= theta * w
        self.x_B[r] = theta
        leaving = self.basis[r]
        refactored = self.factor.update(r, q, w)
        self.pos[leaving] = -1
        self.pos[q] = r
        self.nit += 1
        if refactored:
            self._refresh()
            return
        self._since_check += 1
        if self._since_check >= self.check_every:
            self._since_check = 0
            if self.residual() > 1e-9 * self.b_scale:
                self.factor.refactor()
                self._refresh()
                return
        self._clip()

    def make_free_basic(self) -> None:
        """Pivot every nonbasic free column into the basis (they then never leave).

        Each free column moves in the direction with the shorter bounded step
        (a degenerate pivot if there is one).  Raises ValueError when a free
        column has no bounded direction: the polytope then contains a line and
        has no vertex.
        """
        for q in np.flatnonzero(self.free & (self.pos < 0)):
            w = self.direction(q)
            ok = ~self.free[self.basis]
            xb = np.maximum(self.x_B, 0.0)
            best = (np.inf, -1, 1.0)
            for sign in (1.0, -1.0):
                rows = np.flatnonzero(ok & (sign * w > self.pivot_tol))
                if rows.size:
                    ratios = xb[rows] / (sign * w[rows])
                    i = int(np.argmin(ratios))
                    if ratios[i] < best[0]:
                        best = (float(ratios[i]), int(rows[i]), sign)
            step, r, sign = best
            if r < 0:
                raise ValueError(f"free column {q} spans a line inside the polytope: it has no vertex")
            self.pivot(int(q), r, w, sign * step)

    # ---------------------------------------------------------------- phase 2
    def optimize(self, c, maxiter: int, opt_tol: float = 1e-9, bland_after: int = 25):
        """Primal simplex from the current (feasible) basis; returns a status code.

        OPTIMAL, ITERATION_LIMIT or UNBOUNDED (an improving ray exists).
        """
        c = np.asarray(c, dtype=float)
        tol = opt_tol * max(1.0, float(np.abs(c).max()) if c.size else 1.0)
        AT = self.A.T.tocsr() if sp.issparse(self.A) else self.A.T
        degenerate, bland = 0, False
        for _ in range(maxiter):
            y = self.factor.solve_transpose(c[self.basis])
            d = c - AT @ y
            d[self.basis] = 0.0
            score = np.where(self.free, -np.abs(d), d)
            if bland:
                eligible = np.flatnonzero(score < -tol)
                if eligible.size == 0:
                    return OPTIMAL
                q = int(eligible[0])
            else:
                q = int(np.argmin(score))
                if score[q] >= -tol:
                    return OPTIMAL
            w = self.direction(q)
            sign = -1.0 if (self.free[q] and d[q] > 0) else 1.0
            r, step = self.ratio_test(sign * w, bland=bland)
            if r < 0:
                return UNBOUNDED
            self.pivot(q, r, w, sign * step)
            degenerate = degenerate + 1 if step <= self.feas_tol else 0
            bland = degenerate >= bland_after
        return ITERATION_LIMIT


def _singleton_slacks(A, free) -> np.ndarray:
    """Per row, a sign-constrained column whose only nonzero is positive and in that row (or -1)."""
    m, n = A.shape
    if m == 0:
        return np.zeros(0, dtype=np.intp)
    if sp.issparse(A):
        A = A.tocsc()
        counts = np.diff(A.indptr)
        cols = np.flatnonzero((counts == 1) & ~free)
        rows = A.indices[A.indptr[cols]]
        vals = A.data[A.indptr[cols]]
    else:
        nz = A != 0
        cols = np.flatnonzero((nz.sum(axis=0) == 1) & ~free)
        rows = np.argmax(nz[:, cols], axis=0)
        vals = A[rows, cols]
    keep = vals > 0
    rows, cols = rows[keep], cols[keep]
    out = np.full(m, -1, dtype=np.intp)
    uniq, first = np.unique(rows, return_index=True)
    out[uniq] = cols[first]
    return out


def phase_one(A, b, free, *, maxiter: int, feas_tol=1e-9, pivot_tol=1e-9, bland_after=25):
    """Phase 1: a basic feasible solution of ``A x = b``, ``x >= 0`` (except free columns).

    Minimises the sum of artificial variables on the rows that have no
    slack-like column to start from, then pivots remaining zero-level
    artificials out; a row where no column can replace its artificial is
    linearly redundant and is dropped.

    Returns ``(status, basis, kept_rows, nit)``: OPTIMAL with a feasible basis
    of ``A[kept_rows]`` (original column numbers), or INFEASIBLE /
    ITERATION_LIMIT with ``basis = None``.
    """
    m, n = A.shape
    b = np.asarray(b, dtype=float)
    sign = np.where(b < 0, -1.0, 1.0)
    Af = sp.diags(sign) @ A if sp.issparse(A) else A * sign[:, None]
    bf = np.abs(b)
    start = _singleton_slacks(Af, free)
    need = np.flatnonzero(start < 0)
    if need.size == 0:
        return OPTIMAL, start, np.arange(m), 0
    k = need.size
    art = sp.csc_matrix((np.ones(k), (need, np.arange(k))), shape=(m, k))
    if sp.issparse(Af):
        A_ext = sp.hstack([Af, art], format="csc")
    else:
        A_ext = np.hstack([Af, art.toarray()])
    basis = start.copy()
    basis[need] = n + np.arange(k)
    s = RevisedSimplex(A_ext, bf, basis, np.concatenate([free, np.zeros(k, bool)]),
                       feas_tol=feas_tol, pivot_tol=pivot_tol)
    cost = np.concatenate([np.zeros(n), np.ones(k)])
    status = s.optimize(cost, maxiter, bland_after=bland_after)
    if status != OPTIMAL:
        return status, None, None, s.nit
    is_art = s.basis >= n
    if s.x_B[is_art].sum() > 1e-7 * (1.0 + float(bf.max())):
        return INFEASIBLE, None, None, s.nit
    AfT = Af.T.tocsr() if sp.issparse(Af) else Af.T
    redundant = []
    for r in np.flatnonzero(is_art):
        e_r = np.zeros(m)
        e_r[r] = 1.0
        row = AfT @ s.factor.solve_transpose(e_r)
        row[s.basis[s.basis < n]] = 0.0
        j = int(np.argmax(np.abs(row)))
        if abs(row[j]) > 1e-7 * max(1.0, float(np.abs(row).max())):
            w = s.direction(j)
            s.pivot(j, r, w, s.x_B[r] / w[r])
        else:
            redundant.append(need[s.basis[r] - n])
    kept = np.setdiff1d(np.arange(m), redundant)
    return OPTIMAL, s.basis[s.basis < n].copy(), kept, s.nit


__all__ = ["RevisedSimplex", "phase_one", "SingularBasisError",
           "OPTIMAL", "ITERATION_LIMIT", "INFEASIBLE", "UNBOUNDED", "NUMERICAL"]
