"""Extreme point tabu search on the structured walker, compiled end to end (numba).

:func:`tabu.search` drives any :class:`tabu.Walker` from Python; on the tree
walker (:class:`gto.engine._walker.TreeWalker`) that driver and the walker's
per-move Python calls cost more than the moves' arithmetic (docs/speed.md).
:func:`run_moves` makes the same moves - the rules of :mod:`tabu.epts`: the
candidate list, recency and frequency memories, aspiration, stagnation and
diversification (eq. 25), the same random tie-breaks from the same Generator -
on the walker's arrays in one compiled call, and returns to Python only after
``stop_at`` moves, so that :func:`tabu.search` can check its time limit, Ctrl-C
and callback between chunks of moves, or when the search cannot go on (no
move, or more than :data:`REFUSALS` refused pivots in one iteration).  Every
pivot stays compiled: a block's refactorisation (``REFACTOR_EVERY`` updates, or a
failed residual check, :func:`gto.engine._kernels.block_step`) is the compiled
:func:`gto.engine._kernels.refactor` that :meth:`gto.engine._block.Block.refactorise`
calls too, and the walker's exact recomputation of the cached errors
(``EXACT_EVERY`` pivots) the compiled :func:`gto.engine._kernels.exact_vertex`
that :meth:`TreeWalker.pivot` calls too.

The state is two structrefs (:mod:`gto.engine._loop_state`): ``A``, a
:class:`TreeState` holding the walker's arrays (:data:`TreeArrays`), and ``S``, a
:class:`SearchState` holding the search's memories (:data:`SearchArrays`), made
once per search by :func:`loop_state` from the same arrays.  Every function
below takes them as one pointer each: passed as tuples of ~65 arrays they were
flattened into every function's arguments and reference-counted array by array
at each call (docs/speed.md, round 9).  The arrays they hold are borrowed
(:mod:`gto.engine._borrow`): numba skips their reference counts (round 15).
Functions called only from compiled code have no CPython wrapper.  The walker's
kernels (:mod:`gto.engine._kernels`) are called as they are; this module only
holds the walker's glue (locate an edge, score a move or a vertex's table,
pivot) and the EPTS rules.  Dense vertices only (no
coordinate rows, no penalty): sparse vertices and long steps keep the Python
path of :func:`tabu.search`, which is also the reference the tests compare with.
"""
from __future__ import annotations

import math
import time
from collections import namedtuple

import numpy as np
from numba import njit

from tabu._select import best_admissible, frequency_term

from . import _block
from ._block import CHECK_EVERY, REFACTOR_EVERY, decision_part
from ._borrow import borrowed
from ._kernels import (
    block_update,
    edge_slots,
    exact_vertex,
    leaf_terms,
    move_sums,
    product_move_sums_into,
    ratio_all_into,
    ratio_one_into,
    ratio_scratch,
    refactor,
    refactor_due,
    table_sums_into,
    vertex_update,
)
from ._loop_state import SEARCH_FIELDS, TREE_FIELDS, SearchState, TreeState

#: :func:`run_moves` ends: ``stop_at`` reached, or no move left
REACHED, NO_MOVE = 0, 1
#: refused pivots per iteration before the search ends (as :data:`tabu.epts.REFUSALS`)
REFUSALS = 8
IMPROVE, DIVERSIFY = 0, 1
#: rounding allowance (relative to the best key) on "values are >= 0" (:func:`_diversify`)
PRUNE_MARGIN = 1e-9
#: objective codes of :func:`finish` (:class:`gto.engine._problem.Objective`)
OBJECTIVE_CODE = {"product": 0, "minimum": 1, "count": 2, "lexicographic": 3}

#: the walker's arrays (views: the compiled moves change the walker in place); the
#: blocks' arrays are stacked (``Binv``, ``theta``, ``tight``: by decision) or flat
#: (per row, decision d's from ``off[d]``; ``G`` and ``rows_t`` row-major, from
#: ``m * off[d]``), the blocks hold views (:func:`adopt_blocks`); ``ints`` and
#: ``floats`` hold the scalars (I_*, F_*); ``work``, ``ratio`` (the ratio tests',
#: :func:`gto.engine._kernels.ratio_scratch`) and ``score_work`` (:func:`score`'s) are
#: the loop's scratch, so that a move allocates little; the compiled loop reads them
#: through a :class:`TreeState` (:func:`loop_state`)
TreeArrays = namedtuple("TreeArrays", TREE_FIELDS)
I_NTHETA, I_R, I_M, I_WIDTH, I_P, I_OBJ, I_PIVOTS, I_NCOUNTS, I_BEST_CHANGED, I_EXACT = range(10)
(F_EPS, F_SCALE, F_VALUE, F_COUNT, F_BEST_COUNT, F_BEST_VALUE, F_RESIDUAL, F_PIVOT_TOL, F_PIVOT_RTOL,
 F_ZERO_TOL, F_MAX_COND) = range(11)

