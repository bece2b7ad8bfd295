"""Restarts of ``gto.optimize``: the start portfolio, one run per method, the schedule (issue 11).

A restart takes a start from the portfolio, moves it to a vertex (the
crossover, Theorem 4.1) and searches.  Starts, in order: the ``init`` start
(the given tree or the greedy LP tree), the greedy LP tree, CART of the same
shape (:func:`gto.engine._starts.cart_tree`, complete structures), the given tree,
then kicks of the best tree found so far alternating with random trees
(:func:`start_kinds`).

Two tabu configurations (``options`` of ``gto.optimize``):

* ``{"paper": True}``: Algorithm 5.2 as published (DESIGN §4): one EPTS run of
  ``max_iter`` moves from the start; restarts are the init start, the greedy
  tree when the first is the given tree, then random trees.
* the default: iterated local search.  The start is refined by alternating
  robust LPs (:func:`gto.engine._starts.refine_theta`, ``refine_rounds`` passes; not
  with ``alpha`` or ``max_features``, whose sparse starts it would undo; with
  those, EPTS runs once per restart, as in the paper).  Each round then runs
  ``round_iter`` EPTS moves on the objective and ``polish`` moves on the
  lexicographic objective (count first) from the round's fewest-errors vertex
  (the objective's minimum is not the count's; the answer is the fewest-errors
  tree).  The first restart's later rounds start from the other starts of the
  portfolio (:func:`round_starts`: a given tree is one start of several), then
  from kicks of the restart's best tree (one decision redrawn; ``kick=False``:
  from the best tree itself), each refined again.  Polish runs are raced
  (``race``, :data:`RACE`): every quarter of ``polish`` moves, a run whose fewest
  errors exceed 1.1 x the restart's best + 2 ends, so a hopeless kick costs a
  fraction of a round.  A restart ends after
  ``max_iter`` moves, at the time limit, at a tree without errors or (without a
  time limit) after ``patience`` rounds' worth of moves (``round_iter + polish``
  each) without fewer errors.  Round lengths scale with the
  number of points N (:func:`round_lengths`): ``polish = clip(0.4 N, 50, 300)``,
  ``round_iter = polish // 3``.  ``long_steps=k`` makes EPTS sweep the k best
  edges' rays (:class:`gto.engine._long_step.LongStepWalker`; 0, the default: off).

Other ``options`` keys go to :func:`tabu.search` (EPTS parameters) or to
:func:`gto.engine._frank_wolfe.frank_wolfe`.
"""
from __future__ import annotations

import time

import numpy as np

import tabu
from tabu.epts import MODES as EPTS_MODES
from tabu.status import Status

from ..utils._interrupt import OutOfTime
from ._frank_wolfe import frank_wolfe
from ._long_step import LongStepWalker
from ._starts import axis_aligned_tree, cart_tree, greedy_theta, kick_theta, random_start, refine_theta
from ._walker import walker_from_theta

HISTORY_DTYPE = np.dtype(
    [("iteration", np.int64), ("value", np.float64), ("n_errors", np.float64), ("mode", "U9")]
)
#: rounds without a better count after which a restart stops (None: never; not with a
#: time limit, which then sets the budget); a restart also stops at a tree without errors
PATIENCE = 40
#: schedule options of the default tabu configuration, with their defaults; ``refine``:
#: True (every round), "start" (the start only) or False; ``refine_rounds``: passes of
#: the alternating LPs per refit; ``kick``: False starts each round from the best
#: vertex so far instead of a kick of it; ``round_iter`` and ``polish`` None: scaled with the
#: number of points N (:func:`round_lengths`).
#: ``long_steps`` is off by default: plain EPTS reaches better trees per second with
#: long steps at N = 7 680 but not at 768, and inside this search (refits, kicks,
#: time limit) short steps did better at 7 680 too (issue 11 report)
SCHEDULE = {"paper": False, "round_iter": None, "polish": None, "refine": True,
            "refine_rounds": 2, "kick": True, "patience": PATIENCE, "long_steps": 0,
            "race": True}
#: racing of the polish runs: every ``share * polish`` moves a round's polish ends when
#: its fewest errors exceed ``factor * best + slack`` (best: the restart's fewest so
#: far), so hopeless kicks cost a quarter of a round (issue 11 measurements: planted
#: N = 768, seeds 0-9, mean error / planted 1.050 -> 0.989 from the greedy start,
#: 1.092 -> 1.045 from CART, at about the same time)
RACE = (0.25, 1.1, 2)
#: polishing moves per round: POLISH_PER_POINT * N, clipped to POLISH_RANGE; the
#: objective's own moves per round are a third of that (issue 11 measurements)
POLISH_PER_POINT, POLISH_RANGE = 0.4, (50, 300)
KINDS = ("tree", "greedy", "cart", "random", "kick")


