"""Categorical columns as groups of 0/1 columns (Günlük et al. §3, §4.4).

``encode`` reads a table (numpy array, object array or pandas DataFrame) and
returns an :class:`Encoding`: per original column one *group* of encoded
columns.

- a *nominal* categorical column becomes one 0/1 column per observed value
  (a point has exactly one 1 in its group; a value never seen in training
  gives all zeros);
- an *ordinal* column (a categorical column named in ``ordinal``, or a
  numeric column when ``bin_numeric=True``) becomes one 0/1 column per bin;
  numeric columns are binned by deciles (paper §4.4), ordered codes by their
  values.  Bin edges lie half-way between the largest training value of a
  bin and the smallest of the next, so a threshold ``x <= edge`` separates
  the bins exactly on the training data;
- a *numeric* column (``bin_numeric=False``) stays one real column.

The encoded matrix feeds GTO (oblique search on the one-hot columns) and the
ODT integer program (:func:`gto.mip.solve_odt`).
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

NOMINAL, ORDINAL, NUMERIC = "nominal", "ordinal", "numeric"


def _is_missing(v):
    return v is None or (isinstance(v, float) and np.isnan(v))


def as_table(X, name="X"):
    """``(values, names, auto)``: a 2-D array (float if all numeric, else object),
    column names, and the columns that are non-numeric (pandas category, object,
    string or bool dtype; or entries that are not numbers)."""
    if hasattr(X, "dtypes") and hasattr(X, "columns"):  # pandas DataFrame
        names = [str(c) for c in X.columns]
        auto = [
            j for j, dt in enumerate(X.dtypes)
            if str(dt) in ("category", "object", "bool", "string", "str") or dt.kind in "OSUb"
        ]
        values = X.to_numpy(dtype=object) if auto else X.to_numpy(dtype=float)
    else:
        values = np.asarray(X)
        names = None
        if values.dtype.kind in "OSU":
            values = values.astype(object)
            auto = [
                j for j in range(values.shape[1] if values.ndim == 2 else 0)
                if not all(isinstance(v, numbers.Real) and not isinstance(v, bool)
                           for v in values[:, j])
            ]
        elif values.dtype.kind in "biuf":
            auto = [] if values.dtype.kind != "b" else list(range(values.shape[-1]))
            values = values.astype(float) if values.dtype.kind != "b" else values.astype(object)
        else:
            raise TypeError(f"{name} must be an array or a DataFrame, got dtype {values.dtype}")
    if values.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features), got shape {values.shape}")
    if values.shape[0] == 0:
        raise ValueError(f"{name} has no rows")
    names = names or [f"x{j}" for j in range(values.shape[1])]
    return values, names, auto


class UnseenCategoryWarning(UserWarning):
    """New data hold a category that the training data did not have.

    Such a value matches none of the known values of its feature: all the
    feature's one-hot columns are 0, and a subset test ``name in {...}``
    sends the point right (it is not in the set)."""


def by_name(X, names):
    """``X`` with the columns ``names`` in that order when ``X`` is a DataFrame
    (columns matched by name); ValueError naming missing or extra columns.
    Arrays, and data without fitted names, are returned as they are."""
    if names is None or not (hasattr(X, "columns") and hasattr(X, "dtypes")):
        return X
    names = [str(n) for n in names]
    have = [str(c) for c in X.columns]
    missing = [n for n in names if n not in have]
    extra = [c for c in have if c not in names]
    if missing or extra:
        parts = ([f"missing column(s) {missing}"] if missing else []) + (
            [f"unknown column(s) {extra}"] if extra else [])
        raise ValueError(f"X must have the columns fitted on, {names}: {'; '.join(parts)}")
    if have == names:
        return X
    frame = X.copy()
    frame.columns = have
    return frame[names]


def unseen(encoding, X):
    """``{column name: sorted unseen values}`` of the nominal columns of ``X``."""
    values = encoding.table(X)
    out = {}
    for c in encoding.columns:
        if c.kind == NOMINAL:
            col = values[:, c.index]
            new = col[c.codes(col) < 0]
            if len(new):
                out[c.name] = sorted({format_value(v) for v in new})
    return out


def _caller_level():
    """``stacklevel`` of the first frame outside the gto package (the user's call)."""
    import os
    import sys

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(1), 1
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def warn_unseen(encoding, X):
    """Warn (:class:`UnseenCategoryWarning`) when ``X`` holds categories not seen in training."""
    found = unseen(encoding, X)
    if found:
        listed = "; ".join(f"{name}: {', '.join(map(repr, v[:5]))}{', ...' if len(v) > 5 else ''}"
                           for name, v in found.items())
        warnings.warn(f"X has categories not seen in fit ({listed}); they match no known value "
                      "(all one-hot columns 0; a subset test sends them right)",
                      UnseenCategoryWarning, stacklevel=_caller_level())
    return found


def _column_indices(spec, names, auto, arg):
    """Indices named by ``spec``: "all", None/"auto", a bool mask, ints or names."""
    p = len(names)
    if spec is None or (isinstance(spec, str) and spec == "auto"):
        return list(auto)
    if isinstance(spec, str):
        if spec == "all":
            return list(range(p))
        spec = [spec]
    spec = list(np.asarray(spec).tolist()) if isinstance(spec, np.ndarray) else list(spec)
    if spec and all(isinstance(s, (bool, np.bool_)) for s in spec):
        if len(spec) != p:
            raise ValueError(f"{arg} as a mask needs {p} entries, got {len(spec)}")
        return [j for j, s in enumerate(spec) if s]
    out = []
    for s in spec:
        if isinstance(s, str):
            if s not in names:
                raise ValueError(f"{arg} names unknown column {s!r}; columns are {names}")
            out.append(names.index(s))
        elif isinstance(s, numbers.Integral) and not isinstance(s, bool):
            if not -p <= s < p:
                raise ValueError(f"{arg} index {s} is out of range for {p} columns")
            out.append(int(s) % p)
        else:
            raise TypeError(f"{arg} must hold column indices or names, got {s!r}")
    return sorted(set(out))


def _numeric(col, name):
    try:
        x = np.asarray(col, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"column {name!r} is not numeric; list it in categorical_features") from None
    if not np.all(np.isfinite(x)):
        raise ValueError(f"column {name!r} contains NaN or inf")
    return x


def _midpoints(values):
    v = np.unique(values)
    return (v[:-1] + v[1:]) / 2


def decile_edges(x, n_bins=10):
    """Bin edges of a numeric column by quantiles (paper §4.4: deciles).

    Points are first grouped by the quantiles at 1/n_bins, ..., (n_bins-1)/n_bins
    (``q_{b-1} < x <= q_b``); each edge is then moved half-way between the
    largest value of one non-empty bin and the smallest of the next, which
    keeps the same partition of the training values with no value on an edge.
    """
    x = np.asarray(x, dtype=float)
    q = np.unique(np.quantile(x, np.arange(1, n_bins) / n_bins))
    b = np.searchsorted(q, x, side="left")
    occupied = np.unique(b)
    hi = np.array([x[b == k].max() for k in occupied[:-1]])
    lo = np.array([x[b == k].min() for k in occupied[1:]])
    return (hi + lo) / 2


@dataclass
class Column:
    """One original column: ``kind`` nominal/ordinal/numeric, its values or bin edges."""

    index: int
    name: str
    kind: str
    values: np.ndarray = None  # nominal: sorted observed values (raw)
    edges: np.ndarray = None  # ordinal: increasing bin edges, len = n_values - 1

    @property
    def n_values(self):
        if self.kind == NOMINAL:
            return len(self.values)
        if self.kind == ORDINAL:
            return len(self.edges) + 1
        return 1

    def codes(self, col):
        """Value index of each entry (nominal: -1 when unseen; ordinal: bin)."""
        if self.kind == NOMINAL:
            lookup = {v: k for k, v in enumerate(self.values.tolist())}
            return np.array([lookup.get(_key(v), -1) for v in col], dtype=np.int64)
        if self.kind == ORDINAL:
            return np.searchsorted(self.edges, _numeric(col, self.name), side="left")
        raise ValueError("a numeric column has no codes")

    def labels(self, precision=3):
        """Readable name of each value (nominal) or bin (ordinal)."""
        if self.kind == NOMINAL:
            return [format_value(v) for v in self.values.tolist()]
        e = [f"{v:.{precision}g}" for v in self.edges]
        if not e:
            return ["all"]
        return [f"<= {e[0]}"] + [f"({a}, {b}]" for a, b in zip(e[:-1], e[1:])] + [f"> {e[-1]}"]


def _key(v):
    """Hashable key of a raw value: floats that are whole stay floats (1 == 1.0)."""
    return v.item() if isinstance(v, np.generic) else v


def format_value(v):
    """A category value for display: ``2.0`` as ``2``, strings unquoted."""
    v = _key(v)
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


@dataclass
class Encoding:
    """Fitted encoding of a table into groups of columns (see module docstring)."""

    columns: list
    groups: list = field(init=False)  # per column: indices of its encoded columns

    def __post_init__(self):
        start, self.groups = 0, []
        for c in self.columns:
            self.groups.append(np.arange(start, start + c.n_values))
            start += c.n_values
        self.n_encoded = start

    @property
    def n_features(self):
        return len(self.columns)

    @property
    def feature_names(self):
        return [c.name for c in self.columns]

    @property
    def encoded_names(self):
        """``name=value`` per one-hot column, ``name`` for a numeric column."""
        out = []
        for c in self.columns:
            out += [c.name] if c.kind == NUMERIC else [f"{c.name}={v}" for v in c.labels()]
        return out

    def table(self, X):
        """``X`` as a checked 2-D array with this encoding's column count."""
        values, _, _ = as_table(X)
        if values.shape[1] != self.n_features:
            raise ValueError(f"X has {values.shape[1]} features, the encoding expects {self.n_features}")
        return values

    def codes(self, X):
        """(N, n_features) value index per column (-1 for an unseen nominal value)."""
        values = self.table(X)
        out = np.zeros(values.shape, dtype=np.int64)
        for c in self.columns:
            if c.kind != NUMERIC:
                out[:, c.index] = c.codes(values[:, c.index])
        return out

    def transform(self, X):
        """(N, n_encoded) float matrix: one-hot groups, numeric columns as they are."""
        values = self.table(X)
        out = np.zeros((len(values), self.n_encoded))
        for c, g in zip(self.columns, self.groups):
            if c.kind == NUMERIC:
                out[:, g[0]] = _numeric(values[:, c.index], c.name)
            else:
                k = c.codes(values[:, c.index])
                seen = k >= 0
                out[np.flatnonzero(seen), g[k[seen]]] = 1.0
        return out


def encode(X, categorical_features="auto", ordinal=(), bin_numeric=False, n_bins=10):
    """Fit an :class:`Encoding` of ``X``.

    Parameters
    ----------
    X : array (numeric or object) or pandas DataFrame.
    categorical_features : "auto" or None (pandas category/object/bool
        columns and columns holding non-numbers), "all", a bool mask, or
        column indices / names.
    ordinal : indices / names of categorical columns whose values are ordered
        (branching on them is by thresholds only, paper §4.4).
    bin_numeric : bin the non-categorical columns by quantiles into ordinal
        groups (for the ODT model) instead of keeping them numeric.
    n_bins : number of quantile bins (10: deciles).
    """
    values, names, auto = as_table(X)
    cat = _column_indices(categorical_features, names, auto, "categorical_features")
    ordn = _column_indices(list(ordinal) if not isinstance(ordinal, str) else ordinal,
                           names, auto, "ordinal")
    missing = [j for j in auto if j not in cat]
    if missing:
        raise TypeError(
            f"columns {[names[j] for j in missing]} hold non-numbers; list them in categorical_features"
        )
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 2:
        raise ValueError(f"n_bins must be an int >= 2, got {n_bins!r}")
    columns = []
    for j, name in enumerate(names):
        col = values[:, j]
        if j in cat and j not in ordn:
            if any(_is_missing(v) for v in col):
                raise ValueError(f"categorical column {name!r} has missing values")
            keys = [_key(v) for v in col]
            try:
                uniq = sorted(set(keys))
            except TypeError:
                raise TypeError(f"column {name!r} mixes numbers and strings") from None
            columns.append(Column(j, name, NOMINAL, values=np.array(uniq, dtype=object)))
        elif j in ordn:
            columns.append(Column(j, name, ORDINAL, edges=_midpoints(_numeric(col, name))))
        elif bin_numeric:
            columns.append(Column(j, name, ORDINAL, edges=decile_edges(_numeric(col, name), n_bins)))
        else:
            _numeric(col, name)
            columns.append(Column(j, name, NUMERIC))
    return Encoding(columns)
