"""Offline replay of ``GTOClassifier``'s internal-CV selection rule.

For each outer split of the quality protocol (``experiments.quality``: the same
splits, min-max scaling fitted on the training fold, ``random_state`` the split's
seed) this records, for every candidate of the default grid (the three 1-norm SVM
trees and the alpha-0 search), on every inner fold of the estimator's own internal
CV (same folds):

- the first stage (one restart of ``cv_iter(max_iter)`` moves) and the second
  stage (``contender_iter(max_iter)`` moves, ``CONTENDER_RESTARTS`` restarts, the
  first from the first-stage tree) of the search, on *every* fold (no racing);
- per inner test point: right or wrong, and the training class counts of the
  leaf it reaches (so that Brier scores or log-losses of any smoothing of the
  leaf frequencies can be replayed);
- the CPU seconds of each fold fit;

and each candidate's held-out error on the outer test set when refitted on the
outer training set as the estimator refits it.  The records go to a JSON-lines
file (a rerun skips the splits already there); ``--replay`` then reads them and
prints the held-out error of every selection rule of :data:`RULES` per data set
in seconds.

    python -m experiments.selection_replay --data heart liver --out /tmp/replay
    python -m experiments.selection_replay --replay --out /tmp/replay
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from sklearn.preprocessing import MinMaxScaler

import gto
from gto.learners import _estimator as E
from gto.learners import _selection as S

from . import quality

ORDER = ("heart", "cancer", "diabetes", "liver", "australian", "clean1", "credit-g",
         quality.SYNTHETIC, "spectf", "wdbc", "magic", "phoneme", "twonorm")


def _leaf_counts(tree, X, y, classes):
    """(n_leaves, n_classes) training class counts of ``tree`` on (X, y)."""
    counts = np.zeros((tree.n_leaves, len(classes)))
    np.add.at(counts, (tree.apply(X), np.searchsorted(classes, y)), 1.0)
    return counts


def _fold_record(tree, X, y, train, test, classes):
    """Per inner test point: right (1/0), the reached leaf's training class counts, the
    true class index."""
    counts = _leaf_counts(tree, X[train], y[train], classes)
    leaf = tree.apply(X[test])
    return {"hit": (tree.predict(X[test]) == y[test]).astype(int).tolist(),
            "counts": counts[leaf].tolist(),
            "true": np.searchsorted(classes, y[test]).tolist()}


def _timed_scores(clf, tree, X, y, grid, rows, folds, budget, warm=None):
    """Fold fits of grid ``rows`` one by one: (records, trees, CPU seconds)."""
    recs, trees, secs = {}, {}, {}
    for i in rows:
        for k, (train, test) in enumerate(folds):
            t0 = time.process_time()
            w0 = None if warm is None else warm[i, k]
            _, fitted = E._fold_score(clf, tree, X, y, None, grid[i], train, test, None, budget,
                                      w0)
            secs[i, k] = time.process_time() - t0
            trees[i, k] = fitted
            recs[i, k] = _fold_record(fitted, X, y, train, test, clf.classes_)
    return recs, trees, secs


def record(split):
    """Everything a selection rule needs for one outer split (see the module doc)."""
    scaler = MinMaxScaler().fit(split.X_train)
    X, Z = scaler.transform(split.X_train), scaler.transform(split.X_test)
    y = split.y_train
    clf = gto.GTOClassifier(depth=2, random_state=split.seed)
    clf.classes_ = np.unique(y)
    clf._categorical = {}
    tree = clf._initial_tree(X.shape[1])
    grid = clf._grid(X.shape[1])
    Xs, ys, _, folds = clf._folds(X, y, None)
    svm = [i for i, g in enumerate(grid) if g["alpha"] is None]
    searched = [i for i, g in enumerate(grid) if g["alpha"] is not None]
    first, trees1, s1 = _timed_scores(clf, tree, Xs, ys, grid, svm, folds, None)
    first_s, trees1s, s1s = _timed_scores(clf, tree, Xs, ys, grid, searched, folds,
                                          (E.cv_iter(clf.max_iter), 1))
    first.update(first_s), trees1.update(trees1s), s1.update(s1s)
    warm = np.full((len(grid), len(folds)), None, dtype=object)
    for (i, k), t in trees1.items():
        warm[i, k] = t
    budget = (E.contender_iter(clf.max_iter), min(clf.restarts, E.CONTENDER_RESTARTS))
    second, _, s2 = _timed_scores(clf, tree, Xs, ys, grid, searched, folds, budget, warm)
    outer = {}
    for i in svm + searched:
        t0 = time.process_time()
        res = clf._fit_tree(tree, X, y, None, grid[i], 1)
        outer[i] = {"test": 100 * float(np.mean(res.tree.predict(Z) != split.y_test)),
                    "train": 100 * float(np.mean(res.tree.predict(X) != y)),
                    "seconds": time.process_time() - t0}
    return {"dataset": split.dataset, "split": split.split, "n_folds": len(folds),
            "grid": [{k: v for k, v in g.items()} for g in grid],
            "first": {f"{i},{k}": r for (i, k), r in first.items()},
            "second": {f"{i},{k}": r for (i, k), r in second.items()},
            "seconds1": {f"{i},{k}": s for (i, k), s in s1.items()},
            "seconds2": {f"{i},{k}": s for (i, k), s in s2.items()},
            "outer": {str(i): o for i, o in outer.items()}}


def load(path):
    if not os.path.exists(path):
        return []
    with open(path) as fh:
        return [json.loads(line) for line in fh if line.strip()]


def collect(data, path):
    """Record every split of ``data`` not yet in ``path`` (appending as they finish)."""
    done = {(r["dataset"], r["split"]) for r in load(path)}
    with open(path, "a") as fh:
        for split in quality.splits(data):
            if (split.dataset, split.split) in done:
                continue
            t0 = time.process_time()
            rec = record(split)
            rec["cpu"] = time.process_time() - t0
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(f"{split.dataset} {split.split}: {rec['cpu']:.1f} s CPU", flush=True)


# -- replay --------------------------------------------------------------------------------
def matrices(rec, stage="second"):
    """``(folds, grid, per-fold stats)`` of one record, the searched rows from ``stage``
    ("first" or "second"): ``stats[name]`` (G, K) per-fold accuracy, Brier and log-loss
    (Laplace-smoothed leaf frequencies), and the per-point arrays for paired use."""
    grid, K = rec["grid"], rec["n_folds"]
    out = {"acc": np.zeros((len(grid), K)), "brier": np.zeros((len(grid), K)),
           "logloss": np.zeros((len(grid), K))}
    points = {}
    for i, g in enumerate(grid):
        src = rec["first"] if g["alpha"] is None or stage == "first" else rec[stage]
        for k in range(K):
            r = src[f"{i},{k}"]
            hit = np.asarray(r["hit"], dtype=float)
            counts = np.asarray(r["counts"], dtype=float)
            true = np.asarray(r["true"])
            p = (counts + 1) / (counts.sum(axis=1, keepdims=True) + counts.shape[1])
            ll = -np.log(p[np.arange(len(true)), true])
            brier = np.array([S.laplace_brier(counts[j:j + 1], true[j:j + 1])
                              for j in range(len(true))])
            out["acc"][i, k] = hit.mean()
            out["brier"][i, k] = S.laplace_brier(counts, true)
            out["logloss"][i, k] = -ll.mean()
            points[i, k] = {"acc": hit, "brier": brier, "logloss": -ll}
    return out, points


def staged(rec, selection):
    """``(accuracy, brier)`` (G, K) as the estimator's successive halving under
    ``selection`` would end with them (no racing: the race is exact): the SVM rows, the
    search's first stage, replaced by its second stage when it reaches the
    contenders' bar (:func:`gto.learners._selection.contender_bar`); NaN when a
    linear-SVM tree is perfect on every fold and the rule skips the searches."""
    first, _ = matrices(rec, "first")
    second, _ = matrices(rec, "second")
    grid = rec["grid"]
    acc, brier = first["acc"].copy(), first["brier"].copy()
    svm, searched = _svm_rows(grid), _search_rows(grid)
    if selection != "best" and acc[svm].mean(axis=1).max() >= 1 - 1e-12:
        acc[searched] = brier[searched] = np.nan
        return acc, brier
    bars = S.contender_bars(selection, np.stack([acc, brier]), svm)
    for i in searched:
        if all([acc, brier][j][i].mean() >= bar - 1e-12 for j, bar in bars):
            acc[i], brier[i] = second["acc"][i], second["brier"][i]
    return acc, brier


def halving_scores(rec):
    """The "1se" halving's accuracy matrix (:func:`staged`) and the searched rows that
    were contenders (their second stage in it); the other rule columns of
    :data:`RULES` read the search's rows the same way."""
    acc, _ = staged(rec, "1se")
    first, _ = matrices(rec, "first")
    again = [i for i in _search_rows(rec["grid"])
             if not np.array_equal(acc[i], first["acc"][i], equal_nan=True)
             or _second_stage(rec, i)]
    return acc, again


