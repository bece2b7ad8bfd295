"""The GTO error functions (paper §3, eq. 15, 17, 19; docs/DESIGN.md §2) and the lexicographic one."""
from __future__ import annotations

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from ..utils._validation import POWER, check_fit_data, leaf_class_points
from ._formulation import class_leaf_mask, decision_values, leaf_errors

OBJECTIVES = ("product", "minimum", "count", "lexicographic")
#: the count (eq. 15) treats a leaf error at or below this as 0: at a vertex the
#: tight triples sit exactly on the margin, up to floating-point round-off
COUNT_TOL = 1e-9


def check_objective(objective, p=1):
    if objective not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if isinstance(p, bool) or p not in (1, 2):
        raise ValueError(f"p must be 1 or 2, got {p!r}")


#: a point's product error (eq. 19) saturates here, so that sums over points stay
#: finite: deep trees multiply hundreds of leaf errors (1e300 would overflow)
PRODUCT_CAP = 1e250


def class_product(factors):
    """Row products of non-negative ``factors``, finite: in log space where they overflow.

    A row with a zero factor is 0; a product above :data:`PRODUCT_CAP` is the cap.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        P = np.prod(factors, axis=1)
    bad = ~(P <= PRODUCT_CAP)  # inf, NaN (0 * inf) or just too big
    if bad.any():
        F = factors[bad]
        with np.errstate(divide="ignore"):
            logs = np.log(F).sum(axis=1)
        logs[(F == 0).any(axis=1)] = -np.inf  # a zero factor wins over an infinite one
        capped = logs >= np.log(PRODUCT_CAP)
        P[bad] = np.where(capped, PRODUCT_CAP, np.exp(np.where(capped, 0.0, logs)))
    return P


def point_errors(leaf_err, mask, objective):
    """Per-point error over the leaves of the point's own class.

    count (eq. 15): 1 if every class leaf has LeafErr > COUNT_TOL; minimum (eq. 17):
    min_k LeafErr; product (eq. 19): prod_k LeafErr.  ``mask[i, k]`` marks
    the leaves of point i's class.
    """
    if objective == "product":
        return class_product(np.where(mask, leaf_err, 1.0))
    best = np.min(np.where(mask, leaf_err, np.inf), axis=1)
    if objective == "minimum":
        return best
    return (best > COUNT_TOL).astype(float)


def lexicographic(count, minimum, eps, scale=1.0):
    """Count first, then the minimum error: ``count + eps * m / (m + scale)``.

    With ``eps`` below the smallest point weight a lower count always wins;
    ``scale`` (the minimum error at the start, in the walker) sets how fast
    the tie-break saturates.  Works on arrays.
    """
    return count + eps * minimum / (minimum + scale)


def lexicographic_eps(weight):
    """Half the smallest positive point weight: the tie-break stays below one point."""
    positive = weight[weight > 0]
    return 0.5 * (positive.min() if positive.size else 1.0)


@validate_params(
    {"tree": "no_validation", "X": "no_validation", "y": "no_validation",
     "objective": [StrOptions(set(OBJECTIVES))], "p": POWER,
     "sample_weight": ["array-like", None]},
    prefer_skip_nested_validation=True,
)
def error(tree, X, y, objective="product", p=1, sample_weight=None):
    """GTO error of ``tree`` on (X, y): the weighted sum of point errors.

    ``objective`` is "count" (eq. 15), "minimum" (eq. 17), "product"
    (eq. 19) or "lexicographic" (:func:`lexicographic` of the count and the
    minimum error, scale 1); decision errors are
    ``max(0, 1 -/+ (x @ w - gamma))**p``.  All are 0 iff every point is
    classified correctly with margin 1.  A point of a class with no leaf in the
    tree has no triple (docs/DESIGN.md §2) and is left out: it is misclassified
    whatever the decisions, and :func:`gto.optimize` counts it in ``n_errors``
    but not in ``fun``, as here.
    """
    check_objective(objective, p)
    X, y, w = check_fit_data(tree, X, y, sample_weight, leafless=True)
    has_leaf, _ = leaf_class_points(tree, y)
    X, y, w = X[has_leaf], y[has_leaf], w[has_leaf]
    LE = leaf_errors(tree, decision_values(tree, X), p)
    mask = class_leaf_mask(tree, y)
    if objective == "lexicographic":
        count = w @ point_errors(LE, mask, "count")
        minimum = w @ point_errors(LE, mask, "minimum")
        return float(lexicographic(count, minimum, lexicographic_eps(w)))
    return float(w @ point_errors(LE, mask, objective))
