"""Seconds per default ``GTOClassifier`` fit, split by stage, beside its peers of that depth.

For each data set, the splits of the quality protocol (``experiments.quality``:
stratified 5-fold CV, shuffle seed 0, min-max scaling fitted on the training
fold) are fitted by every arm: ``GTO`` (``GTOClassifier(depth=...)`` with its
defaults) and the installed peers of ``experiments.peers`` of the same depth
(``experiments.quality``'s ``PEERS_BY_DEPTH``; none at other depths, unless ``--peers``).
Per arm it records the CPU seconds of each fit (``time.process_time``, one
BLAS/numba thread: run with ``OMP_NUM_THREADS=1`` etc.), the wall seconds,
and the held-out error; the GTO fits are also split by stage (CPU seconds):

- ``cv``: the internal cross-validation (``GTOClassifier._select``), of which
  ``svm``: the 1-norm SVM-tree candidates (no search), and ``contenders``: its
  second stage (the contenders' searches, raced over the folds);
- ``refit``: the final fit on the whole training fold (fit minus ``cv``);
- over both: ``setup`` (building ``TreeProblem``), ``starts`` (the start
  trees), ``search`` (the tabu searches, ``run_tabu``), of which ``refine``
  (the robust-LP refits of the starts), ``crossover`` (a round's start and its
  polish start moved to a vertex, ``walker_from_theta``) and ``moves`` (the EPTS
  walks, ``_tabu_round``); ``lp``: the robust LPs' simplex (``solve_hinge_lp``,
  in the refits and the greedy starts).

``--data`` also takes the multi-class sets of ``experiments.multiclass`` (iris,
wine, digits and its generated ones), on the same protocol.

Unlike ``experiments.quality``, the big sets (magic, twonorm, phoneme) are
used whole (``--cap`` subsamples them); the generated data are the paper's
generator (10 features, or ``--features``) at ``--synthetic`` training sizes
with 10 000 test points, one draw.  Numba compiles before the clock starts (a warm-up fit).
The internal CV's choice (``best_index_``) is counted per grid point.

    python -m experiments.fit_speed                      # everything (slow at 1e5)
    python -m experiments.fit_speed --data heart liver --synthetic
    python -m experiments.fit_speed --data iris wine digits gen4 --synthetic   # multi-class
    python -m experiments.fit_speed --depth 3 --data heart liver cancer
    python -m experiments.fit_speed --no-peers --folds 1 --synthetic 100000 --data
    python -m experiments.fit_speed --data --synthetic 1000 3000 --features 100   # wide

Prints one table and writes ``fit_speed.json`` to ``--out``.
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
from collections import Counter
from contextlib import contextmanager

import numpy as np
from sklearn.preprocessing import MinMaxScaler

import gto
import problems
from gto.utils._atomic import write_text_atomic

from . import multiclass, peers, quality
from .common import Split, cv_splits, markdown_table

SYNTHETIC = (10_000, 100_000)
#: dimensions of the generated data (the paper's 10-d planted trees; ``--features``
#: measures wide data, docs/speed.md)
SYNTHETIC_FEATURES = 10
#: the bundled sets, then the multi-class ones of ``experiments.multiclass`` (asked for by
#: name; not in the default run)
DATA = (*problems.DATASETS, *problems.NUMERIC)
MULTICLASS = tuple(multiclass.DATA)
#: functions timed inside a GTO fit (found by name in the loaded gto modules, so the
#: script runs on older and newer layouts alike): stage -> (module attribute names)
STAGES = {"cv": ("_select",), "svm": ("_svm_result",), "contenders": ("_race_folds",),
          "setup": ("TreeProblem",), "starts": ("start_theta",), "search": ("run_tabu",),
          "refine": ("refine_theta",), "lp": ("solve_hinge_lp",),
          "crossover": ("walker_from_theta",), "moves": ("_tabu_round",)}
#: stages that count only the calls for which this test of (args, kwargs) holds: the
#: internal CV's second stage is the race of its contenders (warm from the first stage)
WHEN = {"contenders": lambda args, kwargs: bool(kwargs.get("warm"))}


# -- stage timing --------------------------------------------------------------
def _owners(name):
    """``[(owner, attribute)]`` holding the gto function or class ``name`` (every
    module that imported it, and GTOClassifier for its methods)."""
    found = {}
    for mod_name, mod in list(sys.modules.items()):
        if mod is None or not (mod_name == "gto" or mod_name.startswith("gto.")):
            continue
        for owner in (mod, getattr(mod, "GTOClassifier", None)):
            if owner is not None and name in vars(owner):
                found[id(owner)] = (owner, name)  # a class re-exported is patched once
    return list(found.values())


@contextmanager
def stage_clock():
    """Patch the STAGES functions to add their CPU seconds to a dict (outermost
    call only, so recursion is not counted twice); yields the dict."""
    totals = {stage: 0.0 for stage in STAGES}
    saved = []
    for stage, names in STAGES.items():
        for name in names:
            for owner, attr in _owners(name):
                original = vars(owner)[attr]
                saved.append((owner, attr, original))
                setattr(owner, attr, _timed(original, stage, totals, WHEN.get(stage)))
    try:
        yield totals
    finally:
        for owner, attr, original in reversed(saved):
            setattr(owner, attr, original)


def _timed(func, stage, totals, when=None):
    depth = [0]

    def wrapper(*args, **kwargs):
        if when is not None and not when(args, kwargs):
            return func(*args, **kwargs)
        depth[0] += 1
        t0 = time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                totals[stage] += time.process_time() - t0

    wrapper.__wrapped__ = func
    return wrapper


# -- arms ----------------------------------------------------------------------
def gto_arm(depth, params):
    """The GTO arm: the fitted model is kept for the stage split and the CV choice."""
    kept = {}

    def fit(X, y, seed, max_iter):
        model = gto.GTOClassifier(depth=depth, random_state=seed, **params).fit(X, y)
        kept["model"] = model
        return model.predict, model.tree_.n_decisions, peers.mean_nonzero(model.tree_)

    return quality.scaled(fit), kept


def choice(model, index=None):
    """A short name of the grid point the internal CV chose (or "fixed"); ``index``:
    of that grid point instead."""
    if getattr(model, "cv_results_", None) is None:
        return "fixed"
    p = model.cv_results_["params"][model.best_index_ if index is None else index]
    if p.get("alpha") is None:
        return "cart" if p.get("svm_C") is None else f"svm C={p['svm_C']:g}"
    mf = "" if p.get("max_features") is None else f" mf={p['max_features']}"
    return f"alpha={p['alpha']:g}{mf}"


def time_split(split, arms, kept):
    """Rows (one per arm) of CPU and wall seconds of the fit and the held-out error."""
    rows = []
    for name, fit in arms.items():
        is_gto = name == "GTO"
        row = {"dataset": split.dataset, "split": split.split, "arm": name,
               "n": len(split.y_train)}
        with stage_clock() if is_gto else _nothing() as stages:
            w0, c0 = time.perf_counter(), time.process_time()
            try:
                predict, *_ = fit(split.X_train, split.y_train, split.seed, None)
            except Exception as exc:  # noqa: BLE001 (a failed peer is reported, not fatal)
                row["failed"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                continue
            row["cpu"], row["wall"] = time.process_time() - c0, time.perf_counter() - w0
        row["test"] = 100 * float(np.mean(predict(split.X_test) != split.y_test))
        if is_gto:
            row["stages"] = {**stages, "refit": row["cpu"] - stages["cv"]}
            model = kept["model"]
            row["choice"] = choice(model)
            if getattr(model, "cv_results_", None) is not None:  # the best mean score
                row["best_mean"] = choice(model, int(np.argmin(model.cv_results_["rank_test_score"])))
        rows.append(row)
    return rows


@contextmanager
def _nothing():
    yield None


# -- data ----------------------------------------------------------------------
def splits(names, synthetic, folds, cap, features=SYNTHETIC_FEATURES):
    """The quality protocol's splits of ``names`` (first ``folds`` folds, big sets
    subsampled to ``cap`` points if given), then one draw per synthetic size, in
    ``features`` dimensions (named ``synthetic-N``, or ``synthetic-NxD`` beside the
    default 10)."""
    for name in names:
        if name in MULTICLASS:
            yield from itertools.islice(multiclass.splits([name]), folds)
        else:
            yield from cv_splits(name, folds=folds, max_samples=cap)
    for n in synthetic:
        d = problems.synthetic(features, n, 10_000, random_state=0)
        name = f"synthetic-{n}" if features == SYNTHETIC_FEATURES else f"synthetic-{n}x{features}"
        yield Split(name, 0, d.X_train, d.y_train, d.X_test, d.y_test, 0)


def warm_up(depth, params):
    """One small fit of each kind, so numba's compilation is not timed; at depth >= 3
    also a search long enough to reach the region start's round (its compiled fits
    are not reached by the short fit's 200 moves)."""
    X, y = problems.load("liver")
    X = MinMaxScaler().fit_transform(X)
    gto.GTOClassifier(depth=depth, random_state=0, **{**params, "max_iter": 200}).fit(X, y)
    if depth >= 3:
        gto.optimize(gto.Tree.complete(depth, np.unique(y), X.shape[1]), X, y, max_iter=1500,
                     random_state=0)


