"""Held-out error on multi-class data: GTO's default estimator against its peers.

With three classes or more the default tree's leaves are arranged by the label
pattern, of CART's best on its own splits, whose linear-SVM tree fits best (which
classes share a subtree), and with
more classes than leaves the leaves go to the heaviest classes, the points of the
others being errors whatever the splits (docs/DESIGN.md §2).  Data: scikit-learn's
iris (150 x 4, 3 classes), wine (178 x 13, 3) and digits (1 797 x 64, 10), and
``make_classification`` draws with one cluster per class (``gen4``: 800 x 10, 4
classes; ``gen6``: 600 x 8, 6; ``gen8``: 1 000 x 20, 8; ``imb7``: 900 x 10, 7
classes of 30 % down to 5 %).  The quality protocol
(``experiments.quality``): stratified 5-fold CV (shuffle seed 0), min-max scaling
fitted on each training fold, ``random_state`` the fold.  Arms: ``GTO``
(``GTOClassifier(depth=...)``, its defaults) and the depth-matched peers of
``experiments.peers`` that are installed (CART, obliquetree, STree, pystreed).
``--compare`` adds the earlier rules: ``GTO-sorted``, the default with the classes on
the leaves in sorted order, and ``GTO-cart``, with CART's favourite labelling of its
own splits (the first of :func:`gto.learners._leaves.cart_candidates`).  Prints test error % (mean over the
folds) and wall seconds per fit as a markdown table and writes ``multiclass.json``
to ``--out``.

    python -m experiments.multiclass
    python -m experiments.multiclass --data gen6 --depth 3 --compare
"""
from __future__ import annotations

import argparse
import json
import os
from functools import partial
from unittest import mock

import numpy as np
from sklearn.datasets import load_digits, load_iris, load_wine, make_classification
from sklearn.model_selection import StratifiedKFold

import gto
from gto.learners import _estimator
from gto.learners._leaves import cart_candidates, with_labels
from gto.utils._atomic import write_text_atomic

from . import peers, quality
from .common import Split, markdown_table, run_splits, summarize


def _gen(n, d, classes, seed, weights=None):
    return make_classification(n, d, n_informative=min(d, 6), n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, weights=weights,
                               random_state=seed)


DATA = {
    "iris": lambda: load_iris(return_X_y=True),
    "wine": lambda: load_wine(return_X_y=True),
    "digits": lambda: load_digits(return_X_y=True),
    "gen4": lambda: _gen(800, 10, 4, 5),
    "gen6": lambda: _gen(600, 8, 6, 0),
    "gen8": lambda: _gen(1000, 20, 8, 1),
    "imb7": lambda: _gen(900, 10, 7, 4, weights=[0.3, 0.25, 0.15, 0.1, 0.1, 0.05, 0.05]),
}


def _sorted(tree, *data, **options):
    """The classes in sorted order (the default tree as built)."""
    return tree


def _cart_favourite(tree, X, y, w=None, **options):
    """CART's favourite labelling of its own splits."""
    todo = cart_candidates(tree, X, y, w)
    return with_labels(tree, todo[0][1]) if todo else tree


#: the arrangements of ``--compare`` (replacing :func:`gto.learners._leaves.arrange_classes`)
EARLIER = {"GTO-sorted": _sorted, "GTO-cart": _cart_favourite}


def fit_gto(X, y, seed, max_iter, *, depth, arrangement=None):
    """The default estimator; ``arrangement``: a function to arrange the classes on the
    default tree's leaves instead of :func:`gto.learners._leaves.arrange_classes`."""
    model = gto.GTOClassifier(depth=depth, random_state=seed)
    if arrangement is None:
        model.fit(X, y)
    else:
        with mock.patch.object(_estimator, "arrange_classes", arrangement):
            model.fit(X, y)
    return model.predict, model.tree_.n_decisions, None


def arms(depth, compare=False):
    """``(arms, notes)``: GTO (and the earlier arrangements if asked) and the installed
    depth-``depth`` peers."""
    names = [f"{p}-d{depth}" for p in ("CART", "obliquetree", "stree", "pystreed")]
    chosen, notes = peers.select(names)
    gto_arms = {"GTO": partial(fit_gto, depth=depth)}
    if compare:
        gto_arms.update({arm: partial(fit_gto, depth=depth, arrangement=rule)
                         for arm, rule in EARLIER.items()})
    return {**gto_arms, **chosen}, notes


def splits(names, folds=5, data=None):
    """The protocol's splits of each named data set of ``data`` (default ``DATA``;
    stratified, shuffle seed 0)."""
    for name in names:
        X, y = (DATA if data is None else data)[name]()
        cv = StratifiedKFold(folds, shuffle=True, random_state=0)
        for k, (train, test) in enumerate(cv.split(X, y)):
            yield Split(name, k, X[train], y[train], X[test], y[test], k)


def run(names, depth, folds=5, compare=False, data=None):
    """Per data set of ``data`` (default ``DATA``) and arm: mean test error % and mean
    seconds per fit (wall; one BLAS thread: run with ``OMP_NUM_THREADS=1``), each arm
    min-max scaled on the training fold (:func:`experiments.quality.scaled`)."""
    data = DATA if data is None else data
    fits, notes = arms(depth, compare)
    scaled_fits = {arm: quality.scaled(fit) for arm, fit in fits.items()}
    done = run_splits(splits(names, folds, data), scaled_fits, None, quiet=True)
    summary = summarize(done)
    rows = []
    for name in names:
        X, y = data[name]()
        ran = [r for r in done if r["dataset"] == name]
        rows.append({"data": name, "n": len(y), "d": X.shape[1], "classes": len(np.unique(y)),
                     "depth": depth,
                     "test_error_%": {a: summary[name, a]["test"][0] for a in fits},
                     "seconds_per_fit": {a: float(np.mean([r["seconds"] for r in ran
                                                           if r["arm"] == a])) for a in fits}})
    return rows, notes


def table(rows):
    arm_names = list(rows[0]["test_error_%"])
    header = ["data", "n x d", "classes", "depth", *[f"{a} %" for a in arm_names], "GTO s"]
    body = [[r["data"], f"{r['n']} x {r['d']}", r["classes"], r["depth"],
             *[f"{r['test_error_%'][a]:.1f}" for a in arm_names],
             f"{r['seconds_per_fit']['GTO']:.2f}"] for r in rows]
    return markdown_table(header, body)


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", choices=sorted(DATA), default=list(DATA))
    p.add_argument("--depth", type=int, choices=(2, 3), default=2)
    p.add_argument("--compare", action="store_true",
                   help="also the earlier arrangements: classes in sorted order, CART's favourite")
    p.add_argument("--out", default="results", help="directory for multiclass.json")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    rows, notes = run(args.data, args.depth, compare=args.compare)
    for note in notes:
        print(note)
    print(table(rows))
    os.makedirs(args.out, exist_ok=True)
    write_text_atomic(os.path.join(args.out, "multiclass.json"), json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
