"""Restarts of ``gto.optimize``: the start portfolio, one run per method, the schedule.

A restart takes a start from the portfolio, moves it to a vertex (the
crossover, Theorem 4.1) and searches.  Starts, in order: the ``init`` start
(the given tree or the greedy LP tree), the greedy LP tree, CART of the same
shape (:func:`gto.engine._starts.cart_tree`, complete structures), the given tree,
then kicks of the best tree found so far alternating with random trees
(:func:`start_kinds`).

Two tabu configurations (``options`` of ``gto.optimize``):

* ``{"paper": True}``: Algorithm 5.2 as published (docs/DESIGN.md §4): one EPTS run of
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
  portfolio (:func:`round_starts`: a given tree is one start of several; for a
  structure of depth >= 3 also the region start of
  :mod:`gto.engine._region_start`, right after the greedy LP tree), then
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
from dataclasses import dataclass, field

import numpy as np

import tabu
from tabu.epts import MODES as EPTS_MODES

from ..utils._interrupt import OutOfTime, stop_requested
from ..utils.status import Status
from ._frank_wolfe import frank_wolfe
from ._long_step import LongStepWalker
from ._region_start import region_theta
from ._starts import axis_aligned_tree, cart_tree, greedy_theta, kick_theta, random_start, refine_theta
from ._stopping import StoppingRule
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
#: ``long_steps`` is off by default: inside this search (refits, kicks, time limit)
#: short steps reached better trees per second (docs/decisions.md)
SCHEDULE = {"paper": False, "round_iter": None, "polish": None, "refine": True,
            "refine_rounds": 2, "kick": True, "patience": PATIENCE, "long_steps": 0,
            "race": True}
#: racing of the polish runs: every ``share * polish`` moves a round's polish ends when
#: its fewest errors exceed ``factor * best + slack`` (best: the restart's fewest so
#: far), so hopeless kicks cost a quarter of a round and the budget buys more rounds
#: (better trees on planted data at about the same time: docs/decisions.md)
RACE = (0.25, 1.1, 2)
#: how a round ends normally (its budget, or the race of a polish run); any other status
#: (time limit, callback, Ctrl-C, no move) ends the restart
ROUND_ENDS = (Status.ITERATION_LIMIT, Status.COMPLETED)
#: polishing moves per round: POLISH_PER_POINT * N, clipped to POLISH_RANGE; the
#: objective's own moves per round are a third of that (docs/decisions.md)
POLISH_PER_POINT, POLISH_RANGE = 0.4, (50, 300)
KINDS = ("tree", "greedy", "regions", "cart", "random", "kick")


@dataclass
class Incumbent:
    """A restart's best vertex so far: fewest (weighted) errors, ties by objective value."""

    n_errors: float
    value: float
    Theta: np.ndarray  # scaled parameters (D, n + 1)
    found_at: float  # wall clock (time.time()) when it was found

    def key(self):
        return (self.n_errors, self.value)


@dataclass
class RestartRecord:
    """The outcome of one restart (picklable for joblib workers)."""

    Theta_count: np.ndarray  # scaled parameters of the fewest-errors vertex
    Theta_fun: np.ndarray  # scaled parameters of the lowest-objective vertex
    fun: float  # lowest objective value seen
    n_errors: float  # fewest (weighted) training errors
    nit: int
    status: Status
    message: str
    history: np.ndarray  # HISTORY_DTYPE rows of all its walks
    rounds: int  # walks run (a round's polish walk counts as one)
    found_at: float  # wall clock when Theta_count was found
    start: str = ""  # start kind (KINDS, or "axis")
    time: dict = field(default_factory=dict)  # seconds: "start", "total"
    time_to_best: float | None = None  # seconds from the call's start to Theta_count
    coarse: list = field(default_factory=list)  # coarse-to-fine: the subsample restarts

    SUMMARY = ("start", "n_errors", "fun", "nit", "rounds", "status", "message", "time",
               "time_to_best", "history")

    def summary(self):
        """The per-restart dict of ``gto.optimize``'s ``restarts``."""
        return {k: getattr(self, k) for k in self.SUMMARY}


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


def round_starts(kinds, paper, has_tree, complete=True, deep=False):
    """Starts of the first restart's later rounds in the default tabu search: the
    portfolio's greedy LP tree, the region start for a ``deep`` structure (depth 3
    or more, :func:`gto.engine._region_start.needs_regions`), CART of the same shape
    and the given tree, those not already among the restarts' ``kinds`` (none in
    the paper's configuration)."""
    if paper:
        return []
    portfolio = (["greedy"] + (["regions"] if deep else []) + (["cart"] if complete else [])
                 + (["tree"] if has_tree else []))
    return [k for k in portfolio if k not in kinds]


