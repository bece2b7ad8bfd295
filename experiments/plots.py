"""The experiments' pictures (needs matplotlib).

- ``figure1.png``: the paper's Figure 1 idea: on one 2-D generated data set,
  the GTO three-decision tree (EPTS, product error, best of the greedy start
  and three random ones) against unpruned CART;
- ``history.png``: objective and error count against iteration for EPTS and
  FW on the heart data, every restart and the best so far (FW on log-scaled
  iterations);
- ``table1.png``: bar chart of ``table1.csv`` beside the paper's figures
  (run ``experiments.table1`` first).

    python -m experiments.plots --out results
"""
from __future__ import annotations

import argparse
import os

from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto import plots

from .common import STRUCTURE, read_csv, tidy

PICTURES = ("figure1", "history", "table1")


def _save(fig, path):
    fig.savefig(path)
    return path


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
    fig = plots.compare_regions([res.tree, cart], X, y, titles=titles, figsize=(11, 4.8))
    return _save(fig, os.path.join(out, "figure1.png"))


def history(out, max_iter=10_000, seed=0, dataset="heart", restarts=3):
    """EPTS and FW, ``restarts`` starts each (greedy, then random): every restart and the best."""
    X, y = problems.load(dataset)
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    runs = [gto.optimize(tree, X, y, method=m, init="greedy", max_iter=max_iter,
                         restarts=restarts, random_state=seed) for m in ("tabu", "frank-wolfe")]
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 8))
    axes = fig.subplots(2, 2)
    for ax, run, label in zip(axes, runs, ("EPTS", "FW")):
        plots.convergence([run], ax=ax, labels=[f"{label} ({dataset})"])
    fig.tight_layout()
    return _save(fig, os.path.join(out, "history.png"))


def table1(out, csv_path=None):
    """Bars of the Table 1 CSV (train and test error per data set and arm), the paper's hatched."""
    from .table1 import PAPER

    rows = read_csv(csv_path or os.path.join(out, "table1.csv"))
    fig = plots.error_bars(tidy(rows, PAPER),
                           title="Table 1: mean error % (± std over folds / repeats); "
                                 "hatched: Bennett & Blue (1996)")
    return _save(fig, os.path.join(out, "table1.png"))


def main(argv=None):
    p = argparse.ArgumentParser(prog="gto experiment plots", description=__doc__.splitlines()[0])
    p.add_argument("pictures", nargs="*", metavar="PICTURE",
                   help=f"any of {', '.join(PICTURES)} (default all)")
    p.add_argument("--out", default="results", help="folder for the pictures (default: %(default)s)")
    p.add_argument("--table1-csv", help="Table 1 CSV (default OUT/table1.csv)")
    p.add_argument("--max-iter", type=int, default=10_000,
                   help="iterations per search of figure1 and history (default: %(default)s)")
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
