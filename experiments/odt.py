"""Table 8 of Günlük et al. on the bundled categorical data.

Protocol (paper §5.4): per data set and random split (sampling without
replacement, seeded by the split number), 90 % of the points are the
training pool and the other 10 % the test set; CART of depth 3 trains on the
whole pool, GTO (``one_group=True``) and ODT (``gto.mip.solve_odt``) on the
first min(90 %, 600) points of it.  Depth 2 and 3, complete trees whose
leaves cycle through the classes (multi-class sets: car, nursery; soybean
has more classes than leaves and gets CART only).  The ordered sets
(``problems.ORDINAL``) are ordinal groups in ODT and plain numbers for CART
and GTO, so GTO's thresholds are valid ODT warm starts.  Accuracies in percent, averaged over the
splits, with the paper's depth-matched ODT and CART figures beside ours
(``problems.paper_table("gunluk_odt_table8")``; the paper ran CPLEX on 8
cores for 30 minutes).

    python -m experiments.odt --splits 5 --depths 2 3 --time-limit 300
    python -m experiments.odt --tpr 1.0 0.99 0.98 0.97 0.95      # Table 14 shape, cancer

Rows go to ``--out`` as ``odt.jsonl`` (one JSON object per fit) and the
markdown table is printed.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto.mip import solve_odt
from gto.model._categorical import encode

PAPER_NAMES = {"monk1": "monks-1", "house-votes-84": "votes", "kr-vs-kp": "krkp", "mushroom": "mush"}
BINARY = ("monk1", "house-votes-84", "kr-vs-kp", "mushroom")
MULTI = ("car", "nursery", "soybean")


def split(name, s, cap=600):
    """(X_pool, y_pool, X_train, y_train, X_test, y_test) of split ``s``."""
    X, y = problems.load(name)
    perm = np.random.default_rng(s).permutation(len(y))
    n_pool = math.ceil(0.9 * len(y))
    pool, test = perm[:n_pool], perm[n_pool:]
    train = pool[: min(n_pool, cap)]
    return X[pool], y[pool], X[train], y[train], X[test], y[test]


def accuracy(predict, X, y):
    return 100.0 * float(np.mean(predict(X) == y))


def run_one(name, s, depth, time_limit, gto_iter, warm, ordinal):
    Xp, yp, Xt, yt, Xs, ys = split(name, s)
    classes = np.unique(yt)
    row = {"dataset": name, "split": s, "depth": depth, "n_train": len(yt), "n_test": len(ys)}
    cat = () if ordinal else "all"  # ordinal codes stay numbers for CART and GTO (thresholds)
    enc = encode(Xp, cat)
    cart = DecisionTreeClassifier(max_depth=3, random_state=s).fit(enc.transform(Xp), yp)
    row["cart_train"] = accuracy(lambda X: cart.predict(enc.transform(X)), Xp, yp)
    row["cart_test"] = accuracy(lambda X: cart.predict(enc.transform(X)), Xs, ys)
    if 2**depth < len(classes):
        row["skipped"] = f"{len(classes)} classes > {2**depth} leaves"
        return row
    tree = gto.Tree.complete(depth, classes, Xt.shape[1])
    t0 = time.perf_counter()
    g = gto.optimize(tree, Xt, yt, categorical_features=cat, one_group=True, init="greedy",
                     max_iter=gto_iter, random_state=s)
    row["gto_seconds"] = time.perf_counter() - t0
    row["gto_train"] = accuracy(g.tree.predict, Xt, yt)
    row["gto_test"] = accuracy(g.tree.predict, Xs, ys)
    res = solve_odt(Xt, yt, depth, time_limit=time_limit, ordinal=ordinal,
                    warm_start=g.tree if warm else None)
    row.update(
        odt_train=accuracy(res.tree.predict, Xt, yt), odt_test=accuracy(res.tree.predict, Xs, ys),
        odt_errors=res.n_errors, gap=res.gap, status=res.status, odt_seconds=res.runtime,
        time_to_best=res.time_to_best, warm=warm, start_objective=res.start_objective,
        first_incumbent=res.incumbents[0][1] if res.incumbents else None,
        gto_errors=g.n_errors, tree=res.tree.to_text(),
    )
    return row


def paper_rows():
    out = {}
    for r in problems.paper_table("gunluk_odt_table8"):
        out[(r["data"], int(r["depth"]))] = r
    return out


def summarise(rows):
    paper = paper_rows()
    keys = sorted({(r["dataset"], r["depth"]) for r in rows}, key=lambda k: (k[1], k[0]))
    head = ("| data | depth | splits | CART d3 train (test) | GTO 1-group train (test) | ODT train (test) "
            "| ODT gap max | optimal | ODT s (mean) | paper ODT train (test) | paper CART d3 |")
    lines = [head, "|" + "---|" * 11]
    for name, depth in keys:
        rs = [r for r in rows if r["dataset"] == name and r["depth"] == depth]

        def mean(k, rs=rs):
            v = [r[k] for r in rs if r.get(k) is not None]
            return np.mean(v) if v else float("nan")

        p = paper.get((PAPER_NAMES.get(name, name), depth))
        ptxt = f"{p['train_acc']} ({p['test_acc']})" if p else "-"
        pcart = f"{p['cart_d3_train']} ({p['cart_d3_test']})" if p else "-"
        if all("skipped" in r for r in rs):
            lines.append(f"| {name} | {depth} | {len(rs)} | {mean('cart_train'):.1f} ({mean('cart_test'):.1f}) "
                         f"| {rs[0]['skipped']} | | | | | {ptxt} | {pcart} |")
            continue
        n_opt = sum(r["status"] == "optimal" for r in rs)
        gaps = [r["gap"] for r in rs if r["gap"] is not None]
        lines.append(
            f"| {name} | {depth} | {len(rs)} | {mean('cart_train'):.1f} ({mean('cart_test'):.1f}) "
            f"| {mean('gto_train'):.1f} ({mean('gto_test'):.1f}) | {mean('odt_train'):.1f} ({mean('odt_test'):.1f}) "
            f"| {max(gaps) if gaps else float('nan'):.3f} | {n_opt}/{len(rs)} | {mean('odt_seconds'):.0f} "
            f"| {ptxt} | {pcart} |"
        )
    return "\n".join(lines)


def tpr_curve(levels, depth, time_limit, splits):
    """Table 14 shape: maximise training TNR subject to training TPR >= level (cancer data).

    Levels run from the tightest down; each solve is warm-started from the
    previous level's tree, which meets the looser constraint too, so the
    training TNR can only rise as the TPR bound loosens.
    """
    levels = sorted(levels, reverse=True)
    X, y = problems.load("cancer")
    rows = []
    for s in range(splits):
        perm = np.random.default_rng(s).permutation(len(y))
        n_tr = min(math.ceil(0.9 * len(y)), 600)
        tr, te = perm[:n_tr], perm[n_tr:]
        previous = None
        for level in levels:
            res = solve_odt(X[tr], y[tr], depth, time_limit=time_limit, categorical_features=(),
                            min_tpr=level, warm_start=previous)
            previous = res.tree
            pred = res.tree.predict(X[te])
            pos = y[te] == 1
            rows.append({
                "split": s, "depth": depth, "min_tpr": level, "train_tpr": 100 * res.tpr,
                "train_tnr": 100 * res.tnr, "test_tpr": 100 * float(np.mean(pred[pos] == 1)),
                "test_tnr": 100 * float(np.mean(pred[~pos] == 0)), "status": res.status,
                "gap": res.gap, "seconds": res.runtime,
            })
            print(json.dumps(rows[-1]), flush=True)
    lines = ["| depth | min TPR | train TPR | train TNR | test TPR | test TNR | optimal |",
             "|---|---|---|---|---|---|---|"]
    for level in levels:
        rs = [r for r in rows if r["min_tpr"] == level]
        m = {k: np.mean([r[k] for r in rs]) for k in ("train_tpr", "train_tnr", "test_tpr", "test_tnr")}
        lines.append(f"| {depth} | {100 * level:g} | {m['train_tpr']:.1f} | {m['train_tnr']:.1f} | "
                     f"{m['test_tpr']:.1f} | {m['test_tnr']:.1f} | "
                     f"{sum(r['status'] == 'optimal' for r in rs)}/{len(rs)} |")
    return rows, "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=list(BINARY))
    ap.add_argument("--depths", nargs="+", type=int, default=[2, 3])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--first-split", type=int, default=0)
    ap.add_argument("--time-limit", type=float, default=300.0)
    ap.add_argument("--gto-iter", type=int, default=2000)
    ap.add_argument("--warm", action="store_true", help="warm-start ODT from the GTO one_group tree")
    ap.add_argument("--tpr", nargs="+", type=float, help="min_tpr levels: run the Table 14 curve instead")
    ap.add_argument("--out", default=None, help="directory for odt.jsonl (default: print only)")
    args = ap.parse_args(argv)
    if args.tpr:
        rows, table = [], []
        for depth in args.depths:
            r, t = tpr_curve(args.tpr, depth, args.time_limit, args.splits)
            rows += r
            table.append(t)
        print("\n\n".join(table))
        return rows
    rows = []
    for depth in args.depths:
        for name in args.data:
            for s in range(args.first_split, args.first_split + args.splits):
                row = run_one(name, s, depth, args.time_limit, args.gto_iter, args.warm,
                              "all" if name in problems.ORDINAL else ())
                rows.append(row)
                print(json.dumps({k: v for k, v in row.items() if k != "tree"}), flush=True)
                if args.out:
                    os.makedirs(args.out, exist_ok=True)
                    with open(os.path.join(args.out, "odt.jsonl"), "a") as fh:
                        fh.write(json.dumps(row) + "\n")
    print(summarise(rows))
    return rows


if __name__ == "__main__":
    main()