#: the search's state; ``ist``/``fst`` its scalars (S_*/SF_*), ``par`` te, tl, k, m; ``div_work``
#: :func:`_diversify`'s scratch (frequency terms, visited flags, one slot)
SearchArrays = namedtuple("SearchArrays", SEARCH_FIELDS)
(S_NCAND, S_ORIG, S_REMAKE, S_MODE, S_DIV_LEFT, S_WINDOW, S_DONE, S_BEST_IT, S_UNSAVED,
 S_REMAKES, S_SAVED) = range(11)
SF_CUR, SF_BEST, SF_RHO = range(3)
P_TE, P_TL, P_KSTAG, P_MDIV = range(4)
FP_DELTA, FP_ZERO, FP_TOL = range(3)


# -- the walker ------------------------------------------------------------------

@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _rows(off, flat, d):
    """Decision d's part of a per-row array of the blocks (``off``: where each starts)."""
    return flat[off[d]:off[d + 1]]


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _mat(off, m, flat, d):
    """Decision d's (m, rows) matrix of a flat per-block buffer (``G``, ``rows_t``)."""
    return flat[m * off[d]:m * off[d + 1]].reshape((m, off[d + 1] - off[d]))


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _row_mat(off, m, flat, d):
    """Decision d's (rows, m) matrix of a flat per-block buffer (``rows``)."""
    return flat[m * off[d]:m * off[d + 1]].reshape((off[d + 1] - off[d], m))


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def finish(ints, floats, total, count):
    """Objective value from a move's sums (:meth:`gto.engine._problem.Objective.finish`);
    ``ints``, ``floats``: a :data:`TreeArrays`' scalars (:data:`I_OBJ`, :data:`F_EPS`,
    :data:`F_SCALE`), read by the caller."""
    code = ints[I_OBJ]
    if code <= 1:
        return total
    if code == 2:
        return count
    return count + floats[F_EPS] * total / (total + floats[F_SCALE])


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _ratio_rows(off, m, G, rabs, ybasic, in_block, d):
    """Decision d's (G, rabs, ybasic, in_block): what its ratio tests read."""
    return _mat(off, m, G, d), _rows(off, rabs, d), _rows(off, ybasic, d), _rows(off, in_block, d)


@njit(cache=True, no_cpython_wrapper=True)
def refresh(A, d):
    """Decision d's slots of the edge table (:meth:`TreeWalker._refresh`, dense).

    This function and the walker's other per-move ones read the fields of ``A``
    they need once, in their first, straight-line statements: each read of a
    structref's field loads it from the struct and increfs the array (decref'd
    where the variable dies), so a read inside a loop would pay that at every
    turn."""
    off, ints, floats, fresh, G, rabs, ybasic, in_block = (A.off, A.ints, A.floats, A.fresh, A.G,
                                                           A.rabs, A.ybasic, A.in_block)
    tight, n_real, base, coord, n_coord = (A.tight[d], A.n_real[d], ints[I_NTHETA] + A.row_start[d],
                                           A.coord[d], A.n_coord[d])
    valid, entering, leaving, coef = A.valid, A.entering, A.leaving, A.coef
    G, rabs, ybasic, in_block = _ratio_rows(off, ints[I_M], G, rabs, ybasic, in_block, d)
    steps, leave = ratio_all_into(G, rabs, ybasic, in_block, floats[F_PIVOT_TOL],
                                  floats[F_PIVOT_RTOL], A.ratio)
    edge_slots(steps, leave, steps, -1 - leave, tight, n_real, ybasic, base, ints[I_R], coord,
               n_coord, -1, valid, entering, leaving, coef, d * ints[I_WIDTH])
    fresh[d] = True


@njit(cache=True, no_cpython_wrapper=True)
def edges(A, E, L):
    """Every bounded edge's entering and leaving variables into ``E, L`` (decisions
    that pivoted refreshed); returns the edge-table slots, in order."""
    fresh, valid, entering, leaving = A.fresh, A.valid, A.entering, A.leaving
    for d in range(fresh.shape[0]):
        if not fresh[d]:
            refresh(A, d)
    slots = np.flatnonzero(valid)
    for i in range(slots.shape[0]):
        E[i] = entering[slots[i]]
        L[i] = leaving[slots[i]]
    return slots


