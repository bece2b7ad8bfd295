"""DT-SLIM experiment: depth, size and test accuracy of unpruned
scikit-learn trees before and after ``gto.slim.improve`` under 5-fold CV, and
``method="gto"`` on depth-4 CART trees (training errors before/after).

    python -m experiments.slim                      # all sets, 300 s per set
    python -m experiments.slim --budget 60 --sets kr-vs-kp car --numeric none
    python -m experiments.slim --sets none --numeric none --gto-sets none --solvers splice

On the discrete sets (``problems.CATEGORICAL``: features are category codes)
``improve`` gets ``categorical_features="all"``: the input tree is
scikit-learn's, with thresholds on the codes, and the windows may also use the
paper's one-hot tests ``x_f == v`` (subset decisions in the result).  On the
numeric sets: thresholds only.

The per-set budget is split evenly over the folds (``time_limit`` of each
``improve`` call = budget / folds; wall-clock seconds, so on a busy machine
the CPU seconds, printed as ``cpu``, are fewer).  Prints tables and a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier

import gto
import problems

DISCRETE = ("kr-vs-kp", "mushroom", "car", "nursery", "splice", "monk1", "monk2")
PAPER_ITI = {"kr-vs-kp": (14.0, 10.2)}  # Schidler & Szeider Table 4: ITI depth before/after


def folds(name, n_folds, seed=0):
    X, y = problems.load(name)
    cv = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed)
    for k, (tr, te) in enumerate(cv.split(X, y)):
        yield k, X[tr], y[tr], X[te], y[te]


def sat_rows(name, budget, n_folds, quiet=True, verbose=False):
    rows = []
    categorical = "all" if name in problems.CATEGORICAL else None
    for k, Xtr, ytr, Xte, yte in folds(name, n_folds):
        clf = DecisionTreeClassifier(random_state=k).fit(Xtr, ytr)
        cpu = time.process_time()
        res = gto.slim.improve(clf, Xtr, ytr, method="sat", time_limit=budget / n_folds,
                               categorical_features=categorical, quiet=quiet)
        cpu = time.process_time() - cpu
        rows.append(dict(
            dataset=name, fold=k, depth_before=res.depth_before, depth_after=res.depth_after,
            size_before=res.size_before, size_after=res.size_after,
            acc_before=float(np.mean(clf.predict(Xte) == yte)),
            acc_after=float(np.mean(res.tree.predict(Xte) == yte)),
            train_classes_kept=bool(np.all(res.tree.predict(Xtr) == clf.predict(Xtr))),
            one_hot_tests=int(sum(s is not None for s in res.tree.subsets)),
            windows=res.n_windows, tried=res.n_tried, sat_calls=res.n_sat,
            timeouts=res.n_timeouts,
            outcomes={k: round(v, 1) for k, v in res.windows.items()},
            stage=res.stage, status=res.status, seconds=round(res.time, 1),
            cpu_seconds=round(cpu, 1)))
        if verbose:
            print(json.dumps(rows[-1]), flush=True)
    return rows


SOLVERS = ("glucose4", "cadical153", "cadical195")


def solver_rows(name, budget, solvers=SOLVERS):
    """Replay the SAT calls of one ``improve`` run (fold 0 of ``name``, ``budget`` seconds)
    through each python-sat solver with the same conflict budgets (10 s cap per call):
    total seconds and verdicts per solver."""
    from gto.slim import encodings

    calls, real = [], encodings._solve

    def record(clauses, time_limit, conflicts=None, solver_name=None):
        calls.append((clauses, conflicts))
        return real(clauses, time_limit, conflicts, solver_name)

    _, Xtr, ytr, _, _ = next(folds(name, 5))
    clf = DecisionTreeClassifier(random_state=0).fit(Xtr, ytr)
    encodings._solve = record
    try:
        gto.slim.improve(clf, Xtr, ytr, time_limit=budget, quiet=True,
                         categorical_features="all" if name in problems.CATEGORICAL else None)
    finally:
        encodings._solve = real
    rows = []
    for solver in solvers:
        t0, verdicts = time.monotonic(), []
        for clauses, conflicts in calls:
            out = real(clauses, 10.0, conflicts, solver)
            verdicts.append("unknown" if out is None else "sat" if out else "unsat")
        rows.append(dict(dataset=name, solver=solver, calls=len(calls),
                         seconds=round(time.monotonic() - t0, 1),
                         **{v: verdicts.count(v) for v in ("sat", "unsat", "unknown")}))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def gto_rows(name, budget, n_folds, depth=4, seed=0):
    rows = []
    for k, Xtr, ytr, Xte, yte in folds(name, n_folds):
        clf = DecisionTreeClassifier(max_depth=depth, random_state=k).fit(Xtr, ytr)
        cpu = time.process_time()
        res = gto.slim.improve(clf, Xtr, ytr, method="gto", time_limit=budget / n_folds,
                               random_state=seed + k, quiet=True)
        cpu = time.process_time() - cpu
        rows.append(dict(
            dataset=name, fold=k, errors_before=res.n_errors_before,
            errors_after=res.n_errors_after, decisions_before=(res.size_before - 1) // 2,
            decisions_after=(res.size_after - 1) // 2,
            acc_before=float(np.mean(clf.predict(Xte) == yte)),
            acc_after=float(np.mean(res.tree.predict(Xte) == yte)),
            windows=res.n_windows, status=res.status, seconds=round(res.time, 1),
            cpu_seconds=round(cpu, 1)))
    return rows


def mean_by_set(rows, keys):
    out = {}
    for r in rows:
        out.setdefault(r["dataset"], []).append(r)
    return {name: {k: float(np.mean([r[k] for r in rs])) for k in keys} for name, rs in out.items()}


def print_sat(rows):
    keys = ["depth_before", "depth_after", "size_before", "size_after", "acc_before",
            "acc_after", "seconds", "cpu_seconds"]
    table = mean_by_set(rows, keys)
    print(f"{'dataset':10} {'depth':>13} {'size':>15} {'test acc':>15} {'kept':>5} "
          f"{'sec':>6} {'cpu':>5}  paper ITI depth")
    for name, m in table.items():
        kept = all(r["train_classes_kept"] for r in rows if r["dataset"] == name)
        paper = PAPER_ITI.get(name)
        ptxt = f"{paper[0]:.1f} -> {paper[1]:.1f}" if paper else ""
        print(f"{name:10} {m['depth_before']:5.1f} -> {m['depth_after']:4.1f} "
              f"{m['size_before']:6.1f} -> {m['size_after']:5.1f} "
              f"{m['acc_before']:.3f} -> {m['acc_after']:.3f} {str(kept):>5} "
              f"{m['seconds']:6.1f} {m['cpu_seconds']:5.1f}  {ptxt}")
    if table:
        d0 = np.mean([m["depth_before"] for m in table.values()])
        d1 = np.mean([m["depth_after"] for m in table.values()])
        a0 = np.mean([m["acc_before"] for m in table.values()])
        a1 = np.mean([m["acc_after"] for m in table.values()])
        rel = np.mean([1 - m["depth_after"] / m["depth_before"] for m in table.values()])
        print(f"{'mean':10} {d0:5.1f} -> {d1:4.1f} (depth -{100 * (1 - d1 / d0):.1f} %; mean of "
              f"the per-set falls -{100 * rel:.1f} %), test acc {a0:.3f} -> {a1:.3f}")
    return table


def print_gto(rows):
    print(f"{'dataset':10} {'fold':>4} {'train errors':>14} {'decisions':>10} "
          f"{'test acc':>15} {'sec':>6} {'cpu':>5}")
    for r in rows:
        print(f"{r['dataset']:10} {r['fold']:4d} {r['errors_before']:5d} -> {r['errors_after']:5d}"
              f" {r['decisions_before']:3d} -> {r['decisions_after']:3d} "
              f"{r['acc_before']:.3f} -> {r['acc_after']:.3f} {r['seconds']:6.1f} "
              f"{r['cpu_seconds']:5.1f}")
    if rows:
        lower = sum(r["errors_after"] < r["errors_before"] for r in rows)
        higher = sum(r["errors_after"] > r["errors_before"] for r in rows)
        print(f"errors lower on {lower} of {len(rows)} trees, higher on {higher}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", nargs="*", default=list(DISCRETE),
                    help="discrete sets for method='sat' ('none' for none)")
    ap.add_argument("--numeric", nargs="*", default=list(problems.NUMERIC),
                    help="numeric sets for method='sat' ('none' for none)")
    ap.add_argument("--gto-sets", nargs="*", default=list(problems.NUMERIC),
                    help="numeric sets for method='gto' on depth-4 CART ('none' for none)")
    ap.add_argument("--budget", type=float, default=300.0, help="seconds per set (all folds)")
    ap.add_argument("--gto-budget", type=float, default=300.0, help="seconds per set, 'gto'")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--solvers", nargs="*", default=[],
                    help="sets whose fold-0 SAT calls are replayed through each solver "
                         f"{SOLVERS} (with --solver-budget seconds of improve)")
    ap.add_argument("--solver-budget", type=float, default=40.0)
    ap.add_argument("--json", action="store_true", help="also print all rows as JSON")
    ap.add_argument("--verbose", action="store_true", help="print each fold's row as it ends")
    args = ap.parse_args(argv)
    clean = lambda names: [n for n in names if n != "none"]  # noqa: E731
    t0 = time.monotonic()
    out = {}
    for title, names in (("discrete", clean(args.sets)), ("numeric", clean(args.numeric))):
        if not names:
            continue
        rows = [r for name in names
                for r in sat_rows(name, args.budget, args.folds, verbose=args.verbose)]
        print(f"\n== method='sat' on unpruned scikit-learn trees, {title} sets, "
              f"{args.folds}-fold CV, {args.budget:g} s per set ==")
        out[title] = dict(rows=rows, means=print_sat(rows))
    names = clean(args.gto_sets)
    if names:
        rows = [r for name in names for r in gto_rows(name, args.gto_budget, args.folds)]
        print(f"\n== method='gto' on depth-4 CART trees, {args.folds}-fold CV, "
              f"{args.gto_budget:g} s per set ==")
        print_gto(rows)
        out["gto"] = dict(rows=rows)
    if args.solvers:
        print("\n== the same SAT calls through each solver ==")
        out["solvers"] = [r for name in args.solvers for r in solver_rows(name, args.solver_budget)]
    print(f"\ntotal {time.monotonic() - t0:.0f} s")
    if args.json:
        print(json.dumps(out, indent=1))
    return out


if __name__ == "__main__":
    main()