def _second_stage(rec, i):
    """Whether the "1se" halving would score searched row ``i`` again."""
    first, _ = matrices(rec, "first")
    svm = _svm_rows(rec["grid"])
    if first["acc"][svm].mean(axis=1).max() >= 1 - 1e-12:
        return False
    bars = S.contender_bars("1se", np.stack([first["acc"], first["brier"]]), svm)
    return all([first["acc"], first["brier"]][j][i].mean() >= bar - 1e-12 for j, bar in bars)


# -- rules (each: (stats, points, grid) -> chosen row) ---------------------------------------
def _order(grid, d):
    return [E._complexity(g, d) for g in grid]


def _best(m):
    mean = m.mean(axis=1)
    return int(np.lexsort((np.arange(len(mean)), -np.round(mean, 12)))[0])


def _svm_rows(grid):
    return [i for i, g in enumerate(grid) if g["alpha"] is None]


def _search_rows(grid):
    return [i for i, g in enumerate(grid) if g["alpha"] is not None]


def rule_1se(score):
    def rule(stats, points, grid):
        return E.one_standard_error(stats[score], _order(grid, 1e9))
    return rule


def rule_best(score):
    def rule(stats, points, grid):
        return _best(stats[score])
    return rule


def rule_family(within, between, between_rule="best"):
    """1se on ``within`` among the SVM trees, then the SVM pick against the search by
    ``between`` (best mean, or "1se": the search only above the SVM pick's mean plus
    the SVM pick's standard error)."""
    def rule(stats, points, grid):
        svm, searched = _svm_rows(grid), _search_rows(grid)
        sub = stats[within][svm]
        pick = svm[E.one_standard_error(sub, _order([grid[i] for i in svm], 1e9))]
        m = stats[between]
        s = searched[_best(m[searched])]
        if between_rule == "best":
            return s if m[s].mean() > m[pick].mean() + 1e-12 else pick
        if between_rule == "paired":
            d = m[s] - m[pick]
            se = d.std(ddof=1) / np.sqrt(len(d))
            return s if d.mean() > se + 1e-12 else pick
        if between_rule == "pooled":
            d = np.concatenate([points[s, k][between] - points[pick, k][between]
                                for k in range(m.shape[1])])
            se = d.std(ddof=1) / np.sqrt(len(d))
            return s if d.mean() > se + 1e-12 else pick
        if between_rule == "pooled0":
            d = np.concatenate([points[s, k][between] - points[pick, k][between]
                                for k in range(m.shape[1])])
            return s if d.mean() > 1e-12 else pick
        raise ValueError(between_rule)
    return rule


