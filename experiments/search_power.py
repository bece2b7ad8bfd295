"""Search power of ``gto.optimize`` on planted trees.

Data: the paper's planted three-decision tree (Figure 2 structure
``((0, 1), (0, 1))``, ``problems.synthetic``), d = 8 features, points uniform
in the unit cube, 5 % of the labels flipped, so the planted tree's training
error is about 5 % and the optimum is at most that.  For each N and seed,
``gto.optimize`` runs from the greedy LP start (``init="greedy"``) and from a
depth-2 CART tree's splits on the Figure 2 shape (``--starts cart-own``: the
scikit-learn tree as it stands, with its own leaf classes; see
:func:`start_tree`); the table gives the training error divided by the
planted tree's, seconds and moves.

Ground truth on small cases: the exact MIP optimum (``gto.mip.solve``) of the
same structure at N <= 60, against ``gto.optimize``'s default result.

    python -m experiments.search_power                       # full run
    python -m experiments.search_power --sizes 768 --seeds 3 --mip-seeds 0
    python -m experiments.search_power --depth 3 4 --sizes 2000 --starts greedy cart-own --mip-seeds 0

Depth 3 and 4 (``--depth``): the complete tree of that depth, leaves
alternating 0, 1, with every decision splitting the points that reach it
(:func:`planted_deep`); "cart-own" is then scikit-learn's CART tree of that depth.

Prints one JSON line per run, then markdown tables.
"""
from __future__ import annotations

import argparse
import itertools
import json
import time

import numpy as np
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

import gto
import gto.slim
import problems
from gto.engine._problem import TreeProblem
from gto.engine._starts import cart_tree

STRUCTURE = ((0, 1), (0, 1))
SIZES = (768, 7_680, 76_800)
N_FEATURES = 8
NOISE = 0.05


def planted(n, seed, n_features=N_FEATURES, noise=NOISE):
    """``(X, y, planted_tree)``: ``problems.synthetic`` data with ``noise`` of the labels flipped."""
    data = problems.synthetic(n_features, n_train=n, n_test=0, random_state=seed)
    rng = np.random.default_rng([seed, 1])
    y = data.y_train.copy()
    flip = rng.choice(n, size=int(round(noise * n)), replace=False)
    y[flip] = 1 - y[flip]
    return data.X_train, y, data.tree


def planted_deep(n, seed, depth, n_features=N_FEATURES, noise=NOISE):
    """``(X, y, planted_tree)`` for ``depth`` >= 3: the complete tree of ``depth`` whose
    leaves alternate 0, 1 (``gto.Tree.complete``), points uniform in the unit cube.

    Top-down, each decision's normal is uniform in [-1, 1]^d and its threshold a
    quantile, uniform in [0.3, 0.7], of the normal's values over the points
    reaching it, so that every one of the 2^depth - 1 decisions splits its share
    of the points (random thresholds as in ``problems.synthetic`` leave most deep
    decisions without points).  Then ``noise`` of the labels are flipped.
    """
    rng = np.random.default_rng([seed, depth])
    X = rng.uniform(0, 1, (n, n_features))
    tree = gto.Tree.complete(depth, [0, 1], n_features)
    W, gamma = np.zeros((tree.n_decisions, n_features)), np.zeros(tree.n_decisions)
    reach = {0: np.arange(n)}
    for d in range(tree.n_decisions):  # preorder: parents first
        points = reach[d]
        W[d] = rng.uniform(-1, 1, n_features)
        z = X[points] @ W[d]
        gamma[d] = np.quantile(z, rng.uniform(0.3, 0.7)) if len(z) else 0.0
        for (kind, child), side in zip(tree.children[d], (z <= gamma[d], z > gamma[d])):
            if kind == "d":
                reach[child] = points[side]
    tree.W, tree.gamma = W, gamma
    y = tree.predict(X).astype(int)
    flip = rng.choice(n, size=int(round(noise * n)), replace=False)
    y[flip] = 1 - y[flip]
    return X, y, tree


