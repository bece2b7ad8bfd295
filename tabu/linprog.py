"""``tabu.linprog``: a complete LP solver on the revised simplex, scipy-style."""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .lu import SingularBasisError
from .result import OptimizeResult
from .simplex import INFEASIBLE, ITERATION_LIMIT, NUMERICAL, OPTIMAL, UNBOUNDED, RevisedSimplex, phase_one
from .standard_form import to_standard_form

MESSAGES = {
    OPTIMAL: "Optimization terminated successfully.",
    ITERATION_LIMIT: "Iteration limit reached.",
    INFEASIBLE: "The problem is infeasible.",
    UNBOUNDED: "The problem is unbounded.",
    NUMERICAL: "Numerical difficulties: the final basis failed the residual check.",
}


def encode_basis(basis, kept_rows, m) -> np.ndarray:
    """The ``.basis`` of a result: basic columns, then ``-(r + 1)`` for each dropped redundant row ``r``."""
    dropped = np.setdiff1d(np.arange(m), kept_rows)
    return np.concatenate([np.asarray(basis, np.intp), -(dropped + 1)])


def decode_basis(code, m, n):
    """Inverse of :func:`encode_basis`; ValueError if ``code`` does not fit an (m, n) standard form."""
    code = np.asarray(code)
    if code.ndim != 1 or code.size != m or not np.issubdtype(code.dtype, np.integer):
        raise ValueError(f"basis must be {m} integers (the .basis of an earlier result)")
    cols, dropped = code[code >= 0], -code[code < 0] - 1
    if np.any(cols >= n) or np.any(dropped >= m):
        raise ValueError("basis entries out of range")
    return cols, np.setdiff1d(np.arange(m), dropped)


def _warm(sf, basis, **tols):
    """A feasible simplex from a given basis, or None when it is singular or infeasible."""
    m, n = sf.A.shape
    cols, kept = decode_basis(basis, m, n)
    try:
        s = RevisedSimplex(sf.A[kept], sf.b[kept], cols, sf.free, **tols)
    except SingularBasisError:
        return None, kept
    if s.infeasibility() > 1e-9 * s.b_scale:
        return None, kept
    return s, kept


def linprog(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), basis=None,
            maxiter=None, tol=1e-9):
    """Minimise ``c @ x`` s.t. ``A_ub x <= b_ub``, ``A_eq x = b_eq``, ``lb <= x <= ub``.

    Same inputs as ``scipy.optimize.linprog`` (dense or sparse matrices;
    ``bounds`` one ``(lb, ub)`` pair for all variables or one per variable,
    None meaning infinite).  ``basis`` is the ``.basis`` of an earlier result
    on an LP of the same shape: the solve starts from it (Phase 2 only, as in
    Frank-Wolfe where only ``c`` changes) and falls back to Phase 1 when it is
    singular or not primal feasible.

    Returns an :class:`OptimizeResult` with ``x``, ``fun`` (None unless status
    is 0 or 1), ``slack`` and ``con`` (residuals of the inequality / equality
    rows), ``status`` (0 optimal, 1 iteration limit, 2 infeasible,
    3 unbounded, 4 numerical trouble), ``success``, ``message``, ``nit``
    (pivots in both phases), ``nit_phase1`` and ``basis`` (standard-form basic
    columns, then ``-(r+1)`` for each redundant row ``r`` dropped by Phase 1).
    """
    if np.size(c) == 0:
        raise ValueError("c must be a non-empty 1-D array: an LP needs at least one variable")
    sf = to_standard_form(c, A_ub, b_ub, A_eq, b_eq, bounds)
    m, n = sf.A.shape
    maxiter = 50 * (m + n) + 1000 if maxiter is None else int(maxiter)
    tols = dict(feas_tol=tol, pivot_tol=tol)
    s = None
    nit1 = 0
    if basis is not None:
        s, kept = _warm(sf, basis, **tols)
    if s is None:
        status, cols, kept, nit1 = phase_one(sf.A, sf.b, sf.free, maxiter=maxiter, **tols)
        if status != OPTIMAL:
            return _result(sf, None, status, nit1, nit1, None, A_ub, b_ub, A_eq, b_eq)
        s = RevisedSimplex(sf.A[kept], sf.b[kept], cols, sf.free, **tols)
    status = s.optimize(sf.c, max(maxiter - nit1, 0), opt_tol=tol)
    x = s.x()
    if status == OPTIMAL and (np.max(np.abs(sf.A @ x - sf.b), initial=0.0) > 1e-7 * s.b_scale
                              or s.infeasibility() > 1e-7 * s.b_scale):
        status = NUMERICAL
    code = encode_basis(s.basis, kept, m)
    return _result(sf, x, status, nit1 + s.nit, nit1, code, A_ub, b_ub, A_eq, b_eq)


def _mul(M, x):
    return M @ x if sp.issparse(M) else np.asarray(M, dtype=float) @ x


def _result(sf, x_std, status, nit, nit1, code, A_ub, b_ub, A_eq, b_eq) -> OptimizeResult:
    x = fun = slack = con = None
    if x_std is not None and status in (OPTIMAL, ITERATION_LIMIT, NUMERICAL):
        x = sf.to_user(x_std)
        fun = float(sf.c @ x_std + sf.c0)
        if A_ub is not None:
            slack = np.asarray(b_ub, float) - _mul(A_ub, x)
        if A_eq is not None:
            con = np.asarray(b_eq, float) - _mul(A_eq, x)
    return OptimizeResult(x=x, fun=fun, slack=slack, con=con, status=status,
                          success=status == OPTIMAL, message=MESSAGES[status], nit=nit,
                          nit_phase1=nit1, basis=code)
