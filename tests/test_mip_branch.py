"""gto.mip.solve(method="branch"): the branch and bound over point-to-leaf assignments.

Independent truths: the exhaustive line-split search of test_mip (points in
general position in 2-D), an exhaustive search over point-to-leaf
assignments with scipy's LPs in the same hypothesis class (ties and equal
points included), the big-M MIP, and the literal tree walk of conftest.
"""
import itertools
from functools import cache

import numpy as np
import pytest
from scipy.optimize import linprog
from test_mip import DEPTH2, brute_force_depth2, circle, instance

import gto
import gto.mip
import problems
from gto.mip.branch import duplicate_floor, solve_branch
from gto.mip.oblique import EPSILON
from gto.mip.scaling import Scaling

from truths import count_errors


def largest_margin(Xs, left, right):
    """max t s.t. x.w - g <= 0 (left), >= t (right), |w|_inf <= 1, t <= 1, by scipy."""
    n = Xs.shape[1]
    if not left or not right:
        return 1.0
    rows = [np.r_[Xs[i], -1.0, 0.0] for i in left] + [np.r_[-Xs[i], 1.0, 1.0] for i in right]
    bounds = [(-1, 1)] * n + [(None, None), (None, 1)]
    res = linprog(np.r_[np.zeros(n + 1), -1.0], A_ub=np.array(rows), b_ub=np.zeros(len(rows)),
                  bounds=bounds, method="highs")
    return -res.fun


def brute_force_assignments(tree, X, y, weight):
    """Least weight of points left unassigned over all point-to-leaf assignments
    whose every decision splits its points with margin EPSILON on data scaled to [0, 1]."""
    Xs = Scaling(X).transform(X)
    S = tree.sides

    @cache
    def splits(left, right):
        return largest_margin(Xs, list(left), list(right)) >= EPSILON - 1e-9

    options = [[k for k in range(tree.n_leaves) if tree.leaf_classes[k] == yi] + [None] for yi in y]
    best = np.inf
    for choice in itertools.product(*options):
        errors = sum(w for w, k in zip(weight, choice) if k is None)
        if errors >= best:
            continue
        if all(
            splits(tuple(i for i, k in enumerate(choice) if k is not None and S[k, d] < 0),
                   tuple(i for i, k in enumerate(choice) if k is not None and S[k, d] > 0))
            for d in range(tree.n_decisions)
        ):
            best = errors
    return best


