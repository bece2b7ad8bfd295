"""The compiled hinge LP simplex against the reference Python loop, pivot for pivot.

The truth here is :func:`gto.engine._hinge_lp._simplex_reference` (itself tested
against HiGHS in test_speed_kernels.py and test_sparse.py): the compiled loop
must make the same pivots, so the pivot count, the objective's bits, the final
basis (tight rows in block order, basic sides) and the vertex must all agree.
"""
import copy

import numpy as np
import pytest

import gto
import problems
from gto.engine import _hinge_loop
from gto.engine._crossover import purify
from gto.engine._hinge_lp import (
    PERTURBATION,
    RESTORED_ZERO_TOL,
    _simplex,
    _simplex_reference,
    perturbed_solve,
)
from gto.engine._problem import TreeProblem
from gto.engine._walker import walker_from_theta
from gto.utils import _interrupt


def _rows(rng, T, n, decimals=None, plane=0):
    """Triple rows ``s [x, -1]``: coordinates rounded to ``decimals`` (ties and
    coincident points: degenerate vertices), the first ``plane`` points on x_0 = 0."""
    X = rng.normal(size=(T, n))
    if decimals is not None:
        X = np.round(X, decimals)
    X[:plane, 0] = 0.0
    side = rng.choice([-1.0, 1.0], T)
    return side[:, None] * np.hstack([X, -np.ones((T, 1))])


def _basis(block):
    return (block.tight.copy(), block.ybasic.copy(), block.theta.copy(), block.r.copy(),
            block.Binv.copy(), block.updates)


def _assert_same(ref_block, ref_out, block, out):
    assert out == ref_out  # (objective, pivots): the same bits, the same count
    for a, b, name in zip(_basis(ref_block), _basis(block),
                          ("tight", "ybasic", "theta", "r", "Binv", "updates")):
        np.testing.assert_array_equal(b, a, err_msg=name)


def _both(block, solve):
    """``solve(block, simplex)`` with the reference and the compiled simplex, each on
    its own copy of the block; asserts they agree and returns the reference's result."""
    ref_block = copy.deepcopy(block)
    ref_out = solve(ref_block, _simplex_reference)
    out = solve(block, _simplex)
    _assert_same(ref_block, ref_out, block, out)
    return ref_out


