"""Which candidates should ``GTOClassifier``'s internal CV choose from?

For each outer split of the quality protocol (``experiments.quality``: stratified
5-fold CV seed 0, min-max scaling on the training fold) and each candidate
configuration (fixed ``alpha``/``max_features``), records

- the internal stratified 5-fold CV accuracies on the training fold, exactly as
  ``GTOClassifier``'s ``alpha="auto"`` computes them (same folds, same fits);
- the held-out test error and the training error of the refit on the whole
  training fold, and its fit time.

Candidates are fixed ``GTOClassifier`` parameters, or (``svm_C``) the
linear-SVM tree of :func:`gto.engine._svm_start.svm_tree` (``svm_penalty`` "l2", as
STree, or "l1", the 1-norm SVM trees the estimator's grid holds for
``alpha="auto"``; ``svm_depth`` 1: pruned to its root), or (``svm_C``
and ``alpha``) the auto grid's alpha-0 point: the search with that ``alpha``
from that SVM tree and from the greedy and CART starts, the fewest errors kept.

A selection rule over a candidate subset (plain max of the mean CV score, or
the one-standard-error rule) then has a held-out error that is read off these
records without refitting: ``summarise`` prints it per data set for every rule
and subset asked for.  Records go to ``--out/selection.jsonl`` as they finish
(a rerun skips the records already there).

    python -m experiments.selection --data heart liver --jobs 2
    python -m experiments.selection --summary
"""
from __future__ import annotations

import argparse
import json
import os
import time
from itertools import combinations

import numpy as np
from joblib import Parallel, delayed
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.preprocessing import MinMaxScaler

import gto
from gto.engine._svm_start import svm_tree
from gto.learners._estimator import _complexity as _estimator_complexity
from gto.learners._estimator import one_standard_error, svm_intercept_scaling

from . import quality

#: name -> fixed GTOClassifier parameters
CANDIDATES = {
    "a0": {"alpha": 0.0},
    "a0.3": {"alpha": 0.3},
    "a1": {"alpha": 1.0},
    "a3": {"alpha": 3.0},
    "a10": {"alpha": 10.0},
    "axis": {"alpha": 0.0, "max_features": 1},
    "mf3-a0.3": {"alpha": 0.3, "max_features": 3},
    "svm": {"svm_C": 1.0},
    "svm0.1": {"svm_C": 0.1},
    "svm0.01": {"svm_C": 0.01},
    "l1svm1": {"svm_C": 1.0, "svm_penalty": "l1"},
    "l1svm0.3": {"svm_C": 0.3, "svm_penalty": "l1"},
    "l1svm0.1": {"svm_C": 0.1, "svm_penalty": "l1"},
    "l1svm0.03": {"svm_C": 0.03, "svm_penalty": "l1"},
    "svm0.1-a0": {"svm_C": 0.1, "alpha": 0.0},
    "lin": {"svm_C": 1.0, "svm_depth": 1},
    "lin0.1": {"svm_C": 0.1, "svm_depth": 1},
    "lin0.01": {"svm_C": 0.01, "svm_depth": 1},
}
ORDER = ("heart", "liver", "cancer", "diabetes", "wdbc", "australian", "spectf", "credit-g",
         quality.SYNTHETIC, "phoneme", "twonorm", "magic", "clean1")


def record(split, name, cv=5):
    """Inner CV accuracies, test/train error % and fit seconds of one candidate."""
    scaler = MinMaxScaler().fit(split.X_train)
    X, Z = scaler.transform(split.X_train), scaler.transform(split.X_test)
    y = split.y_train
    c = CANDIDATES[name]
    clf = (SVMTree(c["svm_C"], split.seed, c.get("alpha"), c.get("svm_depth"),
                   c.get("svm_penalty", "l2")) if "svm_C" in c else
           gto.GTOClassifier(depth=2, random_state=split.seed, **CANDIDATES[name]))
    t0 = time.perf_counter()
    folds = StratifiedKFold(cv, shuffle=True, random_state=split.seed)
    inner = cross_val_score(clf, X, y, cv=folds).tolist()
    t1 = time.perf_counter()
    clf.fit(X, y)
    t2 = time.perf_counter()
    return {"dataset": split.dataset, "split": split.split, "candidate": name, "inner": inner,
            "test": 100 * float(np.mean(clf.predict(Z) != split.y_test)),
            "train": 100 * float(np.mean(clf.predict(X) != y)),
            "nonzero": float(np.mean(np.count_nonzero(clf.tree_.W, axis=1))),
            "cv_seconds": t1 - t0, "fit_seconds": t2 - t1}