def round_lengths(schedule, n_points):
    """``(round_iter, polish)``: moves per round on the search's objective and on
    the lexicographic one (count first) from the round's fewest-errors vertex.
    Defaults: ``polish = clip(0.4 N, 50, 300)`` and ``round_iter = polish // 3``
    (N = 60: 17 and 50; N >= 750: 100 and 300)."""
    polish = schedule["polish"]
    if polish is None:
        polish = int(np.clip(round(POLISH_PER_POINT * n_points), *POLISH_RANGE))
    round_iter = schedule["round_iter"]
    if round_iter is None:
        round_iter = max(1, polish // 3)
    return round_iter, polish


def _check_int(options, name, low):
    value = options[name]
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                              or value < low):
        raise ValueError(f"options[{name!r}] must be None or an int >= {low}, got {value!r}")


def split_options(method, options):
    """``(schedule, search options)`` from ``gto.optimize``'s ``options``."""
    options = dict(options or {})
    if method != "tabu":  # Frank-Wolfe: as in the paper whatever is asked
        options.pop("paper", None)
        return {"paper": True}, options
    schedule = {k: options.pop(k, v) for k, v in SCHEDULE.items()}
    for name, low in (("round_iter", 1), ("polish", 0), ("refine_rounds", 1), ("patience", 1)):
        _check_int(schedule, name, low)
    ls = schedule["long_steps"]
    if isinstance(ls, bool) or not isinstance(ls, int) or ls < 0:
        raise ValueError(f"options['long_steps'] must be an int >= 0, got {ls!r}")
    for key in ("race", "kick"):
        if not isinstance(schedule[key], bool):
            raise ValueError(f"options[{key!r}] must be True or False, got {schedule[key]!r}")
    if schedule["refine"] not in (True, False, "start"):
        raise ValueError(f"options['refine'] must be True, False or 'start', "
                         f"got {schedule['refine']!r}")
    return schedule, options


def start_kinds(first, restarts, paper, has_tree, complete=True, cart_second=False):
    """The starts of ``restarts`` restarts (see the module docstring); CART of the
    same shape needs a ``complete`` structure.  Paper configuration: the second
    start is the greedy LP tree after the given, CART or axis-aligned tree, CART
    after the greedy one with ``cart_second`` (a feature budget)."""
    if paper:
        kinds = [first] + (["greedy"] if first in ("tree", "cart", "axis") else
                           ["cart"] if cart_second else [])
        return (kinds + ["random"] * restarts)[:restarts]
    kinds = [first] + [k for k in ("greedy", "cart") if k != first and (complete or k != "cart")]
    if has_tree and first != "tree":
        kinds.append("tree")
    while len(kinds) < restarts:
        kinds.append("kick" if len(kinds) % 2 else "random")
    return kinds[:restarts]


def round_starts(kinds, paper, has_tree, complete=True):
    """Starts of the first restart's later rounds in the default tabu search: the
    portfolio's greedy LP tree, CART of the same shape and the given tree, those
    not already among the restarts' ``kinds`` (none in the paper's configuration)."""
    if paper:
        return []
    portfolio = ["greedy"] + (["cart"] if complete else []) + (["tree"] if has_tree else [])
    return [k for k in portfolio if k not in kinds]


def start_theta(problem, kind, tree, rng, incumbent=None):
    """Scaled parameters of a start; a kick without an incumbent is a random start."""
    if kind == "tree":
        return problem.theta_of(tree)
    if kind == "greedy":
        return greedy_theta(problem, rng)
    if kind == "cart":
        return problem.theta_of(cart_tree(problem, int(rng.integers(2**31))))
    if kind == "axis":
        return problem.theta_of(axis_aligned_tree(problem))
    if kind == "kick" and incumbent is not None:
        return kick_theta(problem, incumbent, rng)[0]
    return random_start(problem, rng)


def _history(values, counts, modes, offset=0):
    h = np.zeros(len(values), dtype=HISTORY_DTYPE)
    h["iteration"] = offset + np.arange(len(values))
    h["value"], h["n_errors"], h["mode"] = values, counts, modes
    return h


def _remaining(deadline):
    return None if deadline is None else max(deadline - time.time(), 1e-3)


def _walker(problem, Theta, objective, rng, long_steps):
    walker = walker_from_theta(problem, Theta, problem.objective(objective,
                                                                 problem.X1 @ Theta.T), rng)
    return LongStepWalker.from_walker(walker, sweep=long_steps) if long_steps else walker


