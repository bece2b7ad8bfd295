"""Leaf classes as variables: ``gto.optimize(..., leaves="free")`` (DESIGN §9).

The search of :func:`gto.optimize` walks the vertices of the polytope of one
labelling of the leaves (DESIGN §1-3: the triples of a point exist only on
the paths to the leaves of its class), so the labels are fixed within a
search.  With ``leaves="free"`` they become variables of an outer loop:

1. the given tree's leaves take the weighted majority class of the training
   points reaching them (:func:`majority_labels`; never more errors, as the
   splits do not move);
2. a portfolio over label patterns (:func:`label_patterns`): the labellings of
   the shape up to swapping the children of a decision (a hyperplane's sign
   flip) in which no decision has one class on all its leaves (such a
   decision could be dropped, so another pattern does at least as well), each
   placed on the given splits in the orientation with the fewest errors
   (:func:`orient`); the ``MAX_PATTERNS`` with the fewest errors on the given
   splits are searched besides the majority labelling.  For two classes and a
   complete tree there is one such pattern, the alternating one (Figure 2):
   every lowest decision must separate the two classes;
3. each labelling is searched with its labels kept, then relabelled by
   majority again; while that lowers the errors the search runs again from
   the relabelled tree (at most ``MAX_PASSES`` searches per labelling), so the
   labels are re-chosen as the search moves the splits.

The answer is the tree with the fewest training errors (ties by objective;
with ``alpha > 0`` the lowest penalised objective) over all of these and the
majority-labelled given tree (the first start), so never more errors than the given tree
(when its own labels, or the majority's, hold every class of y; else only the
patterns are searched).  With more classes than leaves no labelling holds them
all: any labelling is searched (:func:`holds_classes`), and the points of the
classes left without a leaf are errors whatever the decisions
(:func:`gto.optimize` sets them apart), as in a CART tree of that size.
"""
from __future__ import annotations

import itertools
import time

import numpy as np

from ..engine._starts import cart_splits
from ..engine._svm_start import C as SVM_C
from ..engine._svm_start import svm_tree
from ..model.tree import Tree
from ..utils._validation import check_labels, check_sample_weight, check_X, leaf_class_points
from ..utils.status import Status

LEAVES = ("auto", "keep", "free")
#: label patterns searched besides the given tree's majority labelling
MAX_PATTERNS = 3
#: enumerate patterns only while a node has at most this many (else: majority labels only)
PATTERN_LIMIT = 20_000
#: searches per labelling: the first, then again while a majority relabelling pays
MAX_PASSES = 3


def check_leaves(leaves, tree):
    """The mode ``"keep"`` or ``"free"`` of ``leaves``; "auto" is "free" for a tree
    with splits (a fitted tree handed in to be refined) and "keep" for a bare
    structure (its labels are then the user's choice of the hypothesis class, as
    in the paper)."""
    if not isinstance(leaves, str) or leaves not in LEAVES:
        raise ValueError(f"leaves must be one of {LEAVES}, got {leaves!r}")
    if leaves == "auto":
        return "free" if np.any(tree.W != 0) else "keep"
    return leaves


def with_labels(tree, labels):
    """Copy of ``tree`` (same shape and splits) with leaf classes ``labels``."""
    labels = np.asarray(labels)

    def build(child):
        kind, i = child
        if kind == "l":
            label = labels[i]
            return label.item() if isinstance(label, np.generic) else label  # object arrays
        left, right = tree.children[i]
        return (build(left), build(right))

    new = Tree(build(("d", 0)), tree.n_features, W=tree.W, gamma=tree.gamma,
               subsets=tree.subsets)
    new.feature_names, new.target = tree.feature_names, tree.target
    return new


def leaf_weights(tree, X, y, w, classes):
    """(K, C) training weight of each class of ``classes`` in each leaf (points of
    other classes left out)."""
    counts = np.zeros((tree.n_leaves, len(classes)))
    keep = np.isin(y, classes)
    np.add.at(counts, (tree.apply(X[keep]), np.searchsorted(classes, y[keep])), w[keep])
    return counts


def majority_labels(tree, counts, classes):
    """Per leaf the class of the largest weight in it; a tie or an empty leaf keeps
    the leaf's own class when that is among the largest."""
    labels = classes[np.argmax(counts, axis=1)].astype(
        np.result_type(classes.dtype, tree.leaf_classes.dtype))
    for k, own in enumerate(tree.leaf_classes):
        j = np.searchsorted(classes, own)
        if j < len(classes) and classes[j] == own and counts[k, j] >= counts[k].max():
            labels[k] = own
    return labels


def _shape(tree, child):
    """Canonical key of the subtree shape at ``child`` (children unordered)."""
    kind, i = child
    if kind == "l":
        return "l"
    return tuple(sorted((_shape(tree, c) for c in tree.children[i]), key=repr))


