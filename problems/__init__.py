"""Bundled data sets and generated problems.

``load`` reads the paper's four UCI data sets shipped with the package
(UCI Machine Learning Repository, CC BY 4.0; see ``problems/data/README.md``).
``synthetic`` is the paper's generator of §6.
"""
from __future__ import annotations

from collections import namedtuple
from importlib import resources

import numpy as np

DATASETS = {"heart": (297, 13), "cancer": (683, 9), "diabetes": (768, 8), "liver": (345, 6)}

SyntheticData = namedtuple("SyntheticData", "X_train y_train X_test y_test tree")


def load(name):
    """``(X, y)`` of a bundled data set: float features, int class labels 0/1.

    ``name`` is one of "heart", "cancer", "diabetes", "liver".
    """
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {sorted(DATASETS)}")
    with resources.files(__package__).joinpath("data", f"{name}.csv").open("r") as fh:
        header = fh.readline().strip().split(",")
        data = np.loadtxt(fh, delimiter=",", dtype=float)
    if header[-1] != "class" or data.shape != (DATASETS[name][0], DATASETS[name][1] + 1):
        raise RuntimeError(f"bundled data set {name} is damaged: shape {data.shape}")
    return data[:, :-1], data[:, -1].astype(int)


def feature_names(name):
    """Column names of a bundled data set, without the class column."""
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; choose from {sorted(DATASETS)}")
    with resources.files(__package__).joinpath("data", f"{name}.csv").open("r") as fh:
        return fh.readline().strip().split(",")[:-1]


def synthetic(n_features, n_train=500, n_test=2000, random_state=None, min_class_fraction=0.1):
    """The paper's generated data (§6), labelled by a random three-decision tree.

    The tree is Figure 2's ``((0, 1), (0, 1))`` with weights and thresholds
    uniform in [-1, 1]; points are uniform in the unit cube.  Trees whose
    training labels have a class below ``min_class_fraction`` are drawn again.
    Returns ``SyntheticData(X_train, y_train, X_test, y_test, tree)``.
    """
    from gto import Tree

    if int(n_features) < 1 or int(n_train) < 2 or int(n_test) < 0:
        raise ValueError("need n_features >= 1, n_train >= 2 and n_test >= 0")
    rng = np.random.default_rng(random_state)
    for _ in range(1000):
        tree = Tree.from_structure(
            ((0, 1), (0, 1)),
            n_features,
            W=rng.uniform(-1, 1, (3, n_features)),
            gamma=rng.uniform(-1, 1, 3),
        )
        X = rng.uniform(0, 1, (n_train + n_test, n_features))
        y = tree.predict(X)
        share = np.mean(y[:n_train])
        if min(share, 1 - share) >= min_class_fraction:
            return SyntheticData(X[:n_train], y[:n_train], X[n_train:], y[n_train:], tree)
    raise RuntimeError("could not draw a tree that splits the classes; lower min_class_fraction")
