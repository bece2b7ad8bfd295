"""The compiled EPTS loop sees the same argument types for every tree shape and
data set: numba compiles a loop again (about a minute, docs/speed.md) for each
new combination of array dtypes, dimensions and layouts it is called with.  The
same holds for a kernel called from several compiled functions: each of its call
sites passes the same types (no literal constant, no F-ordered array), so the
kernel is compiled once (docs/speed.md, "Cold compile time")."""
import numpy as np
import pytest
from numba import njit, typeof, types

import gto
from gto.engine import _hinge_loop, _kernels, _lp_kernels
from gto.engine._problem import TreeProblem
from gto.engine._tabu_loop import search_arrays, tree_arrays
from gto.engine._walker import walker_from_theta


def loop_types(structure, n_points, n_features, seed):
    """numba's types of the compiled loop's arrays for a walker on random data."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_points, n_features))
    tree = gto.Tree(structure, n_features)
    y = rng.integers(0, 2, n_points)
    P = TreeProblem(tree, X, y)
    walker = walker_from_theta(P, rng.normal(size=(P.layout.D, P.data.m)), P.objective("product"))
    A = tree_arrays(walker, 100)
    S = search_arrays(walker, A.off, 100, (3, 1, 10, 5), (1e-4, 1.0, 1e-9), walker.value, 1.0)
    return [typeof(a) for a in (*A, *S)]


@pytest.mark.parametrize("structure", [(0, 1), ((0, 1), 1), ((0, 1), (1, 0)),
                                       (((0, 1), (1, 0)), ((1, 0), (0, 1)))])
def test_every_tree_shape_gives_the_loop_the_types_of_a_depth_2_tree(structure):
    want = loop_types(((0, 1), (0, 1)), 60, 3, 0)
    assert loop_types(structure, 40, 1 + len(str(structure)) % 4, 1) == want


# -- one compiled type per kernel called from compiled code ---------------------------------
def call_types(caller, callee, *args):
    """Argument types of every call to ``callee`` in ``caller``, typed afresh here
    for ``args`` (numba's typing of the caller's source; a cached copy keeps none)."""
    fresh = njit(caller.py_func)
    fresh.compile(tuple(typeof(a) for a in args))
    annotation = next(iter(fresh.overloads.values())).type_annotation
    found = set()
    for expr, sig in annotation.calltypes.items():
        if getattr(expr, "op", None) == "call":
            kind = annotation.typemap[expr.func.name]
            if isinstance(kind, types.Dispatcher) and kind.dispatcher is callee:
                found.add(tuple(sig.args))
    assert found, f"{caller.__name__} does not call {callee.__name__}"
    return found


def _block_arrays(m=3, T=7, N=5):
    f, i, b = np.ones, (lambda n: np.arange(n, dtype=np.int64)), (lambda n: np.zeros(n, bool))
    return dict(rows=f((T, m)), tight=i(m), rhs=f(T), points=f((N, m)), Binv=f((m, m)),
                G=f((m, T)), H=f((m, N)), theta=f(m), r=f(T), ybasic=b(T), in_block=b(T),
                params=f(8), charge=f(T), rownorm=f(T))


def test_the_condition_test_is_one_compiled_type_for_its_compiled_callers():
    """The refactorisation passes LAPACK's F-ordered inverse as its C-ordered
    transpose, the hinge pivot an empty C array; both pass a non-literal flag."""
    a = _block_arrays()
    refactor_calls = call_types(_kernels.refactor, _lp_kernels.well_conditioned, a["rows"],
                                a["tight"], a["rhs"], 0, 1, a["points"], 1e13, a["Binv"], a["G"],
                                a["H"], a["theta"], a["r"], a["r"])
    pivot_calls = call_types(_hinge_loop._pivot_row, _lp_kernels.well_conditioned, a["rows"],
                             a["Binv"], a["G"], a["r"], a["ybasic"], a["in_block"], a["tight"], 0,
                             1.0, 0.0, 0.0, a["charge"], a["rownorm"], True, a["params"])
    assert len(refactor_calls | pivot_calls) == 1
    flags = [np.bool_(True), np.bool_(False)]
    estimate_calls = set.union(*(call_types(_lp_kernels.well_conditioned, _lp_kernels._estimate_within,
                                            a["Binv"], 1e13, a["Binv"], flag) for flag in flags))
    assert len(estimate_calls) == 1
    norm_calls = call_types(_lp_kernels._estimate_within, _lp_kernels.norm2_estimate, a["Binv"],
                            a["Binv"], np.bool_(True), 1e13)
    assert len(norm_calls) == 1


def test_the_ratio_tests_are_one_compiled_type_for_one_edge_and_all():
    a = _block_arrays()
    common = (a["r"], a["ybasic"], a["in_block"], 1e-9, 1e-7)
    all_calls = call_types(_kernels.ratio_all, _kernels._ratio_columns, a["G"], *common)
    one_calls = call_types(_kernels.ratio_one, _kernels._ratio_columns, a["G"], 0, 1.0, *common)
    assert len(all_calls | one_calls) == 1


@pytest.mark.parametrize("m", [5, 401])
def test_the_transposed_estimate_has_the_bits_of_the_fortran_ordered_inverse(m):
    """The refactorisation's estimate from the inverse's transpose (C-ordered) is the
    estimate from the F-ordered inverse itself, bit for bit (the same BLAS calls); the
    C-ordered copy need not be (it differs at m = 401)."""
    rng = np.random.default_rng(m)
    inverse = np.asfortranarray(np.linalg.inv(rng.normal(size=(m, m))))
    want = _lp_kernels.norm2_estimate(inverse, _lp_kernels.POWER_STEPS, False)
    assert _lp_kernels.norm2_estimate(inverse.T, _lp_kernels.POWER_STEPS, True) == want
