"""Turn a given tree into a complete feasible assignment of a MIP model.

Oblique model (:func:`oblique_start`).  Each decision of the start tree is
moved to scaled units, shifted so that its left-going points end at value 0
(which widens the right side's margin to the full gap between the two
sides), then divided by a positive constant into the bounds ``|w| <= 1``,
``|gamma| <= n``; none of this changes how any training point is routed.
Each point then takes its leaf's ``z`` when that leaf has its class and each
right turn on the way clears ``epsilon``; otherwise ``e = 1``.  The start's
objective is therefore the start tree's (weighted) misclassified count, plus
the weight of correctly classified points whose right turn has a normalised
margin below ``epsilon`` (none unless two points nearly touch the
hyperplane from both sides; ``start_objective`` in the result is exact).
Constraints hold to ``TOL`` = 1e-9.
With the symmetry cuts on, mirrored subtrees are swapped where a cut would
be violated, by the same map that proves the cut valid.
"""
from __future__ import annotations

import numpy as np

from ..model.tree import as_tree as to_gto_tree
from ..model.tree import is_fitted_sklearn_tree

TOL = 1e-9


def as_tree(start, tree):
    """``start`` as a gto.Tree with ``tree``'s structure; TypeError/ValueError otherwise."""
    start = to_gto_tree(start, "warm_start")
    if start.n_features != tree.n_features:
        raise ValueError(
            f"warm_start has {start.n_features} features, the tree has {tree.n_features}"
        )
    if start.structure != tree.structure:
        raise ValueError(
            f"warm_start has structure {start.structure!r}, the model needs {tree.structure!r}"
        )
    return start


def _normalise(v_w, gamma, values, n, epsilon):
    """One decision in scaled units into the model's bounds, routing unchanged.

    ``values`` are the decision values of all training points.  The left
    side is shifted to end at 0, so the right side's margin is the whole gap.
    """
    left, right = values <= 0, values > 0
    if not right.any():
        return np.zeros_like(v_w), 0.0  # every point left: value 0
    if not left.any():
        return np.zeros_like(v_w), -1.0  # every point right: value 1 >= epsilon
    gamma = gamma + values[left].max()
    scale = max(np.abs(v_w).max(), abs(gamma) / n)
    return v_w / scale, float(np.clip(gamma / scale, -n, n))


def _routing(model, W, gamma):
    """z and e of scaled decisions: a point takes its own-class leaf if reached with margin.

    Sides are checked to ``TOL``, far inside the solver's feasibility
    tolerance (1e-6 in HiGHS), so rounding in the shifts above loses nothing.
    """
    V = model.Xs @ W.T - gamma  # (N, D)
    S = model.tree.sides[model.z_leaf]  # (nz, D)
    v = V[model.z_point]
    ok = np.where(S < 0, v <= TOL, np.where(S > 0, v >= model.epsilon - TOL, True)).all(axis=1)
    z = ok.astype(float)
    e = 1.0 - np.bincount(model.z_point, weights=z, minlength=len(model.y))
    return z, e


def _flip(model, W, gamma, z):
    """Apply the symmetry map of :meth:`ObliqueModel.symmetry_cuts` where a cut fails."""
    wz = model.weight[model.z_point]
    n = model.tree.n_features
    for d, left_d, right_d, left_k, right_k in model.mirror_pairs:
        if wz @ (z * np.isin(model.z_leaf, left_k)) >= wz @ (z * np.isin(model.z_leaf, right_k)):
            continue
        W[left_d], W[right_d] = W[right_d].copy(), W[left_d].copy()
        gamma[left_d], gamma[right_d] = gamma[right_d].copy(), gamma[left_d].copy()
        W[d], gamma[d] = -W[d], np.clip(-gamma[d] - model.epsilon, -n, n)
        z, _ = _routing(model, W, gamma)
    return W, gamma


def scaled_start(start, tree, scaling, Xs, epsilon):
    """``start``'s decisions in scaled units within the bounds, routing of ``Xs`` unchanged."""
    start = as_tree(start, tree)
    W_s, g_s = scaling.to_scaled(start.W, start.gamma)
    V = Xs @ W_s.T - g_s
    W = np.zeros_like(W_s)
    gamma = np.zeros(len(g_s))
    for d in range(len(g_s)):
        W[d], gamma[d] = _normalise(W_s[d], g_s[d], V[:, d], tree.n_features, epsilon)
    return W, gamma