def _tabu_round(walker, max_iter, deadline, rng, callback, search_options, offset,
                polish=False, done=0, race=None):
    """One EPTS run; ``(result, history, best_count, found_at)``; a ``polish`` run's
    history rows have mode "polish".  The callback sees iterations counted from
    the restart's start (``done`` moves before this run).  ``race=(every, limit)``:
    every ``every`` moves, end the run (status 0, not a stop of the restart) if
    its fewest errors exceed ``limit``."""
    if callback is not None and done:
        user = callback

        def callback(iteration, walker, value):
            return user(done + iteration, walker, value)

    raced = []
    if race is not None:  # end the run early when its fewest errors lag too far
        inner, (every, limit) = callback, race

        def callback(iteration, walker, value):
            if iteration % every == 0 and walker.best_count[0] > limit:
                raced.append(iteration)
                return True
            return bool(inner(iteration, walker, value)) if inner is not None else False

    res = tabu.search(walker, max_iter=max_iter, random_state=rng, time_limit=_remaining(deadline),
                      callback=callback, **search_options)
    h = res.history
    counts = np.asarray(walker.counts[: len(h)], dtype=float)
    modes = np.full(len(h), "polish") if polish else np.array(EPTS_MODES)[h["mode"]]
    history = _history(h["value"], counts, modes, offset)
    if raced:
        res.status, res.message = 0, f"raced out after {raced[0]} moves"
    return res, history, walker.best_count, walker.best_count_time


def _rows(histories):
    return sum(len(h) for h in histories)


def _race(schedule, polish, best):
    """``(every, limit)`` of a polish run that is raced (:data:`RACE`), or None."""
    if not schedule["race"] or best is None:
        return None
    share, factor, slack = RACE
    return max(1, int(share * polish)), best[0][0] * factor + slack


def run_tabu(problem, Theta0, objective, max_iter, deadline, rng, callback, schedule,
             search_options, others=()):
    """EPTS from ``Theta0``: the paper's single run, or the iterated local search.

    ``others``: callables giving further starts (scaled parameters), each the
    start of one round after the first, before the kicks begin."""
    paper = schedule["paper"]
    # the LP refits are dense and count-driven: not with a penalty or a feature budget
    dense = problem.alpha == 0 and problem.n_coord == 0
    refine = not paper and schedule["refine"] and dense and max_iter > 0  # 0: the start's vertex
    single = paper or not dense  # sparse vertices: one run (kicks would be dense)
    long_steps = 0 if single else schedule["long_steps"]
    round_iter, polish = round_lengths(schedule, problem.N)
    if objective in ("count", "lexicographic"):  # counts already: one walk per round
        round_iter, polish = round_iter + polish, 0
    polish = 0 if single else polish
    rounds, used, best, by_fun, histories, kicked, last_better = 0, 0, None, None, [], [], 0
    queue = list(others) if not single else []
    Theta = Theta0
    while True:
        if refine and (schedule["refine"] is True or not rounds):
            Theta, _ = refine_theta(problem, Theta, rng, rounds=schedule["refine_rounds"],
                                    last=kicked)
        try:
            walker = _walker(problem, Theta, objective, rng, long_steps)
        except OutOfTime:  # no time for the crossover to this round's vertex
            if best is None:
                return unwalked_run(problem, Theta, objective, used)
            res = _Stopped(used)
            break
        budget = max_iter - used if single else min(round_iter, max_iter - used)
        res, history, count, found_at = _tabu_round(walker, budget, deadline, rng, callback,
                                                    search_options, _rows(histories),
                                                    done=used)
        histories.append(history)
        used, rounds = used + int(res.nit), rounds + 1
        if by_fun is None or res.fun < by_fun[0]:
            by_fun = (float(res.fun), res.x.reshape(problem.D, problem.m))
        stop = res.status != 0 or (deadline is not None and time.time() >= deadline)
        if polish and not stop and used < max_iter:
            try:
                lex = _walker(problem, count[2], "lexicographic", rng, 0)
            except OutOfTime:
                lex, res, stop = None, _Stopped(int(res.nit)), True
        if polish and not stop and used < max_iter:
            res2, history, count2, found2 = _tabu_round(lex, min(polish, max_iter - used),
                                                        deadline, rng, callback, search_options,
                                                        _rows(histories), polish=True,
                                                        done=used, race=_race(schedule, polish,
                                                                              best))
            histories.append(history)
            used = used + int(res2.nit)
            if count2[0] < count[0]:  # scored again on the search's objective
                value = problem.value(objective, count2[2])
                count, found_at = (count2[0], value, count2[2]), found2
            res = res2 if res2.status != 0 else res  # its stop reason is the restart's
            stop = res2.status != 0 or (deadline is not None and time.time() >= deadline)
        if best is None or count[:2] < best[0][:2]:
            if best is None or count[0] < best[0][0]:
                last_better = used  # moves until the last fewer errors
            best = (count, found_at)
        patience = schedule["patience"] if deadline is None else None  # time-driven
        if (single or stop or used >= max_iter or res.nit == 0 or best[0][0] <= 0
                or (patience is not None and not queue
                    and used - last_better >= patience * (round_iter + polish))):
            break
        if queue:
            try:
                Theta, kicked = queue.pop(0)(), []
            except OutOfTime:  # the next start ran out of time: the best so far stands
                res = _Stopped(int(res.nit))
                break
        elif schedule["kick"]:
            Theta, kicked = kick_theta(problem, best[0][2], rng)
        else:  # the next round from the best vertex so far
            Theta = best[0][2]
    (count, _, Theta_count), found_at = best
    return {"Theta_count": Theta_count, "Theta_fun": by_fun[1], "fun": by_fun[0],
            "n_errors": count, "nit": used, "status": int(res.status), "message": res.message,
            "history": np.concatenate(histories), "found_at": found_at,
            "rounds": len(histories)}


