"""Offline replay of ``GTOClassifier``'s internal-CV selection rule.

For each outer split of the quality protocol (``experiments.quality``: the same
splits, min-max scaling fitted on the training fold, ``random_state`` the split's
seed) this records, for every candidate of the default grid (the three 1-norm SVM
trees and the alpha-0 search), on every inner fold of the estimator's own internal
CV (same folds):

- the first stage (one restart of ``cv_iter(max_iter)`` moves) and the second
  stage (``contender_iter(max_iter)`` moves, ``CONTENDER_RESTARTS`` restarts, the
  first from the first-stage tree) of the search, on *every* fold (no racing);
- per inner test point: right or wrong, and the training class counts of the
  leaf it reaches (so that Brier scores or log-losses of any smoothing of the
  leaf frequencies can be replayed);
- the CPU seconds of each fold fit;

and each candidate's held-out error on the outer test set when refitted on the
outer training set as the estimator refits it.  The records go to a JSON-lines
file (a rerun skips the splits already there); ``--replay`` then reads them and
prints the held-out error of every selection rule of :data:`RULES` per data set
in seconds.

    python -m experiments.selection_replay --data heart liver --out /tmp/replay
    python -m experiments.selection_replay --replay --out /tmp/replay
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from sklearn.preprocessing import MinMaxScaler

import gto
from gto.learners import _estimator as E

from . import quality

ORDER = ("heart", "cancer", "diabetes", "liver", "australian", "clean1", "credit-g",
         quality.SYNTHETIC, "spectf", "wdbc", "magic", "phoneme", "twonorm")


def _leaf_counts(tree, X, y, classes):
    """(n_leaves, n_classes) training class counts of ``tree`` on (X, y)."""
    counts = np.zeros((tree.n_leaves, len(classes)))
    np.add.at(counts, (tree.apply(X), np.searchsorted(classes, y)), 1.0)
    return counts


def _fold_record(tree, X, y, train, test, classes):
    """Per inner test point: right (1/0), the reached leaf's training class counts, the
    true class index."""
    counts = _leaf_counts(tree, X[train], y[train], classes)
    leaf = tree.apply(X[test])
    return {"hit": (tree.predict(X[test]) == y[test]).astype(int).tolist(),
            "counts": counts[leaf].tolist(),
            "true": np.searchsorted(classes, y[test]).tolist()}


def _timed_scores(clf, tree, X, y, grid, rows, folds, budget, warm=None):
    """Fold fits of grid ``rows`` one by one: (records, trees, CPU seconds)."""
    recs, trees, secs = {}, {}, {}
    for i in rows:
        for k, (train, test) in enumerate(folds):
            t0 = time.process_time()
            w0 = None if warm is None else warm[i, k]
            _, fitted = E._fold_score(clf, tree, X, y, None, grid[i], train, test, None, budget,
                                      w0)
            secs[i, k] = time.process_time() - t0
            trees[i, k] = fitted
            recs[i, k] = _fold_record(fitted, X, y, train, test, clf.classes_)
    return recs, trees, secs


def record(split):
    """Everything a selection rule needs for one outer split (see the module doc)."""
    scaler = MinMaxScaler().fit(split.X_train)
    X, Z = scaler.transform(split.X_train), scaler.transform(split.X_test)
    y = split.y_train
    clf = gto.GTOClassifier(depth=2, random_state=split.seed)
    clf.classes_ = np.unique(y)
    clf._categorical = {}
    tree = clf._initial_tree(X.shape[1])
    grid = clf._grid(X.shape[1])
    Xs, ys, _, folds = clf._folds(X, y, None)
    svm = [i for i, g in enumerate(grid) if g["alpha"] is None]
    searched = [i for i, g in enumerate(grid) if g["alpha"] is not None]
    first, trees1, s1 = _timed_scores(clf, tree, Xs, ys, grid, svm, folds, None)
    first_s, trees1s, s1s = _timed_scores(clf, tree, Xs, ys, grid, searched, folds,
                                          (E.cv_iter(clf.max_iter), 1))
    first.update(first_s), trees1.update(trees1s), s1.update(s1s)
    warm = np.full((len(grid), len(folds)), None, dtype=object)
    for (i, k), t in trees1.items():
        warm[i, k] = t
    budget = (E.contender_iter(clf.max_iter), min(clf.restarts, E.CONTENDER_RESTARTS))
    second, _, s2 = _timed_scores(clf, tree, Xs, ys, grid, searched, folds, budget, warm)
    outer = {}
    for i in svm + searched:
        t0 = time.process_time()
        res = clf._fit_tree(tree, X, y, None, grid[i], 1)
        outer[i] = {"test": 100 * float(np.mean(res.tree.predict(Z) != split.y_test)),
                    "train": 100 * float(np.mean(res.tree.predict(X) != y)),
                    "seconds": time.process_time() - t0}
    return {"dataset": split.dataset, "split": split.split, "n_folds": len(folds),
            "grid": [{k: v for k, v in g.items()} for g in grid],
            "first": {f"{i},{k}": r for (i, k), r in first.items()},
            "second": {f"{i},{k}": r for (i, k), r in second.items()},
            "seconds1": {f"{i},{k}": s for (i, k), s in s1.items()},
            "seconds2": {f"{i},{k}": s for (i, k), s in s2.items()},
            "outer": {str(i): o for i, o in outer.items()}}


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def collect(data, path):
    """Record every split of ``data`` not yet in ``path`` (appending as they finish)."""
    done = {(r["dataset"], r["split"]) for r in load(path)}
    with open(path, "a") as fh:
        for split in quality.splits(data):
            if (split.dataset, split.split) in done:
                continue
            t0 = time.process_time()
            rec = record(split)
            rec["cpu"] = time.process_time() - t0
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(f"{split.dataset} {split.split}: {rec['cpu']:.1f} s CPU", flush=True)


# -- replay --------------------------------------------------------------------------------
def matrices(rec, stage="second"):
    """``(folds, grid, per-fold stats)`` of one record, the searched rows from ``stage``
    ("first" or "second"): ``stats[name]`` (G, K) per-fold accuracy, Brier and log-loss
    (Laplace-smoothed leaf frequencies), and the per-point arrays for paired use."""
    grid, K = rec["grid"], rec["n_folds"]
    out = {"acc": np.zeros((len(grid), K)), "brier": np.zeros((len(grid), K)),
           "logloss": np.zeros((len(grid), K))}
    points = {}
    for i, g in enumerate(grid):
        src = rec["first"] if g["alpha"] is None or stage == "first" else rec[stage]
        for k in range(K):
            r = src[f"{i},{k}"]
            hit = np.asarray(r["hit"], dtype=float)
            counts = np.asarray(r["counts"], dtype=float)
            true = np.asarray(r["true"])
            p = (counts + 1) / (counts.sum(axis=1, keepdims=True) + counts.shape[1])
            onehot = np.eye(counts.shape[1])[true]
            brier = ((p - onehot) ** 2).sum(axis=1)
            ll = -np.log(p[np.arange(len(true)), true])
            out["acc"][i, k] = hit.mean()
            out["brier"][i, k] = 1 - brier.mean()  # higher is better throughout
            out["logloss"][i, k] = -ll.mean()
            points[i, k] = {"acc": hit, "brier": 1 - brier, "logloss": -ll}
    return out, points


def halving_scores(rec):
    """The estimator's (today's) score matrix: SVM rows, the search's first stage, and
    the second stage for a contender (``_contenders`` on the first stage)."""
    first, _ = matrices(rec, "first")
    second, _ = matrices(rec, "second")
    grid = rec["grid"]
    scores = first["acc"].copy()
    again = E._contenders(scores, grid)
    scores[again] = second["acc"][again]
    return scores, again


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.selection_replay",
                                description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=list(ORDER))
    p.add_argument("--out", default="/tmp/selection_replay")
    p.add_argument("--replay", action="store_true", help="replay the recorded rules only")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "replay.jsonl")
    if not args.replay:
        collect(args.data, path)


if __name__ == "__main__":
    main()
