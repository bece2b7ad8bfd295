"""Local instances of a window (Schidler & Szeider 2021, §3 and §5).

A *window* T' is a set of decisions below a local root r.  Its leaves are
leaves of T or roots u_i of subtrees hanging below it.  The local instance
keeps the samples reaching r; a sample ending at a leaf of T keeps that leaf's
(predicted) class, one ending at u_i gets the new class s + i of weight
height(T_{u_i}) (the weighted local instance I'_w).

A *test* is ``(f, "le", t)`` (left iff ``x_f <= t``) or ``(f, "in", values)``
(left iff ``x_f`` is one of ``values``: a subset decision); binarised, True
means right.  Candidate tests on the window's samples: the tests the input
tree uses on f (its thresholds and subsets), then the midpoints between
consecutive values of x_f; on a *categorical* feature also the equality tests
``x_f == v`` for each value v present (the paper's binarisation, "a binary
identifier to each distinct value", §6).  Tests that split the window's
samples identically (or not at all) are kept once, the earliest first, so a
local tree reuses the input tree's tests where it can and a threshold is
preferred to an equality test that splits alike.
"""
from __future__ import annotations

import numpy as np

from .nodes import height


def grow_window(r, rows_of, heights, labels_code, max_depth, fits):
    """Grow a window from ``r`` greedily (paper §5): add all frontier decisions of
    maximal subtree height while the depth stays <= ``max_depth`` and ``fits(window)``.

    ``rows_of`` maps id(node) to the training rows reaching it, ``heights``
    id(node) to its height.  Returns the list of window decisions (r first) or
    None when r is a leaf.
    """
    if r.is_leaf:
        return None
    window, depth_of = [r], {id(r): 0}
    while True:
        frontier = [(c, depth_of[id(n)] + 1) for n in window for c in (n.left, n.right)
                    if not c.is_leaf and id(c) not in depth_of]
        if not frontier:
            return window
        hmax = max(heights[id(c)] for c, _ in frontier)
        add = [(c, d) for c, d in frontier if heights[id(c)] == hmax]
        if max(d for _, d in add) + 1 > max_depth:
            return window
        trial = window + [c for c, _ in add]
        if not fits(trial):
            return window
        for c, d in add:
            depth_of[id(c)] = d
        window = trial


def window_leaves(window):
    """Leaves of the window with their depth below r, in left-to-right order."""
    inside = {id(n) for n in window}
    out = []

    def walk(n, d):
        if id(n) in inside:
            walk(n.left, d + 1)
            walk(n.right, d + 1)
        else:
            out.append((n, d))

    walk(window[0], 0)
    return out


def local_classes(window, rows_of, label_code, heights):
    """(rows, cls, weights, hanging, wdepth, depth) of the weighted local instance I'_w.

    ``hanging[i]`` is the node u_i standing for class s + i; ``wdepth`` is
    d_w(T') and ``depth`` d(T').
    """
    s = len(label_code)
    leaves = window_leaves(window)
    rows, cls, hanging = [], [], []
    weights = [0] * s
    wdepth = depth = 0
    for node, d in leaves:
        depth = max(depth, d)
        if node.is_leaf:
            c = label_code[node.label]
            wdepth = max(wdepth, d)
        else:
            c = s + len(hanging)
            hanging.append(node)
            weights.append(heights[id(node)])
            wdepth = max(wdepth, d + heights[id(node)])
        r = rows_of[id(node)]
        rows.append(r)
        cls.append(np.full(len(r), c, dtype=np.int64))
    return (np.concatenate(rows), np.concatenate(cls), np.array(weights, dtype=np.int64),
            hanging, wdepth, depth)


def node_test(n):
    """The test of an axis-aligned decision node (module doc)."""
    if n.subset is not None:
        return (int(n.subset[0]), "in", tuple(n.subset[1]))
    f = int(np.flatnonzero(n.w)[0])
    return (f, "le", n.gamma / n.w[f])  # w[f] > 0 (checked on input)


