"""gto.mip.solve: exact optimum against exhaustive search, validation, limits."""
import itertools

import numpy as np
import pytest
from scipy.optimize import linprog

import gto
import gto.mip
import problems
from gto.mip.oblique import build, mirror_pairs

DEPTH2 = ((0, 1), (0, 1))


# -- exhaustive search for a depth-2 tree on points in general position in 2-D ------
def line_dichotomies(P, idx):
    """All (left, right) splits of the points ``idx`` of P by a line, as frozensets.

    In general position every split by a line can be moved, keeping the split,
    until the line passes through two of the points; those two may then go to
    either side.  Trivial splits (all one side) are added.
    """
    idx = list(idx)
    out = {(frozenset(idx), frozenset()), (frozenset(), frozenset(idx))}
    for a, b in itertools.combinations(idx, 2):
        d = P[b] - P[a]
        normal = np.array([-d[1], d[0]])
        side = {k: np.sign((P[k] - P[a]) @ normal) for k in idx if k not in (a, b)}
        pos = {k for k, s in side.items() if s > 0}
        neg = {k for k, s in side.items() if s < 0}
        for extra in itertools.product((0, 1), repeat=2):
            A = set(pos) | {p for p, e in zip((a, b), extra) if e}
            B = set(neg) | {p for p, e in zip((a, b), extra) if not e}
            out.add((frozenset(A), frozenset(B)))
            out.add((frozenset(B), frozenset(A)))
    return out


def separable(P, left, right):
    """LP check: some (w, g) has x.w - g <= -1 on left and >= 1 on right."""
    rows = [np.append(P[k], -1.0) for k in left] + [-np.append(P[k], -1.0) for k in right]
    if not rows:
        return True
    res = linprog(np.zeros(3), A_ub=np.array(rows), b_ub=-np.ones(len(rows)), bounds=(None, None))
    return res.status == 0


def brute_force_depth2(P, y):
    """Minimum errors of the tree ((0, 1), (0, 1)) over all line splits."""

    def best_leaf_pair(S):
        return min(
            sum(y[k] != 0 for k in L) + sum(y[k] != 1 for k in R)
            for L, R in line_dichotomies(P, S)
        )

    cache = {}

    def best(S):
        if S not in cache:
            cache[S] = best_leaf_pair(S)
        return cache[S]

    return min(best(L) + best(R) for L, R in line_dichotomies(P, range(len(P))))