@njit(cache=True, no_cpython_wrapper=True)
def score(A, slots, V, first):
    """Values of the moves in edge-table ``slots`` into ``V[first:]`` (NaN as +inf),
    the leaf terms of their decisions brought up to date first.  A slot's value
    does not depend on the other slots scored with it (:func:`table_sums`), so
    scoring a part of the table gives the bits of scoring all of it."""
    ints, floats, stale, terms, degrees, weight = A.ints, A.floats, A.stale, A.terms, A.degrees, A.weight
    ELt, ERt, LE, point_leaves, sides, plan = A.ELt, A.ERt, A.LE, A.point_leaves, A.sides, A.plan
    coef, Zt, H = A.coef, A.Zt, A.H
    product = ints[I_OBJ] == 0
    width = ints[I_WIDTH]
    sums, at_z, need = A.score_work
    need[:] = False
    any_need = False
    for i in range(slots.shape[0]):
        d = slots[i] // width
        need[d] = stale[d]
        any_need |= stale[d]
    if any_need:
        for d in range(stale.shape[0]):
            stale[d] = stale[d] and not need[d]
        leaf_terms(ELt, ERt, LE, point_leaves, sides, weight, terms, degrees, need, product, plan)
    table_sums_into(slots, coef, width, Zt, H, terms, degrees, weight, ints[I_P], product, sums, at_z)
    for i in range(slots.shape[0]):
        v = finish(ints, floats, sums[i, 0], sums[i, 1])
        V[first + i] = np.inf if np.isnan(v) else v


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def candidates(A, E, L, V):
    """Every bounded edge into ``E, L, V`` (NaN values as +inf); returns their number.
    Inlined (numba IR) into its one caller, :func:`_remake`: a compiled level of its
    own would be optimised again inside the caller (docs/speed.md, cold compile)."""
    slots = edges(A, E, L)
    score(A, slots, V, np.int64(0))  # not a literal 0: one compiled score, as _diversify's
    return slots.shape[0]


@njit(cache=True, no_cpython_wrapper=True)
def locate(A, e):
    """(found, d, q, sigma, leave, leaving, coef) of the edge ``e`` opens (:meth:`TreeWalker._locate`)."""
    ints = A.ints
    n_theta, R, m, width = ints[I_NTHETA], ints[I_R], ints[I_M], ints[I_WIDTH]
    off, row_decision, row_start, position, fresh = A.off, A.row_decision, A.row_start, A.position, A.fresh
    k = e - n_theta
    if not 0 <= k < 2 * R:
        return False, 0, 0, 0.0, 0, 0, 0.0
    sigma = 1.0 if k >= R else -1.0
    t = k - R if k >= R else k
    d = row_decision[t]
    q = position[off[d] + t - row_start[d]]  # decision d's row t: no view
    if q < 0:
        return False, 0, 0, 0.0, 0, 0, 0.0
    if fresh[d]:  # the fields each path reads, read there: a field read is reference-counted
        valid, leaving_of, coef = A.valid, A.leaving, A.coef
        j = d * width + (q if sigma > 0 else m + q)
        if not valid[j]:
            return False, 0, 0, 0.0, 0, 0, 0.0
        leaving = leaving_of[j]
        leave = leaving - n_theta - row_start[d]
        return True, d, q, sigma, leave - R if leave >= R else leave, leaving, coef[j]
    tol, rtol = A.floats[F_PIVOT_TOL], A.floats[F_PIVOT_RTOL]
    G, rabs, ybasic, in_block = _ratio_rows(off, m, A.G, A.rabs, A.ybasic, A.in_block, d)
    step, leave = ratio_one_into(G, q, sigma, rabs, ybasic, in_block, tol, rtol, A.ratio)
    if leave < 0:
        return False, 0, 0, 0.0, 0, 0, 0.0
    leaving = n_theta + row_start[d] + leave + (0 if ybasic[leave] else R)
    return True, d, q, sigma, leave, leaving, sigma * step


@njit(cache=True, no_cpython_wrapper=True)
def move_value(A, d, q, c):
    """Objective if decision d moves by ``c`` along edge q (:meth:`TreeWalker.evaluate`)."""
    ints, z, h = A.ints, A.Zt[d], A.H[d, q]
    ELt, ERt, LE, sides, weight = A.ELt, A.ERt, A.LE, A.sides, A.weight
    if ints[I_OBJ] == 0:  # the product: its passes (the same bits)
        s0, s1 = product_move_sums_into(z, h, c, d, ELt, ERt, LE, sides, A.leaf_ok, weight, ints[I_P], A.work)
    else:
        s0, s1 = move_sums(z, h, c, d, ELt, ERt, LE, sides, A.point_leaves, weight, ints[I_P], False)
    return finish(ints, A.floats, s0, s1)


