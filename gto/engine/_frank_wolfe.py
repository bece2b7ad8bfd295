"""Frank-Wolfe for the product error (paper §5.1).

The product error is a polynomial in the slacks y.  At x = (theta, y) the
linearised subproblem ``min grad_y f . y`` over the polytope splits into one
weighted robust LP per decision (costs >= 0), solved by the block simplex
warm-started from the previous vertex.  Along the segment to that vertex each
leaf error is a polynomial in lambda (linear for p = 1, quadratic for p = 2),
so f is a polynomial of degree (number of class leaves) * p and the line
search is exact.  After each step the slacks are tightened to max(0, r),
which can only lower f (f is non-decreasing in y >= 0).  The method stops
when the minimum principle holds, ``grad f(x) . (v - x) >= 0``.

With the L1 penalty (``problem.blocks.alpha``, docs/DESIGN.md §3b) the objective adds
``alpha * sum (w+ + w-)``, linear in the LP's variables: the subproblem
charges alpha to both sides of each coordinate row, the line search adds
the linear term ``alpha ((1 - lambda) |w|_1 + lambda |v_w|_1)`` and the
split ``w+ = max(0, w)``, ``w- = max(0, -w)`` is tightened like y.
"""
from __future__ import annotations

import time

import numpy as np

from ..utils.status import Status
from ._formulation import decision_errors
from ._hinge_lp import solve_hinge_lp

GAP_TOL = 1e-9


def _slacks(problem, Theta):
    """Decision values and the tight slacks y = max(0, 1 -/+ z) of every triple."""
    Z = problem.data.X1 @ Theta.T
    return (Z, *decision_errors(Z))


def _leaf_poly(problem, YL, YR, dL, dR):
    """Per leaf the polynomial coefficients (N, K, p + 1) of LeafErr(y + lambda d)."""
    SL, SR = problem.layout.SL.T, problem.layout.SR.T
    if problem.p == 1:
        return np.stack([YL @ SL + YR @ SR, dL @ SL + dR @ SR], axis=2)
    return np.stack(
        [
            YL**2 @ SL + YR**2 @ SR,
            2 * ((YL * dL) @ SL + (YR * dR) @ SR),
            dL**2 @ SL + dR**2 @ SR,
        ],
        axis=2,
    )


def product_polynomial(problem, YL, YR, dL, dR):
    """Coefficients (lowest first) of f(y + lambda d) for the product error (eq. 19)."""
    leaf = _leaf_poly(problem, YL, YR, dL, dR)
    counts = np.zeros(problem.data.N, dtype=int)
    for sl in problem.layout.leaf_slices:
        counts[sl] += 1
    degree = int(counts.max()) * problem.p
    acc = np.zeros((problem.data.N, degree + 1))
    acc[:, 0] = 1.0
    for k, sl in enumerate(problem.layout.leaf_slices):
        new = np.zeros_like(acc[sl])
        for j in range(problem.p + 1):
            new[:, j:] += acc[sl, : degree + 1 - j] * leaf[sl, k, j, None]
        acc[sl] = new
    return problem.data.weight @ acc


def _exact_line_search(coef):
    """argmin over [0, 1] of the polynomial with coefficients ``coef`` (lowest first)."""
    poly = np.polynomial.Polynomial(coef)
    candidates = [0.0, 1.0]
    roots = poly.deriv().roots() if len(coef) > 2 else []
    candidates += [float(r.real) for r in roots if abs(r.imag) < 1e-12 and 0 < r.real < 1]
    values = poly(np.array(candidates))
    best = int(np.argmin(values))
    if values[best] >= values[0]:
        return 0.0, float(values[0])
    return candidates[best], float(values[best])


