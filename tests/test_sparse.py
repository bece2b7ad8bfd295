"""Sparse vertices, the L1 penalty and the feature budget,
against independent truths: a brute-force axis-aligned depth-2 optimiser,
planted sparse trees, scikit-learn's own CART predictions and the penalty
evaluated literally from the returned tree."""
import copy

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto.engine._problem import TreeProblem
from gto.engine._walker import walker_from_theta

from truths import brute_force_depth2, random_tree

DEPTH2 = ((0, 1), (0, 1))


def test_brute_force_on_a_tiny_instance_matches_enumeration():
    """The prefix-sum optimiser against plain enumeration of every tree (tiny data)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(9, 2)).astype(float)
    y = rng.integers(0, 2, 9)
    thresholds = [np.unique(X[:, f]) for f in range(2)]

    def splits():  # every axis-aligned split: (feature, threshold, orientation)
        for f in range(2):
            for t in np.concatenate([[-np.inf], thresholds[f], [np.inf]]):
                for s in (1.0, -1.0):
                    yield f, t, s

    def goes_left(Xs, f, t, s):
        return Xs[:, f] <= t if s > 0 else Xs[:, f] >= t

    best = np.inf
    for f0, t0, s0 in splits():
        left = goes_left(X, f0, t0, s0)
        total = 0
        for side in (left, ~left):
            Xs, ys = X[side], y[side]
            total += min(int(np.sum(np.where(goes_left(Xs, f, t, s), ys != 0, ys != 1)))
                         for f, t, s in splits())
        best = min(best, total)
    assert brute_force_depth2(X, y) == best


# -- max_features=1: the exact axis-aligned optimum -----------------------------------------
@pytest.mark.parametrize("name", [
    "heart", "liver",
    pytest.param("cancer", marks=pytest.mark.slow),
    pytest.param("diabetes", marks=pytest.mark.slow),
])
def test_max_features_1_reaches_the_axis_aligned_depth2_optimum(name):
    X, y = problems.load(name)
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.optimize(tree, X, y, max_features=1, max_iter=300, random_state=0)
    assert np.all(np.count_nonzero(res.tree.W, axis=1) == 1)  # one feature per decision
    errors = int(np.sum(res.tree.predict(X) != y))
    optimum = brute_force_depth2(X, y)
    assert errors == optimum
    assert res.n_errors == errors
    # free leaf classes can only do better or equal (equal on the four paper sets)
    assert brute_force_depth2(X, y, free_leaves=True) <= optimum


def test_axis_work_counts_the_root_cuts_times_the_scan():
    """Every root position (cuts plus two a feature) times every child's scan of every
    feature's positions, plus the sweep's N n a root feature."""
    from gto.engine._axis import axis_work
    X = np.array([[0.0, 1.0], [0.0, 2.0], [1.0, 3.0]])  # 1 and 2 cuts
    assert axis_work(X) == ((1 + 2) + (2 + 2)) ** 2 + 3 * 2**2
    assert axis_work(X, max_cuts=1) == ((1 + 2) + (1 + 2)) ** 2 + 3 * 2**2


def test_max_features_1_is_exact_on_many_points_with_few_values():
    """N^2 n^2 = 1.4e8 is over AXIS_WORK_LIMIT, but with 5 values per feature the exact
    axis-aligned start costs little (axis_work 2.5e5), so "auto" uses it: the brute-force
    optimum is reached (a CART start falls short here)."""
    from gto.engine._axis import axis_work
    from gto.learners._optimize import AXIS_WORK_LIMIT
    rng = np.random.default_rng(4)
    X = rng.integers(0, 5, size=(600, 20)).astype(float)
    score = X[:, 0] + X[:, 1] - X[:, 2] + rng.normal(0, 1.5, 600)
    y = (score > np.median(score)).astype(int)
    assert len(y) ** 2 * X.shape[1] ** 2 > AXIS_WORK_LIMIT >= axis_work(X)
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.optimize(tree, X, y, max_features=1, max_iter=100, random_state=0)
    assert np.all(np.count_nonzero(res.tree.W, axis=1) <= 1)
    assert int(np.sum(res.tree.predict(X) != y)) == brute_force_depth2(X, y)


# -- planted sparse trees -------------------------------------------------------------------
def planted_tree(seed, n=10, N=400, k=2):
    """Depth-2 tree ((0, 1), (0, 1)) whose decisions use k random features each, with
    thresholds at medians; labels from the tree itself (no noise)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(N, n))
    W = np.zeros((3, n))
    for d in range(3):
        S = rng.choice(n, k, replace=False)
        W[d, S] = rng.choice([-1, 1], k) * rng.uniform(0.5, 1.5, k)
    gamma = np.zeros(3)
    gamma[0] = np.median(X @ W[0])
    left = X @ W[0] - gamma[0] <= 0
    gamma[1], gamma[2] = np.median(X[left] @ W[1]), np.median(X[~left] @ W[2])
    tree = gto.Tree.from_structure(DEPTH2, n, W=W, gamma=gamma)
    return X, tree.predict(X), tree


