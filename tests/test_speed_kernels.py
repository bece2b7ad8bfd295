"""The compiled purification and hinge-LP kernels (gto/engine/_lp_kernels.py) against
independent truths: literal slack checks, scipy's SVD-based null space and
condition number, finite differences along an edge, a brute-force line search
over the breakpoints of a ray, and HiGHS on random small LPs."""
import numpy as np
import pytest
import scipy.linalg
from scipy.optimize import linprog

from gto.engine import _lp_kernels as K
from gto.engine._block import MAX_COND, ZERO_TOL, Block, well_conditioned
from gto.engine._crossover import purify
from gto.engine._hinge_lp import (
    _simplex_reference,
    edge_slopes,
    perturbed_solve,
    solve_hinge_lp,
)

TOL = 1e-9


def _rows(rng, T, n, subspace=False):
    """Triple rows ``s [x, -1]`` of T random points (in a hyperplane of R^n if ``subspace``)."""
    X = rng.normal(size=(T, n))
    if subspace:
        X[:, 0] = 0.0  # the points span less than their space: a lineality direction
    side = rng.choice([-1.0, 1.0], T)
    return side[:, None] * np.hstack([X, -np.ones((T, 1))])


def _hinge(rows, rhs, cost, ucost, theta):
    r = rhs - rows @ theta
    return float(cost @ np.maximum(0, r) + ucost @ np.maximum(0, -r))


def _check_block(block, rows, rhs, theta0):
    """The block literally: tight rows have zero slack, rank m, no slack changed sign."""
    m = rows.shape[1]
    tight = block.tight
    assert len(set(tight.tolist())) == m
    assert np.linalg.matrix_rank(block.rows[tight]) == m
    assert np.all(np.abs(block.rhs[tight] - block.rows[tight] @ block.theta) <= TOL)
    before = rhs - rows @ theta0
    after = rhs - rows @ block.theta
    scale = 1e-9 * max(1.0, np.abs(before).max())
    assert np.all(after[before > scale] >= -scale)  # satisfied-on-the-violated-side stays so
    assert np.all(after[before <= 0] <= scale)  # a satisfied slack never rises above 0


@pytest.mark.parametrize("seed", range(12))
def test_purify_block_is_a_vertex_without_sign_changes(seed):
    rng = np.random.default_rng(seed)
    T, n = int(rng.integers(5, 60)), int(rng.integers(1, 6))
    rows = _rows(rng, T, n, subspace=seed % 4 == 3 and n > 1)
    theta = rng.normal(size=n + 1) * 3
    cost = rng.uniform(0, 1, T)
    block = purify(rows, theta, cost, rng)
    _check_block(block, rows, np.ones(T), theta)
    if seed % 4 == 3 and n > 1:  # the lineality direction is pinned by a pseudo-row
        assert len(block.rows) > T and np.any(block.tight >= T)


@pytest.mark.parametrize("seed", range(6))
def test_purify_from_a_degenerate_theta(seed):
    """Many slacks exactly 0 at the start (points on both margins): none may rise."""
    rng = np.random.default_rng(300 + seed)
    T, n = 30, 3
    w, gamma = rng.normal(size=n), rng.normal()
    X = rng.normal(size=(T, n))
    side = rng.choice([-1.0, 1.0], T)
    on = rng.random(T) < 0.5  # these points sit on the margin s (x w - gamma) = 1
    X[on] += ((side[on] + gamma - X[on] @ w) / (w @ w))[:, None] * w
    rows = side[:, None] * np.hstack([X, -np.ones((T, 1))])
    theta = np.append(w, gamma)
    assert np.abs(1 - rows[on] @ theta).max() < 1e-12
    block = purify(rows, theta, rng.uniform(0, 1, T), rng)
    _check_block(block, rows, np.ones(T), theta)


@pytest.mark.parametrize("seed", range(6))
def test_purify_keeps_zero_weights_with_coordinate_rows(seed):
    rng = np.random.default_rng(100 + seed)
    T, n = 40, 4
    rows = np.vstack([_rows(rng, T, n), np.eye(n, n + 1)])  # then coordinate rows w_j = 0
    rhs = np.append(np.ones(T), np.zeros(n))
    theta = rng.normal(size=n + 1)
    theta[rng.choice(n, 2, replace=False)] = 0.0
    block = purify(rows, theta, rng.uniform(0, 1, T), rng, rhs=rhs, coord=T, n_coord=n)
    assert np.all(block.theta[:n][theta[:n] == 0] == 0)
    _check_block(block, rows, rhs, theta)


