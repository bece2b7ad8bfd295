import numpy as np
import pytest

import gto
from gto.engine._formulation import build_triples, merge_duplicates

from truths import random_tree


def test_triples_follow_the_class_leaves():
    # leaves: 0 | 1 under decision 1 on the left; 0 | 1 under decision 2 on the right
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), 2)
    y = np.array([0, 1])
    t = build_triples(tree, y)
    got = set(zip(t.point.tolist(), t.decision.tolist(), t.side.tolist()))
    # class 0 reaches leaves 0 (L,L) and 2 (R,L); class 1 leaves 1 (L,R) and 3 (R,R)
    assert got == {(0, 0, -1), (0, 0, 1), (0, 1, -1), (0, 2, -1),
                   (1, 0, -1), (1, 0, 1), (1, 1, 1), (1, 2, 1)}
    for d in range(3):
        assert np.all(t.decision[t.start[d]:t.start[d + 1]] == d)


def test_unbalanced_tree_has_only_path_triples():
    tree = gto.Tree.from_structure((0, (1, 2)), 2)
    t = build_triples(tree, np.array([0, 1, 2]))
    got = set(zip(t.point.tolist(), t.decision.tolist(), t.side.tolist()))
    assert got == {(0, 0, -1), (1, 0, 1), (1, 1, -1), (2, 0, 1), (2, 1, 1)}


@pytest.mark.parametrize("seed", range(5))
def test_point_satisfies_standard_form(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 2 + seed % 3, [0, 1, 2], 3)
    X = rng.normal(size=(50, 3))
    y = rng.choice(np.unique(tree.leaf_classes), 50)
    y[:2] = np.unique(tree.leaf_classes)[:2]
    form, Xm, ym, w = gto.standard_form(tree, X, y)
    x = form.point(tree, Xm)
    assert np.allclose(form.A @ x, form.b, atol=1e-12)
    assert np.all(x[~form.free] >= 0)
    # the y part is max(0, margin): the decision errors of eq. 13-14
    T = len(form.triples)
    t = form.triples
    z = (Xm @ tree.W.T - tree.gamma)[t.point, t.decision]
    assert np.allclose(x[form.n_theta:form.n_theta + T], np.maximum(0, 1 - t.side * z))


def test_merge_duplicates_orders_rows_as_numpys_unique():
    """The merged rows, their order (which fixes the search's point order) and the
    inverse are those of ``np.unique(axis=0)``: rows on a coarse grid (many exact
    duplicates, ties in the leading columns), equal rows of different labels kept
    apart, -0.0 and 0.0 merged, and rows with NaN (numpy's own path)."""
    rng = np.random.default_rng(0)
    X = rng.integers(-2, 3, size=(300, 3)) / 2.0
    X[rng.uniform(size=X.shape) < 0.1] = -0.0
    y = rng.integers(0, 3, size=300)
    w = rng.uniform(0.5, 2.0, size=300)
    for Xc in (X, np.where(np.arange(300)[:, None] % 97 == 5, np.nan, X)):
        _, codes = np.unique(y, return_inverse=True)
        _, first, inverse = np.unique(np.column_stack([Xc, codes.astype(float)]), axis=0,
                                      return_index=True, return_inverse=True)
        Xm, ym, wm, inv = merge_duplicates(Xc, y, w)
        assert np.array_equal(Xm, Xc[first], equal_nan=True) and np.array_equal(ym, y[first])
        assert np.array_equal(inv, inverse.reshape(-1)) and len(Xm) < 300
        assert np.allclose(wm, np.bincount(inverse.reshape(-1), weights=w))


def test_merge_duplicates_sums_weights():
    X = np.array([[1.0, 2], [1, 2], [1, 2], [3, 4]])
    y = np.array([0, 0, 1, 1])
    Xm, ym, w, inv = merge_duplicates(X, y, np.array([1.0, 2.0, 1.0, 1.0]))
    assert len(Xm) == 3 and w.sum() == 5
    assert np.array_equal(Xm[inv], X) and np.array_equal(ym[inv], y)
    tree = gto.Tree.from_structure((0, 1), 2, W=[[1, -1]], gamma=[0.3])
    for objective in gto.OBJECTIVES:
        assert gto.error(tree, Xm, ym, objective, sample_weight=w) == pytest.approx(
            gto.error(tree, X, y, objective, sample_weight=[1.0, 2, 1, 1])
        )