def rule_beats_all(score):
    """The search only when its mean ``score`` beats every SVM tree's, else the SVM
    trees' 1se pick on accuracy."""
    def rule(stats, points, grid):
        svm, s = _svm_rows(grid), _search_rows(grid)[0]
        pick = svm[E.one_standard_error(stats["acc"][svm], _order([grid[i] for i in svm], 1e9))]
        best = max(stats[score][i].mean() for i in svm)
        return s if stats[score][s].mean() > best + 1e-12 else pick
    return rule


def rule_pooled_1se(score):
    """The simplest candidate whose per-point paired difference to the best mean one
    (pooled over the folds' test points) is at most its standard error."""
    def rule(stats, points, grid):
        m = stats[score]
        b = _best(m)
        K = m.shape[1]
        ok = []
        for i in range(len(grid)):
            d = np.concatenate([points[b, k][score] - points[i, k][score] for k in range(K)])
            se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else 0.0
            if d.mean() <= se + 1e-12:
                ok.append(i)
        order = _order(grid, 1e9)
        return min(ok, key=lambda i: (order[i], i))
    return rule


def rule_of(selection):
    """The estimator's ``selection`` (``gto.learners._selection.choose``) on the
    staged scores it would see."""
    def rule(stats, points, grid, rec=None):
        acc, brier = staged(rec, selection)
        return S.choose(selection, np.stack([acc, brier]), grid,
                        [E._complexity(g, 1e9) for g in grid])
    rule.staged = True
    return rule


