"""Shared pieces of the paper's experiments: splits, arms, parallel runs, output.

An *arm* is ``fit(X, y, seed, max_iter) -> (predict, n_decisions)``; a
*split* is one train/test pair.  ``run_splits`` fits every arm on every split
in parallel (joblib, one job per split), ticking a progress bar as splits
finish, and returns one row per split and arm with the train and test error
in percent.
"""
from __future__ import annotations

import csv
import io
import time
from collections import namedtuple
from functools import partial

import numpy as np
from joblib import Parallel, delayed
from sklearn.model_selection import StratifiedKFold, train_test_split
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto.learners._optimize import stop_if_interrupted
from gto.model.tree import FIGURE2
from gto.utils._atomic import write_text_atomic
from gto.utils._progress import Progress

STRUCTURE = FIGURE2  # the paper's three-decision tree (Figure 2)
FIELDS = ["dataset", "split", "arm", "train_error", "test_error", "decisions", "seconds", "failed"]

Split = namedtuple("Split", "dataset split X_train y_train X_test y_test seed")


# -- splits ------------------------------------------------------------------
def cv_splits(name, n_splits=5, folds=None, seed=0, max_samples=None):
    """Stratified ``n_splits``-fold CV of a bundled data set (fixed shuffle seed).

    ``max_samples``: first draw a stratified subsample of that many points
    (same seed) from a larger set.
    """
    X, y = problems.load(name)
    if max_samples is not None and len(y) > max_samples:
        X, _, y, _ = train_test_split(X, y, train_size=max_samples, stratify=y,
                                      random_state=seed)
    cv = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    for k, (tr, te) in enumerate(cv.split(X, y)):
        if folds is None or k < folds:
            yield Split(name, k, X[tr], y[tr], X[te], y[te], k)


def synthetic_splits(n_features, n_train, n_test, repeats, start=0):
    """The paper's generated data: one draw per repeat, seeded by the repeat number
    (from ``start``)."""
    for r in range(start, start + repeats):
        d = problems.synthetic(n_features, n_train, n_test, random_state=r)
        yield Split(f"synthetic-{n_features}d", r, d.X_train, d.y_train, d.X_test, d.y_test, r)


# -- arms --------------------------------------------------------------------
#: ``gto.optimize`` options of the paper's Algorithm 5.2 as published (docs/DESIGN.md §4)
PAPER = {"paper": True}


def fit_gto(X, y, seed, max_iter, *, objective, method, options=PAPER):
    """GTO on the Figure 2 tree from the greedy LP start (the paper's configuration
    unless ``options`` says otherwise; ``None``: ``gto.optimize``'s default search)."""
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    res = gto.optimize(tree, X, y, objective=objective, method=method, init="greedy",
                       max_iter=max_iter, random_state=seed, options=options)
    stop_if_interrupted(res)  # Ctrl-C ends the experiment, not just this fit
    return res.tree.predict, res.tree.n_decisions


def fit_c45(X, y, seed, max_iter):
    """C4.5 stand-in: scikit-learn's tree with the entropy criterion, unpruned."""
    model = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(X, y)
    return model.predict, model.tree_.node_count // 2


FW = partial(fit_gto, objective="product", method="frank-wolfe")
EPTS_P = partial(fit_gto, objective="product", method="tabu")
EPTS_M = partial(fit_gto, objective="minimum", method="tabu")
#: ``gto.optimize``'s default search (not the paper's), same start and budget
EPTS_DEFAULT = partial(fit_gto, objective="product", method="tabu", options=None)


# -- running -----------------------------------------------------------------
def run_split(split, arms, max_iter):
    """Fit every arm on one split; rows with errors in percent.

    An arm that raises is recorded, not fatal: its row has empty errors and
    the exception in ``failed``.  An arm may return a third value, the mean
    number of nonzero weights per decision, kept as ``nonzero``.
    """
    rows = []
    for name, fit in arms.items():
        row = {"dataset": split.dataset, "split": split.split, "arm": name, "train_error": "",
               "test_error": "", "decisions": "", "failed": ""}
        t0 = time.perf_counter()
        try:
            predict, decisions, *extra = fit(split.X_train, split.y_train, split.seed, max_iter)
        except Exception as exc:  # noqa: BLE001 (a failed arm is a result to report)
            row["failed"] = f"{type(exc).__name__}: {exc}"
        else:
            row["train_error"] = 100 * float(np.mean(predict(split.X_train) != split.y_train))
            row["test_error"] = 100 * float(np.mean(predict(split.X_test) != split.y_test))
            row["decisions"] = "" if decisions is None else int(decisions)
            if extra:
                row["nonzero"] = "" if extra[0] is None else float(extra[0])
        row["seconds"] = round(time.perf_counter() - t0, 3)
        rows.append(row)
    return rows