def grid_instance(seed, n_points, n_features=2, top=5):
    """Small integer points (ties, equal points, some with other labels) and labels."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, top, size=(n_points, n_features)).astype(float)
    y = rng.integers(0, 2, size=n_points)
    y[:2] = [0, 1]
    return X, y


def check_result(res, tree, X, y, weight=None):
    assert res.status == "optimal" and res.success and res.gap == 0
    assert res.bound == res.objective
    assert res.n_errors == count_errors(res.tree, X, y, weight) <= res.objective + 1e-9
    times = [t for t, _, _ in res.history]
    assert times == sorted(times)
    incumbents = [inc for _, inc, _ in res.history]
    bounds = [b for _, _, b in res.history]
    assert incumbents == sorted(incumbents, reverse=True) and bounds == sorted(bounds)
    assert all(b <= inc for _, inc, b in res.history)


@pytest.mark.parametrize("make, seed, n_points",
                         [(circle, s, 9 + s % 3) for s in range(4)] + [(instance, 100 + s, 9) for s in range(3)])
def test_optimum_equals_exhaustive_line_splits(make, seed, n_points):
    P, y = make(seed, n_points)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    res = gto.mip.solve(tree, P, y, time_limit=None, method="branch")
    check_result(res, tree, P, y)
    assert res.objective == brute_force_depth2(P, y)


TIE_CASES = [  # (features, values per feature, structure, seed): optimum 4, 3, 1, 2, 2
    (1, 6, ((0, 1), 1), 1), (1, 6, DEPTH2, 1), (2, 5, DEPTH2, 3), (2, 5, ((0, 1), 1), 3),
    (2, 5, ((0, 1), (2, (0, 1))), 1),
]


@pytest.mark.parametrize("n_features, top, spec, seed", TIE_CASES)
def test_optimum_equals_assignment_search_with_ties(n_features, top, spec, seed):
    X, y = grid_instance(seed, 8, n_features, top)
    tree = gto.Tree.from_structure(spec, X.shape[1])
    if len(np.unique(tree.leaf_classes)) == 3:
        y = np.random.default_rng(seed).integers(0, 3, size=len(y))
    w = np.random.default_rng(seed).integers(1, 3, size=len(y)).astype(float)
    res = solve_branch(tree, X, y, time_limit=None, sample_weight=w)
    check_result(res, tree, X, y, w)
    assert res.objective == brute_force_assignments(tree, X, y, w)


def test_alternating_line_needs_errors():
    X = np.arange(8.0)[:, None]
    y = np.arange(8) % 2
    tree = gto.Tree.from_structure(DEPTH2, 1)
    res = solve_branch(tree, X, y, time_limit=None)
    check_result(res, tree, X, y)
    assert res.objective == brute_force_assignments(tree, X, y, np.ones(8)) == 2


@pytest.mark.parametrize("seed", range(3))
def test_optimum_equals_big_m_mip(seed):
    X, y = grid_instance(50 + seed, 18, n_features=2)
    X = X + np.random.default_rng(seed).normal(scale=0.3, size=X.shape)
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    branch = gto.mip.solve(tree, X, y, time_limit=None, method="branch")
    mip = gto.mip.solve(tree, X, y, time_limit=60)
    assert mip.status == "optimal"
    check_result(branch, tree, X, y)
    assert branch.objective == mip.objective


def test_conflicting_duplicates_bound_every_tree():
    X = np.array([[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [2.0, 0.0], [2.0, 0.0], [1.0, 1.0]])
    y = np.array([0, 1, 1, 0, 1, 0])
    w = np.array([1.0, 2.0, 0.5, 3.0, 1.0, 1.0])
    assert duplicate_floor(X, y, w) == 1.0 + 1.0  # min(1, 2.5) + min(3, 1)
    res = solve_branch(gto.Tree.from_structure(DEPTH2, 2), X, y, sample_weight=w, time_limit=None)
    check_result(res, gto.Tree.from_structure(DEPTH2, 2), X, y, w)
    assert res.objective == 2.0 and res.history[0][2] == 2.0


def test_perfect_warm_start_is_proved_at_the_root():
    P, y = instance(102, 12)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    first = solve_branch(tree, P, y, time_limit=None)
    assert first.objective == 0
    again = solve_branch(tree, P, y, time_limit=None, warm_start=first.tree)
    assert again.nodes == 1 and again.start_objective == 0 and again.lps == 0


def test_time_limit_keeps_incumbent_and_history():
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.mip.solve(tree, X, y, time_limit=2.0, method="branch")
    assert res.status == "time_limit" and res.success
    assert 0 <= res.bound <= res.objective and 0 < res.gap <= 1
    assert res.n_errors == count_errors(res.tree, X, y) <= res.objective
    assert res.time_to_first <= res.time_to_best <= res.runtime
    assert res.incumbents[-1][1] == res.objective == res.history[-1][1]


@pytest.mark.parametrize("kwargs", [{"method": "nope"}, {"method": "branch", "solver": "SCIPY"}])
def test_bad_method_arguments(kwargs):
    P, y = instance(0, 10)
    with pytest.raises(ValueError, match="method"):
        gto.mip.solve(gto.Tree.from_structure(DEPTH2, 2), P, y, **kwargs)


@pytest.mark.parametrize("gap, expected", [(4 * EPSILON, 0), (EPSILON / 2, 1)])
def test_margin_epsilon_decides_near_ties(gap, expected):
    """Two points of other classes ``gap`` apart (scaled units): split only if gap >= epsilon."""
    X = np.array([[0.0], [0.5], [0.5 + gap], [1.0]])
    y = np.array([0, 1, 0, 1])  # four intervals: some decision must part the close pair
    tree = gto.Tree.from_structure(DEPTH2, 1)
    res = solve_branch(tree, X, y, time_limit=None)
    check_result(res, tree, X, y)
    assert res.objective == brute_force_assignments(tree, X, y, np.ones(4)) == expected


def test_compare_mip_proofs_writes_rows_with_histories(tmp_path, capsys):
    import json

    from experiments import compare_mip

    path = tmp_path / "proofs.json"
    compare_mip.main(["proofs", "--sizes", "40", "--datasets", "cancer", "--time-limit", "30",
                      "--json", str(path)])
    rows = json.loads(path.read_text())["rows"]
    assert [(r["dataset"], r["points"], r["method"]) for r in rows] == [("cancer", 40, "branch")]
    row = rows[0]
    assert row["bound"] <= row["incumbent"] <= row["start"]
    assert row["history"][-1][1:] == [row["incumbent"], row["bound"]]
    assert "| cancer | 40 |" in capsys.readouterr().out
