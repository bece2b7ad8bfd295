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

from ._atomic import write_text_atomic
from ._validation import check_X, check_labels, check_sample_weight

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
        tree_ = getattr(model, "tree_", None)
        if tree_ is None or not hasattr(model, "classes_"):
            raise TypeError(
                "expected a fitted sklearn.tree.DecisionTreeClassifier, got "
                f"{type(model).__name__}"
            )
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
        return Tree(self.structure, self.n_features, W=self.W.copy(), gamma=self.gamma.copy(),
                    subsets=self.subsets)

    # -- prediction --------------------------------------------------------
    def decision_values(self, X):
        """``X @ W.T - gamma``: (N, D) signed decision values.

        A subset decision's value is -1 (feature in the set: left) or +1.
        """
        if self.has_subsets or _holds_objects(X):
            return subset_decision_values(self, X)
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
        pred = self.predict(X)
        y = check_labels(y, len(pred))
        w = check_sample_weight(sample_weight, len(pred))
        wrong = pred != y
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
            **({"subsets": subsets_to_json(self.subsets)} if self.has_subsets else {}),
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
        return cls(_to_tuples(data["structure"]), data["n_features"], W=data["W"], gamma=data["gamma"],
                   subsets=subsets_from_json(data.get("subsets")))

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

    # -- text --------------------------------------------------------------
    def to_text(self, feature_names=None, precision=3):
        """Readable nested if/else rendering of the tree."""
        names = feature_names or [f"x{j}" for j in range(self.n_features)]
        if len(names) != self.n_features:
            raise ValueError(f"need {self.n_features} feature names, got {len(names)}")
        lines = []

        def hyperplane(d):
            terms = [
                f"{w:+.{precision}g}*{names[j]}" for j, w in enumerate(self.W[d]) if w != 0
            ]
            lhs = " ".join(terms) if terms else "0"
            return f"{lhs.lstrip('+')} <= {self.gamma[d]:.{precision}g}"

        def walk(child, indent):
            kind, i = child
            pad = "  " * indent
            if kind == "l":
                lines.append(f"{pad}class {self.leaf_classes[i].item()!r}  [leaf {i}]")
                return
            left, right = self._children[i]
            test = hyperplane(i) if self.subsets[i] is None else subset_text(self, i, names)
            lines.append(f"{pad}if {test}:  [decision {i}]")
            walk(left, indent + 1)
            lines.append(f"{pad}else:")
            walk(right, indent + 1)

        walk(("d", 0), 0)
        return "\n".join(lines)

    def __str__(self):
        return self.to_text()

    def __repr__(self):
        return (
            f"Tree(structure={self.structure!r}, n_features={self.n_features}, "
            f"n_decisions={self.n_decisions})"
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


def _holds_objects(X):
    """True for object arrays and DataFrames with non-numeric columns (strings allowed)."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        return any(dt.kind not in "biuf" for dt in X.dtypes)
    return isinstance(X, np.ndarray) and X.dtype.kind == "O"


def _hashable(v):
    return v.item() if isinstance(v, np.generic) else v


def _format_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def subset_text(tree, d, names):
    """``name in {a, b}`` for subset decision ``d`` (used by to_text and DOT)."""
    f, values = tree.subsets[d]
    return f"{names[f]} in {{{', '.join(_format_value(v) for v in values)}}}"


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
