"""Starting points: the greedy LP tree (MSMT, paper §6), CART of the same shape,
random vertices, kicks of a tree, and the alternating-LP refinement of a start.

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


def _top_down(problem, rng, split):
    """Top-down, one decision at a time (preorder): ``split(points, go_left)`` gives
    ``(objective, theta)`` for each way of sending the classes left, the best is kept."""
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
            value, theta = split(points, go_left)
            if best is None or value < best[0]:
                best = (value, theta)
        Theta[d] = best[1] if best else random_theta(problem, rng, points)
        z = problem.X1[reach.get(d, np.arange(0))] @ Theta[d]
        for (kind, child), mask in zip(children[d], (z <= 0, z > 0)):
            if kind == "d":
                reach[child] = reach[d][mask]
    return Theta


def greedy_theta(problem, rng=None):
    """The greedy LP tree: top-down, one robust LP per decision (MSMT, paper §6)."""
    rng = np.random.default_rng(rng)
    return _top_down(problem, rng, lambda points, go_left: _robust_lp(problem, points, go_left,
                                                                        rng))


def _axis_split(problem, points, go_left):
    """CART's split of ``points`` (a depth-1 tree on their labels, Gini), turned so that
    the side matching ``go_left`` best goes left: ``(weighted mismatches, theta)``."""
    from sklearn.tree import DecisionTreeClassifier

    X, w = problem.X1[points, :-1], problem.weight[points]
    stump = DecisionTreeClassifier(max_depth=1, random_state=0).fit(X, problem.y[points],
                                                                     sample_weight=w)
    if stump.tree_.node_count < 3:  # no split separates the labels
        return float(w[~go_left].sum()), random_theta(problem, np.random.default_rng(0), points)
    theta = np.zeros(problem.m)
    f, threshold = stump.tree_.feature[0], stump.tree_.threshold[0]
    left = X[:, f] <= threshold
    agree = w[left == go_left].sum()
    sign = 1.0 if agree >= w.sum() - agree else -1.0
    theta[f], theta[-1] = sign, sign * threshold
    return float(min(agree, w.sum() - agree) if sign < 0 else w.sum() - agree), theta


def cart_theta(problem, rng=None):
    """CART of the tree's own shape: top-down, the best axis-aligned split per decision."""
    rng = np.random.default_rng(rng)
    return _top_down(problem, rng, lambda points, go_left: _axis_split(problem, points, go_left))


def refine_theta(problem, Theta, rng=None, rounds=10, last=()):
    """Alternating robust LPs: each decision in turn is refitted with the others fixed.

    For decision d, the points classified correctly only when d sends them
    left (right) must go left (right); the rest do not care.  The robust LP
    (:func:`_robust_lp`) separating those replaces decision d when it lowers
    the weighted misclassified count.  The decisions in ``last`` (a kick's) are
    refitted after the others, which first adapt to them.  Returns ``(Theta,
    count)``; never worse.
    """
    rng = np.random.default_rng(rng)
    Theta = np.array(Theta, dtype=float)
    Zt = np.ascontiguousarray((problem.X1 @ Theta.T).T)
    count = float(problem.weight @ problem.misclassified(Zt))
    order = [d for d in range(problem.D) if d not in last] + list(last)
    for _ in range(rounds):
        improved = False
        for d in order:
            forced = []
            for side in (-1.0, 1.0):
                Z = Zt.copy()
                Z[d] = side
                forced.append(~problem.misclassified(Z))
            care = forced[0] != forced[1]
            if care.sum() < 2 or forced[0][care].all() or forced[1][care].all():
                continue
            _, theta = _robust_lp(problem, np.flatnonzero(care), forced[0][care], rng)
            Z = Zt.copy()
            Z[d] = problem.X1 @ theta
            new = float(problem.weight @ problem.misclassified(Z))
            if new < count:
                count, Zt, Theta[d], improved = new, Z, theta, True
        if not improved:
            break
    return Theta, count


def kick_theta(problem, Theta, rng, n_decisions=1):
    """A perturbation of ``Theta``: ``n_decisions`` random decisions redrawn through a
    random point.  Returns ``(Theta, kicked decisions)``."""
    Theta = np.array(Theta, dtype=float)
    kicked = rng.choice(problem.D, size=min(n_decisions, problem.D), replace=False).tolist()
    for d in kicked:
        Theta[d] = random_theta(problem, rng)
    return Theta, kicked


def random_theta(problem, rng, points=None):
    """A random hyperplane through a random data point (one decision)."""
    points = np.arange(problem.N) if points is None or len(points) == 0 else points
    w = rng.standard_normal(problem.n)
    x = problem.X1[rng.choice(points), :-1]
    return np.append(w, w @ x)


def random_start(problem, rng):
    """Random parameters for every decision, for restarts."""
    return np.array([random_theta(problem, rng) for _ in range(problem.D)])
