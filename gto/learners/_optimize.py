"""``gto.optimize``: global tree optimization by EPTS or Frank-Wolfe (paper §5).

Each restart: a starting tree (the given one, the greedy LP tree, or a random
one), the crossover to a vertex (Theorem 4.1), then EPTS on the structured
walker or Frank-Wolfe followed by the crossover.  Restarts run in parallel
through joblib (so on a Dask cluster under ``joblib.parallel_backend("dask")``).
The answer is the tree with the fewest training errors (ties by objective),
never one with more errors than the tree given (when that tree is within the
feature budget); with an L1 penalty (``alpha > 0``) it is the tree with the
best penalised objective.
"""
from __future__ import annotations

import logging
import time
import warnings
from dataclasses import dataclass, fields
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from scipy.optimize import OptimizeResult
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..engine._axis import axis_work
from ..engine._objectives import OBJECTIVES, check_objective
from ..engine._portfolio import HISTORY_DTYPE, round_lengths, round_starts, split_options, start_kinds  # noqa: F401
from ..engine._portfolio import run_restart as _run_one
from ..engine._problem import WALK_OBJECTIVES, TreeProblem
from ..engine._region_start import needs_regions
from ..engine._starts import is_complete, is_shallow
from ..engine._stopping import StoppingRule
from ..model._categorical import NOMINAL, encode
from ..model.tree import Tree, as_tree
from ..utils._interrupt import StopRequest, limits, stop_on_sigint
from ..utils._progress import Progress, logger, verbose_logging
from ..utils._validation import (
    POWER,
    RANDOM_STATE,
    SECONDS,
    check_fit_data,
    leaf_class_points,
    non_numeric,
)
from ..utils._workers import capped_jobs, check_n_jobs, no_workers_left
from ..utils.status import Status
from ._leaves import LEAVES, check_leaves, optimize_free
from ._one_group import one_group_tree

METHODS = ("tabu", "frank-wolfe")
#: the exact axis-aligned start costs ``axis_work(X)`` = (sum_f (cuts_f + 2))^2 + N n^2
#: steps of about 5 ns (about 0.5 s at 1e8; gto.engine._axis); "auto" uses it for
#: max_features=1 only up to this much work, else the CART tree (docs/decisions.md), and
#: the estimator's axis-aligned candidate keeps as many cuts a feature as fit in it
AXIS_WORK_LIMIT = 1e8
INITS = ("auto", "tree", "greedy", "random", "cart", "axis")
#: above this many (merged) points the default tabu search runs coarse to fine
COARSE_POINTS = 4_000
#: share of the time limit spent on the subsample
COARSE_SHARE = 0.5
#: moves between the checks of the full-data walk's patience (coarse to fine)
PATIENCE_EVERY = 16
#: the full-data walk (coarse to fine) ends after this share of a restart's patience
#: (``patience`` rounds' worth of moves) without fewer errors: its moves cost N /
#: COARSE_POINTS times a subsample move, and the trees it finds after the first half
#: of the wait are rare (docs/speed.md)
FINE_PATIENCE_SHARE = 0.5


def _check_combinations(objective, method, p):
    """What the declared constraints cannot say: p for the objective, Frank-Wolfe's objective."""
    if objective in OBJECTIVES:
        check_objective(objective, p)
    if method == "frank-wolfe" and objective != "product":
        raise ValueError("Frank-Wolfe needs the differentiable product objective")


def _seed_sequence(random_state):
    """``SeedSequence`` from None, a non-negative int, a Generator or a RandomState
    (checked by the declared constraint ``RANDOM_STATE``)."""
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(int(random_state.integers(2**63)))
    if isinstance(random_state, np.random.RandomState):  # scikit-learn's convention
        return np.random.SeedSequence(int(random_state.randint(2**31 - 1)))
    if random_state is None:
        return np.random.SeedSequence()
    return np.random.SeedSequence(int(random_state))


def stop_if_interrupted(result):
    """Raise KeyboardInterrupt if ``result`` (of :func:`optimize`) was interrupted.

    Loops over fits (cross-validation, experiments) call it after recording a
    result, so that Ctrl-C stops the loop instead of going on to the next fit.
    """
    if result.status == Status.INTERRUPTED:
        raise KeyboardInterrupt


def _check_max_features(max_features, n_features):
    if max_features is not None and max_features > n_features:
        raise ValueError(f"max_features must be None or an int in [1, {n_features}], "
                         f"got {max_features!r}")


