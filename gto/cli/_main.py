"""The ``gto`` command: fit, predict, show, export and run the paper's experiments.

    gto fit data.csv --target class --structure "((0,1),(0,1))" -o model.json
    gto predict model.json data.csv --proba
    gto show model.json
    gto export model.json --format dot
    gto experiment table1 --quick

``gto fit`` runs :class:`gto.GTOClassifier` with the command's options, so
the same data give the same tree as the estimator's defaults in Python.  A
bad file, column or option ends the command with exit code 2 and a one-line
message; Ctrl-C during the final search stops it, writes the best tree so far
and exits with 130 (during the internal cross-validation, before there is a
tree, it exits with 130 and writes nothing).  Progress bars go to stderr when it is a
terminal; ``--quiet`` silences them and every other note on stderr.  The
model file is described in docs/model_format.md.  pandas, scikit-learn and
the experiments are imported only by the commands that need them.

Files (docs/reliability.md): ``-o`` is checked before any work and never
replaces an input of the command (the same file by any path, hard link or
symlink) nor a write-protected file; outputs are written atomically.  A CSV
file is read once (so pipes, ``/dev/stdin`` and ``<(...)`` work), gzip, bzip2
or xz by their content; class labels keep their written text (``007`` and
``7`` are two classes).  In predicted CSV files a text cell starting with
``=``, ``+``, ``-``, ``@``, tab or carriage return gets a leading ``'``, as
OWASP recommends against CSV formula injection (numbers are left as they are).
"""
from __future__ import annotations

import argparse
import ast
import csv
import importlib
import io
import os
import sys
import time
import warnings

from .._version import __version__
from ..engine._problem import WALK_OBJECTIVES as OBJECTIVES
from ..learners._estimator import INITS  # (``import gto`` has loaded them already)
from ..learners._optimize import METHODS
from ..utils._validation import check_sample_weight
from ..utils._workers import stop_workers
from ._files import DataError, check_writable, load_model, read_table, write_text_atomic

EXPERIMENTS = ("table1", "figure4", "plots")
EXPORT_FORMATS = ("dot", "text", "json")
#: a target column with more distinct values than this is probably not a class column
MANY_CLASSES = 50


class UsageError(Exception):
    """A user mistake reported as one line with exit code 2."""


def note(args, text):
    if not args.quiet and sys.stderr is not None:
        print(text, file=sys.stderr)


