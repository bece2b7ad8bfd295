"""Capacity control across depths for ``GTOClassifier`` (DESIGN §6).

A complete tree of depth k + 1 contains every tree of depth k (a decision can
send all its points one way), so on the training data a deeper search is never
worse in principle; held out it can be, and GTO's searched depth-3 trees were
(one set at 18.0 % where its depth-2 tree had 16.8 %).  CART answers this with
cost-complexity pruning: grow deep, then cut back the decisions that do not
pay, choosing how much by cross-validation.  The analogue for fixed-shape
searched trees: the tree of depth k - 1 is a candidate of the selection too,
found by the estimator's own fit at that depth (its own grid and search, so the
shallower candidate is as good as GTO makes it, not a pruned remnant of the
deeper tree).  The depth is chosen by the estimator's ``selection`` rule over
the grid points of both depths together, every shallower point counting as
simpler than every deeper one (CART's one-standard-error rule over the union):
with "1se" the deeper tree is kept only if the best deeper grid point's mean
held-out accuracy, minus its standard error over the internal folds, is above
the mean of *every* shallower grid point.  Comparing the two estimators'
chosen points instead kept depth-3 trees that did not hold up held out
(docs/depth3.md): a chosen point is the simplest within one standard error of
its grid's best, so the shallower one, the yardstick, can sit well below what
depth k - 1 reaches on the same folds.  The kept tree
is then the deeper estimator's own choice, or the shallower estimator as it
stands (the depth-(k - 1) default, not refitted at another grid point).
Applied downwards, depth k - 1 against k - 2 and so on to depth 2, where the
estimator's own grid decides.

Order (docs/depth3.md, "Fit time"): the shallower estimator is fitted first, so
its best mean is a bar the deeper fit's costly searches race against (the
deeper grid's searched contender leaves the internal CV's race once it cannot
pay against that bar, the folds left scoring at most the best fold score seen;
:func:`deeper_race`), and the deeper tree is refitted on all the data only
when it pays (:func:`shallower_stands`).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import clone

from ..engine._problem import PreparedData, check_search_fits
from ..model.tree import Tree
from ._selection import ACCURACY, TOL, best_mean, standard_error

#: below this depth the estimator's grid alone decides (depth 2: the paper's tree)
MIN_COMPARED_DEPTH = 3
#: fitted attributes taken over from the shallower estimator when it wins
FITTED = ("tree_", "result_", "alpha_", "max_features_", "svm_C_", "best_index_",
          "cv_results_", "encoding_", "n_iter_", "leaf_proba_", "n_node_samples_",
          "feature_importances_")
#: with ``time_limit`` (seconds for the whole fit), the share of it the depth-k fit
#: may use when the fit one level shallower may be compared; that one is fitted first
#: with the rest
DEEP_SHARE = 0.6


def may_compare(estimator):
    """Whether the depth comparison can run (before the fit): the default complete
    structure (no ``structure``, no warm start) of depth >= MIN_COMPARED_DEPTH with
    a leaf of every class one level shallower."""
    return (estimator.structure is None and isinstance(estimator.init, str)
            and estimator.depth >= MIN_COMPARED_DEPTH
            and 2 ** (estimator.depth - 1) >= len(estimator.classes_))


def applies(estimator):
    """Whether the depth comparison runs: :func:`may_compare`, and a grid that was
    scored by the internal cross-validation."""
    return may_compare(estimator) and getattr(estimator, "cv_results_", None) is not None


def fold_scores(estimator):
    """Held-out accuracy per internal fold of the grid point ``estimator`` chose (empty
    when nothing was scored)."""
    results, k = estimator.cv_results_, 0
    scores = []
    if results is None:
        return np.array([])
    while f"split{k}_test_score" in results:
        scores.append(results[f"split{k}_test_score"][estimator.best_index_])
        k += 1
    return np.array(scores)


def grid_scores(estimator):
    """Held-out accuracy (G, K) per grid point and internal fold of those grid points
    scored on every fold (a point stopped in a race of the internal CV is left out)."""
    results = estimator.cv_results_
    k = 0
    while f"split{k}_test_score" in results:
        k += 1
    scores = np.column_stack([results[f"split{j}_test_score"] for j in range(k)])
    return scores[~np.isnan(scores).any(axis=1)]


def fit_shallower(estimator, X, y, sample_weight=None, time_limit=None):
    """The estimator one level shallower, fitted on the same data before the deeper
    fit (when :func:`may_compare`): its grid's scores are the bar the deeper fit's
    searches race against (:func:`deeper_race`), and the deeper tree is refitted
    only if it pays (:func:`shallower_stands`); so its internal CV scores every
    contender in full (no short search settles the choice early, which would lower
    that bar: ``GTOClassifier._halving``).  ``time_limit``: seconds of the
    whole fit, ``1 - DEEP_SHARE`` of them for this one (None: no limit).  Sets and
    returns ``shallower_`` (None when no comparison can run)."""
    estimator.shallower_ = None
    if not may_compare(estimator):
        return None
    # a deeper search that cannot fit in memory is refused before the shallower fits
    tree = Tree.complete(estimator.depth, estimator.classes_, X.shape[1])
    check_search_fits(tree, PreparedData(tree, X, y, sample_weight))
    shallow = clone(estimator).set_params(depth=estimator.depth - 1, verbose=0)
    shallow._yardstick = True  # its CV scores are the deeper fit's bar: none settled early
    if time_limit is not None:
        shallow.set_params(time_limit=(1 - DEEP_SHARE) * time_limit)
    estimator.shallower_ = shallow.fit(X, y, sample_weight=sample_weight)
    return estimator.shallower_


def _compared(estimator, scored=True):
    """The fitted shallower estimator when the comparison runs (:func:`applies`, or
    while the deeper grid is being scored (not ``scored``) :func:`may_compare`, and
    a shallower grid that was scored), else None."""
    shallow = getattr(estimator, "shallower_", None)
    runs = applies(estimator) if scored else may_compare(estimator)
    if not runs or shallow is None or getattr(shallow, "cv_results_", None) is None:
        return None
    return shallow


def deeper_race(estimator, scores, svm):
    """The shallower depth's bar in the deeper fit's contender race: ``[]``, or
    ``[(ACCURACY, bar, one_se, cap)]`` (a bar of :func:`gto.learners._selection.still_in`)
    when the comparison runs and no linear-SVM tree (rows ``svm`` of ``scores``, (2,
    G, K): the deeper grid's held-out accuracies and Brier scores so far) pays
    against it: the deeper tree is then kept only if the contender does
    (:func:`_deeper_pays`), so the contender leaves the race once its mean (minus
    its standard error, but with "best") can no longer exceed the best shallower
    mean, whatever it scores on the folds left, each at most ``cap``, the best fold
    score seen (of either depth's grid or its own; the race against the linear-SVM
    trees allows up to 1)."""
    shallow = _compared(estimator, scored=False)
    if shallow is None:
        return []
    accuracy = scores[ACCURACY]
    deep = accuracy[svm]
    deep = deep[~np.isnan(deep).any(axis=1)]
    rows = grid_scores(shallow)
    if not len(rows) or _deeper_pays(deep, rows, estimator.selection):
        return []
    one_se = estimator.selection != "best" and accuracy.shape[1] > 1
    seen = np.concatenate([accuracy[~np.isnan(accuracy)], rows.ravel()])
    return [(ACCURACY, float(rows.mean(axis=1).max()), one_se, float(seen.max()))]


def shallower_stands(estimator):
    """After the deeper fit's internal CV, before its refit: if the comparison runs
    and the deeper tree does not pay (module docstring), take over the shallower
    estimator's fitted attributes (``FITTED``, ``depth_``, ``depth_scores_``) and
    return True (the deeper refit is then not needed); else False."""
    shallow = _compared(estimator)
    if shallow is None or _deeper_pays(grid_scores(estimator), grid_scores(shallow),
                                       estimator.selection):
        return False
    estimator.depth_scores_ = _depth_scores(estimator, shallow)
    for name in FITTED:
        setattr(estimator, name, getattr(shallow, name, None))
    estimator.depth_ = shallow.depth_
    return True


def choose_depth(estimator):
    """After the refit of the deeper tree (it pays, or no comparison ran): set
    ``depth_`` (the depth of the tree kept) and ``depth_scores_`` ({depth: per-fold
    held-out accuracy of that depth's chosen grid point}, every depth compared);
    returns the estimator."""
    estimator.depth_ = estimator.tree_.get_depth()
    if not applies(estimator):
        estimator.shallower_ = None
    shallow = _compared(estimator)
    estimator.depth_scores_ = ({estimator.depth_: fold_scores(estimator)} if shallow is None
                               else _depth_scores(estimator, shallow))
    return estimator


def _depth_scores(estimator, shallow):
    return {**getattr(shallow, "depth_scores_", {}), estimator.depth - 1: fold_scores(shallow),
            estimator.depth: fold_scores(estimator)}


def _deeper_pays(deep, shallow, selection):
    """Whether the deeper tree pays (module docstring): ``deep`` (G, K) and ``shallow``
    (H, K) held-out accuracies of the grid points of either depth on the internal
    folds.  "best": the best deeper mean above every shallower mean; "1se" and
    "agree" (the one-standard-error rule over all of them, the shallower points
    the simpler: the depths are one nested path, as "agree" uses the rule within
    one): the best deeper mean minus its standard error over the folds above every
    shallower mean (with one fold, the means alone)."""
    if not len(deep):
        return False
    mean, best = deep.mean(axis=1), best_mean(deep)
    gain = mean[best] - (shallow.mean(axis=1).max() if len(shallow) else -np.inf)
    if selection == "best" or deep.shape[1] < 2:
        return gain > TOL
    return gain > standard_error(deep[best]) + TOL