# -- report --------------------------------------------------------------------
def summarise(rows):
    """``{dataset: {arm: {n, cpu_median, cpu_max, wall_median, test, stages, choices}}}``."""
    out = {}
    for r in rows:
        out.setdefault(r["dataset"], {}).setdefault(r["arm"], []).append(r)
    summ = {}
    for data, by_arm in out.items():
        summ[data] = {}
        for arm, rs in by_arm.items():
            ok = [r for r in rs if "failed" not in r]
            s = {"n": rs[0]["n"], "fits": len(ok), "failed": [r["failed"] for r in rs
                                                                if "failed" in r]}
            if ok:
                s.update(cpu_median=float(np.median([r["cpu"] for r in ok])),
                         cpu_max=float(np.max([r["cpu"] for r in ok])),
                         wall_median=float(np.median([r["wall"] for r in ok])),
                         test=float(np.mean([r["test"] for r in ok])))
            if ok and "stages" in ok[0]:
                s["stages"] = {k: float(np.median([r["stages"][k] for r in ok]))
                               for k in ok[0]["stages"]}
                s["choices"] = dict(Counter(r["choice"] for r in ok))
                s["best_means"] = dict(Counter(r.get("best_mean", "fixed") for r in ok))
            summ[data][arm] = s
    return summ


