"""Fixed-structure multivariate decision trees (paper §2).

A tree has D decisions and D + 1 leaves.  Decision d is a hyperplane
(w_d, gamma_d); a point goes left when ``x @ w_d - gamma_d <= 0``.  Decisions
are numbered in preorder, leaves left to right.

Subset decisions (categorical features, Günlük et al.).  ``subsets[d]`` is
``None`` for a hyperplane or ``(f, values)``: the point goes left when its
feature ``f`` is one of ``values`` (numbers or strings, as in ``X``), and
right otherwise (also for a value never seen).  The row ``W[d]`` of a subset
decision is zero.  Such a tree predicts on arrays holding strings too
(object arrays, DataFrames); its JSON adds ``"subsets": [null | [f, [values]]]``
and its text reads ``colour in {red, blue}``.
"""
from __future__ import annotations

import json
import numbers

import numpy as np

from ..utils._atomic import write_text_atomic
from ..utils._validation import check_labels, check_sample_weight, check_X, non_numeric
from . import inspection

#: the paper's three-decision tree (Figure 2; docs/DESIGN.md §1), two classes 0 and 1
FIGURE2 = ((0, 1), (0, 1))

FORMAT = "gto.Tree"
FORMAT_VERSION = 2
#: the model files of ``gto fit`` before version 2 wrapped a version-1 tree
_OLD_CLI_FORMAT = "gto.Model"
_LABEL_TYPES = {"i": "int", "u": "int", "f": "float", "U": "str", "S": "str", "b": "bool"}
_LABEL_DTYPES = {"int": np.int64, "float": np.float64, "str": str, "bool": bool}


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