def run_restart(problem, kind, tree, objective, method, max_iter, deadline, seed, callback,
                options, origin, incumbent=None, stop=None, others=()):
    """One restart (:func:`gto.engine._portfolio.run_restart`) under a stop flag; its
    :class:`~gto.engine._portfolio.RestartRecord`, None if stopped before it began.

    ``stop`` (:class:`~gto.utils._interrupt.StopRequest`) is polled between iterations,
    and Ctrl-C in this process sets it; the phases without iterations (the starts'
    LPs, the crossover, the refits) see it and ``deadline`` through
    :func:`gto.utils._interrupt.limits`.
    """
    if stop is None:
        with limits(deadline):
            return _run_one(problem, kind, tree, objective, method, max_iter, deadline, seed,
                            callback, options, origin, incumbent, others)
    if stop.is_set():
        return None
    with stop_on_sigint(stop), limits(deadline, stop):
        run = _run_one(problem, kind, tree, objective, method, max_iter, deadline, seed,
                       _polling(callback, stop), options, origin, incumbent, others)
    if run.status == Status.INTERRUPTED:  # a KeyboardInterrupt inside the search: stop all
        stop.set()
    if stop.is_set():
        run.status, run.message = Status.INTERRUPTED, Status.INTERRUPTED.message
    return run


def _polling(callback, stop):
    """The search callback: stop when asked to, else the user's callback."""

    def poll(iteration, state, value):
        if stop.is_set(every=16):
            return True
        return bool(callback(iteration, state, value)) if callback is not None else False

    return poll


#: the search settings optimize shares with GTOClassifier, declared once
SEARCH_CONSTRAINTS = {
    "objective": [StrOptions(set(WALK_OBJECTIVES))],
    "method": [StrOptions(set(METHODS))],
    "p": POWER,
    "max_iter": [Interval(Integral, 0, None, closed="left")],
    "time_limit": SECONDS,
    "restarts": [Interval(Integral, 1, None, closed="left")],
    "n_jobs": [Integral, None],
    "random_state": RANDOM_STATE,
    "verbose": ["verbose"],
    "categorical_features": [str, "array-like", None],  # "auto", "all", a name, names...
    "one_group": ["boolean"],
    "leaves": [StrOptions(set(LEAVES))],
}