def _gradients(problem, YL, YR):
    """d f / d y for the left and right slacks, (N, D) each."""
    LE = YL**problem.p @ problem.layout.SL.T + YR**problem.p @ problem.layout.SR.T
    gL, gR = np.zeros_like(YL), np.zeros_like(YR)
    for k, sl in enumerate(problem.layout.leaf_slices):
        others = np.ones(sl.stop - sl.start)
        for k2, sl2 in enumerate(problem.layout.leaf_slices):
            if k2 != k and sl2 == sl:
                others = others * LE[sl, k2]
        gL[sl] += np.outer(others, problem.layout.SL[k])
        gR[sl] += np.outer(others, problem.layout.SR[k])
    scale = problem.data.weight[:, None] * problem.p
    if problem.p == 1:
        return gL * scale, gR * scale
    return gL * scale * YL ** (problem.p - 1), gR * scale * YR ** (problem.p - 1)


def frank_wolfe(problem, blocks, max_iter=1000, time_limit=None, callback=None):
    """Minimise the product error from the vertex ``blocks``; the blocks follow the LPs.

    Returns ``(Theta, history, status, message, fewest)``; history rows are
    (iteration, product error, misclassified count, gap) of the iterates;
    ``fewest`` is ``(count, value, Theta, wall time)`` of the iterate with the
    fewest misclassified points (ties by value), which need not be the last.
    ``callback(k, Theta, value)`` may return True to stop.  Values include
    the penalty ``problem.penalty(Theta)``.
    """
    t0 = time.perf_counter()
    Theta = np.array([b.theta for b in blocks])
    Z, YL, YR = _slacks(problem, Theta)
    alpha = problem.blocks.alpha
    value = product_polynomial(problem, YL, YR, 0 * YL, 0 * YR)[0] + problem.penalty(Theta)
    history = [(0, value, problem.n_errors(Z), np.nan)]
    fewest = (history[0][2], value, Theta, time.time())
    status, message = Status.ITERATION_LIMIT, "iteration limit reached"
    try:
        for k in range(1, max_iter + 1):
            gL, gR = _gradients(problem, YL, YR)
            Theta_v = np.empty_like(Theta)
            for d, b in enumerate(blocks):
                pts = problem.blocks.row_points[d]
                left = problem.blocks.row_sides[d] < 0
                cost = np.where(left, gL[pts, d], gR[pts, d])
                if alpha:  # alpha on w- (y) and w+ (u) of the coordinate rows
                    pen = np.full(b.n_coord, alpha)
                    solve_hinge_lp(b, np.concatenate([cost, pen]),
                                   ucost=np.concatenate([np.zeros(len(cost)), pen]))
                else:
                    solve_hinge_lp(b, cost)
                Theta_v[d] = b.theta
            _, VL, VR = _slacks(problem, Theta_v)
            dL, dR = VL - YL, VR - YR
            pen0, pen1 = problem.penalty(Theta), problem.penalty(Theta_v)
            gap = float(np.sum(gL * dL) + np.sum(gR * dR)) + pen1 - pen0
            if gap >= -GAP_TOL * max(1.0, value):
                status, message = Status.CONVERGED, "minimum principle satisfied"
                history.append((k, value, history[-1][2], gap))
                break
            coef = product_polynomial(problem, YL, YR, dL, dR)
            coef[0] += pen0
            coef[1] += pen1 - pen0  # the penalty is linear along the segment
            lam, _ = _exact_line_search(coef)
            if lam == 0.0:
                status, message = Status.CONVERGED, "no descent along the Frank-Wolfe direction"
                history.append((k, value, history[-1][2], gap))
                break
            Theta = Theta + lam * (Theta_v - Theta)
            Z, YL, YR = _slacks(problem, Theta)  # tighten y to max(0, r)
            value = product_polynomial(problem, YL, YR, 0 * YL, 0 * YR)[0] + problem.penalty(Theta)
            history.append((k, value, problem.n_errors(Z), gap))
            if history[-1][2] < fewest[0] or (history[-1][2] == fewest[0] and value < fewest[1]):
                fewest = (history[-1][2], value, Theta, time.time())
            if callback is not None and callback(k, Theta, value):
                status, message = Status.CALLBACK, "stopped by callback"
                break
            if time_limit is not None and time.perf_counter() - t0 > time_limit:
                status, message = Status.TIME_LIMIT, "time limit reached"
                break
    except KeyboardInterrupt:
        status, message = Status.INTERRUPTED, "interrupted"
    return Theta, np.array(history), status, message, fewest