class _Stopped:
    """The end of a search stopped by the time limit outside EPTS (a crossover or a start)."""

    status, message = Status.TIME_LIMIT, Status.TIME_LIMIT.message

    def __init__(self, nit):
        self.nit = nit


def unwalked_run(problem, Theta, objective, nit=0):
    """The run of a restart whose time ran out before its start reached a vertex: the
    start itself (scaled ``Theta``, not a vertex), scored as it is."""
    Theta = np.array(Theta, dtype=float)
    Zt = np.ascontiguousarray((problem.X1 @ Theta.T).T)
    count = float(problem.weight @ problem.misclassified(Zt))
    value = problem.value(objective, Theta) + problem.penalty(Theta)
    return {"Theta_count": Theta, "Theta_fun": Theta, "fun": value, "n_errors": count,
            "nit": nit, "status": int(Status.TIME_LIMIT), "message": Status.TIME_LIMIT.message,
            "history": _history([value], [count], ["start"]), "found_at": time.time(),
            "rounds": 0}


def run_frank_wolfe(problem, Theta0, max_iter, deadline, rng, callback, options):
    """Frank-Wolfe (§5.1) from the vertex of ``Theta0``, then the crossover of its iterates."""
    walker = walker_from_theta(problem, Theta0, problem.objective("product"), rng)
    fw_callback = None if callback is None else (lambda k, Th, v: callback(k, None, v))
    Theta, hist, status, message, fewest = frank_wolfe(
        problem, walker.blocks, max_iter=max_iter, time_limit=_remaining(deadline),
        callback=fw_callback, **options,
    )
    final = walker_from_theta(problem, Theta, walker.objective, rng)
    # the iterate with the fewest errors, moved to a vertex no worse (Theorem 4.1)
    fewest_vertex = walker_from_theta(problem, fewest[2], walker.objective, rng)
    candidates = [(*walker.best_count, walker.best_count_time),
                  (*final.best_count, final.best_count_time),
                  (*fewest_vertex.best_count, fewest[3])]
    count, _, Theta_count, found_at = min(candidates, key=lambda c: c[:2])
    return {"Theta_count": Theta_count, "Theta_fun": final.theta(), "fun": final.value,
            "n_errors": count, "nit": len(hist) - 1, "status": status, "message": message,
            "history": _history(hist[:, 1], hist[:, 2], np.full(len(hist), "fw")),
            "found_at": found_at, "rounds": 1}


def run_restart(problem, kind, tree, objective, method, max_iter, deadline, seed, callback,
                options, origin, incumbent=None, others=()):
    """One restart; returns a plain dict (picklable for joblib workers).

    ``origin`` is the wall-clock start of the whole call, for ``time_to_best``;
    ``incumbent``: scaled parameters of the best tree so far, for a kick;
    ``others``: start kinds of the later rounds of the default tabu search
    (:func:`run_tabu`), before its kicks.
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    try:
        Theta0 = start_theta(problem, kind, tree, rng, incumbent)
    except OutOfTime:  # the start's construction ran out of time: the tree given instead
        Theta0 = problem.theta_of(tree)
    t_start = time.perf_counter() - t0
    schedule, search_options = split_options(method, options)
    if method == "tabu":
        starts = [lambda k=k: start_theta(problem, k, tree, rng) for k in others]
        run = run_tabu(problem, Theta0, objective, max_iter, deadline, rng, callback, schedule,
                       search_options, starts)
    else:
        try:
            run = run_frank_wolfe(problem, Theta0, max_iter, deadline, rng, callback,
                                  search_options)
        except OutOfTime:
            run = unwalked_run(problem, Theta0, objective)
    run.update(start=kind, time={"start": t_start, "total": time.perf_counter() - t0},
               time_to_best=run.pop("found_at") - origin)
    return run
