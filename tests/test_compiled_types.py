"""The compiled EPTS loop sees the same argument types for every tree shape and
data set: numba compiles a loop again (about a minute, docs/speed.md) for each
new combination of array dtypes, dimensions and layouts it is called with."""
import numpy as np
import pytest
from numba import typeof

import gto
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
