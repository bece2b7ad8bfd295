"""Revised simplex engine: LU updates, adjacency against brute-force vertex enumeration, walker."""
import numpy as np
import pytest
import scipy.sparse as sp

from problems import polytopes
from tabu import BasisFactor, RevisedSimplex, SingularBasisError, StandardFormWalker, phase_one


@pytest.mark.parametrize("sparse", [False, True])
def test_basis_factor_updates_match_explicit_inverse(sparse):
    rng = np.random.default_rng(0)
    m, n = 12, 30
    A = rng.normal(size=(m, n))
    basis = np.arange(m)
    f = BasisFactor(sp.csc_matrix(A) if sparse else A, basis, refactor_every=7)
    for _ in range(20):
        r, q = int(rng.integers(m)), int(rng.choice(np.setdiff1d(np.arange(n), f.basis)))
        d = f.solve(A[:, q])
        if abs(d[r]) < 1e-3:
            continue
        refactored = f.update(r, q, d)
        assert refactored == (f.n_updates == 0)
        B = A[:, f.basis]
        v = rng.normal(size=m)
        np.testing.assert_allclose(f.solve(v), np.linalg.solve(B, v), atol=1e-9)
        np.testing.assert_allclose(f.solve_transpose(v), np.linalg.solve(B.T, v), atol=1e-9)
        V = rng.normal(size=(m, 3))
        np.testing.assert_allclose(f.solve(V), np.linalg.solve(B, V), atol=1e-9)
    assert f.n_updates < 7


@pytest.mark.parametrize("sparse", [False, True])
def test_singular_basis_rejected(sparse):
    A = np.array([[1.0, 2.0, 1.0], [2.0, 4.0, 0.0]])
    with pytest.raises(SingularBasisError):
        BasisFactor(sp.csc_matrix(A) if sparse else A, [0, 1])


def test_residual_check_triggers_refactor():
    rng = np.random.default_rng(1)
    A = rng.normal(size=(5, 10))
    s = RevisedSimplex(A, A[:, :5] @ np.ones(5), np.arange(5), check_every=1)
    s.x_B += 1.0  # corrupt the basic solution: the next pivot's residual check must repair it
    w = s.direction(7)
    r = int(np.argmax(np.abs(w)))
    s.pivot(7, r, w, 0.0)
    assert s.factor.n_updates == 0 and s.residual() < 1e-9


def _cube_walker(n, record):
    A, b = polytopes.inequality_system(np.zeros((0, n)), np.zeros(0), bounds=(0, 1))

    def fun(X):
        record.append(np.array(X))
        return X.sum(axis=-1)

    return StandardFormWalker.from_inequalities(fun, A, b, bounds=(None, None), vectorized=True)


def _neighbour_check(A, b, steps, seed):
    """Walk at random; at each nondegenerate vertex the walker's neighbours must be the brute-force ones."""
    V = polytopes.enumerate_vertices(A, b, bounds=(None, None))
    G, h = polytopes.inequality_system(A, b, bounds=(None, None))
    act = polytopes.active_sets(V, A, b, bounds=(None, None))
    n = A.shape[1]
    record = []

    def fun(X):
        record.append(np.array(X))
        return np.zeros(len(X))

    w = StandardFormWalker.from_inequalities(fun, A, b, bounds=(None, None), vectorized=True)
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(steps):
        x = w.x
        i = int(np.argmin(np.abs(V - x).sum(axis=1)))
        np.testing.assert_allclose(V[i], x, atol=1e-8)  # the walker stands on a vertex
        record.clear()
        E, L, _ = w.candidates()
        pts = record[-1] if len(E) else np.zeros((0, n))
        expected = {j for j in range(len(V)) if j != i and polytopes.adjacent(act[i], act[j], G)}
        got = set()
        for p in pts:
            k = int(np.argmin(np.abs(V - p).sum(axis=1)))
            np.testing.assert_allclose(V[k], p, atol=1e-8)  # every move ends on a vertex
            got.add(k)
        if len(act[i]) == n:  # nondegenerate: exactly the adjacent vertices, one edge each
            assert got == expected and len(E) == len(expected)
            checked += 1
        else:  # degenerate: adjacent vertices or the same point (degenerate pivots)
            assert got <= expected | {i}
        j = int(rng.integers(len(E)))
        w.pivot(int(E[j]), int(L[j]))
    return checked


@pytest.mark.parametrize("seed", range(6))
def test_walker_neighbours_are_adjacent_vertices(seed):
    rng = np.random.default_rng(seed)
    A, b = polytopes.random_polytope(3, 7, rng)
    assert _neighbour_check(A, b, steps=25, seed=seed) > 5