def run_splits(splits, arms, max_iter, n_jobs=1, quiet=False, desc="splits"):
    """``run_split`` over all splits with joblib, ticking a bar as each finishes."""
    splits = list(splits)
    jobs = (delayed(run_split)(s, arms, max_iter) for s in splits)
    rows = []
    with Progress(total=len(splits), desc=desc, quiet=quiet) as bar:
        for done in Parallel(n_jobs=n_jobs, return_as="generator_unordered")(jobs):
            rows.extend(done)
            bar.update()
    order = {(s.dataset, s.split): i for i, s in enumerate(splits)}
    arm_order = list(arms)
    rows.sort(key=lambda r: (order[r["dataset"], r["split"]], arm_order.index(r["arm"])))
    return rows


# -- summaries and output ----------------------------------------------------
def summarize(rows):
    """``{(dataset, arm): {"train": (mean, std), "test": ..., "decisions": mean or None,
    "n": runs, "failed": failed runs}}``; failed runs are left out of the means."""
    groups = {}
    for r in rows:
        groups.setdefault((r["dataset"], r["arm"]), []).append(r)
    out = {}
    for key, group in groups.items():
        ok = [r for r in group if not r["failed"]]
        dec = [r["decisions"] for r in ok if r["decisions"] != ""]
        out[key] = {
            "train": _mean_std([r["train_error"] for r in ok]),
            "test": _mean_std([r["test_error"] for r in ok]),
            "decisions": float(np.mean(dec)) if dec else None,
            "n": len(group),
            "failed": len(group) - len(ok),
        }
    return out


def _mean_std(values):
    return (float(np.mean(values)), float(np.std(values))) if values else (np.nan, np.nan)


def pm(mean_std, failed=0):
    """``12.3 ± 4.5``, with `` (1 failed)`` when runs failed; ``failed`` alone if all did."""
    if np.isnan(mean_std[0]):
        return "failed"
    text = f"{mean_std[0]:.1f} ± {mean_std[1]:.1f}"
    return text + (f" ({failed} failed)" if failed else "")


def failures(rows):
    """One note line per failed run."""
    return [f"failed: {r['dataset']} split {r['split']} {r['arm']}: {r['failed']}"
            for r in rows if r["failed"]]


def arm_rows(rows, arms):
    """Per data set and arm (in order): ``(name, arm, [train, test, decisions])`` cells.

    Arms with no result for a data set are left out.
    """
    summary = summarize(rows)
    for name in dict.fromkeys(r["dataset"] for r in rows):
        for arm in arms:
            s = summary.get((name, arm))
            if s is None:
                continue
            decisions = "" if s["decisions"] is None else f"{s['decisions']:.1f}"
            yield name, arm, [pm(s["train"], s["failed"]), pm(s["test"], s["failed"]), decisions]


def tidy(rows, paper=None):
    """Runs as a tidy DataFrame: dataset, arm, split, set ("train"/"test"), error %, source.

    ``paper`` (``{(dataset, arm): (train, test, decisions)}``) adds the published
    figures as ``source="paper"`` rows for the data sets and arms in ``rows``.
    """
    import pandas as pd

    long = [{"dataset": r["dataset"], "arm": r["arm"], "split": r["split"], "set": part,
             "error": float(r[f"{part}_error"]), "source": "ours"}
            for r in rows if not r["failed"] for part in ("train", "test")]
    present = {(r["dataset"], r["arm"]) for r in rows}
    for (name, arm), figures in (paper or {}).items():
        if (name, arm) in present:
            long += [{"dataset": name, "arm": arm, "split": -1, "set": part, "error": value,
                      "source": "paper"}
                     for part, value in zip(("train", "test"), figures[:2]) if value is not None]
    frame = pd.DataFrame(long, columns=["dataset", "arm", "split", "set", "error", "source"])
    order = list(dict.fromkeys(r["dataset"] for r in rows))
    frame["dataset"] = pd.Categorical(frame["dataset"], categories=order, ordered=True)
    return frame.sort_values(["dataset", "source"], kind="stable").reset_index(drop=True)


def markdown_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_csv(path, rows, fields=FIELDS):
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fields, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    write_text_atomic(path, buf.getvalue())


def read_csv(path):
    """Rows written by :func:`write_csv`, errors and seconds as floats ("" if failed)."""
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for r in rows:
        for key in ("train_error", "test_error"):
            r[key] = float(r[key]) if r[key] else ""
        r["seconds"] = float(r["seconds"])
        r["split"] = int(r["split"])
        r["decisions"] = int(r["decisions"]) if r["decisions"] else ""
    return rows
