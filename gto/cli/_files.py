"""The command line's files: CSV data in (through pandas), model files and text out.

``read_table`` reads a CSV file with a header into numeric features, class
labels of their own type (``1`` int, ``1.0`` float, ``a`` string) and
optional sample weights; ``save_model``/``load_model`` are ``Tree.save`` and
``Tree.load`` (one format, docs/model_format.md) with file-naming errors;
``write_text_atomic`` writes safely (:mod:`gto.utils._atomic`).  Every problem is a
:class:`DataError` with a one-line message naming the file, and where it
helps the line and column.
"""
from __future__ import annotations

import csv
import os
import warnings
from collections import namedtuple

import numpy as np

from ..utils._atomic import check_writable, write_text_atomic

__all__ = ["DataError", "Table", "read_table", "labels", "save_model", "load_model",
           "write_text_atomic", "check_writable", "NA_MARKERS"]

#: texts read as a missing value (compared after stripping blanks)
NA_MARKERS = frozenset({"", "?", "NA", "N/A", "na", "n/a", "NaN", "nan", "NAN", "null", "NULL",
                        "None", "-"})

Table = namedtuple("Table", "X y feature_names sample_weight n_dropped")


class DataError(ValueError):
    """A data file that cannot be used, with a message for the user."""


def _read_csv(path, sep):
    import pandas as pd  # imported here: the gto command starts faster

    if not os.path.isfile(os.path.realpath(path)) and not os.path.exists(path):
        raise DataError(f"{path}: no such file")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", pd.errors.ParserWarning)
            frame = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False, na_filter=False,
                                encoding="utf-8-sig", skipinitialspace=True, index_col=False,
                                engine="python" if len(sep) > 1 else "c")
    except pd.errors.ParserWarning:
        raise DataError(f"{path}: {_ragged_line(path, sep)} (is this a {sep!r}-separated file "
                        "with a header? see --sep)") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a CSV text file (not UTF-8)") from None
    except pd.errors.EmptyDataError:
        raise DataError(f"{path}: the file is empty") from None
    except pd.errors.ParserError as exc:
        where = _ragged_line(path, sep)
        if where.startswith("a line"):
            where = str(exc).strip().splitlines()[-1]
        raise DataError(f"{path}: not a valid CSV file with separator {sep!r}: {where}") from None
    header = pd.read_csv(path, sep=sep, dtype=str, header=None, nrows=1, keep_default_na=False,
                         encoding="utf-8-sig", engine="python" if len(sep) > 1 else "c")
    names = [str(c).strip() for c in header.iloc[0]]
    if len(set(names)) != len(names):
        raise DataError(f"{path}: the header repeats a column name")
    frame.columns = names
    if len(frame) == 0:
        raise DataError(f"{path}: no data rows under the header")
    return frame


def _ragged_line(path, sep):
    """Where a line has more fields than the header (for the error message)."""
    with open(path, newline="", encoding="utf-8-sig") as fh:
        rows = csv.reader(fh, delimiter=sep) if len(sep) == 1 else (
            line.split(sep) for line in fh)
        header = None
        for i, row in enumerate(rows, start=1):
            if header is None:
                header = len(row)
            elif len(row) > header:
                return f"line {i} has {len(row)} fields but the header has {header}"
    return "a line has more fields than the header"


def labels(values):
    """Class labels of their written type: ints if all are integers, else floats, else strings."""
    values = [str(v).strip() for v in values]
    for kind in (int, float):
        try:
            out = np.array([kind(v) for v in values])
        except ValueError:
            continue
        if kind is int or np.all(np.isfinite(out)):
            return out
    return np.array(values)


