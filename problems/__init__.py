"""Bundled data sets and generated problems.

``load`` reads the data sets shipped with the package (UCI Machine Learning
Repository, CC BY 4.0, in the cleaned forms of the Penn Machine Learning
Benchmarks; see ``problems/data/README.md``): the paper's four
(``DATASETS``), more real-valued sets (``NUMERIC``) and category-coded sets
(``CATEGORICAL``).  ``paper_table`` reads the published figures the
experiments print beside ours.  ``synthetic`` is the paper's generator of §6.
"""
from __future__ import annotations

import csv
from collections import namedtuple
from importlib import resources

import numpy as np


def _shapes():
    """``{group: {name: (rows, features)}}`` from ``data/shapes.csv``, the one list of the
    bundled data sets (groups "paper", "numeric", "categorical")."""
    tables = {"paper": {}, "numeric": {}, "categorical": {}}
    with resources.files(__package__).joinpath("data", "shapes.csv").open("r") as fh:
        for row in csv.DictReader(fh):
            tables[row["group"]][row["name"]] = (int(row["rows"]), int(row["features"]))
    return tables


_SHAPES = _shapes()
DATASETS = _SHAPES["paper"]  # the paper's four
NUMERIC = _SHAPES["numeric"]
# every feature a category code 0, 1, 2, ...; ordinal where the original was
CATEGORICAL = _SHAPES["categorical"]
ORDINAL = ("balance-scale", "car", "nursery")
PAPER_TABLES = ("bennett_blue_table1", "gunluk_odt_table8")

SyntheticData = namedtuple("SyntheticData", "X_train y_train X_test y_test tree")


def _path(name):
    """The bundled file of data set ``name`` (a ValueError naming the choices if unknown)."""
    for folder, table in (("", DATASETS), ("numeric", NUMERIC), ("categorical", CATEGORICAL)):
        if name in table:
            return resources.files(__package__).joinpath("data", folder, f"{name}.csv"), table
    choices = sorted(DATASETS) + sorted(NUMERIC) + sorted(CATEGORICAL)
    raise ValueError(f"unknown data set {name!r}; choose from {choices}")


def load(name):
    """``(X, y)`` of a bundled data set: float features, int class labels 0, 1, ...

    ``name`` is one of ``DATASETS`` (the paper's "heart", "cancer",
    "diabetes", "liver"), ``NUMERIC`` or ``CATEGORICAL`` (whose features are
    category codes, returned as floats like the others).
    """
    path, table = _path(name)
    with path.open("r") as fh:
        header = fh.readline().strip().split(",")
        data = np.loadtxt(fh, delimiter=",", dtype=float, ndmin=2)
    if header[-1] != "class" or data.shape != (table[name][0], table[name][1] + 1):
        raise RuntimeError(f"bundled data set {name} is damaged: shape {data.shape}")
    return data[:, :-1], data[:, -1].astype(int)


def feature_names(name):
    """Column names of a bundled data set, without the class column."""
    path, _ = _path(name)
    with path.open("r") as fh:
        return fh.readline().strip().split(",")[:-1]


def paper_table(name):
    """Rows of a published table as dicts of strings (``PAPER_TABLES``; source in data/paper/README.md)."""
    if name not in PAPER_TABLES:
        raise ValueError(f"unknown paper table {name!r}; choose from {list(PAPER_TABLES)}")
    with resources.files(__package__).joinpath("data", "paper", f"{name}.csv").open("r") as fh:
        return list(csv.DictReader(fh))


def synthetic(n_features, n_train=500, n_test=2000, random_state=None, min_class_fraction=0.1):
    """The paper's generated data (§6), labelled by a random three-decision tree.

    The tree is Figure 2's ``((0, 1), (0, 1))`` with weights and thresholds
    uniform in [-1, 1]; points are uniform in the unit cube.  Trees whose
    training labels have a class below ``min_class_fraction`` are drawn again.
    Returns ``SyntheticData(X_train, y_train, X_test, y_test, tree)``.
    """
    from gto.model.tree import FIGURE2, Tree

    if int(n_features) < 1 or int(n_train) < 2 or int(n_test) < 0:
        raise ValueError("need n_features >= 1, n_train >= 2 and n_test >= 0")
    rng = np.random.default_rng(random_state)
    for _ in range(1000):
        tree = Tree.from_structure(
            FIGURE2,
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
