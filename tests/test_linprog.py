"""tabu.linprog against scipy/HiGHS on random LPs, warm starts, statuses and input checks."""
import zlib

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import tabu

RTOL = 1e-7


def _general(rng):
    """Mixed inequality/equality rows, general bounds, some free variables."""
    n, m = int(rng.integers(2, 12)), int(rng.integers(1, 15))
    x0 = rng.uniform(-1, 1, n)
    A = rng.normal(size=(m, n))
    b = A @ x0 + rng.uniform(0, 1, m)
    k = int(rng.integers(0, 3))
    Aeq = rng.normal(size=(k, n)) if k else None
    beq = Aeq @ x0 if k else None
    choices = [(None, None), (-2.0, None), (None, 2.0), (-2.0, 2.0), (-1.5, 1.5)]
    bounds = [choices[i] for i in rng.integers(len(choices), size=n)]
    return rng.normal(size=n), A, b, Aeq, beq, bounds


def _degenerate(rng):
    """Integer data with many more tight rows than dimensions at one vertex, redundant equalities."""
    n = int(rng.integers(2, 8))
    xs = rng.integers(0, 3, size=n).astype(float)
    tight = rng.integers(-3, 4, size=(int(rng.integers(n + 1, 3 * n + 2)), n)).astype(float)
    loose = rng.integers(-3, 4, size=(int(rng.integers(0, n + 1)), n)).astype(float)
    A = np.vstack([tight, loose, np.ones((1, n))])
    b = np.concatenate([tight @ xs, loose @ xs + rng.integers(1, 4, size=len(loose)), [xs.sum() + 5]])
    Aeq = beq = None
    if rng.random() < 0.5:
        E = rng.integers(-2, 3, size=(1, n)).astype(float)
        Aeq = np.vstack([E, 2 * E])  # linearly dependent rows
        beq = Aeq @ xs
    return rng.integers(-5, 6, size=n).astype(float), A, b, Aeq, beq, (0, None)


def _free(rng):
    """All variables free, kept bounded by a box written as rows."""
    n = int(rng.integers(2, 10))
    N = rng.normal(size=(int(rng.integers(1, 10)), n))
    A = np.vstack([N, np.eye(n), -np.eye(n)])
    b = np.concatenate([np.abs(rng.normal(size=len(N))), np.full(2 * n, 3.0)])
    return rng.normal(size=n), A, b, None, None, (None, None)


def _check(c, A, b, Aeq, beq, bounds, sparse=False):
    ref = so.linprog(c, A, b, Aeq, beq, bounds=bounds, method="highs")
    if ref.status == 2:  # HiGHS' presolve reports some unbounded LPs as infeasible: ask again without it
        ref = so.linprog(c, A, b, Aeq, beq, bounds=bounds, method="highs", options={"presolve": False})
    if sparse:
        A = sp.csr_matrix(A)
        Aeq = None if Aeq is None else sp.csr_matrix(Aeq)
    res = tabu.linprog(c, A, b, Aeq, beq, bounds=bounds)
    assert res.status == ref.status, (res.message, ref.message)
    if ref.status == 0:
        assert abs(res.fun - ref.fun) <= RTOL * max(1.0, abs(ref.fun)), (res.fun, ref.fun)
        assert np.all(A @ res.x <= b + 1e-7 * (1 + np.abs(b)))
        if Aeq is not None:
            np.testing.assert_allclose(Aeq @ res.x, beq, atol=1e-7)
        assert res.fun == pytest.approx(float(np.dot(c, res.x)), abs=1e-9)
    return ref.status


@pytest.mark.parametrize("kind,count", [(_general, 150), (_degenerate, 80), (_free, 40)])
def test_matches_highs_on_random_lps(kind, count):
    rng = np.random.default_rng(zlib.crc32(kind.__name__.encode()))
    statuses = [_check(*kind(rng), sparse=(i % 4 == 0)) for i in range(count)]
    assert statuses.count(0) >= 0.5 * count


def test_at_least_200_optimal_comparisons():
    rng = np.random.default_rng(7)
    optimal = sum(_check(*_general(rng)) == 0 for _ in range(150))
    optimal += sum(_check(*_degenerate(rng)) == 0 for _ in range(80))
    optimal += sum(_check(*_free(rng)) == 0 for _ in range(40))
    assert optimal >= 200


