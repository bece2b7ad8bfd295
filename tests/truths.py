"""Independent truths the tests check gto against: random trees, and trees walked
literally, node by node (no gto code), with the errors and counts the walk gives."""
import numpy as np

import gto


def random_structure(rng, n_decisions, classes):
    """A random binary shape with n_decisions internal nodes and random leaf labels."""
    if n_decisions == 0:
        return classes[rng.integers(len(classes))]
    left = int(rng.integers(n_decisions))
    return (
        random_structure(rng, left, classes),
        random_structure(rng, n_decisions - 1 - left, classes),
    )


def random_tree(rng, n_decisions, classes, n_features):
    while True:  # at least one decision and two distinct leaf classes
        spec = random_structure(rng, n_decisions, classes)
        if isinstance(spec, tuple) and len(set(gto.Tree(spec, 1).leaf_classes.tolist())) > 1:
            break
    return gto.Tree.from_structure(
        spec,
        n_features,
        W=rng.normal(size=(n_decisions, n_features)),
        gamma=rng.normal(size=n_decisions),
    )


def n_decisions(node):
    """Decisions in a nested structure (a tuple is a decision, anything else a leaf)."""
    return 1 + n_decisions(node[0]) + n_decisions(node[1]) if isinstance(node, tuple) else 0


def n_leaves(node):
    return n_leaves(node[0]) + n_leaves(node[1]) if isinstance(node, tuple) else 1


# -- walks -------------------------------------------------------------------------
def walk_tree(tree, x):
    """Leaf index reached by point x (``x @ w - gamma <= 0`` goes left), written out."""
    child = ("d", 0)
    while child[0] == "d":
        d = child[1]
        value = sum(x[j] * tree.W[d, j] for j in range(tree.n_features)) - tree.gamma[d]
        child = tree.children[d][0 if value <= 0 else 1]
    return child[1]


def walk(tree, x):
    """The class of ``x`` by following the nested structure: left iff x @ w - gamma <= 0."""
    def go(node, d):
        if not isinstance(node, tuple):
            return node
        if x @ tree.W[d] - tree.gamma[d] <= 0:
            return go(node[0], d + 1)
        return go(node[1], d + 1 + n_decisions(node[0]))

    return go(tree.structure, 0)


def walk_subsets(tree, row):
    """The class of a table row: a subset decision by membership, a hyperplane by
    x.w - gamma <= 0 over its nonzero weights (rows may hold strings)."""
    child = ("d", 0)
    while child[0] == "d":
        d = child[1]
        s = tree.subsets[d]
        if s is None:
            used = np.flatnonzero(tree.W[d])
            go_left = sum(float(row[j]) * tree.W[d, j] for j in used) - tree.gamma[d] <= 0
        else:
            go_left = row[s[0]] in s[1]
        child = tree.children[d][0 if go_left else 1]
    return tree.leaf_classes[child[1]]


def leaf_walk(tree):
    """``leaf(x)``: the left-to-right leaf index of x, down the nested structure."""
    def leaf(x, node=None, d=0, k=0):
        node = tree.structure if node is None else node
        if not isinstance(node, tuple):
            return k
        if x @ tree.W[d] - tree.gamma[d] <= 0:
            return leaf(x, node[0], d + 1, k)
        return leaf(x, node[1], d + 1 + n_decisions(node[0]), k + n_leaves(node[0]))

    return leaf


# -- what the walks give -----------------------------------------------------------
def count_errors(tree, X, y, sample_weight=None):
    """(Weighted) misclassified points by the literal walk to a leaf index."""
    w = np.ones(len(X)) if sample_weight is None else sample_weight
    return sum(wi for x, yi, wi in zip(X, y, w) if tree.leaf_classes[walk_tree(tree, x)] != yi)


def walk_errors(tree, X, y, w=None):
    """(Weighted) misclassified points by :func:`walk` down the nested structure."""
    w = np.ones(len(y)) if w is None else np.asarray(w, float)
    return float(sum(wi for xi, yi, wi in zip(X, y, w) if walk(tree, xi) != yi))