def _same_file(a, b):
    """True if paths ``a`` and ``b`` name one existing file (through symlinks,
    hard links or different spellings)."""
    try:
        sa, sb = os.stat(a), os.stat(b)
    except (OSError, ValueError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def check_output(args, *inputs):
    """UsageError unless ``-o`` can be written and is none of the ``inputs`` (an input
    must never be replaced by the output); call before any work."""
    if not args.output:
        return
    for option, path in inputs:
        if path is not None and _same_file(path, args.output):
            raise UsageError(f"-o {args.output} is the {option} file {path}: it would be "
                             "replaced; write the output elsewhere")
    try:
        check_writable(args.output)
    except OSError as exc:
        raise UsageError(f"-o {args.output}: cannot write there ({exc.strerror or exc})") from None


#: first characters that make a spreadsheet read a CSV cell as a formula (OWASP)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value):
    """A text cell that a spreadsheet would run as a formula (``=HYPERLINK(...)``,
    ``+1+2``, ``@SUM``) prefixed with ``'``, as OWASP recommends against CSV
    injection; numbers and other text are written as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value


# -- fit -----------------------------------------------------------------------
def _class_hint(args, y):
    if y.dtype.kind == "f" or len(set(y.tolist())) > MANY_CLASSES:
        return (f"; is {args.target!r} really the class column? it holds "
                f"{len(set(y.tolist()))} distinct {y.dtype.kind == 'f' and 'decimal ' or ''}"
                "values (choose another with --target)")
    return ""


def initial_tree(args, y, n_features, start=None):
    """The tree to fit: ``start`` (from --init FILE), --structure, or a complete tree of --depth."""
    import numpy as np

    from ..model.tree import Tree

    classes = np.unique(y)
    if len(classes) < 2:
        raise UsageError(f"target column {args.target!r} has one class only "
                         f"({classes.tolist()[0]!r})")
    if start is not None:
        tree = start
        if tree.n_features != n_features:
            raise UsageError(f"--init {args.init}: the model has {tree.n_features} features, "
                             f"the data {n_features}")
    elif args.structure is None:
        try:  # the shape (its first classes); GTOClassifier chooses the leaves' classes
            tree = Tree.complete(args.depth, classes.tolist(), n_features)
        except ValueError as exc:
            raise UsageError(f"--depth: {exc}") from None
        leaves = tree.n_leaves
        if leaves < len(classes):
            hint = _class_hint(args, y)
            if hint:  # most likely not a class column at all
                raise UsageError(f"{len(classes)} classes but a tree of --depth {args.depth} has "
                                 f"only {leaves} leaves: raise --depth or give --structure{hint}")
            note(args, f"fit: {len(classes)} classes but a tree of --depth {args.depth} has "
                       f"{leaves} leaves: the {leaves} classes of the largest training weight "
                       "get them, the points of the others are errors (raise --depth to give "
                       "every class a leaf)")
        return tree
    else:
        try:
            spec = ast.literal_eval(args.structure)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            raise UsageError(f"--structure {args.structure!r} is not a nested-pair literal "
                             "like \"((0,1),(0,1))\"") from None
        try:
            tree = Tree.from_structure(spec, n_features)
        except (ValueError, TypeError, RecursionError) as exc:
            raise UsageError(f"--structure: {exc}") from None
    listed = lambda values: ", ".join(map(repr, values))  # noqa: E731
    leaves = set(tree.leaf_classes.tolist())
    unknown = sorted(leaves - set(classes.tolist()), key=str)
    if unknown:
        raise UsageError(f"leaf labels {listed(unknown)} are not classes of column "
                         f"{args.target!r} (classes: {listed(classes.tolist()[:20])}"
                         f"{', ...' if len(classes) > 20 else ''})")
    leafless = [c for c in classes.tolist() if c not in leaves]
    if leafless:
        raise UsageError(f"{len(leafless)} class(es) of column {args.target!r} have no leaf in "
                         f"the tree: {listed(leafless[:10])}{', ...' if len(leafless) > 10 else ''}"
                         + _class_hint(args, y))
    return tree


def estimator(args, tree, start):
    """The ``GTOClassifier`` that ``gto fit`` runs: the estimator's defaults (internal
    cross-validation over the penalty and linear-SVM trees, DESIGN §6), with the
    command's options; ``--categorical`` is ``categorical_features`` with
    ``one_group=True`` (one feature per decision, subset tests)."""
    from ..learners._estimator import GTOClassifier

    shape = {"init": start} if start is not None else (
        {"structure": tree.structure} if args.structure is not None else {"depth": args.depth})
    categorical = getattr(args, "categorical_columns", None)
    verbose = int(not args.quiet and getattr(sys.stderr, "isatty", lambda: False)())
    return GTOClassifier(
        **shape, objective=args.objective, method=args.method, p=args.p,
        max_iter=args.max_iter, time_limit=args.time_limit, restarts=args.restarts,
        n_jobs=args.jobs, random_state=args.seed,
        **({} if start is not None else {"init": args.init}),
        alpha=args.alpha, max_features=args.max_features, cv=args.cv, verbose=verbose,
        categorical_features=categorical, one_group=categorical is not None,
        leaves=args.leaves)


def fit(clf, X, y, w):
    """``clf.fit``; returns the result of the final search, also when it was interrupted
    (the fitted tree so far is then ``clf.tree_``; Ctrl-C during the internal
    cross-validation, before any final tree, raises KeyboardInterrupt)."""
    from ..utils.status import Status

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="gto.optimize was interrupted")
        try:
            clf.fit(X, y, sample_weight=w)
        except KeyboardInterrupt:
            result = getattr(clf, "result_", None)
            if result is None or result.get("status") != Status.INTERRUPTED:
                raise
    return clf.result_


def _chosen(clf):
    """What the internal cross-validation chose, for the summary line (with the depth
    when the capacity control across depths kept a shallower tree)."""
    kept = ""
    if getattr(clf, "shallower_", None) is not None and clf.depth_ < clf.depth:
        kept = f"depth {clf.depth_} kept (the CV found no gain in depth {clf.depth}), "
    return kept + _grid_choice(clf)


def _grid_choice(clf):
    """What the internal cross-validation chose over the grid."""
    if clf.cv_results_ is None:
        return f"alpha {clf.alpha_:g}" if clf.alpha_ is not None else "no selection"
    ran = sum(key.endswith("_test_score") and key.startswith("split") for key in clf.cv_results_)
    total = clf.cv if isinstance(clf.cv, int) else ran
    cv = f"{total}-fold CV" + ("" if ran == total else f" (time limit: {ran} of its folds)")
    if clf.alpha_ is None and clf.svm_C_ is None:
        return f"{cv} chose the axis-aligned tree of the structure"
    if clf.alpha_ is None:
        return f"{cv} chose the 1-norm SVM tree of C = {clf.svm_C_:g}"
    return f"{cv} chose alpha {clf.alpha_:g}" + (
        "" if clf.max_features_ is None else f", max {clf.max_features_} features")


def _save_or_rescue(tree, path):
    """Save; if that fails now, keep the fitted model in a temporary file and say where."""
    import tempfile

    try:
        tree.save(path)
    except OSError as exc:
        fd, rescue = tempfile.mkstemp(prefix="gto-model-", suffix=".json")
        os.close(fd)
        tree.save(rescue)
        raise UsageError(f"cannot write {path} ({exc.strerror or exc}); the fitted model is "
                         f"in {rescue}") from None


def cmd_fit(args):
    from ..utils.status import Status

    features = None if args.features is None else [f.strip() for f in args.features.split(",")]
    if features is not None and args.target in features:
        raise UsageError(f"--features includes the target column {args.target!r}")
    # before the fit, so that a bad -o loses nothing
    check_output(args, ("data", args.data), ("--init", None if args.init in INITS else args.init))
    start = None if args.init in INITS else load_model(args.init)
    if features is None and start is not None:
        features = start.feature_names  # the columns the starting model was fitted on
    cols = [] if args.categorical is None else [c.strip() for c in args.categorical.split(",")]
    table = read_table(args.data, args.target, features, sep=args.sep,
                       weight=args.sample_weight, drop_na=args.drop_na, categorical=cols)
    if table.n_dropped:
        note(args, f"fit: dropped {table.n_dropped} row(s) with missing values")
    X, y = table.X, table.y
    if args.categorical is not None:  # categories (strings or codes): subset tests
        unknown = [c for c in cols if c not in table.feature_names]
        if unknown:
            raise UsageError(f"--categorical: no feature column(s) {', '.join(map(repr, unknown))}")
        args.categorical_columns = [table.feature_names.index(c) for c in cols]
    tree = initial_tree(args, y, X.shape[1], start)
    auto = "auto" in (args.alpha, args.max_features) and args.categorical is None
    note(args, f"fit: {len(y)} points, {X.shape[1]} features, {tree.n_decisions} decisions; "
               f"GTOClassifier{f', internal {args.cv}-fold CV' if auto else ''}, "
               f"{args.restarts} restart(s) of {args.max_iter} moves per search")
    t0 = time.perf_counter()
    clf = estimator(args, tree, start)
    try:
        res = fit(clf, X, y, table.sample_weight)
    except (ValueError, TypeError) as exc:
        raise UsageError(str(exc)) from None
    model = clf.tree_
    model.feature_names, model.target = table.feature_names, args.target
    _save_or_rescue(model, args.output)
    runs = res.get("restarts")  # of the final search (an SVM tree has none)
    summary = (f"{_training_errors(model, X, y, table.sample_weight)}, {_chosen(clf)}"
               + ("" if runs is None else f", {len(runs)} of {args.restarts} restart(s)")
               + f", {time.perf_counter() - t0:.1f} s")
    if res.status == Status.INTERRUPTED:
        _error(f"interrupted; wrote the best tree so far to {args.output} ({summary})",
               prefix="gto: ")
        return 130
    early = "time limit reached, the best tree so far: " if res.status == Status.TIME_LIMIT else ""
    note(args, f"fit: {early}{summary}; wrote {args.output}")
    return 0


def _training_errors(model, X, y, sample_weight):
    """The fit summary's error count: points, or with weights the misclassified
    weight in the file's units beside the number of points (in the fit's rescaled
    units when the file's total overflows a float, as 1e308 weights do)."""
    import numpy as np

    if sample_weight is None:
        n_errors = model.n_errors(X, y)
        return f"{n_errors:g} of {len(y)} training points misclassified ({100 * n_errors / len(y):.1f} %)"
    w = np.asarray(sample_weight, dtype=float)
    with np.errstate(over="ignore"):
        total = float(w.sum())
    units = ""
    if not np.isfinite(total):
        w = check_sample_weight(w, len(y))
        total, units = float(w.sum()), " (weights rescaled by a power of two)"
    n_errors = model.n_errors(X, y, w)
    return (f"{n_errors:g} of {total:g} training weight misclassified{units} "
            f"({100 * n_errors / total:.1f} %; {len(y)} points)")


