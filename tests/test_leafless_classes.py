"""Multi-class trees.  More classes than leaves: the points of a class without a leaf
are errors whatever the decisions (DESIGN §2: they have no triple), so the search runs
on the others and the results count them (gto.optimize, leaves "keep" and "free", and
GTOClassifier's default tree).  Three classes or more: the default tree's classes are
arranged on its leaves by CART's splits and the linear-SVM trees of its candidates."""
import itertools

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import gto
from gto.engine._starts import cart_splits
from gto.engine._svm_start import svm_tree
from gto.learners._leaves import (
    arrange_classes,
    cart_candidates,
    heaviest_classes,
    with_labels,
)

from truths import count_errors, leaf_counts, leaf_walk, product_error


def _three_classes(seed=0, n=(60, 40, 30)):
    """Three Gaussian blobs in the plane of sizes ``n``."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])
    X = np.vstack([c + rng.normal(size=(k, 2)) for c, k in zip(centres, n)])
    y = np.repeat([0, 1, 2], n)
    return X, y


@pytest.mark.parametrize("weighted", [False, True])
def test_optimize_searches_the_points_of_leaf_classes_and_counts_the_others(weighted):
    X, y = _three_classes()
    w = np.linspace(0.5, 2.0, len(y)) if weighted else None
    tree = gto.Tree.from_structure((0, 1), 2)
    res = gto.optimize(tree, X, y, sample_weight=w, max_iter=300, random_state=0)
    keep = y < 2
    alone = gto.optimize(tree, X[keep], y[keep], sample_weight=None if w is None else w[keep],
                         max_iter=300, random_state=0)
    # the same search: the points of class 2 cannot change any move
    assert np.array_equal(res.tree.W, alone.tree.W)
    assert np.array_equal(res.tree.gamma, alone.tree.gamma)
    assert res.fun == alone.fun and res.nit == alone.nit
    lost = np.sum(~keep) if w is None else w[~keep].sum()
    assert res.leafless_errors == pytest.approx(lost)
    # the counts are over all the points: a literal walk of the trees
    assert res.n_errors == pytest.approx(count_errors(res.tree, X, y, w))
    assert res.n_errors == pytest.approx(alone.n_errors + lost)
    assert res.start_n_errors == pytest.approx(count_errors(tree, X, y, w))
    assert np.allclose(res.history["n_errors"], alone.history["n_errors"] + lost)
    assert res.restarts[0]["n_errors"] == pytest.approx(alone.restarts[0]["n_errors"] + lost)
    assert isinstance(res.n_errors, float) == weighted
    # the tree records every class: predict_proba has a column for class 2
    classes, counts = leaf_counts(res.tree, X, y, w)
    assert res.tree.classes.tolist() == classes == [0, 1, 2]
    assert np.allclose(res.tree.leaf_counts, counts)
    assert "without a leaf" in res.message
    assert alone.leafless_errors == 0


def test_optimize_needs_points_of_two_leaf_classes():
    X, y = _three_classes()
    tree = gto.Tree.from_structure((0, 1), 2)
    with pytest.raises(ValueError, match=r"labels \[2\] have no leaf.*needs two"):
        gto.optimize(tree, X[y != 1], y[y != 1])


def test_free_leaves_with_more_classes_than_leaves_never_worse_than_the_given_tree():
    """leaves="free" on a CART tree of 4 leaves for 6 classes: the labellings leave
    classes out, and the answer is no worse than the given tree (scikit-learn's own
    count) or any labelling of the given splits (brute force over 6^4 labellings)."""
    rng = np.random.default_rng(1)
    centres = rng.uniform(-4, 4, size=(6, 2))
    X = np.vstack([c + rng.normal(size=(25, 2)) for c in centres])
    y = np.repeat(np.arange(6), 25)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    given = gto.Tree.from_sklearn(cart)
    best_labelling = min(
        count_errors(with_labels(given, np.array(lab)), X, y)
        for lab in itertools.product(range(6), repeat=given.n_leaves))
    res = gto.optimize(cart, X, y, max_iter=200, random_state=0)
    assert res.start_n_errors == np.sum(cart.predict(X) != y)
    assert count_errors(res.tree, X, y) == res.n_errors <= best_labelling
    assert len(res.leaf_patterns) > 1  # patterns besides the majority labelling
    assert res.leafless_errors == np.sum(~np.isin(y, res.tree.leaf_classes))


def test_heaviest_classes():
    classes = np.array(["a", "b", "c", "d", "e"])
    y = np.array(list("aabbbcddddde"))
    assert heaviest_classes(classes, y, None, 3).tolist() == ["a", "b", "d"]  # 2 = 2 (a < c)
    w = np.where(y == "e", 10.0, 1.0)
    assert heaviest_classes(classes, y, w, 2).tolist() == ["d", "e"]
    assert heaviest_classes(classes, y, None, 5).tolist() == list("abcde")


def test_estimator_gives_the_heaviest_classes_the_leaves():
    X, y = _three_classes(n=(30, 60, 45))
    model = gto.GTOClassifier(depth=1, random_state=0).fit(X, y)
    assert model.tree_.leaf_classes.tolist() == [1, 2]
    assert model.predict_proba(X).shape == (len(y), 3)
    assert set(model.predict(X).tolist()) <= {1, 2}
    # score by a literal walk of the fitted tree
    assert model.score(X, y) == pytest.approx(1 - count_errors(model.tree_, X, y) / len(y))
    w = np.where(y == 0, 5.0, 1.0)  # class 0 now the heaviest
    weighted = gto.GTOClassifier(depth=1, random_state=0).fit(X, y, sample_weight=w)
    assert weighted.tree_.leaf_classes.tolist() == [0, 1]


def _lowest_pure(labels):
    """Whether a depth-2 labelling has a lowest decision with one class on both leaves."""
    return labels[0] == labels[1] or labels[2] == labels[3]


@pytest.mark.parametrize("n_classes", [3, 4])
def test_carts_candidate_is_the_best_labelling_of_carts_splits(n_classes):
    """The first candidate arrangement of 3 or 4 classes on the 4 leaves of depth 2: on
    the splits of CART of that depth (which predict as scikit-learn's tree does), its
    labels have the fewest errors among the labellings that hold every class with no
    lowest decision pure, or the majority's where that holds every class (brute force
    over all labellings by a literal walk)."""
    rng = np.random.default_rng(2)  # a draw where CART grows all four leaves
    centres = rng.uniform(-3, 3, size=(n_classes, 2))
    X = np.vstack([c + rng.normal(size=(40, 2)) for c in centres])
    y = np.repeat(np.arange(n_classes), 40)
    bare = gto.Tree.complete(2, np.arange(n_classes), 2)
    candidates = cart_candidates(bare, X, y)
    first = candidates[0][1]
    assert sorted(set(first)) == list(range(n_classes))
    splits = bare.copy()
    splits.W, splits.gamma = cart_splits(bare, X, y)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert cart.get_n_leaves() == 4  # complete: CART's leaves are the shape's
    leaf_index = leaf_walk(splits)
    majority = [np.bincount(y[[leaf_index(x) == k for x in X]],
                            minlength=n_classes).argmax() for k in range(4)]
    assert np.array_equal(with_labels(splits, np.array(majority)).predict(X), cart.predict(X))

    def errors(labels):
        return count_errors(with_labels(splits, np.array(labels)), X, y)

    holding = [lab for lab in itertools.product(range(n_classes), repeat=4)
               if len(set(lab)) == n_classes and not _lowest_pure(lab)]
    best = min(errors(lab) for lab in holding)
    if len(set(majority)) == n_classes:
        best = min(best, errors(majority))
    assert errors(first) == best
    assert [e for e, _ in candidates] == sorted(errors(lab) for _, lab in candidates)


def _planted_four(seed, n=400):
    """Points in the plane labelled by a random oblique tree of depth 2 with leaves
    0, 1 (left) and 2, 3 (right), each split through the median of its points."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 2))

    def side(points, where):
        normal = rng.normal(size=2)
        return points @ normal <= np.median(points[where] @ normal)

    root = side(X, slice(None))
    left, right = side(X, root), side(X, ~root)
    return X, np.where(root, np.where(left, 0, 1), np.where(right, 2, 3))


