"""Pivots per second of the revised simplex (Phase 2) at 500 and 2000 constraints.

Each LP is ``max sum(x) s.t. A x <= 1, x >= 0`` with ``A`` uniform on [0, 1]
(dense) or about 1 % dense (sparse), as many variables as constraints.  The
standard form and the starting (slack) basis are built outside the timer;
every timed pivot is a full Phase 2 pivot: pricing (BTRAN + A^T y), FTRAN,
Harris ratio test, eta update, periodic refactorisation and residual check.
Run: ``python experiments/bench_simplex.py [--pivots N] [--blas-threads T]``.
"""
import argparse
import json
import pathlib
import sys
import time

import numpy as np
import scipy.sparse as sp
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from tabu import RevisedSimplex, phase_one, to_standard_form  # noqa: E402


def bench(m, pivots, sparse, seed=0):
    rng = np.random.default_rng(seed)
    if sparse:
        A = sp.random(m, m, density=0.01, random_state=seed, format="csr")
        A = A + sp.csr_matrix((np.ones(m), (rng.integers(m, size=m), np.arange(m))), shape=(m, m))
    else:
        A = rng.uniform(0.0, 1.0, size=(m, m))
    sf = to_standard_form(-np.ones(m), A, np.ones(m))
    _, basis, kept, _ = phase_one(sf.A, sf.b, sf.free, maxiter=10 * m)
    s = RevisedSimplex(sf.A[kept], sf.b[kept], basis, sf.free)
    t = time.perf_counter()
    status = s.optimize(sf.c, pivots)
    dt = time.perf_counter() - t
    return {"constraints": m, "columns": sf.A.shape[1], "sparse": sparse, "pivots": s.nit,
            "seconds": round(dt, 3), "pivots_per_second": round(s.nit / dt, 1),
            "status": int(status), "residual": float(f"{s.residual():.1e}")}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pivots", type=int, default=300)
    ap.add_argument("--blas-threads", type=int, default=1)
    args = ap.parse_args()
    with threadpool_limits(limits=args.blas_threads):
        rows = [bench(m, args.pivots, sparse) for m in (500, 2000) for sparse in (False, True)]
    print(json.dumps({"blas_threads": args.blas_threads, "results": rows}, indent=1))


if __name__ == "__main__":
    main()