# -- predict, show, export -------------------------------------------------------
def _label_columns(tree):
    """Feature names of a model's columns that no hyperplane reads: with subset tests
    they are read as category values (strings or numbers), the others as numbers."""
    if not (tree.has_subsets or tree.categories) or tree.feature_names is None:
        return ()
    import numpy as np

    hyperplanes = [d for d, s in enumerate(tree.subsets) if s is None]
    numeric = np.any(tree.W[hyperplanes] != 0, axis=0) if hyperplanes else np.zeros(
        tree.n_features, dtype=bool)
    return [name for name, used in zip(tree.feature_names, numeric) if not used]


def _note_unseen(args, tree, table):
    """Say which categories of the data the model never saw in training (a subset
    test sends them right: they are in no set)."""
    for f, known in sorted((tree.categories or {}).items()):
        known = set(known)
        unseen = [v for v in table.X[:, f].tolist() if v not in known]
        new = sorted(set(unseen), key=str)
        if new:
            rows = len(unseen)
            name = tree.feature_names[f] if tree.feature_names else f"x{f}"
            note(args, f"predict: column {name!r} has {len(new)} value(s) not seen in "
                       f"training ({', '.join(map(repr, new[:5]))}{', ...' if len(new) > 5 else ''}"
                       f"; {rows} row(s)); subset tests send them right")


