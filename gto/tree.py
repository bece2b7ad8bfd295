"""Fixed-structure multivariate decision trees (paper §2).

A tree has D decisions and D + 1 leaves.  Decision d is a hyperplane
(w_d, gamma_d); a point goes left when ``x @ w_d - gamma_d <= 0``.  Decisions
are numbered in preorder, leaves left to right.
"""
from __future__ import annotations

import json
import numbers

import numpy as np

from . import inspection
from ._atomic import write_text_atomic
from ._validation import check_X, check_labels, check_sample_weight

#: the paper's three-decision tree (Figure 2; DESIGN §1), two classes 0 and 1
FIGURE2 = ((0, 1), (0, 1))

FORMAT = "gto.Tree"
FORMAT_VERSION = 1


def _is_internal(node):
    return isinstance(node, (tuple, list))


def _parse_structure(spec):
    """Walk a nested-pair spec; return (children, leaf_classes).

    ``children[d] = (left, right)`` where a child is ``("d", index)`` or
    ``("l", index)``.  Raises ValueError for anything that is not a binary tree.
    """
    children, leaves = [], []

    def walk(node, depth):
        if depth > 64:
            raise ValueError("structure is nested more than 64 levels deep")
        if _is_internal(node):
            if len(node) != 2:
                raise ValueError(
                    f"structure is not a binary tree: an internal node must be a "
                    f"(left, right) pair, got {len(node)} children in {node!r}"
                )
            d = len(children)
            children.append(None)
            left = walk(node[0], depth + 1)
            right = walk(node[1], depth + 1)
            children[d] = (left, right)
            return ("d", d)
        if node is None or isinstance(node, (dict, set, np.ndarray)):
            raise ValueError(f"structure has an invalid leaf {node!r}: a leaf is a class label")
        if isinstance(node, (float, np.floating)) and not np.isfinite(node):
            raise ValueError(f"structure has a non-finite leaf label {node!r}")
        leaves.append(node.item() if isinstance(node, np.generic) else node)
        return ("l", len(leaves) - 1)

    walk(spec, 0)
    if not children:
        raise ValueError("structure must have at least one decision: got a single leaf")
    return children, leaves


