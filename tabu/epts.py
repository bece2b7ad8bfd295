"""Extreme point tabu search (paper §5.2, Algorithm 5.2) over any :class:`~tabu.walker.Walker`.

:func:`search` is the driver; :func:`epts` runs it on the standard-form
walker of a scipy-style polytope.

Rules, with iteration ``t`` = the t-th move (1-based):

* **Candidate list** - the improving moves (value < current - tol) found when
  the list is made, best first (random tie-break).  Right after a remake the
  best admissible one is taken; later iterations re-evaluate the entries in
  order with ``walker.evaluate`` and take the first admissible improving one,
  dropping entries no longer valid or improving.  The list is remade when it
  is empty, shorter than 1/8 of its original length, or holds no admissible
  improving move.  With no admissible improving move (a local minimum, or every
  improving move tabu) the best non-tabu neighbour is taken even if worse; if
  every neighbour is tabu, the best tabu one.
* **Tabu (recency memory)** - move (e, l) is tabu at iteration t if e left the
  basis at iteration s with ``t - s <= tenure_enter``, or l entered at s with
  ``t - s <= tenure_leave``.  Defaults ``round(sqrt(c/8))`` and
  ``round(sqrt(c/8)/4)``, both at least 1; ``c = walker.n_variables``.
* **Aspiration** - a tabu move is admissible if its value beats the best seen.
* **Frequency memory** - iterations each variable has spent in the basis.
* **Stagnation** - after a move at iteration t in improvement mode, if at
  least k = ceil(stagnation * c) iterations have passed since improvement mode
  began and the best value has not moved by more than delta (relative) in the
  last k iterations, ``|b_t - b_{t-k}| <= delta * max(|b_{t-k}|, zero_scale)``
  with ``b_t`` the best value after move t, the next
  m = ceil(diversification * c) moves are diversification moves: each takes
  the admissible neighbour minimising eq. 25,
  ``f(x') + rho / t * (freq(entering) - freq(leaving))``; then improvement
  mode resumes with a fresh candidate list.  (The test is on the best value:
  the current value of a search that cycles through a few vertices keeps
  changing by more than delta and would never look stagnant.)  ``rho`` defaults to
  ``max(|f(x_start)|, 1)``, so the frequency term (at most rho in size) outweighs
  most objective differences between neighbours.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ._select import best_admissible
from .result import OptimizeResult
from .standard_walker import StandardFormWalker
from .status import Status
from .walker import MoveError, Walker

IMPROVE, DIVERSIFY = 0, 1
#: names of the ``mode`` codes in ``history``
MODES = ("improve", "diversify")
#: dtype of ``result.history``; row 0 is the start, row t the vertex after move t
HISTORY_DTYPE = np.dtype([("iteration", np.int64), ("value", np.float64),
                          ("best", np.float64), ("mode", np.int8)])
ITERATION_LIMIT, TIME_LIMIT, CALLBACK, INTERRUPTED, NO_MOVE = (
    Status.ITERATION_LIMIT, Status.TIME_LIMIT, Status.CALLBACK, Status.INTERRUPTED, Status.NO_MOVE)
MESSAGES = {s: s.message for s in (TIME_LIMIT, CALLBACK, INTERRUPTED, NO_MOVE)}
MESSAGES[ITERATION_LIMIT] = "Iteration limit reached."
#: status when the objective returned NaN at the best vertex (nothing trustworthy found)
NAN_VALUE = Status.ERROR
MESSAGES[NAN_VALUE] = "The objective returned NaN; no valid value was found."
_NEVER = -(1 << 60)
#: refused pivots (:class:`~tabu.walker.MoveError`) skipped per iteration before the search ends
REFUSALS = 8
#: most moves per call of a walker's compiled loop (callback, time limit, Ctrl-C in between)
CHUNK = 256


def default_tenures(c: int) -> tuple[int, int]:
    """Tabu tenures ``(entering, leaving)``: ``sqrt(c/8)`` and a quarter of it, rounded, at least 1."""
    t = math.sqrt(c / 8.0)
    return max(1, round(t)), max(1, round(t / 4.0))


def _tabu_mask(E, L, it, te, tl, last_left, last_entered):
    """Which moves (E[i], L[i]) are tabu at iteration ``it`` (recency memory)."""
    return (last_left[E] >= it - te) | (last_entered[L] >= it - tl)


def _moves(walker):
    """The walker's moves as int/float arrays, NaN values as +inf."""
    E, L, V = walker.candidates()
    V = np.asarray(V, dtype=float)
    if np.isnan(V).any():
        V = np.where(np.isnan(V), np.inf, V)
    return np.asarray(E, dtype=np.intp), np.asarray(L, dtype=np.intp), V