def test_walker_on_degenerate_polytope():
    # square pyramid: the apex has 4 tight facets in 3-D
    A = np.array([[1, 0, 1], [-1, 0, 1], [0, 1, 1], [0, -1, 1], [0, 0, -1]], float)
    b = np.array([1, 1, 1, 1, 0], float)
    _neighbour_check(A, b, steps=30, seed=0)


def test_free_columns_are_basic_and_stay_basic():
    rng = np.random.default_rng(3)
    A, b = polytopes.random_polytope(4, 8, rng)
    w = StandardFormWalker.from_inequalities(lambda x: float(x @ x), A, b, bounds=(None, None))
    for _ in range(30):
        assert set(range(4)) <= set(w.basis().tolist())
        E, L, _ = w.candidates()
        assert not set(E.tolist()) & set(range(4)) and not set(L.tolist()) & set(range(4))
        k = int(rng.integers(len(E)))
        w.pivot(int(E[k]), int(L[k]))


def test_evaluate_agrees_with_candidates_and_pivot_value():
    rng = np.random.default_rng(4)
    A, b = polytopes.random_polytope(3, 6, rng)
    fun = lambda x: float(np.sin(x).sum())  # noqa: E731
    w = StandardFormWalker.from_inequalities(fun, A, b, bounds=(None, None))
    E, L, V = w.candidates()
    for e, l, v in zip(E, L, V):
        w2 = StandardFormWalker.from_inequalities(fun, A, b, bounds=(None, None))
        assert w2.evaluate(int(e)) == (l, pytest.approx(v))
        w2.pivot(int(e), int(l))
        assert w2.value == pytest.approx(v) and fun(w2.x) == pytest.approx(v)
    basic = int(w.basis()[0])
    assert w.evaluate(basic)[0] == -1
    with pytest.raises(ValueError):
        w.pivot(int(E[0]), int(E[1]))


def test_unbounded_rays_are_not_moves():
    # {x >= 0, y >= 0, x - y <= 1}: vertices (0, 0) and (1, 0), one bounded edge each
    w = StandardFormWalker.from_inequalities(lambda x: 0.0, [[1.0, -1.0]], [1.0])
    seen = []
    for _ in range(2):
        seen.append(tuple(np.round(w.x, 12)))
        E, L, V = w.candidates()
        assert len(E) == 1
        w.pivot(int(E[0]), int(L[0]))
    assert sorted(seen) == [(0.0, 0.0), (1.0, 0.0)]


def test_from_standard_form_with_x0_and_basis():
    # cube [0,1]^3 in standard form: x + s = 1
    A = np.hstack([np.eye(3), np.eye(3)])
    b = np.ones(3)
    fun = lambda x: float(x[:3].sum())  # noqa: E731
    x0 = np.array([1.0, 0, 1, 0, 1, 0])
    w = StandardFormWalker.from_standard_form(fun, A, b, x0=x0)
    np.testing.assert_allclose(w.x, x0)
    assert w.value == 2.0 and sorted(w.basis().tolist()) == [0, 2, 4]
    w2 = StandardFormWalker.from_standard_form(fun, sp.csc_matrix(A), b, basis=[0, 4, 2])
    np.testing.assert_allclose(w2.x, x0)
    w3 = StandardFormWalker.from_standard_form(fun, A, b)  # Phase 1's vertex
    assert set(w3.x.tolist()) <= {0.0, 1.0} and np.allclose(A @ w3.x, b)
    with pytest.raises(ValueError):
        StandardFormWalker.from_standard_form(fun, A, b, x0=np.full(6, 0.5))  # not a vertex
    with pytest.raises(ValueError):
        StandardFormWalker.from_standard_form(fun, A, b, x0=np.full(6, 2.0))  # not feasible
    with pytest.raises(ValueError):
        StandardFormWalker.from_standard_form(fun, A, [1.0, np.nan, 1.0])


def test_x0_with_redundant_rows():
    A = np.array([[1.0, 1, 1, 0], [2.0, 2, 2, 0], [1.0, 0, 0, 1]])
    b = np.array([1.0, 2.0, 1.0])
    w = StandardFormWalker.from_standard_form(lambda x: float(x[1]), A, b, x0=[0, 1, 0, 1])
    assert w.value == 1.0 and len(w.basis()) == 2


def test_phase_one_drops_redundant_rows_and_detects_infeasibility():
    A = np.array([[1.0, 1, 0], [2.0, 2, 0], [0.0, 1, 1]])
    status, basis, kept, _ = phase_one(A, np.array([1.0, 2, 1]), np.zeros(3, bool), maxiter=100)
    assert status == 0 and len(kept) == 2 and len(basis) == 2
    status, *_ = phase_one(A, np.array([1.0, 3, 1]), np.zeros(3, bool), maxiter=100)
    assert status == 2
