"""Input checks shared by the public functions: clear errors, never silent coercion."""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import Interval, Options

#: parameter constraints shared by the public functions (scikit-learn's declarations,
#: checked by ``validate_params`` / ``_parameter_constraints``)
SECONDS = [None, Interval(Real, 0, np.inf, closed="neither")]  # a positive finite time or None
POWER = [Options(Integral, {1, 2})]  # the power p on the decision errors
RANDOM_STATE = ["random_state", np.random.Generator]  # also a numpy Generator

#: sparse X up to this many entries is made dense; larger is refused
SPARSE_DENSIFY_LIMIT = 10_000_000


def non_numeric(X):
    """True for a DataFrame with category, object, bool or string columns and for an
    array of strings or an object array holding strings (categorical data: subset
    decisions); sparse matrices and numeric arrays are numeric."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):
        return any(str(dt) in ("category", "object", "bool", "string", "str") for dt in X.dtypes)
    if hasattr(X, "tocsr") or not hasattr(X, "__len__"):  # sparse matrices and the like
        return False
    a = np.asarray(X)
    if a.dtype.kind in "SU":
        return True
    return a.dtype.kind == "O" and any(isinstance(v, str) for v in a.ravel())


def check_X(X, n_features=None, name="X"):
    """2-D finite float array; ``n_features`` columns if given."""
    if hasattr(X, "to_numpy"):
        X = X.to_numpy()
    if hasattr(X, "toarray") and hasattr(X, "nnz"):  # scipy.sparse
        if np.prod(X.shape) > SPARSE_DENSIFY_LIMIT:
            raise TypeError(f"{name} is a sparse matrix of shape {X.shape}: sparse input is not "
                            "supported (oblique splits use every feature); pass a dense array")
        X = X.toarray()
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array: {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {X.shape}")
    if X.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or inf")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(f"{name} has {X.shape[1]} features, the tree expects {n_features}")
    return X


def check_labels(y, n_samples, name="y"):
    """1-D label array of length ``n_samples`` (ints, floats or strings)."""
    if hasattr(y, "to_numpy"):
        y = y.to_numpy()
    y = np.asarray(y)
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {y.shape}")
    if len(y) != n_samples:
        raise ValueError(f"{name} has {len(y)} labels for {n_samples} samples")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} contains NaN or inf")
    if y.dtype.kind == "O":
        try:
            y = y.astype(str) if all(isinstance(v, str) for v in y) else y.astype(float)
        except (TypeError, ValueError):
            raise TypeError(f"{name} must hold numbers or strings of one kind") from None
    return y


#: weights are rescaled (by a power of two) when the largest lies outside
#: [2**-WEIGHT_EXPONENT, 2**WEIGHT_EXPONENT]: sums and objectives then stay finite
WEIGHT_EXPONENT = 200


def check_sample_weight(sample_weight, n_samples):
    """Non-negative finite weights, ones by default.

    Weights are relative: when the largest is above ``2**WEIGHT_EXPONENT`` or
    below ``2**-WEIGHT_EXPONENT`` (1e308: their total and the objectives would
    overflow to inf) all are multiplied by one power of two, which brings the
    largest into [0.5, 1) and is exact (a weight below 2**-1000 of the largest
    may lose bits); weighted counts are then in those units.
    """
    if sample_weight is None:
        return np.ones(n_samples)
    if hasattr(sample_weight, "to_numpy"):
        sample_weight = sample_weight.to_numpy()
    try:
        w = np.asarray(sample_weight, dtype=float)
    except (TypeError, ValueError):
        raise TypeError("sample_weight must be numbers, one per sample") from None
    if w.shape != (n_samples,):
        raise ValueError(f"sample_weight must have shape ({n_samples},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("sample_weight must be finite and non-negative")
    if not np.any(w > 0):
        raise ValueError("sample_weight is zero for every sample")
    _, exponent = np.frexp(w.max())
    if abs(int(exponent)) > WEIGHT_EXPONENT:
        w = np.ldexp(w, -int(exponent))
    return w


def leaf_class_points(tree, y, w=None, searched=False):
    """``(has_leaf, lost)``: whether each point's class has a leaf in ``tree``, and the
    total weight ``w`` of the others (``w`` None: their count, an int, as
    ``Tree.n_errors`` counts), which have no triple (docs/DESIGN.md §2) and are
    misclassified whatever the decisions.  ``searched``:
    raise ValueError unless the points of leaf classes hold two classes of positive
    weight, as a search of them needs."""
    has_leaf = np.isin(y, tree.leaf_classes)
    counts = w is None
    w = np.ones(len(y)) if counts else np.asarray(w, dtype=float)
    if searched:
        kept = np.unique(y[has_leaf & (w > 0)])
        if len(kept) < 2:
            raise ValueError(
                f"labels {np.unique(y[~has_leaf]).tolist()} have no leaf in the tree (leaf "
                f"classes {np.unique(tree.leaf_classes).tolist()}), and the points of its leaf "
                f"classes hold {len(kept)} class(es): a search needs two")
    lost = float(w[~has_leaf].sum())
    return has_leaf, int(round(lost)) if counts else lost


def check_fit_data(tree, X, y, sample_weight=None, leafless=False):
    """Validate (X, y, sample_weight) against ``tree``: shapes, finiteness, labels.

    The data must hold at least two classes, and every label must have a leaf of
    its class unless ``leafless`` (the caller then sets such points apart:
    :func:`gto.optimize` counts them as errors whatever the decisions).
    """
    X = check_X(X, tree.n_features)
    y = check_labels(y, len(X))
    w = check_sample_weight(sample_weight, len(X))
    present = np.unique(y)
    if len(present) < 2:
        raise ValueError(f"y has one class only ({present[0].item()!r}); a tree needs at least two")
    unknown = present[~np.isin(present, tree.leaf_classes)]
    if unknown.size and not leafless:
        raise ValueError(
            f"labels {unknown.tolist()} have no leaf in the tree "
            f"(leaf classes {np.unique(tree.leaf_classes).tolist()})"
        )
    return X, y, w
