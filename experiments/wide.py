"""Held-out error on wide data where a few of many features carry the signal.

``make_classification`` draws with hundreds of columns of which 2-10 are
informative (some with redundant columns or flipped labels), and one planted
axis-aligned depth-2 tree over 60 uniform features (10 % of the labels
flipped): data on which a tree that weighs many features per decision holds out
worse than one that picks a feature a decision (docs/speed.md, rounds 22-23).
The quality protocol of ``experiments.multiclass``: stratified 5-fold CV (shuffle
seed 0), min-max scaling fitted on each training fold, ``random_state`` the fold;
arms ``GTO`` (``GTOClassifier(depth=...)``, its defaults) and the depth-matched
peers of ``experiments.peers`` that are installed.  Prints test error % (mean over
the folds) and wall seconds per fit as a markdown table and writes ``wide.json`` to
``--out``.

    python -m experiments.wide
    python -m experiments.wide --data w500x200 --depth 3
"""
from __future__ import annotations

import argparse
import json
import os

import numpy as np
from sklearn.datasets import make_classification

from gto.utils._atomic import write_text_atomic

from . import multiclass


def _planted_axis(n=500, d=60, seed=35, flipped=0.1):
    """An axis-aligned depth-2 tree (x4 <= .5, then x9 > .3 or x17 > .6 gives class 1)
    over ``d`` uniform features, a ``flipped`` share of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    y = np.where(X[:, 4] <= 0.5, X[:, 9] > 0.3, X[:, 17] > 0.6).astype(int)
    return X, np.where(rng.random(n) < flipped, 1 - y, y)


def _mc(n, d, informative, seed, **more):
    return lambda: make_classification(n, d, n_informative=informative, random_state=seed,
                                       **more)


DATA = {
    "w500x200": _mc(500, 200, 5, 11),
    "w300x50": _mc(300, 50, 3, 12, n_redundant=2),
    "w1000x100": _mc(1000, 100, 10, 13),
    "w600x60-flipped": _mc(600, 60, 4, 14, flip_y=0.1),
    "w400x30": _mc(400, 30, 8, 15, n_redundant=4),
    "w600x300": _mc(600, 300, 5, 31),
    "w400x100": _mc(400, 100, 3, 32, n_redundant=0),
    "w800x150-flipped": _mc(800, 150, 6, 33, flip_y=0.05),
    "w300x80": _mc(300, 80, 2, 34, n_redundant=0, n_clusters_per_class=1),
    "axis500x60": _planted_axis,
}


def parser():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", choices=list(DATA), default=list(DATA))
    p.add_argument("--depth", type=int, choices=(2, 3), default=2)
    p.add_argument("--out", default="results", help="directory for wide.json")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    rows, notes = multiclass.run(args.data, args.depth, data=DATA)
    for note in notes:
        print(note)
    print(multiclass.table(rows))
    os.makedirs(args.out, exist_ok=True)
    write_text_atomic(os.path.join(args.out, "wide.json"), json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
