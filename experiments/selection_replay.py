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

``--repeats R`` also records the same candidates on R - 1 further inner splits of
the same points (stratified shuffles seeded by :func:`repeat_seed`; no outer
refits; ``replay-repeat{r}.jsonl``, reruns skip what is done) and replays
:data:`REPEAT_RULES`, the rules that average over several inner splits (always,
or only for close calls, :func:`close_call`), and "agree" on each split alone.

    python -m experiments.selection_replay --data heart liver --out /tmp/replay
    python -m experiments.selection_replay --replay --out /tmp/replay
    python -m experiments.selection_replay --repeats 5 --out /tmp/replay
    python -m experiments.selection_replay --shuffles 0 1 2 --out /tmp/replay3
"""
from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold
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
            *_, fitted = E._fold_score(clf, tree, X, y, None, grid[i], train, test, None, budget,
                                      w0)
            secs[i, k] = time.process_time() - t0
            trees[i, k] = fitted
            recs[i, k] = _fold_record(fitted, X, y, train, test, clf.classes_)
    return recs, trees, secs


def repeat_seed(seed, repeat):
    """The shuffle seed of the internal CV's inner split number ``repeat`` (0: the
    estimator's own, ``seed``; None stays None)."""
    if seed is None or repeat == 0:
        return seed
    return int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0] % 2**31)