def planted_data(n, seed, depth=2):
    """The planted case of ``depth``: the paper's Figure 2 tree (:func:`planted`) at
    depth 2, :func:`planted_deep` deeper."""
    return planted(n, seed) if depth == 2 else planted_deep(n, seed, depth)


def start_tree(kind, X, y, seed, depth=2):
    """The tree handed to ``gto.optimize`` and its ``init``.

    "greedy": the Figure 2 shape, greedy LP start; "cart": a depth-2 CART
    tree's splits placed on the Figure 2 shape (:func:`gto.engine._starts.cart_tree`),
    given as the tree; "cart-own": the fitted scikit-learn tree as it stands,
    with CART's own leaf classes (a different structure, whose optimum may be
    far above the planted tree's error, so its ratio measures the structure
    as much as the search).
    """
    shape = gto.Tree.complete(depth, [0, 1], X.shape[1])  # Figure 2 at depth 2
    if kind == "greedy":
        return shape, "greedy"
    if kind == "cart-own":
        cart = DecisionTreeClassifier(max_depth=depth, random_state=seed).fit(X, y)
        if len(set(gto.Tree.from_sklearn(cart).leaf_classes.tolist())) > 1:
            return cart, "auto"
    return cart_tree(TreeProblem(shape, X, y), seed), "tree"


def run_one(n, seed, kind, time_limit=None, options=None, max_iter=None, depth=2,
            windows=False):
    """One search; a JSON-ready row.  ``windows``: then the depth-2 window rounds of
    ``gto.slim.improve(method="gto", max_depth_local=2, shrink=False)`` (each window
    re-optimised with the rest of the tree fixed, shape kept), reported as
    ``windows_errors`` / ``windows_ratio`` / ``windows_cpu_seconds``."""
    X, y, tree = planted_data(n, seed, depth)
    planted_errors = int(tree.n_errors(X, y))
    start, init = start_tree(kind, X, y, seed, depth)
    kwargs = {} if max_iter is None else {"max_iter": max_iter}
    t0, c0 = time.perf_counter(), time.process_time()
    res = gto.optimize(start, X, y, init=init, random_state=seed, time_limit=time_limit,
                       options=options, **kwargs)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    errors = int(res.tree.n_errors(X, y))  # literal tree walk
    extra = {}
    if windows:
        c1 = time.process_time()
        better = gto.slim.improve(res.tree, X, y, method="gto", max_depth_local=2, shrink=False,
                                  time_limit=None, random_state=seed, quiet=True)
        w_errors = int(better.tree.n_errors(X, y))
        extra = {"windows_errors": w_errors, "windows_ratio": w_errors / max(planted_errors, 1),
                 "windows_cpu_seconds": time.process_time() - c1}
    return {**extra, "depth": depth, "n": n, "seed": seed, "start": kind,
            "planted_errors": planted_errors,
            "start_errors": int(res.start_n_errors), "errors": errors,
            "ratio": errors / max(planted_errors, 1), "seconds": seconds, "cpu_seconds": cpu,
            "nit": int(res.nit),
            "time_limit": time_limit}


def run_mip(n, seed, mip_time, options=None, n_features=2):
    """Small case: ``gto.optimize`` default result against the MIP optimum."""
    X, y, _ = planted(n, seed, n_features)
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    t0 = time.perf_counter()
    res = gto.optimize(tree, X, y, random_state=seed, options=options)
    seconds = time.perf_counter() - t0
    errors = int(res.tree.n_errors(X, y))
    mip = gto.mip.solve(tree, X, y, time_limit=mip_time, warm_start=res.tree)
    optimal = mip.bound is not None and np.ceil(mip.bound - 1e-6) >= mip.n_errors  # proven
    return {"n": n, "d": X.shape[1], "seed": seed, "errors": errors, "mip_errors": int(mip.n_errors),
            "mip_bound": float(mip.bound), "mip_optimal": bool(optimal),
            "equal": errors == int(mip.n_errors) and bool(optimal), "seconds": seconds}