def start_theta(problem, kind, tree, rng, incumbent=None):
    """Scaled parameters of a start; a kick without an incumbent is a random start."""
    if kind == "tree":
        return problem.theta_of(tree)
    if kind == "greedy":
        return greedy_theta(problem, rng)
    if kind == "regions":
        return region_theta(problem, rng)
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
                                                                 problem.data.X1 @ Theta.T), rng)
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

    rule = None
    if race is not None:  # end the run early when its fewest errors lag too far
        every, limit = race
        rule = StoppingRule(callback, every, lambda iteration, walker: (
            f"raced out after {iteration} moves" if walker.best_count[0] > limit else None))
        callback, search_options = rule, rule.options(search_options)
    res = tabu.search(walker, max_iter=max_iter, random_state=rng, time_limit=_remaining(deadline),
                      callback=callback, **search_options)
    h = res.history
    counts = np.asarray(walker.counts[: len(h)], dtype=float)
    modes = np.full(len(h), "polish") if polish else np.array(EPTS_MODES)[h["mode"]]
    history = _history(h["value"], counts, modes, offset)
    if rule is not None:  # a stopping rule of the schedule, not the caller's callback
        rule.settle(res)
    return res, history, walker.best_count, walker.best_count_time


def _rows(histories):
    return sum(len(h) for h in histories)


def _race(schedule, polish, best):
    """``(every, limit)`` of a polish run that is raced (:data:`RACE`), or None."""
    if not schedule["race"] or best is None:
        return None
    share, factor, slack = RACE
    return max(1, int(share * polish)), best.n_errors * factor + slack


@dataclass
class _Schedule:
    """How the rounds of one tabu restart run (module docstring)."""

    single: bool  # one EPTS run: the paper's configuration, or sparse vertices
    refine: object  # refit starts by robust LPs: True (every round), "start" (the first) or False
    long_steps: int
    round_iter: int  # moves per round on the search's objective
    polish: int  # moves per round on the lexicographic objective
    patience: int | None  # rounds' worth of moves without fewer errors (None: time-driven)


def _schedule(problem, objective, max_iter, schedule, deadline):
    paper = schedule["paper"]
    # the LP refits are dense and count-driven: not with a penalty or a feature budget
    dense = problem.blocks.alpha == 0 and problem.blocks.n_coord == 0
    refine = not paper and schedule["refine"] and dense and max_iter > 0  # 0: the start's vertex
    single = paper or not dense  # sparse vertices: one run (kicks would be dense)
    round_iter, polish = round_lengths(schedule, problem.data.N)
    if objective in ("count", "lexicographic"):  # counts already: one walk per round
        round_iter, polish = round_iter + polish, 0
    return _Schedule(single, refine, 0 if single else schedule["long_steps"], round_iter,
                     0 if single else polish,
                     schedule["patience"] if deadline is None else None)


@dataclass
class _Rounds:
    """The state of one restart's rounds."""

    queue: list  # starts of the next rounds, before the kicks
    used: int = 0  # moves so far
    rounds: int = 0
    best: Incumbent | None = None
    by_fun: tuple | None = None  # (lowest objective value, its scaled parameters)
    histories: list = field(default_factory=list)
    kicked: list = field(default_factory=list)  # decisions the last kick redrew
    last_better: int = 0  # moves until the last fewer errors

    def offer(self, found):
        if self.best is None or found.key() < self.best.key():
            if self.best is None or found.n_errors < self.best.n_errors:
                self.last_better = self.used
            self.best = found


def run_tabu(problem, Theta0, objective, max_iter, deadline, rng, callback, schedule,
             search_options, others=()):
    """EPTS from ``Theta0``: the paper's single run, or the iterated local search.

    ``others``: callables giving further starts (scaled parameters), each the
    start of one round after the first, before the kicks begin."""
    plan = _schedule(problem, objective, max_iter, schedule, deadline)
    state = _Rounds(queue=list(others) if not plan.single else [])
    Theta = Theta0
    while True:
        if plan.refine and (schedule["refine"] is True or not state.rounds):
            Theta, _ = refine_theta(problem, Theta, rng, rounds=schedule["refine_rounds"],
                                    last=state.kicked)
        try:
            res, stop = _round(problem, Theta, objective, max_iter, deadline, rng, callback,
                               schedule, search_options, plan, state)
        except OutOfTime:  # no time for the crossover to this round's vertex
            if state.best is None:
                return unwalked_run(problem, Theta, objective, state.used)
            res = _Stopped(0)
            break
        if _restart_ends(plan, state, res, stop, max_iter):
            break
        try:
            Theta = _next_start(problem, state, schedule, rng)
        except OutOfTime:  # the next start ran out of time: the best so far stands
            res = _Stopped(int(res.nit))
            break
    return RestartRecord(Theta_count=state.best.Theta, Theta_fun=state.by_fun[1],
                         fun=state.by_fun[0], n_errors=state.best.n_errors, nit=state.used,
                         status=Status(res.status), message=res.message,
                         history=np.concatenate(state.histories),
                         found_at=state.best.found_at, rounds=len(state.histories))