def _model_and_table(args):
    tree = load_model(args.model)
    target = tree.target or args.target
    table = read_table(args.data, target, tree.feature_names, target_optional=True,
                       sep=args.sep, categorical=_label_columns(tree))
    if table.X.shape[1] != tree.n_features:
        raise UsageError(f"{args.data}: the model needs {tree.n_features} feature columns, the "
                         f"file has {table.X.shape[1]}")
    return tree, table


def cmd_predict(args):
    import numpy as np

    check_output(args, ("model", args.model), ("data", args.data))
    tree, table = _model_and_table(args)
    _note_unseen(args, tree, table)
    pred = tree.predict(table.X)
    header, columns = ["prediction"], [[csv_safe(v) for v in pred.tolist()]]
    if args.proba:
        if tree.leaf_counts is None:
            raise UsageError(f"{args.model} has no leaf class counts (a bare tree): "
                             "--proba needs a model written by gto fit")
        P = tree.predict_proba(table.X)
        header += [csv_safe(f"proba_{c}") for c in tree.classes.tolist()]
        columns += [[float(f"{v:.6g}") for v in P[:, j]] for j in range(P.shape[1])]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(zip(*columns))
    text = out.getvalue()
    if args.output:
        write_text_atomic(args.output, text)
    else:
        _stdout().write(text)
    if table.y is not None:
        y = table.y
        if y.dtype.kind != pred.dtype.kind and {y.dtype.kind, pred.dtype.kind} <= set("iuf"):
            y = y.astype(float)
        wrong = int(np.sum(pred != y))
        note(args, f"predict: {wrong} of {len(y)} points misclassified "
                   f"({100 * wrong / len(y):.1f} %)")