def supports(tree):
    """Root support and the children's supports (as a set: ((0, 1), (0, 1)) is
    symmetric, a reversed root swaps its subtrees)."""
    s = [frozenset(np.flatnonzero(w).tolist()) for w in tree.W]
    return s[0], frozenset(s[1:])


def test_planted_sparse_trees_are_recovered_with_max_features_2():
    seeds = range(6)
    hits = 0
    for seed in seeds:
        X, y, planted = planted_tree(seed)
        res = gto.optimize(gto.Tree.from_structure(DEPTH2, 10), X, y, max_features=2,
                           max_iter=3000, random_state=seed)
        assert np.all(np.count_nonzero(res.tree.W, axis=1) <= 2)
        errors = int(np.sum(res.tree.predict(X) != y))
        hits += errors == 0 and supports(res.tree) == supports(planted)
    assert hits >= 4  # most seeds


# -- a CART tree as the start is never made worse -------------------------------------------


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 5), N=st.integers(20, 80),
       noise=st.floats(0, 0.4))
@example(seed=2461, n=5, N=65, noise=0.0)  # a point on a CART threshold (found by this test)
def test_optimizing_a_cart_tree_with_max_features_1_never_adds_errors(seed, n, N, noise):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(N, n)).round(1)  # ties, as in real data
    y = (X @ rng.normal(size=n) > 0).astype(int)
    y[rng.random(N) < noise] ^= 1
    if len(np.unique(y)) < 2:
        return
    cart = DecisionTreeClassifier(max_depth=2, random_state=seed).fit(X, y)
    leaves = cart.tree_.children_left < 0
    leaf_classes = cart.classes_[np.argmax(cart.tree_.value[leaves, 0], axis=1)]
    if set(np.unique(y)) - set(leaf_classes):
        return  # a class with no CART leaf: optimize rejects such a tree (no leaf for a label)
    cart_errors = int(np.sum(cart.predict(X) != y))  # scikit-learn's own count
    res = gto.optimize(cart, X, y, max_features=1, max_iter=100, random_state=seed)
    assert res.restarts[0]["start"] == "tree"
    assert res.restarts[0]["n_errors"] <= cart_errors  # the search itself, not a fallback
    assert np.sum(res.tree.predict(X) != y) <= cart_errors
    assert np.all(np.count_nonzero(res.tree.W, axis=1) <= 1)


# -- the penalty, evaluated literally -------------------------------------------------------
def literal_penalty(tree, X, alpha):
    """alpha * sum |w| on the standardised scale: w' = w * std(x) per feature."""
    return alpha * float(np.sum(np.abs(tree.W) * X.std(axis=0)))


@pytest.mark.parametrize("objective", ["product", "minimum", "count"])
def test_penalised_neighbour_values_are_the_paper_error_plus_the_penalty(objective):
    from test_walker import make_walker

    alpha = 0.37
    P, W, X, y = make_walker(3, objective, n=4, N=40, sparse=True, alpha=alpha, max_features=2)
    tree = P.tree_of(W.theta())
    assert W.value == pytest.approx(
        gto.error(tree, X, y, objective) + literal_penalty(tree, X, alpha), rel=1e-9)
    entering, leaving, values = W.candidates()
    assert len(entering) > 0
    for e, l, v in zip(entering, leaving, values):
        nb = copy.deepcopy(W)
        nb.pivot(e, l)
        tree = P.tree_of(nb.theta())
        assert np.all(np.count_nonzero(tree.W, axis=1) <= 2)
        literal = gto.error(tree, X, y, objective) + literal_penalty(tree, X, alpha)
        assert v == pytest.approx(literal, rel=1e-7, abs=1e-7)
        assert nb.value == pytest.approx(literal, rel=1e-7, abs=1e-7)
        assert W.evaluate(e) == (l, pytest.approx(v, rel=1e-9, abs=1e-9))