def _past(deadline):
    return deadline is not None and time.time() >= deadline


def _round(problem, Theta, objective, max_iter, deadline, rng, callback, schedule,
           search_options, plan, state):
    """One round: EPTS on the objective from ``Theta``, then the polish walk on the
    lexicographic objective from its fewest-errors vertex; ``(result, stop)``.
    Raises :class:`OutOfTime` if the time ran out before the round's first vertex;
    a polish walk without the time for its crossover ends the round (and restart)."""
    walker = _walker(problem, Theta, objective, rng, plan.long_steps)
    budget = max_iter - state.used if plan.single else min(plan.round_iter, max_iter - state.used)
    res, history, count, found_at = _tabu_round(walker, budget, deadline, rng, callback,
                                                search_options, _rows(state.histories),
                                                done=state.used)
    state.histories.append(history)
    state.used, state.rounds = state.used + int(res.nit), state.rounds + 1
    if state.by_fun is None or res.fun < state.by_fun[0]:
        state.by_fun = (float(res.fun), res.x.reshape(problem.layout.D, problem.data.m))
    stop = res.status not in ROUND_ENDS or _past(deadline)
    found = Incumbent(*count, found_at)
    if plan.polish and not stop and state.used < max_iter:
        try:
            lex = _walker(problem, found.Theta, "lexicographic", rng, 0)
        except OutOfTime:  # no time for the polish walk's crossover: this round's vertex stands
            lex, res, stop = None, _Stopped(int(res.nit)), True
    if plan.polish and not stop and state.used < max_iter:
        res2, history, count2, found2 = _tabu_round(lex, min(plan.polish, max_iter - state.used),
                                                    deadline, rng, callback, search_options,
                                                    _rows(state.histories), polish=True,
                                                    done=state.used,
                                                    race=_race(schedule, plan.polish, state.best))
        state.histories.append(history)
        state.used = state.used + int(res2.nit)
        if count2[0] < found.n_errors:  # scored again on the search's objective
            found = Incumbent(count2[0], problem.value(objective, count2[2]), count2[2], found2)
        res = res2 if res2.status not in ROUND_ENDS else res  # its stop reason is the restart's
        stop = res2.status not in ROUND_ENDS or _past(deadline)
    state.offer(found)
    return res, stop


def _restart_ends(plan, state, res, stop, max_iter):
    """The restart's stopping rules (module docstring)."""
    return (plan.single or stop or state.used >= max_iter or res.nit == 0
            or state.best.n_errors <= 0
            or (plan.patience is not None and not state.queue
                and state.used - state.last_better >= plan.patience * (plan.round_iter + plan.polish)))


def _next_start(problem, state, schedule, rng):
    """The next round's start: the portfolio's other starts, then kicks of the best."""
    if state.queue:
        Theta, state.kicked = state.queue.pop(0)(), []
    elif schedule["kick"]:
        Theta, state.kicked = kick_theta(problem, state.best.Theta, rng)
    else:  # the next round from the best vertex so far
        Theta = state.best.Theta
    return Theta


class _Stopped:
    """The end of a search stopped outside EPTS (in a crossover or a start) by the time
    limit or a stop request (:func:`gto.utils._interrupt.limits`)."""

    def __init__(self, nit):
        self.nit = nit
        self.status = Status.INTERRUPTED if stop_requested() else Status.TIME_LIMIT
        self.message = self.status.message


def unwalked_run(problem, Theta, objective, nit=0):
    """The run of a restart whose time ran out before its start reached a vertex: the
    start itself (scaled ``Theta``, not a vertex), scored as it is."""
    Theta = np.array(Theta, dtype=float)
    count = problem.n_errors(problem.data.X1 @ Theta.T)
    value = problem.value(objective, Theta) + problem.penalty(Theta)
    stopped = _Stopped(nit)
    return RestartRecord(Theta_count=Theta, Theta_fun=Theta, fun=value, n_errors=count, nit=nit,
                         status=stopped.status, message=stopped.message,
                         history=_history([value], [count], ["start"]), found_at=time.time(),
                         rounds=0)


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
    return RestartRecord(Theta_count=Theta_count, Theta_fun=final.theta(), fun=final.value,
                         n_errors=count, nit=len(hist) - 1, status=status, message=message,
                         history=_history(hist[:, 1], hist[:, 2], np.full(len(hist), "fw")),
                         found_at=found_at, rounds=1)


def run_restart(problem, kind, tree, objective, method, max_iter, deadline, seed, callback,
                options, origin, incumbent=None, others=()):
    """One restart; its :class:`RestartRecord`.

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
        except OutOfTime:  # no time for the crossover to the start's vertex
            run = unwalked_run(problem, Theta0, objective)
    run.start, run.time = kind, {"start": t_start, "total": time.perf_counter() - t0}
    run.time_to_best = run.found_at - origin
    return run