def cmd_show(args):
    tree = load_model(args.model)
    _stdout().write(f"gto tree: {tree.n_decisions} decisions, {tree.n_leaves} leaves, "
                    f"{tree.n_features} features; structure {tree.structure!r}"
                    + (f"; target {tree.target!r}" if tree.target else "") + "\n"
                    + tree.to_text() + "\n")


def _stdout():
    """Standard output, UsageError when it is closed (``gto show m.json >&-``)."""
    if sys.stdout is None:
        raise UsageError("standard output is closed: nowhere to write (use -o where there is one)")
    return sys.stdout


def cmd_export(args):
    import json

    check_output(args, ("model", args.model))
    tree = load_model(args.model)
    if args.format == "dot":
        from ..model._dot import to_dot

        text = to_dot(tree, tree.feature_names)
    elif args.format == "text":
        text = tree.to_text()
    else:
        text = json.dumps(tree.to_dict(), indent=1)
    if args.output:
        write_text_atomic(args.output, text + "\n")
    else:
        _stdout().write(text + "\n")


def experiment_module(name):
    """The experiment script ``name``: ``gto._experiments.name`` in an installed copy, else
    (a checkout) ``experiments.name`` from the repository's own folder beside gto, never
    another folder called experiments (UsageError then)."""
    from ..utils._siblings import check_sibling, sibling

    try:
        return importlib.import_module(f"gto._experiments.{name}")
    except ModuleNotFoundError as exc:
        if exc.name not in ("gto._experiments", f"gto._experiments.{name}"):
            raise
    if sibling("experiments") is None:
        raise UsageError("the experiment scripts are not installed with this copy of gto")
    try:
        check_sibling("experiments")
    except ImportError as exc:
        raise UsageError(str(exc)) from None
    return importlib.import_module(f"experiments.{name}")


def cmd_experiment(args):
    if args.name is None:
        for name in EXPERIMENTS:
            doc = (experiment_module(name).__doc__ or "").strip()
            print(f"{name:10s} {doc.splitlines()[0] if doc else ''}")
        print("options of one: gto experiment NAME --help")
        return
    module = experiment_module(args.name)
    rest = list(args.args)
    if args.quiet and not {"-q", "--quiet"} & set(rest):
        rest.append("--quiet")
    module.main(rest)


# -- parser --------------------------------------------------------------------
def positive_int(text):
    """argparse type: an int >= 1."""
    return _int_at_least(text, 1)


def nonneg_int(text):
    """argparse type: an int >= 0."""
    return _int_at_least(text, 0)


def _int_at_least(text, low):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer, got {text!r}") from None
    if value < low:
        raise argparse.ArgumentTypeError(f"must be at least {low}, got {value}")
    return value


def jobs(text):
    """argparse type: workers, a count from 1 to the cores of this machine, or -1 for all."""
    from joblib import cpu_count

    value = _int_at_least(text, -1)
    cores = cpu_count()
    if value == 0 or value > cores:
        raise argparse.ArgumentTypeError(f"{value} workers: use 1 to {cores} (the cores of this "
                                         "machine) or -1 for all cores")
    return value


