"""Held-out quality of depth-2 (or depth-3) trees: GTO's default estimator against its peers.

The protocol: stratified 5-fold CV (shuffle seed 0; ``--shuffles`` repeats it with
other seeds), min-max scaling fitted on each training fold, on

- the paper's four data sets (``problems.DATASETS``);
- the numeric sets (``problems.NUMERIC``); the three big ones (magic,
  twonorm, phoneme) are first cut to a stratified subsample of
  ``BIG_SAMPLE`` points (seed 0), printed with the table;
- generated 10-d data (``problems.synthetic``: 500 train / 2 000 test, 5 draws).

Arms: ``GTO`` (``GTOClassifier(depth=2)`` with its defaults), ``GTO-alpha0``
(the same with ``alpha=0``: no penalty, no model selection), ``CART-d2`` and
the optional peers of ``experiments.peers`` at depth 2 (obliquetree, stree,
pystreed; skipped with a note when not installed).  Prints train and test
error %, decisions and mean nonzero weights per decision side by side as a
markdown table; writes ``quality.csv`` (one row per split and arm),
``quality.json`` (the summary) and ``quality.md`` to ``--out`` (``--quick``
writes ``quality-quick.*`` instead, never over a full run).

    python -m experiments.quality
    python -m experiments.quality --depth 3 --jobs 1

``--depth 3``: arms ``GTO`` (``GTOClassifier(depth=3)``), ``GTO-d2`` (GTO's own
depth-2 default, the tree a depth-3 fit must not lose to held out) and the
depth-3 peers ``CART-d3``, ``obliquetree-d3``, ``stree-d3``; files
``quality-d3.*``; the verdict asks for GTO at or below the best depth-3 peer
and never more than 0.5 points above ``GTO-d2``.
    python -m experiments.quality --quick --jobs 2
    python -m experiments.quality --data heart cancer --jobs 2
    python -m experiments.quality --combine a/quality.csv b/quality.csv --out results
    python -m experiments.quality --depth 3 --combine gto/quality-d3.csv peers/quality-d3.csv
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from functools import partial

import numpy as np
from sklearn.preprocessing import MinMaxScaler

import gto
import problems
from gto.utils._atomic import write_text_atomic

from . import peers
from .common import (
    FIELDS,
    cv_splits,
    failures,
    markdown_table,
    pm,
    read_csv,
    run_splits,
    summarize,
    synthetic_splits,
    write_csv,
)

BIG = ("magic", "twonorm", "phoneme")
BIG_SAMPLE = 2000
SYNTHETIC = "synthetic-10d"
DATA = (*problems.DATASETS, *problems.NUMERIC, SYNTHETIC)
PEERS = ("CART-d2", "obliquetree-d2", "stree-d2", "pystreed-d2")
PEERS_BY_DEPTH = {2: PEERS, 3: ("CART-d3", "obliquetree-d3", "stree-d3")}
#: at depth 3 the default GTO arm may be at most this many points above GTO's own depth 2
SHALLOWER_SLACK = 0.5
QUICK_ITER = 300


def fit_gto(X, y, seed, max_iter, depth=2, **params):
    """``GTOClassifier(depth=depth, **params)``; ``max_iter`` None keeps the estimator's
    default."""
    if max_iter is not None:
        params["max_iter"] = max_iter
    model = gto.GTOClassifier(depth=depth, random_state=seed, **params).fit(X, y)
    return model.predict, model.tree_.n_decisions, peers.mean_nonzero(model.tree_)


#: the last depth-3 fit's estimator, keyed by its training data and seed: its
#: ``shallower_`` is exactly ``GTOClassifier(depth=2, random_state=seed)`` on the same
#: data (gto.learners._capacity), so the GTO-d2 arm reads it instead of fitting again
_LAST = {}


def _key(X, y, seed):
    return hash((X.tobytes(), y.tobytes(), seed))


def fit_gto_deep(X, y, seed, max_iter, depth=3, **params):
    """:func:`fit_gto` at ``depth``, remembering the fit for :func:`fit_gto_shallower`."""
    if max_iter is not None:
        params["max_iter"] = max_iter
    model = gto.GTOClassifier(depth=depth, random_state=seed, **params).fit(X, y)
    _LAST.clear()
    _LAST[_key(X, y, seed)] = model
    return model.predict, model.tree_.n_decisions, peers.mean_nonzero(model.tree_)


def fit_gto_shallower(X, y, seed, max_iter, depth=2, **params):
    """GTO at ``depth``: the ``shallower_`` estimator of the depth-3 fit on the same data
    when there is one, else a fit of its own."""
    model = _LAST.pop(_key(X, y, seed), None)
    shallow = None if model is None else model.shallower_
    if shallow is None or shallow.depth != depth or max_iter is not None:
        return fit_gto(X, y, seed, max_iter, depth, **params)
    return shallow.predict, shallow.tree_.n_decisions, peers.mean_nonzero(shallow.tree_)


def _with_iter(fit, max_iter, X, y, seed, _run_iter):
    """``fit`` with the ``max_iter`` given by ``--gto max_iter=...`` (over ``--quick``'s)."""
    return fit(X, y, seed, max_iter)


def scaled(fit):
    """The arm ``fit`` on min-max scaled features (scaler fitted on the training fold)."""
    def arm(X, y, seed, max_iter):
        scaler = MinMaxScaler().fit(X)
        predict, *rest = fit(scaler.transform(X), y, seed, max_iter)
        return (lambda Z: predict(scaler.transform(Z))), *rest
    return arm


def arms(peer_names=PEERS, gto_params=None, depth=2, gto_arms=None):
    """``(arms, notes)``: the GTO arms and the peers that can run, all min-max scaled.

    GTO arms: at depth 2 ``GTO`` and ``GTO-alpha0``, at depth 3 ``GTO`` (depth 3)
    and ``GTO-d2``; ``gto_arms`` selects among them (``[]``: peers only)."""
    params = dict(gto_params or {})
    given_iter = params.pop("max_iter", None)  # the arms' own argument, not a keyword
    found, notes = peers.select(peer_names)
    if depth == 2:
        ours = {"GTO": partial(fit_gto, **params),
                "GTO-alpha0": partial(fit_gto, **{**params, "alpha": 0.0})}
    else:  # GTO-d2 reads the depth-3 fit's own depth-2 estimator (same split, same seed)
        ours = {"GTO": partial(fit_gto_deep, depth=depth, **params),
                "GTO-d2": partial(fit_gto_shallower, depth=2, **params)}
    if given_iter is not None:
        ours = {name: partial(_with_iter, fit, given_iter) for name, fit in ours.items()}
    if gto_arms is not None:
        unknown = set(gto_arms) - set(ours)
        if unknown:
            raise ValueError(f"unknown GTO arm(s) {sorted(unknown)}; choose from {list(ours)}")
        ours = {k: v for k, v in ours.items() if k in gto_arms}
    named = {**ours, **found}
    return {name: scaled(fit) for name, fit in named.items()}, notes


#: splits per outer shuffle seed (5 folds, or 5 draws of the generated data): seed s's
#: splits are numbered SPLITS_PER_SEED * s onwards (:func:`splits`, :func:`shuffle_seed`)
SPLITS_PER_SEED = 5


def shuffle_seed(split):
    """The outer shuffle seed of split number ``split`` (:func:`splits`' numbering)."""
    return split // SPLITS_PER_SEED


def splits(names, quick=False, shuffles=(0,)):
    """Splits of the named data sets: 5-fold CV (the first fold only if ``quick``),
    once per outer shuffle seed s in ``shuffles`` (repeated CV: the big sets'
    subsample is drawn with seed s too, the generated data are draws 5 s to
    5 s + 4).  Seed s's folds are numbered 5 s to 5 s + 4 (the generated data by
    their draw), so that every row of a data set and arm is its own split, in one
    run or in runs combined (:func:`combine`)."""
    folds, repeats = (1, 1) if quick else (None, SPLITS_PER_SEED)
    out = []
    for seed in shuffles:
        for name in names:
            if name == SYNTHETIC:
                out += synthetic_splits(10, 500, 2000, repeats, start=SPLITS_PER_SEED * seed)
            else:
                cap = BIG_SAMPLE if name in BIG else None
                out += [s._replace(split=s.split + SPLITS_PER_SEED * seed)
                        for s in cv_splits(name, folds=folds, seed=seed, max_samples=cap)]
    return out


def summary(rows, arm_names):
    """``{dataset: {arm: {train, test, train_std, test_std, decisions, nonzero, n, failed,
    seconds}}}`` (``seconds``: mean fit-and-predict time per split)."""
    base = summarize(rows)
    out = {}
    for r in rows:
        out.setdefault(r["dataset"], {})
    for name in out:
        for arm in arm_names:
            s = base.get((name, arm))
            if s is None:
                continue
            ok = [r for r in rows if r["dataset"] == name and r["arm"] == arm and not r["failed"]]
            nz = [r["nonzero"] for r in ok if r.get("nonzero", "") != ""]
            out[name][arm] = {
                "train": s["train"][0], "train_std": s["train"][1],
                "test": s["test"][0], "test_std": s["test"][1],
                "decisions": s["decisions"], "nonzero": float(np.mean(nz)) if nz else None,
                "n": s["n"], "failed": s["failed"],
                "seconds": float(np.mean([r["seconds"] for r in ok])) if ok else None,
            }
    return out


def table(summ, arm_names):
    """Markdown: one row per data set; test and train error % per arm, then
    decisions / nonzero weights per decision per arm, then seconds per fit of
    the GTO arms."""
    timed = [a for a in arm_names if a.startswith("GTO")]
    header = (["data"] + [f"{a} test %" for a in arm_names] + [f"{a} train %" for a in arm_names]
              + [f"{a} dec / nz" for a in arm_names] + [f"{a} s" for a in timed])
    body = []
    for name, by_arm in summ.items():
        cells = {a: by_arm.get(a) for a in arm_names}

        def err(s, key):
            return "" if s is None else pm((s[key], s[key + "_std"]), s["failed"])

        def size(s):
            if s is None or s["decisions"] is None:
                return ""
            nz = "?" if s["nonzero"] is None else f"{s['nonzero']:.1f}"
            return f"{s['decisions']:.1f} / {nz}"

        body.append([name] + [err(cells[a], "test") for a in arm_names]
                    + [err(cells[a], "train") for a in arm_names]
                    + [size(cells[a]) for a in arm_names]
                    + ["" if cells[a] is None or cells[a]["seconds"] is None
                       else f"{cells[a]['seconds']:.0f}" for a in timed])
    return markdown_table(header, body)


def verdict(summ, depth=2):
    """Lines checking the target for the default GTO arm: test error at or below the
    best peer; at depth 2 never more than 1 point above CART-d2, at depth 3 never
    more than SHALLOWER_SLACK points above GTO-d2; then the counts over the
    paper's and the numeric sets."""
    if depth != 2:
        return _verdict_deeper(summ)
    lines, wins = [], {}
    for name, g, others in _scored(summ):
        if not others:
            continue
        best = min(others, key=others.get)
        cart = others.get("CART-d2")
        beats = g["test"] <= others[best] + 1e-9
        close = cart is None or g["test"] <= cart + 1.0
        wins[name] = (beats, close)
        lines.append(f"{name}: GTO {g['test']:.1f} vs best peer {best} {others[best]:.1f} -> "
                     f"{'at or below' if beats else 'above'}; vs CART-d2 "
                     f"{'n/a' if cart is None else f'{cart:.1f}'} -> "
                     f"{'within 1 point' if close else 'MORE THAN 1 POINT WORSE'}")
    for label, group in (("paper sets", problems.DATASETS), ("numeric sets", problems.NUMERIC)):
        run = [n for n in group if n in wins]
        if run:
            lines.append(f"{label}: at or below the best peer on "
                         f"{sum(wins[n][0] for n in run)} of {len(run)} run "
                         f"({len(group)} in all); within 1 point of CART-d2 on "
                         f"{sum(wins[n][1] for n in run)} of {len(run)}")
    return lines


def _scored(summ):
    """``(data set, GTO's summary, {peer: test error})`` for the sets where GTO ran."""
    for name, by_arm in summ.items():
        g = by_arm.get("GTO")
        if g is not None and not np.isnan(g["test"]):
            yield name, g, {a: s["test"] for a, s in by_arm.items()
                            if not a.startswith("GTO") and not np.isnan(s["test"])}


def _verdict_deeper(summ):
    lines, wins = [], {}
    for name, g, others in _scored(summ):
        shallow = summ[name].get("GTO-d2")
        shallow = None if shallow is None or np.isnan(shallow["test"]) else shallow["test"]
        best = min(others, key=others.get) if others else None
        beats = best is None or g["test"] <= others[best] + 1e-9
        close = shallow is None or g["test"] <= shallow + SHALLOWER_SLACK + 1e-9
        wins[name] = (beats, close)
        peer = "no peer" if best is None else f"best peer {best} {others[best]:.1f}"
        lines.append(f"{name}: GTO {g['test']:.1f} vs {peer} -> "
                     f"{'at or below' if beats else 'above'}; vs GTO-d2 "
                     f"{'n/a' if shallow is None else f'{shallow:.1f}'} -> "
                     f"{'within' if close else 'MORE THAN'} {SHALLOWER_SLACK} point(s)")
    run = [n for n in (*problems.DATASETS, *problems.NUMERIC) if n in wins]
    if run:
        lines.append(f"paper and numeric sets: at or below the best depth-3 peer on "
                     f"{sum(wins[n][0] for n in run)} of {len(run)} run; within "
                     f"{SHALLOWER_SLACK} point(s) of GTO-d2 on {sum(wins[n][1] for n in run)} "
                     f"of {len(run)}")
    return lines


def run(out="results", data=DATA, quick=False, n_jobs=-1, peer_names=None, gto_params=None,
        quiet=False, depth=2, gto_arms=None, shuffles=(0,)):
    """Run the protocol; write CSV, JSON and markdown; return the markdown text.
    ``shuffles``: outer shuffle seeds (more than one: repeated CV, :func:`splits`)."""
    unknown = [d for d in data if d not in DATA]
    if unknown:
        raise ValueError(f"unknown data set(s) {unknown}; choose from {list(DATA)}")
    if depth not in PEERS_BY_DEPTH:
        raise ValueError(f"depth must be one of {sorted(PEERS_BY_DEPTH)}, got {depth!r}")
    peer_names = PEERS_BY_DEPTH[depth] if peer_names is None else peer_names
    shuffles = _shuffle_seeds(shuffles)
    the_arms, notes = arms(peer_names, gto_params, depth, gto_arms)
    max_iter = QUICK_ITER if quick else None
    todo = splits(data, quick, shuffles)
    t0 = time.perf_counter()
    rows = run_splits(todo, the_arms, max_iter, n_jobs=n_jobs, quiet=quiet, desc="quality")
    seconds = time.perf_counter() - t0
    last = f"{len(todo)} splits, {len(the_arms)} arms, {seconds:.0f} s wall time, jobs={n_jobs}"
    return report(rows, list(the_arms), out, data, quick, gto_params, [last, *notes],
                  {"seconds": seconds, "shuffles": list(shuffles)}, depth, shuffles)


def _shuffle_seeds(shuffles):
    """``shuffles`` as a tuple of distinct non-negative ints (ValueError otherwise)."""
    seeds = tuple(shuffles)
    if not seeds or any(not isinstance(s, (int, np.integer)) or isinstance(s, bool) or s < 0
                        for s in seeds) or len(set(seeds)) != len(seeds):
        raise ValueError(f"shuffles must be distinct non-negative integers, got {shuffles!r}")
    return seeds


def report(rows, arm_names, out, data, quick=False, gto_params=None, extra=(), meta=None,
           depth=2, shuffles=(0,)):
    """Table, protocol and verdict of ``rows``; writes ``quality[-d3][-quick].csv/.json/.md``
    to ``out`` and returns the markdown text."""
    summ = summary(rows, arm_names)
    big = [d for d in data if d in BIG]
    protocol = [
        _cv_text(quick, shuffles) + "; min-max scaling fitted on the training fold; errors in %, "
        "mean ± std over folds",
        f"generated: {SYNTHETIC} 500 train / 2000 test, "
        f"{'1 draw' if quick else f'{5 * len(shuffles)} draws'}" if SYNTHETIC in data else "",
        f"subsampled (stratified, seed {_seeds_text(shuffles)}) to {BIG_SAMPLE} points before CV: "
        f"{', '.join(big)}" if big else "",
        _arms_text(arm_names, depth, gto_params),
        "dec / nz: decisions, mean nonzero weights per decision ('?': not exposed); "
        "s: mean seconds per fit (with the internal CV) of the GTO arms, under the run's load",
        *extra,
    ]
    text = "\n".join([
        f"Quality of depth-{depth} trees on held-out data",
        "",
        table(summ, arm_names),
        "",
        *[line for line in protocol if line],
        "",
        *verdict(summ, depth),
        *failures(rows),
    ])
    stem = "quality" + ("" if depth == 2 else f"-d{depth}") + ("-quick" if quick else "")
    write_csv(os.path.join(out, stem + ".csv"), rows, FIELDS + ["nonzero"])
    write_text_atomic(os.path.join(out, stem + ".json"),
                      json.dumps({"summary": _no_nan(summ), "quick": quick,
                                  "gto_params": gto_params or {}, **(meta or {})},
                                 indent=1, default=float))
    write_text_atomic(os.path.join(out, stem + ".md"), text + "\n")
    return text


def combine(paths, out="results", depth=2):
    """One report from the ``quality.csv`` files of several runs (e.g. one per data
    set, the GTO arms and the peers run apart, or one per ``--shuffles`` seed: repeated
    CV); a row of the same data set, arm and split in two files: the later file wins."""
    rows = {}
    for path in paths:
        for r in read_csv(path):
            r["nonzero"] = float(r["nonzero"]) if r.get("nonzero") else ""
            rows[r["dataset"], r["arm"], r["split"]] = r
    data = [d for d in DATA if any(key[0] == d for key in rows)]
    arm_order = list(dict.fromkeys(key[1] for key in rows))  # as first seen
    merged = [rows[key] for d in data
              for key in sorted((k for k in rows if k[0] == d), key=lambda k: (arm_order.index(k[1]), k[2]))]
    arm_names = list(dict.fromkeys(r["arm"] for r in merged))
    seeds = sorted({shuffle_seed(r["split"]) for r in merged})
    return report(merged, arm_names, out, data,
                  extra=[f"combined from {len(paths)} runs: {', '.join(paths)}"], depth=depth,
                  shuffles=seeds)


def _no_nan(value):
    """``value`` with NaN (arms that failed on every split) as None, for JSON."""
    if isinstance(value, dict):
        return {k: _no_nan(v) for k, v in value.items()}
    if isinstance(value, float) and np.isnan(value):
        return None
    return value


def _arms_text(arm_names, depth, gto_params):
    """What the GTO arms of ``arm_names`` fit (only those run)."""
    said = {"GTO": f"GTO: gto.GTOClassifier(depth={depth}, random_state=fold"
                   f"{_params_text(gto_params)})",
            "GTO-alpha0": "GTO-alpha0: the same with alpha=0",
            "GTO-d2": "GTO-d2: the same at depth=2"}
    return "; ".join(text for arm, text in said.items() if arm in arm_names)


def _seeds_text(shuffles):
    return ", ".join(str(s) for s in shuffles)


def _cv_text(quick, shuffles):
    """The protocol's outer CV, as the report states it."""
    if quick:
        seeds = "" if tuple(shuffles) == (0,) else f", shuffle seed {_seeds_text(shuffles)}"
        return f"quick: first fold / draw only, {QUICK_ITER} GTO iterations{seeds}"
    if len(shuffles) == 1:
        return f"stratified 5-fold CV, shuffle seed {shuffles[0]}"
    return (f"stratified 5-fold CV repeated with shuffle seeds {_seeds_text(shuffles)} "
            "(means over all folds)")


def _params_text(params):
    return "".join(f", {k}={v!r}" for k, v in (params or {}).items())


def _value(text):
    """A ``--gto key=value`` value: a number if it parses as one, else the string."""
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return {"None": None}.get(text, text)


def parser():
    p = argparse.ArgumentParser(prog="python -m experiments.quality",
                                description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", nargs="+", default=list(DATA), metavar="NAME",
                   help=f"data sets among {', '.join(DATA)}")
    p.add_argument("--quick", action="store_true",
                   help=f"first fold / draw only and {QUICK_ITER} GTO iterations (smoke run)")
    p.add_argument("--jobs", type=int, default=-1, help="joblib workers for the splits")
    p.add_argument("--out", default="results", help="folder for quality.csv/.json/.md")
    p.add_argument("--depth", type=int, default=2, choices=sorted(PEERS_BY_DEPTH),
                   help="depth of the GTO arm and the peers (3: also GTO's own depth 2)")
    p.add_argument("--peers", nargs="*", default=None, metavar="PEER",
                   help=f"peer arms among {', '.join(peers.PEERS)} (none: --peers; "
                        "default: the peers of --depth)")
    p.add_argument("--gto-arms", nargs="*", default=None, metavar="ARM",
                   help="GTO arms to run (depth 2: GTO GTO-alpha0; depth 3: GTO GTO-d2; "
                        "none: --gto-arms)")
    p.add_argument("--gto", nargs="*", default=[], metavar="KEY=VALUE",
                   help="override GTOClassifier parameters of both GTO arms, e.g. cv=3")
    p.add_argument("--shuffles", nargs="+", type=int, default=[0], metavar="SEED",
                   help="outer CV shuffle seeds; more than one repeats the 5-fold CV once per "
                        "seed (repeated CV) and averages over all folds")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.add_argument("--combine", nargs="+", metavar="CSV",
                   help="no run: one report from these quality.csv files (written to --out)")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    if args.combine:
        print(combine(args.combine, args.out, args.depth))
        return
    params = {}
    for item in args.gto:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--gto expects KEY=VALUE, got {item!r}")
        params[key] = _value(value)
    print(f"quality: {len(splits(args.data, args.quick, args.shuffles))} splits", file=sys.stderr)
    print(run(args.out, args.data, args.quick, args.jobs, args.peers, params, args.quiet,
              args.depth, args.gto_arms, args.shuffles))


if __name__ == "__main__":
    main()