def _pairs(labels):
    """Which classes share a lowest decision (a depth-2 labelling up to swaps)."""
    return {frozenset(labels[:2].tolist()), frozenset(labels[2:].tolist())}


def test_the_arrangement_finds_the_planted_pairs_where_carts_favourite_does_not():
    """On planted oblique trees of four classes the grouping that shares the subtrees is
    known: {0, 1} and {2, 3}.  CART's favourite labelling of its own splits groups them
    otherwise on several draws; the arrangement (the candidate whose linear-SVM tree has
    the fewest errors, checked by a literal walk of each) finds the planted one on all
    but at most one draw."""
    bare = gto.Tree.complete(2, [0, 1, 2, 3], 2)
    cart_right = svm_right = 0
    for seed in range(20):
        X, y = _planted_four(seed)
        chosen = arrange_classes(bare, X, y, C=0.1, random_state=0).leaf_classes
        candidates = [lab for _, lab in cart_candidates(bare, X, y)]
        walked = [count_errors(svm_tree(with_labels(bare, lab), X, y, C=0.1, random_state=0)[0],
                               X, y) for lab in candidates]
        assert np.array_equal(chosen, candidates[int(np.argmin(walked))])
        cart_right += _pairs(candidates[0]) == _pairs(np.arange(4))
        svm_right += _pairs(chosen) == _pairs(np.arange(4))
    assert svm_right >= 19 and cart_right <= 15


