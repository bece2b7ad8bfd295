"""How ``GTOClassifier``'s internal cross-validation picks a grid point, and whether
a candidate still in a race can be picked (one copy of each rule, used by the
final choice and by the successive halving's race; docs/speed.md, "A selection
rule for the internal CV").

Rules (the estimator's ``selection``):

- ``"best"``: the best mean held-out accuracy (ties: the first grid point);
- ``"1se"``: the one-standard-error rule on accuracy over the whole grid, the
  linear-SVM trees counted simplest (Breiman et al., CART §3.4.3);
- ``"agree"`` (the default): the one-standard-error rule within the linear-SVM
  trees, which lie on one regularisation path (smaller ``C`` simpler); a
  searched tree replaces that pick only when its mean held-out accuracy *and*
  its mean held-out Brier score (of the leaves' Laplace-smoothed training class
  frequencies, :func:`laplace_brier`) are both above those of every linear-SVM
  tree.  A searched tree and a linear-SVM tree have the same shape and number
  of decisions, so neither is nested in the other and the 1se rule's "simpler"
  has no ground between them (under "1se" the search had to win by a standard
  error of ~50-point folds, 2-4 points, where it is the better tree on planted
  data); but the search is the noisier fit (it minimises training errors), so
  it must win on both the coarse score that is reported (accuracy) and a
  proper, smoother one (Brier) - no threshold is tuned.  The axis-aligned tree
  of the structure (where it is in the grid, :func:`families`), the exact
  minimiser of training errors over a few cuts a feature, replaces the
  linear-SVM trees' pick only when it is above every one of them on every fold
  (and on mean Brier): it is for data where a few of many features carry the
  signal, and there it wins by far; on a mean it would also win the near ties
  that a 5-fold CV cannot tell from noise (docs/speed.md, round 23).  The
  searched trees are not compared with it: the CV scores them with short
  searches, below what their refit reaches.

Scores are "higher is better" throughout: accuracy, and ``1 - Brier``.
"""
from __future__ import annotations

import numpy as np

SELECTIONS = ("agree", "1se", "best")
#: slack of the comparisons of means (floating point of sums over folds)
TOL = 1e-12
#: step (and slack) of :func:`can_be_chosen`'s scan of the missing folds' scores
SCAN = 1e-4
#: rows of the stacked per-fold scores (2, G, K) the rules read
ACCURACY, BRIER = 0, 1


def laplace_brier(counts, true, weights=None):
    """``1 -`` the mean Brier score of points reaching leaves with training class
    ``counts`` (n, C) and true class indices ``true`` (n,): each leaf predicts
    ``(counts + 1) / (total + C)`` (Laplace's rule of succession, so an empty or
    pure leaf is never certain); ``weights``: per-point weights (None: equal)."""
    counts = np.asarray(counts, dtype=float)
    p = (counts + 1.0) / (counts.sum(axis=1, keepdims=True) + counts.shape[1])
    onehot = np.zeros_like(p)
    onehot[np.arange(len(true)), true] = 1.0
    return 1.0 - float(np.average(((p - onehot) ** 2).sum(axis=1), weights=weights))


def tree_brier(tree, X_train, y_train, w_train, X_test, y_test, w_test, classes):
    """:func:`laplace_brier` of ``tree`` on the test points, with the leaves' class
    counts (weighted by ``w_train``) from the training points."""
    counts = np.zeros((tree.n_leaves, len(classes)))
    weight = np.ones(len(y_train)) if w_train is None else w_train
    np.add.at(counts, (tree.apply(X_train), np.searchsorted(classes, y_train)), weight)
    leaf = tree.apply(X_test)
    use = None if w_test is None or not np.any(w_test > 0) else w_test
    return laplace_brier(counts[leaf], np.searchsorted(classes, y_test), use)


def standard_error(row):
    """Standard error over the folds of the mean of per-fold scores ``row`` (0 with
    one fold)."""
    return float(row.std(ddof=1) / np.sqrt(len(row))) if len(row) > 1 else 0.0


def best_mean(scores):
    """Row with the best mean (ties: the first; rows with a NaN last)."""
    mean = np.asarray(scores, dtype=float).mean(axis=1)
    return int(np.lexsort((np.arange(len(mean)), np.isnan(mean), -np.round(mean, 12)))[0])


