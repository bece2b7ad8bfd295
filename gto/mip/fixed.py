"""Pieces shared by the exact solvers of a fixed oblique tree (DESIGN §7).

The MIP (:mod:`gto.mip.oblique`) and the branch and bound
(:mod:`gto.mip.branch`) solve the same problem on the same data: validated,
duplicates merged, scaled to [0, 1] per feature (:func:`prepare`); both
break the symmetry of identical subtrees (:func:`mirror_pairs`) and return
their scaled decisions in original units with the threshold mid-margin
(:func:`scaled_tree`).  ``EPSILON`` is the default margin of the right side.
"""
from __future__ import annotations

import numpy as np

from ..engine._formulation import merge_duplicates
from ..model.tree import Tree
from ..utils._validation import check_fit_data
from .scaling import Scaling

EPSILON = 1e-3


def _subtree(tree, child):
    """(spec, decisions, leaves) of the subtree rooted at ``child``, in preorder."""
    kind, i = child
    if kind == "l":
        return tree.leaf_classes[i].item(), [], [i]
    left, right = tree.children[i]
    ls, ld, ll = _subtree(tree, left)
    rs, rd, rl = _subtree(tree, right)
    return (ls, rs), [i] + ld + rd, ll + rl


def mirror_pairs(tree):
    """Decisions whose two subtrees are identical, labels included.

    Returns ``(d, left_decisions, right_decisions, left_leaves, right_leaves)``
    per such decision in preorder; position j of a left list mirrors position
    j of the right list.
    """
    pairs = []
    for d, (left, right) in enumerate(tree.children):
        ls, ld, ll = _subtree(tree, left)
        rs, rd, rl = _subtree(tree, right)
        if ls == rs:
            pairs.append((d, ld, rd, ll, rl))
    return pairs


def scaled_tree(tree, scaling, w, gamma, epsilon):
    """``tree`` with the decisions of scaled ``(w, gamma)`` in original units, threshold mid-margin."""
    W, g = scaling.to_original(np.reshape(w, (tree.n_decisions, -1)), gamma + epsilon / 2)
    out = tree.copy()
    out.W, out.gamma = W, g
    return out


def prepare(tree, X, y, sample_weight=None, epsilon=EPSILON):
    """Validated data and its merged, scaled points: ``(X, y, w, Xm, Xs, ym, wm, scaling)``.

    Points with zero weight are dropped from the merged ones.
    """
    if not isinstance(tree, Tree):
        raise TypeError(f"tree must be a gto.Tree, got {type(tree).__name__}")
    X, y, w = check_fit_data(tree, X, y, sample_weight)
    if isinstance(epsilon, bool) or not np.isscalar(epsilon) or not 0 < epsilon <= 1:
        raise ValueError(f"epsilon must be a number in (0, 1], got {epsilon!r}")
    Xm, ym, wm, _ = merge_duplicates(X, y, w)
    keep = wm > 0
    if not keep.any():
        raise ValueError("sample_weight is zero everywhere")
    scaling = Scaling(X)
    return X, y, w, Xm[keep], scaling.transform(Xm[keep]), ym[keep], wm[keep], scaling
