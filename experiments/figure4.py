"""The paper's Figure 4: EPTS-M, EPTS-P, FW and C4.5 on generated data.

Bennett & Blue's first experiment: data labelled by a random three-decision
tree (``problems.synthetic``), 200 training / 2 000 test points, several
dimensions, 5 repeats (seeds 0-4).  EPTS-M minimises the minimum error
(eq. 17), EPTS-P and FW the product error (eq. 19), all on the Figure 2 tree
from the greedy LP start; C4.5 is scikit-learn's unpruned entropy tree.

The dimensions of the paper's Figure 4 were not available to us; the default
is 2, 5 and 10 (``--dims`` changes it).  Writes ``figure4.csv``,
``figure4.md`` and, with matplotlib, ``figure4.png`` to ``--out``, and prints
the markdown table.

    python -m experiments.figure4
    python -m experiments.figure4 --quick
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from itertools import chain

from gto.cli._main import jobs, positive_int
from gto.utils._atomic import write_text_atomic

from . import peers
from .common import (
    EPTS_M,
    EPTS_P,
    FW,
    arm_rows,
    failures,
    fit_c45,
    markdown_table,
    run_splits,
    synthetic_splits,
    tidy,
    write_csv,
)

ARMS = {"EPTS-M": EPTS_M, "EPTS-P": EPTS_P, "FW": FW, "C4.5": fit_c45}
DIMENSIONS = (2, 5, 10)


def table(rows, arms):
    body = [[name, arm, *ours] for name, arm, ours in arm_rows(rows, arms)]
    return markdown_table(["data", "arm", "train error %", "test error %", "decisions"], body)


def picture(rows, arms, path):
    """Bar chart of the run, or a note when matplotlib is missing."""
    try:
        from gto import plots

        fig = plots.error_bars(tidy(rows),
                               title="Figure 4: 200 train / 2000 test, mean error % (± std)")
        fig.savefig(path)
        return f"wrote {path}"
    except ImportError as exc:
        return f"no picture: {exc}"


def run(out="results", quick=False, n_jobs=-1, max_iter=None, dims=DIMENSIONS, repeats=None,
        peer_names=(), quiet=False):
    """Run the experiment; write CSV, markdown and picture; return the markdown text."""
    stem = "figure4-quick" if quick else "figure4"  # a smoke run never overwrites a full one
    max_iter = max_iter or (200 if quick else 10_000)
    repeats = repeats or (1 if quick else 5)
    extra, notes = peers.select(peer_names)
    arms = {**ARMS, **extra}
    splits = list(chain(*(synthetic_splits(d, 200, 2000, repeats) for d in dims)))
    t0 = time.perf_counter()
    rows = run_splits(splits, arms, max_iter, n_jobs=n_jobs, quiet=quiet, desc="figure4")
    seconds = time.perf_counter() - t0
    write_csv(os.path.join(out, stem + ".csv"), rows)
    text = "\n".join([
        "Figure 4 (Bennett & Blue 1996): errors in %, mean ± std over repeats",
        "",
        table(rows, arms),
        "",
        f"dimensions {'/'.join(map(str, dims))} (the paper's are not known to us); 200 train / "
        f"2000 test; {repeats} repeat(s); {max_iter} iterations; {seconds:.0f} s",
        picture(rows, arms, os.path.join(out, stem + ".png")),
        *notes,
        *failures(rows),
    ])
    write_text_atomic(os.path.join(out, stem + ".md"), text + "\n")
    if not quiet:
        print(f"wrote {os.path.join(out, stem)}.csv and .md", file=sys.stderr)
    return text


def main(argv=None):
    p = argparse.ArgumentParser(prog="gto experiment figure4", description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results", help="folder for figure4.csv/.md/.png (default: %(default)s)")
    p.add_argument("--quick", action="store_true", help="1 repeat and 200 iterations")
    p.add_argument("--jobs", type=jobs, default=-1,
                   help="joblib workers for the repeats (default: %(default)s, all cores)")
    p.add_argument("--max-iter", type=positive_int, default=None, help="iterations per run (10 000)")
    p.add_argument("--dims", type=int, nargs="+", default=list(DIMENSIONS),
                   help=f"dimensions of the generated data (default: {' '.join(map(str, DIMENSIONS))})")
    p.add_argument("--repeats", type=positive_int, default=None, help="data sets per dimension (5)")
    p.add_argument("--peers", nargs="*", default=[], metavar="PEER", choices=list(peers.PEERS),
                   help=f"extra arms among {', '.join(peers.PEERS)} (default none)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    args = p.parse_args(argv)
    print(run(args.out, args.quick, args.jobs, args.max_iter, args.dims, args.repeats,
              args.peers, args.quiet))


if __name__ == "__main__":
    main()
