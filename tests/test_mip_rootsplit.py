"""gto.mip.solve(method="rootsplit"): the branch and bound over root sides.

Independent truths: the exhaustive search over point-to-leaf assignments
with scipy's LPs of test_mip_branch (same hypothesis class, ties, equal
points, weights), the exhaustive line-split search of test_mip (2-D, general
position), scipy's largest-margin LP for the dual supports, and the literal
tree walk of conftest.
"""
import itertools

import numpy as np
import pytest
from test_mip import DEPTH2, brute_force_depth2, circle, instance
from test_mip_branch import brute_force_assignments, check_result, grid_instance, largest_margin

import gto
import gto.mip
from gto.mip import rootsplit, separation
from gto.mip.fixed import mirror_pairs
from gto.mip.oblique import EPSILON
from gto.mip.scaling import Scaling


def everything_left(tree):
    """A poor start (every point in the leftmost leaf): the search must find the optimum."""
    return gto.Tree.from_structure(tree.structure, tree.n_features)


SPECS = [DEPTH2, ((0, 1), 1), ((0, 1), (1, 0)), ((1, 1), (0, 1)), (0, (1, 0))]


@pytest.mark.parametrize("seed", range(7))
def test_optimum_equals_assignment_search(seed):
    spec = SPECS[seed % len(SPECS)]
    n_features = 1 + seed % 2
    X, y = grid_instance(seed, 8, n_features, 5)
    w = np.random.default_rng(seed).integers(1, 3, size=len(y)).astype(float)
    tree = gto.Tree.from_structure(spec, n_features)
    res = gto.mip.solve(tree, X, y, time_limit=None, sample_weight=w, method="rootsplit",
                        warm_start=everything_left(tree))
    check_result(res, tree, X, y, w)
    assert res.solver == "rootsplit"
    assert res.objective == brute_force_assignments(tree, X, y, w)


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("make, seed, n_points", [(circle, 2, 11), (instance, 101, 9)])
def test_optimum_equals_exhaustive_line_splits(make, seed, n_points, propagate, monkeypatch):
    monkeypatch.setattr(rootsplit, "PROPAGATE", propagate)
    P, y = make(seed, n_points)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    res = gto.mip.solve(tree, P, y, time_limit=None, method="rootsplit",
                        warm_start=everything_left(tree))
    check_result(res, tree, P, y)
    assert res.objective == brute_force_depth2(P, y)


@pytest.mark.parametrize("seed", range(4))
def test_dual_support_is_unsplittable_alone(seed):
    """The support of a failed split keeps its largest margin (scipy) and has <= n + 2 points."""
    rng = np.random.default_rng(seed)
    X = Scaling(rng.normal(size=(30, 3))).transform(rng.normal(size=(30, 3)))
    y = rng.integers(0, 2, size=30)
    left, right = np.flatnonzero(y == 0), np.flatnonzero(y == 1)
    t, _, _, support = separation.margin(X[left], X[right], support=True)
    assert t == pytest.approx(largest_margin(X, left.tolist(), right.tolist()), abs=1e-7)
    assert t < EPSILON and 0 < len(support) <= X.shape[1] + 2
    pts = np.r_[left, right][support]
    sub_left = [i for i in pts if y[i] == 0]
    sub_right = [i for i in pts if y[i] == 1]
    assert largest_margin(X, sub_left, sub_right) == pytest.approx(t, abs=1e-7)


def test_deeper_trees_are_refused():
    P, y = instance(0, 10)
    tree = gto.Tree.from_structure(((0, 1), ((0, 1), 1)), 2)
    with pytest.raises(ValueError, match="rootsplit"):
        gto.mip.solve(tree, P, y, method="rootsplit")


def test_time_limit_keeps_incumbent_and_history():
    from experiments.compare_mip import subsample

    X, y = subsample("liver", "80")
    tree = gto.Tree.from_structure(DEPTH2, X.shape[1])
    res = gto.mip.solve(tree, X, y, time_limit=1.0, method="rootsplit")
    assert res.status == "time_limit" and res.success
    assert 0 <= res.bound <= res.objective and res.history[-1][1:] == (res.objective, res.bound)


