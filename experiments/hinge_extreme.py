"""The greedy start's robust LP (gto.engine._hinge_lp) against HiGHS at extreme scales.

Two families of random cases (``--cases`` each), the root LP of ``(0, 1)`` built
as :mod:`gto.engine._starts` builds it, from a random start vertex (:func:`gto.engine._crossover.purify`):

* ``duplicates``: exact duplicates with conflicting labels among points of
  magnitude 1e-3 .. 1e7 (the family of the issue's failure);
* ``slivers``: points 1e-4 .. 1e-9 apart with conflicting labels, a fifth of them
  1e4 .. 1e8 out (beyond what the LP can resolve in double precision).

HiGHS is run as dual simplex without presolve and with feasibility
tolerances of 1e-10 (its defaults stop far from the optimum on these
scales); both objectives are evaluated at the returned ``theta``.  Prints JSON
and a table: per family the cases, failures (exceptions), cases within 1e-6
(relative) of HiGHS, cases better than HiGHS by more, cases worse.

Run: ``python -m experiments.hinge_extreme [--cases 300]``.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.optimize import linprog

import gto
from gto.engine._block import SingularBlockError
from gto.engine._crossover import purify
from gto.engine._hinge_lp import solve_hinge_lp
from gto.engine._problem import TreeProblem

from .common import markdown_table

RTOL = 1e-6


def duplicates(rng):
    d, n = int(rng.integers(1, 4)), int(rng.integers(4, 30))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 8, size=(n, 1))
    X[1:1 + int(rng.integers(1, 4))] = X[0]
    return X


def slivers(rng):
    d, n = int(rng.integers(1, 4)), int(rng.integers(4, 30))
    base = rng.normal(size=d)
    X = base + rng.normal(size=(n, d)) * 10.0 ** -rng.integers(4, 10, size=(n, 1))
    far = rng.random(n) < 0.2
    X[far] = rng.normal(size=(far.sum(), d)) * 10.0 ** rng.integers(4, 9)
    X[:2] = base
    return X


def highs(rows, cost):
    T, m = rows.shape
    res = linprog(np.concatenate([np.zeros(m), cost]), A_ub=np.hstack([-rows, -np.eye(T)]),
                  b_ub=-np.ones(T), bounds=[(None, None)] * m + [(0, None)] * T,
                  method="highs-ds", options=dict(presolve=False, dual_feasibility_tolerance=1e-10,
                                                  primal_feasibility_tolerance=1e-10))
    return None if res.x is None else float(cost @ np.maximum(0, 1 - rows @ res.x[:m]))


def one_case(make, seed):
    """``(ours, highs)`` objective values, or a string naming the exception raised."""
    rng = np.random.default_rng(seed)
    X = make(rng)
    y = rng.integers(0, 2, len(X))
    y[0], y[1] = 0, 1
    P = TreeProblem(gto.Tree.from_structure((0, 1), X.shape[1]), X, y)
    go_left = P.data.y == P.data.y[0]
    rows = np.where(go_left, -1.0, 1.0)[:, None] * P.data.X1
    cost = P.data.weight / np.where(go_left, P.data.weight[go_left].sum(), P.data.weight[~go_left].sum())
    try:
        block = purify(rows, rng.normal(size=P.data.m), cost, rng)
    except SingularBlockError:
        return None  # too few points to pin a vertex: the start keeps its mean split
    try:
        solve_hinge_lp(block, cost)
    except Exception as exc:  # noqa: BLE001 (counted and reported)
        return f"{type(exc).__name__}: {exc}"
    return float(cost @ np.maximum(0, 1 - rows @ block.theta)), highs(rows, cost)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be at least 1")
    report = {}
    for name, make in (("duplicates", duplicates), ("slivers", slivers)):
        row = dict(cases=0, errors=0, same=0, better=0, worse=0, worst_rel_gap=0.0, examples=[])
        for seed in range(args.cases):
            out = one_case(make, seed)
            if out is None or (isinstance(out, tuple) and out[1] is None):
                continue
            row["cases"] += 1
            if isinstance(out, str):
                row["errors"] += 1
                row["examples"].append((seed, out))
                continue
            ours, ref = out
            gap = (ours - ref) / max(1.0, abs(ref))
            key = "same" if abs(gap) <= RTOL else ("better" if gap < 0 else "worse")
            row[key] += 1
            row["worst_rel_gap"] = max(row["worst_rel_gap"], gap)
            if key == "worse":
                row["examples"].append((seed, ours, ref))
        report[name] = row
    print(json.dumps(report, indent=1))
    keys = ("cases", "errors", "same", "better", "worse")
    rows = [[name, *(r[k] for k in keys), f"{r['worst_rel_gap']:.2g}"]
            for name, r in report.items()]
    print("\n" + markdown_table(["family", "cases", "errors", "same as HiGHS", "better", "worse",
                                 "worst gap"], rows))
    return report


if __name__ == "__main__":
    main()
