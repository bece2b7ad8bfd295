"""Crossover (Theorem 4.1) and the block simplex for the weighted robust LP."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit
from scipy.optimize import linprog
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto.engine._hinge_lp import solve_hinge_lp
from gto.engine._problem import TreeProblem
from gto.engine._walker import walker_from_theta

from truths import random_tree


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(1, 4), D=st.integers(1, 4),
       n_classes=st.integers(2, 3))
def test_crossover_never_adds_errors(seed, n, D, n_classes):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, D, list(range(n_classes)), n)
    X = rng.normal(size=(50, n))
    y = rng.choice(np.unique(tree.leaf_classes), 50)
    y[: len(np.unique(tree.leaf_classes))] = np.unique(tree.leaf_classes)
    P = TreeProblem(tree, X, y)
    Theta = P.theta_of(tree)
    before = tree.n_errors(X, y)
    W = walker_from_theta(P, Theta, P.objective("product"), rng)
    assert W.count <= before
    assert P.tree_of(W.theta()).n_errors(X, y) <= before
    for b in W.blocks:
        assert np.allclose(1 - b.rows[b.tight] @ b.theta, 0, atol=1e-9)


@pytest.mark.parametrize("name", ["heart", "cancer", "liver"])
def test_crossover_of_cart_trees(name):
    X, y = problems.load(name)
    for depth in (2, 3):
        cart = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
        tree = gto.Tree.from_sklearn(cart)
        P = TreeProblem(tree, X, y)
        W = walker_from_theta(P, P.theta_of(tree), P.objective("product"), 0)
        assert P.tree_of(W.theta()).n_errors(X, y) <= tree.n_errors(X, y)


@pytest.mark.parametrize("seed", range(6))
def test_hinge_lp_matches_highs(seed):
    rng = np.random.default_rng(seed)
    name = ["heart", "cancer", "liver"][seed % 3]
    X, y = problems.load(name)
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    P = TreeProblem(tree, X, y)
    W = walker_from_theta(P, rng.normal(size=(3, P.data.m)), P.objective("product"), rng)
    for b in W.blocks:
        T, m = b.rows.shape
        cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
        value, _ = solve_hinge_lp(b, cost)
        ref = linprog(
            np.concatenate([np.zeros(m), cost]),
            A_ub=np.hstack([-b.rows, -np.eye(T)]), b_ub=-np.ones(T),
            bounds=[(None, None)] * m + [(0, None)] * T, method="highs",
        )
        assert value == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)
        assert cost @ np.maximum(0, 1 - b.rows @ b.theta) == pytest.approx(value, rel=1e-9)


def _purify_case(seed, degenerate):
    """Rows s [x, -1] of 40 points in 6 features then 6 coordinate rows; with
    ``degenerate`` integer features (ties, duplicates) and a constant one."""
    rng = np.random.default_rng(seed)
    n = 6
    X = rng.integers(0, 4, size=(40, n)).astype(float) if degenerate else rng.normal(size=(40, n))
    if degenerate:
        X[:, 2] = 1.0  # parallel to the offset column: a lineality direction
    side = np.where(rng.random(40) < 0.5, -1.0, 1.0)
    rows = np.vstack([side[:, None] * np.column_stack([X, -np.ones(40)]), np.eye(n, n + 1)])
    rhs = np.concatenate([np.ones(40), np.zeros(n)])
    theta = rng.normal(size=n + 1)
    theta[1] = 0.0  # a zero weight stays tight
    return rows, rhs, theta, rng.random(40)


def _is_vertex_from(block, rows, rhs, theta):
    """Tight rows hold with equality, satisfied slacks stay satisfied, zeros stay 0."""
    real = block.tight[block.tight < len(rows)]
    assert np.allclose(rows[real] @ block.theta, rhs[real], atol=1e-8)
    r0, r1 = rhs - rows @ theta, rhs - rows @ block.theta
    assert np.all(r1[:40][r0[:40] <= 0] <= 1e-8)
    assert block.theta[1] == 0.0


@pytest.mark.parametrize("seed", range(4))
def test_incremental_purification_reaches_the_exact_ones_vertex(seed, monkeypatch):
    """The purification's null space updated row by row (Householder) reaches the same
    vertex as with an SVD of the tight rows at every step (DEP_RTOL 0) on points in
    general position; on integer features with ties and a constant feature (where
    rounding may break a tie in the ratio test either way) a vertex as the exact
    path's is: tight rows hold, no satisfied slack is violated, zero weights stay 0."""
    from gto.engine import _crossover as crossover

    for degenerate in (False, True):
        rows, rhs, theta, cost = _purify_case(seed, degenerate)
        fast = crossover.purify(rows, theta, cost, seed, rhs, 40, 6)
        with monkeypatch.context() as patch:
            patch.setattr(crossover, "DEP_RTOL", 0.0)
            exact = crossover.purify(rows, theta, cost, seed, rhs, 40, 6)
        for block in (fast, exact):
            _is_vertex_from(block, rows, rhs, theta)
        if not degenerate:
            assert sorted(fast.tight.tolist()) == sorted(exact.tight.tolist())
            assert np.allclose(fast.theta, exact.theta, atol=1e-8)