def one_standard_error(scores, complexity):
    """The one-standard-error rule (Breiman et al., CART §3.4.3).

    ``scores`` (G, K): held-out accuracy of G candidates on the same K folds;
    ``complexity``: a sort key per candidate, simplest first.  Returns the
    index of the simplest candidate (ties: the first) whose mean is below the
    best mean by at most the best's standard error over the folds (rows with a
    NaN are never picked unless all have one).  (The standard error of the
    per-fold differences to the best, measured too, always lets in a candidate
    that loses on one fold only: with one nonzero difference the mean equals
    that error.  Held out it moved clean1 0.0 -> 0.6 %, cancer 3.1 -> 3.4,
    magic 17.4 -> 17.7 and phoneme 20.9 -> 20.6, liver 33.9 -> 32.8;
    docs/DESIGN.md §6.)"""
    scores = np.asarray(scores, dtype=float)
    mean = scores.mean(axis=1)
    best = best_mean(scores)
    if np.isnan(mean[best]) or scores.shape[1] < 2:
        return best
    near = np.flatnonzero(mean >= mean[best] - standard_error(scores[best]) - TOL)
    return int(min(near, key=lambda i: (complexity[i], i)))


def families(grid):
    """Row indices of the grid's families, each on one regularisation path, in order
    of preference: the linear-SVM trees (``alpha`` None, an ``svm_C``; convex fits),
    then the axis-aligned tree of the structure (``alpha`` and ``svm_C`` None; one
    feature a decision, no search), then the searched trees."""
    svm = [i for i, g in enumerate(grid) if g["alpha"] is None and g["svm_C"] is not None]
    axis = [i for i, g in enumerate(grid) if g["alpha"] is None and g["svm_C"] is None]
    searched = [i for i, g in enumerate(grid) if g["alpha"] is not None]
    return svm, axis, searched


def _means(scores, rows):
    """Mean over the folds of each of ``rows`` (NaN: not scored on every fold)."""
    return np.asarray(scores, dtype=float)[rows].mean(axis=1)


def dominates_so_far(scores, row, svm, n_run):
    """Whether grid point ``row`` has a higher held-out accuracy than every linear-SVM
    tree (rows ``svm`` of ``scores``, (2, G, K)) on each of the first ``n_run`` folds
    (a tie is not higher; no SVM tree scored: True)."""
    accuracy = np.asarray(scores[ACCURACY], dtype=float)[:, :n_run]
    if not svm:
        return True
    return bool(np.all(accuracy[row] > np.max(accuracy[svm], axis=0) + TOL))


def choose(selection, scores, grid, complexity):
    """Index of the grid point ``selection`` picks from ``scores`` (2, G, K): per-fold
    held-out accuracy (``scores[ACCURACY]``) and Brier score (``scores[BRIER]``,
    :func:`laplace_brier`) of G grid points, NaN where one was not run;
    ``complexity``: a sort key per grid point, simplest first.  "agree"
    (:func:`families`): the linear-SVM trees' one-standard-error pick by accuracy;
    replaced by the axis-aligned tree when it dominates them (:func:`dominates_so_far`
    on every fold, and its mean Brier score above each of theirs); replaced by the
    searched trees' own one-standard-error pick when that one's mean accuracy *and*
    mean Brier score are both above those of every linear-SVM tree.  A family without
    a point scored on every fold takes no part (none at all: the best mean)."""
    accuracy = scores[ACCURACY]
    if selection == "best" or accuracy.shape[1] < 2:
        return best_mean(accuracy)
    if selection == "1se":
        return one_standard_error(accuracy, complexity)
    svm, axis, searched = ([i for i in rows if not np.isnan(accuracy[i]).any()]
                           for rows in families(grid))

    def within(rows):  # the family's own one-standard-error pick
        return rows[one_standard_error(accuracy[rows], [complexity[i] for i in rows])]

    def above(pick):  # both means above every scored linear-SVM tree's
        return all(scores[j, pick].mean() > bar + TOL for j, bar in bars(scores, svm))

    chosen = within(svm) if svm else None
    if axis and (chosen is None or (dominates_so_far(scores, axis[0], svm, accuracy.shape[1])
                                    and scores[BRIER, axis[0]].mean()
                                    > bars(scores, svm)[BRIER][1] + TOL)):
        chosen = axis[0]
    if searched:
        pick = within(searched)
        if not svm or above(pick):
            chosen = pick
    return best_mean(accuracy) if chosen is None else chosen


def bars(scores, rows):
    """``[(score index, bar)]``: what a later family's pick must pass under "agree":
    the best mean accuracy and the best mean Brier score of ``rows``."""
    return [(j, float(np.max(_means(scores[j], rows)))) for j in (ACCURACY, BRIER)]


