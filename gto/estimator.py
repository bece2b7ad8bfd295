"""``GTOClassifier``: global tree optimization as a scikit-learn estimator."""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from .optimize import optimize
from .tree import Tree


class GTOClassifier(ClassifierMixin, BaseEstimator):
    """Oblique decision tree of fixed structure, fitted by GTO (Bennett & Blue).

    Parameters
    ----------
    structure : nested pairs, optional
        Leaves are class labels, internal nodes ``(left, right)`` pairs, e.g.
        ``((0, 1), (0, 1))``.  By default a complete tree of ``depth`` whose
        leaves cycle through the classes (the paper's Figure 2 tree for two
        classes and depth 2).
    depth : int, default 2
        Depth of the default complete tree (needs 2**depth >= number of classes).
    objective, method, p, max_iter, time_limit, restarts, n_jobs, random_state, init, verbose
        As in :func:`gto.optimize`.

    Attributes
    ----------
    tree_ : gto.Tree
        The fitted tree (fewest training errors found).
    classes_ : array of class labels.
    leaf_proba_ : (n_leaves, n_classes) class frequencies of the training
        points in each leaf; an empty leaf predicts its own label with 1.
    result_ : the :func:`gto.optimize` result.
    n_iter_ : int, tabu moves or Frank-Wolfe iterations over all restarts.
    n_features_in_ : int
    feature_names_in_ : names of the DataFrame columns fitted on, if any.
    n_node_samples_ : (D, 2) training weight each decision sent left and right.
    feature_importances_ : see :func:`gto.inspection.feature_importances`.
    """

    def __init__(self, structure=None, depth=2, objective="product", method="tabu", p=1,
                 max_iter=10_000, time_limit=None, restarts=1, n_jobs=1, random_state=None,
                 init="auto", verbose=0):
        self.structure = structure
        self.depth = depth
        self.objective = objective
        self.method = method
        self.p = p
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.restarts = restarts
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.init = init
        self.verbose = verbose

    def _initial_tree(self, n_features):
        if self.structure is not None:
            return Tree.from_structure(self.structure, n_features)
        if 2**self.depth < len(self.classes_):
            raise ValueError(
                f"a complete tree of depth {self.depth} has {2**self.depth} leaves, fewer than "
                f"the {len(self.classes_)} classes; raise depth or give a structure"
            )
        return Tree.complete(self.depth, self.classes_, n_features)

    def fit(self, X, y, sample_weight=None):
        """Fit the tree's decisions to (X, y)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has one class only ({self.classes_[0]!r}); a classifier needs at least two"
            )
        tree = self._initial_tree(X.shape[1])
        self.result_ = optimize(
            tree, X, y, objective=self.objective, method=self.method, p=self.p,
            max_iter=self.max_iter, time_limit=self.time_limit, restarts=self.restarts,
            n_jobs=self.n_jobs, random_state=self.random_state, sample_weight=sample_weight,
            init=self.init, verbose=self.verbose,
        )
        self.tree_ = self.result_.tree
        self.n_iter_ = self.result_.nit
        weight = np.ones(len(y)) if sample_weight is None else np.asarray(sample_weight, float)
        leaf = self.tree_.apply(X)
        code = np.searchsorted(self.classes_, y)
        counts = np.zeros((self.tree_.n_leaves, len(self.classes_)))
        np.add.at(counts, (leaf, code), weight)
        own = np.searchsorted(self.classes_, self.tree_.leaf_classes)
        empty = counts.sum(axis=1) == 0
        counts[empty, own[empty]] = 1.0
        self.leaf_proba_ = counts / counts.sum(axis=1, keepdims=True)
        self._fit_inspection(X, sample_weight)
        return self

    def apply(self, X):
        """Index of the leaf each sample reaches."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.tree_.apply(X)

    def predict(self, X):
        """Class label of each sample's leaf."""
        leaf = self.apply(X)
        return self.tree_.leaf_classes[leaf].astype(self.classes_.dtype)

    def predict_proba(self, X):
        """Class frequencies of the training points in each sample's leaf."""
        leaf = self.apply(X)
        return self.leaf_proba_[leaf]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    # -- inspection (DESIGN §9; gto.inspection) ------------------------------------
    def _fit_inspection(self, X, sample_weight):
        from . import inspection

        self.n_node_samples_ = inspection.node_samples(self.tree_, X, sample_weight)
        self.feature_importances_ = inspection.feature_importances(self.tree_, X, sample_weight)

    def get_depth(self):
        """Depth of the fitted tree (longest root-to-leaf path)."""
        check_is_fitted(self)
        return self.tree_.get_depth()

    def get_n_leaves(self):
        """Number of leaves of the fitted tree."""
        check_is_fitted(self)
        return self.tree_.n_leaves

    def decision_path(self, X):
        """(n_samples, n_nodes) CSR indicator of the nodes each sample visits (preorder ids)."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, dtype=np.float64)
        return self.tree_.decision_path(X)
