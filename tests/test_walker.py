"""The structured walker against independent truths: gto.error on the neighbour tree."""
import copy
import pickle

import numpy as np
import pytest

import gto
import problems
from gto.engine._problem import TreeProblem
from gto.engine._walker import walker_from_theta

from truths import random_tree


def make_walker(seed, objective="product", p=1, n=3, N=60, classes=(0, 1), D=3, sparse=False,
                alpha=0.0, max_features=None):
    """A walker at a random vertex; ``sparse``: with coordinate rows, half the
    start weights zero."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, D, list(classes), n)
    X = rng.normal(size=(N, n))
    y = rng.choice(np.unique(tree.leaf_classes), N)
    y[: len(np.unique(tree.leaf_classes))] = np.unique(tree.leaf_classes)
    P = TreeProblem(tree, X, y, p=p, coordinate_rows=sparse, alpha=alpha,
                    max_features=max_features)
    Theta = rng.normal(size=(P.layout.D, P.data.m))
    if sparse:
        Theta[:, :-1] *= rng.random((P.layout.D, P.data.n)) < 0.5
    W = walker_from_theta(P, Theta, P.objective(objective, P.data.X1 @ Theta.T), rng)
    return P, W, X, y


def test_vertex_structure():
    P, W, X, y = make_walker(0)
    for b in W.blocks:
        assert len(b.tight) == P.data.m
        assert b.residual() < 1e-10
        r = 1 - b.rows @ b.theta
        assert np.allclose(r[b.tight], 0, atol=1e-10)
        # y basic where violated, u basic where strictly satisfied
        free = ~b.in_block
        assert np.all(b.ybasic[free & (r > 1e-9)]) and not np.any(b.ybasic[free & (r < -1e-9)])


@pytest.mark.parametrize("objective", ["product", "minimum", "count"])
@pytest.mark.parametrize("p", [1, 2])
def test_walker_value_is_the_paper_error(objective, p):
    P, W, X, y = make_walker(1, objective, p, classes=(0, 1, 2), D=4)
    tree = P.tree_of(W.theta())
    assert W.value == pytest.approx(gto.error(tree, X, y, objective, p), rel=1e-9, abs=1e-7)
    assert W.count == tree.n_errors(X, y)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("objective", ["product", "minimum", "count"])
def test_every_neighbour_value_matches_the_moved_tree(seed, objective):
    P, W, X, y = make_walker(seed, objective, p=1 + seed % 2)
    entering, leaving, values = W.candidates()
    assert len(entering) > 0
    for e, l, v in zip(entering, leaving, values):
        assert W.evaluate(e) == (l, pytest.approx(v, rel=1e-9, abs=1e-9))
        nb = copy.deepcopy(W)
        nb.pivot(e, l)
        tree = P.tree_of(nb.theta())
        assert nb.value == pytest.approx(v, rel=1e-8, abs=1e-8)
        assert v == pytest.approx(gto.error(tree, X, y, objective, P.p), rel=1e-7, abs=1e-7)
        # the neighbour is a vertex: every block has m tight, independent triples
        for b in nb.blocks:
            assert abs(np.linalg.det(b.rows[b.tight])) > 1e-12
            assert np.allclose(1 - b.rows[b.tight] @ b.theta, 0, atol=1e-9)
        # only one decision moved
        moved = [not np.allclose(a, b) for a, b in zip(W.theta(), nb.theta())]
        assert sum(moved) <= 1


def test_edges_are_the_first_crossing():
    """Along an edge no slack of the moving decision changes sign before the step."""
    P, W, X, y = make_walker(5)
    for b in W.blocks:
        steps, leave = b.ratio_test_all()
        for j in np.flatnonzero(leave >= 0):
            q, sigma = (j, 1.0) if j < P.data.m else (j - P.data.m, -1.0)
            direction = sigma * b.Binv[:, q]
            r0 = 1 - b.rows @ b.theta
            for frac in (0.25, 0.5, 0.99):
                r = 1 - b.rows @ (b.theta + frac * steps[j] * direction)
                free = ~b.in_block
                assert np.all(np.sign(r[free]) == np.sign(r0[free]))


def test_non_edges_are_refused():
    P, W, X, y = make_walker(2)
    e, l, v = W.candidates()
    basic = W.basis()
    assert W.evaluate(int(basic[-1])) == (-1, pytest.approx(np.nan, nan_ok=True))
    with pytest.raises(ValueError):
        W.pivot(int(e[0]), int(l[0]) + 1)


def test_pseudo_rows_pin_lineality():
    """Points in a plane of R^3: the walker still stands on vertices, and values stay right."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    X[:, 2] = 0.5 * X[:, 0] - X[:, 1]  # rank-deficient for every decision
    X[:20, 2] = X[:20, 0]  # ... but the whole set spans R^3
    y = (X[:, 0] > 0).astype(int)
    y[:20] = 2  # class 2 only at the right child
    tree = gto.Tree.from_structure((0, (1, 2)), 3)
    P = TreeProblem(tree, X, y)
    Theta = rng.normal(size=(2, P.data.m))
    W = walker_from_theta(P, Theta, P.objective("product"), rng)
    e, l, v = W.candidates()
    for ent, lv, val in zip(e, l, v):
        nb = copy.deepcopy(W)
        nb.pivot(ent, lv)
        assert val == pytest.approx(gto.error(P.tree_of(nb.theta()), X, y), rel=1e-7)


