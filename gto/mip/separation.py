"""Linear programs of one decision of a fixed tree on scaled data (DESIGN §7), by HiGHS.

A decision ``(w, gamma)`` sends a point left when ``x.w - gamma <= 0`` and
right when ``x.w - gamma >= epsilon``; weights are bounded, ``|w|_inf <= 1``
(the hypothesis class of :mod:`gto.mip.oblique`; its bound ``|gamma| <= n``
never binds, see :func:`margin`).  Two LPs, both on small dense data:

- :func:`margin`: the largest margin ``t`` with which given left and right
  point sets can be split (capped at 1); the split belongs to the class iff
  ``t >= epsilon``;
- :func:`fit`: a decision that splits given sets with margin ``epsilon``
  (hard) and sends other points to preferred sides where it can (hinge
  slack, minimised), the heuristic of the branch and bound's node trees.

Both call HiGHS through highspy on one reused ``Highs`` object.
"""
from __future__ import annotations

import numpy as np

#: a split is in the class when its largest margin is at least ``epsilon - TOL``;
#: far inside HiGHS's primal feasibility tolerance (1e-7) times the value range
TOL = 1e-7
#: soft points are asked for this much beyond the hard margin (scaled units)
SOFT_MARGIN = 1e-2
#: a row is in an LP's dual support when its dual exceeds this
DUAL_TOL = 1e-9

_HIGHS = None


def _highs():
    global _HIGHS
    if _HIGHS is None:
        import highspy

        _HIGHS = highspy.Highs()
        _HIGHS.setOptionValue("output_flag", False)
        _HIGHS.setOptionValue("threads", 1)
    return _HIGHS


def _solve(cost, A, row_lower, row_upper, col_lower, col_upper, duals=False):
    """Minimise ``cost @ x`` s.t. ``row_lower <= A x <= row_upper``; ``x`` or None if infeasible.

    With ``duals`` returns ``(x, row duals)``.
    """
    import highspy as hp

    h = _highs()
    inf = hp.kHighsInf
    lp = hp.HighsLp()
    lp.num_col_, lp.num_row_ = A.shape[1], A.shape[0]
    lp.col_cost_ = cost
    lp.col_lower_ = np.where(np.isfinite(col_lower), col_lower, -inf)
    lp.col_upper_ = np.where(np.isfinite(col_upper), col_upper, inf)
    lp.row_lower_ = np.where(np.isfinite(row_lower), row_lower, -inf)
    lp.row_upper_ = np.where(np.isfinite(row_upper), row_upper, inf)
    nz = np.nonzero(A.T)  # column-wise
    lp.a_matrix_.format_ = hp.MatrixFormat.kColwise
    lp.a_matrix_.start_ = np.searchsorted(nz[0], np.arange(A.shape[1] + 1))
    lp.a_matrix_.index_ = nz[1]
    lp.a_matrix_.value_ = A.T[nz]
    h.clearModel()
    h.passModel(lp)
    h.run()
    status = h.getModelStatus()
    if status == hp.HighsModelStatus.kInfeasible:
        return None
    if status != hp.HighsModelStatus.kOptimal:
        raise RuntimeError(f"HiGHS ended a separation LP with {h.modelStatusToString(status)}")
    solution = h.getSolution()
    if duals:
        return np.asarray(solution.col_value), np.asarray(solution.row_dual)
    return np.asarray(solution.col_value)


def _rows(X_left, X_right):
    """``[x, -1]`` rows of the left then the right points: row @ (w, gamma) is the value."""
    pts = np.vstack([X_left, X_right])
    return np.hstack([pts, -np.ones((len(pts), 1))])


def margin(X_left, X_right, support=False):
    """Largest ``t <= 1`` with ``x.w - gamma <= 0`` on the left and ``>= t`` on the right.

    Returns ``(t, w, gamma)``.  ``|w|_inf <= 1`` and the data in [0, 1]^n give
    ``|x.w| <= n``; when both sides have points, any split has
    ``gamma`` between two such values, so a bound ``|gamma| <= n`` (the MIP's)
    never binds; with one side empty ``w = 0`` and ``gamma = -+1`` split.

    With ``support`` also returns the indices (into the stacked left then
    right points) of the rows with a nonzero dual: by LP duality these
    points alone have the same largest margin, so when ``t < epsilon`` they
    are a subset no decision of the class splits (at most ``n + 2`` points
    in a basic dual solution; Kirchberger's bound).
    """
    n = X_left.shape[1]
    if len(X_right) == 0 or len(X_left) == 0:
        out = (1.0, np.zeros(n), 1.0 if len(X_right) == 0 else -1.0)
        return out + (np.zeros(0, dtype=int),) if support else out
    R = _rows(X_left, X_right)
    nl = len(X_left)
    t_col = np.r_[np.zeros(nl), -np.ones(len(X_right))][:, None]
    A = np.hstack([R, t_col])
    lower = np.r_[np.full(nl, -np.inf), np.zeros(len(X_right))]
    upper = np.r_[np.zeros(nl), np.full(len(X_right), np.inf)]
    cost = np.r_[np.zeros(n + 1), -1.0]
    col_lower = np.r_[-np.ones(n), -np.inf, -np.inf]
    col_upper = np.r_[np.ones(n), np.inf, 1.0]
    x, dual = _solve(cost, A, lower, upper, col_lower, col_upper, duals=True)
    out = (float(x[-1]), x[:n], float(x[n]))
    return out + (np.flatnonzero(np.abs(dual) > DUAL_TOL),) if support else out


def fit(X_left, X_right, soft_left, soft_right, soft_weight, epsilon):
    """A decision with margin ``epsilon`` on the hard sets and least hinge on the soft ones.

    Soft points ask for ``x.w - gamma <= -SOFT_MARGIN`` (left) or
    ``>= epsilon + SOFT_MARGIN`` (right); the weighted sum of their shortfalls
    is minimised.  Returns ``(w, gamma)``, or None when the hard sets cannot
    be split with margin ``epsilon``.
    """
    n = X_left.shape[1]
    hard = _rows(X_left, X_right)
    soft = _rows(soft_left, soft_right)
    nh, ns, nl, sl = len(hard), len(soft), len(X_left), len(soft_left)
    A = np.zeros((nh + ns, n + 1 + ns))
    A[:nh, : n + 1] = hard
    A[nh:, : n + 1] = soft
    A[nh + np.arange(ns), n + 1 + np.arange(ns)] = np.where(np.arange(ns) < sl, -1.0, 1.0)
    lower = np.r_[np.full(nl, -np.inf), np.full(nh - nl, epsilon - TOL),
                  np.full(sl, -np.inf), np.full(ns - sl, epsilon + SOFT_MARGIN)]
    upper = np.r_[np.zeros(nl), np.full(nh - nl, np.inf),
                  np.full(sl, -SOFT_MARGIN), np.full(ns - sl, np.inf)]
    cost = np.r_[np.zeros(n + 1), soft_weight]
    col_lower = np.r_[-np.ones(n), -np.inf, np.zeros(ns)]
    col_upper = np.r_[np.ones(n), np.inf, np.full(ns, np.inf)]
    x = _solve(cost, A, lower, upper, col_lower, col_upper)
    if x is None:
        return None
    return x[:n], float(x[n])
