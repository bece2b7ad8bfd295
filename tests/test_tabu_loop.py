"""The compiled EPTS loop (gto.engine._tabu_loop) against the Python driver of tabu.search.

The truth is tabu.search's Python driver (``compiled=False``) on a copy of the same
walker: the compiled moves must be the same moves, vertex by vertex, with the same
values, memories' effects, random tie-breaks and fewest-errors vertex.
"""
import copy
import pickle

import numpy as np
import pytest

import tabu
from gto.engine import _block
from gto.engine._block import Block, SingularBlockError
from gto.engine._long_step import LongStepWalker
from tabu.status import Status

from test_walker import make_walker


def _both(W, max_iter, seed=0, **kwargs):
    """(result, walker) of the Python driver and of the compiled loop, from copies of W."""
    out = []
    for compiled in (False, True):
        w = copy.deepcopy(W)
        out.append((tabu.search(w, max_iter=max_iter, random_state=seed, compiled=compiled,
                                **kwargs), w))
    return out


def _assert_same_walk(python, compiled):
    (a, wa), (b, wb) = python, compiled
    assert a.nit == b.nit and a.status == b.status and a.n_remakes == b.n_remakes
    for field in ("value", "best", "mode"):
        np.testing.assert_array_equal(a.history[field], b.history[field])
    assert a.fun == b.fun and a.best_iteration == b.best_iteration
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.basis, b.basis)
    assert wa.counts == wb.counts
    assert wa.best_count[:2] == wb.best_count[:2]
    np.testing.assert_array_equal(wa.best_count[2], wb.best_count[2])
    np.testing.assert_array_equal(wa.theta(), wb.theta())
    np.testing.assert_array_equal(wa.basis(), wb.basis())
    assert wa.value == wb.value and wa.pivots == wb.pivots


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("objective", ["product", "minimum", "count", "lexicographic"])
def test_compiled_loop_makes_the_python_drivers_moves(objective, seed):
    P, W, X, y = make_walker(seed, objective, p=1 + seed % 2, classes=(0, 1, 2)[: 2 + seed % 2])
    W.exact_every = 7  # exact recomputations (compiled in both drivers) in the middle of the walk
    python, compiled = _both(W, 400, seed)
    assert python[0].nit == 400 and np.any(python[0].history["mode"] == 1)  # it diversified
    _assert_same_walk(python, compiled)


def test_compiled_loop_from_the_crossover_vertex_of_a_real_set():
    import gto
    import problems
    from gto.engine._problem import TreeProblem
    from gto.engine._starts import greedy_theta
    from gto.engine._walker import walker_from_theta

    X, y = problems.load("heart")
    P = TreeProblem(gto.Tree.complete(2, [0, 1, 0, 1], X.shape[1]), X, y)
    rng = np.random.default_rng(0)
    W = walker_from_theta(P, greedy_theta(P, rng), P.objective("product"), rng)
    _assert_same_walk(*_both(W, 700, 1))  # several refactorisations per block


def test_refused_pivots_are_skipped_alike(monkeypatch):
    """Refactorisations after every residual check, some found singular (the block
    restored, the edge skipped), and pivots refused for a small pivot element."""
    P, W, X, y = make_walker(5, "product", N=80)
    real, calls = Block.refactorise, {"n": 0, "singular": 0}

    def refactorise(self):  # counts the Python driver's refactorisations and refusals
        calls["n"] += 1
        try:
            return real(self)
        except SingularBlockError:
            calls["singular"] += 1
            raise

    monkeypatch.setattr(Block, "refactorise", refactorise)
    monkeypatch.setattr(_block, "RESIDUAL_TOL", -1.0)  # every check asks for a refactorisation
    monkeypatch.setattr(_block, "PIVOT_TOL", 0.05)  # many pivot elements count as zero
    monkeypatch.setattr(_block, "MAX_COND", 20.0)  # some new blocks count as singular
    python, compiled = _both(W, 300, 2)
    assert calls["singular"] >= 3 and calls["n"] > 2 * calls["singular"]
    assert python[0].nit == 300
    _assert_same_walk(python, compiled)


def test_callback_sees_the_asked_iterations_and_an_up_to_date_walker():
    P, W, X, y = make_walker(2, "product")
    seen = []

    def callback(iteration, walker, best):
        seen.append((iteration, walker.pivots, len(walker.counts), best))
        return iteration >= 120

    res = tabu.search(W, max_iter=500, random_state=0, callback=callback, callback_every=40)
    assert res.status == Status.CALLBACK and res.nit == seen[-1][0] >= 120
    assert {40, 80, 120} <= {it for it, *_ in seen}
    for it, pivots, n_counts, _ in seen:
        assert pivots == it and n_counts == it + 1
    assert seen[-1][3] == res.fun == res.history["best"][-1]


