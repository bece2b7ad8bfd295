"""A linear-SVM tree of a given structure (STree-style, Montañana et al.).

Each decision, top down in preorder, is scikit-learn's ``LinearSVC`` fitted on
the points that reach it (standardised features, the scaling folded back), to
send each point towards the subtree that holds its class.  It is the
``"svm"`` candidate of ``GTOClassifier``'s internal model selection: with
``penalty="l1"`` a 1-norm SVM at each decision (sparse weights, the convex
analogue of GTO's ``alpha`` penalty, docs/DESIGN.md §3b), weighed by the CV against
GTO's searched trees; with ``penalty="l2"`` the max-margin start of the
estimator's unpenalised search.
"""
from __future__ import annotations

import warnings
from functools import lru_cache
from numbers import Integral

import numpy as np
from sklearn import config_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC
from sklearn.utils import check_random_state

from ..model.tree import Tree, as_tree
from ._scaling import Scaler

try:  # scikit-learn's liblinear binding and solver table, as LinearSVC.fit uses them
    from sklearn.svm import _liblinear
    from sklearn.svm._base import _get_liblinear_solver_type
except ImportError:  # pragma: no cover - a scikit-learn that moved them: LinearSVC itself
    _liblinear = None

#: LinearSVC's penalty parameter (scikit-learn's and STree's default)
C = 1.0
PENALTIES = ("l1", "l2")
#: LinearSVC's settings that svm_tree keeps (its default tolerance; a cap on iterations)
TOL, MAX_ITER = 1e-4, 10_000


def linear_svc(Z, target, sample_weight, C, penalty, intercept_scaling, random_state):
    """``(coef, intercept, n_iter)`` of ``LinearSVC(C=C, penalty=penalty, dual="auto"
    for "l2" else False, intercept_scaling=intercept_scaling,
    random_state=random_state, max_iter=MAX_ITER).fit(Z, target, sample_weight)``,
    bit for bit: ``Z`` float64 C-ordered, ``target`` boolean with both values,
    ``sample_weight`` float64 (no checks: svm_tree's arrays are checked already).

    Why not LinearSVC itself: its checks and bookkeeping around liblinear (data
    and label validation, a label encoder, class weights, a fresh ``RandomState``
    per fit for the solver's seed) cost several times liblinear's own fit on a
    decision's few hundred points, and an auto fit runs dozens of them
    (docs/speed.md).  This calls the same binding with the same arguments;
    the test suite holds it to LinearSVC's coefficients.  Liblinear's
    non-convergence warning is not raised (svm_tree ignored it).  A scikit-learn
    whose binding is gone or takes other arguments gets LinearSVC itself, from the
    first such call on."""
    global _liblinear
    if _liblinear is not None:
        dual = penalty == "l2" and Z.shape[0] < Z.shape[1]  # LinearSVC's dual="auto"
        solver = _get_liblinear_solver_type("ovr", penalty, "squared_hinge", dual)
        _liblinear.set_verbosity_wrap(0)
        try:
            raw, n_iter = _liblinear.train_wrap(
                Z, target.astype(np.float64), False, solver, TOL, intercept_scaling, C,
                np.ones(2), MAX_ITER, _solver_seed(random_state), 0.1, sample_weight)
        except TypeError:  # another signature: this scikit-learn's LinearSVC from now on
            _liblinear = None
        else:
            return raw[:, :-1], intercept_scaling * raw[:, -1], int(n_iter.max())
    return _linear_svc_estimator(Z, target, sample_weight, C, penalty, intercept_scaling,
                                 random_state)


def _solver_seed(random_state):
    """The seed scikit-learn's ``_fit_liblinear`` hands liblinear for ``random_state``:
    the first ``randint`` of ``check_random_state(random_state)``, a function of
    the seed alone for an int (so kept, not a new ``RandomState`` per fit), a draw
    from the generator otherwise."""
    if isinstance(random_state, Integral):
        return _int_seed(int(random_state))
    return _drawn_seed(random_state)


def _drawn_seed(random_state):
    return check_random_state(random_state).randint(np.iinfo("i").max)


_int_seed = lru_cache(maxsize=64)(_drawn_seed)


def _linear_svc_estimator(Z, target, sample_weight, C, penalty, intercept_scaling,
                          random_state):
    """:func:`linear_svc` through scikit-learn's estimator (the slower path)."""
    svm = LinearSVC(C=C, penalty=penalty, dual="auto" if penalty == "l2" else False,
                    intercept_scaling=intercept_scaling, random_state=random_state,
                    max_iter=MAX_ITER)
    with warnings.catch_warnings(), config_context(assume_finite=True,
                                                   skip_parameter_validation=True):
        # checked data and parameters: scikit-learn's checks cost as much as the fit
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(Z, target, sample_weight=sample_weight)
    return svm.coef_, svm.intercept_, int(svm.n_iter_)


