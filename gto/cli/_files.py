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

import contextlib
import csv
import io
import os
import re
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


#: compressed files, recognised by their first bytes (not by the name: pipes have none)
_COMPRESSED = ((b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "lzma"))


@contextlib.contextmanager
def _reading(path, kind):
    """OSErrors while reading ``path`` as one-line DataErrors that say what happened
    (no such file, permission denied, a folder)."""
    try:
        yield
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except PermissionError:
        raise DataError(f"{path}: permission denied") from None
    except IsADirectoryError:
        raise DataError(f"{path} is a folder, not {kind}") from None
    except OSError as exc:
        raise DataError(f"{path}: cannot read ({exc.strerror or exc})") from None


def _read_bytes(path):
    """The file's bytes, read once (a pipe or ``/dev/stdin`` cannot be read twice),
    decompressed when they start as gzip, bzip2 or xz data."""
    with _reading(path, "a CSV file"):
        with open(path, "rb") as fh:
            data = fh.read()
    for magic, module in _COMPRESSED:
        if data.startswith(magic):
            import importlib

            try:
                data = importlib.import_module(module).decompress(data)
            except (OSError, EOFError, ValueError) as exc:
                raise DataError(f"{path}: a damaged {module} file ({exc})") from None
            break
    return data


def _records(text, sep):
    """``(line, fields)`` per record of a CSV text: the line the record starts on
    (1-based, counting blank lines and the lines of quoted multi-line fields);
    blank lines are skipped.  One-character separators follow the csv module's
    quoting; longer ones split plainly."""
    if len(sep) == 1:
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=sep,
                            skipinitialspace=True, strict=True)
        start = 1
        try:
            for fields in reader:
                if fields and fields != [""]:
                    yield start, fields
                start = reader.line_num + 1
        except csv.Error as exc:
            raise DataError(f"line {reader.line_num}: {exc}") from None
        return
    for i, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            yield i, [f.lstrip() for f in line.split(sep)]


def _read_csv(path, sep):
    """``(frame, lines)``: the CSV file as strings (header names stripped) and the
    line each data row starts on, for messages."""
    import pandas as pd  # imported here: the gto command starts faster

    data = _read_bytes(path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DataError(f"{path}: line {line} is not UTF-8 text (not a CSV text file?)") from None
    try:
        records = list(_records(text, sep))
    except DataError as exc:
        raise DataError(f"{path}: not a valid CSV file with separator {sep!r}: {exc}") from None
    if not records:
        raise DataError(f"{path}: the file is empty")
    names = [c.strip() for c in records[0][1]]
    _check_header(path, names)
    rows, lines = [], []
    for line, fields in records[1:]:
        if len(fields) > len(names):
            raise DataError(f"{path}: line {line} has {len(fields)} fields but the header has "
                            f"{len(names)} (is this a {sep!r}-separated file with a header? "
                            "see --sep)")
        rows.append(fields + [""] * (len(names) - len(fields)))
        lines.append(line)
    if not rows:
        raise DataError(f"{path}: no data rows under the header")
    frame = pd.DataFrame(rows, columns=names, dtype=str)
    return frame, np.array(lines)


def _check_header(path, names):
    if len(set(names)) != len(names):
        twice = sorted({n for n in names if names.count(n) > 1})
        raise DataError(f"{path}: the header repeats the column name(s) "
                        f"{', '.join(map(repr, twice))}")
    unnamed = [i + 1 for i, n in enumerate(names) if not n]
    if unnamed == [1] and len(names) > 1:
        raise DataError(f"{path}: the first column has no name (a row index written by pandas' "
                        "to_csv?): write the file with index=False, or name the column")
    if unnamed:
        raise DataError(f"{path}: column(s) {', '.join(map(str, unnamed))} of the header have "
                        "no name")


_INT = re.compile(r"-?(0|[1-9][0-9]*)")
_FLOAT = re.compile(r"-?[0-9]+\.[0-9]+")


def labels(values):
    """Class labels of their written type, so that ``str(label)`` gives the text back:
    ints if every text is a plain decimal integer as Python writes it (``7``, ``-2``:
    not ``007``, ``+7``, ``1_000`` or non-ASCII digits), else floats if every text is
    a plain decimal fraction as Python writes it (``1.5``, ``2.0``: not ``1.50``,
    ``1e3`` or ``nan``), else the texts (so ``007`` and ``7``, or ``1`` and ``1.0``,
    are different classes)."""
    values = [str(v).strip() for v in values]
    if all(_INT.fullmatch(v) and str(int(v)) == v and abs(int(v)) < 2**63 for v in values):
        return np.array([int(v) for v in values], dtype=np.int64)
    if all(_FLOAT.fullmatch(v) and repr(float(v)) == v for v in values):
        return np.array([float(v) for v in values])
    return np.array(values)


def _numbers(frame, column, path, lines, hint=False):
    """Float column; DataError naming the line (``lines``: each row's line in the file) of
    the first text that is not a finite number (with ``hint``, a feature column, saying
    that categories go in --categorical)."""
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
        raise DataError(f"{path}: line {lines[i]}, column {column!r}: {text.iloc[i]!r} {what}")
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
    frame, lines = _read_csv(path, sep)
    header = list(frame.columns)
    if target is not None and target not in header:
        if not target_optional:
            raise DataError(f"{path}: no target column {target!r}; columns are "
                            f"{', '.join(header)} (separator {sep!r}; see --sep)")
        target = None
    if weight is not None and weight not in header:
        raise DataError(f"{path}: no sample-weight column {weight!r}")
    if weight is not None and weight == target:
        raise DataError(f"{path}: the sample-weight column {weight!r} is the target column")
    if weight is not None and features is not None and weight in features:
        raise DataError(f"{path}: the sample-weight column {weight!r} is also a feature")
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
                f"{path}: line {lines[i]}, column {used[j]!r}: missing value "
                f"{frame[used[j]].iloc[i].strip()!r} ({int(na.any(axis=1).sum())} row(s) have "
                "one; --drop-na drops them)")
        keep = ~na.any(axis=1)
        n_dropped = int((~keep).sum())
        frame, lines = frame[keep].reset_index(drop=True), lines[keep]
        if len(frame) == 0:
            raise DataError(f"{path}: every row has a missing value")
    columns = [labels(frame[f]) if f in categorical else _numbers(frame, f, path, lines, hint=True)
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
        w = _numbers(frame, weight, path, lines)
        if np.any(w < 0):
            raise DataError(f"{path}: sample-weight column {weight!r} has negative values")
    return Table(X, y, list(features), w, n_dropped)


def save_model(path, tree):
    """Write ``tree`` with its names and class counts (``Tree.save``)."""
    tree.save(path)


def load_model(path):
    """The :class:`~gto.model.tree.Tree` in a model file (``Tree.load``), DataError if it is not one."""
    from ..model.tree import Tree

    with _reading(path, "a model file"):
        if os.path.isdir(path):
            raise IsADirectoryError(path)
        try:
            return Tree.load(path)
        except ValueError as exc:
            raise DataError(str(exc)) from None