@njit(cache=False)
def _drop_direction_passes(Q, nq, a, theta):
    """The incremental null basis' Householder step as separate passes, in place
    (compiled, so that ``u @ u`` and ``h @ h`` are the kernel's): reflect every
    column, move columns 1.. to 0.., then return the next step's ``-Q^T theta`` over
    the new basis."""
    m = Q.shape[0]
    u = np.zeros(nq)
    for j in range(m):
        for c in range(nq):
            u[c] += Q[j, c] * a[j]
    norm_u = np.sqrt(u @ u)
    h = u.copy()
    h[0] += norm_u if u[0] >= 0 else -norm_u
    hh = h @ h
    for j in range(m):
        acc = 0.0
        for c in range(nq):
            acc += Q[j, c] * h[c]
        f = 2.0 * acc / hh
        for c in range(nq):
            Q[j, c] -= f * h[c]
    for j in range(m):
        for c in range(1, nq):
            Q[j, c - 1] = Q[j, c]
    coef = np.zeros(nq - 1)
    for j in range(m):
        for c in range(nq - 1):
            coef[c] -= Q[j, c] * theta[j]
    return coef


@pytest.mark.parametrize("seed", range(6))
def test_drop_direction_gives_the_bits_of_its_steps_one_at_a_time(seed):
    """drop_direction reflects, moves the columns and makes the next step's
    coefficients in one pass over Q: the bits of doing them one pass each, as the
    purification did before; Q and coef are left alone for a dependent row (one
    orthogonal to the null basis)."""
    from gto.engine._lp_kernels import drop_direction

    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 40))
    nq = int(rng.integers(2, m + 1))
    Q = np.ascontiguousarray(np.linalg.qr(rng.normal(size=(m, m)))[0])
    a, theta = rng.normal(size=m), rng.normal(size=m)
    want_Q = Q.copy()
    want_coef = _drop_direction_passes(want_Q, nq, a, theta)
    got_Q, coef = Q.copy(), np.full(m, np.nan)
    assert drop_direction(got_Q, nq, a, 1e-10, theta, coef) == nq - 1
    np.testing.assert_array_equal(got_Q[:, :nq - 1], want_Q[:, :nq - 1])
    np.testing.assert_array_equal(coef[:nq - 1], want_coef)
    outside = Q[:, nq:] @ np.ones(m - nq)  # no part in the null basis (0 if nq = m)
    kept_Q, kept_coef = Q.copy(), np.full(m, 7.0)
    assert drop_direction(kept_Q, nq, outside, 1e-10, theta, kept_coef) == -1
    np.testing.assert_array_equal(kept_Q, Q)
    np.testing.assert_array_equal(kept_coef, np.full(m, 7.0))