@njit(cache=True, no_cpython_wrapper=True)
def walker_pivot(A, d, q, sigma, leave):
    """Pivot decision d and update the vertex (:meth:`TreeWalker.pivot` and
    :meth:`gto.engine._block.Block.pivot`), every ``I_EXACT`` pivots with the
    cached errors recomputed exactly first.
    Returns 1 done, 0 refused (block unchanged: a pivot element numerically 0, or
    the refactorisation due found the new block singular).

    The fields of ``A`` the refactorisation (``rows``, ``X1``) and a new fewest-errors
    vertex (``theta``, ``best_theta``) need are read on those paths only: each field
    read is reference-counted."""
    ints, floats, off, updates, fresh, stale = A.ints, A.floats, A.off, A.updates, A.fresh, A.stale
    Binv, H, theta, tight, coord, n_coord = (A.Binv[d], A.H[d], A.theta[d], A.tight[d], A.coord[d],
                                             A.n_coord[d])
    G_all, rows_t_all = A.G, A.rows_t
    r_all, rabs_all, ybasic_all, in_block_all, position_all, rhs_all = (A.r, A.rabs, A.ybasic,
                                                                        A.in_block, A.position, A.rhs)
    m = ints[I_M]
    due_refactor = (updates[d] + 1) % REFACTOR_EVERY == 0
    check = (updates[d] + 1) % CHECK_EVERY == 0
    G, rows_t = _mat(off, m, G_all, d), _mat(off, m, rows_t_all, d)
    r, rabs, ybasic, in_block = (_rows(off, r_all, d), _rows(off, rabs_all, d),
                                 _rows(off, ybasic_all, d), _rows(off, in_block_all, d))
    position, rhs = _rows(off, position_all, d), _rows(off, rhs_all, d)
    if check or due_refactor:  # a refactorisation may follow, and may fail
        saved = (Binv.copy(), G.copy(), H.copy(), theta.copy(), r.copy(), rabs.copy(),
                 tight.copy(), ybasic.copy(), in_block.copy(), position.copy())
    # gto.engine._kernels.block_step's two steps, called here with the loop's scratch
    # (block_step allocates its own at each pivot)
    work = A.work
    if not block_update(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave, sigma,
                        theta, r, rabs, coord, n_coord, floats[F_ZERO_TOL], floats[F_PIVOT_TOL], work):
        return 0
    due = refactor_due(rows_t, tight, theta, rhs, due_refactor, check, floats[F_RESIDUAL])
    if due and not refactor(_row_mat(off, m, A.rows, d), tight, rhs, coord, n_coord, A.X1,
                            floats[F_MAX_COND], Binv, G, H, theta, r, rabs):
        Binv[:] = saved[0]
        G[:] = saved[1]
        H[:] = saved[2]
        theta[:] = saved[3]
        r[:] = saved[4]
        rabs[:] = saved[5]
        tight[:] = saved[6]
        ybasic[:] = saved[7]
        in_block[:] = saved[8]
        position[:] = saved[9]
        return 0
    updates[d] += 1
    fresh[d] = False
    stale[:] = True
    ints[I_PIVOTS] += 1
    X1t, Zt, znew, ELt, ERt, LE, sides, point_leaves, weight = (A.X1t, A.Zt, A.znew, A.ELt, A.ERt,
                                                                A.LE, A.sides, A.point_leaves,
                                                                A.weight)
    child_kind, child_index, leaf_ok, wrong, counts = (A.child_kind, A.child_index, A.leaf_ok,
                                                       A.wrong, A.counts)
    if ints[I_PIVOTS] % ints[I_EXACT] == 0:  # the update below is incremental
        exact_vertex(X1t, theta, d, Zt, ints[I_P], sides, child_kind, child_index, leaf_ok, ELt, ERt,
                     LE, wrong)
    s0, s1, count = vertex_update(X1t, theta, d, Zt, znew, ELt, ERt, LE, sides, point_leaves, weight,
                                  ints[I_P], ints[I_OBJ] == 0, child_kind, child_index, leaf_ok,
                                  wrong, work)
    value = finish(ints, floats, s0, s1) + 0.0  # + the penalty, 0 on dense vertices
    floats[F_VALUE] = value
    floats[F_COUNT] = count
    counts[ints[I_NCOUNTS]] = count
    ints[I_NCOUNTS] += 1
    if count < floats[F_BEST_COUNT] or (count == floats[F_BEST_COUNT]
                                        and value < floats[F_BEST_VALUE]):
        floats[F_BEST_COUNT] = count
        floats[F_BEST_VALUE] = value
        thetas, best_theta = A.theta, A.best_theta
        for k in range(best_theta.shape[0]):
            best_theta[k] = thetas[k]
        ints[I_BEST_CHANGED] = 1
    return 1


@njit(cache=True, no_cpython_wrapper=True)
def refuse(A, d, q, sigma):
    """Drop decision d's edge freeing position q from this vertex's moves (:meth:`TreeWalker._refuse`)."""
    if not A.fresh[d]:
        refresh(A, d)
    A.valid[d * A.ints[I_WIDTH] + (q if sigma > 0 else A.ints[I_M] + q)] = False


# -- the search (tabu.epts's rules) ----------------------------------------------------------

@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _level(v, tol):
    """``v - tol * max(|v|, 1)``; +inf stays +inf."""
    return v - tol * (abs(v) if abs(v) > 1.0 else 1.0) if v < np.inf else v


@njit(cache=True, no_cpython_wrapper=True, inline="always")
def _is_tabu(last_left, last_entered, par, e, l, it):
    return (last_left[e] >= it - par[P_TE]) or (last_entered[l] >= it - par[P_TL])


@njit(cache=True, no_cpython_wrapper=True)
def _pick(S, n, weight, it, asp, rng):
    """Index of the best admissible move among ``S.E[:n]`` (eq. 25 with ``weight``)."""
    ties = best_admissible(S.E[:n], S.L[:n], S.V[:n], S.F, weight, it, S.par[P_TE], S.par[P_TL],
                           S.last_left, S.last_entered, asp)
    return ties[0] if ties.shape[0] == 1 else ties[rng.integers(0, ties.shape[0])]