RULES = {
    "estimator 1se": rule_of("1se"),
    "estimator best": rule_of("best"),
    "estimator agree": rule_of("agree"),
    "1se acc (today)": rule_1se("acc"),
    "best acc": rule_best("acc"),
    "1se brier": rule_1se("brier"),
    "best brier": rule_best("brier"),
    "1se logloss": rule_1se("logloss"),
    "best logloss": rule_best("logloss"),
    "pooled-1se acc": rule_pooled_1se("acc"),
    "pooled-1se brier": rule_pooled_1se("brier"),
    "svm 1se acc, vs search best acc": rule_family("acc", "acc"),
    "svm 1se acc, vs search best brier": rule_family("acc", "brier"),
    "svm 1se acc, vs search best logloss": rule_family("acc", "logloss"),
    "svm 1se acc, vs search paired brier": rule_family("acc", "brier", "paired"),
    "svm 1se acc, vs search pooled brier": rule_family("acc", "brier", "pooled"),
    "svm 1se acc, vs search pooled acc": rule_family("acc", "acc", "pooled"),
    "svm 1se brier, vs search best brier": rule_family("brier", "brier"),
    "svm 1se acc, search if above every svm acc": rule_beats_all("acc"),
    "svm 1se acc, search if above every svm brier": rule_beats_all("brier"),
}


def replay(records, rules=RULES, stage="halving"):
    """``{rule: {dataset: [test error % per split]}}`` and the oracle / per-candidate
    means."""
    out = {name: {} for name in rules}
    for rec in records:
        stats, points = matrices(rec, "second")
        if stage == "halving":  # the search's first-stage scores unless a contender
            first, fpoints = matrices(rec, "first")
            _, again = halving_scores(rec)
            for i in _search_rows(rec["grid"]):
                if i not in again:
                    for key in stats:
                        stats[key][i] = first[key][i]
                    for k in range(rec["n_folds"]):
                        points[i, k] = fpoints[i, k]
        for name, rule in rules.items():
            pick = (rule(stats, points, rec["grid"], rec) if getattr(rule, "staged", False)
                    else rule(stats, points, rec["grid"]))
            out[name].setdefault(rec["dataset"], []).append(rec["outer"][str(pick)]["test"])
    return out


def replay_table(records, rules=RULES, stage="halving"):
    res = replay(records, rules, stage)
    sets = [d for d in ORDER if any(r["dataset"] == d for r in records)]
    cand = {}
    for rec in records:
        for i, o in rec["outer"].items():
            cand.setdefault(rec["dataset"], {}).setdefault(int(i), []).append(o["test"])
    lines = ["| rule | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    for name in rules:
        lines.append(f"| {name} | " + " | ".join(f"{np.mean(res[name][d]):.1f}" for d in sets)
                     + " |")
    grid = records[0]["grid"]
    for i, g in enumerate(grid):
        label = f"SVM C={g['svm_C']}" if g["alpha"] is None else "search alone"
        lines.append(f"| {label} | " + " | ".join(f"{np.mean(cand[d][i]):.1f}" for d in sets)
                     + " |")
    oracle = {d: np.mean([min(o["test"] for o in r["outer"].values())
                          for r in records if r["dataset"] == d]) for d in sets}
    lines.append("| oracle | " + " | ".join(f"{oracle[d]:.1f}" for d in sets) + " |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.selection_replay",
                                description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=list(ORDER))
    p.add_argument("--out", default="/tmp/selection_replay")
    p.add_argument("--replay", action="store_true", help="replay the recorded rules only")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "replay.jsonl")
    if not args.replay:
        collect(args.data, path)
    print(replay_table([r for r in load(path) if r["dataset"] in args.data]))


if __name__ == "__main__":
    main()