def test_structured_walker_on_real_data_is_consistent_after_many_pivots():
    X, y = problems.load("cancer")  # integer features: many degenerate vertices
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    P = TreeProblem(tree, X, y)
    rng = np.random.default_rng(0)
    W = walker_from_theta(P, rng.normal(size=(3, P.data.m)), P.objective("product"), rng)
    for _ in range(300):
        e, l, v = W.candidates()
        j = rng.integers(len(e))
        W.pivot(e[j], l[j])
        assert W.value == pytest.approx(v[j], rel=1e-8, abs=1e-8)
        assert W.count == P.n_errors(P.data.X1 @ W.theta().T)  # kept incrementally
    for b in W.blocks:  # the tableaux kept by rank-one updates match their products
        assert np.allclose(b.G, (b.rows @ b.Binv).T, rtol=1e-9, atol=1e-9)
        assert np.allclose(b.H, (P.data.X1 @ b.Binv).T, rtol=1e-9, atol=1e-9)
    tree = P.tree_of(W.theta())
    assert W.value == pytest.approx(gto.error(tree, X, y), rel=1e-7)
    assert W.count == tree.n_errors(X, y)
    assert max(b.residual() for b in W.blocks) < 1e-8


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copied_walker_keeps_walking(how):
    """A copy shares nothing with the original and its tables stay consistent."""
    P, W, X, y = make_walker(3, "product", 1)
    for _ in range(5):
        e, l, v = W.candidates()
        W.pivot(e[0], l[0])
    C = copy.deepcopy(W) if how == "deepcopy" else pickle.loads(pickle.dumps(W))
    rng = np.random.default_rng(0)
    for _ in range(40):
        e, l, v = C.candidates()
        j = rng.integers(len(e))
        C.pivot(e[j], l[j])
        assert C.value == pytest.approx(v[j], rel=1e-9, abs=1e-9)
    assert C.value == pytest.approx(gto.error(P.tree_of(C.theta()), X, y), rel=1e-8)
    assert W.value == pytest.approx(gto.error(P.tree_of(W.theta()), X, y), rel=1e-8)


