"""The ``gto`` command: fit, predict, show, export and run the paper's experiments.

    gto fit data.csv --target class --structure "((0,1),(0,1))" -o model.json
    gto predict model.json data.csv
    gto show model.json
    gto export model.json --dot
    gto experiment table1 --quick

A bad file or column ends the command with exit code 2 and a one-line
message.  Progress bars go to stderr when it is a terminal; ``--quiet``
silences them and every other note on stderr.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import sys
import time

import numpy as np
from joblib import Parallel, delayed

from . import __version__
from .dot import to_dot
from .files import DataError, load_model, read_table, save_model, write_text_atomic
from .objectives import OBJECTIVES
from .optimize import METHODS, optimize
from .progress import Progress
from .tree import Tree

EXPERIMENTS = ("table1", "figure4", "plots")


class UsageError(Exception):
    """A user mistake reported as one line with exit code 2."""


def note(args, text):
    if not args.quiet:
        print(text, file=sys.stderr)


# -- fit -----------------------------------------------------------------------
def initial_tree(args, y, n_features):
    classes = np.unique(y)
    if len(classes) < 2:
        raise UsageError(f"target column {args.target!r} has one class only ({classes[0]!r})")
    if args.structure is None:
        try:
            return Tree.complete(args.depth, classes.tolist(), n_features)
        except ValueError as exc:
            raise UsageError(f"--depth: {exc}") from None
    try:
        spec = ast.literal_eval(args.structure)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise UsageError(
            f"--structure {args.structure!r} is not a nested-pair literal like \"((0,1),(0,1))\""
        ) from None
    try:
        tree = Tree.from_structure(spec, n_features)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"--structure: {exc}") from None
    unknown = set(tree.leaf_classes.tolist()) - set(classes.tolist())
    if unknown:
        listed = ", ".join(sorted(map(repr, unknown)))
        raise UsageError(
            f"--structure leaf labels {listed} are not classes of column {args.target!r} "
            f"(classes: {', '.join(map(repr, classes.tolist()))})"
        )
    return tree


def _restart(tree, X, y, args, kind, seed, callback=None):
    """One ``optimize`` run from ``kind`` ("greedy" or "random")."""
    cat = getattr(args, "categorical_columns", None)
    extra = {} if cat is None else {"categorical_features": cat, "one_group": True}
    return optimize(tree, X, y, objective=args.objective, method=args.method,
                    max_iter=args.max_iter, time_limit=args.time_limit, init=kind,
                    random_state=seed, callback=callback, **extra)


def _numbered_restart(r, *args):
    return r, _restart(*args)


def fit_restarts(tree, X, y, args):
    """Best of ``args.restarts`` runs (fewest errors, then objective), with progress.

    The first run starts from the greedy LP tree, the others from random
    vertices; each has its own seed from ``args.seed``, so the answer does
    not depend on ``--jobs``.  One worker: a bar over all iterations; more:
    a bar over restarts, ticked as they finish.
    """
    kinds = ["greedy"] + ["random"] * (args.restarts - 1)
    seeds = [int(s.generate_state(1)[0]) for s in np.random.SeedSequence(args.seed).spawn(
        args.restarts)]
    results = []
    if args.jobs == 1:
        total = args.restarts * args.max_iter
        with Progress(total=total, desc="fit", quiet=args.quiet) as bar:
            for r, (kind, seed) in enumerate(zip(kinds, seeds)):
                callback = bar.iteration_callback(offset=r * args.max_iter)
                results.append((r, _restart(tree, X, y, args, kind, seed, callback)))
                bar.set((r + 1) * args.max_iter)
    else:
        jobs = (delayed(_numbered_restart)(r, tree, X, y, args, k, s)
                for r, (k, s) in enumerate(zip(kinds, seeds)))
        with Progress(total=args.restarts, desc="restarts", quiet=args.quiet) as bar:
            for r, res in Parallel(n_jobs=args.jobs, return_as="generator_unordered")(jobs):
                results.append((r, res))
                best = min(x[1].n_errors for x in results)
                bar.update(note=f"fewest errors {best}")
    return min(results, key=lambda x: (x[1].n_errors, x[1].fun, x[0]))[1]


def cmd_fit(args):
    features = None if args.features is None else [f.strip() for f in args.features.split(",")]
    if features is not None and args.target in features:
        raise UsageError(f"--features includes the target column {args.target!r}")
    X, y, names = read_table(args.data, args.target, features)
    if args.categorical is not None:  # category codes; decisions become subset tests
        cols = [c.strip() for c in args.categorical.split(",")]
        unknown = [c for c in cols if c not in names]
        if unknown:
            raise UsageError(f"--categorical: no feature column(s) {', '.join(map(repr, unknown))}")
        args.categorical_columns = [names.index(c) for c in cols]
    tree = initial_tree(args, y, X.shape[1])
    t0 = time.perf_counter()
    res = fit_restarts(tree, X, y, args)
    save_model(args.output, res.tree, names, args.target)
    note(args, f"fit: {res.n_errors} of {len(y)} training points misclassified "
               f"({100 * res.n_errors / len(y):.1f} %), {args.objective} error {res.fun:.4g}, "
               f"{args.restarts} restart(s), {time.perf_counter() - t0:.1f} s; "
               f"wrote {args.output}")


# -- predict, show, export -------------------------------------------------------
def cmd_predict(args):
    tree, names, target = load_model(args.model)
    X, y, _ = read_table(args.data, target or args.target, names, target_optional=True)
    if X.shape[1] != tree.n_features:
        raise UsageError(
            f"{args.data}: the model needs {tree.n_features} feature columns, the file has "
            f"{X.shape[1]}"
        )
    pred = tree.predict(X)
    text = "prediction\n" + "".join(f"{p}\n" for p in pred.tolist())
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)
    if y is not None:
        wrong = int(np.sum(pred.astype(str) != y.astype(str)))
        note(args, f"predict: {wrong} of {len(y)} points misclassified "
                   f"({100 * wrong / len(y):.1f} %)")


def cmd_show(args):
    tree, names, target = load_model(args.model)
    print(f"gto tree: {tree.n_decisions} decisions, {tree.n_leaves} leaves, "
          f"{tree.n_features} features; structure {tree.structure!r}"
          + (f"; target {target!r}" if target else ""))
    print(tree.to_text(names))


def cmd_export(args):
    tree, names, _ = load_model(args.model)
    text = to_dot(tree, names) + "\n"
    if args.output:
        write_text_atomic(args.output, text)
    else:
        sys.stdout.write(text)


def cmd_experiment(args):
    module = importlib.import_module(f"experiments.{args.name}")
    rest = list(args.args)
    if args.quiet and not {"-q", "--quiet"} & set(rest):
        rest.append("--quiet")
    module.main(rest)


# -- parser --------------------------------------------------------------------
def _positive_int(text):
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _jobs(text):
    value = int(text)
    if value == 0:
        raise argparse.ArgumentTypeError("0 workers: use 1, a count, or -1 for all cores")
    return value


def _seconds(text):
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive seconds, got {text}")
    return value


def build_parser():
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", help="no progress bars or notes")
    parser = argparse.ArgumentParser(
        prog="gto", description="Global tree optimization (Bennett & Blue, 1996).")
    parser.add_argument("--version", action="version", version=f"gto {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    fit = sub.add_parser("fit", parents=[quiet], help="fit a fixed-structure tree to a CSV file")
    fit.add_argument("data", help="CSV file with a header line")
    fit.add_argument("--target", default="class", help="class column (default: class)")
    fit.add_argument("--features", help="comma-separated feature columns (default: all others)")
    shape = fit.add_mutually_exclusive_group()
    shape.add_argument("--structure", help='nested pairs of leaf classes, e.g. "((0,1),(0,1))"')
    shape.add_argument("--depth", type=_positive_int, default=2,
                       help="complete tree of this depth, leaves cycling the classes (default 2)")
    fit.add_argument("--categorical", metavar="COLS",
                     help="comma-separated columns of category codes: one-hot search, one "
                          "feature per decision, subset tests like 'colour in {0, 2}'")
    fit.add_argument("--objective", default="product", choices=OBJECTIVES)
    fit.add_argument("--method", default="tabu", choices=METHODS)
    fit.add_argument("--restarts", type=_positive_int, default=1)
    fit.add_argument("--jobs", type=_jobs, default=1, help="parallel restarts (-1: all cores)")
    fit.add_argument("--max-iter", type=_positive_int, default=10_000,
                     help="tabu moves or Frank-Wolfe iterations per restart")
    fit.add_argument("--time-limit", type=_seconds, default=None,
                     help="seconds per restart")
    fit.add_argument("--seed", type=int, default=0)
    fit.add_argument("-o", "--output", default="model.json", help="model file (model.json)")
    fit.set_defaults(run=cmd_fit)

    predict = sub.add_parser("predict", parents=[quiet], help="predict the classes of a CSV file")
    predict.add_argument("model")
    predict.add_argument("data")
    predict.add_argument("--target", default="class",
                         help="class column to leave out (and score) if present, for a bare "
                              "tree file")
    predict.add_argument("-o", "--output", help="write the predictions here (CSV)")
    predict.set_defaults(run=cmd_predict)

    show = sub.add_parser("show", parents=[quiet], help="print a model as text")
    show.add_argument("model")
    show.set_defaults(run=cmd_show)

    export = sub.add_parser("export", parents=[quiet], help="export a model")
    export.add_argument("model")
    export.add_argument("--dot", action="store_true", required=True, help="Graphviz source")
    export.add_argument("-o", "--output", help="write here instead of standard output")
    export.set_defaults(run=cmd_export)

    experiment = sub.add_parser("experiment", parents=[quiet],
                                help="run an experiment of the paper (arguments pass through)")
    experiment.add_argument("name", choices=EXPERIMENTS)
    experiment.add_argument("args", nargs=argparse.REMAINDER)
    experiment.set_defaults(run=cmd_experiment)
    return parser


def main(argv=None):
    """Entry point of the ``gto`` command; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except (UsageError, DataError) as exc:
        print(f"gto: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"gto: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gto: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    return 0
