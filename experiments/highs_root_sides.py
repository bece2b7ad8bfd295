"""A direct highspy MIP for the paper's tree ((0, 1), (0, 1)) with root-side binaries.

The formulation measured against ``gto.mip.solve`` (docs/exact.md), same
hypothesis class (data scaled to [0, 1]; |w|_inf <= 1; left ``<= 0``,
right ``>= epsilon``), built without cvxpy:

- per point a root side ``z_i`` (0 left, 1 right) and an error ``e_i``;
- decision values on data centred at 0.5, where ``|x.w - gamma| <=
  ||x - 0.5||_1 + n / 2 =: M_i - epsilon`` bounds every split that has points
  on both sides, so M_i is the per-point big-M;
- a correct point of class 0 (1) is on its root side and on the left
  (right) of that side's decision; ``e_i = 1`` frees it;
- symmetry: the root can be mirrored (negate it, swap the subtrees), so the
  first point's ``z`` is fixed to 0;
- HiGHS gets GTO's tree (or ``--start`` pickled tree) as a MIP start.

Prints one JSON line: start errors, incumbent, bound, nodes, CPU seconds.

    python -m experiments.highs_root_sides --dataset liver --size 80 --time-limit 60
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

import gto
from gto.mip.fixed import EPSILON, prepare
from gto.mip.warm_start import scaled_start

from .compare_mip import STRUCTURE, subsample


def add_rows(h, Xc, y, M, eps):
    """Root and child big-M rows of every point; columns w (3n), gamma (3), z (N), e (N)."""
    import highspy as hp

    N, n = Xc.shape
    Z, E = 3 * n + 3, 3 * n + 3 + N
    inf = hp.kHighsInf

    def row(d, i, zc, ec, lower, upper):  # (x.w_d - g_d) + zc z_i + ec e_i in [lower, upper]
        idx = np.r_[d * n + np.arange(n), 3 * n + d, Z + i, E + i].astype(np.int32)
        val = np.r_[Xc[i], -1.0, zc, ec]
        h.addRow(lower, upper, len(idx), idx, val)

    for i in range(N):
        m = M[i]
        row(0, i, -m, -m, -inf, 0.0)  # left of the root when z = 0
        row(0, i, -m, m, eps - m, inf)  # right of the root when z = 1
        if y[i] == 0:
            row(1, i, -m, -m, -inf, 0.0)  # z = 0: left of decision 1
            row(2, i, m, -m, -inf, m)  # z = 1: left of decision 2
        else:
            row(1, i, m, m, eps, inf)
            row(2, i, -m, m, eps - m, inf)


def start_values(W, gamma, Xc, y, eps):
    """Column values of a tree given in centred units; mirrored when the first point goes right."""
    V = Xc @ W.T - gamma
    if V[0, 0] > eps / 2:
        W, gamma = W[[0, 2, 1]] * [[-1], [1], [1]], np.r_[-gamma[0] - eps, gamma[2], gamma[1]]
        V = Xc @ W.T - gamma
    right = V[:, 0] > eps / 2
    child = np.where(right, V[:, 2], V[:, 1])
    ok = np.where(y == 0, child <= 1e-9, child >= eps - 1e-9)
    ok &= np.where(right, V[:, 0] >= eps - 1e-9, V[:, 0] <= 1e-9)
    return np.r_[W.ravel(), gamma, right.astype(float), (~ok).astype(float)], int((~ok).sum())


def solve(X, y, start, time_limit, eps=EPSILON):
    import highspy as hp

    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    _, _, _, _, Xs, ym, wm, scaling = prepare(tree, X, y, None, eps)
    N, n = Xs.shape
    Xc = Xs - 0.5
    M = np.abs(Xc).sum(axis=1) + n / 2 + eps
    h = hp.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", 1)
    h.setOptionValue("time_limit", float(time_limit))
    h.setOptionValue("mip_rel_gap", 0.0)
    lower = np.r_[-np.ones(3 * n), np.full(3, -n / 2), np.zeros(2 * N)]
    upper = np.r_[np.ones(3 * n), np.full(3, n / 2), np.ones(2 * N)]
    h.addVars(len(lower), lower, upper)
    h.changeColsCost(N, np.arange(3 * n + 3 + N, len(lower), dtype=np.int32), wm)
    binaries = np.arange(3 * n + 3, len(lower), dtype=np.int32)
    h.changeColsIntegrality(len(binaries), binaries, np.full(len(binaries), hp.HighsVarType.kInteger))
    add_rows(h, Xc, ym, M, eps)
    h.changeColBounds(3 * n + 3, 0.0, 0.0)  # symmetry: the first point's root side
    W, g = scaled_start(start, tree, scaling, Xs, eps)
    values, start_errors = start_values(W, g - 0.5 * W.sum(axis=1), Xc, ym, eps)
    solution = hp.HighsSolution()
    solution.col_value = list(values)
    h.setSolution(solution)
    t0 = time.process_time()
    h.run()
    info = h.getInfo()
    return {"points": N, "start_errors": start_errors, "incumbent": info.objective_function_value,
            "bound": info.mip_dual_bound, "nodes": int(info.mip_node_count),
            "status": h.modelStatusToString(h.getModelStatus()),
            "cpu_seconds": round(time.process_time() - t0, 2)}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="liver")
    parser.add_argument("--size", default="80")
    parser.add_argument("--time-limit", type=float, default=60.0, help="HiGHS's wall seconds")
    args = parser.parse_args(argv)
    X, y = subsample(args.dataset, args.size)
    tree = gto.Tree.from_structure(STRUCTURE, X.shape[1])
    start = gto.optimize(tree, X, y, random_state=0).tree
    out = solve(X, y, start, args.time_limit)
    print(json.dumps({"dataset": args.dataset, "size": args.size, "gto_errors":
                      start.n_errors(X, y), **out}))


if __name__ == "__main__":
    main()
