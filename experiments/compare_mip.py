"""Exact depth-2 solvers on the paper's four data sets: EPTS arms and proofs.

Two modes.

``arms``: on one stratified 80 % training split
(``random_state=0``) and the paper's three-decision tree ((0, 1), (0, 1)),
per data set and time budget:

- ``mip``: ``gto.mip.solve`` alone;
- ``mip+epts``: ``gto.mip.solve`` warm-started from the EPTS tree of the same
  budget (the MIP gets the full budget on top of EPTS's time);
- ``epts``: ``gto.optimize(..., objective="product", method="tabu")``, with
  restarts (the greedy LP start, then random ones) until the budget is spent.

Each row records training errors, the proven bound and gap (MIP arms), and
the time to the best solution.  Writes ``results.csv`` and ``results.md`` to
``--out`` and prints the markdown table.

``proofs``: per data set and size (stratified subsamples of 40, 80, 160,
320 points with ``random_state=0``, and ``full``), GTO's default search
(``gto.optimize(tree, X, y, random_state=0)``) and then each exact method
warm-started from its tree, with a CPU-second budget (``--time-limit``;
``branch`` and ``rootsplit`` count process time; HiGHS's MIP counts wall
time).
One row per run: GTO's errors, the exact method's incumbent (in the model's
class, and counted by the strict rule), proven bound, gap in errors, CPU
seconds to the proof or to the limit, and, where proved, GTO's distance to
the optimum.  ``--json`` also stores each run's (seconds, incumbent, bound)
history.

    python -m experiments.compare_mip arms --budgets 10 60 300
    python -m experiments.compare_mip proofs --sizes 40 80 160 --time-limit 300
    python -m experiments.compare_mip proofs --sizes 160 full --methods rootsplit
    python -m experiments.compare_mip proofs --sizes full --datasets liver --json /tmp/p.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

from sklearn.model_selection import train_test_split

import gto
import gto.mip
import problems
from gto.mip.branch import solve_branch
from gto.mip.rootsplit import solve_rootsplit
from gto.model.tree import FIGURE2
from gto.utils._atomic import write_text_atomic

from .common import markdown_table, write_csv

STRUCTURE = FIGURE2
FIELDS = ["dataset", "budget", "arm", "n_errors", "bound", "gap", "status", "time_to_best", "runtime"]


def training_split(name):
    X, y = problems.load(name)
    X_tr, _, y_tr, _ = train_test_split(X, y, train_size=0.8, stratify=y, random_state=0)
    return X_tr, y_tr


def run_epts(tree, X, y, budget, max_iter):
    t0 = time.perf_counter()
    res = gto.optimize(
        tree, X, y, objective="product", method="tabu", max_iter=max_iter,
        time_limit=budget, restarts=max(1, int(budget)), random_state=0,
    )
    runtime = time.perf_counter() - t0
    row = {"n_errors": res.tree.n_errors(X, y), "bound": "", "gap": "", "status": "",
           "time_to_best": round(res.time_to_best, 2), "runtime": round(runtime, 2)}
    return res.tree, row


def mip_row(res):
    return {
        "n_errors": res.n_errors,
        "bound": "" if res.bound is None else round(res.bound, 2),
        "gap": "" if res.gap is None else round(res.gap, 4),
        "status": res.status,
        "time_to_best": "" if res.time_to_best is None else round(res.time_to_best, 2),
        "runtime": round(res.runtime, 2),
    }


def run(datasets, budgets, max_iter, out):
    rows = []
    for name in datasets:
        X, y = training_split(name)
        tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
        for budget in budgets:
            epts_tree, epts = run_epts(tree, X, y, budget, max_iter)
            alone = gto.mip.solve(tree, X, y, time_limit=budget)
            warm = gto.mip.solve(tree, X, y, time_limit=budget, warm_start=epts_tree)
            for arm, row in (("mip", mip_row(alone)), ("mip+epts", mip_row(warm)), ("epts", epts)):
                rows.append({"dataset": name, "budget": budget, "arm": arm, **row})
                print(rows[-1], flush=True)
    write_csv(os.path.join(out, "results.csv"), rows, fields=FIELDS)
    table = markdown_table(FIELDS, [[r[f] for f in FIELDS] for r in rows])
    write_text_atomic(os.path.join(out, "results.md"), table + "\n")
    return table


SIZES = ("40", "80", "160", "320", "full")
PROOF_FIELDS = ["dataset", "points", "features", "gto_errors", "method", "start", "incumbent",
                "n_errors", "bound", "gap_errors", "status", "cpu_seconds", "gto_minus_opt",
                "nodes"]


def subsample(name, size, seed=0):
    """Stratified subsample of ``size`` points (``"full"``: all); None when too few points."""
    X, y = problems.load(name)
    if size == "full":
        return X, y
    if int(size) >= len(y):
        return None
    X_s, _, y_s, _ = train_test_split(X, y, train_size=int(size), stratify=y, random_state=seed)
    return X_s, y_s


def exact(method, tree, X, y, time_limit, start):
    """One exact run warm-started from ``start``; (result, CPU seconds)."""
    t0 = time.process_time()
    if method in ("branch", "rootsplit"):
        run = solve_branch if method == "branch" else solve_rootsplit
        res = run(tree, X, y, time_limit, start, clock=time.process_time)
    else:
        res = gto.mip.solve(tree, X, y, time_limit=time_limit, warm_start=start)
    return res, time.process_time() - t0


def proof_row(name, X, y, method, gto_errors, res, seconds):
    proved = res.status == "optimal"
    return {
        "dataset": name, "points": len(y), "features": X.shape[1], "gto_errors": gto_errors,
        "method": method, "start": res.start_objective, "incumbent": res.objective,
        "n_errors": res.n_errors, "bound": res.bound, "gap_errors": res.objective - res.bound,
        "status": "optimal" if proved else str(res.status), "cpu_seconds": round(seconds, 2),
        "gto_minus_opt": gto_errors - res.objective if proved else "",
        "nodes": res.get("nodes", ""),
        "history": [list(map(float, h)) for h in res.get("history", [])],
    }


def proofs(datasets, sizes, methods, time_limit):
    rows = []
    for name in datasets:
        for size in sizes:
            data = subsample(name, size)
            if data is None:
                continue
            X, y = data
            tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
            start = gto.optimize(tree, X, y, random_state=0).tree
            gto_errors = start.n_errors(X, y)
            for method in methods:
                res, seconds = exact(method, tree, X, y, time_limit, start)
                rows.append(proof_row(name, X, y, method, gto_errors, res, seconds))
                print(json.dumps({k: v for k, v in rows[-1].items() if k != "history"}),
                      file=sys.stderr, flush=True)
    return rows


def _run_arms(args):
    budgets = [2.0, 5.0] if args.quick else args.budgets
    print(run(args.datasets, budgets, args.max_iter, args.out))


def _run_proofs(args):
    rows = proofs(args.datasets, args.sizes, args.methods, args.time_limit)
    if args.json:
        meta = {"time_limit": args.time_limit, "load": os.getloadavg()}
        write_text_atomic(args.json, json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(markdown_table(PROOF_FIELDS, [[r[f] for f in PROOF_FIELDS] for r in rows]))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] not in ("arms", "proofs", "-h", "--help"):
        argv = ["arms"] + argv  # the arms mode's flags alone, as before
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    arms = sub.add_parser("arms", help="MIP, MIP+EPTS and EPTS at equal budgets")
    arms.add_argument("--budgets", type=float, nargs="+", default=[10, 60, 300])
    arms.add_argument("--max-iter", type=int, default=10_000)
    arms.add_argument("--quick", action="store_true", help="budgets of 2 and 5 s")
    arms.add_argument("--out", default="results/compare_mip")
    prf = sub.add_parser("proofs", help="seconds to proof or final gap, beside GTO's errors")
    prf.add_argument("--sizes", nargs="+", default=list(SIZES), choices=SIZES)
    prf.add_argument("--methods", nargs="+", default=["branch"], choices=["branch", "rootsplit", "mip"])
    prf.add_argument("--time-limit", type=float, default=300.0, help="seconds per exact run")
    prf.add_argument("--json", help="also write the rows with their histories here")
    for p in (arms, prf):
        p.add_argument("--datasets", nargs="+", default=["heart", "cancer", "diabetes", "liver"],
                       choices=sorted(problems.DATASETS))
    args = parser.parse_args(argv)
    (_run_arms if args.mode == "arms" else _run_proofs)(args)


if __name__ == "__main__":
    main()