def table(summ, arm_names):
    """Markdown: per data set, GTO's median CPU seconds per fit and its stages, the
    peers' median CPU seconds, then the held-out error % of each arm."""
    stage_names = ["cv", "svm", "contenders", "refit", "setup", "starts", "search", "refine",
                   "lp", "crossover", "moves"]
    peers_ = [a for a in arm_names if a != "GTO"]
    header = (["data", "n", "GTO s (max)"] + [f"{k} s" for k in stage_names]
              + [f"{a} s" for a in peers_] + [f"{a} test %" for a in arm_names] + ["CV choice", "best CV mean"])
    body = []
    for data, by_arm in summ.items():
        g = by_arm.get("GTO", {})
        st = g.get("stages", {})
        cells = [data, str(g.get("n", "")),
                 f"{g['cpu_median']:.2f} ({g['cpu_max']:.2f})" if "cpu_median" in g else "failed"]
        cells += [f"{st[k]:.2f}" if k in st else "" for k in stage_names]
        cells += [_num(by_arm.get(a, {}).get("cpu_median"), 3) for a in peers_]
        cells += [_num(by_arm.get(a, {}).get("test"), 1) for a in arm_names]
        for key in ("choices", "best_means"):
            cells.append(", ".join(f"{k} x{v}" for k, v in g.get(key, {}).items()))
        body.append(cells)
    return markdown_table(header, body)


def _num(value, digits):
    return "" if value is None else f"{value:.{digits}f}"