def test_time_limit_ends_a_compiled_search():
    P, W, X, y = make_walker(3, "product", N=200)
    res = tabu.search(W, max_iter=10**7, random_state=0, time_limit=0.05)
    assert res.status == Status.TIME_LIMIT and 0 < res.nit < 10**7 and res.success


def test_sparse_vertices_and_long_steps_keep_the_python_driver():
    _, sparse, _, _ = make_walker(0, sparse=True)
    _, penalised, _, _ = make_walker(0, alpha=0.1)
    _, W, _, _ = make_walker(0)
    assert sparse.compiled_loop(10, None, (1, 1), 1, 1, 0.0, 0.0, 0.0, 0.0, 1.0) is None
    assert penalised.compiled_loop(10, None, (1, 1), 1, 1, 0.0, 0.0, 0.0, 0.0, 1.0) is None
    assert LongStepWalker.from_walker(W).compiled_loop(10, None, (1, 1), 1, 1, 0.0, 0.0, 0.0, 0.0,
                                                       1.0) is None


def _state_fields(names):
    """A compiled function returning the structref fields ``names`` of its argument."""
    from numba import njit
    source = f"def get(st):\n    return ({''.join(f'st.{n}, ' for n in names)})\n"
    space = {}
    exec(source, space)
    return njit(space["get"])


def test_walkers_view_the_problems_rows_without_copies():
    """The rows and their transposes, which no move changes, are the problem's: the
    crossover's blocks and the compiled loop of every walker view its buffers (no copy
    per walker), also after a copy of the problem; the rows and the vertex are those
    of copies."""
    from gto.engine._tabu_loop import tree_arrays
    from gto.engine._walker import walker_from_theta
    P, W, X, y = make_walker(1, "product", p=1, classes=(0, 1))
    A = tree_arrays(W, 10)
    assert A.rows is P.blocks._flat and A.rows_t is P.blocks._flat_t
    for d, b in enumerate(W.blocks):
        assert b.rows is P.blocks.rows[d] and b._rows_t is P.blocks.rows_t[d]
        np.testing.assert_array_equal(b._rows_t, b.rows.T)
    Q = copy.deepcopy(P)
    V = walker_from_theta(Q, W.theta(), Q.objective("product"), 0)
    W = walker_from_theta(P, W.theta(), P.objective("product"), 0)
    B = tree_arrays(V, 10)
    assert B.rows is Q.blocks._flat and B.rows_t is Q.blocks._flat_t
    for b, c in zip(V.blocks, W.blocks):
        assert np.shares_memory(b.rows, B.rows) and np.shares_memory(b._rows_t, B.rows_t)
        assert np.shares_memory(c.rows, A.rows) and np.shares_memory(c._rows_t, A.rows_t)
    assert not np.shares_memory(B.rows, A.rows)
    np.testing.assert_array_equal(B.rows, A.rows)
    np.testing.assert_array_equal(B.rows_t, A.rows_t)
    np.testing.assert_array_equal(V.theta(), W.theta())


def test_walkers_on_an_unpickled_problem_copy_nothing_into_the_loop():
    """A problem unpickled from out-of-band buffers (as joblib's workers receive it: its
    arrays views of the message) still gives walkers whose blocks the compiled loop
    takes as they are, not copies of them."""
    from gto.engine._tabu_loop import tree_arrays
    from gto.engine._walker import walker_from_theta
    P, W, X, y = make_walker(1, "product", p=1, classes=(0, 1))
    parts = []
    Q = pickle.loads(pickle.dumps(P, protocol=5, buffer_callback=parts.append), buffers=parts)
    V = walker_from_theta(Q, W.theta(), Q.objective("product"), 0)
    buffers = V._adopted[0]
    A = tree_arrays(V, 10)
    assert A.rows is Q.blocks._flat and A.rows_t is Q.blocks._flat_t
    assert A.G is buffers["G"] and A.Binv is buffers["Binv"] and A.r is buffers["r"]
    np.testing.assert_array_equal(V.theta(), walker_from_theta(P, W.theta(), P.objective("product"), 0).theta())