def record(split, repeat=0):
    """Everything a selection rule needs for one outer split (see the module doc);
    ``repeat`` > 0: the same candidates on another inner split of the same points
    (a stratified shuffle seeded by :func:`repeat_seed`), without the outer refits."""
    scaler = MinMaxScaler().fit(split.X_train)
    X, Z = scaler.transform(split.X_train), scaler.transform(split.X_test)
    y = split.y_train
    clf = gto.GTOClassifier(depth=2, random_state=split.seed)
    clf.classes_ = np.unique(y)
    clf._categorical = {}
    tree = clf._initial_tree(X.shape[1], X, y, None)
    grid = clf._grid(X.shape[1])
    Xs, ys, _, folds = clf._folds(X, y, None)
    if repeat:
        splitter = StratifiedKFold(len(folds), shuffle=True,
                                   random_state=repeat_seed(split.seed, repeat))
        folds = list(splitter.split(Xs, ys))
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
    for i in [] if repeat else svm + searched:
        t0 = time.process_time()
        res = clf._fit_tree(tree, X, y, None, grid[i], 1)
        outer[i] = {"test": 100 * float(np.mean(res.tree.predict(Z) != split.y_test)),
                    "train": 100 * float(np.mean(res.tree.predict(X) != y)),
                    "seconds": time.process_time() - t0}
    return {"dataset": split.dataset, "split": split.split, "repeat": repeat,
            "n_folds": len(folds),
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


def collect(data, path, repeat=0, shuffles=(0,)):
    """Record every split of ``data`` not yet in ``path`` (appending as they finish);
    ``repeat``: the inner split (:func:`record`); ``shuffles``: the outer CV's shuffle
    seeds (:func:`experiments.quality.splits`)."""
    done = {(r["dataset"], r["split"]) for r in load(path)}
    with open(path, "a") as fh:
        for split in quality.splits(data, shuffles=shuffles):
            if (split.dataset, split.split) in done:
                continue
            t0 = time.process_time()
            rec = record(split, repeat)
            rec["cpu"] = time.process_time() - t0
            fh.write(json.dumps(rec) + "\n")
            fh.flush()
            print(f"{split.dataset} {split.split}: {rec['cpu']:.1f} s CPU", flush=True)


# -- replay --------------------------------------------------------------------------------
def matrices(rec, stage="second"):
    """``(folds, grid, per-fold stats)`` of one record, the searched rows from ``stage``
    ("first" or "second"): ``stats[name]`` (G, K) per-fold accuracy, Brier and log-loss
    (Laplace-smoothed leaf frequencies), and the per-point arrays for paired use."""
    key = (id(rec), stage)
    if key not in _MATRICES:
        _MATRICES[key] = (rec, _matrices(rec, stage))
    stats, points = _MATRICES[key][1]
    return {k: v.copy() for k, v in stats.items()}, dict(points)


_MATRICES = {}  # (id(record), stage) -> (record, its matrices): replays read each many times


def _matrices(rec, stage):
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
            onehot = np.zeros_like(p)
            onehot[np.arange(len(true)), true] = 1.0
            brier = 1.0 - ((p - onehot) ** 2).sum(axis=1)  # S.laplace_brier per point
            out["acc"][i, k] = hit.mean()
            out["brier"][i, k] = S.laplace_brier(counts, true)
            out["logloss"][i, k] = -ll.mean()
            points[i, k] = {"acc": hit, "brier": brier, "logloss": -ll}
    return out, points


def staged(rec, selection):
    """``(accuracy, brier)`` (G, K) as the estimator's successive halving under
    ``selection`` would end with them (no racing: the race is exact): the SVM rows, the
    search's first stage, replaced by its second stage when it reaches the
    contenders' bars (:func:`gto.learners._selection.contender_bars`, tested by
    :func:`gto.learners._selection.still_in` as the estimator does), unless every
    contender already passes the rule's bars on it
    (:func:`gto.learners._selection.settled`); NaN when a linear-SVM tree is perfect on
    every fold and the rule skips the searches."""
    first, _ = matrices(rec, "first")
    second, _ = matrices(rec, "second")
    grid = rec["grid"]
    acc, brier = first["acc"].copy(), first["brier"].copy()
    svm, searched = _svm_rows(grid), _search_rows(grid)
    if selection != "best" and acc[svm].mean(axis=1).max() >= 1 - 1e-12:
        acc[searched] = brier[searched] = np.nan
        return acc, brier
    both = np.stack([acc, brier])
    bars = S.contender_bars(selection, both, svm)
    reach = [(j, bar, False) for j, bar in bars]  # as GTOClassifier._halving asks it
    again = [i for i in searched if S.still_in(both[:, i], both.shape[2], reach, False)]
    if S.settled(both, again, S.race(selection, both, svm)):
        return acc, brier  # the contenders already win on the first stage
    for i in again:
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


# -- more inner splits ----------------------------------------------------------------------
def _stacked(acc, brier):
    return np.stack([acc, brier])


def _choose(scores, grid):
    return S.choose("agree", scores, grid, [E._complexity(g, 1e9) for g in grid])


def staged_all(recs):
    """The halving's (2, G, sum K) scores over the inner splits of ``recs`` at once (a
    repeated CV: the contenders' bars from all folds, a contender's second stage on all
    of them)."""
    first = [matrices(r, "first")[0] for r in recs]
    acc = np.hstack([f["acc"] for f in first])
    brier = np.hstack([f["brier"] for f in first])
    svm, searched = _svm_rows(recs[0]["grid"]), _search_rows(recs[0]["grid"])
    if acc[svm].mean(axis=1).max() >= 1 - 1e-12:
        acc[searched] = brier[searched] = np.nan
        return _stacked(acc, brier)
    bars = S.contender_bars("agree", _stacked(acc, brier), svm)
    second = [matrices(r, "second")[0] for r in recs]
    for i in searched:
        if all([acc, brier][j][i].mean() >= bar - 1e-12 for j, bar in bars):
            acc[i] = np.hstack([m["acc"][i] for m in second])
            brier[i] = np.hstack([m["brier"][i] for m in second])
    return _stacked(acc, brier)


def contender_scores(rec):
    """(2, G, K) scores of one inner split: the SVM trees, the search's second stage."""
    m = matrices(rec, "second")[0]
    return _stacked(m["acc"], m["brier"])


def close_call(scores, svm, row, spread="svm"):
    """Whether searched ``row``'s "agree" call against the SVM trees ``svm`` is close:
    neither a clear pass (every mean above its bar by a standard error) nor a clear fail
    (some mean below its bar by a standard error; the contenders' bars).  ``spread``:
    whose standard error, "svm" (the SVM tree the bar comes from, as the contenders'
    bars), "search" (the searched row's own), "paired" (of the per-fold differences)."""
    lower, upper = [], []
    for j, bar in S.bars(scores, svm):
        src = svm[int(np.argmax(scores[j, svm].mean(axis=1)))]
        se = S.standard_error({"svm": scores[j, src], "search": scores[j, row],
                               "paired": scores[j, row] - scores[j, src]}[spread])
        m = scores[j, row].mean()
        lower.append(m >= bar - se - 1e-12)
        upper.append(m > bar + se + 1e-12)
    return all(lower) and not all(upper)


def repeat_rule(when, spread="svm", svm_all=False, vote=False):
    """"agree" over the inner splits ``recs`` (the first the estimator's) ``when``:
    "never" (the estimator now), "always" (:func:`staged_all`), "close"
    (:func:`close_call` on the first split's halving; then the SVM trees and the
    search, its second stage, on every split); ``svm_all``: the SVM trees on every
    split always (the search judged on the first split's folds unless close; ``spread``
    None: never repeated);
    ``vote``: on a close call the search only if "agree" picks it on every split
    alone, instead of on the pooled folds."""
    def rule(recs):
        rec, grid = recs[0], recs[0]["grid"]
        if when == "always":
            return _choose(staged_all(recs), grid)
        scores = _stacked(*staged(rec, "agree"))
        svm, row = _svm_rows(grid), _search_rows(grid)[0]
        pooled = np.concatenate([scores] + [contender_scores(r) for r in recs[1:]], axis=2)
        if np.isnan(scores[0, row]).any() or when == "never":
            return _choose(scores, grid)
        if svm_all:  # the search's first-split scores repeated: its means stay the first's
            scores = pooled.copy()
            scores[:, row] = np.tile(scores[:, row, :rec["n_folds"]], len(recs))
        if spread is None or not close_call(scores, svm, row, spread):
            return _choose(scores, grid)
        if not vote:
            return _choose(pooled, grid)
        picks = [_choose(scores[:, :, :rec["n_folds"]], grid)] + [
            _choose(contender_scores(r), grid) for r in recs[1:]]
        if all(p == row for p in picks):
            return row
        return svm[_choose(pooled[:, svm], [grid[i] for i in svm])]
    return rule


def _alone(r):
    def rule(recs):
        return _choose(_stacked(*staged(recs[r], "agree")), recs[0]["grid"])
    return rule


REPEAT_RULES = {
    "agree, first split (now)": repeat_rule("never"),
    "agree, every split always": repeat_rule("always"),
    "agree, every split on close calls": repeat_rule("close"),
    "... close by the search's own standard error": repeat_rule("close", "search"),
    "... close by the paired standard error": repeat_rule("close", "paired"),
    "... the search only if picked on every split alone": repeat_rule("close", vote=True),
    "SVM trees on every split always, the search on close calls": repeat_rule(
        "close", svm_all=True),
    "SVM trees on every split always, the search on the first": repeat_rule(
        "close", svm_all=True, spread=None),
}


def repeat_table(records, more, rules=REPEAT_RULES):
    """:func:`replay_table`'s layout for the rules over several inner splits: records of
    the first split joined with ``more`` (a list, per further inner split, of its
    records) by data set and outer split; then "agree" on each split alone (how much
    the table moves with the inner shuffle)."""
    keyed = [{(r["dataset"], r["split"]): r for r in m} for m in more]
    groups = [[r] + [k[r["dataset"], r["split"]] for k in keyed] for r in records
              if all((r["dataset"], r["split"]) in k for k in keyed)]
    rules = {**rules, **{f"agree, inner split {r + 1} alone": _alone(r)
                         for r in range(len(more) + 1)}}
    sets = [d for d in ORDER if any(g[0]["dataset"] == d for g in groups)]
    lines = ["| rule | " + " | ".join(sets) + " |", "|---" * (len(sets) + 1) + "|"]
    alone = []
    for name, rule in rules.items():
        err = {}
        for g in groups:
            err.setdefault(g[0]["dataset"], []).append(g[0]["outer"][str(rule(g))]["test"])
        lines.append(f"| {name} | " + " | ".join(f"{np.mean(err[d]):.1f}" for d in sets) + " |")
        if "alone" in name:
            alone.append({d: np.mean(err[d]) for d in sets})
    lines.append("| agree, one inner split: mean (lowest-highest) over the splits | " + " | ".join(
        f"{np.mean([a[d] for a in alone]):.2f} ({min(a[d] for a in alone):.2f}-"
        f"{max(a[d] for a in alone):.2f})" for d in sets) + " |")
    return "\n".join(lines + ["", close_calls(groups)])


def close_calls(groups):
    """Per data set, the first split's close calls (:func:`close_call`) and what the
    pooled splits did with them: ``close / changed (better, worse held out)``."""
    now, pooled = REPEAT_RULES["agree, first split (now)"], REPEAT_RULES[
        "agree, every split on close calls"]
    count = {}
    for g in groups:
        c = count.setdefault(g[0]["dataset"], [0, 0, 0, 0])
        a, b = now(g), pooled(g)
        scores = _stacked(*staged(g[0], "agree"))
        grid = g[0]["grid"]
        row = _search_rows(grid)[0]
        c[0] += bool(not np.isnan(scores[0, row]).any()
                     and close_call(scores, _svm_rows(grid), row))
        if a != b:
            ta, tb = g[0]["outer"][str(a)]["test"], g[0]["outer"][str(b)]["test"]
            c[1] += 1
            c[2] += tb < ta
            c[3] += tb > ta
    return "close calls / changed by the pooled splits (better, worse held out): " + ", ".join(
        f"{d} {count[d][0]}/{count[d][1]} ({count[d][2]}, {count[d][3]})"
        for d in ORDER if d in count)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.selection_replay",
                                description=__doc__.splitlines()[0])
    p.add_argument("--data", nargs="+", default=list(ORDER))
    p.add_argument("--out", default="/tmp/selection_replay")
    p.add_argument("--replay", action="store_true", help="replay the recorded rules only")
    p.add_argument("--repeats", type=int, default=1,
                   help="inner splits: with R > 1 also record the candidates on inner splits "
                        "1 .. R-1 (replay-repeat{r}.jsonl) and replay the rules over them")
    p.add_argument("--shuffles", nargs="+", type=int, default=[0], metavar="SEED",
                   help="outer CV shuffle seeds (experiments.quality --shuffles): recorded "
                        "and replayed together")
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error(f"--repeats must be at least 1 (the estimator's own inner split), got {args.repeats}")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "replay.jsonl")
    more = [os.path.join(args.out, f"replay-repeat{r}.jsonl") for r in range(1, args.repeats)]
    if not args.replay:
        collect(args.data, path, shuffles=args.shuffles)
        for r, other in enumerate(more, 1):
            collect(args.data, other, repeat=r, shuffles=args.shuffles)
    records = [r for r in load(path) if r["dataset"] in args.data
               and quality.shuffle_seed(r["split"]) in args.shuffles]
    if not more:
        print(replay_table(records))
        return
    print(repeat_table(records, [load(m) for m in more]))


if __name__ == "__main__":
    main()