def run(data, synthetic, folds, cap, depth, peer_names, params, out,
        features=SYNTHETIC_FEATURES):
    names = list(data)
    unknown = [d for d in names if d not in DATA + MULTICLASS]
    if unknown:
        raise ValueError(f"unknown data set(s) {unknown}; choose from {list(DATA + MULTICLASS)}")
    found, notes = peers.select(peer_names)
    arm, kept = gto_arm(depth, params)
    arms = {"GTO": arm, **{name: quality.scaled(fit) for name, fit in found.items()}}
    warm_up(depth, params)
    rows = []
    for split in splits(names, synthetic, folds, cap, features):
        done = time_split(split, arms, kept)
        rows += done
        g = done[0]
        print(f"{split.dataset} split {split.split}: GTO {g.get('cpu', float('nan')):.2f} s "
              f"CPU, test {g.get('test', float('nan')):.1f} %, {g.get('choice', '')}",
              file=sys.stderr, flush=True)
    summ = summarise(rows)
    meta = {"depth": depth, "gto_params": params, "folds": folds, "cap": cap,
            "load": os.getloadavg(), "notes": notes, "commit": _commit()}
    text = table(summ, list(arms))
    os.makedirs(out, exist_ok=True)
    stem = "fit_speed" if depth == 2 else f"fit_speed-depth{depth}"
    write_text_atomic(os.path.join(out, stem + ".json"),
                      json.dumps({"summary": summ, "rows": rows, **meta}, indent=1,
                                 default=float))
    return text, meta


def _commit():
    try:
        import subprocess

        here = os.path.dirname(os.path.dirname(os.path.abspath(gto.__file__)))
        return subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, check=True).stdout.strip()
    except Exception:  # noqa: BLE001 (not a git checkout)
        return None


def parser():
    p = argparse.ArgumentParser(prog="python -m experiments.fit_speed",
                                description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", nargs="*", default=list(DATA), metavar="NAME",
                   help=f"bundled data sets among {', '.join(DATA)}, or multi-class ones "
                        f"among {', '.join(MULTICLASS)} (none: --data)")
    p.add_argument("--synthetic", nargs="*", type=int, default=list(SYNTHETIC), metavar="N",
                   help="training sizes of the generated data (none: --synthetic)")
    p.add_argument("--features", type=int, default=SYNTHETIC_FEATURES, metavar="D",
                   help="dimensions of the generated data")
    p.add_argument("--folds", type=int, default=None,
                   help="first folds of the 5-fold protocol only (default: all 5)")
    p.add_argument("--cap", type=int, default=None,
                   help="subsample bundled sets above this many points (stratified, seed 0)")
    p.add_argument("--depth", type=int, default=2)
    p.add_argument("--peers", nargs="*", default=None, metavar="PEER",
                   help=f"peer arms among {', '.join(peers.PEERS)} (default: those of --depth "
                        "in experiments.quality)")
    p.add_argument("--no-peers", action="store_true", help="GTO alone")
    p.add_argument("--gto", nargs="*", default=[], metavar="KEY=VALUE",
                   help="GTOClassifier parameters, e.g. max_iter=1000")
    p.add_argument("--out", default="results")
    return p


def main(argv=None):
    p = parser()
    args = p.parse_args(argv)
    if args.features < 1:
        p.error("--features must be at least 1")
    params = dict(_pair(item) for item in args.gto)
    text, meta = run(args.data, args.synthetic, args.folds, args.cap, args.depth,
                     [] if args.no_peers else _peer_names(args), params, args.out, args.features)
    print(text)
    print()
    print(f"CPU seconds per fit (process_time), median (max) over the splits; stages: medians; "
          f"depth {meta['depth']}; load average {', '.join(f'{x:.1f}' for x in meta['load'])}; "
          f"code {meta['commit']}")
    for note in meta["notes"]:
        print(note)


def _peer_names(args):
    """``--peers`` as given, else the depth's peers of ``experiments.quality``."""
    if args.peers is not None:
        return args.peers
    return list(quality.PEERS_BY_DEPTH.get(args.depth, ()))


def _pair(item):
    key, sep, value = item.partition("=")
    if not sep:
        raise SystemExit(f"--gto expects KEY=VALUE, got {item!r}")
    return key, quality._value(value)


if __name__ == "__main__":
    main()