def test_error_leaves_out_the_points_of_classes_without_a_leaf():
    """gto.error is the objective over the points whose class has a leaf (paper eq. 19
    evaluated literally on them), the value optimize reports as ``fun``."""
    X, y = _three_classes(seed=3)
    tree = gto.Tree.from_structure((0, 1), 2)
    res = gto.optimize(tree, X, y, max_iter=200, random_state=0)
    keep = y < 2
    literal = product_error(res.tree, X[keep], y[keep])
    assert gto.error(res.tree, X, y) == pytest.approx(literal, rel=1e-12)
    assert res.fun == pytest.approx(literal, rel=1e-9)
    assert gto.error(res.tree, X, y, objective="count") == count_errors(res.tree, X[keep], y[keep])


@pytest.mark.parametrize("method", ["mip", "branch"])
def test_exact_solvers_set_apart_the_points_of_classes_without_a_leaf(method):
    """gto.mip.solve on three classes with a tree of classes 0 and 1: the solve of the
    points of those classes, with class 2's points added as constant errors to the
    counts, objective and bound (a literal walk counts the tree's errors)."""
    import gto.mip

    X, y = _three_classes(seed=4, n=(10, 8, 5))
    tree = gto.Tree.from_structure((0, 1), 2)
    res = gto.mip.solve(tree, X, y, time_limit=30, method=method)
    keep = y < 2
    alone = gto.mip.solve(tree, X[keep], y[keep], time_limit=30, method=method)
    assert res.status == alone.status == "optimal"
    assert res.leafless_errors == 5 and alone.leafless_errors == 0
    assert res.n_errors == count_errors(res.tree, X, y) == alone.n_errors + 5
    assert res.objective == pytest.approx(alone.objective + 5)
    assert res.bound == pytest.approx(alone.bound + 5)
    assert res.gap <= alone.gap
    assert res.tree.classes.tolist() == [0, 1, 2]