def test_the_budget_keeps_exactly_the_moves_within_it_plus_swaps():
    """Candidates under max_features=2 against those of the uncapped walker at the
    same vertex: every uncapped move ending within the budget is kept as it is;
    the others are swaps (a coordinate variable enters, another leaves) that keep
    the number of nonzero weights."""
    from test_walker import make_walker

    k = 2
    free = make_walker(5, n=4, N=40, sparse=True, max_features=4)[1]
    P, capped, X, y = make_walker(5, n=4, N=40, sparse=True, max_features=k)
    assert np.allclose(free.theta(), capped.theta())  # the start has <= 2 weights per decision
    coord = np.concatenate([P.blocks.n_theta + P.blocks.row_start[d] + P.blocks.n_point[d] + np.arange(P.data.n)
                            for d in range(P.layout.D)])
    coord = set(coord.tolist()) | set((coord + P.blocks.R).tolist())
    mine = {int(e): (int(l), v) for e, l, v in zip(*capped.candidates())}
    kept = swaps = 0
    for e, l, v in zip(*free.candidates()):
        nb = copy.deepcopy(free)
        nb.pivot(e, l)
        within = np.all(np.count_nonzero(nb.theta()[:, :-1], axis=1) <= k)
        if within:
            assert mine[int(e)] == (int(l), pytest.approx(v, rel=1e-12))
            kept += 1
        elif int(e) in mine:  # a swap instead
            l2, v2 = mine[int(e)]
            assert int(e) in coord and l2 in coord
            nb = copy.deepcopy(capped)
            nb.pivot(e, l2)
            before = np.count_nonzero(capped.theta()[:, :-1], axis=1)
            assert np.array_equal(np.count_nonzero(nb.theta()[:, :-1], axis=1), before)
            assert v2 == pytest.approx(gto.error(P.tree_of(nb.theta()), X, y), rel=1e-7)
            swaps += 1
    assert kept > 0 and swaps > 0 and len(mine) == kept + swaps
    # after a pivot, single moves (one ratio test, swaps included) match the table
    for e, l in list(zip(*capped.candidates()[:2]))[:6]:
        moved = copy.deepcopy(capped)
        moved.pivot(e, l)
        fresh = copy.deepcopy(moved)
        for e2, l2, v2 in zip(*fresh.candidates()):
            assert moved.evaluate(e2) == (int(l2), pytest.approx(v2, rel=1e-9, abs=1e-9))


def test_optimize_reports_the_penalised_objective_literally():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
    tree = gto.Tree.from_structure((0, 1), 4)
    alpha = 0.2
    res = gto.optimize(tree, X, y, alpha=alpha, max_iter=300, random_state=0)
    assert res.penalty == pytest.approx(literal_penalty(res.tree, X, alpha), rel=1e-9)
    assert res.fun == pytest.approx(gto.error(res.tree, X, y) + res.penalty, rel=1e-7)
    assert res.n_errors == np.sum(res.tree.predict(X) != y)
    # the L1 penalty buys sparsity: weights of the noise features go to 0
    big = gto.optimize(tree, X, y, alpha=2.0, max_iter=300, random_state=0)
    assert np.count_nonzero(big.tree.W) < np.count_nonzero(
        gto.optimize(tree, X, y, max_iter=300, random_state=0).tree.W)


def test_crossover_keeps_zero_weights_at_zero_and_no_more_errors():
    rng = np.random.default_rng(1)
    tree = random_tree(rng, 3, [0, 1], 5)
    X = rng.normal(size=(80, 5))
    y = rng.integers(0, 2, 80)
    W = tree.W.copy()
    W[rng.random(W.shape) < 0.5] = 0.0
    tree.W = W
    P = TreeProblem(tree, X, y, coordinate_rows=True)
    walker = walker_from_theta(P, P.theta_of(tree), P.objective("product"), rng)
    found = P.tree_of(walker.theta())
    assert np.all(found.W[W == 0] == 0)
    assert found.n_errors(X, y) <= tree.n_errors(X, y)


def test_init_cart_and_axis_need_complete_structures():
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int)
    lopsided = gto.Tree.from_structure(((0, 1), 1), 3)
    with pytest.raises(ValueError, match="init='cart'"):
        gto.optimize(lopsided, X, y, init="cart")
    deep = gto.Tree.complete(3, [0, 1], 3)
    with pytest.raises(ValueError, match="init='axis'"):
        gto.optimize(deep, X, y, init="axis")
    res = gto.optimize(gto.Tree.from_structure(DEPTH2, 3), X, y, init="cart", max_iter=50)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert res.restarts[0]["start"] == "cart"
    assert res.n_errors <= np.sum(cart.predict(X) != y)


