"""Scipy-style LP data to the standard form {x : A x = b, x >= 0 except free columns}, and back.

User variable ``u_j`` with bounds ``(lb, ub)`` becomes one standard column ``x_j``:

* ``lb`` finite: ``u_j = lb + x_j``; if ``ub`` is finite too, a bound row
  ``x_j + s = ub - lb`` with its own slack ``s >= 0``;
* ``lb = -inf``, ``ub`` finite: ``u_j = ub - x_j``;
* both infinite: ``u_j = x_j``, a free column.

Columns are ``[user variables | slacks of A_ub rows | slacks of bound rows]``,
rows are ``[A_ub rows | A_eq rows | bound rows]``.  The matrix is sparse (CSC)
when ``A_ub`` or ``A_eq`` is, dense otherwise.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class StandardForm:
    """An LP ``min c x + c0`` over ``{A x = b, x >= 0 except free}`` and its map to user variables."""

    A: object
    b: np.ndarray
    c: np.ndarray
    c0: float
    free: np.ndarray
    sign: np.ndarray     #: user u = shift + sign * x[:n_user]
    shift: np.ndarray
    slack_rows: np.ndarray  #: row of each slack column n_user, n_user+1, ...

    @property
    def n_user(self) -> int:
        return self.sign.size

    def to_user(self, X) -> np.ndarray:
        """User variables of standard-form point(s) ``X`` (shape (n,) or (k, n))."""
        X = np.asarray(X, dtype=float)
        return self.shift + self.sign * X[..., : self.n_user]

    def from_user(self, u) -> np.ndarray:
        """The standard-form point (slacks included) of user point ``u``."""
        u = check_vector("x0", u, self.n_user)
        x = np.zeros(self.A.shape[1])
        x[: self.n_user] = self.sign * (u - self.shift)
        left = self.b - self.A[:, : self.n_user] @ x[: self.n_user]
        x[self.n_user:] = left[self.slack_rows]
        return x


def check_vector(name, v, size=None) -> np.ndarray:
    try:
        v = np.asarray(v, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be an array of numbers") from None
    if v.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {v.shape}")
    if size is not None and v.size != size:
        raise ValueError(f"{name} must have {size} entries, got {v.size}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return v


def check_matrix(name, M, n):
    if sp.issparse(M):
        M = sp.csc_matrix(M, dtype=float)
        data = M.data
    else:
        try:
            M = np.asarray(M, dtype=float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must be a matrix of numbers") from None
        if M.ndim == 1 and M.size == 0:
            M = M.reshape(0, n if n is not None else 0)
        data = M
    if M.ndim != 2:
        raise ValueError(f"{name} must be two-dimensional, got shape {M.shape}")
    if n is not None and M.shape[1] != n:
        raise ValueError(f"{name} has {M.shape[1]} columns, expected {n}")
    if not np.all(np.isfinite(data)):
        raise ValueError(f"{name} must be finite (no NaN or inf)")
    return M


def parse_bounds(bounds, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bound arrays from scipy-style ``bounds`` (None means infinite)."""
    if bounds is None:
        bounds = (0, None)

    def pair(p):
        if p is None:
            return (-np.inf, np.inf)
        if len(p) != 2:
            raise ValueError(f"a bound must be a pair (lb, ub), got {p!r}")
        lo = -np.inf if p[0] is None else float(p[0])
        hi = np.inf if p[1] is None else float(p[1])
        if np.isnan(lo) or np.isnan(hi) or lo == np.inf or hi == -np.inf:
            raise ValueError(f"invalid bound pair {p!r}")
        return lo, hi

    try:
        single = len(bounds) == 2 and all(v is None or np.ndim(v) == 0 for v in bounds)
    except TypeError:
        raise TypeError("bounds must be a pair (lb, ub) or a sequence of pairs") from None
    if single:
        lo, hi = pair(bounds)
        return np.full(n, lo), np.full(n, hi)
    if len(bounds) != n:
        raise ValueError(f"bounds has {len(bounds)} pairs, expected {n}")
    pairs = [pair(p) for p in bounds]
    return (np.array([p[0] for p in pairs], dtype=float).reshape(n),
            np.array([p[1] for p in pairs], dtype=float).reshape(n))


def n_variables(c, A_ub, A_eq, bounds) -> int:
    """Number of user variables implied by whichever input is given."""
    for M in (A_ub, A_eq):
        if M is not None and (sp.issparse(M) or np.ndim(M) == 2):
            return M.shape[1] if sp.issparse(M) else np.shape(M)[1]
    if c is not None:
        return np.asarray(c).size
    if bounds is not None and not (len(bounds) == 2 and all(v is None or np.ndim(v) == 0 for v in bounds)):
        return len(bounds)
    raise ValueError("cannot tell the number of variables: give A_ub, A_eq, c or per-variable bounds")


def to_standard_form(c, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None)) -> StandardForm:
    """Convert ``min c u s.t. A_ub u <= b_ub, A_eq u = b_eq, lb <= u <= ub`` (``c`` may be None)."""
    n = n_variables(c, A_ub, A_eq, bounds)
    c = np.zeros(n) if c is None else check_vector("c", c, n)
    if (A_ub is None) != (b_ub is None) or (A_eq is None) != (b_eq is None):
        raise ValueError("give A_ub with b_ub and A_eq with b_eq")
    A_ub = check_matrix("A_ub", np.zeros((0, n)) if A_ub is None else A_ub, n)
    A_eq = check_matrix("A_eq", np.zeros((0, n)) if A_eq is None else A_eq, n)
    b_ub = check_vector("b_ub", np.zeros(0) if b_ub is None else np.atleast_1d(b_ub), A_ub.shape[0])
    b_eq = check_vector("b_eq", np.zeros(0) if b_eq is None else np.atleast_1d(b_eq), A_eq.shape[0])
    lb, ub = parse_bounds(bounds, n)

    free = np.isinf(lb) & np.isinf(ub)
    flip = np.isinf(lb) & np.isfinite(ub)
    sign = np.where(flip, -1.0, 1.0)
    shift = np.where(flip, ub, np.where(np.isfinite(lb), lb, 0.0))
    boxed = np.flatnonzero(np.isfinite(lb) & np.isfinite(ub))
    m_ub, m_eq, m_bd = A_ub.shape[0], A_eq.shape[0], boxed.size

    scale = sp.diags(sign)
    rows = [
        [sp.csc_matrix(A_ub) @ scale, sp.identity(m_ub), sp.csc_matrix((m_ub, m_bd))],
        [sp.csc_matrix(A_eq) @ scale, sp.csc_matrix((m_eq, m_ub)), sp.csc_matrix((m_eq, m_bd))],
        [sp.csc_matrix((np.ones(m_bd), (np.arange(m_bd), boxed)), shape=(m_bd, n)),
         sp.csc_matrix((m_bd, m_ub)), sp.identity(m_bd)],
    ]
    A = sp.bmat(rows, format="csc")
    if not (sp.issparse(A_ub) or sp.issparse(A_eq)):
        A = A.toarray()
    b = np.concatenate([b_ub - A_ub @ shift, b_eq - A_eq @ shift, (ub - lb)[boxed]])
    free_std = np.concatenate([free, np.zeros(m_ub + m_bd, bool)])
    slack_rows = np.concatenate([np.arange(m_ub), m_ub + m_eq + np.arange(m_bd)])
    return StandardForm(A=A, b=b, c=np.concatenate([c * sign, np.zeros(m_ub + m_bd)]),
                        c0=float(c @ shift), free=free_std, sign=sign, shift=shift,
                        slack_rows=slack_rows)
