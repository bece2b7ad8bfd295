"""The region start of deep structures (gto.engine._region_start)."""
import numpy as np
import pytest
from scipy.optimize import minimize

import gto
import gto.engine._region_start as regions
from experiments.search_power import planted_deep
from gto.engine._portfolio import round_starts
from gto.engine._problem import TreeProblem
from gto.utils._interrupt import OutOfTime, limits

from truths import random_tree, walk_errors


def _squared_hinge(theta, X1, t, w):
    margin = np.maximum(0.0, 1.0 - t * (X1 @ theta))
    return w @ margin**2 + regions.RIDGE * theta @ theta


@pytest.mark.parametrize("seed", range(3))
def test_l2_svm_without_ramp_is_the_squared_hinge_minimum(seed, monkeypatch):
    """Without the ramp the Newton steps minimise the (convex) squared hinge: the same
    objective as scipy's BFGS minimum of it."""
    monkeypatch.setattr(regions, "RAMP", np.inf)
    monkeypatch.setattr(regions, "NEWTON_STEPS", 50)
    rng = np.random.default_rng(seed)
    X1 = np.column_stack([rng.normal(size=(80, 3)), -np.ones(80)])
    go_left = X1[:, 0] + 0.3 * rng.normal(size=80) < 0
    w = rng.uniform(0.5, 2.0, 80)
    theta = regions.l2_svm(X1, go_left, w)
    t, wn = np.where(go_left, -1.0, 1.0), w / w.sum()
    best = minimize(_squared_hinge, np.zeros(4), args=(X1, t, wn), method="BFGS",
                    options={"gtol": 1e-10})
    assert _squared_hinge(theta, X1, t, wn) <= best.fun + 1e-8


def test_l2_svm_ramp_ignores_far_label_noise():
    """Labels flipped far from a clean cut pull the squared hinge off it; the ramp
    drops them, so the separator is the clean cut's (fewer errors on clean points)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (400, 2))
    X1 = np.column_stack([x, -np.ones(400)])
    go_left = x[:, 0] < 0
    noisy = go_left.copy()
    far = np.flatnonzero(x[:, 0] > 0.8)[:25]
    noisy[far] = True  # far right points labelled left
    theta = regions.l2_svm(X1, noisy, np.ones(400))
    clean = (X1 @ theta <= 0) != go_left
    assert clean.sum() <= 4


@pytest.mark.parametrize("seed", range(2))
def test_region_start_finds_a_planted_depth3_tree(seed):
    """On planted depth-3 trees (7 oblique decisions, alternating leaves, 5 % noise) the
    start alone is close to the planted tree's training error (the greedy LP tree is
    at 7x), counted by a literal tree walk."""
    X, y, planted = planted_deep(1000, seed, 3)
    problem = TreeProblem(gto.Tree.complete(3, [0, 1], X.shape[1]), X, y)
    Theta = regions.region_theta(problem, seed)
    assert Theta.shape == (7, X.shape[1] + 1) and np.all(np.isfinite(Theta))
    start = problem.tree_of(Theta)
    assert walk_errors(start, X, y) <= 1.3 * walk_errors(planted, X, y)


@pytest.mark.parametrize("seed", range(3))
def test_region_start_any_shape_and_classes(seed):
    """Irregular deep shapes with three classes: finite parameters of the right shape,
    the same for the same seed, and never a crash on a leaf without points."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 6, [0, 1, 2], 3)
    X = rng.normal(size=(150, 3))
    y = rng.choice(np.unique(tree.leaf_classes), 150)
    problem = TreeProblem(tree, X, y)
    a, b = regions.region_theta(problem, 7), regions.region_theta(problem, 7)
    assert a.shape == (tree.n_decisions, 4) and np.all(np.isfinite(a))
    np.testing.assert_array_equal(a, b)


def test_region_start_stops_at_the_time_limit():
    X, y, _ = planted_deep(300, 0, 3)
    problem = TreeProblem(gto.Tree.complete(3, [0, 1], X.shape[1]), X, y)
    with limits(deadline=0.0), pytest.raises(OutOfTime):
        regions.region_theta(problem, 0)


def test_region_start_is_a_round_start_of_deep_structures_only():
    assert round_starts(["greedy"], False, False, deep=True) == ["regions", "cart"]
    assert round_starts(["greedy"], False, False, deep=False) == ["cart"]
    assert round_starts(["greedy"], True, False, deep=True) == []  # the paper's configuration
    assert regions.needs_regions(gto.Tree.complete(3, [0, 1], 2))
    assert not regions.needs_regions(gto.Tree.complete(2, [0, 1], 2))


@pytest.mark.parametrize("seed", range(4))
def test_compiled_pair_fit_is_the_python_fit(seed):
    """A decision of height 2 over two of height 1 is fitted by the compiled kernel; the
    generic Python fit of the same decision (the kernel switched off) from the same
    random stream gives the same gates and errors, cold and warm-started."""
    X, y, _ = planted_deep(400, seed, 3)
    problem = TreeProblem(gto.Tree.complete(3, [0, 1], X.shape[1]), X, y)
    points = np.flatnonzero(np.random.default_rng(seed).uniform(size=len(y)) < 0.6)
    compiled = regions._RegionFit(problem, np.random.default_rng(seed))
    python = regions._RegionFit(problem, np.random.default_rng(seed))
    python.pairs = {}
    d = next(iter(compiled.pairs))
    warm = None
    for _ in range(2):  # cold, then warm from the cold fit
        (Tc, ec), (Tp, ep) = (f.fit(("d", d), points, warm) for f in (compiled, python))
        assert sorted(Tc) == sorted(Tp) and ec == pytest.approx(ep, abs=1e-9)
        for k in Tc:
            np.testing.assert_allclose(Tc[k], Tp[k], rtol=1e-7, atol=1e-9)
        assert ec == pytest.approx(compiled.errors(("d", d), Tc, points), abs=1e-9)
        warm = {k: v + 0.05 for k, v in Tc.items()}