def _numbers(frame, column, path, hint=False):
    """Float column; DataError naming the line of the first text that is not a finite number
    (with ``hint``, a feature column, saying that categories go in --categorical)."""
    text = frame[column].str.strip()
    try:
        values = text.astype(float).to_numpy()
    except ValueError:
        values = np.array([_to_float(v) for v in text])
    bad = ~np.isfinite(values) & ~text.isin(NA_MARKERS).to_numpy()
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        what = "is not finite" if _to_float(text.iloc[i]) == _to_float(text.iloc[i]) else \
            "is not a number"
        if hint and what == "is not a number":
            what += " (a column of categories? name it in --categorical)"
        raise DataError(f"{path}: line {i + 2}, column {column!r}: {text.iloc[i]!r} {what}")
    return values


def _to_float(text):
    try:
        return float(text)
    except ValueError:
        return np.nan


def read_table(path, target=None, features=None, target_optional=False, *, sep=",",
               weight=None, drop_na=False, categorical=()):
    """:class:`Table` ``(X, y, feature_names, sample_weight, n_dropped)`` from a CSV file.

    ``features``: column names to use (default: every column but ``target``
    and ``weight``).  ``target``: the class column; ``y`` is None when it is
    None, or when the file lacks it and ``target_optional`` is true.
    ``categorical``: feature columns read as category values of their written
    type (as class labels, :func:`labels`: ints, floats or strings); X is then
    an object array, the other columns holding floats.
    Missing values (:data:`NA_MARKERS`) are an error naming the line, or with
    ``drop_na`` their rows are dropped and counted in ``n_dropped``.
    """
    frame = _read_csv(path, sep)
    header = list(frame.columns)
    if target is not None and target not in header:
        if not target_optional:
            raise DataError(f"{path}: no target column {target!r}; columns are "
                            f"{', '.join(header)} (separator {sep!r}; see --sep)")
        target = None
    if weight is not None and weight not in header:
        raise DataError(f"{path}: no sample-weight column {weight!r}")
    if features is None:
        features = [h for h in header if h not in (target, weight)]
    missing = [f for f in features if f not in header]
    if missing:
        raise DataError(f"{path}: no feature column(s) {', '.join(map(repr, missing))}")
    if not features:
        raise DataError(f"{path}: no feature columns besides the target {target!r}")
    used = list(features) + [c for c in (target, weight) if c is not None]
    na = frame[used].apply(lambda col: col.str.strip().isin(NA_MARKERS)).to_numpy()
    n_dropped = 0
    if na.any():
        if not drop_na:
            i, j = np.argwhere(na)[0]
            raise DataError(
                f"{path}: line {i + 2}, column {used[j]!r}: missing value "
                f"{frame[used[j]].iloc[i].strip()!r} ({int(na.any(axis=1).sum())} row(s) have "
                "one; --drop-na drops them)")
        keep = ~na.any(axis=1)
        n_dropped = int((~keep).sum())
        frame = frame[keep].reset_index(drop=True)
        if len(frame) == 0:
            raise DataError(f"{path}: every row has a missing value")
    columns = [labels(frame[f]) if f in categorical else _numbers(frame, f, path, hint=True)
               for f in features]
    if any(f in categorical for f in features):
        X = np.empty((len(frame), len(features)), dtype=object)
        for j, col in enumerate(columns):
            X[:, j] = col.tolist()
    else:
        X = np.column_stack(columns)
    y = None if target is None else labels(frame[target])
    w = None
    if weight is not None:
        w = _numbers(frame, weight, path)
        if np.any(w < 0):
            raise DataError(f"{path}: sample-weight column {weight!r} has negative values")
    return Table(X, y, list(features), w, n_dropped)


def save_model(path, tree):
    """Write ``tree`` with its names and class counts (``Tree.save``)."""
    tree.save(path)


def load_model(path):
    """The :class:`~gto.model.tree.Tree` in a model file (``Tree.load``), DataError if it is not one."""
    from ..model.tree import Tree

    if not os.path.exists(path):
        raise DataError(f"{path}: no such file")
    if os.path.isdir(path):
        raise DataError(f"{path} is a folder, not a model file")
    try:
        return Tree.load(path)
    except ValueError as exc:
        raise DataError(str(exc)) from None
