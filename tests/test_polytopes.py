"""problems.polytopes and the headline claim: EPTS finds global minima where descent does not."""
import numpy as np
import pytest

import tabu
from problems import polytopes


def test_enumerate_vertices_of_cube_and_simplex():
    V = polytopes.enumerate_vertices(np.zeros((0, 3)), np.zeros(0), bounds=(0, 1))
    assert len(V) == 8 and set(map(tuple, V)) == {(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)}
    V = polytopes.enumerate_vertices(np.ones((1, 3)), [1.0])
    assert len(V) == 4


def test_generated_problems_are_consistent_with_linprog():
    for seed in range(5):
        p = polytopes.concave_quadratic(n=3, m=7, seed=seed)
        # every vertex is feasible, and LP optima over the polytope are vertices we enumerated
        assert np.all(p.A_ub @ p.vertices.T <= p.b_ub[:, None] + 1e-9)
        c = np.random.default_rng(seed).normal(size=3)
        lp = tabu.linprog(c, p.A_ub, p.b_ub, bounds=p.bounds)
        assert lp.fun == pytest.approx((p.vertices @ c).min(), abs=1e-9)
        assert p.values.shape == (len(p.vertices),) and p.f_min == p.values.min()


def _run(problem, seed):
    walker = tabu.StandardFormWalker.from_inequalities(problem.fun, problem.A_ub, problem.b_ub,
                                                       bounds=problem.bounds, vectorized=True)
    down = tabu.descent(walker)
    res = tabu.epts(problem.fun, problem.A_ub, problem.b_ub, bounds=problem.bounds, vectorized=True,
                    random_state=seed, callback=lambda it, w, best: problem.is_global(best))
    return problem.is_global(down.fun), problem.is_global(res.fun), res


@pytest.mark.parametrize("make", [polytopes.concave_quadratic, polytopes.min_of_linear])
def test_epts_reaches_global_minimum_where_descent_does_not(make):
    seeds = range(40)
    runs = [_run(make(n=4, m=10, seed=s), s) for s in seeds]
    descent_ok = sum(r[0] for r in runs)
    epts_ok = sum(r[1] for r in runs)
    assert epts_ok >= 0.95 * len(seeds)
    assert descent_ok <= 0.7 * len(seeds)
    hard = [r for r in runs if not r[0]]  # instances where descent from the same start fails
    assert len(hard) >= 10 and sum(r[1] for r in hard) >= 0.95 * len(hard)
    assert all(r[2].status in ("iteration_limit", "callback") for r in runs)


def test_epts_with_plain_callable_and_random_start_vertex():
    p = polytopes.concave_quadratic(n=3, m=8, seed=1)
    x0 = p.vertices[len(p.vertices) // 2]
    res = tabu.epts(lambda u: float(p.fun(u)), p.A_ub, p.b_ub, bounds=p.bounds, x0=x0, max_iter=300,
                    random_state=0)
    assert p.is_global(res.fun) and res.fun == pytest.approx(float(p.fun(res.x)))
    assert res.history["value"][0] == pytest.approx(float(p.fun(x0)))


@pytest.mark.slow
@pytest.mark.parametrize("make", [polytopes.concave_quadratic, polytopes.min_of_linear])
def test_epts_global_on_larger_polytopes_full_budget(make):
    ok = 0
    for s in range(20):
        p = make(n=5, m=14, seed=100 + s)
        res = tabu.epts(p.fun, p.A_ub, p.b_ub, bounds=p.bounds, vectorized=True, random_state=s,
                        max_iter=3000)
        ok += p.is_global(res.fun)
    assert ok >= 19
