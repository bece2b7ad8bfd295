"""Starting points: the greedy LP tree (MSMT, paper §6), random vertices, kicks of a
tree, the alternating-LP refinement of a start, CART and axis-aligned trees of the same shape.

All return scaled parameters ``Theta`` (D, n + 1); the crossover turns them
into a vertex.
"""
from __future__ import annotations

import itertools

import numpy as np

from ..utils._interrupt import OutOfTime, limits_passed
from ._axis import best_axis_splits
from ._block import SingularBlockError
from ._crossover import purify
from ._hinge_loop import robust_lp_rows
from ._hinge_lp import solve_hinge_lp

MAX_ENUMERATED_CLASSES = 6  # ambiguous classes whose every split is tried


def _subtree_classes(problem, d):
    """Class labels of the leaves left and right of decision d."""
    col = problem.layout.sides[:, d]
    leaves = problem.layout.template.leaf_classes
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
    When the LP cannot pin a vertex, or the time limit or a stop request of an
    enclosing :func:`gto.utils._interrupt.limits` passes, the split halfway
    between the two sides' means (the LP's start) is returned instead.
    """
    rows, rows_t, cost, mean_l, mean_r = robust_lp_rows(
        problem.data.X1, problem.data.weight, np.asarray(points, dtype=np.int64),
        np.asarray(go_left, dtype=bool))
    normal = mean_r - mean_l
    theta = np.append(normal, normal @ (mean_l + mean_r) / 2)
    if not limits_passed():
        try:
            block = purify(rows, theta, cost, rng, rows_t=rows_t)
            value, _ = solve_hinge_lp(block, cost)
            return value, block.theta
        except (SingularBlockError, OutOfTime):  # too few points to pin a vertex, or no time
            pass
    return float(cost @ np.maximum(0.0, 1.0 - rows @ theta)), theta


def _top_down(problem, rng, split):
    """Top-down, one decision at a time (preorder): ``split(points, go_left)`` gives
    ``(objective, theta)`` for each way of sending the classes left, the best is kept."""
    Theta = np.zeros((problem.layout.D, problem.data.m))
    reach = {0: np.arange(problem.data.N)}
    children = problem.layout.template.children
    for d in range(problem.layout.D):  # preorder: parents first
        points = reach.get(d, np.arange(0))
        left_classes, right_classes = _subtree_classes(problem, d)
        y = problem.data.y[points]
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
        z = problem.data.X1[reach.get(d, np.arange(0))] @ Theta[d]
        for (kind, child), mask in zip(children[d], (z <= 0, z > 0)):
            if kind == "d":
                reach[child] = reach[d][mask]
    return Theta


def greedy_theta(problem, rng=None):
    """The greedy LP tree: top-down, one robust LP per decision (MSMT, paper §6)."""
    rng = np.random.default_rng(rng)
    return _top_down(problem, rng, lambda points, go_left: _robust_lp(problem, points, go_left,
                                                                        rng))


def refine_theta(problem, Theta, rng=None, rounds=10, last=()):
    """Alternating robust LPs: each decision in turn is refitted with the others fixed.

    For decision d, the points classified correctly only when d sends them
    left (right) must go left (right); the rest do not care.  The robust LP
    (:func:`_robust_lp`) separating those replaces decision d when it lowers
    the weighted misclassified count.  The decisions in ``last`` (a kick's) are
    refitted after the others, which first adapt to them.  Returns ``(Theta,
    count)``; never worse.  Stops refitting when an enclosing
    :func:`gto.utils._interrupt.limits` runs out.
    """
    rng = np.random.default_rng(rng)
    Theta = np.array(Theta, dtype=float)
    Zt = np.ascontiguousarray((problem.data.X1 @ Theta.T).T)
    count = float(problem.data.weight @ problem.misclassified(Zt))
    order = [d for d in range(problem.layout.D) if d not in last] + list(last)
    # decision d's LP depends on the other decisions only: refit it only if one of
    # them changed since its last fit
    stale = np.ones(problem.layout.D, dtype=bool)
    Z = Zt.copy()  # Zt with row d tried out; set back to Zt[d] after each try
    for _ in range(rounds):
        improved = False
        for d in order:
            if not stale[d] or limits_passed(every=1):
                continue
            stale[d] = False
            left, right = _forced(problem, Z, d)
            Z[d] = Zt[d]
            care = left != right
            if care.sum() < 2 or left[care].all() or right[care].all():
                continue
            _, theta = _robust_lp(problem, np.flatnonzero(care), left[care], rng)
            Z[d] = problem.data.X1 @ theta
            new = float(problem.data.weight @ problem.misclassified(Z))
            if new < count:
                count, Theta[d], improved = new, theta, True
                Zt[d] = Z[d]
                stale[:] = True
                stale[d] = False
            else:
                Z[d] = Zt[d]
        if not improved:
            break
    return Theta, count


def _forced(problem, Z, d):
    """Per point, whether it is classified correctly when decision d sends it left,
    and when right: ``Z`` (D, N) with row d set to -1, then 1 (the caller sets it back)."""
    Z[d] = -1.0
    left = ~problem.misclassified(Z)
    Z[d] = 1.0
    return left, ~problem.misclassified(Z)


def kick_theta(problem, Theta, rng, n_decisions=1):
    """A perturbation of ``Theta``: ``n_decisions`` random decisions redrawn through a
    random point.  Returns ``(Theta, kicked decisions)``."""
    Theta = np.array(Theta, dtype=float)
    kicked = rng.choice(problem.layout.D, size=min(n_decisions, problem.layout.D), replace=False).tolist()
    for d in kicked:
        Theta[d] = random_theta(problem, rng)
    return Theta, kicked


def random_theta(problem, rng, points=None):
    """A random hyperplane through a random data point (one decision)."""
    points = np.arange(problem.data.N) if points is None or len(points) == 0 else points
    w = rng.standard_normal(problem.data.n)
    x = problem.data.X1[rng.choice(points), :-1]
    return np.append(w, w @ x)


def random_start(problem, rng):
    """Random parameters for every decision, for restarts."""
    return np.array([random_theta(problem, rng) for _ in range(problem.layout.D)])


def is_complete(tree):
    """True when every leaf of ``tree`` sits at the same depth (a complete shape)."""
    depths = np.count_nonzero(tree.sides, axis=1)
    return bool(np.all(depths == depths.max()))


def cart_splits(template, X, y, w=None, random_state=0):
    """``(W, gamma)``: scikit-learn's ``DecisionTreeClassifier`` of the depth of the
    complete structure ``template``, fitted to (X, y, w), its splits placed on the
    structure's decisions by position (docs/DESIGN.md §6; ``x_f <= t`` goes left as
    in scikit-learn).  Where CART stopped early (a pure node) the decision sends
    every point left (``w = 0``, ``gamma = 1``)."""
    from sklearn.tree import DecisionTreeClassifier

    depth = int(np.count_nonzero(template.sides[0]))
    model = DecisionTreeClassifier(max_depth=depth, random_state=random_state)
    big = float(np.finfo(np.float32).max)  # scikit-learn's trees work in float32
    model.fit(np.clip(X, -big, big), y, sample_weight=w)
    t = model.tree_
    W = np.zeros((template.n_decisions, X.shape[1]))  # original columns
    gamma = np.ones(template.n_decisions)  # w = 0, gamma = 1: every point goes left

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
    return W, gamma


def cart_tree(problem, random_state=0):
    """The CART tree of the same shape as ``problem``'s structure, fitted to its data
    (:func:`structured_cart`)."""
    return structured_cart(problem.layout.template, problem.data.X_orig, problem.data.y_orig,
                           problem.data.w_orig, random_state)


def structured_cart(template, X, y, w=None, random_state=0):
    """The CART tree of the shape of ``template``: scikit-learn's
    ``DecisionTreeClassifier`` of the same depth, its splits placed on the
    structure's decisions by position (:func:`cart_splits`), leaf classes kept from
    the structure.

    Then, top-down, a split is reversed (``(w, gamma) -> (-w, -gamma)``,
    swapping its subtrees' points) whenever that lowers the training errors
    under the structure's fixed leaf classes.  Raises ValueError when the
    structure is not complete.
    """
    if not is_complete(template):
        raise ValueError("init='cart' needs a complete tree structure (all leaves at one depth)")
    W, gamma = cart_splits(template, X, y, w, random_state)
    tree = template.copy()
    tree.W, tree.gamma = W, gamma
    best = tree.n_errors(X, y, w)
    for d in range(template.n_decisions):  # preorder: parents first
        flipped = tree.copy()
        W2, g2 = flipped.W.copy(), flipped.gamma.copy()
        W2[d], g2[d] = -W2[d], -g2[d]
        flipped.W, flipped.gamma = W2, g2
        errors = flipped.n_errors(X, y, w)
        if errors < best:
            tree, best = flipped, errors
    return tree


def axis_aligned_tree(problem, max_cuts=None):
    """The axis-aligned tree with the fewest weighted training errors of the problem's
    structure (:func:`structured_axis` on its points).  A start for
    ``max_features=1`` (see :func:`gto.optimize`)."""
    data = problem.data
    return structured_axis(problem.layout.template, data.X_orig, data.y_orig, data.w_orig,
                           max_cuts)


def is_shallow(tree):
    """Whether ``tree`` is complete of depth 1 or 2 (:func:`structured_axis`'s trees)."""
    depth = int(np.count_nonzero(tree.sides, axis=1).max()) if tree.n_decisions else 0
    return is_complete(tree) and 1 <= depth <= 2


def structured_axis(template, X, y, w=None, max_cuts=None):
    """The axis-aligned tree with the fewest weighted training errors, for a complete
    structure of depth 1 or 2 with its fixed leaf classes
    (:func:`gto.engine._axis.best_axis_splits`): exact over every cut between distinct
    values, or with ``max_cuts`` over at most that many cuts a feature, at its
    quantiles.  Raises ValueError for other structures."""
    if not is_shallow(template):
        raise ValueError("the exact axis-aligned start needs a complete structure of depth 1 or 2")
    X = np.asarray(X, dtype=float)
    w = np.ones(len(y)) if w is None else w
    _, splits = best_axis_splits(X, y, w, template.leaf_classes, max_cuts)
    decisions = [0]
    if template.n_decisions == 3:
        (_, left), (_, right) = template.children[0]
        decisions += [left, right]
    W, gamma = np.zeros((template.n_decisions, X.shape[1])), np.zeros(template.n_decisions)
    for d, (f, t, rev) in zip(decisions, splits):
        W[d, f], gamma[d] = (-1.0, -t) if rev else (1.0, t)
    tree = template.copy()
    tree.W, tree.gamma = W, gamma
    return tree