def test_crossover_blocks_are_built_in_the_loops_buffers():
    """walker_from_theta builds the blocks in the compiled loop's buffers (nothing to
    copy into them), with the arrays, bit for bit, of blocks built on their own; a
    block with pseudo-rows (its shape changed) is built on its own and adopted."""
    from gto.engine._block import OUT
    from gto.engine._crossover import crossover_blocks
    from gto.engine._tabu_loop import tree_arrays
    from gto.engine._walker import walker_from_theta
    for seed in range(3):
        P, W, X, y = make_walker(seed, "product", p=1, classes=(0, 1))
        Theta = np.random.default_rng(seed).normal(size=(P.layout.D, P.data.m))
        W = walker_from_theta(P, Theta.copy(), P.objective("product"), seed)
        buffers = W._adopted[0]
        A = tree_arrays(W, 10)
        assert A.G is buffers["G"] and A.Binv is buffers["Binv"] and A.r is buffers["r"]
        alone = crossover_blocks([r.copy() for r in P.blocks.rows], P.blocks.triple_weight,
                                 _scaled(P, Theta), seed, P.blocks.rhs, P.blocks.n_point)
        m, off = P.data.m, A.off
        for d, (b, c) in enumerate(zip(W.blocks, alone)):  # the loop's layout (see TreeArrays)
            np.testing.assert_array_equal(A.G[m * off[d]:m * off[d + 1]].reshape(b.G.shape), b.G)
            np.testing.assert_array_equal(A.rows_t[m * off[d]:m * off[d + 1]].reshape(b._rows_t.shape),
                                          b._rows_t)
            np.testing.assert_array_equal(A.r[off[d]:off[d + 1]], b.r)
            for name in OUT + ("_rows_t", "rows"):
                np.testing.assert_array_equal(getattr(b, name), getattr(c, name), err_msg=name)
                assert np.shares_memory(getattr(b, name), getattr(A, "rows_t" if name == "_rows_t" else name))
    P, W, X, y = make_walker(1, "product", p=1, classes=(0, 1, 2), n=6, N=8)  # few points, 7 columns
    assert any(len(b.rows) > b.n_real for b in W.blocks) and not hasattr(W, "_adopted")
    A = tree_arrays(W, 10)
    for b in W.blocks:
        assert np.shares_memory(b.G, A.G) and np.shares_memory(b.rows, A.rows)


def _scaled(P, Theta):
    """The margin-scaled parameters walker_from_theta crosses over from."""
    from gto.engine._crossover import margin_scaled
    Theta = Theta.copy()
    shift, scale = margin_scaled(P.data.X1 @ Theta.T)
    Theta[:, -1] += shift
    return Theta * scale[:, None]


def test_the_loop_state_holds_the_walkers_own_arrays():
    """The compiled loop reads and changes the walker through its structrefs: every
    field must be the very array (memory, shape, strides, dtype) the Python side
    holds under that name, and those are the walker's and its blocks' arrays.  The
    fields are borrowed (gto.engine._borrow): read back into Python, such an array
    has no owner (numba returns an owned array with its owner as base)."""
    from gto.engine._loop_state import SEARCH_FIELDS, TREE_FIELDS
    from gto.engine._tabu_loop import CompiledLoop
    P, W, X, y = make_walker(0, "product", p=1, classes=(0, 1))
    loop = CompiledLoop(W, 50, np.random.default_rng(0), (3, 1), 10, 5, 1e-4, 1.0, 1e-9, W.value,
                        1.0)
    for names, state, arrays in ((TREE_FIELDS, loop._state[0], loop.A),
                                 (SEARCH_FIELDS, loop._state[1], loop.S)):
        got = _state_fields(names)(state)
        assert len(got) == len(arrays) == len(names)
        for name, field in zip(names, got):
            held = getattr(arrays, name)
            pairs = zip(field, held, strict=True) if isinstance(held, tuple) else [(field, held)]
            for a, b in pairs:  # a tuple of scratch arrays: each of them
                assert (a.__array_interface__["data"][0], a.shape, a.strides, a.dtype) == \
                       (b.__array_interface__["data"][0], b.shape, b.strides, b.dtype), name
                assert a.base is None and not a.flags.owndata, name
    walker_of = {"Zt": W.Zt, "ELt": W.ELt, "ERt": W.ERt, "LE": W.LE, "H": W._H, "valid": W._valid,
                 "coef": W._coef, "stale": W._stale, "fresh": W._fresh, "X1t": W._X1t}
    for name, array in walker_of.items():
        assert getattr(loop.A, name) is array, name
    for d, b in enumerate(W.blocks):
        assert np.shares_memory(loop.A.theta[d], b.theta) and np.shares_memory(loop.A.Binv[d], b.Binv)
    assert loop.run(20) and loop.done == 20  # moves made through the state change the walker
    np.testing.assert_array_equal(W.theta(), loop.A.theta)
