"""Optional peer arms for the paper's experiments.

- ``CART-d2`` and ``CART``: scikit-learn's tree (Gini) at depth 2 and unpruned;
  always available.
- ``obliquetree-d2``: ``obliquetree.Classifier(max_depth=2)``, oblique splits.
- ``stree-d2``: ``stree.Stree`` (linear-SVM splits) with two levels of
  decisions, on standardised features.  stree counts the leaves as a level
  (root = 1) and, in 1.4.2, leaves at ``max_depth`` get no class, so two
  levels of decisions is ``max_depth=3``.
- ``pystreed-d2``: ``pystreed.STreeDClassifier(max_depth=2, cost_complexity=0)``,
  the optimal axis-aligned depth-2 tree over pystreed's default binarisation
  (5 quantile thresholds per feature).
- ``CART-d3``, ``obliquetree-d3``, ``stree-d3``, ``pystreed-d3``: the same at
  depth 3 (three levels of decisions).
- ``MIP``: ``gto.mip.solve`` on the Figure 2 tree with a time budget in
  seconds (off unless a budget is given).

The outside packages are imported only when their arm runs; ``select``
skips a missing one with a note.  Each arm returns ``(predict, decisions,
nonzero)``, ``nonzero`` the mean number of features a decision uses (None
where the package does not expose it).
"""
from __future__ import annotations

import importlib.util
import warnings
from functools import partial

import numpy as np
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

import gto
import gto.mip

from .common import STRUCTURE

NEEDS = {f"{package}-d{depth}": package for package in ("obliquetree", "stree", "pystreed")
         for depth in (2, 3)}


def fit_cart(X, y, seed, max_iter, *, max_depth=None):
    model = DecisionTreeClassifier(max_depth=max_depth, random_state=seed).fit(X, y)
    return model.predict, model.tree_.node_count // 2, 1.0


def fit_obliquetree(X, y, seed, max_iter, *, max_depth=2):
    from obliquetree import Classifier

    model = Classifier(max_depth=max_depth, random_state=seed).fit(X, y)
    return model.predict, len(np.unique(model.apply(X))) - 1, None


def fit_stree(X, y, seed, max_iter, *, levels=2):
    from stree import Stree

    # stree counts the leaves as a level: ``levels`` of decisions is max_depth=levels + 1
    model = make_pipeline(StandardScaler(), Stree(max_depth=levels + 1, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # liblinear's "terminated early"
        model.fit(X, y)
    inner = [node for node in model[-1] if not node.is_leaf()]
    nonzero = [np.count_nonzero(node.get_classifier().coef_) for node in inner]
    return model.predict, len(inner), float(np.mean(nonzero)) if inner else None


def fit_pystreed(X, y, seed, max_iter, *, max_depth=2):
    from pystreed import STreeDClassifier

    model = STreeDClassifier(max_depth=max_depth, cost_complexity=0.0, time_limit=300,
                             random_seed=seed)
    model.fit(X, y)
    return model.predict, model.get_n_leaves() - 1, 1.0


def fit_mip(X, y, seed, max_iter, *, budget):
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    res = gto.mip.solve(tree, X, y, time_limit=budget)
    return res.tree.predict, res.tree.n_decisions, mean_nonzero(res.tree)


def mean_nonzero(tree, rtol=1e-12):
    """Mean number of features a decision of a ``gto.Tree`` uses (|w_j| above
    ``rtol`` times the decision's largest weight)."""
    W = np.abs(tree.W)
    return float(np.mean(np.sum(W > rtol * W.max(axis=1, keepdims=True), axis=1)))


PEERS = {
    "CART-d2": partial(fit_cart, max_depth=2),
    "CART": fit_cart,
    "obliquetree-d2": fit_obliquetree,
    "stree-d2": fit_stree,
    "pystreed-d2": fit_pystreed,
    "CART-d3": partial(fit_cart, max_depth=3),
    "obliquetree-d3": partial(fit_obliquetree, max_depth=3),
    "stree-d3": partial(fit_stree, levels=3),
    "pystreed-d3": partial(fit_pystreed, max_depth=3),
}


def select(names, mip_budget=None):
    """``(arms, notes)``: the named peers that can run, and a note per skipped one."""
    arms, notes = {}, []
    for name in names:
        if name not in PEERS:
            raise ValueError(f"unknown peer {name!r}; choose from {sorted(PEERS)}")
        package = NEEDS.get(name)
        if package and importlib.util.find_spec(package) is None:
            notes.append(f"{name} skipped: the '{package}' package is not installed "
                         f"(pip install {package})")
            continue
        arms[name] = PEERS[name]
    if mip_budget:
        arms[f"MIP-{mip_budget:g}s"] = partial(fit_mip, budget=float(mip_budget))
    return arms, notes