class Tree:
    """An oblique decision tree of fixed structure.

    Parameters
    ----------
    structure : nested pairs
        A leaf is its class label, an internal node a pair ``(left, right)``;
        the paper's Figure 2 tree is ``((0, 1), (0, 1))``.
    n_features : int
    W : array (D, n_features), optional
        Decision weights in preorder (zeros by default: no split set yet).
    gamma : array (D,), optional
        Decision thresholds.

    Attributes
    ----------
    W, gamma, leaf_classes, n_decisions, n_leaves, n_features
    paths : list of (L(k), G(k)) per leaf: decisions where the path turns
        left and right.
    """

    def __init__(self, structure, n_features, W=None, gamma=None):
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral):
            raise TypeError(f"n_features must be an int, got {type(n_features).__name__}")
        if n_features < 1:
            raise ValueError(f"n_features must be at least 1, got {n_features}")
        self._children, leaves = _parse_structure(structure)
        self.n_features = int(n_features)
        self.leaf_classes = np.array(leaves)
        if self.leaf_classes.dtype.kind not in "iufUSb":
            raise TypeError("leaf labels must be numbers or strings of one kind")
        D = len(self._children)
        self.W = np.zeros((D, self.n_features)) if W is None else W
        self.gamma = np.zeros(D) if gamma is None else gamma
        self._sides = self._side_matrix()

    # -- structure ---------------------------------------------------------
    def _side_matrix(self):
        K, D = len(self.leaf_classes), len(self._children)
        S = np.zeros((K, D), dtype=np.int8)

        def walk(child, path):
            kind, i = child
            if kind == "l":
                for d, s in path:
                    S[i, d] = s
                return
            left, right = self._children[i]
            walk(left, path + [(i, -1)])
            walk(right, path + [(i, +1)])

        walk(("d", 0), [])
        return S

    @property
    def n_decisions(self):
        return len(self._children)

    @property
    def n_leaves(self):
        return len(self.leaf_classes)

    @property
    def sides(self):
        """(K, D) int8 matrix: -1 where leaf k's path turns left at d, +1 right, 0 off-path."""
        return self._sides

    @property
    def paths(self):
        """Per leaf k the pair (L(k), G(k)) of decision index arrays (paper §2)."""
        return [(np.flatnonzero(row < 0), np.flatnonzero(row > 0)) for row in self._sides]

    @property
    def structure(self):
        """The nested-pair spec of this tree (tuples, leaf labels as Python scalars)."""

        def build(child):
            kind, i = child
            if kind == "l":
                return self.leaf_classes[i].item()
            left, right = self._children[i]
            return (build(left), build(right))

        return build(("d", 0))

    @property
    def children(self):
        """Per decision the pair of children, each ``("d", index)`` or ``("l", index)``."""
        return list(self._children)

    @property
    def W(self):
        return self._W

    @W.setter
    def W(self, value):
        W = np.array(value, dtype=float)
        D = len(self._children)
        if W.shape != (D, self.n_features):
            raise ValueError(f"W must have shape {(D, self.n_features)}, got {W.shape}")
        if not np.all(np.isfinite(W)):
            raise ValueError("W contains NaN or inf")
        self._W = W

    @property
    def gamma(self):
        return self._gamma

    @gamma.setter
    def gamma(self, value):
        gamma = np.array(value, dtype=float).reshape(-1) if np.ndim(value) else np.array(
            [value], dtype=float
        )
        D = len(self._children)
        if gamma.shape != (D,):
            raise ValueError(f"gamma must have shape {(D,)}, got {gamma.shape}")
        if not np.all(np.isfinite(gamma)):
            raise ValueError("gamma contains NaN or inf")
        self._gamma = gamma

    # -- constructors ------------------------------------------------------
    @classmethod
    def from_structure(cls, spec, n_features, W=None, gamma=None):
        """Tree from the nested-pair spec of DESIGN §1, e.g. ``((0, 1), (0, 1))``."""
        return cls(spec, n_features, W=W, gamma=gamma)

    @classmethod
    def complete(cls, depth, classes, n_features):
        """Complete tree of ``depth`` whose leaves cycle through ``classes`` left to right.

        ``Tree.complete(2, [0, 1], n)`` is the paper's Figure 2 tree ``((0, 1), (0, 1))``.
        """
        if isinstance(depth, bool) or not isinstance(depth, numbers.Integral) or depth < 1:
            raise ValueError(f"depth must be an int >= 1, got {depth!r}")
        if depth > 16:
            raise ValueError(f"depth {depth} is too large for a complete tree (at most 16)")
        classes = list(classes)
        if len(classes) < 2:
            raise ValueError("a tree needs at least two classes")
        labels = iter(classes[k % len(classes)] for k in range(2**depth))

        def build(level):
            if level == depth:
                return next(labels)
            return (build(level + 1), build(level + 1))

        return cls(build(0), n_features)

    @classmethod
    def from_sklearn(cls, model):
        """Tree equal to a fitted scikit-learn ``DecisionTreeClassifier``.

        Axis-aligned split on feature f at threshold t becomes w = e_f, gamma = t
        (scikit-learn also sends ``x_f <= t`` left); a leaf takes its majority class.
        """
        if not is_fitted_sklearn_tree(model):
            raise TypeError(
                "expected a fitted sklearn.tree.DecisionTreeClassifier, got "
                f"{type(model).__name__}"
            )
        tree_ = model.tree_
        if getattr(model, "n_outputs_", 1) != 1:
            raise ValueError("multi-output scikit-learn trees are not supported")
        left, right = tree_.children_left, tree_.children_right
        n = int(model.n_features_in_)
        W_rows, gammas = [], []

        def build(node):
            if left[node] == -1:
                return model.classes_[int(np.argmax(tree_.value[node][0]))]
            w = np.zeros(n)
            w[tree_.feature[node]] = 1.0
            W_rows.append(w)
            gammas.append(float(tree_.threshold[node]))
            return (build(left[node]), build(right[node]))

        spec = build(0)
        if not W_rows:
            raise ValueError("the scikit-learn tree is a single leaf: it has no decision to optimise")
        return cls(spec, n, W=np.array(W_rows), gamma=np.array(gammas))

    def copy(self):
        return Tree(self.structure, self.n_features, W=self.W.copy(), gamma=self.gamma.copy())

    # -- prediction --------------------------------------------------------
    def decision_values(self, X):
        """``X @ W.T - gamma``: (N, D) signed decision values."""
        X = check_X(X, self.n_features)
        return X @ self.W.T - self.gamma

    def apply(self, X):
        """Index of the leaf each point reaches (left iff x @ w - gamma <= 0).

        With s = +1 (right) / -1 (left) per decision, leaf k is reached iff
        ``s @ sides[k]`` equals the length of its path.
        """
        s = np.where(self.decision_values(X) > 0, 1, -1).astype(np.int64)
        match = s @ self._sides.T.astype(np.int64)
        return np.argmax(match == np.abs(self._sides).sum(axis=1), axis=1)

    def predict(self, X):
        """Class label of the leaf each point reaches."""
        return self.leaf_classes[self.apply(X)]

    def n_errors(self, X, y, sample_weight=None):
        """(Weighted) number of misclassified points under the strict rule."""
        X = check_X(X, self.n_features)
        y = check_labels(y, len(X))
        w = check_sample_weight(sample_weight, len(X))
        wrong = self.predict(X) != y
        total = float(np.sum(w[wrong]))
        return int(round(total)) if sample_weight is None else total

    # -- serialisation -----------------------------------------------------
    def to_dict(self):
        """Plain-JSON description of the tree."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "structure": _to_lists(self.structure),
            "n_features": self.n_features,
            "W": self.W.tolist(),
            "gamma": self.gamma.tolist(),
        }

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict`; ValueError for anything that is not a gto tree."""
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a gto model: expected a dict with format 'gto.Tree'")
        if data.get("version") != FORMAT_VERSION:
            raise ValueError(f"unsupported gto model version {data.get('version')!r}")
        missing = {"structure", "n_features", "W", "gamma"} - set(data)
        if missing:
            raise ValueError(f"gto model is missing {sorted(missing)}")
        return cls(_to_tuples(data["structure"]), data["n_features"], W=data["W"], gamma=data["gamma"])

    def save(self, path):
        """Write the tree as JSON, atomically (temporary file, then rename)."""
        write_text_atomic(path, json.dumps(self.to_dict(), indent=1))

    @classmethod
    def load(cls, path):
        """Read a tree written by :meth:`save`; never executes anything from the file."""
        try:
            with open(path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a gto model file (not JSON: {exc})") from None
        try:
            return cls.from_dict(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path} is not a valid gto model file: {exc}") from None

    # -- inspection (gto.inspection; DESIGN §9) ------------------------------------
    def to_text(self, feature_names=None, precision=3, X=None):
        """Readable nested if/else rendering; only used features, in original units.

        With training data ``X`` decisions that send every point one way are
        flagged.  See :func:`gto.export_text`.
        """
        return inspection.export_text(self, feature_names, precision, X=X)

    def get_depth(self):
        """Length of the longest root-to-leaf path."""
        return inspection.get_depth(self)

    def get_n_leaves(self):
        return self.n_leaves

    def decision_path(self, X):
        """(n_samples, n_nodes) CSR indicator of the nodes each sample visits.

        Nodes are numbered in preorder over decisions and leaves, as in scikit-learn.
        """
        return inspection.decision_path(self, X)

    def feature_importances(self, X, sample_weight=None):
        """Normalised feature importances on data ``X`` (:func:`gto.inspection.feature_importances`)."""
        return inspection.feature_importances(self, X, sample_weight)

    def prune(self, X):
        """Smaller tree with the same predictions on ``X``: constant decisions removed."""
        return inspection.prune(self, X)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return (
            f"Tree(structure={self.structure!r}, n_features={self.n_features}, "
            f"n_decisions={self.n_decisions})"
        )


def is_fitted_sklearn_tree(model):
    """True for a fitted scikit-learn decision tree classifier (the one check used everywhere)."""
    tree_ = getattr(model, "tree_", None)
    return hasattr(tree_, "children_left") and hasattr(model, "classes_")


def as_tree(model, name="tree"):
    """A :class:`Tree` from a Tree or a fitted scikit-learn DecisionTreeClassifier."""
    if isinstance(model, Tree):
        return model
    if is_fitted_sklearn_tree(model):
        return Tree.from_sklearn(model)
    raise TypeError(
        f"{name} must be a gto.Tree or a fitted sklearn DecisionTreeClassifier, "
        f"got {type(model).__name__}"
    )


def _to_lists(spec):
    return [_to_lists(c) for c in spec] if _is_internal(spec) else spec


def _to_tuples(spec):
    return tuple(_to_tuples(c) for c in spec) if _is_internal(spec) else spec