def summary(rows):
    """Markdown: per N and start, worst and mean ratio, seconds, moves."""
    lines = ["| depth | N | start | ratio per seed | worst ratio | seconds (max) "
             "| CPU seconds (max) | moves (mean) |", "|---|---|---|---|---|---|---|---|"]
    keys = sorted({(r["depth"], r["n"], r["start"]) for r in rows})
    for depth, n, kind in keys:
        sel = [r for r in rows if (r["depth"], r["n"], r["start"]) == (depth, n, kind)]
        ratios = " ".join(f"{r['ratio']:.2f}" for r in sel)
        lines.append(f"| {depth} | {n} | {kind} | {ratios} | {max(r['ratio'] for r in sel):.2f} | "
                     f"{max(r['seconds'] for r in sel):.2f} | "
                     f"{max(r['cpu_seconds'] for r in sel):.2f} | "
                     f"{np.mean([r['nit'] for r in sel]):.0f} |")
    return "\n".join(lines)


def mip_summary(rows):
    eq = sum(r["equal"] for r in rows)
    lines = ["| N | seed | gto errors | MIP errors | MIP optimal | equal |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['n']} | {r['seed']} | {r['errors']} | {r['mip_errors']} | "
              f"{r['mip_optimal']} | {r['equal']} |" for r in rows]
    lines.append(f"\nequal to the MIP optimum: {eq} of {len(rows)}")
    return "\n".join(lines)


def parser():
    p = argparse.ArgumentParser(prog="python -m experiments.search_power",
                                description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--starts", nargs="*", default=["greedy", "cart"])
    p.add_argument("--depth", type=int, nargs="+", default=[2],
                   help="depths of the planted trees (2: the paper's Figure 2 tree; 3, 4: "
                        "planted_deep)")
    p.add_argument("--windows", action="store_true",
                   help="also run gto.slim.improve's depth-2 window rounds (shape kept) after "
                        "each search and report their ratio")
    p.add_argument("--time-limit", type=float, default=None,
                   help="time_limit for N > 768 (default: 60 s at N >= 76 800, none below)")
    p.add_argument("--max-iter", type=int, default=None, help="max_iter (default: optimize's)")
    p.add_argument("--mip-n", type=int, default=60, help="N of the MIP ground-truth cases")
    p.add_argument("--mip-features", type=int, default=2,
                   help="features of the MIP cases (with 8, 60 points are separable)")
    p.add_argument("--mip-seeds", type=int, default=10)
    p.add_argument("--mip-time", type=float, default=60.0)
    p.add_argument("--paper", action="store_true",
                   help="run the paper's Algorithm 5.2 configuration (options={'paper': True})")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    options = {"paper": True} if args.paper else None
    rows, mips = [], []
    with threadpool_limits(1):  # one core
        if args.sizes:  # compile numba's kernels first, so that no row pays for it
            X, y, _ = planted(300, 0)
            gto.optimize(gto.Tree.from_structure(STRUCTURE, X.shape[1]), X, y, max_iter=1200,
                         random_state=0, options=options)
        for depth, n in itertools.product(args.depth, args.sizes):
            limit = args.time_limit if args.time_limit is not None else (
                60.0 if n >= 76_800 else None)
            limit = None if n <= 768 else limit
            for seed in range(args.seeds):
                for kind in args.starts:
                    rows.append(run_one(n, seed, kind, limit, options, args.max_iter, depth,
                                        args.windows))
                    print(json.dumps(rows[-1]), flush=True)
        for seed in range(args.mip_seeds):
            mips.append(run_mip(args.mip_n, seed, args.mip_time, options, args.mip_features))
            print(json.dumps(mips[-1]), flush=True)
    if rows:
        print("\nTraining error / planted tree's error (d = 8, 5 % label noise)\n")
        print(summary(rows))
        if args.windows:
            print("\nAfter the depth-2 window rounds (gto.slim.improve, shape kept)\n")
            print(summary([{**r, "ratio": r["windows_ratio"],
                            "cpu_seconds": r["cpu_seconds"] + r["windows_cpu_seconds"]}
                           for r in rows]))
    if mips:
        print(f"\nSmall planted cases (N = {args.mip_n}, d = {args.mip_features}): "
              "gto.optimize vs exact MIP\n")
        print(mip_summary(mips))


if __name__ == "__main__":
    main()
