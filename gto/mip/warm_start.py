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

from ..tree import Tree

TOL = 1e-9


def as_tree(start, tree):
    """``start`` as a gto.Tree with ``tree``'s structure; TypeError/ValueError otherwise."""
    if not isinstance(start, Tree):
        if hasattr(start, "tree_") and hasattr(start, "classes_"):
            start = Tree.from_sklearn(start)
        else:
            raise TypeError(
                "warm_start must be a gto.Tree or a fitted sklearn DecisionTreeClassifier, "
                f"got {type(start).__name__}"
            )
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


def oblique_start(model, start):
    """Complete feasible assignment ``{Variable: value}`` of ``model`` from a tree."""
    start = as_tree(start, model.tree)
    n = model.tree.n_features
    W_s, g_s = model.scaling.to_scaled(start.W, start.gamma)
    V = model.Xs @ W_s.T - g_s
    W = np.zeros_like(W_s)
    gamma = np.zeros(len(g_s))
    for d in range(len(g_s)):
        W[d], gamma[d] = _normalise(W_s[d], g_s[d], V[:, d], n, model.epsilon)
    z, e = _routing(model, W, gamma)
    if model.tighten:
        W, gamma = _flip(model, W, gamma, z)
        z, e = _routing(model, W, gamma)
    return {model.w: W.ravel(), model.gamma: gamma, model.z: z, model.e: e}
