"""Exact MIP against EPTS on the paper's four data sets.

Three arms per data set and time budget, on one fixed stratified 80 % training
split (``random_state=0``) and the paper's three-decision tree ((0, 1), (0, 1)):

- ``mip``: ``gto.mip.solve`` alone;
- ``mip+epts``: ``gto.mip.solve`` warm-started from the EPTS tree of the same
  budget (the MIP gets the full budget on top of EPTS's time);
- ``epts``: ``gto.optimize(..., objective="product", method="tabu")``, with
  restarts (the greedy LP start, then random ones) until the budget is spent.

Each row records training errors, the proven bound and gap (MIP arms), and
the time to the best solution.  Writes ``results.csv`` and ``results.md`` to
``--out`` and prints the markdown table.

    python -m experiments.compare_mip --budgets 10 60 300
    python -m experiments.compare_mip --quick
"""
from __future__ import annotations

import argparse
import os
import time

from sklearn.model_selection import train_test_split

import gto
import gto.mip
import problems
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


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", type=float, nargs="+", default=[10, 60, 300])
    parser.add_argument("--datasets", nargs="+", default=["heart", "cancer", "diabetes", "liver"],
                        choices=sorted(problems.DATASETS))
    parser.add_argument("--max-iter", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="budgets of 2 and 5 s")
    parser.add_argument("--out", default="results/compare_mip")
    args = parser.parse_args(argv)
    budgets = [2.0, 5.0] if args.quick else args.budgets
    print(run(args.datasets, budgets, args.max_iter, args.out))


if __name__ == "__main__":
    main()
