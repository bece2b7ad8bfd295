"""Sparse vertices, the L1 penalty and the feature budget (issue 10, DESIGN §3b),
against independent truths: a brute-force axis-aligned depth-2 optimiser,
planted sparse trees, scikit-learn's own CART predictions and the penalty
evaluated literally from the returned tree."""
import copy

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto.problem import TreeProblem
from gto.walker import walker_from_theta
from conftest import random_tree

DEPTH2 = ((0, 1), (0, 1))


# -- brute force: axis-aligned depth-2 trees, the independent truth -------------------------
def best_stump_errors(X, y, subset, leaves=(0, 1)):
    """Fewest errors of one axis-aligned split of the points ``subset`` whose left leaf
    is ``leaves[0]`` and right leaf ``leaves[1]`` (or free leaves if ``leaves`` is None).

    Either orientation (``x_f <= t`` or ``x_f >= t`` goes left, i.e. w = +-e_f) and
    thresholds between distinct values or outside the range (all points to one
    side), counted by prefix sums over each feature's order.
    """
    Xs, ys = X[subset], y[subset]
    if len(ys) == 0:
        return 0
    best = np.inf
    for f in range(X.shape[1]):
        order = np.argsort(Xs[:, f], kind="stable")
        v, c = Xs[order, f], ys[order]
        ones = np.concatenate([[0], np.cumsum(c == 1)])  # class 1 among the first i
        zeros = np.concatenate([[0], np.cumsum(c == 0)])
        cut = np.concatenate([[True], v[1:] > v[:-1], [True]])  # a threshold fits after i
        n1, n0 = ones[-1], zeros[-1]
        i = np.arange(len(c) + 1)
        first = {0: zeros, 1: ones}  # counts among the first i
        rest = {0: n0 - zeros, 1: n1 - ones}
        if leaves is None:  # each side takes its majority
            err = np.minimum(ones, zeros) + np.minimum(rest[0], rest[1])
        else:
            a, b = leaves
            # x_f <= t goes left: the first i points to leaf a, the rest to leaf b
            forward = (i - first[a]) + ((len(c) - i) - rest[b])
            # x_f >= t goes left (w = -e_f): the rest to leaf a, the first i to leaf b
            backward = ((len(c) - i) - rest[a]) + (i - first[b])
            err = np.minimum(forward, backward)
        best = min(best, int(err[cut].min()))
    return best


def brute_force_depth2(X, y, free_leaves=False):
    """Exact fewest training errors of axis-aligned depth-2 trees ((0, 1), (0, 1))
    (or with free leaf classes): every root split, best child split on each side."""
    leaves = None if free_leaves else (0, 1)
    N = len(y)
    best = np.inf
    for f in range(X.shape[1]):
        order = np.argsort(X[:, f], kind="stable")
        v = X[order, f]
        for i in range(N + 1):
            if 0 < i < N and v[i - 1] == v[i]:
                continue  # no threshold separates equal values
            left, right = order[:i], order[i:]
            e = best_stump_errors(X, y, left, leaves) + best_stump_errors(X, y, right, leaves)
            best = min(best, e)
    return int(best)


def test_brute_force_on_a_tiny_instance_matches_enumeration():
    """The prefix-sum optimiser against plain enumeration of every tree (tiny data)."""
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(9, 2)).astype(float)
    y = rng.integers(0, 2, 9)
    thresholds = [np.unique(X[:, f]) for f in range(2)]

    def splits():  # every axis-aligned split: (feature, threshold, orientation)
        for f in range(2):
            for t in np.concatenate([[-np.inf], thresholds[f], [np.inf]]):
                for s in (1.0, -1.0):
                    yield f, t, s

    def goes_left(Xs, f, t, s):
        return Xs[:, f] <= t if s > 0 else Xs[:, f] >= t

    best = np.inf
    for f0, t0, s0 in splits():
        left = goes_left(X, f0, t0, s0)
        total = 0
        for side in (left, ~left):
            Xs, ys = X[side], y[side]
            total += min(int(np.sum(np.where(goes_left(Xs, f, t, s), ys != 0, ys != 1)))
                         for f, t, s in splits())
        best = min(best, total)
    assert brute_force_depth2(X, y) == best
