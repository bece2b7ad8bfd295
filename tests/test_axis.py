"""The axis-aligned tree of a depth-1 or depth-2 structure with the fewest weighted
training errors (gto.engine._axis), against the independent truth of enumerating
every tree over the same thresholds and walking each point down it literally."""
import itertools

import numpy as np
import pytest

import gto
from gto.engine._axis import axis_work, best_axis_splits, cuts_within, feature_cuts
from gto.engine._problem import TreeProblem
from gto.engine._starts import axis_aligned_tree, structured_axis

from truths import brute_force_depth2


def splits_over(X, thresholds):
    """Every axis-aligned split over per-feature ``thresholds`` (plus one below and one
    above every value): (feature, threshold, reversed)."""
    for f in range(X.shape[1]):
        low, high = X[:, f].min() - 1.0, X[:, f].max() + 1.0
        for t in [low, *thresholds[f], high]:
            for rev in (False, True):
                yield f, t, rev


def goes_left(X, split):
    f, t, rev = split
    return X[:, f] >= t if rev else X[:, f] <= t


def enumerated(X, y, w, leaves, thresholds):
    """Fewest weighted errors of every tree of depth 1 or 2 (``leaves`` left to right)
    whose splits use ``thresholds``, each point walked down the tree."""
    options = list(splits_over(X, thresholds))
    left = np.array([goes_left(X, s) for s in options])  # (S, N)
    if len(leaves) == 2:
        wrong = np.where(left, y != leaves[0], y != leaves[1])
        return float((wrong * w).sum(axis=1).min())
    wrong_ab = np.where(left, y != leaves[0], y != leaves[1]) * w  # child split, left subtree
    wrong_cd = np.where(left, y != leaves[2], y != leaves[3]) * w
    best = np.inf
    for root in left:
        best = min(best, (wrong_ab[:, root].sum(axis=1)).min()
                   + (wrong_cd[:, ~root].sum(axis=1)).min())
    return float(best)


def as_tree(splits, leaves, n):
    structure = (leaves[0], leaves[1]) if len(leaves) == 2 else (
        (leaves[0], leaves[1]), (leaves[2], leaves[3]))
    tree = gto.Tree.from_structure(structure, n)
    W, gamma = np.zeros((tree.n_decisions, n)), np.zeros(tree.n_decisions)
    decisions = [0] if len(leaves) == 2 else [0, tree.children[0][0][1], tree.children[0][1][1]]
    for d, (f, t, rev) in zip(decisions, splits):
        W[d, f], gamma[d] = (-1.0, -t) if rev else (1.0, t)
    tree.W, tree.gamma = W, gamma
    return tree


def random_instance(rng):
    N, n = int(rng.integers(4, 30)), int(rng.integers(1, 4))
    X = rng.integers(0, int(rng.integers(2, 7)), size=(N, n)).astype(float)
    if rng.random() < 0.4:
        X = rng.normal(size=(N, n)).round(1)  # ties, as in real data
    K = int(rng.integers(2, 4))
    y = rng.integers(0, K, N)
    w = rng.integers(1, 4, N).astype(float) if rng.random() < 0.5 else np.ones(N)
    leaves = rng.integers(0, K, 2 if rng.random() < 0.3 else 4)
    return X, y, w, leaves


def test_every_cut_gives_the_enumerated_optimum_and_the_tree_has_its_errors():
    rng = np.random.default_rng(0)
    for _ in range(150):
        X, y, w, leaves = random_instance(rng)
        errors, splits = best_axis_splits(X, y, w, leaves)
        every = [feature_cuts(X)[f] for f in range(X.shape[1])]
        assert errors == pytest.approx(enumerated(X, y, w, leaves, every))
        walked = as_tree(splits, leaves, X.shape[1]).predict(X)
        assert errors == pytest.approx(float(((walked != y) * w).sum()))


def test_with_few_cuts_the_optimum_over_those_cuts():
    """``max_cuts``: the splits use only the kept cuts (or send everything one way),
    and no tree over those cuts has fewer errors."""
    rng = np.random.default_rng(1)
    for _ in range(60):
        X, y, w, leaves = random_instance(rng)
        X = rng.normal(size=X.shape)  # many distinct values
        kept = feature_cuts(X, 3)
        errors, splits = best_axis_splits(X, y, w, leaves, max_cuts=3)
        for f, t, _ in splits:
            assert t in kept[f] or t < X[:, f].min() or t > X[:, f].max()
        assert errors == pytest.approx(enumerated(X, y, w, leaves, kept))
        walked = as_tree(splits, leaves, X.shape[1]).predict(X)
        assert errors == pytest.approx(float(((walked != y) * w).sum()))


def test_the_cuts_lie_between_distinct_values_at_the_quantiles():
    rng = np.random.default_rng(2)
    column = rng.normal(size=500)
    few = np.array([0.0, 1.0, 1.0, 3.0])
    X = np.column_stack([column, np.resize(few, 500)])
    cuts = feature_cuts(X, 8)
    assert cuts[1].tolist() == [0.5, 2.0]  # few values: every midpoint
    v = np.sort(column)
    assert len(cuts[0]) == 8
    for c in cuts[0]:
        i = np.searchsorted(v, c)
        assert v[i - 1] < c < v[i] and c == (v[i - 1] + v[i]) / 2
    share = np.array([np.mean(column <= c) for c in cuts[0]])
    assert np.allclose(share, np.arange(1, 9) / 9, atol=1 / 500 + 1e-9)


def test_cuts_within_is_the_most_cuts_whose_work_fits():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 40))
    for limit in (6e5, 1e6, 2e6, 1e9):
        m = cuts_within(X, limit, 32)
        assert axis_work(X, m) <= limit
        assert m == 32 or axis_work(X, m + 1) > limit
    assert cuts_within(X, 300 * 40**2, 32) is None  # the sweep alone is more


def test_the_exact_start_is_the_brute_force_optimum_on_a_paper_set():
    import problems

    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    fitted = axis_aligned_tree(TreeProblem(tree, X, y))
    assert fitted.n_errors(X, y) == brute_force_depth2(X, y)


def test_other_structures_are_refused():
    template = gto.Tree.from_structure(((0, 1), 1), 3)
    with pytest.raises(ValueError, match="depth 1 or 2"):
        structured_axis(template, np.zeros((4, 3)), np.array([0, 1, 0, 1]))
    deep = gto.Tree.complete(3, [0, 1], 3)
    with pytest.raises(ValueError, match="depth 1 or 2"):
        structured_axis(deep, np.zeros((4, 3)), np.array([0, 1, 0, 1]))


def test_weights_count_as_repeated_points():
    rng = np.random.default_rng(4)
    X = rng.integers(0, 5, size=(25, 3)).astype(float)
    y = rng.integers(0, 2, 25)
    w = rng.integers(1, 4, 25)
    repeated = np.repeat(np.arange(25), w)
    for leaves in ([0, 1, 0, 1], [1, 0, 0, 1], [0, 1]):
        weighted, _ = best_axis_splits(X, y, w.astype(float), np.array(leaves))
        plain, _ = best_axis_splits(X[repeated], y[repeated], np.ones(len(repeated)),
                                    np.array(leaves))
        assert weighted == plain


@pytest.mark.parametrize("leaves", list(itertools.product([0, 1], repeat=2)))
def test_a_depth_1_tree_of_either_labelling(leaves):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2)).round(1)
    y = (X[:, 1] > 0.2).astype(int)
    errors, _ = best_axis_splits(X, y, np.ones(40), np.array(leaves))
    assert errors == enumerated(X, y, np.ones(40), leaves, feature_cuts(X))