class SVMTree(ClassifierMixin, BaseEstimator):
    """The estimator's ``"svm"`` candidate alone: :func:`gto.engine._svm_start.svm_tree` on the
    depth-2 complete tree (as ``GTOClassifier``'s internal CV fits it; ``max_depth``
    and ``penalty`` as in ``svm_tree``; liblinear's intercept scaling as the
    estimator's, ``svm_intercept_scaling``); with ``search_alpha`` the grid point that searches with
    that penalty from it (and from the portfolio), fitted by the estimator's own
    ``_fit_tree``."""

    def __init__(self, C=1.0, random_state=None, search_alpha=None, max_depth=None,
                 penalty="l2"):
        self.C = C
        self.random_state = random_state
        self.search_alpha = search_alpha
        self.max_depth = max_depth
        self.penalty = penalty

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        start = gto.Tree.complete(2, self.classes_, X.shape[1])
        if self.search_alpha is None:
            self.tree_ = svm_tree(start, X, y, C=self.C, random_state=self.random_state,
                                  max_depth=self.max_depth, penalty=self.penalty,
                                  intercept_scaling=svm_intercept_scaling(self.penalty))[0]
            return self
        if self.max_depth is not None or self.penalty != "l2":
            raise ValueError("the grid's search starts from the whole L2 SVM tree")
        grid_point = {"alpha": self.search_alpha, "max_features": None, "svm_C": self.C}
        clf = gto.GTOClassifier(random_state=self.random_state)
        clf._categorical = {}  # numeric data, as fit() sets it
        self.tree_ = clf._fit_tree(start, X, y, None, grid_point, 1).tree
        return self

    def predict(self, X):
        return self.tree_.predict(X)


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _complexity(name):
    """The estimator's simplest-first key (``GTOClassifier``'s one-standard-error rule)."""
    return _estimator_complexity({"max_features": None, "svm_C": None, "svm_depth": None,
                                  **CANDIDATES[name]}, np.inf)


def choose(recs, names, rule):
    """The record a rule picks among ``names`` (ties: order of ``names``): "max", the
    best mean inner score, or "1se", ``GTOClassifier``'s one-standard-error rule."""
    by = {r["candidate"]: r for r in recs}
    names = [n for n in names if n in by]
    scores = np.array([by[n]["inner"] for n in names])
    if rule == "max":
        return by[names[int(np.argmax(scores.mean(axis=1)))]]
    return by[names[one_standard_error(scores, [_complexity(n) for n in names])]]


def summarise(rows, subsets, rules=("max", "1se")):
    """Markdown: held-out test error % of each candidate and each (subset, rule)."""
    groups = {}
    for r in rows:
        groups.setdefault(r["dataset"], {}).setdefault(r["split"], []).append(r)
    cols = list(CANDIDATES) + [f"{'+'.join(s)}:{rule}" for s in subsets for rule in rules]
    lines = ["| data | " + " | ".join(cols) + " |", "|" + "---|" * (len(cols) + 1)]
    for data, splits in groups.items():
        full = splits
        cells = []
        for c in CANDIDATES:
            t = [r["test"] for v in full.values() for r in v if r["candidate"] == c]
            cells.append(f"{np.mean(t):.1f}" if len(t) == len(full) else "")
        for s in subsets:
            for rule in rules:
                ok = all(all(any(r["candidate"] == n for r in v) for n in s)
                         for v in full.values())
                cells.append(f"{np.mean([choose(v, s, rule)['test'] for v in full.values()]):.1f}"
                             if ok else "")
        lines.append(f"| {data} ({len(full)}) | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.selection",
                                description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=list(ORDER))
    p.add_argument("--candidates", nargs="+", default=list(CANDIDATES))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--out", default="results")
    p.add_argument("--summary", action="store_true", help="print the summary only")
    args = p.parse_args(argv)
    path = os.path.join(args.out, "selection.jsonl")
    if not args.summary:
        os.makedirs(args.out, exist_ok=True)
        done = {(r["dataset"], r["split"], r["candidate"]) for r in load(path)}
        jobs = [(s, c) for s in quality.splits(args.data) for c in args.candidates
                if (s.dataset, s.split, c) not in done]
        with open(path, "a") as fh:
            for rec in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(
                    delayed(record)(s, c) for s, c in jobs):
                fh.write(json.dumps(rec) + "\n")
                fh.flush()
    base = ["a0", "a0.3", "a1", "a3"]
    svms = ["svm0.01", "svm0.1", "svm"]
    l1svms = ["l1svm0.1", "l1svm0.3", "l1svm1"]
    lins = ["lin0.01", "lin0.1", "lin"]
    default = ["svm0.1-a0", "a0.3", "a1", "a3"] + l1svms  # GTOClassifier's auto grid
    l2grid = ["svm0.1-a0", "a0.3", "a1", "a3"] + svms  # its grid before (L2 SVM trees)
    subsets = [base, base + svms, default, l2grid, default + lins, base + ["svm"],
               base + ["axis"] + svms, svms, l1svms, lins + svms, list(CANDIDATES)]
    subsets += [list(c) for c in combinations(["a0", "a1", "axis"], 2)]
    print(summarise(load(path), subsets))


if __name__ == "__main__":
    main()
