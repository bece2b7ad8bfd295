"""Long steps (docs/DESIGN.md §3b) against the objective evaluated literally along the ray."""
import numpy as np
import pytest

import gto
import tabu
from gto.engine._block import PIVOT_TOL
from gto.engine._long_step import LongStepWalker
from gto.engine._problem import TreeProblem
from gto.engine._ray import crossings, literal_sums, product_sweep
from gto.engine._starts import greedy_theta, random_start
from gto.engine._walker import walker_from_theta

from truths import random_tree

OBJECTIVES = ["product", "minimum", "count", "lexicographic"]


def _problem(seed, p=1, D=3, n=3, N=50, classes=(0, 1, 2)):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, D, list(classes), n)
    X = rng.normal(size=(N, n))
    y = rng.choice(np.unique(tree.leaf_classes), N)
    return TreeProblem(tree, X, y, p=p), rng


def _literal(problem, objective, Theta):
    """Objective of ``Theta`` from scratch: decision values, leaf errors (eq. 13-14), eq. 15-19."""
    Z = problem.data.X1 @ Theta.T
    return problem.objective(objective)(problem.leaf_errors(Z)) if objective != "lexicographic" \
        else None


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_sweep_equals_the_objective_at_every_crossing(seed, p, objective):
    problem, rng = _problem(seed, p)
    walker = walker_from_theta(problem, greedy_theta(problem, rng),
                               problem.objective(objective), rng)
    walker = LongStepWalker.from_walker(walker, budget=None)
    walker.candidates()  # leaf terms up to date
    Theta0 = walker.theta()
    fun = walker.objective
    beyond = 0
    for d, b in enumerate(walker.blocks):
        for q in range(b.m):
            for sigma in (1.0, -1.0):
                steps, rows = crossings(b.r, b.G[q], sigma, b.in_block, b.n_real, PIVOT_TOL, None)
                if rows.size == 0:
                    continue
                assert np.all(np.diff(steps) >= 0)
                h = sigma * walker._H[d, q]
                if fun.product:
                    left, right = walker._active(d, b, b.G[q], sigma)
                    s0 = product_sweep(walker.Zt[d], h, walker._terms[d], walker._degrees[0, d],
                                       walker._degrees[1, d], p, left, right, steps,
                                       problem.blocks.row_points[d][rows], problem.blocks.row_sides[d][rows])
                    values = fun.finish((s0, np.zeros_like(s0)))
                else:
                    sums = literal_sums(walker.Zt[d], h, steps, d, walker.ELt, walker.ERt,
                                        walker.LE, problem.layout.sides, problem.layout.point_leaves,
                                        problem.data.weight, p, False)
                    values = fun.finish((sums[:, 0], sums[:, 1]))
                truths = []
                for t, row in zip(steps, rows):
                    Theta = Theta0.copy()
                    Theta[d] += t * sigma * b.Binv[:, q]
                    # a vertex: the crossing row is tight, the block's other rows stay tight
                    assert problem.blocks.rows[d][row] @ Theta[d] == pytest.approx(1.0, abs=1e-7)
                    others = b.tight[np.arange(b.m) != q]
                    np.testing.assert_allclose(b.rows[others] @ Theta[d], 1.0, atol=1e-7)
                    truths.append(fun(problem.leaf_errors(problem.data.X1 @ Theta.T)))
                # accurate on the part of the ray where a best vertex can lie: up to the
                # first crossing 100 times worse than the start (far out, t^G round-off grows)
                truths = np.array(truths)
                far = np.flatnonzero(truths > 100 * max(walker.value, 1e-9))
                n = far[0] if far.size else len(truths)
                np.testing.assert_allclose(values[:n], truths[:n], rtol=1e-7,
                                           atol=1e-9 * np.abs(truths[:n]).max(initial=0) + 1e-9)
                beyond += int(np.argmin(values)) > 0
    assert beyond > 0  # some ray's best vertex lies past its first crossing


@pytest.mark.parametrize("objective", OBJECTIVES)
@pytest.mark.parametrize("seed", range(3))
def test_long_moves_keep_the_walker_exact(objective, seed):
    """After EPTS with long moves, the walker's value, count and slacks match a recomputation."""
    problem, rng = _problem(seed, N=80)
    walker = walker_from_theta(problem, random_start(problem, rng),
                               problem.objective(objective), rng)
    walker = LongStepWalker.from_walker(walker)
    res = tabu.search(walker, max_iter=150, random_state=seed)
    assert walker.long_moves > 0
    Theta = walker.theta()
    Z = problem.data.X1 @ Theta.T
    assert walker.value == pytest.approx(walker.objective(problem.leaf_errors(Z)), rel=1e-7,
                                         abs=1e-9)
    tree = problem.tree_of(Theta)
    assert walker.count == pytest.approx(tree.n_errors(problem.data.X_orig, problem.data.y_orig))
    for d, b in enumerate(walker.blocks):
        r = 1.0 - problem.blocks.rows[d] @ Theta[d]
        np.testing.assert_allclose(r[b.tight[b.tight < b.n_real]], 0.0, atol=1e-7)
        free = ~b.in_block[: b.n_real]
        big = np.abs(r) > 1e-7
        assert np.all(b.ybasic[: b.n_real][free & big] == (r[free & big] > 0))
    best = problem.tree_of(res.x.reshape(problem.layout.D, problem.data.m))
    assert np.isfinite(res.fun) and best.n_errors(problem.data.X_orig, problem.data.y_orig) >= 0


def test_long_step_beats_the_first_vertex_on_a_plateau():
    """Count objective: the first crossing rarely changes the count; the best on the ray does."""
    data = gto.Tree.from_structure(((0, 1), (0, 1)), 4)
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(300, 4))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)
    problem = TreeProblem(data, X, y)
    walker = walker_from_theta(problem, random_start(problem, rng), problem.objective("count"),
                               rng)
    short = walker.candidates()[2]
    long_walker = LongStepWalker.from_walker(walker, sweep=None)
    long = long_walker.candidates()[2]
    assert np.all(long <= short + 1e-12)
    assert long.min() < short.min()