def _finite_array(name, array, shape):
    """``array`` if it has ``shape`` and only finite entries, else a ValueError naming ``name``."""
    if array.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} contains NaN or inf")
    return array


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

    subsets : list of None or (feature, values), optional
        Per decision: None for the hyperplane, or a subset decision "feature
        in values goes left" (module docstring).

    Attributes
    ----------
    W, gamma, subsets, leaf_classes, n_decisions, n_leaves, n_features
    paths : list of (L(k), G(k)) per leaf: decisions where the path turns
        left and right.
    """

    def __init__(self, structure, n_features, W=None, gamma=None, subsets=None):
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
        self.subsets = subsets
        self._sides = self._side_matrix()
        self._next = self._child_table()
        #: optional record of the training data, kept in the model file (docs/model_format.md)
        self.feature_names = None  # list of str, one per feature
        self.target = None  # name of the class column
        self.classes = None  # (C,) class labels seen in training
        self.leaf_counts = None  # (K, C) (weighted) training points of each class per leaf
        self.categories = None  # {feature: values seen in training} of categorical features

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

    def _child_table(self):
        """``(is_leaf, index)``, two (D, 2) arrays: decision d's left (column 0) and
        right (column 1) child, a leaf or a decision, by index (the walk of :meth:`apply`)."""
        is_leaf = np.array([[kind == "l" for kind, _ in pair] for pair in self._children])
        index = np.array([[i for _, i in pair] for pair in self._children], dtype=np.intp)
        return is_leaf, index

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
        self._W = _finite_array("W", np.array(value, dtype=float),
                                (len(self._children), self.n_features))

    @property
    def gamma(self):
        return self._gamma

    @gamma.setter
    def gamma(self, value):
        gamma = np.array(value, dtype=float).reshape(-1) if np.ndim(value) else np.array(
            [value], dtype=float
        )
        self._gamma = _finite_array("gamma", gamma, (len(self._children),))

    @property
    def subsets(self):
        return self._subsets

    @subsets.setter
    def subsets(self, value):
        self._subsets = check_subsets(value, len(self._children), self.n_features)

    @property
    def has_subsets(self):
        """True when some decision is a subset test."""
        return any(s is not None for s in self._subsets)

    # -- constructors ------------------------------------------------------
    @classmethod
    def from_structure(cls, spec, n_features, W=None, gamma=None):
        """Tree from the nested-pair spec of docs/DESIGN.md §1, e.g. ``((0, 1), (0, 1))``."""
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
        tree = Tree(self.structure, self.n_features, W=self.W.copy(), gamma=self.gamma.copy(),
                    subsets=self.subsets)
        tree.feature_names = None if self.feature_names is None else list(self.feature_names)
        tree.target = self.target
        tree.categories = None if self.categories is None else dict(self.categories)
        return tree

    # -- prediction --------------------------------------------------------
    def decision_values(self, X):
        """``X @ W.T - gamma``: (N, D) signed decision values.

        A subset decision's value is -1 (feature in the set: left) or +1.
        """
        if self.has_subsets or non_numeric(X):
            return subset_decision_values(self, X)
        X = check_X(X, self.n_features)
        return X @ self.W.T - self.gamma

    def apply(self, X):
        """Index of the leaf each point reaches (left iff x @ w - gamma <= 0).

        The points walk down from the root together, one level a step: the
        work is the points times the tree's depth, not times its leaves.
        """
        right = self.decision_values(X) > 0
        is_leaf, index = self._next
        leaf = np.empty(len(right), dtype=np.intp)
        at = np.arange(len(right))  # the points still at a decision
        node = np.zeros(len(right), dtype=np.intp)  # their decision
        while at.size:
            side = right[at, node].astype(np.intp)
            done, node = is_leaf[node, side], index[node, side]
            leaf[at[done]] = node[done]
            at, node = at[~done], node[~done]
        return leaf

    def predict(self, X):
        """Class label of the leaf each point reaches."""
        return self.leaf_classes[self.apply(X)]

    def n_errors(self, X, y, sample_weight=None):
        """(Weighted) number of misclassified points under the strict rule."""
        pred = self.predict(X)
        y = check_labels(y, len(pred))
        w = check_sample_weight(sample_weight, len(pred))
        wrong = pred != y
        total = float(np.sum(w[wrong]))
        return int(round(total)) if sample_weight is None else total

    # -- serialisation (format: docs/model_format.md) ------------------------
    def record_training(self, X, y, sample_weight=None, feature_names=None, target=None):
        """Keep the classes, per-leaf class counts and names of the training data.

        They go into the model file, so that ``predict_proba`` works after
        :meth:`load`.  Returns ``self``.
        """
        leaves = self.apply(X)  # checks X (strings allowed where decisions are subset tests)
        y = check_labels(y, len(leaves))
        w = check_sample_weight(sample_weight, len(leaves))
        self.classes = np.unique(y)
        counts = np.zeros((self.n_leaves, len(self.classes)))
        np.add.at(counts, (leaves, np.searchsorted(self.classes, y)), w)
        self.leaf_counts = counts
        if feature_names is not None:
            self.feature_names = _check_names(feature_names, self.n_features)
        if target is not None:
            self.target = str(target)
        return self

    def leaf_proba(self):
        """(K, C) class frequencies per leaf from :meth:`record_training`.

        A leaf no training point reached predicts its own class with
        probability 1 (uniform if its class was not seen in training).
        """
        if self.leaf_counts is None:
            raise ValueError("no class counts recorded: fit the tree (or call record_training)")
        counts = np.array(self.leaf_counts, dtype=float)
        for k in np.flatnonzero(counts.sum(axis=1) == 0):
            own = self.classes == self.leaf_classes[k]
            counts[k] = own if own.any() else 1.0
        return counts / counts.sum(axis=1, keepdims=True)

    def predict_proba(self, X):
        """Training class frequencies of the leaf each point reaches (columns: ``classes``)."""
        return self.leaf_proba()[self.apply(X)]

    def to_dict(self):
        """Plain-JSON description of the tree (docs/model_format.md)."""
        return {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "structure": _to_lists(self.structure),
            "label_type": _LABEL_TYPES[self.leaf_classes.dtype.kind],
            "n_features": self.n_features,
            "W": self.W.tolist(),
            "gamma": self.gamma.tolist(),
            "feature_names": None if self.feature_names is None else list(self.feature_names),
            "target": self.target,
            "classes": None if self.classes is None else self.classes.tolist(),
            "leaf_counts": None if self.leaf_counts is None else np.asarray(
                self.leaf_counts).tolist(),
            **({"subsets": subsets_to_json(self.subsets)} if self.has_subsets else {}),
            **({"categories": [[f, list(v)] for f, v in sorted(self.categories.items())]}
               if self.categories is not None else {}),
        }

    @classmethod
    def from_dict(cls, data):
        """Inverse of :meth:`to_dict`; ValueError for anything that is not a gto tree.

        Also reads version 1 and the ``gto.Model`` files of earlier ``gto fit``.
        """
        try:
            return cls._from_dict(data)
        except RecursionError:
            raise ValueError("the model is nested too deeply to be a gto tree") from None
        except OverflowError:
            raise ValueError("the model holds a number too large for a float") from None

    @classmethod
    def _from_dict(cls, data):
        extra = {}
        if isinstance(data, dict) and data.get("format") == _OLD_CLI_FORMAT:
            if data.get("version") != 1:
                raise ValueError(f"unsupported gto model version {data.get('version')!r}")
            extra = {k: data.get(k) for k in ("feature_names", "target")}
            data = data.get("tree")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ValueError("not a gto model: expected a dict with format 'gto.Tree'")
        version = data.get("version")
        if isinstance(version, bool) or version not in (1, FORMAT_VERSION):
            raise ValueError(f"unsupported gto model version {version!r}")
        missing = {"structure", "n_features", "W", "gamma"} - set(data)
        if missing:
            raise ValueError(f"gto model is missing {sorted(missing)}")
        for key in ("W", "gamma"):
            if not isinstance(data[key], list):
                raise ValueError(f"{key!r} must be a list of numbers, got {data[key]!r:.40}")
        tree = cls(_to_tuples(data["structure"]), data["n_features"], W=data["W"],
                   gamma=data["gamma"], subsets=subsets_from_json(data.get("subsets")))
        label_type = data.get("label_type")
        if label_type is not None:
            if label_type not in _LABEL_DTYPES:
                raise ValueError(f"label_type must be one of {sorted(_LABEL_DTYPES)}, "
                                 f"got {label_type!r}")
            tree.leaf_classes = _cast_labels(tree.leaf_classes, label_type, "structure")
        meta = {**extra, **{k: data[k] for k in ("feature_names", "target") if k in data}}
        if meta.get("feature_names") is not None:
            tree.feature_names = _check_names(meta["feature_names"], tree.n_features)
        if meta.get("target") is not None:
            if not isinstance(meta["target"], str):
                raise ValueError(f"target must be a string, got {meta['target']!r:.40}")
            tree.target = meta["target"]
        if data.get("categories") is not None:
            tree.categories = check_categories(data["categories"], tree.n_features)
        if data.get("classes") is not None or data.get("leaf_counts") is not None:
            tree.classes, tree.leaf_counts = _check_counts(tree, data.get("classes"),
                                                           data.get("leaf_counts"), label_type)
        return tree

    def save(self, path):
        """Write the tree as JSON, atomically (temporary file, then rename)."""
        try:
            text = json.dumps(self.to_dict(), indent=1, allow_nan=False)
        except ValueError:
            raise ValueError("the tree holds inf or NaN and cannot be saved as JSON") from None
        write_text_atomic(path, text)

    @classmethod
    def load(cls, path):
        """Read a tree written by :meth:`save` or ``gto fit``; never executes anything from the file."""
        try:
            with open(path, encoding="utf-8-sig") as fh:
                data = json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path} is not a gto model file (not JSON): {exc}") from None
        except RecursionError:
            raise ValueError(f"{path} is not a gto model file (JSON nested too deeply)") from None
        try:
            return cls.from_dict(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"{path} is not a gto model file: {exc}") from None

    # -- inspection (gto.model.inspection; docs/DESIGN.md §9) ------------------------------------
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
        """Normalised feature importances on data ``X`` (:func:`gto.model.inspection.feature_importances`)."""
        return inspection.feature_importances(self, X, sample_weight)

    def prune(self, X=None):
        """Smaller tree with the same predictions on ``X`` (default: the training data,
        from the recorded leaf counts): constant decisions removed."""
        return inspection.prune(self, X)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return (
            f"Tree(structure={self.structure!r}, n_features={self.n_features}, "
            f"n_decisions={self.n_decisions})"
        )


def _check_names(names, n_features):
    if isinstance(names, str) or not all(isinstance(n, str) for n in names) \
            or len(names) != n_features:
        raise ValueError(f"feature_names must be {n_features} strings")
    return list(names)


def _cast_labels(values, label_type, name):
    """``values`` as an array of ``label_type``; ValueError if that changes a value."""
    values = np.asarray(values)
    if label_type == "bool" and values.dtype.kind != "b":
        raise ValueError(f"{name}: labels are not booleans")
    if label_type == "str" and values.dtype.kind not in "US":
        raise ValueError(f"{name}: labels are not strings")
    if label_type in ("int", "float") and values.dtype.kind not in "iuf":
        raise ValueError(f"{name}: labels are not numbers")
    cast = values.astype(_LABEL_DTYPES[label_type])
    if label_type == "int" and np.any(cast != values):
        raise ValueError(f"{name}: labels are not integers")
    return cast


def _check_counts(tree, classes, counts, label_type):
    if classes is None or counts is None or not isinstance(classes, list) or not classes:
        raise ValueError("classes and leaf_counts must both be given, classes a non-empty list")
    classes = np.array(classes)
    if label_type is not None:
        classes = _cast_labels(classes, label_type, "classes")
    if classes.dtype.kind not in "iufUSb" or len(np.unique(classes)) != len(classes):
        raise ValueError("classes must be distinct labels of one kind")
    if not isinstance(counts, list):
        raise ValueError("leaf_counts must be a list of lists")
    try:
        counts = np.array(counts, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("leaf_counts must be numbers") from None
    if counts.shape != (tree.n_leaves, len(classes)) or not np.all(np.isfinite(counts)) \
            or np.any(counts < 0):
        raise ValueError(f"leaf_counts must be a ({tree.n_leaves}, {len(classes)}) table of "
                         "finite non-negative numbers")
    order = np.argsort(classes, kind="stable")
    return classes[order], counts[:, order]


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


def check_subsets(subsets, n_decisions, n_features):
    """Validated per-decision subset spec: list of None or (feature, tuple of values)."""
    if subsets is None:
        return [None] * n_decisions
    subsets = list(subsets)
    if len(subsets) != n_decisions:
        raise ValueError(f"subsets must have {n_decisions} entries (one per decision), got {len(subsets)}")
    out = []
    for d, s in enumerate(subsets):
        if s is None:
            out.append(None)
            continue
        if not isinstance(s, (tuple, list)) or len(s) != 2:
            raise ValueError(f"subsets[{d}] must be None or a (feature, values) pair, got {s!r}")
        f, values = s
        if isinstance(f, bool) or not isinstance(f, numbers.Integral) or not 0 <= f < n_features:
            raise ValueError(f"subsets[{d}] names feature {f!r}, not in 0..{n_features - 1}")
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"subsets[{d}] values must be a collection, got {values!r}")
        vals = []
        for v in values:
            v = v.item() if isinstance(v, np.generic) else v
            if isinstance(v, bool) or not isinstance(v, (numbers.Real, str)):
                raise TypeError(f"subsets[{d}] values must be numbers or strings, got {v!r}")
            if isinstance(v, float) and not np.isfinite(v):
                raise ValueError(f"subsets[{d}] holds a non-finite value")
            vals.append(v)
        out.append((int(f), tuple(sorted(set(vals), key=lambda v: (isinstance(v, str), v)))))
    return out


def check_categories(categories, n_features):
    """``{feature: values}`` from ``[[feature, [values]], ...]`` (or a dict), checked as the
    values of subset decisions are (:func:`check_subsets`)."""
    if isinstance(categories, dict):
        items = list(categories.items())
    elif isinstance(categories, (list, tuple)):
        items = categories
    else:
        raise ValueError("categories must be a list of [feature, [values]] pairs")
    pairs = []
    for item in items:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise ValueError(f"categories: expected [feature, [values]], got {item!r:.40}")
        pairs.append(tuple(item))
    checked = check_subsets(pairs, len(pairs), n_features) if pairs else []
    return {int(f): tuple(values) for f, values in checked}


def subset_decision_values(tree, X):
    """(N, D) decision values of a tree with subset decisions on ``X``.

    ``X`` may hold strings (object array or DataFrame); the columns that a
    hyperplane uses must be numeric.  A subset decision gives -1 (left) when
    the feature is in its set, else +1.
    """
    if hasattr(X, "to_numpy"):
        X = X.to_numpy(dtype=object)
    X = np.asarray(X)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be 2-D (n_samples, n_features) with rows, got shape {X.shape}")
    if X.shape[1] != tree.n_features:
        raise ValueError(f"X has {X.shape[1]} features, the tree expects {tree.n_features}")
    out = np.empty((len(X), tree.n_decisions))
    for d, s in enumerate(tree.subsets):
        if s is None:
            used = np.flatnonzero(tree.W[d])
            cols = check_X(X[:, used]) if used.size else np.zeros((len(X), 0))
            out[:, d] = cols @ tree.W[d, used] - tree.gamma[d]
        else:
            f, values = s
            col = X[:, f]
            if col.dtype.kind == "O":
                members = set(values)
                inside = np.fromiter((_hashable(v) in members for v in col), bool, len(col))
            else:
                inside = np.isin(col, [v for v in values if not isinstance(v, str)])
            out[:, d] = np.where(inside, -1.0, 1.0)
    return out


def _hashable(v):
    return v.item() if isinstance(v, np.generic) else v


def subsets_to_json(subsets):
    """JSON form of a subset spec: ``null`` or ``[feature, [values]]`` per decision."""
    return [None if s is None else [s[0], list(s[1])] for s in subsets]


def subsets_from_json(data):
    """Inverse of :func:`subsets_to_json` (``None`` stays None: no subset decision)."""
    if data is None:
        return None
    if not isinstance(data, list):
        raise ValueError("subsets must be a list")
    return [None if s is None else tuple(s) for s in data]


def _to_lists(spec):
    return [_to_lists(c) for c in spec] if _is_internal(spec) else spec


def _to_tuples(spec):
    return tuple(_to_tuples(c) for c in spec) if _is_internal(spec) else spec
