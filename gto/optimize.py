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
import numbers
import time

import numpy as np
from joblib import Parallel, delayed
from scipy.optimize import OptimizeResult

import tabu
from tabu.epts import MODES as EPTS_MODES

from .frank_wolfe import frank_wolfe
from .objectives import OBJECTIVES, check_objective
from .problem import WALK_OBJECTIVES, TreeProblem
from .progress import Progress, logger, verbose_logging
from .starts import axis_aligned_tree, cart_tree, greedy_theta, is_complete, random_start
from .tree import as_tree
from .walker import walker_from_theta

METHODS = ("tabu", "frank-wolfe")
INITS = ("auto", "tree", "greedy", "random", "cart", "axis")
HISTORY_DTYPE = np.dtype(
    [("iteration", np.int64), ("value", np.float64), ("n_errors", np.float64), ("mode", "U9")]
)


def _check_args(objective, method, p, max_iter, restarts, time_limit, init):
    if objective not in WALK_OBJECTIVES:
        raise ValueError(f"objective must be one of {WALK_OBJECTIVES}, got {objective!r}")
    if objective in OBJECTIVES:
        check_objective(objective, p)
    elif p not in (1, 2):
        raise ValueError(f"p must be 1 or 2, got {p!r}")
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if method == "frank-wolfe" and objective != "product":
        raise ValueError("Frank-Wolfe needs the differentiable product objective")
    for name, value, low in (("max_iter", max_iter, 0), ("restarts", restarts, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an int >= {low}, got {value!r}")
    if time_limit is not None and not (time_limit > 0):
        raise ValueError(f"time_limit must be positive seconds, got {time_limit!r}")
    if init not in INITS:
        raise ValueError(f"init must be one of {INITS}, got {init!r}")


def _check_sparsity(alpha, max_features, n_features):
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) or not (
            np.isfinite(alpha) and alpha >= 0):
        raise ValueError(f"alpha must be a finite number >= 0, got {alpha!r}")
    if max_features is not None and (
            isinstance(max_features, bool) or not isinstance(max_features, numbers.Integral)
            or not 1 <= max_features <= n_features):
        raise ValueError(f"max_features must be None or an int in [1, {n_features}], "
                         f"got {max_features!r}")


def _start_theta(problem, kind, tree, rng):
    if kind == "tree":
        return problem.theta_of(tree)
    if kind == "cart":
        return problem.theta_of(cart_tree(problem, int(rng.integers(2**31))))
    if kind == "axis":
        return problem.theta_of(axis_aligned_tree(problem))
    if kind == "greedy":
        return greedy_theta(problem, rng)
    return random_start(problem, rng)


def _history(values, counts, modes):
    h = np.zeros(len(values), dtype=HISTORY_DTYPE)
    h["iteration"] = np.arange(len(values))
    h["value"], h["n_errors"], h["mode"] = values, counts, modes
    return h


def run_restart(problem, kind, tree, objective, method, max_iter, deadline, seed, callback,
                options, origin):
    """One restart; returns a plain dict (picklable for joblib workers).

    ``origin`` is the wall-clock start of the whole call, for ``time_to_best``.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    Theta0 = _start_theta(problem, kind, tree, rng)
    walk_objective = "product" if method == "frank-wolfe" else objective
    Z0 = problem.X1 @ Theta0.T
    walker = walker_from_theta(problem, Theta0, problem.objective(walk_objective, Z0), rng)
    t_start = time.perf_counter() - t0
    remaining = None if deadline is None else max(deadline - time.time(), 1e-3)
    if method == "tabu":
        res = tabu.search(
            walker, max_iter=max_iter, random_state=rng, time_limit=remaining,
            callback=callback, **options,
        )
        count, _, Theta_count = walker.best_count
        found_at = walker.best_count_time
        Theta_fun = res.x.reshape(problem.D, problem.m)
        h = res.history
        modes = np.array(EPTS_MODES)[h["mode"]]
        counts = np.asarray(walker.counts[: len(h)], dtype=float)
        history = _history(h["value"], counts, modes)
        fun, nit, status, message = float(res.fun), int(res.nit), int(res.status), res.message
    else:
        fw_callback = None if callback is None else (lambda k, Th, v: callback(k, None, v))
        Theta, hist, status, message, fewest = frank_wolfe(
            problem, walker.blocks, max_iter=max_iter, time_limit=remaining,
            callback=fw_callback, **options,
        )
        final = walker_from_theta(problem, Theta, walker.objective, rng)
        # the iterate with the fewest errors, moved to a vertex no worse (Theorem 4.1)
        fewest_vertex = walker_from_theta(problem, fewest[2], walker.objective, rng)
        candidates = [(*walker.best_count, walker.best_count_time),
                      (*final.best_count, final.best_count_time),
                      (*fewest_vertex.best_count, fewest[3])]
        count, _, Theta_count, found_at = min(candidates, key=lambda c: c[:2])
        Theta_fun, fun = final.theta(), final.value
        history = _history(hist[:, 1], hist[:, 2], np.full(len(hist), "fw"))
        nit = len(hist) - 1
    return {
        "start": kind,
        "Theta_count": Theta_count,
        "Theta_fun": Theta_fun,
        "fun": fun,
        "n_errors": count,
        "nit": nit,
        "status": status,
        "message": message,
        "history": history,
        "time": {"start": t_start, "total": time.perf_counter() - t0},
        "time_to_best": found_at - origin,
    }


def optimize(tree, X, y, objective="product", method="tabu", *, p=1, max_iter=10_000,
             time_limit=None, restarts=1, n_jobs=1, random_state=None, callback=None,
             sample_weight=None, init="auto", options=None, alpha=0.0, max_features=None,
             verbose=0):
    """Globally optimise the decisions of a fixed-structure tree (paper §5).

    Parameters
    ----------
    tree : gto.Tree or fitted sklearn DecisionTreeClassifier
        Structure and leaf classes to keep; its splits are a starting point
        (all become oblique).
    X, y : training data.
    objective : "product" (eq. 19), "minimum" (eq. 17), "count" (eq. 15) or
        "lexicographic" (count first, then the minimum error).
    method : "tabu" (EPTS, Algorithm 5.2) or "frank-wolfe" (§5.1, product only).
    p : 1 or 2, the power on the decision errors.
    max_iter : tabu moves or Frank-Wolfe iterations per restart.
    time_limit : seconds of wall time for the whole call; the best tree so far
        is returned when it runs out (likewise on Ctrl-C).
    restarts : number of starts; the first from ``init``, the others random
        (the second is the greedy LP tree when the first is the given, CART or
        axis-aligned tree, and CART after the greedy one with ``max_features``
        on a complete structure).
    n_jobs : joblib workers for the restarts (honours ``joblib.parallel_backend``).
    random_state : int, Generator or None; runs are reproducible from it.
    callback : ``callback(iteration, walker, value)``, True to stop; only with
        ``n_jobs=1``.
    sample_weight : per-point weights.
    init : "auto" (the tree if it has splits; else, with ``max_features=1``
        and a complete structure of depth <= 2, the exact axis-aligned tree;
        else, with ``max_features`` and a complete structure, the CART tree;
        else the greedy LP tree), "tree", "greedy", "random", "cart"
        (scikit-learn's CART tree of the same depth, see
        :func:`gto.starts.cart_tree`; ValueError unless the structure is
        complete) or "axis" (the axis-aligned tree with the fewest training
        errors, :func:`gto.starts.axis_aligned_tree`; ValueError unless the
        structure is complete of depth 1 or 2).
    options : extra keyword arguments for :func:`tabu.search` or
        :func:`gto.frank_wolfe.frank_wolfe`.
    alpha : float >= 0, weight of the L1 penalty ``alpha * sum |w|`` over all
        decisions on the internally standardised scale (DESIGN §3b; with the
        margin fixed at 1 a wider margin and fewer features, as in the 1-norm
        SVM), added to the objective.  With ``alpha > 0`` the answer is the
        tree with the best penalised objective (not the fewest errors).
    max_features : None or int, the most nonzero weights per decision; 1
        gives axis-aligned trees.  Starts keep their largest weights (scaled
        units) and the search never exceeds the budget.

    ``alpha > 0``, ``max_features`` or ``init="cart"`` switch on sparse
    vertices (coordinate rows ``w_j = 0``, DESIGN §3b): the search then runs
    over the polytope with ``w = w+ - w-`` on per-feature standardised data,
    and zero weights of the start stay zero.  (``max_features=n_features``
    gives sparse vertices without a cap.)
    verbose : 0 silent; 1 a progress bar (tqdm) over the iterations (over the
        restarts with ``n_jobs != 1``); 2 also one log line per restart on the
        ``"gto"`` logger (shown on stderr if logging is not configured).

    Returns
    -------
    scipy.optimize.OptimizeResult with ``tree`` (fewest training errors, ties
    by objective), ``n_errors``, ``fun`` (objective of ``tree``), ``tree_min_fun``
    and ``min_fun`` (best objective seen), ``start_n_errors``, ``nit``,
    ``history`` (structured array: iteration, value, n_errors, mode, of the
    winning restart), ``restarts`` (per-restart summaries, each with its
    ``history``), ``time`` (seconds),
    ``time_to_best`` (seconds until ``tree`` was found), ``status``,
    ``message``, ``success``.  ``fun`` and ``min_fun`` include the penalty;
    ``penalty`` is its part in ``fun`` (0 for ``alpha=0``); ``n_errors`` is
    always the training misclassified count and :func:`gto.error` the
    paper's error without the penalty.
    """
    t0 = time.perf_counter()
    tree = as_tree(tree)
    _check_args(objective, method, p, max_iter, restarts, time_limit, init)
    if callback is not None and n_jobs != 1 and restarts > 1:
        raise ValueError("callback needs n_jobs=1 (it cannot reach worker processes)")
    _check_sparsity(alpha, max_features, tree.n_features)
    if method == "frank-wolfe" and max_features is not None:
        raise ValueError("max_features needs method='tabu' (Frank-Wolfe iterates are not sparse)")
    complete = is_complete(tree)
    shallow = complete and tree.sides.shape[1] <= 3
    if init == "cart" and not complete:
        raise ValueError("init='cart' needs a complete tree structure (all leaves at one depth)")
    if init == "axis" and not shallow:
        raise ValueError("init='axis' needs a complete tree structure of depth 1 or 2")
    sparse = alpha > 0 or max_features is not None or init in ("cart", "axis")
    problem = TreeProblem(tree, X, y, sample_weight, p, coordinate_rows=sparse, alpha=alpha,
                          max_features=max_features)
    start_errors = tree.n_errors(problem.X_orig, problem.y_orig, problem.w_orig)
    first = init
    if init == "auto":
        first = "tree" if np.any(tree.W != 0) else (
            "axis" if max_features == 1 and shallow else
            "cart" if max_features is not None and complete else "greedy")
    # the second start: the greedy LP tree, or CART after it for a sparse search
    kinds = [first] + (["greedy"] if first in ("tree", "cart", "axis") else
                       ["cart"] if first == "greedy" and max_features is not None and complete
                       else [])
    kinds = (kinds + ["random"] * restarts)[:restarts]
    seeds = np.random.SeedSequence(
        random_state if not isinstance(random_state, np.random.Generator)
        else random_state.integers(2**63)
    ).spawn(restarts)
    origin = time.time()
    deadline = None if time_limit is None else origin + time_limit
    sequential = n_jobs == 1 or restarts == 1
    bar = Progress(total=restarts * max_iter if sequential else restarts, desc="gto.optimize",
                   quiet=not verbose, force=True)
    jobs = [
        delayed(run_restart)(problem, kind, tree, objective, method, max_iter, deadline, seed,
                             _chain(callback, bar.iteration_callback(r * max_iter)
                                    if sequential and verbose else None),
                             dict(options or {}), origin)
        for r, (kind, seed) in enumerate(zip(kinds, seeds))
    ]
    runs, interrupted = [], False
    with bar, verbose_logging(verbose):
        try:
            if sequential:
                for job in jobs:
                    runs.append(job[0](*job[1], **job[2]))
                    _report(runs, restarts, verbose, bar, len(runs) * max_iter)
                    if runs[-1]["status"] == 3 or (deadline is not None
                                                   and time.time() > deadline):
                        break
            else:
                for run in Parallel(n_jobs=n_jobs, return_as="generator")(jobs):
                    runs.append(run)
                    _report(runs, restarts, verbose, bar, len(runs))
        except KeyboardInterrupt:
            interrupted = True
    return _result(problem, tree, objective, start_errors, runs, interrupted, time_limit, t0)


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
               len(runs), restarts, r["start"], f"{r['n_errors']:g}", r["fun"], r["nit"],
               r["time"]["total"], r["message"])
    bar.set(count, f"fewest errors {min(x['n_errors'] for x in runs):g}")


def _result(problem, tree, objective, start_errors, runs, interrupted, time_limit, t0):
    X, y, w = problem.X_orig, problem.y_orig, problem.w_orig
    weighted = not np.all(w == 1)

    def errors(t):
        e = t.n_errors(X, y, w)
        return e if weighted else int(round(e))

    summaries = [
        {k: r[k] for k in ("start", "n_errors", "fun", "nit", "status", "message", "time",
                           "time_to_best", "history")}
        for r in runs
    ]
    if runs:
        best = min(runs, key=lambda r: (r["n_errors"], r["fun"]))
        found = problem.tree_of(best["Theta_count"], snap=True)
        by_fun = min(runs, key=lambda r: r["fun"])
        tree_min_fun, min_fun = problem.tree_of(by_fun["Theta_fun"], snap=True), by_fun["fun"]
        if problem.alpha > 0:  # the penalised objective is what is minimised
            best, found = by_fun, tree_min_fun.copy()
        history, nit = best["history"], sum(r["nit"] for r in runs)
        time_to_best = best["time_to_best"]
    else:
        found, tree_min_fun, min_fun, history, nit = tree.copy(), tree.copy(), np.nan, None, 0
        time_to_best = None
    n_errors = errors(found)
    within = problem.max_features is None or np.all(
        np.count_nonzero(tree.W, axis=1) <= problem.max_features)
    if n_errors > start_errors and problem.alpha == 0 and within:
        # round-off at a boundary: never return worse than given
        found, n_errors = tree.copy(), errors(tree)
    penalty = problem.penalty(problem.theta_of(found))
    fun = _objective_value(problem, found, objective) + penalty
    if interrupted or any(r["status"] == 3 for r in runs):
        status, message = 3, "interrupted; best tree so far returned"
    elif time_limit is not None and time.perf_counter() - t0 >= time_limit:
        status, message = 1, "time limit reached; best tree so far returned"
    else:
        status, message = 0, f"{len(runs)} restart(s) finished"
    return OptimizeResult(
        tree=found, n_errors=n_errors, fun=fun, penalty=penalty, tree_min_fun=tree_min_fun,
        min_fun=float(min_fun), start_n_errors=errors(tree) if weighted else int(start_errors),
        nit=nit, history=history, restarts=summaries, status=status, message=message,
        success=bool(runs), time=time.perf_counter() - t0, time_to_best=time_to_best,
    )


def _objective_value(problem, tree, objective):
    Z = problem.X1 @ problem.theta_of(tree).T
    return float(problem.objective(objective, Z)(problem.leaf_errors(Z)))