def node_targets(tree, d, y):
    """Side (-1 left, +1 right, 0 no preference) decision ``d`` should send each
    label of ``y`` to: the side whose subtree holds a leaf of that class; a
    class with leaves on both sides goes alternately left and right in sorted
    class order (the root of the cyclic complete tree: first class left)."""
    sides = tree.sides[:, d]
    labels = tree.leaf_classes
    left, right = set(labels[sides < 0].tolist()), set(labels[sides > 0].tolist())
    side = {}
    both = sorted(left & right)
    for i, c in enumerate(both):
        side[c] = -1 if i % 2 == 0 else 1
    for c in left - right:
        side[c] = -1
    for c in right - left:
        side[c] = 1
    classes, codes = np.unique(y, return_inverse=True)  # per class, not per point
    return np.array([side.get(c, 0) for c in classes.tolist()], dtype=np.int8)[codes.reshape(-1)]


def svm_tree(tree, X, y, sample_weight=None, C=C, random_state=None, max_depth=None,
             penalty="l2", intercept_scaling=1.0):
    """``tree``'s structure and leaf classes with every decision a linear SVM.

    ``penalty``: "l2", scikit-learn's ``LinearSVC`` as it comes (every weight
    nonzero); "l1", the 1-norm SVM ``LinearSVC(penalty="l1", dual=False)``
    (squared hinge loss), whose zero weights leave features out of the rule.

    ``intercept_scaling``: ``LinearSVC``'s (liblinear's) constant column: the
    intercept is fitted as the weight of that column, so it is penalised like
    the others unless the column is large (the intercept's weight is then small
    for the same intercept).  Scikit-learn's default 1 penalises it fully.

    With ``max_depth`` only the decisions above that depth (the root at depth
    0) are SVMs (a pruned tree in the fixed structure, e.g. ``max_depth=1``:
    one linear classifier).

    A decision with no SVM (pruned by ``max_depth``, or whose points all want
    one side, or that no point reaches) or whose SVM keeps no nonzero weight
    (an L1 fit with a small ``C``; not left to the sign of its intercept)
    acts on no point (``w = 0``): it sends every point to the side most of
    its training points (by weight) want, ties to the left.  Returns
    ``(tree, n_iter)``: a new ``gto.Tree`` with the training data recorded
    (:meth:`gto.Tree.record_training`) and the solver iterations of all its
    SVM fits."""
    if penalty not in PENALTIES:
        raise ValueError(f"penalty must be one of {PENALTIES}, got {penalty!r}")
    tree = as_tree(tree).copy()
    X = np.asarray(X, dtype=float)
    y = np.asarray(y)
    w = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    scaler = Scaler(X, diagonal=True)  # standardised features, constant ones 0
    Z = scaler.transform(X)
    W, gamma = np.zeros((tree.n_decisions, tree.n_features)), np.zeros(tree.n_decisions)
    reach = np.ones((tree.n_decisions, len(y)), dtype=bool)
    depth = np.zeros(tree.n_decisions, dtype=np.int64)
    n_iter = 0
    for d in range(tree.n_decisions):  # preorder: ancestors are fitted first
        target = node_targets(tree, d, y)
        at = reach[d] & (target != 0) & (w > 0)
        sides = np.unique(target[at])
        # w = 0: everything to the side most of the points want (gamma -1: right)
        gamma[d] = -1.0 if w[at] @ (target[at] > 0) > w[at] @ (target[at] < 0) else 1.0
        if len(sides) == 2 and (max_depth is None or depth[d] < max_depth):
            coef, intercept, iters = linear_svc(Z[at], target[at] > 0, w[at], C, penalty,
                                                intercept_scaling, random_state)
            n_iter += iters
            if coef.any():  # w·z + b > 0: right
                W[d], gamma[d] = coef[0], -intercept[0]
        go_right = Z @ W[d] - gamma[d] > 0
        for child, right in zip(tree.children[d], (False, True)):
            if child[0] == "d":
                reach[child[1]] = reach[d] & (go_right == right)
                depth[child[1]] = depth[d] + 1
    W, gamma = scaler.to_original(W, gamma)  # the scaling folded back
    out = Tree(tree.structure, tree.n_features, W=W, gamma=gamma)
    return out.record_training(X, y, sample_weight), n_iter
