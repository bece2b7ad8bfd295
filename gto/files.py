"""The command line's files: CSV data in, model files and text out.

``read_table`` reads a CSV file with a header into numeric features and class
labels (no pandas); ``save_model``/``load_model`` keep a tree with its feature
and target names; ``write_text_atomic`` writes through a temporary file.
Every problem is a :class:`DataError` with a one-line message naming the
file, and where it helps the line and column.
"""
from __future__ import annotations

import csv
import json
import math
import os

import numpy as np

from ._atomic import write_text_atomic
from .tree import Tree

MODEL_FORMAT = "gto.Model"
MODEL_VERSION = 1


class DataError(ValueError):
    """A data file that cannot be used, with a message for the user."""


def read_rows(path):
    """``(header, rows)`` of a CSV file with a header line."""
    if not os.path.isfile(path):
        raise DataError(f"{path}: no such file")
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = [row for row in csv.reader(fh) if row and any(c.strip() for c in row)]
    except UnicodeDecodeError:
        raise DataError(f"{path}: not a CSV text file (not UTF-8)") from None
    except csv.Error as exc:
        raise DataError(f"{path}: not a valid CSV file ({exc})") from None
    if not rows:
        raise DataError(f"{path}: the file is empty")
    header = [h.strip() for h in rows[0]]
    if len(set(header)) != len(header):
        raise DataError(f"{path}: the header repeats a column name")
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(header):
            raise DataError(
                f"{path}: line {i} has {len(row)} fields but the header has {len(header)} "
                "(is this a comma-separated file with a header?)"
            )
    if len(rows) < 2:
        raise DataError(f"{path}: no data rows under the header")
    return header, rows[1:]


def _float(text, path, line, column):
    try:
        value = float(text)
    except ValueError:
        raise DataError(
            f"{path}: line {line}, column {column!r}: {text.strip()!r} is not a number"
        ) from None
    if not math.isfinite(value):
        raise DataError(f"{path}: line {line}, column {column!r}: {text.strip()!r} is not finite")
    return value


def labels(values):
    """Class labels as ints when they all are integers, else as stripped strings."""
    values = [v.strip() for v in values]
    try:
        return np.array([int(v) for v in values])
    except ValueError:
        return np.array(values)


def read_table(path, target=None, features=None, target_optional=False):
    """``(X, y, feature_names)`` from a CSV file.

    ``features``: column names to use (default: every column but ``target``).
    ``target``: the class column; ``y`` is None when it is None, or when the
    file lacks it and ``target_optional`` is true.
    """
    header, rows = read_rows(path)
    if target is not None and target not in header:
        if not target_optional:
            raise DataError(
                f"{path}: no target column {target!r}; columns are {', '.join(header)}"
            )
        target = None
    if features is None:
        features = [h for h in header if h != target]
    missing = [f for f in features if f not in header]
    if missing:
        raise DataError(f"{path}: no feature column(s) {', '.join(map(repr, missing))}")
    if not features:
        raise DataError(f"{path}: no feature columns besides the target {target!r}")
    cols = [header.index(f) for f in features]
    X = np.array([
        [_float(row[c], path, i, header[c]) for c in cols] for i, row in enumerate(rows, start=2)
    ])
    y = None
    if target is not None:
        t = header.index(target)
        empty = [i for i, row in enumerate(rows, start=2) if not row[t].strip()]
        if empty:
            raise DataError(f"{path}: line {empty[0]} has no value in target column {target!r}")
        y = labels([row[t] for row in rows])
    return X, y, list(features)


def save_model(path, tree, feature_names=None, target=None):
    """Write ``{"format": "gto.Model", "tree": tree.to_dict(), ...}`` atomically."""
    write_text_atomic(path, json.dumps({
        "format": MODEL_FORMAT,
        "version": MODEL_VERSION,
        "tree": tree.to_dict(),
        "feature_names": None if feature_names is None else list(feature_names),
        "target": target,
    }, indent=1))


def load_model(path):
    """``(tree, feature_names, target)`` from a model file or a bare ``Tree.save`` file.

    The names are None for a bare tree file.
    """
    if not os.path.isfile(path):
        raise DataError(f"{path}: no such file")
    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise DataError(f"{path} is not a gto model file (not JSON)") from None
    wrapped = isinstance(data, dict) and data.get("format") == MODEL_FORMAT
    try:
        if wrapped and data.get("version") != MODEL_VERSION:
            raise ValueError(f"unsupported model version {data.get('version')!r}")
        tree = Tree.from_dict(data["tree"] if wrapped else data)
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"{path} is not a gto model file: {exc}") from None
    names = data.get("feature_names") if wrapped else None
    target = data.get("target") if wrapped else None
    if names is not None and (
        not isinstance(names, list) or len(names) != tree.n_features
        or not all(isinstance(n, str) for n in names)
    ):
        raise DataError(f"{path}: feature_names must be {tree.n_features} strings")
    return tree, names, target