@njit(cache=True, no_cpython_wrapper=True)
def _remake(A, S, it, thr, asp, rng):
    """Make the candidate list (:func:`tabu.epts._remake`); returns the move's index in S.E or -1."""
    E, L, V, cand, ist = S.E, S.L, S.V, S.cand, S.ist
    last_left, last_entered, par = S.last_left, S.last_entered, S.par
    n = candidates(A, E, L, V)
    ist[S_NCAND] = 0
    ist[S_ORIG] = 0
    if n == 0:
        return -1
    imp = np.flatnonzero(V[:n] < thr)
    k = imp.shape[0]
    if k:
        rnd = rng.random(k)  # np.lexsort((rnd, V)): by value, ties by rnd
        by_rnd = np.argsort(rnd, kind="mergesort")
        order = imp[by_rnd[np.argsort(V[imp[by_rnd]], kind="mergesort")]]
        for i in range(k):
            j = order[i]
            if not _is_tabu(last_left, last_entered, par, E[j], L[j], it) or V[j] < asp:
                c = 0
                for a in range(k):
                    if a != i:
                        cand[c] = E[order[a]]
                        c += 1
                ist[S_NCAND] = c
                ist[S_ORIG] = k
                return j
    return _pick(S, n, 0.0, it, asp, rng)


@njit(cache=True, no_cpython_wrapper=True)
def _diversify(A, S, it, asp, rng):
    """The eq. 25 move (:func:`tabu.epts._diversify`); returns its index in S.E or -1.

    Only the moves that can win are scored: a move's key is its value plus its
    frequency term ``K``, and values are errors, >= 0 (up to rounding: a margin
    of ``PRUNE_MARGIN`` relative), so once a key ``best`` is found no move with
    ``K > best`` can beat it or tie with it.  Scored in increasing ``K``, the
    moves stop there (about 4 of 54 on diabetes, where ``rho / it`` times the
    frequency differences dwarfs the values' spread); the others get +inf, which
    neither wins nor ties, so :func:`_pick` chooses as among all the values.
    The next lowest ``K`` is found by a pass over the moves rather than a sort of
    all of them (a few moves are visited); moves with equal ``K`` are all scored
    once one is (``K - best <= K - (V + K) <= 0``), so the order among them
    changes nothing.

    Every decision that pivoted has its whole edge table made (:func:`edges`):
    bounding its moves' ``K`` from the entering variables, without its ratio
    tests, does not prune, since the winning moves mostly enter and leave
    variables never moved, whose ``K`` is that bound's floor ``-weight * it``
    (docs/speed.md, round 14).
    """
    E, L, V, F = S.E, S.L, S.V, S.F
    last_left, last_entered, par = S.last_left, S.last_entered, S.par
    slots = edges(A, E, L)
    n = slots.shape[0]
    if n == 0:
        return -1
    weight = S.fst[SF_RHO] / it
    K, visited, one = S.div_work
    for i in range(n):
        K[i] = frequency_term(F, E[i], L[i], weight, it)
        visited[i] = False
        V[i] = np.inf
    best = np.inf
    for _ in range(n):
        i = np.int64(-1)  # not a literal -1: numba would type score's call for it too
        for a in range(n):  # the lowest K not visited
            if not visited[a] and (i < 0 or K[a] < K[i]):
                i = a
        visited[i] = True
        if K[i] - best > PRUNE_MARGIN * max(1.0, abs(best)):  # best finite here
            break
        one[0] = slots[i]
        score(A, one, V, i)
        key = V[i] + K[i]
        if key < best and (V[i] < asp or not _is_tabu(last_left, last_entered, par, E[i], L[i],
                                                       it)):
            best = key
    return _pick(S, n, weight, it, asp, rng)


@njit(cache=True, no_cpython_wrapper=True)
def _scan(A, S, it, thr, asp):
    """First admissible improving move of the candidate list (:func:`tabu.epts._scan`):
    (found, e, l, v, d, q, sigma, leave)."""
    cand, ist, last_left, last_entered, par = S.cand, S.ist, S.last_left, S.last_entered, S.par
    i = 0
    while i < ist[S_NCAND]:
        e = cand[i]
        found, d, q, sigma, leave, l, c = locate(A, e)
        v = move_value(A, d, q, c) if found else np.nan
        drop = not found or not v < thr
        keep = not drop and _is_tabu(last_left, last_entered, par, e, l, it) and not v < asp
        if keep:
            i += 1
            continue
        for a in range(i, ist[S_NCAND] - 1):  # drop entry i
            cand[a] = cand[a + 1]
        ist[S_NCAND] -= 1
        if not drop:
            return True, e, l, v, d, q, sigma, leave
    return False, 0, 0, 0.0, 0, 0, 0.0, 0


