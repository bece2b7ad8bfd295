"""CPU seconds of the crossover's purification (Theorem 4.1) on wide rows.

Rows as a decision's triples ``s [x_i, -1]``: ``--shapes`` rows x columns, the first
half of the points repeated with random signs (a root decision's rows are the
points twice), x standard normal; a random theta and costs (seed 1).  Each shape is
purified ``--repeats`` times after a small warm-up (numba's compilation not counted);
prints JSON: per shape the best and median CPU seconds (``time.process_time``).

Run: ``python -m experiments.purify_speed [--shapes 1600x801 800x801 2000x101 6000x31]
[--repeats 3]``.
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from gto.engine._crossover import purify


def signed_rows(T, m, seed):
    """``(rows, theta, cost)``: T rows in m columns, the first T // 2 points twice, signed."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(T - T // 2, m - 1))
    signs = np.where(rng.random(T) < 0.5, -1.0, 1.0)
    rows = np.column_stack([np.vstack([X, X])[:T], -np.ones(T)]) * signs[:, None]
    return np.ascontiguousarray(rows), rng.normal(size=m), rng.random(T)


def shape(text):
    T, sep, m = text.partition("x")
    if not sep or not T.isdigit() or not m.isdigit() or int(T) < 1 or int(m) < 2:
        raise argparse.ArgumentTypeError(f"shapes are ROWSxCOLUMNS (columns >= 2), got {text!r}")
    return int(T), int(m)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.purify_speed",
                                description=__doc__.splitlines()[0])
    p.add_argument("--shapes", nargs="+", type=shape,
                   default=[(1600, 801), (800, 801), (2000, 101), (6000, 31)])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)
    if args.repeats < 1:
        p.error("--repeats must be at least 1")
    purify(*signed_rows(60, 5, 0), 0)  # compile
    out = {}
    for T, m in args.shapes:
        rows, theta, cost = signed_rows(T, m, 1)
        seconds = []
        for _ in range(args.repeats):
            t = time.process_time()
            purify(rows, theta, cost, 0)
            seconds.append(time.process_time() - t)
        out[f"{T}x{m}"] = {"best": round(min(seconds), 4),
                           "median": round(float(np.median(seconds)), 4)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