def _float(text, noun, bound, zero_ok):
    """argparse helper: a finite float > 0 (>= 0 with ``zero_ok``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be {noun}, got {text!r}") from None
    if not (value >= 0 if zero_ok else value > 0) or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be {bound}, got {text}")
    return value


def seconds(text):
    """argparse type: a positive finite number of seconds."""
    return _float(text, "a number of seconds", "positive seconds", zero_ok=False)


def _fraction(text):
    return _float(text, "a number", "a non-negative number", zero_ok=True)


def _separator(text):
    text = {"\\t": "\t", "tab": "\t"}.get(text, text)
    if not text:
        raise argparse.ArgumentTypeError("the separator cannot be empty")
    return text


def _alpha(text):
    """argparse type: ``auto`` or a number >= 0."""
    return "auto" if text == "auto" else _fraction(text)


def _budget(text):
    """argparse type: ``auto`` or an int >= 1."""
    return "auto" if text == "auto" else positive_int(text)


def _cv(text):
    """argparse type: folds of the internal cross-validation, an int >= 2."""
    return _int_at_least(text, 2)


class _HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each option's default once: not for flags and options without a default
    (their help says what happens then)."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False or "%(default)" in (action.help or ""):
            return action.help
        return super()._get_help_string(action)


def _add_fit_parser(sub, parents, fmt):
    """The ``gto fit`` command and its options."""
    fit_p = sub.add_parser(
        "fit", parents=parents, formatter_class=fmt,
        help="fit a fixed-structure tree to a CSV file (GTOClassifier's defaults)",
        description="Fit a tree as gto.GTOClassifier does with the same options: by default "
                    "an internal cross-validation chooses between the unpenalised tabu search "
                    "and three 1-norm linear-SVM trees, then refits the winner on all the data "
                    "(so the same data give the same tree as "
                    "GTOClassifier(random_state=SEED).fit in Python).  --alpha 0 runs one "
                    "search without the cross-validation.")
    fit_p.add_argument("data", help="CSV file with a header line")
    fit_p.add_argument("--target", default="class", help="class column")
    fit_p.add_argument("--features", help="comma-separated feature columns (default: all but "
                                          "the target and --sample-weight)")
    fit_p.add_argument("--sample-weight", metavar="COLUMN", help="column of point weights")
    fit_p.add_argument("--drop-na", action="store_true",
                       help="drop rows with a missing value (?, NA, NaN, empty) instead of "
                            "stopping")
    shape = fit_p.add_mutually_exclusive_group()
    shape.add_argument("--structure", help='nested pairs of leaf classes, e.g. "((0,1),(0,1))" '
                                           "(default: a complete tree of --depth)")
    shape.add_argument("--depth", type=positive_int, default=2,
                       help="complete tree of this depth (two classes alternate on its "
                            "leaves; more are arranged as GTOClassifier's depth says)")
    fit_p.add_argument("--init", default="auto", metavar=f"{{{','.join(INITS)}}} or FILE",
                       help="starting trees (GTOClassifier's init: auto = greedy LP tree and "
                            "CART, and with --alpha auto also a linear-SVM tree), or a model "
                            "file to start from (its structure and decisions)")
    fit_p.add_argument("--leaves", default="keep", choices=("keep", "free", "auto"),
                       help="leaf classes of an --init FILE tree: kept, or chosen anew with the "
                            "splits (free; GTOClassifier's leaves; auto: free for a tree with "
                            "splits, keep for a bare structure)")
    fit_p.add_argument("--categorical", metavar="COLS",
                       help="comma-separated columns of categories (strings or codes): one "
                            "feature per decision, subset tests like 'colour in {red, blue}' "
                            "(GTOClassifier(categorical_features=COLS, one_group=True); no "
                            "internal CV)")
    fit_p.add_argument("--objective", default="product", choices=OBJECTIVES,
                       help="error function the search minimises")
    fit_p.add_argument("--p", type=int, default=1, choices=(1, 2),
                       help="power on the decision errors")
    fit_p.add_argument("--method", default="tabu", choices=METHODS, help="search method")
    fit_p.add_argument("--restarts", type=positive_int, default=3, help="restarts per search")
    fit_p.add_argument("--jobs", type=jobs, default=1,
                       help="workers for the internal CV and restarts (-1: all cores)")
    fit_p.add_argument("--max-iter", type=positive_int, default=3000,
                       help="tabu moves or Frank-Wolfe iterations per restart")
    fit_p.add_argument("--time-limit", type=seconds, default=None,
                       help="seconds for the whole fit, internal CV included (default: no limit)")
    fit_p.add_argument("--alpha", type=_alpha, default="auto",
                       help="L1 penalty on the weights, a number >= 0, or auto: "
                            "the internal CV chooses between the search without penalty and "
                            "the linear-SVM trees")
    fit_p.add_argument("--max-features", type=_budget, default=None,
                       help="most features per decision, an int, or auto: chosen by the "
                            "internal CV (default: no cap)")
    fit_p.add_argument("--cv", type=_cv, default=5, help="folds of the internal CV")
    fit_p.add_argument("--seed", type=nonneg_int, default=0, help="random seed")
    fit_p.add_argument("-o", "--output", default="model.json",
                       help="model file (its folder must exist)")
    fit_p.set_defaults(run=cmd_fit)


def build_parser():
    fmt = _HelpFormatter
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", help="no progress bars or notes")
    csv_opts = argparse.ArgumentParser(add_help=False)
    csv_opts.add_argument("--sep", type=_separator, default=",",
                          help="CSV field separator (\\t or tab for tabs)")
    parser = argparse.ArgumentParser(
        prog="gto", description="Global tree optimization (Bennett & Blue, 1996).",
        formatter_class=fmt)
    parser.add_argument("--version", action="version", version=f"gto {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    _add_fit_parser(sub, [quiet, csv_opts], fmt)

    predict = sub.add_parser("predict", parents=[quiet, csv_opts], formatter_class=fmt,
                             help="predict the classes of a CSV file")
    predict.add_argument("model", help="model file written by gto fit")
    predict.add_argument("data", help="CSV file with a header line; the model's feature "
                                      "columns are found by name (the target column, if "
                                      "present, is left out and scored)")
    predict.add_argument("--target", default="class",
                         help="class column to leave out (and score) if present, for a model "
                              "without a target name")
    predict.add_argument("--proba", action="store_true",
                         help="add the training class frequencies of each point's leaf")
    predict.add_argument("-o", "--output", help="write the predictions here (CSV)")
    predict.set_defaults(run=cmd_predict)

    show = sub.add_parser("show", parents=[quiet], formatter_class=fmt,
                          help="print a model as text")
    show.add_argument("model", help="model file")
    show.set_defaults(run=cmd_show)

    export = sub.add_parser("export", parents=[quiet], formatter_class=fmt,
                            help="export a model (Graphviz dot, text or JSON)")
    export.add_argument("model", help="model file")
    export.add_argument("--format", choices=EXPORT_FORMATS, default="dot", help="output format")
    export.add_argument("--dot", action="store_const", dest="format", const="dot",
                        help="same as --format dot")
    export.add_argument("-o", "--output", help="write here instead of standard output")
    export.set_defaults(run=cmd_export)

    experiment = sub.add_parser(
        "experiment", parents=[quiet], formatter_class=fmt,
        help="run an experiment of the paper (without NAME: list them; NAME --help: options)")
    experiment.add_argument("name", nargs="?", choices=EXPERIMENTS,
                            help="the experiment (without it: list them)")
    experiment.add_argument("args", nargs=argparse.REMAINDER,
                            help="its options (gto experiment NAME --help)")
    experiment.set_defaults(run=cmd_experiment)
    return parser


def _check_fit_args(parser, args):
    if args.command != "fit":
        return
    if args.method == "frank-wolfe" and args.objective != "product":
        parser.error(f"--method frank-wolfe needs --objective product (the differentiable "
                     f"one), got {args.objective}")


def main(argv=None):
    """Entry point of the ``gto`` command; returns the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    _check_fit_args(parser, args)
    ended = False
    try:
        code = args.run(args) or 0
        if sys.stdout is not None:
            sys.stdout.flush()  # a closed pipe shows here, inside the try, not at exit
        ended = True
        return code
    except (UsageError, DataError) as exc:
        _error(exc)
        return 2
    except BrokenPipeError:  # `gto show m.json | head`: the reader left, exit quietly
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 141  # as a tool stopped by SIGPIPE
    except OSError as exc:
        _error(exc)
        return 2
    except KeyboardInterrupt:
        _error("interrupted", prefix="gto: ")
        return 130
    finally:
        stop_workers(kill=not ended)  # none outlive the command (also after Ctrl-C)


def _error(message, prefix="gto: error: "):
    """One line on stderr (if there is one), control characters escaped."""
    from ..model.inspection import printable

    if sys.stderr is not None:
        print(prefix + printable(message), file=sys.stderr)