def standard_form_of(P):
    """The tree LP of ``P`` (scaled, merged data) in standard form, columns [theta | y | u].

    Rows are the triples ``s [x, -1] theta + y - u = 1`` and, with sparse
    vertices, the coordinate rows ``w_j + w-_j - w+_j = 0`` (so ``w = w+ - w-``,
    the extra y, u being w-, w+), written out from the data here.
    """
    rows, cols, vals, b = [], [], [], []
    m, t = P.data.m, P.blocks.triples
    R = P.blocks.T + P.layout.D * P.blocks.n_coord
    for d in range(P.layout.D):
        for k in range(t.start[d], t.start[d + 1]):
            rows += [len(b)] * m
            cols += list(d * m + np.arange(m))
            vals += list(t.side[k] * np.append(P.data.X1[t.point[k], :-1], -1.0))
            b.append(1.0)
        for j in range(P.blocks.n_coord):
            rows.append(len(b))
            cols.append(d * m + j)
            vals.append(1.0)
            b.append(0.0)
    A = np.zeros((R, P.blocks.n_theta + 2 * R))
    A[rows, cols] = vals
    A[np.arange(R), P.blocks.n_theta + np.arange(R)] = 1.0
    A[np.arange(R), P.blocks.n_theta + R + np.arange(R)] = -1.0
    free = np.zeros(A.shape[1], dtype=bool)
    free[: P.blocks.n_theta] = True
    return A, np.array(b), free


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("objective", ["product", "minimum"])
@pytest.mark.parametrize("sparse, alpha", [(False, 0.0), (True, 0.0), (True, 0.3)])
def test_structured_and_standard_form_walkers_agree(seed, objective, sparse, alpha):
    """Same neighbours (entering, leaving) with the same objective values, on small
    instances; with sparse vertices on the w+ - w- LP, the penalty
    ``alpha * sum (w+ + w-)`` read off the standard-form point."""
    import tabu

    P, W, X, y = make_walker(seed, objective, n=3 if sparse else 2, N=12, sparse=sparse,
                             alpha=alpha)
    A, b, free = standard_form_of(P)
    obj = P.objective(objective)
    R = len(b)
    coord = np.flatnonzero(b == 0)

    def fun(x):
        Theta = x[: P.blocks.n_theta].reshape(P.layout.D, P.data.m)
        split = x[P.blocks.n_theta + coord].sum() + x[P.blocks.n_theta + R + coord].sum()  # sum w- + w+
        return obj(P.leaf_errors(P.data.X1 @ Theta.T)) + alpha * split

    if sparse:  # some weights start at zero, their coordinate rows tight
        assert any(blk.n_nonzero() < P.data.n for blk in W.blocks)
    r = np.concatenate([rhs - rows @ blk.theta for rows, rhs, blk in zip(P.blocks.rows, P.blocks.rhs, W.blocks)])
    x0 = np.concatenate([W.theta().ravel(), np.maximum(0, r), np.maximum(0, -r)])
    assert np.allclose(A @ x0, b)
    S = tabu.StandardFormWalker.from_standard_form(fun, A, b, free, basis=W.basis())
    assert np.allclose(S.x, x0)
    assert S.value == pytest.approx(W.value, rel=1e-9)
    for it in range(4):  # compare, then take the same tie-free pivot in both
        e1, l1, v1 = W.candidates()
        e2, l2, v2 = S.candidates()
        assert sorted(e1.tolist()) == sorted(e2.tolist())
        if sparse and it == 0:  # edges that move a weight off zero are among them
            assert np.isin((e1 - P.blocks.n_theta) % R, coord).any()
        theirs = {int(e): (int(l), v) for e, l, v in zip(e2, l2, v2)}
        tie_free = []
        for e, l, v in zip(e1, l1, v1):
            assert v == pytest.approx(theirs[int(e)][1], rel=1e-7, abs=1e-9)
            if not has_ratio_tie(P, W, int(e)):
                assert int(l) == theirs[int(e)][0]
                tie_free.append((v, int(e), int(l)))
        _, e, l = min(tie_free)
        W.pivot(e, l)
        S.pivot(e, l)
        assert S.value == pytest.approx(W.value, rel=1e-8)


def has_ratio_tie(P, W, entering, rtol=1e-9):
    """True when two slacks of the moving decision reach 0 together (degenerate target)."""
    k = entering - P.blocks.n_theta
    sigma, t = (1.0 if k >= P.blocks.R else -1.0), k % P.blocks.R
    d = int(P.blocks.row_decision[t])
    b = W.blocks[d]
    g = sigma * (b.rows @ b.Binv[:, b.position[t - P.blocks.row_start[d]]])
    h = np.where(b.ybasic, g, -g)
    blocking = (h > 1e-9) & ~b.in_block
    ratios = np.abs(b.r[blocking]) / np.abs(g[blocking])
    return np.sum(ratios <= ratios.min() * (1 + rtol) + 1e-12) > 1
