"""Benchmark of gto.optimize on diabetes (or ``--data``) with the paper's three-decision tree.

Prints, as JSON and as a table:

* EPTS iterations per second with the product error on one core (the target
  is 10 000 iterations in at most 0.3 s of CPU), timed after a warm-up so that
  numba's compilation is not counted; and the time for as many iterations
  with the minimum and lexicographic errors;
* the structured walker's speed-up over the standard-form walker
  (:class:`tabu.StandardFormWalker`) on the same tree LP and start vertex;
* 5-fold cross-validated train/test error of EPTS and Frank-Wolfe next to
  scikit-learn's depth-2 tree;
* seconds to target: on the N = 768 planted case of
  ``experiments.search_power`` (seeds 0-2), the wall time until the best tree
  has at most 1.2 x the planted tree's training errors, for the default search,
  the default search with long steps (``options={"long_steps": 8}``) and the
  paper's configuration (``null`` when not reached within the cap).

With ``--alpha`` or ``--max-features`` the speed is also measured on sparse
vertices (coordinate rows, the L1 penalty and the feature budget, docs/DESIGN.md §3b).

Run: ``python -m experiments.bench_gto [--data diabetes] [--iterations 10000] [--folds 5]
[--alpha A] [--max-features K]``.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

import gto
import problems
import tabu
from gto.engine._problem import TreeProblem
from gto.engine._starts import greedy_theta
from gto.engine._walker import walker_from_theta
from gto.model.tree import FIGURE2

FIG2 = FIGURE2


def _start_walker(problem, seed=0, objective="product"):
    rng = np.random.default_rng(seed)
    theta = greedy_theta(problem, rng)
    return walker_from_theta(problem, theta, problem.objective(objective), rng)


def epts_speed(X, y, iterations, repeats=3, objective="product", alpha=0.0, max_features=None):
    """Iterations per second of tabu.search on the structured walker (best of repeats)."""
    tree = gto.Tree.from_structure(FIG2, X.shape[1])
    sparse = alpha > 0 or max_features is not None
    problem = TreeProblem(tree, X, y, coordinate_rows=sparse, alpha=alpha,
                          max_features=max_features)
    # compile every kernel (diversification starts after ~0.1 c = 618 moves) and warm caches
    tabu.search(_start_walker(problem, 0, objective), max_iter=2000, random_state=0)
    times, cpu, nit = [], [], 0
    for r in range(repeats):
        walker = _start_walker(problem, 0, objective)
        t0, c0 = time.perf_counter(), time.process_time()
        res = tabu.search(walker, max_iter=iterations, random_state=r)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        nit = res.nit
    best = min(times)
    return {
        "iterations": nit,
        "seconds_best": best,
        "seconds_median": float(np.median(times)),
        "cpu_seconds_best": min(cpu),
        "cpu_seconds_median": float(np.median(cpu)),
        "iterations_per_second": nit / best,
        "n_points": problem.data.N,
        "n_triples": problem.blocks.T,
        "n_variables": problem.blocks.n_theta + 2 * problem.blocks.R,
    }


def walker_speedup(X, y, iterations):
    """Seconds per EPTS iteration: standard-form walker / structured walker, same start."""
    tree = gto.Tree.from_structure(FIG2, X.shape[1])
    problem = TreeProblem(tree, X, y)
    structured = _start_walker(problem)
    objective = problem.objective("product")
    A = _standard_form_matrix(problem)

    def fun(x):
        Theta = x[: problem.blocks.n_theta].reshape(problem.layout.D, problem.data.m)
        return objective(problem.leaf_errors(problem.data.X1 @ Theta.T))

    free = np.zeros(A.shape[1], dtype=bool)
    free[: problem.blocks.n_theta] = True
    t0 = time.perf_counter()
    standard = tabu.StandardFormWalker.from_standard_form(
        fun, A, np.ones(problem.blocks.T), free, basis=structured.basis()
    )
    setup = time.perf_counter() - t0
    timings = {}
    for name, walker in (("structured", structured), ("standard_form", standard)):
        t0 = time.perf_counter()
        res = tabu.search(walker, max_iter=iterations, random_state=0)
        timings[name] = (time.perf_counter() - t0) / max(res.nit, 1)
    return {
        "iterations": iterations,
        "structured_seconds_per_iteration": timings["structured"],
        "standard_form_seconds_per_iteration": timings["standard_form"],
        "standard_form_setup_seconds": setup,
        "speedup": timings["standard_form"] / timings["structured"],
    }


def _standard_form_matrix(problem):
    import scipy.sparse as sp

    T, m = problem.blocks.T, problem.data.m
    rows, cols, vals = [], [], []
    for d in range(problem.layout.D):
        t = problem.blocks.start[d] + np.arange(len(problem.blocks.rows[d]))
        rows.append(np.repeat(t, m))
        cols.append(np.tile(d * m + np.arange(m), len(t)))
        vals.append(problem.blocks.rows[d].ravel())
    rows += [np.arange(T), np.arange(T)]
    cols += [problem.blocks.n_theta + np.arange(T), problem.blocks.n_theta + T + np.arange(T)]
    vals += [np.ones(T), -np.ones(T)]
    return sp.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
        shape=(T, problem.blocks.n_theta + 2 * T),
    )


def cross_validation(X, y, folds, iterations):
    """Mean train/test error (%) of EPTS, FW and CART depth 2 over stratified folds."""
    arms = {"EPTS": [], "FW": [], "CART depth 2": []}
    for k, (tr, te) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=0).split(X, y)):
        tree = gto.Tree.from_structure(FIG2, X.shape[1])
        for name, method in (("EPTS", "tabu"), ("FW", "frank-wolfe")):
            res = gto.optimize(tree, X[tr], y[tr], method=method, max_iter=iterations,
                               init="greedy", random_state=k)
            arms[name].append(_errors(res.tree.predict, X, y, tr, te))
        cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[tr], y[tr])
        arms["CART depth 2"].append(_errors(cart.predict, X, y, tr, te))
    return {
        name: {"train_error_%": float(np.mean([e[0] for e in v])),
               "test_error_%": float(np.mean([e[1] for e in v])),
               "test_error_std_%": float(np.std([e[1] for e in v]))}
        for name, v in arms.items()
    }


def seconds_to_target(seeds=3, n=768, factor=1.2, cap=30.0):
    """Seconds until the best tree reaches ``factor`` x the planted error (after warm-up)."""
    from .search_power import STRUCTURE, planted

    out = {}
    for name, options in (("default", None), ("long steps", {"long_steps": 8}),
                          ("paper", {"paper": True})):
        times = []
        for seed in range(seeds):
            X, y, tree = planted(n, seed)
            target = factor * tree.n_errors(X, y)
            start = gto.Tree.from_structure(STRUCTURE, X.shape[1])
            t0 = time.perf_counter()

            def reached(iteration, walker, value, target=target):
                return walker.best_count[0] <= target

            res = gto.optimize(start, X, y, init="greedy", max_iter=10**7, time_limit=cap,
                               random_state=seed, callback=reached, options=options)
            ok = res.tree.n_errors(X, y) <= target
            times.append(time.perf_counter() - t0 if ok else None)
        out[name] = times
    return out


def _errors(predict, X, y, tr, te):
    return (100 * np.mean(predict(X[tr]) != y[tr]), 100 * np.mean(predict(X[te]) != y[te]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", choices=problems.DATASETS, default="diabetes")
    parser.add_argument("--iterations", type=int, default=10_000)
    parser.add_argument("--speedup-iterations", type=int, default=20)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--target-seeds", type=int, default=3,
                        help="planted N = 768 cases for seconds-to-target")
    parser.add_argument("--target-cap", type=float, default=30.0,
                        help="time limit per seconds-to-target run")
    parser.add_argument("--alpha", type=float, default=0.0)
    parser.add_argument("--max-features", type=int, default=None)
    args = parser.parse_args(argv)
    X, y = problems.load(args.data)
    with threadpool_limits(1):  # one core, as the target says
        speed = epts_speed(X, y, args.iterations)
        others = {name: epts_speed(X, y, args.iterations, 1, name)["seconds_best"]
                  for name in ("minimum", "lexicographic")}
        speedup = walker_speedup(X, y, args.speedup_iterations)
        to_target = seconds_to_target(args.target_seeds, cap=args.target_cap)
        sparse = None
        if args.alpha > 0 or args.max_features is not None:
            sparse = epts_speed(X, y, args.iterations, alpha=args.alpha,
                                max_features=args.max_features)
    cv = cross_validation(X, y, args.folds, args.iterations)
    report = {"data": args.data, "tree": str(FIGURE2), "objective": "product",
              "epts": speed, "epts_seconds_other_objectives": others,
              "walker_speedup": speedup, "seconds_to_target": to_target,
              "cross_validation": cv}
    print(json.dumps(report, indent=1))
    print()
    print(f"EPTS: {speed['iterations']} iterations in {speed['seconds_best']:.3f} s "
          f"({speed['iterations_per_second']:.0f} it/s, one core; CPU {speed['cpu_seconds_best']:.3f} s "
          f"best, {speed['cpu_seconds_median']:.3f} s median of 3); "
          + ", ".join(f"{name} error {t:.3f} s" for name, t in others.items()))
    if sparse is not None:
        print(f"sparse vertices (alpha={args.alpha}, max_features={args.max_features}): "
              f"{sparse['iterations']} iterations in {sparse['seconds_best']:.3f} s")
    print(f"structured walker {speedup['structured_seconds_per_iteration'] * 1e3:.3f} ms/it, "
          f"standard form {speedup['standard_form_seconds_per_iteration'] * 1e3:.1f} ms/it: "
          f"{speedup['speedup']:.0f}x")
    for name, times in to_target.items():
        shown = ", ".join("not reached" if t is None else f"{t:.2f} s" for t in times)
        print(f"seconds to 1.2 x planted error (N = 768), {name}: {shown}")
    print()
    print("| method | train error % | test error % |")
    print("| --- | --- | --- |")
    for name, v in cv.items():
        print(f"| {name} | {v['train_error_%']:.1f} | {v['test_error_%']:.1f} ± "
              f"{v['test_error_std_%']:.1f} |")
    return report


if __name__ == "__main__":
    main()
