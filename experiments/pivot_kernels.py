"""Microseconds per call of the EPTS pivot's kernels, on the bench's walker.

The walker of ``experiments.bench_gto`` (diabetes, the paper's Figure 2 tree,
product error) after ``--moves`` EPTS moves; then, in compiled loops (no
Python dispatch), a pivot of decision 0 and its inverse pivot repeated
(``block_update`` exact and, where the kernel has it, with incremental
slacks), the vertex update of one decision moved back and forth
(``vertex_update``), and the ratio tests of every edge of a block
(``ratio_all``).  Prints JSON: per kernel the best of ``--repeats`` batches,
microseconds a call, CPU time (``time.process_time``).

Run: ``python -m experiments.pivot_kernels [--moves 500] [--calls 2000] [--repeats 7]``.
"""
from __future__ import annotations

import argparse
import inspect
import json
import time

import numpy as np
from numba import njit

import problems
import tabu
from experiments.bench_gto import FIG2, _start_walker
from gto.engine import _kernels as K
from gto.engine._block import PIVOT_RTOL, PIVOT_TOL, ZERO_TOL
from gto.engine._problem import TreeProblem
from gto.model.tree import Tree

INCREMENTAL = "incremental" in inspect.signature(K.block_update.py_func).parameters
NEW_VERTEX = "h" in inspect.signature(K.vertex_update.py_func).parameters
#: kernels that take their scratch from the caller (``work``)
SCRATCH = "work" in inspect.signature(K.block_update.py_func).parameters


def _pivot_loop():
    """A compiled loop of ``n`` pivots for this version's signature: position q takes
    ``leave``, then the freed row back, and so on (``last``: the kernel's last argument
    where it has one, the incremental-slacks flag or the scratch)."""
    if INCREMENTAL or SCRATCH:
        @njit
        def loop(n, b, q, leave, last):
            Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, theta, r, rabs = b
            for k in range(n):
                enter = tight[q]
                K.block_update(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q,
                               leave, 1.0 - 2.0 * (k % 2), theta, r, rabs, len(rhs), 0, ZERO_TOL,
                               PIVOT_TOL, last)
                leave = enter
        return loop

    @njit
    def loop(n, b, q, leave, last):
        Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, theta, r, rabs = b
        for k in range(n):
            enter = tight[q]
            K.block_update(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave,
                           1.0 - 2.0 * (k % 2), theta, r, rabs, len(rhs), 0, ZERO_TOL, PIVOT_TOL)
            leave = enter
    return loop


@njit
def _ratios(n, G, rabs, ybasic, in_block):
    acc = 0.0
    for _ in range(n):
        steps, _rows = K.ratio_all(G, rabs, ybasic, in_block, PIVOT_TOL, PIVOT_RTOL)
        acc += steps[0]
    return acc


def _vertex_loop():
    """A compiled loop of vertex updates for this version's signature."""
    if NEW_VERTEX:
        @njit
        def loop(n, h, c, Zt, ELt, ERt, LE, sides, pl, weight, p, kind, index, ok, wrong, _x, _t):
            for k in range(n):
                K.vertex_update(h, c if k % 2 == 0 else -c, 0, Zt, ELt, ERt, LE, sides, pl,
                                weight, p, True, kind, index, ok, wrong)
        return loop
    if SCRATCH:
        @njit
        def loop(n, h, c, Zt, ELt, ERt, LE, sides, pl, weight, p, kind, index, ok, wrong, X1t,
                 thetas):
            znew, work = np.empty(Zt.shape[1]), np.empty((4, Zt.shape[1]))
            for k in range(n):
                K.vertex_update(X1t, thetas[k % 2], 0, Zt, znew, ELt, ERt, LE, sides, pl, weight,
                                p, True, kind, index, ok, wrong, work)
        return loop

    @njit
    def loop(n, h, c, Zt, ELt, ERt, LE, sides, pl, weight, p, kind, index, ok, wrong, X1t, thetas):
        znew = np.empty(Zt.shape[1])
        for k in range(n):
            K.vertex_update(X1t, thetas[k % 2], 0, Zt, znew, ELt, ERt, LE, sides, pl, weight, p,
                            True, kind, index, ok, wrong)
    return loop


def _best(run, calls, repeats):
    run(2)  # compile
    best = np.inf
    for _ in range(repeats):
        c0 = time.process_time()
        run(calls)
        best = min(best, time.process_time() - c0)
    return best / calls * 1e6


def _block_arrays(b):
    return (b.Binv, b.G, b.H, b._rows_t, b.rhs, b.tight, b.in_block, b.position, b.ybasic,
            b.theta, b.r, b.rabs)


def measure(moves, calls, repeats):
    X, y = problems.load("diabetes")
    problem = TreeProblem(Tree.from_structure(FIG2, X.shape[1]), X, y)
    walker = _start_walker(problem)
    tabu.search(walker, max_iter=moves, random_state=0)
    W, P = walker, problem
    b = W.blocks[0]
    steps, rows = b.ratio_test_all()
    q = int(np.flatnonzero(rows[: b.m] >= 0)[0])
    out = {"moves": moves, "N": P.data.N, "rows_per_block": len(b.rows), "m": b.m,
           "incremental_kernel": INCREMENTAL}
    pivots = _pivot_loop()
    for name, flag in (("block_update exact", False), ("block_update incremental", True)):
        if flag and not INCREMENTAL:
            continue
        arrays = tuple(a.copy() for a in _block_arrays(b))
        last = np.empty((3, max(b.m, len(b.rows), P.data.N))) if SCRATCH else flag
        out[name] = _best(lambda n, a=arrays, x=last: pivots(n, a, q, int(rows[q]), x), calls,
                          repeats)
    out["ratio_all"] = _best(lambda n: _ratios(n, b.G, b.rabs, b.ybasic, b.in_block), calls,
                             repeats)
    loop = _vertex_loop()
    h = W._H[0, q].copy()
    c = float(steps[q])
    thetas = np.array([b.theta, b.theta + c * b.Binv[:, q]])
    L = P.layout
    state = (W.Zt.copy(), W.ELt.copy(), W.ERt.copy(), W.LE.copy())
    out["vertex_update"] = _best(
        lambda n: loop(n, h, c, *state, L.sides, L.point_leaves, P.data.weight, P.p,
                       L.child_kind, L.child_index, L.mask, W._wrong.copy(), W._X1t, thetas),
        calls, repeats)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=500)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)
    out = measure(args.moves, args.calls, args.repeats)
    print(json.dumps({k: round(v, 2) if isinstance(v, float) else v for k, v in out.items()},
                     indent=1))


if __name__ == "__main__":
    main()