def oblique_start(model, start):
    """Complete feasible assignment ``{Variable: value}`` of ``model`` from a tree."""
    W, gamma = scaled_start(start, model.tree, model.scaling, model.Xs, model.epsilon)
    z, e = _routing(model, W, gamma)
    if model.tighten:
        W, gamma = _flip(model, W, gamma, z)
        z, e = _routing(model, W, gamma)
    return {model.w: W.ravel(), model.gamma: gamma, model.z: z, model.e: e}


def _cart(model, X, y, w):
    from sklearn.tree import DecisionTreeClassifier

    leaves = None if model.max_splits is None else model.max_splits + 1
    if leaves == 1:
        return None
    return DecisionTreeClassifier(
        max_depth=model.depth, min_samples_leaf=model.n_min, max_leaf_nodes=leaves, random_state=0
    ).fit(X, y, sample_weight=w)


def oct_start(model, start, X, y, w):
    """Complete feasible assignment of an :class:`OCTModel` from a CART tree.

    ``start`` is ``"cart"`` (fit scikit-learn's CART with the model's depth,
    ``min_samples_leaf = n_min`` and at most ``max_splits + 1`` leaves on the
    original data ``X, y, w``) or a fitted ``DecisionTreeClassifier``.  A CART
    split ``x_f <= thr`` becomes ``a = e_f`` with ``b`` the smallest scaled
    value of feature f above thr, so every point is routed as CART routes it;
    a CART leaf above depth D becomes a chain of non-splits whose points all
    go right.  Leaves then take their majority class.  ValueError when the
    start breaks the depth, leaf size or split budget.
    """
    if isinstance(start, str):
        if start != "cart":
            raise ValueError(f"warm_start must be 'cart', None or a fitted tree, got {start!r}")
        start = _cart(model, X, y, w)
        if start is None:
            return None
    elif not is_fitted_sklearn_tree(start):
        raise TypeError(
            "warm_start must be 'cart', None or a fitted sklearn DecisionTreeClassifier, "
            f"got {type(start).__name__}"
        )
    t_ = start.tree_
    if t_.n_features != X.shape[1]:
        raise ValueError(f"warm_start has {t_.n_features} features, X has {X.shape[1]}")
    if t_.max_depth > model.depth:
        raise ValueError(f"warm_start has depth {t_.max_depth}, more than {model.depth}")
    B, p = model.n_branch, X.shape[1]
    a, b, d = np.zeros((B, p)), np.zeros(B), np.zeros(B)

    def place(t, node):
        if t >= B:
            return
        if node is not None and t_.children_left[node] != -1:
            f, thr = t_.feature[node], t_.threshold[node]
            above = model.Xs[model.X[:, f] > thr, f]
            a[t, f], d[t], b[t] = 1.0, 1.0, above.min()
            place(2 * t + 1, t_.children_left[node])
            place(2 * t + 2, t_.children_right[node])
        else:
            place(2 * t + 1, None)
            place(2 * t + 2, node)

    place(0, 0)
    leaf = model.routing(a, b, d)
    z = np.zeros((len(model.y), B + 1))
    z[np.arange(len(leaf)), leaf] = 1.0
    N_kt = np.array([(model.weight * (model.y == k)) @ z for k in model.classes])
    N_t = model.weight @ z
    l = (N_t > 0).astype(float)
    if np.any((N_t > 0) & (N_t < model.n_min)):
        raise ValueError(f"warm_start has a leaf with fewer than n_min = {model.n_min} points")
    if model.max_splits is not None and d.sum() > model.max_splits:
        raise ValueError(f"warm_start has {int(d.sum())} splits, more than {model.max_splits}")
    c = np.zeros_like(N_kt)
    c[np.argmax(N_kt, axis=0), np.arange(B + 1)] = 1.0
    c *= l
    return {
        model.a: a, model.b: b, model.d: d, model.z: z, model.l: l, model.c: c,
        model.Lt: N_t - N_kt.max(axis=0),
    }