def _pick(E, L, V, F, weight, it, te, tl, last_left, last_entered, asp, rng) -> int:
    """Index of the best admissible move (:func:`tabu._select.best_admissible`), ties broken at random."""
    ties = best_admissible(E, L, V, F, weight, it, te, tl, last_left, last_entered, asp)
    return int(ties[0]) if ties.size == 1 else int(ties[rng.integers(ties.size)])


def _remake(walker, it, thr, asp, te, tl, last_left, last_entered, F, rng):
    """Make the candidate list; returns (move, list of entering variables, original length)."""
    E, L, V = _moves(walker)
    if E.size == 0:
        return None, [], 0
    tabu = _tabu_mask(E, L, it, te, tl, last_left, last_entered)
    imp = np.flatnonzero(V < thr)
    if imp.size:
        order = imp[np.lexsort((rng.random(imp.size), V[imp]))]
        ok = np.flatnonzero(~tabu[order] | (V[order] < asp))
        if ok.size:
            i = int(ok[0])
            rest = E[order].tolist()
            del rest[i]
            j = order[i]
            return (int(E[j]), int(L[j]), float(V[j])), rest, imp.size
    # no admissible improving move, so no move beats the aspiration level either
    j = _pick(E, L, V, F, 0.0, it, te, tl, last_left, last_entered, asp, rng)
    return (int(E[j]), int(L[j]), float(V[j])), [], 0


def _diversify(walker, it, asp, te, tl, last_left, last_entered, F, rho, rng):
    """The admissible move minimising eq. 25 (the best of all if every move is tabu).

    Frequency memory ``F``: iterations in the basis for a nonbasic variable,
    that minus the iteration it entered for a basic one, so ``freq(e) - freq(l)
    = F[e] - F[l] - it`` (entering e nonbasic, leaving l basic).
    """
    E, L, V = _moves(walker)
    if E.size == 0:
        return None
    j = _pick(E, L, V, F, rho / it, it, te, tl, last_left, last_entered, asp, rng)
    return int(E[j]), int(L[j]), float(V[j])


class _Memory:
    """Recency and frequency memory over the walker's variables (module docstring)."""

    def __init__(self, c):
        self.last_left = np.full(c, _NEVER, dtype=np.int64)
        self.last_entered = np.full(c, _NEVER, dtype=np.int64)
        self.F = np.zeros(c, dtype=np.int64)  # frequency memory, see _diversify

    def record(self, e, l, it):
        """Move (e, l) made at iteration ``it``."""
        self.last_entered[e] = self.last_left[l] = it
        self.F[l] += it
        self.F[e] -= it


def _parameters(walker, max_iter, tenure_enter, tenure_leave, delta, stagnation,
                diversification):
    """Validated ``(max_iter, c, tenure_enter, tenure_leave, k_stag, m_div)``."""
    if not isinstance(walker, Walker):
        raise TypeError("walker must implement tabu.Walker")
    max_iter = int(max_iter)
    if max_iter < 0:
        raise ValueError("max_iter must be nonnegative")
    c = int(walker.n_variables)
    te0, tl0 = default_tenures(c)
    te = te0 if tenure_enter is None else int(tenure_enter)
    tl = tl0 if tenure_leave is None else int(tenure_leave)
    if te < 0 or tl < 0 or not (delta >= 0 and stagnation > 0 and diversification > 0):
        raise ValueError("tenures and delta must be nonnegative, stagnation and diversification positive")
    return (max_iter, c, te, tl, max(1, math.ceil(stagnation * c)),
            max(1, math.ceil(diversification * c)))