@pytest.mark.parametrize("seed", range(12))
def test_compiled_simplex_makes_the_reference_pivots(seed):
    """Random LPs, with and without u-side costs, some on rounded data (coincident
    points and ties) and some with many points on one hyperplane (degenerate vertices)."""
    rng = np.random.default_rng(300 + seed)
    T, n = int(rng.integers(20, 400)), int(rng.integers(1, 7))
    rows = _rows(rng, T, n, decimals=[None, 1, 0][seed % 3], plane=(seed % 4 == 3) * T // 2)
    cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
    ucost = rng.uniform(0, 0.3, T) if seed % 2 else None
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    _, pivots = _both(block, lambda b, simplex: perturbed_solve(b, cost, 100_000, ucost, simplex))
    assert pivots > 0


def test_a_long_run_passes_refactorisations_and_the_residual_checks():
    """Over 64 rank-one updates: the block's periodic refactorisation and residual
    checks happen inside the compiled loop, at the same updates as in the reference."""
    rng = np.random.default_rng(7)
    T, n = 3000, 8
    rows = _rows(rng, T, n)
    cost = rng.uniform(0.1, 2, T)
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    _both(block, lambda b, simplex: perturbed_solve(b, cost, 100_000, None, simplex))
    assert block.updates > 64


@pytest.mark.parametrize("zero_tol", [None, RESTORED_ZERO_TOL])
def test_each_phase_alone_on_a_degenerate_lp(zero_tol):
    """The perturbed phase (right-hand sides 1 + delta) and the unperturbed one, each
    compared alone, on data with hundreds of points on one hyperplane; the
    unperturbed phase from the start vertex must meet degenerate pivots (Bland)."""
    rng = np.random.default_rng(11)
    T, n = 400, 3
    rows = _rows(rng, T, n, decimals=1, plane=300)
    cost = rng.uniform(0, 2, T)
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    if zero_tol is None:  # the perturbed phase
        delta = rng.uniform(0, PERTURBATION, T)
        block.set_rhs(block.rhs0 + delta)
        args = (cost, 100_000)
    else:
        args = (cost, 100_000, zero_tol)
    _, pivots = _both(block, lambda b, simplex: simplex(b, *args))
    assert pivots > 0


@pytest.mark.parametrize("seed", range(2))
def test_penalised_lps_with_coordinate_rows(seed):
    """Walker blocks with coordinate rows (sparse vertices) and L1 costs on both sides."""
    rng = np.random.default_rng(seed)
    X, y = problems.load(["heart", "liver"][seed])
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    P = TreeProblem(tree, X, y, coordinate_rows=True)
    W = walker_from_theta(P, rng.normal(size=(3, P.data.m)), P.objective("product"), rng)
    for d, block in enumerate(W.blocks):
        T = P.blocks.n_point[d]
        cost = rng.uniform(0, 2, T) * (rng.random(T) < 0.8)
        pen = np.full(P.data.n, [0.01, 1.0][seed])
        full, ufull = np.concatenate([cost, pen]), np.concatenate([np.zeros(T), pen])
        _both(block, lambda b, simplex, c=full, u=ufull: perturbed_solve(b, c, 100_000, u, simplex))


def test_the_time_limit_stops_the_compiled_simplex():
    rng = np.random.default_rng(5)
    rows = _rows(rng, 200, 3)
    cost = rng.uniform(0.1, 2, 200)
    block = purify(rows, rng.normal(size=4), cost, rng)
    with _interrupt.limits(deadline=0.0), pytest.raises(_interrupt.OutOfTime):
        _simplex(block, cost, 100_000)


def test_the_pivot_limit_is_the_reference_one():
    rng = np.random.default_rng(6)
    rows = _rows(rng, 300, 4)
    cost = rng.uniform(0.1, 2, 300)
    block = purify(rows, rng.normal(size=5), cost, rng)
    _, pivots = _simplex_reference(copy.deepcopy(block), cost, 100_000)
    assert pivots > 2
    for simplex in (_simplex_reference, _simplex):
        with pytest.raises(RuntimeError, match="did not converge"):
            simplex(copy.deepcopy(block), cost, pivots - 1)
    assert _simplex(block, cost, pivots + 1)[1] == pivots


def test_pairwise_sum_has_numpys_bits():
    """numpy's pairwise summation, bit for bit, where a plain running sum differs."""
    plain_differs = False
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 127, 128, 129, 255, 256, 300, 1001, 5000]:
        a = np.random.default_rng(n).lognormal(0, 4, n)
        assert _hinge_loop.pairwise_sum(a) == a.sum(), n
        plain_differs |= sum(a.tolist()) != a.sum()
    assert plain_differs


@pytest.mark.parametrize("seed", [0, 2])
def test_refused_pivots_and_failed_refactorisations_as_the_reference(seed, monkeypatch):
    """A residual check that always asks for a refactorisation, and a condition limit
    just below the worst block met at one: that pivot is refused (its block restored,
    the edge skipped) or, when the undo's own refactorisation fails too, the solve
    raises.  The compiled loop makes the reference's pivots, or raises the same error."""
    from gto.engine import _block
    from gto.engine._block import Block, DegeneratePivotError, SingularBlockError

    refused, conds = [], []
    pivot = Block.pivot

    def counted(self, q, sigma, leave):
        try:
            out = pivot(self, q, sigma, leave)
        except DegeneratePivotError:
            refused.append(leave)
            raise
        if self.updates % _block.CHECK_EVERY == 0:
            conds.append(np.linalg.cond(self.rows[self.tight]))
        return out

    def solve(b, simplex):
        try:
            return perturbed_solve(b, cost, 100_000, None, simplex)
        except (SingularBlockError, RuntimeError) as error:
            return type(error).__name__

    rng = np.random.default_rng(400 + seed)
    T, n = 1000, 6
    rows = _rows(rng, T, n, decimals=1)
    cost = rng.uniform(0, 2, T)
    block = purify(rows, rng.normal(size=n + 1), cost, rng)
    monkeypatch.setattr(Block, "pivot", counted)
    monkeypatch.setattr(_block, "RESIDUAL_TOL", -1.0)
    solve(copy.deepcopy(block), _simplex_reference)
    assert max(conds) > np.linalg.cond(rows[block.tight])
    monkeypatch.setattr(_block, "MAX_COND", 0.999 * max(conds))
    out = _both(block, solve)
    assert refused  # the path was taken (by the reference)
    assert (out == "SingularBlockError") == (seed == 2)