def test_purify_from_a_theta_in_the_span_of_its_tight_rows():
    """theta = 0: the projection of -theta is 0 from the start, so a random direction
    is drawn (the NEEDS_DIRECTION path); the result is still a vertex."""
    rng = np.random.default_rng(7)
    rows = _rows(rng, 30, 3)
    block = purify(rows, np.zeros(4), np.ones(30), rng)
    _check_block(block, rows, np.ones(30), np.zeros(4))


@pytest.mark.parametrize("seed", range(8))
def test_null_basis_and_conditioning_match_scipy(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 9))
    k = int(rng.integers(0, m + 1))
    M = rng.normal(size=(k, m))
    if k > 1 and seed % 2:
        M[-1] = M[0] * (1 + 1e-15)  # (numerically) dependent rows
    out = np.empty((m, m))
    nq = K.null_basis(np.ascontiguousarray(M), out)
    Q = scipy.linalg.null_space(M) if k else np.eye(m)
    assert nq == Q.shape[1]
    assert np.allclose(out[:, :nq] @ out[:, :nq].T, Q @ Q.T, atol=1e-10)  # same projector
    if k:
        assert well_conditioned(M) == bool(np.linalg.cond(M) <= MAX_COND)


def test_well_conditioned_rejects_non_finite_and_singular():
    assert not well_conditioned(np.array([[1.0, np.nan], [0.0, 1.0]]))
    assert not well_conditioned(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert well_conditioned(np.eye(3))


def _vertex(rng, T=25, n=3):
    """A random non-degenerate vertex: n + 1 random rows tight (tight rows all of one
    side would give w = 0 and every row of that side at 0: drawn again)."""
    rows = _rows(rng, T, n)
    cost = rng.uniform(0.1, 1, T)
    while True:
        block = Block(rows, rng.choice(T, n + 1, replace=False))
        if np.abs(block.r[~block.in_block]).min() > 1e-6:
            return rows, cost, block


@pytest.mark.parametrize("seed", range(8))
def test_edge_slopes_are_the_directional_derivatives(seed):
    """At a non-degenerate vertex the slope (and reduced cost) of edge (q, sigma) is the
    derivative of the hinge objective along sigma M^-1 e_q, by finite differences."""
    rng = np.random.default_rng(seed)
    rows, cost, block = _vertex(rng)
    ucost = rng.uniform(0, 0.5, len(rows)) * (seed % 2)
    T, m = rows.shape
    r = block.r[:T]
    assert np.abs(r[~block.in_block[:T]]).min() > 1e-6  # generic data: non-degenerate
    reduced, slope, noise = edge_slopes(block, cost, ucost)
    f0 = _hinge(rows, np.ones(T), cost, ucost, block.theta)
    free = ~block.in_block[:T]
    for j in range(2 * m):
        q, sigma = j % m, (1.0 if j < m else -1.0)
        d = sigma * block.Binv[:, q]
        eps = 0.5 * np.min(np.abs(r[free]) / np.maximum(np.abs(rows[free] @ d), 1e-300))
        eps = min(eps, 1.0)  # the objective is linear up to the first breakpoint
        fd = (_hinge(rows, np.ones(T), cost, ucost, block.theta + eps * d) - f0) / eps
        assert slope[j] == pytest.approx(fd, rel=1e-5, abs=1e-7)
        assert reduced[j] == pytest.approx(fd, rel=1e-5, abs=1e-7)
    assert np.all(noise >= 0) and np.all(noise < 1e-6)


@pytest.mark.parametrize("seed", range(8))
def test_leaving_row_is_the_best_breakpoint_of_the_ray(seed):
    """Descent: the leaving row's crossing is the breakpoint where the objective is
    lowest along the ray (brute force over every breakpoint)."""
    rng = np.random.default_rng(50 + seed)
    rows, cost, block = _vertex(rng, T=40)
    T, m = rows.shape
    ucost = np.zeros(T)
    reduced, slope, _ = edge_slopes(block, cost, ucost)
    descending = np.flatnonzero(slope < -1e-9)
    assert descending.size  # a random vertex is not optimal
    rownorm = np.abs(rows).max(axis=1)
    for j in descending:
        q, sigma = j % m, (1.0 if j < m else -1.0)
        g = block.G[q]
        t = K.leaving_row(g, sigma, block.r, block.ybasic, block.in_block, slope[j], 1e-12,
                          1e-9, rownorm, 0.0, cost, ZERO_TOL, True)
        d = sigma * block.Binv[:, q]
        rates = rows @ d  # slack t moves at -rates[t]
        free = ~block.in_block
        steps = np.where(free & (rates != 0), block.r / np.where(rates == 0, 1, rates), -1)
        steps = steps[(steps > 0) & free]
        values = [_hinge(rows, np.ones(T), cost, ucost, block.theta + s * d) for s in steps]
        if t < 0:
            assert not steps.size or min(values) >= _hinge(rows, np.ones(T), cost, ucost,
                                                           block.theta) - 1e-12
            continue
        step_t = block.r[t] / rates[t]
        value_t = _hinge(rows, np.ones(T), cost, ucost, block.theta + step_t * d)
        assert value_t == pytest.approx(min(values), rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("seed", range(10))
def test_hinge_lp_matches_highs_on_random_small_lps(seed):
    """min sum c max(0, r) + u max(0, -r), r = 1 - A theta, by HiGHS with r = y - z."""
    rng = np.random.default_rng(200 + seed)
    T, n = int(rng.integers(6, 40)), int(rng.integers(1, 5))
    rows = _rows(rng, T, n)
    cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
    ucost = rng.uniform(0, 0.3, T) * (seed % 2)
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    value, _ = solve_hinge_lp(block, cost, ucost=ucost if seed % 2 else None)
    m = n + 1
    ref = linprog(np.concatenate([np.zeros(m), cost, ucost]),
                  A_eq=np.hstack([rows, np.eye(T), -np.eye(T)]), b_eq=np.ones(T),
                  bounds=[(None, None)] * m + [(0, None)] * (2 * T), method="highs")
    assert ref.status == 0
    assert value == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)
    assert _hinge(rows, np.ones(T), cost, ucost, block.theta) == pytest.approx(value, rel=1e-9,
                                                                                 abs=1e-12)


def test_a_pivot_with_a_zero_pivot_element_is_refused_and_changes_nothing():
    """A row in the span of the block's other rows cannot replace position q (its
    pivot element ``rows[leave] @ Binv[:, q]`` is 0): DegeneratePivotError, with every
    array of the block as before; a regular pivot still solves the new tight rows."""
    from gto.engine._block import DegeneratePivotError
    from tabu.walker import MoveError

    rng = np.random.default_rng(3)
    n = 3
    rows = _rows(rng, 8, n)
    tight = np.arange(n + 1)
    rows[n + 1] = 0.5 * rows[0] + 0.5 * rows[1]  # no component along rows 2 and 3
    block = Block(rows, tight)
    before = {k: np.array(getattr(block, k), copy=True)
              for k in ("Binv", "G", "tight", "in_block", "position", "ybasic", "theta", "r")}
    with pytest.raises(DegeneratePivotError) as info:
        block.pivot(3, 1.0, n + 1)
    assert isinstance(info.value, MoveError)
    for key, value in before.items():
        np.testing.assert_array_equal(getattr(block, key), value, err_msg=key)
    block.pivot(3, 1.0, n + 2)  # a row in general position
    tight = block.tight
    assert n + 2 in tight.tolist()
    theta = np.linalg.solve(rows[tight], np.ones(n + 1))  # the literal vertex of the new rows
    np.testing.assert_allclose(block.theta, theta, rtol=1e-9, atol=1e-9)


def test_the_hinge_simplex_skips_a_pivot_the_block_refuses(monkeypatch):
    """A pivot the block refuses as singular (DegeneratePivotError, the block unchanged)
    is handled (by the reference simplex) as an edge without a pivot row: the simplex
    goes on and still reaches HiGHS's optimum instead of passing the error to its caller
    (Frank-Wolfe, the starts)."""
    from gto.engine._block import DegeneratePivotError

    rng = np.random.default_rng(205)
    T, n = 30, 3
    rows = _rows(rng, T, n)
    cost = rng.uniform(0.1, 2, T)
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    pivot, refused = Block.pivot, []

    def refuse_first(self, q, sigma, leave):
        if not refused:
            refused.append((q, leave))
            raise DegeneratePivotError("refused on purpose")
        return pivot(self, q, sigma, leave)

    monkeypatch.setattr(Block, "pivot", refuse_first)
    # the reference loop calls Block.pivot (the compiled one makes the same pivots:
    # test_hinge_lp_compiled.py)
    value, _ = perturbed_solve(block, cost, 100_000, None, _simplex_reference)
    assert refused
    ref = linprog(np.concatenate([np.zeros(n + 1), cost, np.zeros(T)]),
                  A_eq=np.hstack([rows, np.eye(T), -np.eye(T)]), b_eq=np.ones(T),
                  bounds=[(None, None)] * (n + 1) + [(0, None)] * (2 * T), method="highs")
    assert value == pytest.approx(ref.fun, rel=1e-7, abs=1e-9)