def _scan(walker, cand, it, thr, asp, te, tl, mem):
    """First admissible improving move of the candidate list, re-evaluated in order;
    entries no longer valid or improving are dropped (so is the one taken)."""
    i = 0
    while i < len(cand):
        e = cand[i]
        l, v = walker.evaluate(e)
        if l < 0 or not v < thr:
            del cand[i]
        elif (it - mem.last_left[e] <= te or it - mem.last_entered[l] <= tl) and not v < asp:
            i += 1
        else:
            del cand[i]
            return e, l, v
    return None


class _Clock:
    """The time limit, checked every few iterations (at most 64 apart)."""

    def __init__(self, time_limit):
        self.deadline = None if time_limit is None else time.perf_counter() + float(time_limit)
        self.next_check, self.step, self.last = 1, 1, time.perf_counter()

    def expired(self, it):
        if self.deadline is None or it < self.next_check:
            return False
        now = time.perf_counter()
        if now >= self.deadline:
            return True
        self.step = min(64, self.step * 2) if now - self.last < 0.01 else max(1, self.step // 2)
        self.next_check, self.last = it + self.step, now
        return False


class _State:
    """The search's moving parts: current and best values, candidate list, mode."""

    def __init__(self, walker, max_iter, rho):
        self.cur = float(walker.value)
        if math.isnan(self.cur):  # a NaN start is worse than anything: any finite vertex improves
            self.cur = math.inf
        finite = math.isfinite(self.cur)
        self.rho = (max(abs(self.cur), 1.0) if finite else 1.0) if rho is None else float(rho)
        self.best, self.best_it, self.best_x, self.best_basis, self.unsaved = (
            self.cur, 0, None, None, True)
        self.hv, self.hb, self.hm = [0.0] * (max_iter + 1), [0.0] * (max_iter + 1), bytearray(
            max_iter + 1)
        self.hv[0] = self.hb[0] = self.cur
        self.cand, self.orig, self.remake = [], 0, True
        self.mode, self.div_left, self.window = IMPROVE, 0, 0
        self.done, self.status, self.n_remakes = 0, ITERATION_LIMIT, 0


def _next_move(walker, st, it, te, tl, mem, tol, rng):
    """The move of iteration ``it``: candidate list in improvement mode, eq. 25 otherwise."""
    thr = st.cur - tol * (abs(st.cur) if abs(st.cur) > 1.0 else 1.0) if st.cur < math.inf else st.cur
    asp = (st.best - tol * (abs(st.best) if abs(st.best) > 1.0 else 1.0) if st.best < math.inf
           else st.best)
    if st.mode != IMPROVE:
        return _diversify(walker, it, asp, te, tl, mem.last_left, mem.last_entered, mem.F, st.rho,
                          rng)
    move = None if st.remake else _scan(walker, st.cand, it, thr, asp, te, tl, mem)
    if move is None:
        move, st.cand, st.orig = _remake(walker, it, thr, asp, te, tl, mem.last_left,
                                         mem.last_entered, mem.F, rng)
        st.n_remakes += 1
    st.remake = not st.cand or len(st.cand) * 8 < st.orig
    return move


def _apply(walker, st, move, it, mem):
    """Make the move and update the memories, the best vertex and the history."""
    e, l, v = move
    if st.unsaved and not v < st.best:
        st.best_x, st.best_basis, st.unsaved = walker.x, walker.basis(), False
    walker.pivot(e, l)
    mem.record(e, l, it)
    st.cur = v
    if v < st.best:
        st.best, st.best_it, st.unsaved = v, it, True
    st.hv[it], st.hb[it], st.hm[it] = v, st.best, st.mode
    st.done = it


def _move(walker, st, it, te, tl, mem, tol, rng):
    """Choose and make the move of iteration ``it``; False if there is none.

    A move whose pivot the walker refuses as numerically singular
    (:class:`~tabu.walker.MoveError`, the walker unchanged) is skipped: the
    candidates are made again and the next move chosen, up to ``REFUSALS``
    times per iteration (a walker that stops offering a refused edge, as the
    tree walker does, then moves on; one that offers it again ends the search).
    """
    for _ in range(REFUSALS + 1):
        move = _next_move(walker, st, it, te, tl, mem, tol, rng)
        if move is None:
            return False
        try:
            _apply(walker, st, move, it, mem)
            return True
        except MoveError:
            st.remake = True
    return False


def _switch_mode(st, it, k_stag, m_div, delta, zero_scale):
    """Diversification ends after m moves; stagnation of the best over k moves starts it."""
    if st.mode == DIVERSIFY:
        st.div_left -= 1
        if st.div_left == 0:
            st.mode, st.remake, st.window = IMPROVE, True, it
    elif it - st.window >= k_stag:
        ref = st.hb[it - k_stag]
        if abs(st.best - ref) <= delta * max(abs(ref), zero_scale):
            st.mode, st.div_left = DIVERSIFY, m_div


def _run_compiled(loop, walker, max_iter, callback, clock, every):
    """Drive a walker's compiled loop in chunks of moves (doubled while a chunk
    takes under 10 ms, halved above 20 ms, ending at multiples of ``every``),
    checking the callback, the time limit and Ctrl-C between chunks; returns the
    final state."""
    status, step = ITERATION_LIMIT, 1
    try:
        while loop.done < max_iter:
            t0 = time.perf_counter()
            aligned = (loop.done // every + 1) * every
            if not loop.run(min(max_iter, loop.done + step, aligned)):
                status = NO_MOVE
                break
            took = time.perf_counter() - t0
            step = min(CHUNK, 2 * step) if took < 0.01 else (max(1, step // 2) if took > 0.02
                                                              else step)
            if callback is not None and callback(loop.done, walker, loop.best):
                status = CALLBACK
                break
            if clock.deadline is not None and time.perf_counter() >= clock.deadline:
                status = TIME_LIMIT
                break
    except KeyboardInterrupt:
        status = INTERRUPTED
    st = loop.state()
    st.status = status
    if status == INTERRUPTED and st.unsaved:
        st.best = min(st.best, float(walker.value))
    return st


def _result(walker, st, te, tl, k_stag, m_div):
    if st.unsaved:
        st.best_x, st.best_basis = walker.x, walker.basis()
    if not math.isfinite(st.best):
        st.status, st.best = NAN_VALUE, math.nan
    n = st.done + 1
    history = np.empty(n, dtype=HISTORY_DTYPE)
    history["iteration"] = np.arange(n)
    history["value"] = st.hv[:n]
    history["best"] = st.hb[:n]
    history["mode"] = np.frombuffer(bytes(st.hm[:n]), dtype=np.int8)
    return OptimizeResult(x=st.best_x, fun=st.best, basis=st.best_basis,
                          best_iteration=st.best_it, nit=st.done, history=history,
                          status=st.status, success=st.status in (ITERATION_LIMIT, TIME_LIMIT, CALLBACK),
                          message=MESSAGES[st.status], tenure_enter=te, tenure_leave=tl,
                          stagnation_window=k_stag, diversification_moves=m_div, rho=st.rho,
                          n_remakes=st.n_remakes)


def search(walker: Walker, max_iter: int = 10_000, random_state=None, time_limit=None,
           callback=None, *, tenure_enter=None, tenure_leave=None, delta=0.02, stagnation=0.10,
           diversification=0.15, rho=None, tol=1e-12, zero_scale=1e-12,
           compiled=True, callback_every=CHUNK) -> OptimizeResult:
    """Extreme point tabu search (Algorithm 5.2) driving ``walker``; rules in the module docstring.

    Parameters
    ----------
    walker : Walker
        Stands on the starting vertex; it is moved by the search.
    max_iter : int
        Number of moves (iterations).
    random_state : None, int or numpy Generator
        Breaks ties between equal-valued moves.
    time_limit : float, optional
        Wall-clock seconds (checked every few iterations, at most 64).
    callback : callable, optional
        ``callback(iteration, walker, best_value)`` after every move; with a
        compiled loop, after every chunk of moves instead: chunks last about
        10-20 ms and end at every multiple of ``callback_every`` moves.  A true
        return value stops the search.
    tenure_enter, tenure_leave, delta, stagnation, diversification, rho
        Tabu parameters (module docstring).
    tol : float
        Improvement tolerance, relative to ``max(1, |value|)``.
    zero_scale : float
        Floor of ``|f|`` in the relative stagnation test, for values near 0.
    compiled : bool
        Use the walker's compiled loop (:meth:`Walker.compiled_loop`) if it
        has one: the same moves, without the Python driver's per-move cost.
        False runs this module's Python driver, the reference.
    callback_every : int
        With a compiled loop, the iterations ``k * callback_every`` that the
        callback sees for sure (chunks are at most ``CHUNK`` moves in any case).

    Returns
    -------
    OptimizeResult
        ``x``, ``fun``, ``basis``: the best vertex seen, its value and basis;
        ``best_iteration``; ``nit`` (moves made); ``history``: structured
        array (:data:`HISTORY_DTYPE`) with fields ``iteration``, ``value``,
        ``best`` and ``mode`` (0 improve, 1 diversify, names in :data:`MODES`),
        row 0 the start; ``status`` (0 iteration limit, 1 time limit,
        2 callback stop, 3 KeyboardInterrupt, 4 no bounded neighbour, or
        ``REFUSALS + 1`` chosen edges in a row were numerically singular
        (:class:`tabu.walker.MoveError`; each one refused is skipped)),
        ``success`` (status 0-2), ``message``; the parameters used:
        ``tenure_enter``, ``tenure_leave``, ``stagnation_window`` (k),
        ``diversification_moves`` (m), ``rho``; ``n_remakes``.
    """
    max_iter, c, te, tl, k_stag, m_div = _parameters(walker, max_iter, tenure_enter, tenure_leave,
                                                     delta, stagnation, diversification)
    rng = np.random.default_rng(random_state)
    st, clock = _State(walker, max_iter, rho), _Clock(time_limit)
    loop = walker.compiled_loop(max_iter, rng, (te, tl), k_stag, m_div, delta, zero_scale, tol,
                                st.cur, st.rho) if compiled else None
    if loop is not None:
        every = max(1, int(callback_every))
        return _result(walker, _run_compiled(loop, walker, max_iter, callback, clock, every),
                       te, tl, k_stag, m_div)
    mem = _Memory(c)
    try:
        while st.done < max_iter:
            it = st.done + 1
            if not _move(walker, st, it, te, tl, mem, tol, rng):
                st.status = NO_MOVE
                break
            _switch_mode(st, it, k_stag, m_div, delta, zero_scale)
            if callback is not None and callback(it, walker, st.best):
                st.status = CALLBACK
                break
            if clock.expired(it):
                st.status = TIME_LIMIT
                break
    except KeyboardInterrupt:
        st.status = INTERRUPTED
        if st.unsaved:
            st.best = min(st.best, float(walker.value))
    return _result(walker, st, te, tl, k_stag, m_div)


def epts(fun, A_ub=None, b_ub=None, A_eq=None, b_eq=None, bounds=(0, None), max_iter=10_000,
         random_state=None, *, x0=None, vectorized=False, time_limit=None, callback=None,
         tenure_enter=None, tenure_leave=None, delta=0.02, stagnation=0.10, diversification=0.15,
         rho=None, tol=1e-12) -> OptimizeResult:
    """Minimise ``fun`` over the vertices of ``{A_ub u <= b_ub, A_eq u = b_eq, lb <= u <= ub}`` by EPTS.

    ``fun(u) -> float`` of the user's variables, any callable (no smoothness
    assumed); with ``vectorized=True`` it takes a (k, n) array and returns k
    values.  The search starts at vertex ``x0`` if given (it must be one),
    else at Phase 1's first vertex.  The polytope must have a vertex (no line
    in it).  Tabu variables are the columns of the internal standard form
    (:mod:`tabu.standard_form`).  Result as in :func:`search`; ``x`` is in the
    user's variables and ``basis`` in standard-form columns.
    """
    walker = StandardFormWalker.from_inequalities(fun, A_ub, b_ub, A_eq, b_eq, bounds, x0=x0,
                                                  vectorized=vectorized)
    return search(walker, max_iter, random_state, time_limit, callback, tenure_enter=tenure_enter,
                  tenure_leave=tenure_leave, delta=delta, stagnation=stagnation,
                  diversification=diversification, rho=rho, tol=tol)
