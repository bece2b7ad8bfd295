import numpy as np
import pytest

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


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


# -- independent truths: the tree walked literally, node by node -------------------
def walk_tree(tree, x):
    """Leaf index reached by point x (``x @ w - gamma <= 0`` goes left), written out."""
    child = ("d", 0)
    while child[0] == "d":
        d = child[1]
        value = sum(x[j] * tree.W[d, j] for j in range(tree.n_features)) - tree.gamma[d]
        child = tree.children[d][0 if value <= 0 else 1]
    return child[1]


def count_errors(tree, X, y, sample_weight=None):
    """(Weighted) misclassified points by the literal walk."""
    w = np.ones(len(X)) if sample_weight is None else sample_weight
    return sum(wi for x, yi, wi in zip(X, y, w) if tree.leaf_classes[walk_tree(tree, x)] != yi)


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
