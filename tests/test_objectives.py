"""Error functions against a literal, loop-by-loop transcription of eq. 13-19."""
import numpy as np
import pytest

import gto

from truths import random_tree

COUNT_TOL = 1e-9  # round-off allowance of eq. 15 at a vertex (gto.engine._objectives.COUNT_TOL)


def literal_error(tree, X, y, objective, p, weight):
    """Paper §3 evaluated one point, leaf and decision at a time.

    Lexicographic (docs/DESIGN.md §2): count + eps * m / (m + 1), eps half the smallest weight.
    """
    if objective == "lexicographic":
        count = literal_error(tree, X, y, "count", p, weight)
        m = literal_error(tree, X, y, "minimum", p, weight)
        return count + 0.5 * min(v for v in weight if v > 0) * m / (m + 1.0)
    total = 0.0
    for i in range(len(X)):
        leaf_errs = []
        for k in range(tree.n_leaves):
            if tree.leaf_classes[k] != y[i]:
                continue
            L, G = tree.paths[k]
            err = 0.0
            for d in L:  # must satisfy x.w - gamma <= -1
                err += max(0.0, float(X[i] @ tree.W[d] - tree.gamma[d]) + 1.0) ** p
            for d in G:  # must satisfy x.w - gamma >= 1
                err += max(0.0, -float(X[i] @ tree.W[d] - tree.gamma[d]) + 1.0) ** p
            leaf_errs.append(err)
        if objective == "count":
            point = 1.0 if min(leaf_errs) > COUNT_TOL else 0.0
        elif objective == "minimum":
            point = min(leaf_errs)
        else:
            point = 1.0
            for e in leaf_errs:
                point *= e
        total += weight[i] * point
    return total


@pytest.mark.parametrize("objective", gto.OBJECTIVES)
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("seed", range(6))
def test_error_matches_literal_transcription(objective, p, seed):
    rng = np.random.default_rng(seed)
    classes = ["a", "b", "c"][: 2 + seed % 2]
    n = 1 + seed % 4
    tree = random_tree(rng, 1 + seed % 5, classes, n)
    # make sure every class has a leaf
    labels = list(tree.leaf_classes)
    if set(labels) != set(classes):
        spec = tuple(classes)  # fall back to a shape that holds all classes
        spec = (spec[0], (spec[1], spec[-1]))
        tree = gto.Tree.from_structure(spec, n, W=rng.normal(size=(2, n)), gamma=rng.normal(size=2))
    X = rng.normal(size=(40, n))
    y = rng.choice(np.unique(tree.leaf_classes), size=40)
    y[:2] = np.unique(tree.leaf_classes)[:2]
    w = rng.uniform(0.5, 2, size=40)
    got = gto.error(tree, X, y, objective, p, sample_weight=w)
    want = literal_error(tree, X, y, objective, p, w)
    assert got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_unbalanced_multiclass_shape():
    rng = np.random.default_rng(7)
    spec = ((0, (1, (2, 0))), 1)
    tree = gto.Tree.from_structure(spec, 3, W=rng.normal(size=(4, 3)), gamma=rng.normal(size=4))
    X = rng.normal(size=(60, 3))
    y = rng.integers(0, 3, 60)
    for objective in gto.OBJECTIVES:
        for p in (1, 2):
            want = literal_error(tree, X, y, objective, p, np.ones(60))
            assert gto.error(tree, X, y, objective, p) == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_zero_on_data_labelled_by_the_tree_after_scaling(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 3 + seed % 3, [0, 1, 2], 4)
    X = rng.normal(size=(200, 4))
    y = tree.predict(X)
    present = np.unique(y)
    if len(present) < 2:
        pytest.skip("random tree put every point in one class")
    # scale w, gamma until every |x.w - gamma| >= 1: margin satisfied
    Z = np.abs(X @ tree.W.T - tree.gamma)
    scale = 1.0 / Z.min() * 1.01
    scaled = gto.Tree.from_structure(tree.structure, 4, W=tree.W * scale, gamma=tree.gamma * scale)
    assert np.array_equal(scaled.predict(X), y)
    for objective in gto.OBJECTIVES:
        for p in (1, 2):
            assert gto.error(scaled, X, y, objective, p) == 0.0
    # and the unscaled tree has positive error: the margin matters
    assert gto.error(tree, X, y, "minimum") > 0


def test_count_equals_number_of_margin_violators():
    rng = np.random.default_rng(3)
    tree = gto.Tree.from_structure(((0, 1), (1, 0)), 2, W=rng.normal(size=(3, 2)), gamma=[0, 0, 0])
    X = rng.normal(size=(100, 2)) * 5
    y = rng.integers(0, 2, 100)
    assert gto.error(tree, X, y, "count") == literal_error(tree, X, y, "count", 1, np.ones(100))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"objective": "sum"}, "objective"),
        ({"p": 3}, "'p' parameter"),
        ({"sample_weight": -np.ones(4)}, "non-negative"),
    ],
)
def test_error_rejects_bad_arguments(kwargs, message):
    tree = gto.Tree.from_structure((0, 1), 2)
    with pytest.raises(ValueError, match=message):
        gto.error(tree, np.zeros((4, 2)), [0, 1, 0, 1], **kwargs)