def instance(seed, n_points):
    """Random Gaussian points and labels (often separable by three lines)."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(n_points, 2))
    y = (rng.random(n_points) < 0.5).astype(int)
    y[:2] = [0, 1]
    return P, y


def circle(seed, n_points):
    """Points near a circle with alternating labels: 1 to 3 errors at best."""
    rng = np.random.default_rng(seed)
    angle = np.sort(rng.uniform(0, 2 * np.pi, n_points))
    radius = 1 + 0.05 * rng.random(n_points)
    return np.c_[radius * np.cos(angle), radius * np.sin(angle)], np.arange(n_points) % 2


CASES = [(circle, s, 9 + s % 4) for s in range(8)] + [(instance, 100 + s, 9 + s) for s in range(4)]


@pytest.mark.parametrize("seed", range(4))
def test_line_dichotomies_are_exactly_the_separable_splits(seed):
    P, _ = instance(seed, 7)
    found = line_dichotomies(P, range(7))
    by_lp = set()
    for mask in itertools.product((0, 1), repeat=7):
        L = frozenset(k for k in range(7) if mask[k] == 0)
        R = frozenset(range(7)) - L
        if separable(P, L, R):
            by_lp.add((L, R))
    assert found == by_lp


@pytest.mark.parametrize("make, seed, n_points", CASES)
@pytest.mark.parametrize("tighten", [True, False])
def test_mip_optimum_equals_exhaustive_search(make, seed, n_points, tighten):
    P, y = make(seed, n_points)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    res = gto.mip.solve(tree, P, y, time_limit=60, tighten=tighten)
    expected = brute_force_depth2(P, y)
    assert res.status == "optimal"
    assert res.objective == pytest.approx(expected)
    assert res.bound == pytest.approx(expected, abs=1e-6)
    assert res.n_errors == expected == res.tree.n_errors(P, y)


def test_original_units_do_not_matter():
    P, y = instance(7, 12)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    a = gto.mip.solve(tree, P, y, time_limit=60)
    b = gto.mip.solve(tree, P * [1000.0, 0.001] + [5e4, -3.0], y, time_limit=60)
    assert a.n_errors == b.n_errors == a.objective == b.objective


def test_weights_equal_duplicated_rows():
    P, y = instance(3, 10)
    w = np.array([1, 2, 1, 3, 1, 1, 2, 1, 1, 1])
    tree = gto.Tree.from_structure(DEPTH2, 2)
    weighted = gto.mip.solve(tree, P, y, time_limit=60, sample_weight=w.astype(float))
    repeated = gto.mip.solve(tree, np.repeat(P, w, axis=0), np.repeat(y, w), time_limit=60)
    assert weighted.objective == pytest.approx(repeated.objective)
    assert weighted.n_errors == pytest.approx(repeated.n_errors)


def test_conflicting_duplicates_and_three_classes():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(14, 2))
    X[10:] = X[:4]  # same points, other labels
    y = np.array([0, 1, 2] * 4 + [0, 0])
    y[10:] = (y[:4] + 1) % 3
    tree = gto.Tree.from_structure(((0, 1), (2, (0, 1))), 2)
    plain = gto.mip.solve(tree, X, y, time_limit=60, tighten=False)
    tight = gto.mip.solve(tree, X, y, time_limit=60, tighten=True)
    assert plain.status == tight.status == "optimal"
    assert plain.objective == tight.objective >= 4  # four conflicting pairs
    assert tight.n_errors == tight.tree.n_errors(X, y) <= tight.objective


def test_scipy_solver_agrees():
    P, y = instance(11, 10)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    a = gto.mip.solve(tree, P, y, time_limit=60)
    b = gto.mip.solve(tree, P, y, time_limit=60, solver="scipy")
    assert b.solver == "SCIPY" and b.status == "optimal"
    assert a.objective == b.objective and b.n_errors == a.n_errors
    assert b.bound == pytest.approx(b.objective, abs=1e-6)


def test_mirror_pairs():
    assert [p[0] for p in mirror_pairs(gto.Tree.from_structure(DEPTH2, 2))] == [0]
    assert mirror_pairs(gto.Tree.from_structure(((0, 1), (1, 0)), 2)) == []
    deep = gto.Tree.from_structure((((0, 1), (0, 1)), ((0, 1), (0, 1))), 2)
    assert [p[0] for p in mirror_pairs(deep)] == [0, 1, 4]


def test_time_limit_returns_incumbent_with_status():
    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.mip.solve(tree, X, y, time_limit=1.0)
    assert res.status == "time_limit" and res.success
    assert res.runtime < 10
    assert res.bound <= res.objective and 0 <= res.gap <= 1
    assert res.n_errors == res.tree.n_errors(X, y) <= res.objective
    assert res.time_to_first <= res.time_to_best <= res.runtime
    assert res.incumbents[-1][1] == res.objective


def test_model_size_uses_merged_points():
    X, y = problems.load("cancer")
    model = build(gto.Tree.from_structure(DEPTH2, X.shape[1]), X, y)
    assert len(model.y) < len(y)
    assert model.weight.sum() == len(y)


@pytest.mark.parametrize(
    "kwargs, exc",
    [
        ({"solver": "NOPE"}, ValueError),
        ({"solver": "CLARABEL"}, ValueError),
        ({"solver": 3}, TypeError),
        ({"time_limit": -1}, ValueError),
        ({"time_limit": "1"}, TypeError),
        ({"mip_gap": 1.5}, ValueError),
        ({"epsilon": 0}, ValueError),
        ({"sample_weight": -np.ones(10)}, ValueError),
        ({"sample_weight": np.zeros(10)}, ValueError),
    ],
)
def test_bad_arguments(kwargs, exc):
    P, y = instance(0, 10)
    with pytest.raises(exc):
        gto.mip.solve(gto.Tree.from_structure(DEPTH2, 2), P, y, **kwargs)


def test_bad_data():
    P, y = instance(0, 10)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    with pytest.raises(TypeError):
        gto.mip.solve(DEPTH2, P, y)
    with pytest.raises(ValueError):
        gto.mip.solve(tree, P[:, :1], y)
    with pytest.raises(ValueError):
        gto.mip.solve(tree, P, y + 5)
    with pytest.raises(ValueError):
        gto.mip.solve(tree, P, np.zeros(10, dtype=int))


def test_epts_never_beats_the_proven_optimum():
    """EPTS's training error is never below the MIP's proven optimum."""
    for seed in range(4):
        P, y = circle(200 + seed, 12)
        tree = gto.Tree.from_structure(DEPTH2, 2)
        exact = gto.mip.solve(tree, P, y, time_limit=60)
        assert exact.status == "optimal"
        epts = gto.optimize(tree, P, y, objective="product", method="tabu", random_state=seed)
        assert epts.n_errors >= exact.bound - 1e-6
        assert epts.tree.n_errors(P, y) >= exact.objective - 1e-6
