"""Held-out error of the default ``GTOClassifier`` as its seed moves.

The quality protocol (:mod:`experiments.quality`) fits each outer split with
``random_state`` = the split's seed, which sets both the internal CV's shuffle and
the searches.  This script runs the same GTO arm on the same splits with the
seed shifted by each ``--offsets`` value and prints, per data set and offset, the
mean test error % over the splits (JSON), so that a table's figure can be read
against the spread its seed alone causes.  It only uses ``experiments.quality``'s
``splits`` and ``arms`` and ``experiments.common.run_split``, so it also runs
on older checkouts (copy it there, or run it with that checkout first on
``PYTHONPATH``).

    python -m experiments.seed_spread --data spectf --offsets 0 100 200 300 400
"""
from __future__ import annotations

import argparse
import json
import time

import numpy as np

from . import quality
from .common import run_split


def spread(names, offsets, quick=False):
    """``{dataset: {offset: {"test": mean %, "folds": [% per split], "cpu": s per fit}}}``."""
    arm = {"GTO": quality.arms(peer_names=())[0]["GTO"]}
    out = {}
    for split in quality.splits(names, quick):
        for offset in offsets:
            start = time.process_time()
            row, = run_split(split._replace(seed=split.seed + offset), arm, None)
            if row["failed"]:
                raise RuntimeError(f"{split.dataset} split {split.split}: {row['failed']}")
            cell = out.setdefault(split.dataset, {}).setdefault(offset, {"folds": [], "cpu": []})
            cell["folds"].append(round(row["test_error"], 2))
            cell["cpu"].append(time.process_time() - start)
    for cells in out.values():
        for cell in cells.values():
            cell["test"] = round(float(np.mean(cell["folds"])), 2)
            cell["cpu"] = round(float(np.mean(cell["cpu"])), 2)
    return out


def parser():
    p = argparse.ArgumentParser(prog="python -m experiments.seed_spread",
                                description=__doc__.splitlines()[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--data", nargs="+", default=["spectf"], metavar="NAME",
                   help=f"data sets among {', '.join(quality.DATA)}")
    p.add_argument("--offsets", nargs="+", type=int, default=[0, 100, 200, 300, 400],
                   metavar="N", help="added to every split's seed (0: the quality table's)")
    p.add_argument("--quick", action="store_true", help="first fold / draw only")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    unknown = sorted(set(args.data) - set(quality.DATA))
    if unknown:
        raise SystemExit(f"--data: unknown data set(s) {', '.join(unknown)}")
    print(json.dumps(spread(args.data, args.offsets, args.quick), indent=1))


if __name__ == "__main__":
    main()