def label_patterns(tree, classes, limit=PATTERN_LIMIT):
    """Labellings of ``tree``'s shape up to child swaps, without a decision whose
    leaves all share a class; nested tuples, children of isomorphic shape in
    sorted order.  None if a node would have more than ``limit``."""
    values = [c.item() if isinstance(c, np.generic) else c for c in classes]

    def walk(child):
        kind, i = child
        if kind == "l":
            return [("leaf", v) for v in values]
        left, right = tree.children[i]
        L, R = walk(left), walk(right)
        if L is None or R is None or len(L) * len(R) > limit:
            return None
        if _shape(tree, left) == _shape(tree, right):
            pairs = itertools.combinations_with_replacement(sorted(L, key=repr), 2)
        else:
            pairs = itertools.product(L, R)
        return [(a, b) for a, b in pairs if not (a[0] == "leaf" and a == b)]

    return walk(("d", 0))


def orient(tree, pattern, cost, classes):
    """``(errors, labels)``: the pattern placed on ``tree``'s leaves in the
    orientation (child swaps where the shapes allow) with the least weight
    misplaced; ``cost[k, c]``: weight in leaf k not of class c."""
    return orienter(tree, cost, classes)(pattern)


def orienter(tree, cost, classes):
    """:func:`orient` as a function of the pattern alone, for many patterns on one tree
    and ``cost``: the best placement of each sub-pattern at each node is computed once
    and shared (the patterns of a deep tree share most of their sub-patterns)."""
    index = {(c.item() if isinstance(c, np.generic) else c): j for j, c in enumerate(classes)}
    children = tree.children
    twins = [_shape(tree, left) == _shape(tree, right) for left, right in children]
    best_at = {}

    def place(child, pat):
        kind, i = child
        if kind == "l":
            return cost[i, index[pat[1]]], {i: pat[1]}
        if (i, pat) in best_at:
            return best_at[i, pat]
        left, right = children[i]
        a, b = pat
        options = [(left, a, right, b)]
        if twins[i] and a != b:
            options.append((left, b, right, a))
        best = None
        for l_child, l_pat, r_child, r_pat in options:
            el, ll = place(l_child, l_pat)
            er, lr = place(r_child, r_pat)
            if best is None or el + er < best[0]:
                best = (el + er, {**ll, **lr})
        best_at[i, pat] = best
        return best

    def oriented(pattern):
        errors, placed = place(("d", 0), pattern)
        return float(errors), np.array([placed[k] for k in range(tree.n_leaves)])

    return oriented


def labellings(tree, X, y, w):
    """``[(errors on the given splits, labels)]``: the majority labelling first (the
    tree's own labels if the majority leaves out a class of y), then up to
    MAX_PATTERNS oriented patterns, fewest errors first; each holds every class
    of y (unless y has more classes than the tree leaves, :func:`holds_classes`),
    none twice."""
    classes = np.unique(y[w > 0])
    counts = leaf_weights(tree, X, y, w, classes)
    present = set(classes.tolist())
    out = []
    for labels in (majority_labels(tree, counts, classes), tree.leaf_classes):
        if holds_classes(labels, present):
            out.append((_errors(counts, labels, classes), labels))
            break
    patterns = label_patterns(tree, classes)
    if patterns is None:
        return out
    cost = counts.sum(axis=1, keepdims=True) - counts
    oriented = orienter(tree, cost, classes)
    placed = sorted((oriented(p) for p in patterns), key=lambda e: e[0])
    extra = [(e, lab) for e, lab in placed if holds_classes(lab, present)]
    for errors, labels in extra:
        if len(out) > MAX_PATTERNS:
            break
        if not any(np.array_equal(labels, o[1]) for o in out):
            out.append((errors, labels))
    return out


def holds_classes(labels, present):
    """Whether a labelling of the leaves may be searched: it holds every class of
    ``present``, or, when there are more classes than leaves, any labelling (the
    points of a class without a leaf are errors whatever the decisions, and
    :func:`gto.optimize` sets them apart)."""
    return len(present) > len(labels) or present <= set(labels.tolist())


def heaviest_classes(classes, y, w, k):
    """The (at most) ``k`` classes of ``classes`` with the largest total weight in ``y``
    (``w`` None: counts), ties to the smaller label, in sorted order: the leaves'
    classes of the default tree when there are more classes than leaves."""
    if len(classes) <= k:
        return classes
    weight = np.zeros(len(classes))
    np.add.at(weight, np.searchsorted(classes, y), 1.0 if w is None else w)
    return classes[np.sort(np.argsort(-weight, kind="stable")[:k])]


def cart_candidates(tree, X, y, w=None):
    """``[(errors, labels)]``: the labellings of :func:`labellings` of ``tree``'s leaves
    on the splits of the CART tree of its shape (:func:`gto.engine._starts.cart_splits`),
    both fitted to and scored on the points of the classes ``tree``'s leaves hold;
    fewest errors first (ties: the majority labelling first, then as
    :func:`labellings` lists them)."""
    Xk, yk, wk = _leaf_class_data(tree, X, y, w)
    shaped = tree.copy()
    shaped.W, shaped.gamma = cart_splits(tree, Xk, yk, wk)
    return sorted(labellings(shaped, Xk, yk, wk), key=lambda item: item[0])  # stable