def window_tests(window):
    """The tests of an axis-aligned window (the paper's feat(T'))."""
    return [node_test(n) for n in window]


def binarize(X, tests):
    """Boolean matrix, True where a row goes right at a test."""
    out = np.zeros((len(X), len(tests)), dtype=bool)
    le = [j for j, t in enumerate(tests) if t[1] == "le"]
    if le:
        f = np.array([tests[j][0] for j in le])
        thr = np.array([tests[j][2] for j in le])
        out[:, le] = X[:, f] > thr
    for j, (f, kind, arg) in enumerate(tests):
        if kind == "in":
            out[:, j] = ~np.isin(X[:, f], arg)
    return out


def candidate_tests(X, tree_tests, categorical=(), max_cells=50_000_000):
    """Tests for the rows X of a window: the tree's own tests (``tree_tests``: feature ->
    list of tests), midpoints, equality tests on ``categorical`` features (module doc);
    None when rows x tests would exceed ``max_cells``."""
    tests = []
    categorical = set(categorical)
    for f in range(X.shape[1]):
        vals = np.unique(X[:, f])
        if len(vals) < 2:
            continue
        own = [t for t in tree_tests.get(f, ()) if t[1] == "in" or vals[0] <= t[2] < vals[-1]]
        tests += own + [(f, "le", t) for t in (vals[:-1] + vals[1:]) / 2]
        if f in categorical and len(vals) > 2:
            tests += [(f, "in", (v.item(),)) for v in vals]
        if len(tests) * len(X) > max_cells:
            return None
    return distinct_tests(X, tests)


def distinct_tests(X, tests):
    """Drop tests that do not split X or split it like an earlier test."""
    B = binarize(X, tests)
    keep = B.any(axis=0) & ~B.all(axis=0)
    canon = B ^ B[:1]  # a test and its complement split alike
    _, first = np.unique(np.packbits(canon, axis=0), axis=1, return_index=True)
    chosen = np.zeros(len(tests), dtype=bool)
    chosen[first] = True
    return [t for t, k, c in zip(tests, keep, chosen) if k and c]


def reduce_rows(B, cls):
    """Distinct (row, class) pairs: the samples of R_F(I'_w); None if two classes share a row."""
    packed = np.packbits(B, axis=1)
    key = np.column_stack([packed, cls.astype(np.uint32).view(np.uint8).reshape(len(cls), 4)])
    _, first = np.unique(np.ascontiguousarray(key).view(f"V{key.shape[1]}").ravel(),
                         return_index=True)
    rows = np.ascontiguousarray(packed[first])
    if len(np.unique(rows.view(f"V{rows.shape[1]}").ravel())) != len(first):
        return None
    return B[first], cls[first]


def support_set(B, cls, max_cells=30_000_000):
    """A small support set (paper §5): greedy cover of the pairs of different classes
    (Boros et al. 2003), then dropping features that are not needed.  None if too large."""
    n, k = B.shape
    iu, ju = np.triu_indices(n, 1)
    differ = cls[iu] != cls[ju]
    iu, ju = iu[differ], ju[differ]
    if len(iu) * k > max_cells:
        return None
    sep = B[iu] != B[ju]  # (pairs, k)
    if len(iu) and not sep.any(axis=1).all():
        return None
    chosen, open_ = [], np.ones(len(iu), dtype=bool)
    while open_.any():
        j = int(np.argmax(sep[open_].sum(axis=0)))
        chosen.append(j)
        open_ &= ~sep[:, j]
    for j in list(chosen):  # removal pass: keep F a support set
        rest = [i for i in chosen if i != j]
        if rest and sep[:, rest].any(axis=1).all():
            chosen = rest
    return sorted(chosen)


__all__ = ["grow_window", "window_leaves", "local_classes", "node_test", "window_tests",
           "binarize",
           "candidate_tests", "reduce_rows", "support_set", "height"]