def leaf_counts(tree, X, y, w=None):
    """Training points of each class per leaf, by walking the tree to a leaf index."""
    w = np.ones(len(y)) if w is None else w
    classes = sorted(set(y.tolist()))
    leaves = leaf_walk(tree)
    counts = np.zeros((tree.n_leaves, len(classes)))
    for x, c, wi in zip(X, y, w):
        counts[leaves(x), classes.index(c)] += wi
    return classes, counts


def decision_counts(tree, X):
    """(D, 2) points each decision sends left / right, by walking the nested structure."""
    counts = np.zeros((tree.n_decisions, 2))
    for x in X:
        node, d = tree.structure, 0
        while isinstance(node, tuple):
            left = float(x @ tree.W[d]) - tree.gamma[d] <= 0
            counts[d, 0 if left else 1] += 1
            node, d = (node[0], d + 1) if left else (node[1], d + 1 + n_decisions(node[0]))
    return counts


def product_error(tree, X, y, p=1):
    """Paper eq. 19 term by term: sum over points of the product over the leaves of the
    point's class of the summed decision errors max(0, 1 -/+ (x @ w - gamma))**p on the path."""
    total = 0.0
    for x, yi in zip(X, y):
        term = 1.0
        for k, label in enumerate(tree.leaf_classes):
            if label != yi:
                continue
            leaf_err = 0.0
            for d, side in enumerate(tree.sides[k]):
                z = float(x @ tree.W[d] - tree.gamma[d])
                if side < 0:
                    leaf_err += max(0.0, 1 + z) ** p
                elif side > 0:
                    leaf_err += max(0.0, 1 - z) ** p
            term *= leaf_err
        total += term
    return total


# -- brute force: axis-aligned depth-2 trees, the independent truth -------------------------
def best_stump_errors(X, y, subset, leaves=(0, 1)):
    """Fewest errors of one axis-aligned split of the points ``subset`` whose left leaf
    is ``leaves[0]`` and right leaf ``leaves[1]`` (or free leaves if ``leaves`` is None).

    Either orientation (``x_f <= t`` or ``x_f >= t`` goes left, i.e. w = +-e_f) and
    thresholds between distinct values or outside the range (all points to one
    side), counted by prefix sums over each feature's order.
    """
    Xs, ys = X[subset], y[subset]
    if len(ys) == 0:
        return 0
    best = np.inf
    for f in range(X.shape[1]):
        order = np.argsort(Xs[:, f], kind="stable")
        v, c = Xs[order, f], ys[order]
        ones = np.concatenate([[0], np.cumsum(c == 1)])  # class 1 among the first i
        zeros = np.concatenate([[0], np.cumsum(c == 0)])
        cut = np.concatenate([[True], v[1:] > v[:-1], [True]])  # a threshold fits after i
        n1, n0 = ones[-1], zeros[-1]
        i = np.arange(len(c) + 1)
        first = {0: zeros, 1: ones}  # counts among the first i
        rest = {0: n0 - zeros, 1: n1 - ones}
        if leaves is None:  # each side takes its majority
            err = np.minimum(ones, zeros) + np.minimum(rest[0], rest[1])
        else:
            a, b = leaves
            # x_f <= t goes left: the first i points to leaf a, the rest to leaf b
            forward = (i - first[a]) + ((len(c) - i) - rest[b])
            # x_f >= t goes left (w = -e_f): the rest to leaf a, the first i to leaf b
            backward = ((len(c) - i) - rest[a]) + (i - first[b])
            err = np.minimum(forward, backward)
        best = min(best, int(err[cut].min()))
    return best


def brute_force_depth2(X, y, free_leaves=False):
    """Exact fewest training errors of axis-aligned depth-2 trees ((0, 1), (0, 1))
    (or with free leaf classes): every root split, best child split on each side."""
    leaves = None if free_leaves else (0, 1)
    N = len(y)
    best = np.inf
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        v = X[order, f]
        for i in range(N + 1):
            if 0 < i < N and v[i - 1] == v[i]:
                continue  # no threshold separates equal values
            left, right = order[:i], order[i:]
            e = best_stump_errors(X, y, left, leaves) + best_stump_errors(X, y, right, leaves)
            best = min(best, e)
    return int(best)