@pytest.mark.parametrize("seed", range(15))
def test_infeasible_and_unbounded(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 8))
    A = rng.normal(size=(4, n))
    # infeasible: a row and its negation cannot both hold
    a = rng.normal(size=n)
    res = tabu.linprog(rng.normal(size=n), np.vstack([A, a, -a]), np.concatenate([np.ones(4), [-1.0, -1.0]]),
                       bounds=(None, None))
    assert res.status == 2 and not res.success and res.x is None
    res = tabu.linprog(np.ones(n), A_eq=np.ones((1, n)), b_eq=[-1.0])
    assert res.status == 2
    # unbounded: x >= 0, constraints that never bound the direction e_0
    A_pos = -np.abs(rng.normal(size=(3, n)))
    res = tabu.linprog(-np.eye(n)[0], A_pos, np.ones(3))
    assert res.status == 3 and res.x is None
    res = tabu.linprog(rng.normal(size=n), bounds=(None, None))  # free and unconstrained
    assert res.status == 3


def test_no_constraints_and_bounds_only():
    res = tabu.linprog([1.0, -2.0], bounds=[(0, 3), (-1, 4)])
    assert res.status == 0 and res.fun == pytest.approx(-8.0)
    np.testing.assert_allclose(res.x, [0.0, 4.0])
    assert tabu.linprog([1.0, 2.0]).fun == 0.0
    assert tabu.linprog([1.0], bounds=(2, 1)).status == 2


def test_warm_start_equals_cold_and_uses_fewer_iterations():
    rng = np.random.default_rng(11)
    cold_it = warm_it = 0
    for _ in range(10):
        n, m = 30, 20
        A = rng.uniform(0, 1, size=(m, n))
        b = np.ones(m)
        c = -rng.uniform(0, 1, size=n)
        first = tabu.linprog(c, A, b)
        c2 = c + 0.05 * rng.normal(size=n)  # Frank-Wolfe: only the costs change
        cold = tabu.linprog(c2, A, b)
        warm = tabu.linprog(c2, A, b, basis=first.basis)
        assert warm.status == cold.status == 0
        assert warm.fun == pytest.approx(cold.fun, rel=1e-9, abs=1e-12)
        assert warm.nit_phase1 == 0
        cold_it += cold.nit
        warm_it += warm.nit
        assert tabu.linprog(c, A, b, basis=first.basis).nit == 0
    assert warm_it < cold_it / 2


def test_warm_start_falls_back_when_basis_infeasible():
    rng = np.random.default_rng(12)
    A = rng.uniform(0, 1, size=(5, 8))
    c = -np.ones(8)
    first = tabu.linprog(c, A, np.ones(5))
    b2 = np.array([1.0, 0.1, 1, 1, 1])  # the old basis is not primal feasible any more
    warm = tabu.linprog(c, A, b2, basis=first.basis)
    cold = so.linprog(c, A, b2, method="highs")
    assert warm.status == 0 and warm.fun == pytest.approx(cold.fun, rel=1e-9)
    with pytest.raises(ValueError):
        tabu.linprog(c, A, np.ones(5), basis=[0, 1])


def test_redundant_rows_round_trip_through_basis():
    A_eq = np.array([[1.0, 1, 1], [2.0, 2, 2], [1.0, -1, 0]])
    b_eq = np.array([1.0, 2, 0])
    res = tabu.linprog([1.0, 2, 3], A_eq=A_eq, b_eq=b_eq)
    assert res.status == 0 and res.fun == pytest.approx(1.5)
    assert np.sum(res.basis < 0) == 1
    again = tabu.linprog([1.0, 2, 0], A_eq=A_eq, b_eq=b_eq, basis=res.basis)
    assert again.status == 0 and again.fun == pytest.approx(0.0) and again.nit_phase1 == 0


def test_degenerate_cycling_example():
    # Beale's classic cycling LP (cycles under Dantzig's rule with textbook ties)
    c = [-0.75, 150, -0.02, 6]
    A = [[0.25, -60, -0.04, 9], [0.5, -90, -0.02, 3], [0, 0, 1, 0]]
    res = tabu.linprog(c, A, [0, 0, 1])
    assert res.status == 0 and res.fun == pytest.approx(-0.05)


@pytest.mark.parametrize("bad", [
    dict(c=[1.0, np.nan]),
    dict(c=[1.0, 1.0], A_ub=[[1.0, 1.0, 1.0]], b_ub=[1.0]),
    dict(c=[1.0, 1.0], A_ub=[[1.0, 1.0]], b_ub=[1.0, 2.0]),
    dict(c=[1.0, 1.0], A_ub=[[1.0, np.inf]], b_ub=[1.0]),
    dict(c=[1.0, 1.0], A_ub=[[1.0, 1.0]]),
    dict(c=[1.0, 1.0], bounds=[(0, 1)]),
    dict(c=[1.0, 1.0], bounds=[(0, 1), (np.nan, 1)]),
])
def test_bad_input_raises_value_error(bad):
    with pytest.raises(ValueError):
        tabu.linprog(**bad)


def test_bad_type_raises_type_error():
    with pytest.raises(TypeError):
        tabu.linprog(["a", "b"])
