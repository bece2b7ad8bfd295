"""GTO on categorical data: oblique search on the one-hot columns, one group per decision.

``optimize_categorical`` (:mod:`gto.learners._optimize`) encodes the categorical columns of X as groups of
0/1 columns (:mod:`gto.model._categorical`), runs :func:`gto.optimize` on the
encoded matrix, and with ``one_group=True`` turns the oblique tree into a
tree whose every decision uses one original feature: a subset test
``colour in {red, blue}`` for a categorical feature, a threshold for a
numeric one (the class of :func:`gto.mip.solve_odt`, so the result is a
warm start for it).

How one_group is enforced (documented alternative to a ``max_features``
restriction inside the walker, which the project did not have yet): exact
block coordinate descent over the decisions, started from the routing of the
oblique GTO tree.  With every other decision fixed, each point has a leaf if
it goes left at decision d and one if it goes right; for a categorical group
the values are then independent (all points of a value go the same way), so
the best value set is found value by value, and for a numeric column the
best threshold by one sorted sweep.  Each step picks the best (group, set)
over all groups, exactly; sweeps repeat until no step lowers the weighted
training error.  The training error never exceeds that of the first sweep's
best one-group replacement of the oblique tree.
"""
from __future__ import annotations

import numpy as np

from ..model._categorical import NUMERIC
from ..model.tree import Tree
from ..utils._validation import check_labels, check_sample_weight


def _leaves(sides, left):
    """Leaf of each point given (N, D) bool left-going decisions."""
    s = np.where(left, -1, 1).astype(np.int64)
    match = s @ sides.T.astype(np.int64)
    return np.argmax(match == np.abs(sides).sum(axis=1), axis=1)


def _best_for_column(col, codes, x, errL, errR):
    """Best one-feature decision of one column: (error, ("subset", mask) or ("threshold", w, gamma))."""
    if col.kind != NUMERIC:
        n = col.n_values
        eL = np.bincount(codes, weights=errL, minlength=n)
        eR = np.bincount(codes, weights=errR, minlength=n)
        mask = eL < eR
        return float(np.minimum(eL, eR).sum()), ("subset", mask)
    order = np.argsort(x, kind="stable")
    xs, l, r = x[order], errL[order], errR[order]
    cl, cr = np.concatenate([[0], np.cumsum(l)]), np.concatenate([[0], np.cumsum(r)])
    # cut after position p (p = 0..N): prefix left or suffix left
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(xs) > 0) + 1, [len(xs)]])
    prefix = cl[cuts] + (cr[-1] - cr[cuts])
    suffix = cr[cuts] + (cl[-1] - cl[cuts])
    i, j = int(np.argmin(prefix)), int(np.argmin(suffix))

    def gamma(p):  # threshold between xs[p-1] and xs[p]
        return (xs[p - 1] + xs[p]) / 2

    best = []
    for err, p, sign in ((prefix[i], cuts[i], 1.0), (suffix[j], cuts[j], -1.0)):
        if p == 0:  # nothing on the prefix side
            best.append((err, ("threshold", 0.0, -1.0 if sign > 0 else 0.0)))
        elif p == len(xs):
            best.append((err, ("threshold", 0.0, 0.0 if sign > 0 else -1.0)))
        else:
            best.append((err, ("threshold", sign, sign * gamma(p))))
    return min(best, key=lambda t: t[0])


def one_group_tree(left, structure, encoding, X, y, sample_weight=None, max_sweeps=50):
    """Tree of one-feature decisions on the original columns (module docstring).

    ``left`` is the (N, D) bool routing to start from (e.g. an oblique tree's
    ``decision_values(...) <= 0`` on the encoded data).
    """
    values = encoding.table(X)
    y = check_labels(y, len(values))
    w = check_sample_weight(sample_weight, len(values))
    shape = Tree(structure, 1)
    sides, classes = shape.sides, shape.leaf_classes
    codes = encoding.codes(X)
    nums = {c.index: np.asarray(values[:, c.index], dtype=float)
            for c in encoding.columns if c.kind == NUMERIC}
    left = np.array(left, dtype=bool)
    D = shape.n_decisions
    rules = [None] * D
    current = float(w[classes[_leaves(sides, left)] != y].sum())
    for _ in range(max_sweeps):
        improved = False
        for d in range(D):
            forced = left.copy()
            forced[:, d] = True
            errL = w * (classes[_leaves(sides, forced)] != y)
            forced[:, d] = False
            errR = w * (classes[_leaves(sides, forced)] != y)
            best = None
            for col in encoding.columns:
                err, rule = _best_for_column(col, codes[:, col.index], nums.get(col.index), errL, errR)
                if best is None or err < best[0] - 1e-12:
                    best = (err, col, rule)
            err, col, rule = best
            if rules[d] is None or err < current - 1e-12:
                fresh = rules[d] is None  # first replacement of an oblique decision:
                rules[d] = (col, rule)    # the others must be revisited (sweep again)
                left[:, d] = _route(col, rule, codes[:, col.index], nums.get(col.index))
                new = float(w[classes[_leaves(sides, left)] != y].sum())
                improved |= fresh or new < current - 1e-12
                current = new
        if not improved:
            break
    return _tree(structure, encoding, rules)


def _route(col, rule, codes, x):
    if rule[0] == "subset":
        mask = rule[1]
        return (codes >= 0) & mask[np.maximum(codes, 0)]
    _, s, gamma = rule
    return s * x - gamma <= 0


def _tree(structure, encoding, rules):
    D, n = len(rules), encoding.n_features
    W, gamma, subsets = np.zeros((D, n)), np.zeros(D), [None] * D
    for d, (col, rule) in enumerate(rules):
        if rule[0] == "subset":  # nominal: GTO keeps numeric columns numeric (no bins)
            subsets[d] = (col.index, tuple(col.values[rule[1]].tolist()))
        else:
            W[d, col.index], gamma[d] = rule[1], rule[2]
    return Tree(structure, n, W=W, gamma=gamma, subsets=subsets)
