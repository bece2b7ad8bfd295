"""Starting points: the greedy LP tree (MSMT, paper §6), random vertices, a given tree.

All return scaled parameters ``Theta`` (D, n + 1); the crossover turns them
into a vertex.
"""
from __future__ import annotations

import itertools

import numpy as np

from .block import SingularBlockError
from .crossover import purify
from .hinge_lp import solve_hinge_lp

MAX_ENUMERATED_CLASSES = 6  # ambiguous classes whose every split is tried


def _subtree_classes(problem, d):
    """Class labels of the leaves left and right of decision d."""
    col = problem.sides[:, d]
    leaves = problem.template.leaf_classes
    return set(leaves[col < 0].tolist()), set(leaves[col > 0].tolist())


def _side_assignments(classes_left, classes_right, present):
    """Which classes a decision's LP sends left: forced ones, then every split of the rest.

    A class with leaves on one side only must go there; a class with leaves
    on both sides may go either way, so each split of those is tried (all of
    them up to MAX_ENUMERATED_CLASSES, else one by alternating class order).
    """
    forced_left = [c for c in present if c in classes_left and c not in classes_right]
    forced_right = [c for c in present if c in classes_right and c not in classes_left]
    free = [c for c in present if c in classes_left and c in classes_right]
    if len(free) > MAX_ENUMERATED_CLASSES:
        yield set(forced_left) | set(free[::2])
        return
    for bits in itertools.product((True, False), repeat=len(free)):
        if free and not (forced_left or forced_right) and not bits[0]:
            continue  # mirror image of a split already tried
        yield set(forced_left) | {c for c, b in zip(free, bits) if b}


def _robust_lp(problem, points, go_left, rng):
    """Robust LP (Bennett & Mangasarian) separating ``points`` by ``go_left``.

    Weights 1/(total weight of each side).  Returns ``(objective, theta)``.
    """
    X1 = problem.X1[points]
    w = problem.weight[points]
    side = np.where(go_left, -1.0, 1.0)
    rows = side[:, None] * X1
    cost = w / np.where(go_left, w[go_left].sum(), w[~go_left].sum())
    mean_l, mean_r = X1[go_left, :-1].mean(axis=0), X1[~go_left, :-1].mean(axis=0)
    normal = mean_r - mean_l
    theta = np.append(normal, normal @ (mean_l + mean_r) / 2)
    try:
        block = purify(rows, theta, cost, rng)
        value, _ = solve_hinge_lp(block, cost)
        return value, block.theta
    except SingularBlockError:  # too few points to pin a vertex: keep the mean split
        return float(cost @ np.maximum(0.0, 1.0 - rows @ theta)), theta


def greedy_theta(problem, rng=None):
    """The greedy LP tree: top-down, one robust LP per decision (MSMT, paper §6)."""
    rng = np.random.default_rng(rng)
    Theta = np.zeros((problem.D, problem.m))
    reach = {0: np.arange(problem.N)}
    children = problem.template.children
    for d in range(problem.D):  # preorder: parents first
        points = reach.get(d, np.arange(0))
        left_classes, right_classes = _subtree_classes(problem, d)
        y = problem.y[points]
        useful = np.isin(y, list(left_classes | right_classes))
        points, y = points[useful], y[useful]
        best = None
        for to_left in _side_assignments(left_classes, right_classes, np.unique(y).tolist()):
            go_left = np.isin(y, list(to_left))
            if go_left.all() or not go_left.any():
                continue
            value, theta = _robust_lp(problem, points, go_left, rng)
            if best is None or value < best[0]:
                best = (value, theta)
        Theta[d] = best[1] if best else random_theta(problem, rng, points)
        z = problem.X1[reach.get(d, np.arange(0))] @ Theta[d]
        for (kind, child), mask in zip(children[d], (z <= 0, z > 0)):
            if kind == "d":
                reach[child] = reach[d][mask]
    return Theta


def random_theta(problem, rng, points=None):
    """A random hyperplane through a random data point (one decision)."""
    points = np.arange(problem.N) if points is None or len(points) == 0 else points
    w = rng.standard_normal(problem.n)
    x = problem.X1[rng.choice(points), :-1]
    return np.append(w, w @ x)


def random_start(problem, rng):
    """Random parameters for every decision, for restarts."""
    return np.array([random_theta(problem, rng) for _ in range(problem.D)])


def is_complete(tree):
    """True when every leaf of ``tree`` sits at the same depth (a complete shape)."""
    depths = np.count_nonzero(tree.sides, axis=1)
    return bool(np.all(depths == depths.max()))


def cart_tree(problem, random_state=0):
    """The CART tree of the same shape: scikit-learn's ``DecisionTreeClassifier``
    of the same depth, its splits placed on the structure's decisions by
    position (DESIGN §6), leaf classes kept from the structure.

    Where CART stopped early (a pure node) the decision sends every point
    left (``w = 0``).  Then, top-down, a split is reversed (``(w, gamma) ->
    (-w, -gamma)``, swapping its subtrees' points) whenever that lowers the
    training errors under the structure's fixed leaf classes.  Raises
    ValueError when the structure is not complete.
    """
    from sklearn.tree import DecisionTreeClassifier

    template = problem.template
    if not is_complete(template):
        raise ValueError("init='cart' needs a complete tree structure (all leaves at one depth)")
    depth = int(np.count_nonzero(template.sides[0]))
    X, y, w = problem.X_orig, problem.y_orig, problem.w_orig
    model = DecisionTreeClassifier(max_depth=depth, random_state=random_state)
    model.fit(X, y, sample_weight=w)
    t = model.tree_
    W = np.zeros((problem.D, problem.n))
    gamma = np.ones(problem.D)  # w = 0, gamma = 1: every point goes left

    def place(d, c):
        if c >= 0 and t.children_left[c] >= 0:
            W[d, t.feature[c]] = 1.0
            gamma[d] = t.threshold[c]
            kids = (t.children_left[c], t.children_right[c])
        else:
            kids = (-1, -1)
        for (kind, index), k in zip(template.children[d], kids):
            if kind == "d":
                place(index, k)

    place(0, 0)
    tree = template.copy()
    tree.W, tree.gamma = W, gamma
    best = tree.n_errors(X, y, w)
    for d in range(problem.D):  # preorder: parents first
        flipped = tree.copy()
        W2, g2 = flipped.W.copy(), flipped.gamma.copy()
        W2[d], g2[d] = -W2[d], -g2[d]
        flipped.W, flipped.gamma = W2, g2
        errors = flipped.n_errors(X, y, w)
        if errors < best:
            tree, best = flipped, errors
    return tree
