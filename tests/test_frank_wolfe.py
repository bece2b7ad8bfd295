import numpy as np
import pytest

import gto
import problems
from gto.engine._frank_wolfe import frank_wolfe, product_polynomial
from gto.engine._problem import TreeProblem
from gto.engine._walker import walker_from_theta

from truths import count_errors, product_error, random_tree


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("name", ["heart", "diabetes"])
def test_frank_wolfe_is_monotone(name, p):
    X, y = problems.load(name)
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    P = TreeProblem(tree, X, y, p=p)
    rng = np.random.default_rng(0)
    W = walker_from_theta(P, rng.normal(size=(3, P.data.m)), P.objective("product"), rng)
    Theta, history, status, message, fewest = frank_wolfe(P, W.blocks, max_iter=60)
    values = history[:, 1]
    assert values[0] == pytest.approx(W.value, rel=1e-9)
    assert np.all(np.diff(values) <= 1e-9 * values[0])
    assert values[-1] < values[0]
    final = P.tree_of(Theta)
    assert values[-1] == pytest.approx(product_error(final, X, y, p), rel=1e-8)
    count, value, Theta_few, _ = fewest  # the iterate with the fewest errors
    assert count == history[:, 2].min()
    assert count_errors(P.tree_of(Theta_few), X, y) == count


def test_line_search_polynomial_is_exact():
    """f(y + lambda d) from the polynomial equals the product error evaluated directly."""
    rng = np.random.default_rng(3)
    tree = random_tree(rng, 4, [0, 1, 2], 3)
    X = rng.normal(size=(40, 3))
    y = rng.choice(np.unique(tree.leaf_classes), 40)
    y[:3] = np.unique(tree.leaf_classes)[:3] if len(np.unique(tree.leaf_classes)) == 3 else y[:3]
    for p in (1, 2):
        P = TreeProblem(tree, X, y, p=p)
        YL, YR = rng.random((P.data.N, P.layout.D)), rng.random((P.data.N, P.layout.D))
        dL, dR = rng.normal(size=(P.data.N, P.layout.D)), rng.normal(size=(P.data.N, P.layout.D))
        coef = product_polynomial(P, YL, YR, dL, dR)
        for lam in (0.0, 0.3, 1.0):
            L, R = YL + lam * dL, YR + lam * dR
            LE = L**p @ P.layout.SL.T + R**p @ P.layout.SR.T
            direct = P.data.weight @ np.where(P.layout.mask, LE, 1).prod(axis=1)
            assert np.polynomial.Polynomial(coef)(lam) == pytest.approx(direct, rel=1e-10)


def test_frank_wolfe_passes_a_massively_degenerate_subproblem():
    """Regression: on this draw an LP subproblem's optimum is a decision with w = 0
    (every point on one side, hundreds of slacks at 0).  Removing the
    perturbation used to flip the basic variable of rows a rounding error
    from 0, and the simplex then stalled for 100 000 pivots."""
    d = problems.synthetic(20, 500, 2000, random_state=2)
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), 20)
    res = gto.optimize(tree, d.X_train, d.y_train, method="frank-wolfe", init="greedy",
                       random_state=2)
    assert res.success
    # the planted tree has 0 errors; predicting the majority class is the floor to beat
    majority = min(np.sum(d.y_train == c) for c in np.unique(d.y_train))
    assert count_errors(res.tree, d.X_train, d.y_train) == res.n_errors < majority