def arrange_classes(tree, X, y, w=None, C=SVM_C, random_state=None):
    """``tree`` (a bare complete structure whose leaves hold the classes to place) with
    those classes arranged on its leaves: of the candidates of :func:`cart_candidates`
    (the groupings that CART's splits separate well), the one whose linear-SVM tree
    (:func:`gto.engine._svm_start.svm_tree`, L2 penalty, ``C``) has the fewest
    training errors on the points of those classes, ties to the first.  Which classes
    share a subtree decides what a multi-class tree of fixed shape can separate (the
    sorted order pairs classes arbitrarily), and CART's axis-parallel favourite is not
    always the grouping oblique splits separate best (docs/decisions.md)."""
    todo = cart_candidates(tree, X, y, w)
    if len(todo) < 2:
        return tree if not todo else with_labels(tree, todo[0][1])
    Xk, yk, wk = _leaf_class_data(tree, X, y, w)
    errors = [svm_tree(with_labels(tree, labels), Xk, yk, wk, C=C,
                       random_state=random_state)[0].n_errors(Xk, yk, wk)
              for _, labels in todo]
    return with_labels(tree, todo[int(np.argmin(errors))][1])


def _leaf_class_data(tree, X, y, w):
    """``(X, y, w)`` of the points whose class has a leaf in ``tree`` (``w`` None: ones)."""
    keep, _ = leaf_class_points(tree, y)
    return X[keep], y[keep], np.ones(keep.sum()) if w is None else np.asarray(w, dtype=float)[keep]


def _errors(counts, labels, classes):
    j = np.searchsorted(classes, labels)
    ok = (j < len(classes)) & (classes[np.minimum(j, len(classes) - 1)] == labels)
    right = np.where(ok, counts[np.arange(len(labels)), np.minimum(j, len(classes) - 1)], 0.0)
    return float(counts.sum() - right.sum())


def optimize_free(search, tree, X, y, sample_weight, time_limit, alpha):
    """The loop of the module docstring.  ``search(tree, time_limit)`` is
    :func:`gto.optimize` with the leaves kept; returns its result for the best
    tree, with ``start_n_errors`` of the given tree and ``leaf_patterns``: per
    labelling tried, its labels, errors on the given splits and after the
    search."""
    t0 = time.perf_counter()
    deadline = None if time_limit is None else time.time() + time_limit
    Xc, yc = check_X(X, tree.n_features), check_labels(y, len(X))
    wc = check_sample_weight(sample_weight, len(Xc))
    given = tree.n_errors(Xc, yc, wc)
    todo = labellings(tree, Xc, yc, wc)
    if not todo:
        raise ValueError("leaves='free': no labelling of the tree's leaves holds every class "
                         "of y; give a tree with more leaves")
    best, tried, nit = None, [], 0
    for n, (start_errors, labels) in enumerate(todo):
        current, record = with_labels(tree, labels), {"leaf_classes": labels.tolist(),
                                                      "start_n_errors": start_errors}
        for _ in range(MAX_PASSES):  # search, relabel by majority, again while that pays
            share = None if deadline is None else max(
                (deadline - time.time()) / (len(todo) - n), 1e-3)
            res = search(current, share)
            nit += res.nit
            best = _better(best, res, alpha)
            current = _relabel(res.tree, Xc, yc, wc)
            if current is None or res.status == Status.INTERRUPTED or (
                    deadline is not None and time.time() >= deadline):
                break
        record["n_errors"] = float(res.n_errors)
        tried.append(record)
        if res.status == Status.INTERRUPTED or (deadline is not None and time.time() >= deadline):
            break
    best.start_n_errors = int(given) if float(given).is_integer() else float(given)
    best.leaf_patterns, best.nit, best.time = tried, nit, time.perf_counter() - t0
    return best


def _relabel(tree, X, y, w):
    """The majority relabelling of a searched tree if it has fewer errors and still a
    leaf of every class of y (:func:`holds_classes`), else None."""
    classes = np.unique(y[w > 0])
    counts = leaf_weights(tree, X, y, w, classes)
    labels = majority_labels(tree, counts, classes)
    if np.array_equal(labels, tree.leaf_classes) or not holds_classes(
            labels, set(classes.tolist())):
        return None
    if _errors(counts, labels, classes) >= _errors(counts, tree.leaf_classes, classes):
        return None
    return with_labels(tree, labels)


def _better(best, res, alpha):
    """The better of two optimize results (fewest errors, ties by objective; with a
    penalty the lowest penalised objective)."""
    if best is None:
        return res
    key = (lambda r: (r.fun,)) if alpha > 0 else (lambda r: (r.n_errors, r.fun))
    return res if key(res) < key(best) else best