def _robust_lp_rows_numpy(X1, weight, points, go_left):
    """The numpy expressions :func:`gto.engine._hinge_loop.robust_lp_rows` replaces."""
    X = X1[points]
    w = weight[points]
    rows = np.where(go_left, -1.0, 1.0)[:, None] * X
    cost = w / np.where(go_left, w[go_left].sum(), w[~go_left].sum())
    return rows, cost, X[go_left, :-1].mean(axis=0), X[~go_left, :-1].mean(axis=0)


@pytest.mark.parametrize("n", [1, 2, 3, 10])
@pytest.mark.parametrize("T", [2, 9, 300, 10_000])
def test_robust_lp_rows_have_the_numpy_bits(n, T):
    """Rows, transposed rows, costs and the sides' means of a robust LP, bit for bit
    as numpy computes them (sums in numpy's order: pairwise for a contiguous sum, row
    by row down a column of several), on values of mixed magnitudes, where another
    order of the sums rounds differently; with signed zeros and repeated points."""
    rng = np.random.default_rng(T + n)
    N = T + 50
    X1 = np.hstack([rng.lognormal(0, 4, (N, n)) * rng.choice([-1.0, 1.0], (N, n)), -np.ones((N, 1))])
    X1[::7, 0] = -0.0
    weight = rng.lognormal(0, 3, N)
    points = np.sort(rng.choice(N, T, replace=True))
    go_left = rng.random(T) < 0.3
    go_left[:2] = True, False  # both sides hold a point
    rows, rows_t, cost, mean_l, mean_r = _hinge_loop.robust_lp_rows(X1, weight, points, go_left)
    expected = _robust_lp_rows_numpy(X1, weight, points, go_left)
    for got, want, name in zip((rows, cost, mean_l, mean_r), expected, ("rows", "cost", "left", "right")):
        assert got.tobytes() == want.tobytes(), name
    assert rows_t.flags.c_contiguous and rows_t.tobytes() == np.ascontiguousarray(rows.T).tobytes()


def test_the_first_run_length_changes_no_bits(monkeypatch):
    """Small LPs start with longer compiled runs (fewer calls), large ones with runs of
    4 passes; the runs chain into one loop, so the result is the same whatever the
    first run's length."""
    from gto.engine import _hinge_lp

    assert [_hinge_lp._first_budget(T) for T in (1, 64, 250, 1000, 4000, 10**6)] == [256, 256, 64, 16, 4, 4]
    rng = np.random.default_rng(11)
    rows = _rows(rng, 400, 5, decimals=1)
    cost = rng.uniform(0, 2, 400)
    block = purify(rows, rng.normal(size=6), cost, rng)
    outs = []
    for first_rows in (1, 10**9):
        monkeypatch.setattr(_hinge_lp, "FIRST_RUN_ROWS", first_rows)
        b = copy.deepcopy(block)
        outs.append((perturbed_solve(b, cost, 100_000, None, _simplex), b))
    (ref_out, ref_block), (out, b) = outs
    assert ref_out[1] > 4  # more passes than the shortest first run
    _assert_same(ref_block, ref_out, b, out)


@pytest.mark.parametrize("bad", ["negative", "nan", "inf", "u-negative", "u-nan", "u-inf", "none", "huge"])
def test_the_costs_must_be_finite_and_non_negative(bad):
    """A negative, NaN or infinite cost on either side is refused before any pivot;
    finite costs whose total overflows are not (they are finite)."""
    from gto.engine._hinge_lp import _prepared

    rng = np.random.default_rng(9)
    rows = _rows(rng, 50, 3)
    cost, ucost = rng.uniform(0, 2, 50), rng.uniform(0, 1, 50)
    block = purify(rows, rng.normal(size=4), cost, rng)
    side, _, kind = bad.rpartition("-")
    values = ucost if side == "u" else cost
    if kind == "huge":
        cost[:] = 1e308
    elif kind != "none":
        values[7] = {"negative": -1e-300, "nan": np.nan, "inf": np.inf}[kind]
    if kind in ("none", "huge"):
        with np.errstate(over="ignore"):  # the total of the huge costs overflows
            assert _prepared(block, cost, ucost)[2] == 1e-10 * max(1.0, cost.sum() + ucost.sum())
        return
    with pytest.raises(ValueError, match="finite and non-negative"):
        _prepared(block, cost, ucost)
    with pytest.raises(ValueError, match="finite and non-negative"):
        perturbed_solve(block, cost, 100_000, ucost, _simplex)