@njit(cache=True, no_cpython_wrapper=True)
def next_move(A, S, it, rng):
    """The move of iteration ``it`` (:func:`tabu.epts._next_move`):
    (found, e, l, v, d, q, sigma, leave)."""
    tol = S.fpar[FP_TOL]
    thr = _level(S.fst[SF_CUR], tol)
    asp = _level(S.fst[SF_BEST], tol)
    if S.ist[S_MODE] != IMPROVE:
        j = _diversify(A, S, it, asp, rng)
        if j < 0:
            return False, 0, 0, 0.0, 0, 0, 0.0, 0
    else:
        if not S.ist[S_REMAKE]:
            move = _scan(A, S, it, thr, asp)
            if move[0]:
                S.ist[S_REMAKE] = S.ist[S_NCAND] == 0 or S.ist[S_NCAND] * 8 < S.ist[S_ORIG]
                return move
        j = _remake(A, S, it, thr, asp, rng)
        S.ist[S_REMAKES] += 1
        S.ist[S_REMAKE] = S.ist[S_NCAND] == 0 or S.ist[S_NCAND] * 8 < S.ist[S_ORIG]
        if j < 0:
            return False, 0, 0, 0.0, 0, 0, 0.0, 0
    e, l, v = S.E[j], S.L[j], S.V[j]
    found, d, q, sigma, leave, _, _ = locate(A, e)
    return found, e, l, v, d, q, sigma, leave


@njit(cache=True, no_cpython_wrapper=True)
def save_best(A, S):
    """Keep the current vertex as the search's best (its theta and basis flags)."""
    S.saved_theta[:] = A.theta
    S.saved_in_block[:] = A.in_block
    S.saved_ybasic[:] = A.ybasic
    S.ist[S_SAVED] = 1


@njit(cache=True, no_cpython_wrapper=True)
def after_move(S, e, l, v, it):
    """Book move (e, l) of value v made at iteration ``it``: memories, values, history,
    then the mode switch (:func:`tabu.epts._apply`, :func:`tabu.epts._switch_mode`)."""
    S.last_entered[e] = it
    S.last_left[l] = it
    S.F[l] += it
    S.F[e] -= it
    S.fst[SF_CUR] = v
    if v < S.fst[SF_BEST]:
        S.fst[SF_BEST] = v
        S.ist[S_BEST_IT] = it
        S.ist[S_UNSAVED] = 1
    S.hv[it] = v
    S.hb[it] = S.fst[SF_BEST]
    S.hm[it] = S.ist[S_MODE]
    S.ist[S_DONE] = it
    if S.ist[S_MODE] == DIVERSIFY:
        S.ist[S_DIV_LEFT] -= 1
        if S.ist[S_DIV_LEFT] == 0:
            S.ist[S_MODE] = IMPROVE
            S.ist[S_REMAKE] = 1
            S.ist[S_WINDOW] = it
    elif it - S.ist[S_WINDOW] >= S.par[P_KSTAG]:
        ref = S.hb[it - S.par[P_KSTAG]]
        if abs(S.fst[SF_BEST] - ref) <= S.fpar[FP_DELTA] * max(abs(ref), S.fpar[FP_ZERO]):
            S.ist[S_MODE] = DIVERSIFY
            S.ist[S_DIV_LEFT] = S.par[P_MDIV]


@njit(cache=True)
def run_moves(A, S, rng, stop_at):
    """Moves until ``stop_at`` moves are done; returns REACHED, or NO_MOVE when an
    iteration finds no move or has more than REFUSALS refused pivots.  ``A``, ``S``:
    the :class:`TreeState` and :class:`SearchState` of :func:`loop_state` (the
    loop's one entry from Python)."""
    ist, fst = S.ist, S.fst
    while ist[S_DONE] < stop_at:
        it = ist[S_DONE] + 1
        made = False
        attempt = 0
        while attempt <= REFUSALS:
            found, e, l, v, d, q, sigma, leave = next_move(A, S, it, rng)
            if not found:
                return NO_MOVE
            if ist[S_UNSAVED] and not v < fst[SF_BEST]:
                save_best(A, S)
                ist[S_UNSAVED] = 0
            if walker_pivot(A, d, q, sigma, leave):
                made = True
                break
            refuse(A, d, q, sigma)
            ist[S_REMAKE] = 1
            attempt += 1
        if not made:
            return NO_MOVE
        after_move(S, e, l, v, it)
    return REACHED


@njit(cache=True)
def loop_state(tree, search):
    """The :class:`TreeState` and :class:`SearchState` of a :data:`TreeArrays` and a
    :data:`SearchArrays` (the same arrays, held by reference: :mod:`gto.engine._loop_state`),
    borrowed (:mod:`gto.engine._borrow`): the caller keeps ``tree`` and ``search``."""
    return TreeState(*borrowed(tree)), SearchState(*borrowed(search))


# -- the Python side ---------------------------------------------------------------------

#: the blocks' arrays the compiled loop reads and changes: stacked by decision, or flat
STACKED = ("Binv", "theta", "tight")
FLAT = ("G", "_rows_t", "rows", "rhs", "in_block", "position", "ybasic", "r", "rabs")


