"""The reference walker: vertices of a standard-form polytope on the revised simplex.

Every free column is pivoted into the basis once at the start and never
leaves (it has no ratio-test row), so the moves are exactly the bounded edges
of the polytope: one per nonbasic column, leaving variable chosen by the ratio
test of :meth:`tabu.simplex.RevisedSimplex.edges` (ties to the largest
direction entry, then the first basis position).  Unbounded rays are skipped.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from .simplex import INFEASIBLE, OPTIMAL, RevisedSimplex, phase_one
from .standard_form import check_matrix, check_vector, to_standard_form
from .walker import Walker


def basis_for_point(A, x0, free, tol=1e-9):
    """A basis of the vertex ``x0`` of ``{A x = b, x >= 0}``: its support and free columns, completed.

    Returns ``(basis, kept_rows)``; rows that are linear combinations of the
    others are dropped.  Raises ValueError when the support columns are
    linearly dependent (``x0`` is not a vertex).
    """
    M = A.toarray() if sp.issparse(A) else np.asarray(A, float)
    m, n = M.shape
    scale = max(1.0, float(np.abs(M).max(initial=0.0)))
    support = np.flatnonzero((np.abs(x0) > tol) | free)
    rest = np.setdiff1d(np.arange(n), support)
    if support.size:
        Q, R = np.linalg.qr(M[:, support])
        if support.size > m or np.min(np.abs(np.diag(R))) <= 1e-9 * scale:
            raise ValueError("x0 is not a vertex: its support (and free) columns are linearly dependent")
        P = M[:, rest] - Q @ (Q.T @ M[:, rest])
    else:
        P = M[:, rest]
    extra = np.zeros(0, np.intp)
    if rest.size and m > support.size:
        _, R2, piv = sla.qr(P, mode="economic", pivoting=True)
        rank = int(np.sum(np.abs(np.diag(R2)) > 1e-9 * scale))
        extra = rest[piv[: min(rank, m - support.size)]]
    cols = np.concatenate([support, extra])
    kept = np.arange(m)
    if cols.size < m:
        _, _, rpiv = sla.qr(M[:, cols].T, mode="economic", pivoting=True)
        kept = np.sort(rpiv[: cols.size])
    return cols, kept


class StandardFormWalker(Walker):
    """EPTS walker over ``{x : A x = b, x >= 0 except free columns}`` (paper §5.2).

    Build it with :meth:`from_standard_form` (objective of the standard-form
    ``x``) or :meth:`from_inequalities` (scipy-style data, objective of the
    user's variables).  ``fun`` maps a point to a float; with
    ``vectorized=True`` it maps a (k, n) array to k values and all candidate
    moves are scored in one call.  Variables are the standard-form columns.
    """

    def __init__(self, simplex: RevisedSimplex, fun, *, vectorized: bool = False, to_user=None):
        if not callable(fun):
            raise TypeError("fun must be callable")
        self.simplex = simplex
        simplex.make_free_basic()
        self.n_variables = simplex.n
        self._fun, self._vectorized, self._to_user = fun, bool(vectorized), to_user
        self._x = simplex.x()
        self._value = float(self._score(self._x[None, :])[0])
        self._cache: dict[int, tuple] = {}

    # ----------------------------------------------------------- construction
    @classmethod
    def from_standard_form(cls, fun, A, b, free=None, *, x0=None, basis=None, vectorized=False):
        """Walker on ``{A x = b, x >= 0 except free}`` starting at vertex ``x0``, at ``basis``,
        or at Phase 1's vertex."""
        A = check_matrix("A", A, None)
        b = check_vector("b", b, A.shape[0])
        free = np.zeros(A.shape[1], bool) if free is None else np.asarray(free, bool)
        if free.shape != (A.shape[1],):
            raise ValueError(f"free must have shape ({A.shape[1]},)")
        return cls(_start(A, b, free, x0, basis), fun, vectorized=vectorized)

    @classmethod
    def from_inequalities(cls, fun, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None),
                          *, x0=None, vectorized=False):
        """Walker on ``{A_ub u <= b_ub, A_eq u = b_eq, lb <= u <= ub}``; ``fun`` and ``x0`` in the user's ``u``."""
        sf = to_standard_form(None, A_ub, b_ub, A_eq, b_eq, bounds)
        x_std = None if x0 is None else sf.from_user(x0)
        walker = cls(_start(sf.A, sf.b, sf.free, x_std, None), fun, vectorized=vectorized,
                     to_user=sf.to_user)
        walker.standard_form = sf
        return walker

    # -------------------------------------------------------------- interface
    @property
    def value(self) -> float:
        return self._value

    @property
    def x(self) -> np.ndarray:
        return self._to_user(self._x) if self._to_user else self._x.copy()

    def basis(self) -> np.ndarray:
        return self.simplex.basis.copy()

    def _score(self, X) -> np.ndarray:
        U = self._to_user(X) if self._to_user else X
        if self._vectorized:
            vals = np.asarray(self._fun(U), dtype=float).reshape(-1)
            if vals.size != U.shape[0]:
                raise ValueError(f"vectorized fun returned {vals.size} values for {U.shape[0]} points")
            return vals
        return np.array([float(self._fun(u)) for u in U])

    def _moves(self, cols):
        """Bounded edges for entering ``cols``: (cols, positions, steps, W, values); fills the cache."""
        s = self.simplex
        W, rows, steps = s.edges(cols)
        ok = np.isfinite(steps)
        cols, rows, steps, W = cols[ok], rows[ok], steps[ok], W[:, ok]
        k = cols.size
        X = np.repeat(self._x[None, :], k, axis=0)
        X[:, s.basis] -= (W * steps).T
        X[np.arange(k), s.basis[rows]] = 0.0
        X[np.arange(k), cols] = steps
        values = self._score(X) if k else np.zeros(0)
        leaving = s.basis[rows]
        for i in range(k):
            self._cache[int(cols[i])] = (int(leaving[i]), int(rows[i]), float(steps[i]), W[:, i],
                                         float(values[i]))
        return cols, leaving, values

    def candidates(self):
        cols = np.flatnonzero(self.simplex.pos < 0)
        cols, leaving, values = self._moves(cols)
        return cols, leaving.astype(np.intp), values

    def evaluate(self, entering: int):
        hit = self._cache.get(entering)
        if hit is not None:
            return hit[0], hit[4]
        if self.simplex.pos[entering] >= 0:
            return -1, float("nan")
        cols, leaving, values = self._moves(np.array([entering], dtype=np.intp))
        if cols.size == 0:
            return -1, float("nan")
        return int(leaving[0]), float(values[0])

    def pivot(self, entering: int, leaving: int) -> None:
        s = self.simplex
        hit = self._cache.get(entering)
        if hit is not None and hit[0] == leaving:
            _, r, step, w, value = hit
        else:
            r = int(s.pos[leaving])
            if r < 0 or s.pos[entering] >= 0 or s.free[leaving]:
                raise ValueError(f"({entering}, {leaving}) is not a move at this vertex")
            w = s.direction(entering)
            step = max(s.x_B[r], 0.0) / w[r] if w[r] > s.pivot_tol else -1.0
            after = s.x_B - step * w
            if step < 0 or np.any((after < -1e-7 * s.b_scale) & ~s.free[s.basis]):
                raise ValueError(f"({entering}, {leaving}) is not an edge of the polytope")
            value = None
        s.pivot(entering, r, w, step)
        self._x = s.x()
        self._value = float(self._score(self._x[None, :])[0]) if value is None else value
        self._cache.clear()


def _start(A, b, free, x0, basis) -> RevisedSimplex:
    """The simplex at the requested start: a basis, a vertex ``x0``, or Phase 1's first vertex."""
    m, n = A.shape
    if basis is not None:
        cols, kept = np.asarray(basis, dtype=np.intp), np.arange(m)
    elif x0 is not None:
        x0 = check_vector("x0", x0, n)
        if np.max(np.abs(A @ x0 - b), initial=0.0) > 1e-7 * (1 + np.abs(b).max(initial=0.0)) \
                or np.any((x0 < -1e-9) & ~free):
            raise ValueError("x0 is not in the polytope")
        cols, kept = basis_for_point(A, x0, free)
    else:
        status, cols, kept, _ = phase_one(A, b, free, maxiter=50 * (m + n) + 1000)
        if status != OPTIMAL:
            raise ValueError("the polytope is empty" if status == INFEASIBLE else "phase 1 did not finish")
    s = RevisedSimplex(A[kept], b[kept], cols, free)
    if s.infeasibility() > 1e-7 * s.b_scale:
        raise ValueError("the starting basis is not primal feasible")
    return s
