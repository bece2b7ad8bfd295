"""gto.mip.solve_oct: Bertsimas & Dunn's OCT against exhaustive search and Iris."""
import itertools

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.tree import DecisionTreeClassifier

import gto.mip


def leaf_errors(y, n_min):
    """Errors of one leaf holding labels y (inf if it breaks the leaf size)."""
    if len(y) == 0:
        return 0
    if len(y) < n_min:
        return np.inf
    return len(y) - np.bincount(y).max()


def splits(X):
    """Every distinct axis-aligned split of the rows of X, as boolean 'left' masks."""
    for j in range(X.shape[1]):
        values = np.unique(X[:, j])
        for lo, hi in zip(values[:-1], values[1:]):
            yield X[:, j] <= (lo + hi) / 2


def brute_force(X, y, n_min, max_splits=3):
    """Minimum errors of a depth-2 axis-aligned tree (unsplit nodes send all right)."""

    def subtree(mask, budget):
        best = leaf_errors(y[mask], n_min)
        if budget >= 1:
            for left in splits(X[mask]):
                best = min(best, leaf_errors(y[mask][left], n_min) + leaf_errors(y[mask][~left], n_min))
        return best

    best = leaf_errors(y, n_min)
    for left in splits(X):
        full = np.zeros(len(y), dtype=bool)
        for a, b in itertools.product(range(max_splits), repeat=2):
            if a + b <= max_splits - 1:
                full[:] = left
                best = min(best, subtree(full.copy(), a) + subtree(~full, b))
    return best


@pytest.mark.parametrize("seed, n_min, max_splits", [(0, 1, 3), (1, 1, 3), (2, 3, 3), (3, 1, 2), (4, 4, 1)])
def test_oct_equals_exhaustive_search(seed, n_min, max_splits):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 6, size=(16, 2)).astype(float)
    y = rng.integers(0, 2, 16)
    res = gto.mip.solve_oct(X, y, depth=2, n_min=n_min, max_splits=max_splits, time_limit=60)
    expected = brute_force(X, y, n_min, max_splits)
    baseline = len(y) - np.bincount(y).max()
    assert res.status == "optimal"
    assert res.objective * baseline == pytest.approx(expected)
    assert res.n_errors == expected
    assert res.n_splits <= max_splits


def test_alpha_prunes_and_objective_counts_splits():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int) ^ (rng.random(30) < 0.2)
    baseline = min(y.sum(), 30 - y.sum())
    heavy = gto.mip.solve_oct(X, y, depth=2, alpha=2.0, time_limit=60)
    assert heavy.n_splits == 0 and heavy.n_errors == baseline
    assert heavy.objective == pytest.approx(1.0)
    light = gto.mip.solve_oct(X, y, depth=2, alpha=0.01, time_limit=60)
    assert light.objective == pytest.approx(light.n_errors / baseline + 0.01 * light.n_splits)


def test_cart_warm_start_is_accepted():
    X, y = load_iris(return_X_y=True)
    res = gto.mip.solve_oct(X, y, depth=2, time_limit=2)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    cart_errors = int((cart.predict(X) != y).sum())
    assert res.start_objective * 100 == pytest.approx(cart_errors)  # baseline 100 on Iris
    assert res.incumbents[0][1] <= res.start_objective + 1e-9
    assert res.n_errors <= cart_errors
    assert res.tree.n_errors(X, y) == res.n_errors


def test_iris_depth_2_has_6_errors():
    X, y = load_iris(return_X_y=True)
    res = gto.mip.solve_oct(X, y, depth=2, alpha=0, time_limit=300)
    assert res.status == "optimal"
    assert res.n_errors == 6 and res.objective * 100 == pytest.approx(6)


@pytest.mark.slow
def test_iris_depth_3_three_splits_nmin_8_has_4_errors():
    X, y = load_iris(return_X_y=True)
    res = gto.mip.solve_oct(X, y, depth=3, alpha=0, n_min=8, max_splits=3, time_limit=1800)
    assert res.status == "optimal"
    assert res.n_errors == 4 and res.n_splits <= 3


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"depth": 0}, ValueError),
        ({"depth": 2.0}, ValueError),
        ({"n_min": 0}, ValueError),
        ({"alpha": -1}, ValueError),
        ({"max_splits": -1}, ValueError),
        ({"warm_start": "greedy"}, ValueError),
        ({"warm_start": 3}, TypeError),
        ({"solver": "SCS"}, ValueError),
    ],
)
def test_bad_arguments(kwargs, exc):
    X, y = load_iris(return_X_y=True)
    args = {"depth": 2, **kwargs}
    with pytest.raises(exc):
        gto.mip.solve_oct(X, y, **args)


def test_bad_warm_starts_and_data():
    X, y = load_iris(return_X_y=True)
    deep = DecisionTreeClassifier(max_depth=3, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="depth"):
        gto.mip.solve_oct(X, y, depth=2, warm_start=deep)
    with pytest.raises(ValueError, match="n_min"):
        gto.mip.solve_oct(X, y, depth=2, n_min=48, warm_start=DecisionTreeClassifier(max_depth=2).fit(X, y))
    with pytest.raises(ValueError, match="two classes"):
        gto.mip.solve_oct(X, np.zeros(150), depth=2)
    with pytest.raises(ValueError, match="constant"):
        gto.mip.solve_oct(np.ones((10, 2)), np.arange(10) % 2, depth=2)