def adopt_blocks(blocks, previous=None):
    """Move the blocks' arrays into shared buffers (each block keeps views into
    them, which it changes in place); returns ``(buffers, off)``.  ``previous``:
    such a pair, returned as it is if the blocks still view it (a walker's blocks
    built in :func:`block_buffers`' buffers: nothing is copied)."""
    if previous is not None and all(getattr(b, name).base is previous[0][name]
                                    for b in blocks for name in STACKED + FLAT):
        return previous
    sizes = [b.rows.shape[0] for b in blocks]
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    buffers = {}
    for name in STACKED:
        buffers[name] = np.ascontiguousarray(np.stack([getattr(b, name) for b in blocks]))
    for name in FLAT:
        buffers[name] = np.concatenate([np.ravel(getattr(b, name)) for b in blocks])
    for d, b in enumerate(blocks):
        for name in STACKED:
            setattr(b, name, buffers[name][d])
        for name in FLAT:
            part = buffers[name]
            shape = getattr(b, name).shape
            k = math.prod(shape) // sizes[d] if sizes[d] else 0  # per row (ints: no numpy call)
            setattr(b, name, decision_part(part, off, d, k).reshape(shape))
    return buffers, off


def block_buffers(problem):
    """Buffers for the blocks of a walker on ``problem``, laid out as :func:`adopt_blocks`
    lays them out (the rows and their transposes: the problem's), and per decision the
    views of them its block holds its state in (``Block(out=...)``, names
    :data:`gto.engine._block.OUT`): blocks built in them need no adoption, nothing is
    copied.  Returns ``((buffers, off), views)``."""
    B, m = problem.blocks, problem.data.m
    off = np.asarray(B.row_start, dtype=np.int64)
    D, R = len(off) - 1, int(off[-1])
    buffers = {"Binv": np.empty((D, m, m)), "theta": np.empty((D, m)),
               "tight": np.empty((D, m), dtype=np.int64), "G": np.empty(m * R), "_rows_t": B._flat_t,
               "rows": B._flat, "rhs": np.empty(R), "in_block": np.empty(R, dtype=bool),
               "position": np.empty(R, dtype=np.int64), "ybasic": np.empty(R, dtype=bool),
               "r": np.empty(R), "rabs": np.empty(R)}
    views, rows = [], off.tolist()
    for d in range(D):
        view = {name: buffers[name][d] for name in STACKED}
        view["G"] = decision_part(buffers["G"], rows, d, m).reshape(m, rows[d + 1] - rows[d])
        for name in ("rhs", "in_block", "position", "ybasic", "r", "rabs"):
            view[name] = decision_part(buffers[name], rows, d)
        views.append(view)
    return (buffers, off), views


def built_in(blocks, problem, views):
    """True if each block holds its state in its ``views`` (:func:`block_buffers`) and
    views the problem's rows: no pseudo-row changed its shape."""
    B = problem.blocks
    return all(b.rows is B.rows[d] and b._rows_t is B.rows_t[d]
               and all(getattr(b, name) is array for name, array in views[d].items())
               for d, b in enumerate(blocks))


def tree_arrays(walker, max_iter):
    """The :data:`TreeArrays` of ``walker`` (views of its arrays and its blocks')."""
    P, blocks = walker.problem, walker.blocks
    ints = np.array([P.blocks.n_theta, P.blocks.R, P.data.m, walker._width, P.p,
                     OBJECTIVE_CODE[walker.objective.name], 0, 0, 0, walker.exact_every],
                    dtype=np.int64)
    floats = np.array([walker.objective.eps, walker.objective.lex_scale, 0.0, 0.0, 0.0, 0.0,
                       _block.RESIDUAL_TOL, _block.PIVOT_TOL, _block.PIVOT_RTOL, _block.ZERO_TOL,
                       _block.MAX_COND])
    walker._adopted = adopt_blocks(blocks, getattr(walker, "_adopted", None))
    buffers, off = dict(walker._adopted[0]), walker._adopted[1]
    ints_of = {name: np.array([getattr(b, name) for b in blocks], dtype=np.int64)
               for name in ("coord", "n_coord", "n_real", "updates")}
    L = P.layout
    return TreeArrays(
        Zt=walker.Zt, znew=walker._znew, ELt=walker.ELt, ERt=walker.ERt, LE=walker.LE,
        wrong=walker._wrong, H=walker._H, X1t=walker._X1t, terms=walker._terms,
        degrees=walker._degrees, stale=walker._stale, valid=walker._valid,
        entering=walker._entering, leaving=walker._leaving, coef=walker._coef,
        fresh=walker._fresh, point_leaves=L.point_leaves, sides=L.sides, weight=P.data.weight,
        child_kind=L.child_kind, child_index=L.child_index, leaf_ok=walker._leaf_ok,
        row_start=np.asarray(P.blocks.row_start, dtype=np.int64),
        row_decision=np.asarray(P.blocks.row_decision, dtype=np.int64),
        rows_t=buffers.pop("_rows_t"), **buffers, **ints_of, off=off,
        ints=ints, floats=floats, counts=np.empty(max_iter + 1),
        best_theta=np.empty((len(blocks), P.data.m)), plan=walker._plan, X1=P.data.X1,
        work=walker._work, ratio=ratio_scratch(P.data.m),
        score_work=(np.empty((walker._valid.shape[0], 2)), np.empty(len(blocks), dtype=np.int64),
                    np.empty(len(blocks), dtype=bool)))


