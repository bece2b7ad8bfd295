"""gto.mip.solve(method="rootsplit"): the branch and bound over root sides.

Independent truths: the exhaustive search over point-to-leaf assignments
with scipy's LPs of test_mip_branch (same hypothesis class, ties, equal
points, weights), the exhaustive line-split search of test_mip (2-D, general
position), scipy's largest-margin LP for the dual supports, and the literal
tree walk of conftest.
"""
import numpy as np
import pytest
from test_mip import DEPTH2, brute_force_depth2, circle, instance
from test_mip_branch import brute_force_assignments, check_result, grid_instance, largest_margin

import gto
import gto.mip
from gto.mip import rootsplit, separation
from gto.mip.oblique import EPSILON
from gto.mip.scaling import Scaling

SPECS = [DEPTH2, ((0, 1), 1), ((0, 1), (1, 0)), ((1, 1), (0, 1)), (0, (1, 0))]


@pytest.mark.parametrize("seed", range(7))
def test_optimum_equals_assignment_search(seed):
    spec = SPECS[seed % len(SPECS)]
    n_features = 1 + seed % 2
    X, y = grid_instance(seed, 8, n_features, 5)
    w = np.random.default_rng(seed).integers(1, 3, size=len(y)).astype(float)
    tree = gto.Tree.from_structure(spec, n_features)
    res = gto.mip.solve(tree, X, y, time_limit=None, sample_weight=w, method="rootsplit")
    check_result(res, tree, X, y, w)
    assert res.solver == "rootsplit"
    assert res.objective == brute_force_assignments(tree, X, y, w)


@pytest.mark.parametrize("propagate", [False, True])
@pytest.mark.parametrize("make, seed, n_points", [(circle, 2, 11), (instance, 101, 9)])
def test_optimum_equals_exhaustive_line_splits(make, seed, n_points, propagate, monkeypatch):
    monkeypatch.setattr(rootsplit, "PROPAGATE", propagate)
    P, y = make(seed, n_points)
    tree = gto.Tree.from_structure(DEPTH2, 2)
    res = gto.mip.solve(tree, P, y, time_limit=None, method="rootsplit")
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