# -- Frank-Wolfe with the penalty -----------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_penalised_hinge_lp_matches_highs(seed):
    """min c.y + alpha sum (w+ + w-) s.t. y >= 1 - a_t (w, gamma), w = w+ - w- (HiGHS,
    written out here) against the block simplex with costs on both sides of the
    coordinate rows."""
    from scipy.optimize import linprog

    from gto.engine._hinge_lp import solve_hinge_lp

    rng = np.random.default_rng(seed)
    X, y = problems.load(["heart", "liver"][seed % 2])
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    P = TreeProblem(tree, X, y, coordinate_rows=True)
    W = walker_from_theta(P, rng.normal(size=(3, P.data.m)), P.objective("product"), rng)
    alpha = [0.01, 0.1, 1.0, 5.0][seed]
    n, m = P.data.n, P.data.m
    for d, b in enumerate(W.blocks):
        A = P.blocks.rows[d][: P.blocks.n_point[d]]  # the triples s [x, -1]
        T = len(A)
        cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
        pen = np.full(n, alpha)
        value, _ = solve_hinge_lp(b, np.concatenate([cost, pen]),
                                  ucost=np.concatenate([np.zeros(T), pen]))
        ref = linprog(
            np.concatenate([np.zeros(m), cost, pen, pen]),
            A_ub=np.hstack([-A, -np.eye(T), np.zeros((T, 2 * n))]), b_ub=-np.ones(T),
            A_eq=np.hstack([np.eye(n, m), np.zeros((n, T)), -np.eye(n), np.eye(n)]),
            b_eq=np.zeros(n),
            bounds=[(None, None)] * m + [(0, None)] * (T + 2 * n), method="highs",
        )
        assert value == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)
        literal = cost @ np.maximum(0, 1 - A @ b.theta) + alpha * np.abs(b.theta[:-1]).sum()
        assert literal == pytest.approx(value, rel=1e-9)


def test_frank_wolfe_with_the_penalty_is_monotone_and_reports_it_literally():
    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    alpha = 0.5
    res = gto.optimize(tree, X, y, method="frank-wolfe", alpha=alpha, max_iter=30,
                       random_state=0)
    values = res.history["value"]
    assert np.all(np.diff(values) <= 1e-9 * np.abs(values[:-1]))
    assert res.penalty == pytest.approx(literal_penalty(res.tree, X, alpha), rel=1e-9)
    assert res.fun == pytest.approx(gto.error(res.tree, X, y) + res.penalty, rel=1e-7)
    plain = gto.optimize(tree, X, y, method="frank-wolfe", max_iter=30, random_state=0)
    assert res.penalty < literal_penalty(plain.tree, X, alpha)  # smaller weights


@pytest.mark.parametrize("alpha", [0.1, 1.0])
def test_frank_wolfe_step_minimises_the_penalised_objective_on_its_segment(alpha):
    """One FW step: lambda minimises eq. 19 on the interpolated slacks plus the
    penalty, linear in (w+, w-), along the segment to the LP vertex (a grid as truth)."""
    from gto.engine._formulation import decision_errors
    from gto.engine._frank_wolfe import frank_wolfe
    from gto.engine._starts import cart_tree

    X, y = problems.load("heart")  # from CART the step is interior and the penalty grows
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    P = TreeProblem(tree, X, y, coordinate_rows=True, alpha=alpha)
    rng = np.random.default_rng(0)
    walker = walker_from_theta(P, P.theta_of(cart_tree(P)), P.objective("product"), rng)
    Theta0 = walker.theta()
    Theta1 = frank_wolfe(P, walker.blocks, max_iter=1)[0]
    V = np.array([b.theta for b in walker.blocks])  # the blocks end at the LP's vertex
    step = (V - Theta0).ravel()
    lam = float((Theta1 - Theta0).ravel() @ step / (step @ step))
    assert np.allclose(Theta1, Theta0 + lam * (V - Theta0))
    L0, R0 = decision_errors(P.data.X1 @ Theta0.T)
    Lv, Rv = decision_errors(P.data.X1 @ V.T)

    def f(t):
        YL, YR = L0 + t * (Lv - L0), R0 + t * (Rv - R0)
        LE = YL @ (tree.sides == -1).T + YR @ (tree.sides == 1).T
        product = P.data.weight @ np.prod(np.where(P.layout.mask, LE, 1.0), axis=1)
        l1 = (1 - t) * np.abs(Theta0[:, :-1]).sum() + t * np.abs(V[:, :-1]).sum()
        return product + alpha * l1

    grid = np.linspace(0, 1, 2001)
    best = min(f(t) for t in grid)
    assert f(lam) <= best + 1e-9 * abs(best)
    assert 0 < lam < 1  # an interior step: the line search decides
