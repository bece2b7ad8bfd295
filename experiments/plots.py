"""The experiments' pictures (needs matplotlib).

- ``figure1.png``: the paper's Figure 1 idea: on one 2-D generated data set,
  the GTO three-decision tree (EPTS, product error, best of the greedy start
  and three random ones) against unpruned CART;
- ``history.png``: objective and error count against iteration for EPTS and
  FW on the heart data;
- ``table1.png``: bar chart of ``table1.csv`` (run ``experiments.table1`` first).

    python -m experiments.plots --out results
"""
from __future__ import annotations

import argparse
import os

from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto import plots

from .common import STRUCTURE, read_csv, summarize

PICTURES = ("figure1", "history", "table1")


def figure1(out, max_iter=10_000, seed=0, restarts=4):
    """GTO's three decisions (EPTS, best of ``restarts``) against unpruned CART, 2-D data."""
    data = problems.synthetic(2, n_train=300, n_test=0, random_state=seed)
    X, y = data.X_train, data.y_train
    tree = gto.Tree.from_structure(STRUCTURE, 2)
    res = gto.optimize(tree, X, y, method="tabu", max_iter=max_iter, restarts=restarts,
                       random_state=seed)
    cart = DecisionTreeClassifier(random_state=seed).fit(X, y)
    titles = [f"GTO (EPTS, {restarts} starts), 3 decisions",
              f"CART unpruned, {cart.tree_.node_count // 2} decisions"]
    return plots.decision_regions([res.tree, cart], X, y, os.path.join(out, "figure1.png"),
                                  titles=titles)


def history(out, max_iter=10_000, seed=0, dataset="heart"):
    """EPTS and FW runs from the greedy start: objective and errors per iteration."""
    X, y = problems.load(dataset)
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    runs = [gto.optimize(tree, X, y, method=m, init="greedy", max_iter=max_iter,
                         random_state=seed) for m in ("tabu", "frank-wolfe")]
    return plots.convergence(runs, os.path.join(out, "history.png"),
                             labels=[f"EPTS ({dataset})", f"FW ({dataset})"])


def table1(out, csv_path=None):
    """Bar chart of the Table 1 CSV (train and test error per data set and arm)."""
    rows = read_csv(csv_path or os.path.join(out, "table1.csv"))
    groups = list(dict.fromkeys(r["dataset"] for r in rows))
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    return plots.error_bars(summarize(rows), os.path.join(out, "table1.png"), groups, arms,
                            title="Table 1: mean error % (± std) over folds / repeats")


def main(argv=None):
    p = argparse.ArgumentParser(prog="gto experiment plots", description=__doc__.splitlines()[0])
    p.add_argument("pictures", nargs="*", metavar="PICTURE",
                   help=f"any of {', '.join(PICTURES)} (default all)")
    p.add_argument("--out", default="results")
    p.add_argument("--table1-csv", help="Table 1 CSV (default OUT/table1.csv)")
    p.add_argument("--max-iter", type=int, default=10_000)
    p.add_argument("-q", "--quiet", action="store_true", help="accepted for the gto command")
    args = p.parse_args(argv)
    unknown = set(args.pictures) - set(PICTURES)
    if unknown:
        p.error(f"unknown picture(s) {', '.join(sorted(unknown))}; choose from {PICTURES}")
    os.makedirs(args.out, exist_ok=True)
    for name in args.pictures or PICTURES:
        if name == "table1":
            path = table1(args.out, args.table1_csv)
        else:
            path = {"figure1": figure1, "history": history}[name](args.out, args.max_iter)
        print(path)


if __name__ == "__main__":
    main()