def child_cost(Xs, y, w, part, on, keep, drop):
    """Least weight of errors of one child on points ``on`` (``drop`` errors, ``keep`` correct)."""
    cost = sum(w[i] for i in on if drop[i])
    live = [i for i in on if not drop[i]]
    if part.decision < 0:
        return cost
    free = [i for i in live if not keep[i]]
    best = np.inf
    for mask in itertools.product([0, 1], repeat=len(free)):
        out = {i for i, m in zip(free, mask) if m}
        rest = [i for i in live if i not in out]
        left = [i for i in rest if y[i] == part.classes[0]]
        right = [i for i in rest if y[i] != part.classes[0]]
        if part.classes[0] == part.classes[1]:
            left, right = rest, []
        if largest_margin(Xs, left, right) >= EPSILON - 1e-9:
            best = min(best, sum(w[i] for i in out))
    return cost + best


def completions(search, node):
    """{root sides of the free points: errors} over every completion of ``node``, brute force."""
    free = np.flatnonzero(node.side == rootsplit.FREE)
    out = {}
    for choice in itertools.product([rootsplit.LEFT, rootsplit.RIGHT, rootsplit.GAP], repeat=len(free)):
        side = node.side.copy()
        side[free] = choice
        if any(s < 2 and not search.can[j, s] for j, s in zip(free, choice)):
            continue
        left, right = np.flatnonzero(side == 0).tolist(), np.flatnonzero(side == 1).tolist()
        if largest_margin(search.Xs, left, right) < EPSILON - 1e-9:
            continue
        cost = search.weight[side == rootsplit.GAP].sum()
        for s, part in enumerate(search.parts):
            on = np.flatnonzero(side == s)
            cost += child_cost(search.Xs, search.y, search.weight, part, on, node.keep, node.drop)
        out[choice] = cost
    return out


@pytest.mark.parametrize("seed", range(12))
def test_node_bounds_and_propagation_keep_the_best_completion(seed):
    """At random nodes: the node's bound (LP packing and lookahead) never exceeds the best
    completion found by brute force, and propagation at a tight node keeps one."""
    rng = np.random.default_rng(seed)
    n_features = 1 + seed % 2
    X, y = grid_instance(seed, 9, n_features, 6)
    X = X + rng.normal(scale=0.2, size=X.shape)
    tree = gto.Tree.from_structure(SPECS[seed % 3], n_features)
    w = rng.integers(1, 3, size=len(y)).astype(float)
    Xs = Scaling(X).transform(X)
    search = rootsplit.RootSearch(tree, Xs, y, w, EPSILON, mirror_pairs(tree))
    D = tree.n_decisions
    node = search.root(np.zeros((D, n_features)), np.zeros(D))
    fixed = rng.choice(len(y), size=6, replace=False)
    node.side[fixed] = [s if search.can[j, s] else 1 - s for j, s in zip(fixed, rng.integers(0, 2, 6))]
    node.keep[fixed[0]] = True
    node.drop[fixed[1]] = True
    best = completions(search, node)
    out = search.evaluate(node)
    if not best:
        assert out is None or out[0] > 0
        return
    optimum = min(best.values())
    assert out is not None
    bound, _, _, sets = out
    free = np.flatnonzero(node.side == rootsplit.FREE)
    extra = search.lookahead(node, free, sets)
    assert bound + extra <= optimum + 1e-9
    search.incumbent = optimum + 1  # the tight case: only completions of the optimum survive
    side = search.propagate(node, bound, sets)
    assert side is not None
    kept = [c for c, v in best.items() if v == optimum
            and all(side[j] in (rootsplit.FREE, s) for j, s in zip(free, c))]
    assert kept


@pytest.mark.parametrize("make, seed, n_points", [(circle, 2, 11), (circle, 3, 12)])
def test_highs_root_side_model_matches_line_splits(make, seed, n_points):
    """The direct highspy model of experiments/highs_root_sides.py solves the same problem."""
    from experiments.highs_root_sides import solve

    P, y = make(seed, n_points)
    out = solve(P, y, gto.Tree.from_structure(DEPTH2, 2), time_limit=60)
    assert out["status"] == "Optimal" and out["start_errors"] == sum(y != 0)
    assert out["incumbent"] == out["bound"] == brute_force_depth2(P, y)