def race(selection, scores, svm, alone=True):
    """``[(score index, bar, one_se)]``: the bars a searched point racing against the
    linear-SVM trees ``svm`` (rows of ``scores``, all scored) must all pass to be
    chosen (:func:`can_be_chosen`).  "agree": :func:`bars`; else the best mean
    accuracy of the linear-SVM trees ("1se": the searched point's mean minus its
    standard error must pass it; "best": its mean, ties to the searched point).
    With other searched points in the race (``alone`` False) only bounds that hold
    whatever those score: the mean accuracy (a point stopped by it could not even
    have been its family's best, so it cannot change the family's pick)."""
    accuracy = [(ACCURACY, float(np.max(_means(scores[ACCURACY], svm))))]
    if selection == "agree":
        return [(j, bar, False) for j, bar in (bars(scores, svm) if alone else accuracy)]
    return [(j, bar, selection == "1se" and alone and scores.shape[2] > 1)
            for j, bar in accuracy]


def contender_bars(selection, scores, svm):
    """``[(score index, bar)]``: the first stage's bars (short searches): each of
    :func:`race`'s bars minus the standard error over the folds of the linear-SVM
    tree it comes from (the best of them by that score), since the short search
    may rank below the full one."""
    out = []
    for j, bar, _ in race(selection, scores, svm):
        row = scores[j, svm[int(np.argmax(_means(scores[j], svm)))]]
        out.append((j, bar - standard_error(row)))
    return out


def settled(scores, rows, bars_):
    """Whether the searched grid points ``rows`` (at least one) all pass every one of
    ``bars_`` (:func:`race` with the searched point alone, and at depth >= 3
    :func:`gto.learners._capacity.deeper_race`) on their first-stage ``scores`` (2, G,
    K), every fold scored, as the choice itself compares (its mean, less its standard
    error where the bar says so, above the bar by more than ``TOL``; a tie does not
    pass, unlike :func:`still_in`'s "can still pass"): each would be chosen over the
    linear-SVM trees (and the shallower depth) as it stands, so the contenders'
    longer searches are not run (``GTOClassifier._halving``; docs/speed.md, round
    21)."""
    def passes(row, j, bar, one_se, *cap):
        return row[j].mean() - (standard_error(row[j]) if one_se else 0.0) > bar + TOL

    return bool(rows) and all(passes(scores[:, i], *b) for i in rows for b in bars_)


def still_in(row, n_run, bars_, strict=True):
    """Whether a searched point with scores ``row`` (2, K) on its first ``n_run`` folds
    can still pass every bar of ``bars_`` (``[(score index, bar, one_se)]``, as
    :func:`race`, or ``(score index, bar, one_se, cap)``: the folds left scoring at
    most ``cap`` or the point's own best so far, the deeper fit's race against the
    shallower depth, :func:`gto.learners._capacity.deeper_race`; ``strict`` as
    :func:`can_be_chosen`)."""
    def passes(j, bar, one_se, cap=1.0):
        done = row[j, :n_run]
        top = max(cap, float(done.max())) if len(done) else cap
        return can_be_chosen(done, row.shape[1], bar, one_se, strict, min(top, 1.0))

    return all(passes(*b) for b in bars_)


def can_be_chosen(done, n_folds, bar, one_se, strict=True, cap=1.0):
    """Whether a candidate with scores ``done`` on its first folds of ``n_folds`` can
    still end with a mean above ``bar`` whatever the other folds score (at most
    ``cap``, by default 1, a perfect score), with ``one_se`` its mean minus its standard error over the
    folds (the one-standard-error rule picks a searched point over the linear-SVM
    trees only then); ``strict`` False: at or above (the first stage's bar, and
    "best", whose ties go to the searched point, first in the grid).  Mean minus
    standard error is concave in the scores and symmetric in the missing ones, so
    its maximum has them all equal: a scan of that common value (step 1e-4, and
    the same slack); the mean alone is largest with every missing fold at 1."""
    done = np.asarray(done, dtype=float)
    if not one_se:
        best = (done.sum() + cap * (n_folds - len(done))) / n_folds
        return bool(best > bar - TOL) if strict else bool(best >= bar - SCAN)
    value = np.linspace(0.0, cap, int(round(1 / SCAN)) + 1)[:, None]
    full = np.hstack([np.broadcast_to(done, (len(value), len(done))),
                      np.repeat(value, n_folds - len(done), axis=1)])
    bound = full.mean(axis=1) - full.std(axis=1, ddof=1) / np.sqrt(n_folds)
    return bool(bound.max() > bar - SCAN)
