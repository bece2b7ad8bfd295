"""Whether each block's ``G`` holds the signed columns of its ``H``, bit for bit.

A decision's rows are its triples ``s_t [x_i, -1]``, signed copies of points, so
``G = (A M^-1)^T`` has, column for column, the signed columns of ``H = (X M^-1)^T``
(docs/speed.md, round 17).  On the bench's walker (diabetes, the paper's Figure 2
tree, product error) after ``--moves`` moves of the Python loop, ``G`` is compared
with ``H`` at each real row's point, signed (as the problem built the rows).  Prints
JSON per decision: rows, points, whether the rows are those signed points, runs of
consecutive points among the rows, signs, the share of entries equal bit for bit,
the largest relative difference, and the block's rank-one updates.

Run: ``python -m experiments.signed_rows [--data diabetes] [--moves 700]``.
"""
from __future__ import annotations

import argparse
import json

import numpy as np
from threadpoolctl import threadpool_limits

import gto
import problems
import tabu
from experiments.bench_gto import FIG2, _start_walker
from gto.engine._problem import TreeProblem


def compare(walker):
    """The JSON-able comparison of every block's ``G`` with its signed ``H``, each row's
    point and sign as the problem recorded them (:class:`gto.engine._problem.TripleRows`),
    and whether the rows are those signed points."""
    out = []
    rows = walker.problem.blocks
    for d, b in enumerate(walker.blocks):
        T = b.n_real
        point, sign = rows.row_points[d], rows.row_sides[d].astype(float)
        signed = b.H[:, point] * sign
        G = b.G[:, :T]
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(G == signed, 0.0, np.abs(G - signed) / np.abs(G))
        out.append({"rows": int(T), "points": int(walker._X1t.shape[1]),
                    "signed_points": bool(np.array_equal(b._rows_t[:, :T],
                                                         walker._X1t[:, point] * sign)),
                    "runs": int(np.sum(np.diff(point) != 1) + 1),
                    "signs": {"+": int(np.sum(sign > 0)), "-": int(np.sum(sign < 0))},
                    "bit_equal": float(np.mean(G == signed)),
                    "max_rel_diff": float(np.max(rel)), "updates": int(b.updates)})
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.signed_rows",
                                description=__doc__.splitlines()[0])
    p.add_argument("--data", default="diabetes", choices=problems.DATASETS)
    p.add_argument("--moves", type=int, default=700)
    args = p.parse_args(argv)
    if args.moves < 0:
        p.error("--moves must be nonnegative")
    X, y = problems.load(args.data)
    problem = TreeProblem(gto.Tree.from_structure(FIG2, X.shape[1]), X, y)
    with threadpool_limits(1):
        walker = _start_walker(problem, 0, "product")
        tabu.search(walker, max_iter=args.moves, random_state=0, compiled=False)
    print(json.dumps(compare(walker), indent=1))


if __name__ == "__main__":
    main()
