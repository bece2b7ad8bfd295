"""The paper's Table 1: FW, EPTS and C4.5 on real and generated data.

Bennett & Blue's second experiment.  The tree is Figure 2's three-decision
tree ((0, 1), (0, 1)); FW and EPTS minimise the product error from the greedy
LP start (``init="greedy"``, 10 000 iterations), EPTS exactly as the paper's
Algorithm 5.2 (``options={"paper": True}``); the arm "EPTS default" is
``gto.optimize``'s default search with the same start and budget; a C4.5 stand-in
(scikit-learn's tree, entropy, unpruned) reports its number of decisions.

- heart, cancer, diabetes, liver: stratified 5-fold CV (shuffle seed 0);
- generated data of 5, 10 and 20 dimensions (``problems.synthetic``): 500
  train / 2 000 test points, 5 repeats (seeds 0-4).

Optional peers (``experiments.peers``) join as extra arms.  Writes
``table1.csv`` (one row per split and arm) and ``table1.md`` to ``--out`` and
prints the markdown table, the paper's numbers beside ours.

    python -m experiments.table1
    python -m experiments.table1 --quick --jobs 2
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from itertools import chain

import problems
from gto.cli._main import jobs, positive_int, seconds
from gto.utils._atomic import write_text_atomic

from . import peers
from .common import (
    EPTS_DEFAULT,
    EPTS_P,
    FW,
    arm_rows,
    cv_splits,
    failures,
    fit_c45,
    markdown_table,
    run_splits,
    synthetic_splits,
    write_csv,
)

ARMS = {"FW": FW, "EPTS": EPTS_P, "EPTS default": EPTS_DEFAULT, "C4.5": fit_c45}
DIMENSIONS = (5, 10, 20)

SOURCE = ("Bennett & Blue, Optimal Decision Trees, RPI Math Report 214 (1996), Table 1 "
          "(problems.paper_table('bennett_blue_table1'))")


def paper_figures():
    """The paper's Table 1 as ``{(dataset, arm): (train %, test %, decisions)}`` in our names."""
    figures = {}
    for row in problems.paper_table("bennett_blue_table1"):
        name = row["data"].replace("generated-", "synthetic-")
        for arm, column, decisions in (("FW", "FW", "GTO_decisions"),
                                       ("EPTS", "EPTS", "GTO_decisions"),
                                       ("C4.5", "C45", "C45_decisions")):
            entry = figures.setdefault((name, arm), [None, None, None])
            entry[0 if row["set"] == "train" else 1] = float(row[column])
            if row[decisions]:
                entry[2] = float(row[decisions])
    return {key: tuple(value) for key, value in figures.items()}


# The paper's Table 1, keyed (dataset, arm) -> (train %, test %, decisions); SOURCE above.
PAPER = paper_figures()


def splits(quick):
    folds, repeats = (1, 1) if quick else (None, 5)
    real = (cv_splits(name, folds=folds) for name in problems.DATASETS)
    generated = (synthetic_splits(d, 500, 2000, repeats) for d in DIMENSIONS)
    return list(chain(*real, *generated))


def table(rows, arms):
    """Markdown rows: data set, arm, then per figure the paper's value beside ours."""
    body = []
    for name, arm, ours in arm_rows(rows, arms):
        paper = PAPER.get((name, arm)) or (None,) * 3
        theirs = ["n/a" if v is None else f"{v:.1f}" for v in paper]
        body.append([name, arm, *(cell for pair in zip(theirs, ours) for cell in pair)])
    header = ["data", "arm", "train % paper", "train % ours", "test % paper", "test % ours",
              "decisions paper", "decisions ours"]
    return markdown_table(header, body)


def run(out="results", quick=False, n_jobs=-1, max_iter=None, peer_names=(), mip_budget=None,
        quiet=False):
    """Run the experiment; write the CSV and markdown; return the markdown text."""
    stem = "table1-quick" if quick else "table1"  # a smoke run never overwrites a full one
    max_iter = max_iter or (200 if quick else 10_000)
    extra, notes = peers.select(peer_names, mip_budget)
    arms = {**ARMS, **extra}
    t0 = time.perf_counter()
    rows = run_splits(splits(quick), arms, max_iter, n_jobs=n_jobs, quiet=quiet, desc="table1")
    seconds = time.perf_counter() - t0
    protocol = ("5-fold CV" if not quick else "quick: first fold") + (
        f"; generated data {'/'.join(map(str, DIMENSIONS))}-d, 500 train / 2000 test, "
        f"{'1 repeat' if quick else '5 repeats'}; {max_iter} iterations; {seconds:.0f} s")
    text = "\n".join([
        "Table 1 (Bennett & Blue 1996): errors in %, mean ± std over folds/repeats",
        "",
        table(rows, arms),
        "",
        protocol,
        f"paper columns: {SOURCE}; n/a where the paper has no such arm",
        *notes,
        *failures(rows),
    ])
    write_csv(os.path.join(out, stem + ".csv"), rows)
    write_text_atomic(os.path.join(out, stem + ".md"), text + "\n")
    if not quiet:
        print(f"wrote {os.path.join(out, stem)}.csv and .md", file=sys.stderr)
    return text


def parser():
    p = argparse.ArgumentParser(prog="gto experiment table1",
                                description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results", help="folder for table1.csv and table1.md (default: %(default)s)")
    p.add_argument("--quick", action="store_true",
                   help="one fold / repeat per data set and 200 iterations (smoke run)")
    p.add_argument("--jobs", type=jobs, default=-1,
                   help="joblib workers for the splits (default: %(default)s, all cores)")
    p.add_argument("--max-iter", type=positive_int, default=None, help="iterations per run (10 000)")
    p.add_argument("--peers", nargs="*", default=list(peers.PEERS), metavar="PEER",
                   choices=list(peers.PEERS),
                   help=f"peer arms among {', '.join(peers.PEERS)} (default all; none: --peers)")
    p.add_argument("--mip-budget", type=seconds, default=None, metavar="SECONDS",
                   help="add the exact MIP arm with this time limit per split")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    return p


def main(argv=None):
    args = parser().parse_args(argv)
    print(run(args.out, args.quick, args.jobs, args.max_iter, args.peers, args.mip_budget,
              args.quiet))


if __name__ == "__main__":
    main()