def search_arrays(walker, off, max_iter, params, fparams, cur, rho):
    """The :data:`SearchArrays` of a search starting at value ``cur`` (``off``: as in
    :data:`TreeArrays`)."""
    c, blocks = walker.n_variables, walker.blocks
    slots = walker._valid.shape[0]
    never = np.int64(-(1 << 60))
    ist = np.zeros(S_SAVED + 1, dtype=np.int64)
    ist[S_REMAKE] = ist[S_UNSAVED] = 1
    hv, hb = np.empty(max_iter + 1), np.empty(max_iter + 1)
    hv[0] = hb[0] = cur
    return SearchArrays(
        last_left=np.full(c, never), last_entered=np.full(c, never),
        F=np.zeros(c, dtype=np.int64), cand=np.empty(slots, dtype=np.int64),
        E=np.empty(slots, dtype=np.int64), L=np.empty(slots, dtype=np.int64), V=np.empty(slots),
        ist=ist, fst=np.array([cur, cur, rho]), hv=hv, hb=hb,
        hm=np.zeros(max_iter + 1, dtype=np.int8),
        saved_theta=np.empty((len(blocks), walker.problem.data.m)),
        saved_in_block=np.zeros(off[-1], dtype=bool), saved_ybasic=np.zeros(off[-1], dtype=bool),
        par=np.array(params, dtype=np.int64), fpar=np.array(fparams, dtype=float),
        div_work=(np.empty(slots), np.empty(slots, dtype=bool), np.empty(1, dtype=np.int64)))


class CompiledLoop:
    """EPTS moves of :func:`tabu.search` on a :class:`TreeWalker`, compiled (module docstring).

    :meth:`run` makes moves up to a count; between calls the walker's Python
    attributes (value, counts, fewest-errors vertex) are up to date, so a
    callback sees the walker as after a Python move.
    """

    def __init__(self, walker, max_iter, rng, tenures, k_stag, m_div, delta, zero_scale, tol, cur,
                 rho):
        self.walker, self.rng = walker, rng
        self.A = tree_arrays(walker, max_iter)
        self.S = search_arrays(walker, self.A.off, max_iter, (*tenures, k_stag, m_div), (delta, zero_scale, tol),
                               cur, rho)
        self._state = loop_state(self.A, self.S)

    @property
    def done(self):
        return int(self.S.ist[S_DONE])

    @property
    def best(self):
        return float(self.S.fst[SF_BEST])

    def run(self, stop_at):
        """Moves until ``stop_at`` moves are done; False if the search ended without a move."""
        self._load()
        code = run_moves(*self._state, self.rng, stop_at)
        self._store()
        return code == REACHED

    def _load(self):
        """Walker attributes into the arrays."""
        w, A = self.walker, self.A
        A.floats[F_VALUE], A.floats[F_COUNT] = w._value, w.count
        A.floats[F_BEST_COUNT], A.floats[F_BEST_VALUE] = w.best_count[0], w.best_count[1]
        A.ints[I_PIVOTS] = w.pivots
        for d, b in enumerate(w.blocks):
            A.updates[d] = b.updates

    def _store(self):
        """The arrays into the walker's attributes."""
        w, A = self.walker, self.A
        w._value, w.count = float(A.floats[F_VALUE]), float(A.floats[F_COUNT])
        w.counts.extend(A.counts[: A.ints[I_NCOUNTS]].tolist())
        A.ints[I_NCOUNTS] = 0
        if A.ints[I_BEST_CHANGED]:
            w.best_count = (float(A.floats[F_BEST_COUNT]), float(A.floats[F_BEST_VALUE]),
                            A.best_theta.copy())
            w.best_count_time = time.time()
            A.ints[I_BEST_CHANGED] = 0
        w.pivots = int(A.ints[I_PIVOTS])
        for d, b in enumerate(w.blocks):
            b.updates = int(A.updates[d])
        w._located = (None, None)

    def state(self):
        """The search's state as :func:`tabu.epts._result` reads it."""
        S = self.S
        saved = bool(S.ist[S_SAVED])
        return _State(
            cur=float(S.fst[SF_CUR]), best=self.best, best_it=int(S.ist[S_BEST_IT]),
            unsaved=bool(S.ist[S_UNSAVED]), done=self.done, n_remakes=int(S.ist[S_REMAKES]),
            rho=float(S.fst[SF_RHO]), hv=S.hv, hb=S.hb, hm=S.hm,
            best_x=S.saved_theta.ravel().copy() if saved else None,
            best_basis=self._saved_basis() if saved else None)

    def _saved_basis(self):
        off, S = self.A.off, self.S
        parts = [(S.saved_in_block[a:b], S.saved_ybasic[a:b]) for a, b in zip(off[:-1], off[1:])]
        return self.walker.basis_of(*zip(*parts))


class _State:
    def __init__(self, **fields):
        self.__dict__.update(fields)