@validate_params(
    {
        "tree": "no_validation",  # gto.Tree or fitted DecisionTreeClassifier: as_tree
        "X": "no_validation",  # numbers, categories, DataFrames: check_fit_data / encode
        "y": "no_validation",
        **SEARCH_CONSTRAINTS,
        "callback": [callable, None],
        "sample_weight": ["array-like", None],
        "init": [StrOptions(set(INITS))],
        "options": [dict, None],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_features": [Interval(Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def optimize(tree, X, y, objective="product", method="tabu", *, p=1, max_iter=10_000,
             time_limit=None, restarts=1, n_jobs=1, random_state=None, callback=None,
             sample_weight=None, init="auto", options=None, alpha=0.0, max_features=None,
             verbose=0, categorical_features=None, one_group=False, leaves="auto"):
    """Globally optimise the decisions of a fixed-structure tree (paper §5).

    Parameters
    ----------
    tree : gto.Tree or fitted sklearn DecisionTreeClassifier
        Structure to keep, and leaf classes (see ``leaves``); its splits are
        a starting point (all become oblique).
    X, y : training data.
    objective : "product" (eq. 19), "minimum" (eq. 17), "count" (eq. 15) or
        "lexicographic" (count first, then the minimum error).
    method : "tabu" (EPTS, Algorithm 5.2) or "frank-wolfe" (§5.1, product only).
    p : 1 or 2, the power on the decision errors.
    max_iter : tabu moves or Frank-Wolfe iterations per restart (the default
        tabu search may stop a restart earlier: see :mod:`gto.engine._portfolio`).
        Above COARSE_POINTS points the default tabu search runs coarse to
        fine: the restarts on a stratified subsample of COARSE_POINTS points,
        then one lexicographic walk on the full data from the best of them,
        of ``max_iter`` moves when ``time_limit`` is given, else at most
        ``max(1000, max_iter // 5)``, ending at a tree without errors, or after
        ``FINE_PATIENCE_SHARE`` of ``patience`` rounds' worth of moves without
        fewer errors (``options``).
    time_limit : seconds of wall time for the whole call, counted from its start
        (the set-up and the whole schedule: COARSE_SHARE of it on the subsample;
        the search checks the clock every few moves and then builds the result:
        at N = 76 800 the call ended 0.1-0.25 s after the limit); the best tree
        so far is returned
        when it runs out (likewise on Ctrl-C).
    restarts : number of starts, from the portfolio of :mod:`gto.engine._portfolio`:
        the ``init`` start, the greedy LP tree, CART of the same shape, the
        given tree, then kicks of the best tree so far alternating with
        random trees.  The first restart's later rounds start from those of
        the portfolio not among the restarts, and for a structure of depth
        >= 3 from the region start (:mod:`gto.engine._region_start`: each
        decision above the lowest level fitted as the gate between its
        subtrees by alternating fits), right after the greedy LP tree.  With
        ``options={"paper": True}``: the ``init`` start, the greedy tree if
        the first is the given tree, then random trees.
    n_jobs : joblib workers for the restarts (honours ``joblib.parallel_backend``);
        at most one per restart of a round and, on this machine, per core
        (:func:`gto.utils._workers.capped_jobs`).
    random_state : int, Generator or None; runs are reproducible from it.
    callback : ``callback(iteration, walker, value)``, True to stop; only with
        ``n_jobs=1``.
    sample_weight : per-point weights.
    init : "auto" (the tree if it has splits; else, with ``max_features=1``
        and a complete structure of depth <= 2 and
        :func:`gto.engine._axis.axis_work` at most ``AXIS_WORK_LIMIT``, the exact
        axis-aligned tree; else, with
        ``max_features`` and a complete structure, the CART tree; else the
        greedy LP tree), "tree", "greedy", "random", "cart"
        (scikit-learn's CART tree of the same depth, see
        :func:`gto.engine._starts.cart_tree`; ValueError unless the structure is
        complete) or "axis" (the axis-aligned tree with the fewest training
        errors, :func:`gto.engine._starts.axis_aligned_tree`; ValueError unless the
        structure is complete of depth 1 or 2).
    options : for ``method="tabu"``: ``{"paper": True}`` runs Algorithm 5.2
        exactly as published (one EPTS run per restart, docs/DESIGN.md §4); otherwise
        the iterated local search of :mod:`gto.engine._portfolio` with keys
        ``round_iter``, ``polish``, ``refine``, ``refine_rounds``, ``kick``,
        ``patience``, ``long_steps``, ``race``.  Other keys are EPTS
        parameters for :func:`tabu.search` (or, for Frank-Wolfe, keyword
        arguments of :func:`gto.engine._frank_wolfe.frank_wolfe`).
    alpha : float >= 0, weight of the L1 penalty ``alpha * sum |w|`` over all
        decisions on the internally standardised scale (docs/DESIGN.md §3b; with the
        margin fixed at 1 a wider margin and fewer features, as in the 1-norm
        SVM), added to the objective.  With ``alpha > 0`` the answer is the
        tree with the best penalised objective (not the fewest errors).
    max_features : None or int, the most nonzero weights per decision; 1
        gives axis-aligned trees.  Starts keep their largest weights (scaled
        units) and the search never exceeds the budget.

    ``alpha > 0``, ``max_features`` or ``init="cart"`` switch on sparse
    vertices (coordinate rows ``w_j = 0``, docs/DESIGN.md §3b): the search then runs
    over the polytope with ``w = w+ - w-`` on per-feature standardised data,
    and zero weights of the start stay zero.  (``max_features=n_features``
    gives sparse vertices without a cap.)
    verbose : 0 silent; 1 a progress bar (tqdm) over the iterations (over the
        restarts with ``n_jobs != 1``); 2 also one log line per restart on the
        ``"gto"`` logger (shown on stderr if logging is not configured).
    categorical_features, one_group : categorical columns of X ("auto":
        pandas category/object columns and non-numbers; indices or names)
        are one-hot encoded and the search runs on the encoded columns;
        ``one_group=True`` returns a tree with one feature per decision
        (subset tests on categories) on the original columns.  See
        :func:`gto.learners._one_group.optimize_categorical`.
    leaves : "auto" (default), "keep" or "free".  "keep": the leaves keep the
        given classes (the hypothesis class of the paper: structure and labels
        fixed).  "free": the leaf classes are chosen too
        (:mod:`gto.learners._leaves`): the weighted majority of the points
        reaching each leaf, re-chosen after each search, and a portfolio over
        the label patterns of the shape; never more training errors than the
        given tree.  "auto": "free" for a tree with splits (a CART tree or a
        tree of one's own handed in to be made better, whose leaf classes came
        with its old splits), "keep" for a bare structure (zero weights, e.g.
        ``Tree.from_structure`` or ``Tree.complete``, whose labels are the
        user's choice).  With "free" the result also has ``leaf_patterns``
        (the labellings searched) and ``time_limit`` is shared among them.

    Returns
    -------
    scipy.optimize.OptimizeResult with ``tree`` (fewest training errors, ties
    by objective), ``n_errors``, ``fun`` (objective of ``tree``), ``tree_min_fun``
    and ``min_fun`` (best objective seen), ``start_n_errors``, ``nit``,
    ``history`` (structured array: iteration, value, n_errors, mode, of the
    winning restart; one row per move and one per round's start; mode
    "polish" rows walk the lexicographic objective, their value is that one), ``restarts``
    (per-restart summaries, each with its
    ``history``), ``time`` (seconds),
    ``time_to_best`` (seconds until ``tree`` was found), ``status``,
    ``message``, ``success``.  ``fun`` and ``min_fun`` include the penalty;
    ``penalty`` is its part in ``fun`` (0 for ``alpha=0``); ``n_errors`` is
    always the training misclassified count and :func:`gto.error` the
    paper's error without the penalty.  Points of a class with no leaf in the
    tree (more classes than leaves) are misclassified whatever the decisions:
    the search runs on the others, ``fun`` is theirs, and the counts
    (``n_errors``, ``start_n_errors``, the histories) include those points, whose
    own count is ``leafless_errors`` (0 when every class has a leaf).
    """
    if categorical_features is not None or one_group or non_numeric(X):
        return optimize_categorical(
            tree, X, y, categorical_features=categorical_features, one_group=one_group,
            objective=objective, method=method, p=p, max_iter=max_iter, time_limit=time_limit,
            restarts=restarts, n_jobs=n_jobs, random_state=random_state, callback=callback,
            sample_weight=sample_weight, init=init, options=options, alpha=alpha,
            max_features=max_features, verbose=verbose, leaves=leaves,
        )
    t0, origin = time.perf_counter(), time.time()  # the time limit counts the set-up too
    tree = as_tree(tree)
    call = _Call(objective, method, p, max_iter, time_limit, restarts, n_jobs, random_state,
                 callback, init, options, alpha, max_features, verbose)
    _validate(tree, call)
    if check_leaves(leaves, tree) == "free":  # leaf classes chosen too (gto.learners._leaves)
        return _fit_free(tree, X, y, sample_weight, call)
    checked = check_fit_data(tree, X, y, sample_weight, leafless=True)
    if not np.isin(checked[1], tree.leaf_classes).all():  # errors whatever the decisions
        return _fit_leaf_classes(tree, X, sample_weight, call, checked)
    used = _used_part(tree, np.unique(checked[1][checked[2] > 0]))
    if used is not None:  # subtrees holding only classes absent from y: fit the rest
        return _fit_used_part(tree, used, X, y, sample_weight, call, checked)
    plan = _plan(tree, X, y, sample_weight, call, origin)
    runs, interrupted = _run_rounds(plan, tree, call, origin)
    res = _assemble(plan, tree, X, call, runs, interrupted, t0)
    if res.status == Status.INTERRUPTED:
        warnings.warn("gto.optimize was interrupted (Ctrl-C): returning the best tree so far "
                      f"({len(runs)} of {restarts} restart(s) ran)", RuntimeWarning,
                      stacklevel=3)  # the caller, above validate_params' wrapper
    return res


@dataclass(frozen=True)
class _Call:
    """The search settings of one :func:`optimize` call (its arguments but the data)."""

    objective: str
    method: str
    p: int
    max_iter: int
    time_limit: float | None
    restarts: int
    n_jobs: int
    random_state: object
    callback: object
    init: str
    options: dict | None
    alpha: float
    max_features: int | None
    verbose: int


@dataclass
class _Plan:
    """The prepared problem and the restarts' starts, seeds and deadline."""

    problem: TreeProblem
    kinds: list  # start kind of each restart (gto.engine._portfolio.start_kinds)
    others: list  # start kinds of the first restart's later rounds, before its kicks
    seeds: list  # one SeedSequence per restart, and one for the coarse-to-fine subsample
    deadline: float | None  # wall-clock end (time.time()), None without a time limit
    start_errors: float  # the given tree's (weighted) training errors
    paper: bool  # Algorithm 5.2 as published


def _validate(tree, call):
    """The checks of the arguments beyond their declared constraints (ValueError naming
    the argument)."""
    _check_combinations(call.objective, call.method, call.p)
    check_n_jobs(call.n_jobs)  # joblib's 0 workers is no count
    if call.callback is not None and call.n_jobs != 1 and call.restarts > 1:
        raise ValueError("callback needs n_jobs=1 (it cannot reach worker processes)")
    _check_max_features(call.max_features, tree.n_features)
    if call.method == "frank-wolfe" and call.max_features is not None:
        raise ValueError("max_features needs method='tabu' (Frank-Wolfe iterates are not sparse)")


def _fit_used_part(tree, used, X, y, sample_weight, call, checked):
    """:func:`optimize` on the smaller tree ``used[0]``; the decisions it drops (their
    subtrees hold no class of y) come back as given."""
    res = _again(call, used[0], X, y, sample_weight)
    res.tree = _expand(tree, res.tree, used[1])
    res.tree_min_fun = _expand(tree, res.tree_min_fun, used[1])
    res.tree.record_training(*checked, feature_names=res.tree.feature_names, target=tree.target)
    return res


def _fit_leaf_classes(tree, X, sample_weight, call, checked):
    """:func:`optimize` on the points whose class has a leaf.  A point
    of a class without a leaf has no triple (DESIGN §2): it is misclassified
    whatever the decisions, so it cannot change the search.  The result counts those
    points too (``n_errors``, ``start_n_errors``, the histories; their own count in
    ``leafless_errors``) and its trees record all the training data (their
    ``predict_proba`` has a column per class); ``fun`` is the objective over the
    other points."""
    Xc, yc, wc = checked
    has_leaf, lost = leaf_class_points(tree, yc, wc, searched=True)
    res = _again(call, tree, Xc[has_leaf], yc[has_leaf],
                 None if sample_weight is None else wc[has_leaf])
    lost = int(round(lost)) if np.all(wc == 1) else lost  # as _result counts
    res.n_errors, res.start_n_errors = res.n_errors + lost, res.start_n_errors + lost
    res.leafless_errors = lost
    res.history = _errors_shifted(res.history, lost)
    for run in res.restarts:
        run["n_errors"] = run["n_errors"] + lost
        run["history"] = _errors_shifted(run["history"], lost)
    names = _column_names(X, res.tree.feature_names)
    for fitted in (res.tree, res.tree_min_fun):
        fitted.record_training(Xc, yc, None if sample_weight is None else wc,
                               feature_names=names, target=tree.target)
    n_classes = len(np.unique(yc[~has_leaf]))
    res.message += (f"; {int(np.sum(~has_leaf))} point(s) of {n_classes} class(es) without "
                    "a leaf are errors whatever the decisions (counted in n_errors)")
    return res


def _errors_shifted(history, lost):
    """A search history with ``lost`` more errors in every row (None stays None)."""
    if history is None or "n_errors" not in (history.dtype.names or ()):
        return history
    history = history.copy()
    history["n_errors"] += lost
    return history


def _fit_free(tree, X, y, sample_weight, call):
    """``leaves="free"``: :func:`gto.learners._leaves.optimize_free` over searches of
    this call's settings with the leaves of each labelling kept."""
    def search(labelled, limit):
        return _again(call, labelled, X, y, sample_weight, time_limit=limit)

    return optimize_free(search, tree, X, y, sample_weight, call.time_limit, call.alpha)


def _again(call, tree, X, y, sample_weight, **changes):
    """:func:`optimize` of ``tree`` with this call's settings (but ``changes``), the
    leaves kept."""
    settings = {f.name: getattr(call, f.name) for f in fields(call)}  # no copies (callback, rng)
    return optimize(tree, X, y, sample_weight=sample_weight, leaves="keep",
                    **{**settings, **changes})


def _plan(tree, X, y, sample_weight, call, origin):
    """Prepare the problem (sparse vertices for a penalty, a feature budget or a CART or
    axis start, docs/DESIGN.md §3b) and plan the restarts: the first start from ``init``
    ("auto": the tree, else the exact axis-aligned tree, CART or the greedy LP tree),
    then the portfolio of :mod:`gto.engine._portfolio`."""
    schedule, _ = split_options(call.method, call.options)
    complete = is_complete(tree)
    shallow = is_shallow(tree)
    if call.init == "cart" and not complete:
        raise ValueError("init='cart' needs a complete tree structure (all leaves at one depth)")
    if call.init == "axis" and not shallow:
        raise ValueError("init='axis' needs a complete tree structure of depth 1 or 2")
    max_features = call.max_features
    sparse = call.alpha > 0 or max_features is not None or call.init in ("cart", "axis")
    problem = TreeProblem(tree, X, y, sample_weight, call.p, coordinate_rows=sparse,
                          alpha=call.alpha, max_features=max_features)
    start_errors = tree.n_errors(problem.data.X_orig, problem.data.y_orig, problem.data.w_orig)
    has_tree = bool(np.any(tree.W != 0))
    first = call.init
    if call.init == "auto":
        first = "tree" if has_tree else (
            "axis" if max_features == 1 and shallow
            and axis_work(problem.data.X_orig) <= AXIS_WORK_LIMIT else
            "cart" if max_features is not None and complete else "greedy")
    kinds = start_kinds(first, call.restarts, schedule["paper"], has_tree, complete,
                        cart_second=first == "greedy" and max_features is not None and complete)
    others = round_starts(kinds, schedule["paper"], has_tree, complete, needs_regions(tree))
    seeds = _seed_sequence(call.random_state).spawn(call.restarts + 1)
    deadline = None if call.time_limit is None else origin + call.time_limit
    return _Plan(problem, kinds, others, seeds, deadline, start_errors, schedule["paper"])


def _run_rounds(plan, tree, call, origin):
    """Run the planned restarts (coarse to fine on large data) under one Ctrl-C handler;
    ``(runs, interrupted)``, the runs kept when interrupted."""
    stop = StopRequest()
    sequential = call.n_jobs == 1 or call.restarts == 1
    bar = Progress(total=call.restarts * call.max_iter if sequential else call.restarts,
                   desc="gto.optimize", quiet=not call.verbose, force=True)
    track = (bar, call.verbose, sequential, call.restarts, stop, plan.others)
    options = dict(call.options or {})
    if call.callback is not None and call.method == "tabu":  # the caller's callback sees every
        options.setdefault("callback_every", 1)  # move (a compiled loop: one move a call)
    args = (tree, call.objective, call.method, call.max_iter, call.callback, options, origin)
    runs = []
    with bar, verbose_logging(call.verbose):
        try:
            with stop_on_sigint(stop):
                if plan.paper or plan.problem.data.N <= COARSE_POINTS:
                    _run_starts(runs, plan.problem, plan.kinds, plan.seeds[:-1], plan.deadline,
                                call.n_jobs, track, *args)
                else:
                    _coarse_to_fine(runs, plan.problem, plan.kinds, plan.seeds, plan.deadline,
                                    call.n_jobs, call.time_limit, track, *args)
        except KeyboardInterrupt:  # a handler of the caller's own, or Ctrl-C outside the searches
            stop.set()
        finally:
            stop.cleanup()
    return runs, stop.is_set()


def _assemble(plan, tree, X, call, runs, interrupted, t0):
    """The result of the runs, its tree recording the training data it was fitted on."""
    problem = plan.problem
    res = _result(problem, tree, call.objective, plan.start_errors, runs, interrupted,
                  call.time_limit, t0)
    names = _column_names(X, tree.feature_names)
    res.tree.record_training(problem.data.X_orig, problem.data.y_orig, problem.data.w_orig, feature_names=names,
                             target=tree.target)
    return res


def _column_names(X, default):
    """A DataFrame's column names as strings, else ``default``."""
    return [str(c) for c in X.columns] if hasattr(X, "columns") else default


def _used_part(tree, present):
    """``(smaller tree, kept decisions)`` without the subtrees that hold no class of
    ``present`` (each becomes one of its leaves), or None if every decision is used.

    Such a subtree has no triples: no point wants to reach it, so its decisions
    cannot change any error and stay as given.
    """
    children, labels = tree.children, tree.leaf_classes
    present = set(present.tolist())

    def used(child):
        kind, i = child
        if kind == "l":
            return labels[i].item() in present
        return used(children[i][0]) or used(children[i][1])

    def first_leaf(child):
        kind, i = child
        return labels[i].item() if kind == "l" else first_leaf(children[i][0])

    kept = []

    def build(child):
        kind, i = child
        if kind == "l":
            return labels[i].item()
        if not used(child):
            return first_leaf(child)
        kept.append(i)
        return (build(children[i][0]), build(children[i][1]))

    spec = build(("d", 0))
    if len(kept) == tree.n_decisions:
        return None
    smaller = Tree(spec, tree.n_features, W=tree.W[kept], gamma=tree.gamma[kept])
    smaller.feature_names, smaller.target = tree.feature_names, tree.target
    return smaller, np.array(kept)


def _expand(tree, fitted, kept):
    """``tree`` with the decisions ``kept`` taken from the fitted smaller tree."""
    full = tree.copy()
    W, gamma = full.W, full.gamma
    W[kept], gamma[kept] = fitted.W, fitted.gamma
    full.W, full.gamma = W, gamma
    full.feature_names = fitted.feature_names
    return full


def _run_starts(runs, problem, kinds, seeds, deadline, n_jobs, track, tree, objective, method,
                max_iter, callback, options, origin):
    """The restarts in rounds (joblib within a round): the starts before the first kick,
    then pairs; a kick starts from the best tree of the rounds before, so the result
    does not depend on ``n_jobs``.  Appends to ``runs`` (kept on Ctrl-C); ``track``:
    the progress bar, verbosity, whether restarts run one by one, and their number."""
    bar, verbose, sequential, restarts, stop, others = track
    first_kick = kinds.index("kick") if "kick" in kinds else len(kinds)
    bounds = [0] + list(range(first_kick, len(kinds), 2)) + [len(kinds)]
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        if lo == hi:
            continue
        incumbent = (min(runs, key=lambda r: (r.n_errors, r.fun)).Theta_count
                     if runs else None)
        tick = (lambda r: bar.iteration_callback(r * max_iter)) if sequential and verbose else (
            lambda r: None)
        jobs = [delayed(run_restart)(problem, kind, tree, objective, method, max_iter, deadline,
                                     seed, _chain(callback, tick(r)), options, origin,
                                     incumbent if kind == "kick" else None, stop,
                                     others if r == 0 else ())
                for r, kind, seed in zip(range(lo, hi), kinds[lo:hi], seeds[lo:hi])]
        if n_jobs == 1 or len(jobs) == 1:
            for job in jobs:
                run = job[0](*job[1], **job[2])
                if run is None:
                    return runs
                runs.append(run)
                _report(runs, restarts, verbose, bar, len(runs) * (max_iter if sequential else 1))
                if stop.is_set() or (deadline is not None and time.time() > deadline):
                    return runs
        else:
            workers = capped_jobs(n_jobs, len(jobs))
            with no_workers_left():
                for run in Parallel(n_jobs=workers, return_as="generator")(jobs):
                    if run is not None:
                        runs.append(run)
                        _report(runs, restarts, verbose, bar, len(runs))
        if stop.is_set() or (deadline is not None and time.time() > deadline):
            break
    return runs


def _coarse_to_fine(runs, problem, kinds, seeds, deadline, n_jobs, time_limit, track, tree,
                    objective, method, max_iter, callback, options, origin):
    """Large data: the restarts on a stratified subsample of COARSE_POINTS points, then
    one search on the full data from the best subsample tree (its vertex is never
    worse, Theorem 4.1).  The subsample gets COARSE_SHARE of the time limit; the
    full-data search is one EPTS walk on the lexicographic objective (count first;
    with a penalty or a feature budget, on ``objective``), without LP refits or kicks
    (each would cost a full-data LP or crossover), of ``max_iter`` moves with a time
    limit, else ``max(1000, max_iter // 5)``, ending early (:func:`_patience`): at a
    tree without errors, or after ``FINE_PATIENCE_SHARE`` of the restarts' ``patience``
    rounds' worth of moves without fewer errors (not with a time limit)."""
    from sklearn.model_selection import train_test_split

    X, y, w = problem.data.X_orig, problem.data.y_orig, problem.data.w_orig
    _, counts = np.unique(y, return_counts=True)
    stratify = y if counts.min() >= 2 else None
    idx, _ = train_test_split(np.arange(len(y)), train_size=COARSE_POINTS, stratify=stratify,
                              random_state=np.random.default_rng(seeds[-1]).integers(2**31))
    sub = TreeProblem(problem.layout.template, X[idx], y[idx], w[idx], problem.p,
                      coordinate_rows=problem.blocks.n_coord > 0, alpha=problem.blocks.alpha,
                      max_features=problem.blocks.max_features)
    coarse_deadline = None if time_limit is None else origin + COARSE_SHARE * time_limit
    coarse = _run_starts([], sub, kinds, seeds[:-1], coarse_deadline, n_jobs, track, tree,
                         objective, method, max_iter, callback, options, origin)
    if not coarse:
        return runs
    best = sub.tree_of(min(coarse, key=lambda r: (r.n_errors, r.fun)).Theta_count)
    fine_iter = max_iter if time_limit is not None else max(1000, max_iter // 5)
    # one walk from the subsample's best vertex, counts first (it was refitted already;
    # every new round would cost a crossover on the full data)
    dense = problem.blocks.alpha == 0 and problem.blocks.n_coord == 0
    walk = "lexicographic" if dense and objective in ("product", "minimum") else objective
    schedule, _ = split_options(method, options)
    patience = None
    if method == "tabu" and time_limit is None and schedule["patience"] is not None:
        patience = fine_patience(schedule["patience"], round_lengths(schedule, problem.data.N))
    fine_options = {**options, "refine": False, "kick": False, "round_iter": max(fine_iter, 1),
                    "polish": 0}
    walk_callback = callback
    if patience is not None:
        walk_callback = StoppingRule(callback, PATIENCE_EVERY, _patience(patience))
        fine_options = walk_callback.options(fine_options)
    fine = run_restart(problem, "tree", best, walk, method, fine_iter, deadline, seeds[-1],
                       walk_callback, fine_options, origin, None, track[4])
    if fine is None:  # stopped before the full-data search: keep the subsample's runs' count
        return runs
    if patience is not None:  # a stopping rule, not the caller's callback
        walk_callback.settle(fine)
    if walk != objective:  # the walk's values are lexicographic: score its tree on ours
        fine.Theta_fun = fine.Theta_count
        fine.fun = problem.value(objective, fine.Theta_count)
    fine.coarse = [{"start": r.start, "n_errors": r.n_errors, "nit": r.nit} for r in coarse]
    fine.nit += sum(r.nit for r in coarse)
    runs.append(fine)
    return runs


def fine_patience(patience, lengths):
    """Moves without fewer errors after which the full-data walk ends: ``FINE_PATIENCE_SHARE``
    of ``patience`` rounds of ``lengths`` (``(round_iter, polish)``) moves, at least one."""
    return max(1, int(FINE_PATIENCE_SHARE * patience * sum(lengths)))


def _patience(patience):
    """The full-data walk's stopping rule (:func:`_coarse_to_fine`), judged every
    ``PATIENCE_EVERY`` moves (:class:`~gto.engine._stopping.StoppingRule`): stop at a
    tree without errors, or once ``patience`` moves passed without fewer errors."""
    seen = {"count": np.inf, "at": 0}

    def judge(iteration, walker):
        count = walker.best_count[0]
        if count < seen["count"]:
            seen["count"], seen["at"] = count, iteration
        if count <= 0:
            return "no errors left"
        if iteration - seen["at"] >= patience:
            return f"no fewer errors in {iteration - seen['at']} moves"
        return None

    return judge


def _chain(callback, tick):
    """One callback calling both (the user's answer decides whether to stop)."""
    if tick is None or callback is None:
        return callback or tick

    def both(iteration, walker, value):
        tick(iteration, walker, value)
        return callback(iteration, walker, value)

    return both


def _report(runs, restarts, verbose, bar, count):
    """Log the restart that just finished and move the bar."""
    r = runs[-1]
    logger.log(logging.INFO if verbose >= 2 else logging.DEBUG,
               "restart %d/%d (%s start): %s errors, objective %.6g, %d iterations, %.2f s; %s",
               len(runs), restarts, r.start, f"{r.n_errors:g}", r.fun, r.nit, r.time["total"],
               r.message)
    bar.set(count, f"fewest errors {min(x.n_errors for x in runs):g}")


def _result(problem, tree, objective, start_errors, runs, interrupted, time_limit, t0):
    X, y, w = problem.data.X_orig, problem.data.y_orig, problem.data.w_orig
    weighted = not np.all(w == 1)

    def errors(t):
        e = t.n_errors(X, y, w)
        return e if weighted else int(round(e))

    summaries = [r.summary() for r in runs]
    if runs:
        best = min(runs, key=lambda r: (r.n_errors, _finite(r.fun)))
        found = problem.tree_of(best.Theta_count, snap=True)
        by_fun = min(runs, key=lambda r: _finite(r.fun))
        tree_min_fun, min_fun = problem.tree_of(by_fun.Theta_fun, snap=True), by_fun.fun
        if not np.isfinite(min_fun):  # the walker's running product overflowed
            min_fun = _objective_value(problem, tree_min_fun, objective) + problem.penalty(
                problem.theta_of(tree_min_fun))
        if problem.blocks.alpha > 0:  # the penalised objective is what is minimised
            best, found = by_fun, tree_min_fun.copy()
        history, nit = best.history, sum(r.nit for r in runs)
        time_to_best = best.time_to_best
    else:
        found, tree_min_fun, min_fun, history, nit = tree.copy(), tree.copy(), np.nan, None, 0
        time_to_best = None
    n_errors = errors(found)
    within = problem.blocks.max_features is None or np.all(
        np.count_nonzero(tree.W, axis=1) <= problem.blocks.max_features)
    if n_errors > start_errors and problem.blocks.alpha == 0 and within:
        # round-off at a boundary: never return worse than given
        found, n_errors = tree.copy(), errors(tree)
    penalty = problem.penalty(problem.theta_of(found))
    fun = _objective_value(problem, found, objective) + penalty
    if interrupted or any(r.status == Status.INTERRUPTED for r in runs):
        status, message = Status.INTERRUPTED, "interrupted; best tree so far returned"
    elif time_limit is not None and (time.perf_counter() - t0 >= time_limit or any(
            r.status == Status.TIME_LIMIT for r in runs)):
        status, message = Status.TIME_LIMIT, "time limit reached; best tree so far returned"
    else:
        status, message = Status.COMPLETED, f"{len(runs)} restart(s) finished"
    return OptimizeResult(
        tree=found, n_errors=n_errors, fun=fun, penalty=penalty, tree_min_fun=tree_min_fun,
        min_fun=float(min_fun), start_n_errors=errors(tree) if weighted else int(start_errors),
        leafless_errors=0,
        nit=nit, history=history, restarts=summaries, status=status, message=message,
        success=bool(runs), time=time.perf_counter() - t0, time_to_best=time_to_best,
    )


def _finite(value):
    """Sort key: NaN (an overflowed objective) last."""
    return value if value == value else np.inf


def _objective_value(problem, tree, objective):
    return problem.value(objective, problem.theta_of(tree))


def optimize_categorical(tree, X, y, *, categorical_features=None, one_group=False,
                         sample_weight=None, **kwargs):
    """:func:`gto.optimize` on the one-hot encoding of X's categorical columns.

    Returns the optimize result with ``encoding`` (use
    ``res.encoding.transform(X)`` to predict with an oblique ``res.tree``).
    With ``one_group=True`` ``res.tree`` is the one-feature-per-decision tree
    on the original columns (predicts on X directly), ``res.oblique_tree``
    the GTO tree on the encoded columns, and ``n_errors`` is recounted.
    """
    tree = as_tree(tree)
    spec = "auto" if categorical_features is None else categorical_features
    enc = encode(X, spec, bin_numeric=False)
    Xe = enc.transform(X)
    if tree.n_features != enc.n_encoded:
        tree = Tree(tree.structure, enc.n_encoded)  # splits on the original columns do not carry over
    res = optimize(tree, Xe, y, sample_weight=sample_weight, **kwargs)
    res.encoding = enc
    if one_group:
        left = res.tree.decision_values(Xe) <= 0
        res.oblique_tree = res.tree
        # the searched tree's leaf classes (chosen anew with leaves="free")
        res.tree = one_group_tree(left, res.oblique_tree.structure, enc, X, y, sample_weight)
        res.n_errors = res.tree.n_errors(X, y, sample_weight)
        names = _column_names(X, None)
        res.tree.record_training(X, y, sample_weight, feature_names=names)
        res.tree.categories = {c.index: tuple(c.values.tolist()) for c in enc.columns
                               if c.kind == NOMINAL}  # kept in the model file
    return res
