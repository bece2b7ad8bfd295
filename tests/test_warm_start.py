"""Warm starts: a tree becomes a feasible assignment that HiGHS accepts."""
import numpy as np
import pytest
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

import gto
import gto.mip
import problems
from gto.mip.oblique import build
from gto.mip.warm_start import oblique_start

DEPTH2 = ((0, 1), (0, 1))


def heart_split():
    X, y = problems.load("heart")
    X_tr, _, y_tr, _ = train_test_split(X, y, train_size=0.8, stratify=y, random_state=0)
    return X_tr, y_tr


def assert_feasible(model, start):
    for var, value in start.items():
        var.value = value
    for con in model.problem.constraints:
        assert np.max(con.violation()) <= 1e-8
    assert set(np.unique(start[model.z])) <= {0.0, 1.0}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("tighten", [True, False])
def test_start_is_feasible_and_costs_the_trees_errors(seed, tighten):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(60, 3)) * [1.0, 100.0, 0.01] + [0.0, 50.0, 3.0]
    y = rng.integers(0, 2, 60)
    W = rng.normal(size=(3, 3))
    proj = np.sort(X @ W.T, axis=0)[20:40]  # thresholds in the widest gap of the middle third
    widest = np.argmax(np.diff(proj, axis=0), axis=0)
    gamma = (proj[widest, range(3)] + proj[widest + 1, range(3)]) / 2
    tree = gto.Tree.from_structure(DEPTH2, 3, W=W, gamma=gamma)
    model = build(tree, X, y, tighten=tighten)
    start = oblique_start(model, tree)
    assert_feasible(model, start)
    assert model.weight @ start[model.e] == pytest.approx(tree.n_errors(X, y))


def test_points_inside_the_margin_become_errors():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(40, 2))
    X[0] = [0.5, 0.5]
    y = (X[:, 0] > 0.5 - 1e-7).astype(int)  # point 0 sits 1e-7 right of the root
    tree = gto.Tree.from_structure((0, 1), 2, W=[[1.0, 0.0]], gamma=[0.5 - 1e-7])
    assert tree.n_errors(X, y) == 0
    model = build(tree, X, y)
    start = oblique_start(model, tree)
    assert_feasible(model, start)
    assert model.weight @ start[model.e] == 1  # lost to the margin, still feasible


def test_start_that_needs_the_symmetry_flip():
    X, y = heart_split()
    # a root that sends almost everything right violates the symmetry cut as given
    tree = gto.Tree.from_sklearn(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    tree.gamma[0] = np.sort(X @ tree.W[0])[5]
    model = build(tree, X, y, tighten=True)
    start = oblique_start(model, tree)
    assert_feasible(model, start)
    assert model.weight @ start[model.e] == pytest.approx(tree.n_errors(X, y))


def test_highs_accepts_the_cart_start():
    X, y = heart_split()
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    start_errors = gto.Tree.from_sklearn(cart).n_errors(X, y)
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.mip.solve(tree, X, y, time_limit=2, warm_start=cart)
    assert res.start_objective == start_errors
    # the first incumbent HiGHS reports is the start itself, right away
    assert res.incumbents[0][1] <= res.start_objective
    assert res.time_to_first < 1.0
    assert res.objective <= start_errors and res.n_errors <= start_errors
    cold = gto.mip.solve(tree, X, y, time_limit=0.05)
    assert cold.incumbents == [] or cold.incumbents[0][1] > start_errors


def test_start_from_a_solved_tree_is_optimal_immediately():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    y = np.arange(12) % 2
    tree = gto.Tree.from_structure(DEPTH2, 2)
    best = gto.mip.solve(tree, X, y, time_limit=60)
    again = gto.mip.solve(tree, X, y, time_limit=60, warm_start=best.tree)
    assert again.start_objective == pytest.approx(best.objective)
    assert again.incumbents[0][1] == pytest.approx(best.objective)
    assert again.status == "optimal" and again.objective == pytest.approx(best.objective)


def test_bad_warm_starts():
    X, y = heart_split()
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    with pytest.raises(ValueError, match="structure"):
        gto.mip.solve(tree, X, y, warm_start=gto.Tree.from_structure((0, 1), X.shape[1]))
    with pytest.raises(ValueError, match="features"):
        gto.mip.solve(tree, X, y, warm_start=gto.Tree.from_structure(DEPTH2, 2))
    with pytest.raises(TypeError):
        gto.mip.solve(tree, X, y, warm_start="cart")
    with pytest.raises(ValueError, match="HIGHS"):
        gto.mip.solve(tree, X, y, solver="SCIPY", warm_start=tree)
