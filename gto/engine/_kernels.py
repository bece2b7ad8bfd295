"""Compiled inner loops of the structured walker (numba).

numpy's per-call overhead dominates at the walker's sizes (a few thousand
triples, tens of moves): ``experiments/bench_gto.py`` measured about 1 ms for
one full neighbourhood in numpy against ~0.05 ms here.  Each kernel is a
plain loop over arrays the walker already holds.  What the measurements
taught: a helper function with a loop of its own, called inside a loop over
the points, stops LLVM from vectorising it (four times slower; a small
straight-line helper is inlined harmlessly), and mispredicted data-dependent
branches cost more than the arithmetic around them.
"""
from __future__ import annotations

import numpy as np
from numba import njit
from numba.cpython.unsafe.numbers import trailing_zeros

from ._lp_kernels import well_conditioned
from ._objectives import COUNT_TOL

#: decision values up to this (scaled units, margin 1) count as 0: the point goes
#: left.  Points a rounding error from the hyperplane then go left in the walker
#: and in the tree it returns (:meth:`gto.engine._problem.TreeProblem.tree_of` with
#: ``snap``), whichever sign the rounding gave them.
BOUNDARY_TOL = 1e-9

#: lets LLVM vectorise sums over the points (reassociation only: no finite-math
#: assumption, the minimum error uses inf); results are reproducible on a machine
REASSOC = {"reassoc"}


@njit(cache=True)
def pivot_threshold(g, in_block, tol, rtol):
    """Smallest usable |g|: ``max(tol, rtol * max |g|)`` over the rows outside the block.

    A relative floor keeps the block well conditioned: replacing a row
    through a pivot element much smaller than the column's largest entry
    would make it (nearly) singular.
    """
    top = 0.0
    for t in range(g.shape[0]):
        if not in_block[t]:
            top = max(top, abs(g[t]))
    return max(tol, rtol * top)


#: rows of a column's exact prefix in :func:`_ratio_columns` (the rule run in order,
#: to get each sign's state that filters the rest)
RATIO_PREFIX = 64

#: rows marked and walked at a time after the prefix (:func:`_ratio_chunks`); a
#: multiple of 8
RATIO_CHUNK = 64

#: a column's rows with |g| at or above this multiple of the prefix's largest |g|
#: are marked for the relative floor's bound (:func:`_ratio_floor`)
RATIO_BIG = 1024.0


@njit(cache=True, inline="always")
def _ratio_rule(G, q, thr, rabs, ybasic, best, row, c, t0, t1):
    """The ratio test's rule over rows t0..t1-1 of column q of ``G``, in order, from the
    state in ``best[c]`` and ``row[c]`` (per sign ``s``: smallest step so far and its
    row): row t of sign ``s`` takes over when ``|g| > thr`` and ``rabs[t] < best[c, s] * |g|``.

    The helpers below are passed ``G`` and a column (and ``best``,
    ``row``, ``mask`` and a slot) rather than views made by the caller per column:
    each view, and each array argument of a compiled call, is reference-counted (an
    atomic update) at every call; for the same reason a group of columns is marked
    and walked in one call (:func:`_ratio_chunks`)."""
    for t in range(t0, t1):
        x = G[q, t]
        a = abs(x)
        s = 0 if (x > 0) == ybasic[t] else 1
        if a > thr and rabs[t] < best[c, s] * a:
            best[c, s] = rabs[t] / a
            row[c, s] = t


@njit(cache=True, inline="always")
def _ratio_top(G, q, in_block, t1):
    """Largest |g| of column q in rows 0..t1-1 outside the block (NaN ignored, 0 if none)."""
    top = 0.0
    for t in range(t1):
        if not in_block[t]:
            top = max(top, abs(G[q, t]))
    return top


@njit(cache=True)
def _ratio_prefix_three(G, q, thr, rabs, ybasic, in_block, p, best, row, big, scale):
    """:func:`_ratio_rule` over rows 0..p-1 of columns q, q + 1, q + 2 of ``G`` in one
    sweep (the rows' data read once; the loop written out, with arrays of its own:
    views of ``best`` or a helper per column made it four times slower), from the
    empty state; ``big``: ``scale`` times each column's largest |g| outside the
    block in those rows.  ``G`` is indexed, not viewed per column (a view is
    reference-counted)."""
    ba = np.full(2, np.inf)
    bb = np.full(2, np.inf)
    bc = np.full(2, np.inf)
    ra = np.full(2, -1)
    rb = np.full(2, -1)
    rc = np.full(2, -1)
    ta = 0.0
    tb = 0.0
    tc = 0.0
    for t in range(p):
        rt = rabs[t]
        yb = ybasic[t]
        out = not in_block[t]
        x = G[q, t]
        a = abs(x)
        if out:
            ta = max(ta, a)
        s = 0 if (x > 0) == yb else 1
        if a > thr and rt < ba[s] * a:
            ba[s] = rt / a
            ra[s] = t
        x = G[q + 1, t]
        a = abs(x)
        if out:
            tb = max(tb, a)
        s = 0 if (x > 0) == yb else 1
        if a > thr and rt < bb[s] * a:
            bb[s] = rt / a
            rb[s] = t
        x = G[q + 2, t]
        a = abs(x)
        if out:
            tc = max(tc, a)
        s = 0 if (x > 0) == yb else 1
        if a > thr and rt < bc[s] * a:
            bc[s] = rt / a
            rc[s] = t
    for s in range(2):
        best[0, s], best[1, s], best[2, s] = ba[s], bb[s], bc[s]
        row[0, s], row[1, s], row[2, s] = ra[s], rb[s], rc[s]
    big[0] = scale * ta
    big[1] = scale * tb
    big[2] = scale * tc


@njit(cache=True, inline="always")
def _marked(x, rt, yb, v0, v1, big):
    """Whether a row of slack ``rt``, basic-y flag ``yb`` and entry ``x`` may take over a
    column whose states are ``v0``, ``v1`` (per sign), or holds ``|x| >= big``
    (:func:`_ratio_chunks`'s mark; ``|`` rather than ``or``: no branch, so the sweeps
    vectorise)."""
    a = abs(x)
    return (rt < (v0 if (x > 0) == yb else v1) * a) | (a >= big)


@njit(cache=True)
def _ratio_chunks(G, q, c0, k, thr, rabs, ybasic, best, row, big, mask, words, p):
    """:func:`_ratio_rule` over rows p.. of the k columns ``q + c - c0`` (k = 1, or 3
    with c0 = 0) into their slots c = c0..c0+k-1 of ``best`` and ``row``, in
    chunks of :data:`RATIO_CHUNK` rows.  Per chunk a branch-free sweep (vectorised,
    no fast-math; three columns in one) marks the rows with
    ``rabs[t] < b[s] * |g|``, ``b`` the states at the chunk's start, or with
    ``|g| >= big[c]``, into ``mask[c]``; the rule then runs over each column's
    marked rows in order (``words``: the marks as ``uint64``, eight a word, the
    set bytes found by their trailing zeros), its state falling for the next
    chunk.  Returns the slots with a marked row holding |g| >= ``big[c]``, as
    bits ``1 << c``.  ``G`` and ``mask`` are indexed, not viewed: a view is
    reference-counted.  The sweeps index rows by an unsigned ``t0 + i``: signed,
    it might be negative as far as LLVM knows, and numba's wraparound of negative
    indices then turned the sweep's loads into gathers."""
    T = G.shape[1]
    seen = 0
    for t0 in range(p, T, RATIO_CHUNK):
        n = min(RATIO_CHUNK, T - t0)
        for c in range(c0, c0 + k):  # a last, short chunk: no marks past its rows
            for i in range(n, RATIO_CHUNK):
                mask[c, i] = 0
        if k == 3:
            _ratio_marks_three(G, q, t0, n, rabs, ybasic, best, big, mask)
        else:
            v0, v1, big_c = best[c0, 0], best[c0, 1], big[c0]
            for i in range(n):
                t = np.uint64(t0) + np.uint64(i)  # unsigned: see the docstring
                mask[c0, i] = _marked(G[q, t], rabs[t], ybasic[t], v0, v1, big_c)
        for c in range(c0, c0 + k):
            qc, big_c = q + c - c0, big[c]
            for w in range(RATIO_CHUNK // 8):
                bits = words[c, w]
                while bits != 0:
                    t = t0 + 8 * w + int(trailing_zeros(bits) >> 3)
                    bits &= bits - np.uint64(1)
                    x = G[qc, t]
                    a = abs(x)
                    if a >= big_c:
                        seen |= 1 << c
                    s = 0 if (x > 0) == ybasic[t] else 1
                    if a > thr and rabs[t] < best[c, s] * a:
                        best[c, s] = rabs[t] / a
                        row[c, s] = t
    return seen


@njit(cache=True)
def _ratio_marks_three(G, q, t0, n, rabs, ybasic, best, big, mask):
    """Marks of rows t0..t0+n-1 of columns q, q + 1, q + 2 into ``mask[0:3, :n]`` in
    one branch-free sweep (see :func:`_ratio_chunks`)."""
    va0, va1, vb0, vb1 = best[0, 0], best[0, 1], best[1, 0], best[1, 1]
    vc0, vc1 = best[2, 0], best[2, 1]
    biga, bigb, bigc = big[0], big[1], big[2]
    for i in range(n):
        t = np.uint64(t0) + np.uint64(i)  # unsigned: see _ratio_chunks
        rt = rabs[t]
        yb = ybasic[t]
        mask[0, i] = _marked(G[q, t], rt, yb, va0, va1, biga)
        mask[1, i] = _marked(G[q + 1, t], rt, yb, vb0, vb1, bigb)
        mask[2, i] = _marked(G[q + 2, t], rt, yb, vc0, vc1, bigc)


@njit(cache=True, inline="always")
def _winners_above(G, q, row, c, level):
    """Whether each of column q's winners ``row[c]`` (per sign; -1: none) has |g| above
    ``level``."""
    r0, r1 = row[c, 0], row[c, 1]
    return (r0 < 0 or abs(G[q, r0]) > level) and (r1 < 0 or abs(G[q, r1]) > level)


@njit(cache=True, inline="always")
def _floor_may_bind(G, q, rtol, row, c, big, seen_big):
    """Whether the relative floor (:func:`_ratio_floor`) may bind on column q's winners
    ``row[c]``.  Unless ``seen_big``, top <= ``big``, so winners above ``rtol * big``
    are above the floor (rounding is monotone; a winner's |g| exceeds tol) and top is
    not needed."""
    return seen_big or not _winners_above(G, q, row, c, rtol * big)


@njit(cache=True, inline="always")
def _ratio_floor(G, q, tol, rtol, rabs, ybasic, in_block, best, row, c):
    """The relative floor ``max(tol, rtol * top)`` (top: the largest |g| of column q
    outside the block): where a winner's |g| (``row[c]``) is at or below it, the
    column is tested again with it.  Called where :func:`_floor_may_bind`: most
    columns skip it, and an inlined function's array arguments are copied, each
    copy reference-counted, wherever it is called."""
    T = G.shape[1]
    floor = max(tol, rtol * _ratio_top(G, q, in_block, T))
    if not _winners_above(G, q, row, c, floor):
        best[c, 0] = best[c, 1] = np.inf
        row[c, 0] = row[c, 1] = -1
        _ratio_rule(G, q, floor, rabs, ybasic, best, row, c, 0, T)


@njit(cache=True, inline="always")
def _ratio_one_column(G, q, tol, rtol, rabs, ybasic, in_block, best, row, c, mask, words, big):
    """:func:`_ratio_columns`' rule for column q into ``best[c]``, ``row[c]`` (and ``big[c]``)."""
    T = G.shape[1]
    p = min(RATIO_PREFIX, T)
    best[c, 0] = best[c, 1] = np.inf
    row[c, 0] = row[c, 1] = -1
    _ratio_rule(G, q, tol, rabs, ybasic, best, row, c, 0, p)
    big[c] = (RATIO_BIG if p < T else 1.0) * _ratio_top(G, q, in_block, p)
    seen_big = False
    if p < T:
        seen_big = _ratio_chunks(G, q, c, 1, tol, rabs, ybasic, best, row, big, mask, words, p) != 0
    if _floor_may_bind(G, q, rtol, row, c, big[c], seen_big):
        _ratio_floor(G, q, tol, rtol, rabs, ybasic, in_block, best, row, c)


@njit(cache=True)
def ratio_scratch(m):
    """The scratch of :func:`_ratio_columns` for up to m columns (of any length): the
    results (steps, rows: 2m each), the per-sign states of three columns (best,
    row), their large-|g| levels (big), their row marks in a chunk (mask, three
    rows of :data:`RATIO_CHUNK` bytes) and the marks as ``uint64`` words."""
    mask = np.zeros((3, RATIO_CHUNK), dtype=np.uint8)
    return (np.empty(2 * m), np.empty(2 * m, dtype=np.int64), np.empty((3, 2)),
            np.empty((3, 2), dtype=np.int64), np.empty(3), mask, mask.view(np.uint64))


@njit(cache=True)
def _ratio_columns(G, q0, q1, rabs, ybasic, in_block, tol, rtol, scratch):
    """Ratio tests of edges q0..q1-1 (rows of ``G``, see :mod:`gto.engine._block`), both
    signs: slot q is sigma=+1, slot m + q sigma=-1.  Returns (steps, rows), the
    first two arrays of ``scratch`` (:func:`ratio_scratch`, for at least G's
    rows), their first 2m entries set (inf / -1 where the ray is unbounded or the
    edge not tested).  The scratch's earlier contents do not matter: the compiled
    loop holds one for all its tests rather than allocating at each.

    The rule: along ``sigma * M^-1 e_q`` a basic y (ybasic) blocks when sigma * g
    exceeds the pivot threshold (:func:`pivot_threshold`), a basic u when it
    is below minus it; the step is |r| / |g|.  Per sign, the rows in order, row t
    takes over when ``rabs[t] < best * |g|`` (``best``: the smallest step so far,
    inf at first), so ties go to the lowest row (:func:`_ratio_rule`).  One pass
    tests every |g| > tol; only an edge whose winner's |g| is at or below the
    relative floor ``max(tol, rtol * max |g|)`` (outside the block) is tested
    again with it (:func:`_ratio_floor`).  ``rabs`` is |r| (NaN and inf allowed),
    inf on block rows, so they never win.

    Computed with the same results, bit for bit, by skipping the rows that cannot
    take over: the rule runs over the first :data:`RATIO_PREFIX` rows; then, a
    chunk of :data:`RATIO_CHUNK` rows at a time, a vectorised sweep marks the
    rows with ``rabs[t] < v[s] * |g|``, ``v`` each sign's state at the chunk's
    start, and the rule runs over the marked rows only, in order
    (:func:`_ratio_chunks`).  Exact because the state ``b`` of a sign never
    rises: a row that takes over has ``rabs < fl(b |g|)``, so
    ``rabs / |g| <= b`` (were it above, ``rabs`` would be a float strictly
    between ``b |g|`` and its rounding to nearest), and the new state
    ``fl(rabs / |g|) <= b``.  So within a chunk ``b <= v``, and an unmarked row
    cannot take over: ``fl(b |g|) <= fl(v |g|) <= rabs[t]`` (rounding is
    monotone; ``rabs >= 0``, and for |g| = inf and b = 0 the product is NaN: no
    take-over either).  Marking rows that cannot win (|g| <= tol) is harmless:
    the rule tests them.  Since ``v`` falls from chunk to chunk, few more rows are
    marked than take over, where one state for the whole column marks every row
    below the prefix's smallest step (docs/speed.md, round 16).
    tests/test_engine_kernels.py compares the results with a literal
    implementation on ties, near ties, zeros, NaN and inf slacks, |g| at the
    thresholds, large |g|, unbounded edges and chunk edges.  The sweep does a
    third of the rule's work per row (no fast-math); prefixes and sweeps go
    three columns at a time.
    """
    m, T = G.shape
    steps, rows, best, row, big, mask, words = scratch
    for j in range(2 * m):
        steps[j] = np.inf
        rows[j] = -1
    q = q0
    while q < q1:
        k = min(3, q1 - q)
        if k == 3:
            p = min(RATIO_PREFIX, T)
            _ratio_prefix_three(G, q, tol, rabs, ybasic, in_block, p, best, row, big,
                                RATIO_BIG if p < T else 1.0)
            seen = 0
            if p < T:
                seen = _ratio_chunks(G, q, 0, 3, tol, rabs, ybasic, best, row, big, mask, words, p)
            for c in range(3):  # column c's floor reads and writes its slot c only
                if _floor_may_bind(G, q + c, rtol, row, c, big[c], (seen >> c) & 1 != 0):
                    _ratio_floor(G, q + c, tol, rtol, rabs, ybasic, in_block, best, row, c)
        else:
            for c in range(k):
                _ratio_one_column(G, q + c, tol, rtol, rabs, ybasic, in_block, best, row, c, mask, words,
                                  big)
        for c in range(k):
            steps[q + c], rows[q + c] = best[c, 0], row[c, 0]
            steps[m + q + c], rows[m + q + c] = best[c, 1], row[c, 1]
        q += k
    return steps, rows


@njit(cache=True, inline="always")
def ratio_one_into(G, q, sigma, rabs, ybasic, in_block, tol, rtol, scratch):
    """First blocking row along ``sigma * M^-1 e_q``: (step, row) or (inf, -1);
    the rule of :func:`_ratio_columns`, in its ``scratch``."""
    steps, rows = _ratio_columns(G, q, q + 1, rabs, ybasic, in_block, tol, rtol, scratch)
    s = q if sigma > 0 else G.shape[0] + q
    return steps[s], rows[s]


@njit(cache=True, inline="always")
def ratio_all_into(G, rabs, ybasic, in_block, tol, rtol, scratch):
    """Ratio tests of every edge, q with sigma=+1 then q with sigma=-1, by the
    rule of :func:`_ratio_columns`, in its ``scratch`` (the results are its first two
    arrays).  The first column is an ``int64``, as in :func:`ratio_one_into`: a
    literal 0 would compile ``_ratio_columns`` a second time."""
    return _ratio_columns(G, np.int64(0), G.shape[0], rabs, ybasic, in_block, tol, rtol, scratch)


@njit(cache=True)
def ratio_one(G, q, sigma, rabs, ybasic, in_block, tol, rtol):
    """:func:`ratio_one_into` in a scratch of its own."""
    return ratio_one_into(G, q, sigma, rabs, ybasic, in_block, tol, rtol,
                          ratio_scratch(G.shape[0]))


@njit(cache=True)
def ratio_all(G, rabs, ybasic, in_block, tol, rtol):
    """:func:`ratio_all_into` in a scratch of its own (fresh result arrays)."""
    return ratio_all_into(G, rabs, ybasic, in_block, tol, rtol, ratio_scratch(G.shape[0]))


@njit(cache=True, inline="always")
def reached_leaf(Zt, i, child_kind, child_index):
    """Leaf point i reaches from the root (z <= 0 goes left, up to
    :data:`BOUNDARY_TOL`); ``Zt[d, i]`` is decision d's value at point i."""
    node = 0
    while True:
        s = 1 if Zt[node, i] > BOUNDARY_TOL else 0
        if child_kind[node, s] == 1:
            return child_index[node, s]
        node = child_index[node, s]


@njit(cache=True)
def misclassified(Zt, child_kind, child_index, leaf_ok_for_point):
    """Bool per point: misclassified under the strict rule (z <= 0 goes left).

    ``Zt[d, i]``: decision d's value at point i.  ``child_kind[d, s]`` is 0
    for a decision, 1 for a leaf (s = 0 left, 1 right);
    ``leaf_ok_for_point[i, k]`` is True when leaf k has i's class.
    """
    N = Zt.shape[1]
    wrong = np.empty(N, dtype=np.bool_)
    for i in range(N):
        wrong[i] = not leaf_ok_for_point[i, reached_leaf(Zt, i, child_kind, child_index)]
    return wrong


@njit(cache=True)
def exact_errors(Zt, p, sides, child_kind, child_index, leaf_ok, ELt, ERt, LE, wrong):
    """The walker's cached errors recomputed from the decision values ``Zt`` (D, N), in
    place: ``ELt, ERt`` the decision errors (paper §3), ``LE`` the leaf errors (eq.
    13-14) and ``wrong`` the flags of :func:`misclassified`.

    The bits of the numpy formulas ``decision_errors(Zt, p)`` and ``ELt.T @ SL.T +
    ERt.T @ SR.T`` (``SL``, ``SR``: ``sides`` == -1, +1 as 0/1 floats), which
    BLAS sums in decision order: a sum over the decisions in order, each term
    times its 0/1 coefficient (so that inf and NaN errors spread as there), per
    side, then left plus right.  A leaf's sums run as passes over the points
    (one a decision), which LLVM vectorises; each point's additions stay in
    decision order."""
    D, N = Zt.shape
    K = sides.shape[0]
    for d in range(D):
        for i in range(N):
            ELt[d, i], ERt[d, i] = _side_errors(Zt[d, i], p)
    left, right = np.empty(N), np.empty(N)
    for k in range(K):
        left[:] = 0.0
        right[:] = 0.0
        for d in range(D):
            cl = 1.0 if sides[k, d] == -1 else 0.0
            cr = 1.0 if sides[k, d] == 1 else 0.0
            for i in range(N):
                left[i] += ELt[d, i] * cl
                right[i] += ERt[d, i] * cr
        for i in range(N):
            LE[i, k] = left[i] + right[i]
    wrong[:] = misclassified(Zt, child_kind, child_index, leaf_ok)


@njit(cache=True)
def exact_vertex(X1t, theta, d, Zt, p, sides, child_kind, child_index, leaf_ok, ELt, ERt, LE,
                 wrong):
    """Decision d moved to ``theta``: its values ``Zt[d] = theta @ X1t`` by BLAS (the
    bits of numpy's ``@``), then every cached error exactly (:func:`exact_errors`).
    The walker calls this every ``EXACT_EVERY`` pivots, before :func:`vertex_update`,
    which then only folds in the (rounding-sized) difference of its own values."""
    Zt[d] = np.dot(theta, X1t)
    exact_errors(Zt, p, sides, child_kind, child_index, leaf_ok, ELt, ERt, LE, wrong)


@njit(cache=True)
def add_rows_times(out, X, w, sign):
    """``out[i] += sign * w[a] * X[a, i]`` for a = 0, 1, ... in turn (``sign`` 1 or -1:
    negation is exact, so -1 gives the bits of ``out[i] -= w[a] * X[a, i]``), three
    rows of ``X`` a pass: a third of the passes over ``out``, with each point's
    additions in the same order (so the same bits; no fast-math)."""
    m, N = X.shape
    a = 0
    while a + 3 <= m:
        w0, w1, w2 = sign * w[a], sign * w[a + 1], sign * w[a + 2]
        for i in range(N):
            out[i] = ((out[i] + w0 * X[a, i]) + w1 * X[a + 1, i]) + w2 * X[a + 2, i]
        a += 3
    while a < m:
        w0 = sign * w[a]
        for i in range(N):
            out[i] = out[i] + w0 * X[a, i]
        a += 1


@njit(cache=True)
def _pivot_columns(M, work, q):
    """Row q of a basis B is replaced and ``u = work[0, :m]`` is the new row times
    ``B^-1``: the update of ``M = X B^-1`` (or ``B^-1`` itself), column c != q losing
    ``M[:, q] * u[c] / u[q]`` and column q divided by ``u[q]`` (the factors in
    ``work[1]``; ``work`` indexed, not viewed, and nothing allocated: see
    :func:`block_update`)."""
    m = M.shape[1]
    uq = work[0, q]
    for c in range(m):
        work[1, c] = work[0, c] / uq
    work[1, q] = 1.0 - 1.0 / uq
    for i in range(M.shape[0]):
        mq = M[i, q]
        for c in range(m):
            M[i, c] -= mq * work[1, c]


@njit(cache=True)
def _pivot_rows(M, work, q):
    """:func:`_pivot_columns` on ``M`` stored transposed (row c is column c), ``u`` in
    ``work[0]``.  Row q is read from a copy (in ``work[2]``): LLVM then vectorises
    the updates (writing rows of the array it reads from, it did not; twice as
    fast, the same arithmetic).  The rows are indexed, not viewed: a view per row
    is reference-counted."""
    T = M.shape[1]
    for i in range(T):
        work[2, i] = M[q, i]
    uq = work[0, q]
    for c in range(M.shape[0]):
        if c != q:
            f = work[0, c] / uq
            for i in range(T):
                M[c, i] -= f * work[2, i]
    f = 1.0 / uq
    for i in range(T):
        M[q, i] *= f


@njit(cache=True, inline="always")
def basic_of_sign(x, ybasic, zero_tol):
    """Whether a row's y is basic at slack ``x``: y beyond ``zero_tol``, u below
    ``-zero_tol``, as it was (``ybasic``) in between (degenerate).  ``|`` and ``&``
    rather than ``or``/``and``: no branch, so the loops over the rows vectorise
    (docs/speed.md, "The pivot's arithmetic (round 5)")."""
    return (x > zero_tol) | (ybasic & (not x < -zero_tol))


@njit(cache=True)
def block_update(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave, sigma,
                 theta, r, rabs, coord, n_coord, zero_tol, pivot_tol, work):
    """Block position q frees its triple (moving along sigma) and takes triple
    ``leave``: the bookkeeping arrays of :class:`gto.engine._block.Block`,
    Sherman-Morrison on ``Binv`` and the same update of ``G`` and ``H`` (see
    :mod:`gto.engine._block`); then ``theta = Binv @ rhs[tight]`` and the slacks
    ``r = rhs - rows @ theta`` (``rows_t``: the rows transposed; ``rabs = |r|``,
    inf on block rows).  Weights of tight coordinate rows (``coord`` ..
    ``coord + n_coord - 1``, see :mod:`gto.engine._block`) are set to exactly 0.
    Outside the block, a slack beyond ``zero_tol`` has the basic variable of
    its sign (a long step may pass crossings; a simple pivot changes none).
    Returns False, changing nothing, when the pivot element ``u[q]`` of
    ``u = rows[leave] @ Binv`` is not above ``pivot_tol * max(1, max |u|)``
    (the new block would be numerically singular), else True.

    ``work``: scratch of 3 rows of at least ``max(m, T, N)`` (u, the column
    factors, a copy of the pivot row; see :func:`_pivot_rows`), which the caller
    holds: a compiled function that allocates keeps the reference counts of its
    array arguments (see :func:`product_move_sums_into`).
    """
    m, T = rows_t.shape
    for c in range(m):  # u = rows[leave] @ Binv, in work[0]
        work[0, c] = 0.0
    for a in range(m):
        x = rows_t[a, leave]
        for c in range(m):
            work[0, c] += x * Binv[a, c]
    top = 1.0
    for c in range(m):
        top = max(top, abs(work[0, c]))
    if not abs(work[0, q]) > pivot_tol * top:  # the new block would be singular: no change
        return False
    freed = tight[q]
    tight[q] = leave
    in_block[freed] = False
    in_block[leave] = True
    position[freed] = -1
    position[leave] = q
    ybasic[freed] = sigma < 0
    _pivot_columns(Binv, work, q)
    _pivot_rows(G, work, q)
    _pivot_rows(H, work, q)
    for a in range(m):
        acc = 0.0
        for c in range(m):
            acc += Binv[a, c] * rhs[tight[c]]
        theta[a] = acc
    for c in range(m):
        if coord <= tight[c] < coord + n_coord:
            theta[tight[c] - coord] = 0.0
    for t in range(T):
        r[t] = rhs[t]
    add_rows_times(r, rows_t, theta, -1.0)
    for t in range(T):
        rabs[t] = abs(r[t])
        ybasic[t] = basic_of_sign(r[t], ybasic[t], zero_tol)
    for c in range(m):
        r[tight[c]] = 0.0
        rabs[tight[c]] = np.inf
    return True


@njit(cache=True)
def residual(rows_t, tight, theta, rhs):
    """``max |M theta - rhs|`` over the block rows ``tight`` (``rows_t``: the rows transposed)."""
    worst = 0.0
    for c in range(tight.shape[0]):
        acc = 0.0
        for a in range(theta.shape[0]):
            acc += rows_t[a, tight[c]] * theta[a]
        worst = max(worst, abs(acc - rhs[tight[c]]))
    return worst


@njit(cache=True)
def block_step(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave, sigma, theta,
               r, rabs, coord, n_coord, zero_tol, pivot_tol, due_refactor, due_check, residual_tol):
    """:func:`block_update`, then whether the block must be refactorised: 0 refused
    (nothing changed), 1 done, 2 done but a refactorisation is due (``due_refactor``)
    or the residual check (``due_check``) found ``max |M theta - rhs|`` above
    ``residual_tol``."""
    m, T = rows_t.shape
    work = np.empty((3, max(m, T, H.shape[1])))
    if not block_update(Binv, G, H, rows_t, rhs, tight, in_block, position, ybasic, q, leave,
                        sigma, theta, r, rabs, coord, n_coord, zero_tol, pivot_tol, work):
        return 0
    return 2 if refactor_due(rows_t, tight, theta, rhs, due_refactor, due_check, residual_tol) else 1


@njit(cache=True)
def refactor_due(rows_t, tight, theta, rhs, due_refactor, due_check, residual_tol):
    """After :func:`block_update`: whether the block must be refactorised (:func:`block_step`'s 2)."""
    return due_refactor or (due_check and residual(rows_t, tight, theta, rhs) > residual_tol)


@njit(cache=True)
def block_theta(Binv, rows, rhs, tight, coord, n_coord, theta, r, rabs):
    """The vertex of a block: ``theta = Binv @ rhs[tight]`` (weights of tight
    coordinate rows exactly 0), the slacks ``r = rhs - rows @ theta`` (0 on the
    block rows) and ``rabs = |r|`` (inf on the block rows: they never leave); in place.
    BLAS products, as numpy's, so the bits are numpy's."""
    theta[:] = np.dot(Binv, rhs[tight])
    for c in range(tight.shape[0]):
        if coord <= tight[c] < coord + n_coord:
            theta[tight[c] - coord] = 0.0
    r[:] = rhs - np.dot(rows, theta)
    rabs[:] = np.abs(r)
    for c in range(tight.shape[0]):
        r[tight[c]] = 0.0
        rabs[tight[c]] = np.inf


@njit(cache=True)
def refactor(rows, tight, rhs, coord, n_coord, points, max_cond, Binv, G, H, theta, r, rabs):
    """Refactorise a block (:meth:`gto.engine._block.Block.refactorise`): ``Binv`` the
    inverse of ``rows[tight]``, ``G = (rows @ Binv)^T``, ``H = (points @ Binv)^T``
    and :func:`block_theta`, in place.  Returns False, changing nothing, when the
    rows are not independent within ``max_cond`` (:func:`gto.engine._lp_kernels.
    well_conditioned`).  The inverse is LAPACK's ``gesv`` against the identity, the
    products BLAS, as numpy's ``inv`` and ``@``: the same bits from Python and from
    the compiled search."""
    M = rows[tight]
    if not np.all(np.isfinite(M)):
        return False
    try:
        inverse = np.linalg.solve(M, np.eye(M.shape[0]))
    except Exception:  # numba: LinAlgError on an exactly singular block
        return False
    # LAPACK's inverse is F-ordered: passed as its transpose, a C-ordered view
    if not np.all(np.isfinite(inverse)) or not well_conditioned(M, max_cond, inverse.T, np.bool_(True)):
        return False
    Binv[:] = inverse
    G[:] = np.dot(rows, inverse).T
    if points.shape[0]:
        H[:] = np.dot(inverse.T, points.T)
    block_theta(Binv, rows, rhs, tight, coord, n_coord, theta, r, rabs)
    return True


@njit(cache=True)
def within_budget(tight, q, leave, coord, n_coord, budget):
    """True if freeing block position q for row ``leave`` leaves at most ``budget``
    weights not pinned by a tight coordinate row (docs/DESIGN.md §3b; ``budget < 0``: no
    cap).  Coordinate rows are ``coord .. coord + n_coord - 1``."""
    if budget < 0:
        return True
    pinned = 0
    for c in range(tight.shape[0]):
        if coord <= tight[c] < coord + n_coord:
            pinned += 1
    after = tight.shape[0] - 1 - pinned
    if coord <= tight[q] < coord + n_coord:
        after += 1  # a weight moves off zero
    if coord <= leave < coord + n_coord:
        after -= 1  # a weight reaches zero
    return after <= budget


@njit(cache=True)
def edge_slots(steps, leave, csteps, cleave, tight, n_real, ybasic, base, R, coord, n_coord,
               budget, valid, entering, leaving, coef, offset):
    """Decision d's 2m edge slots into the walker's edge table at ``offset``.

    Slot j < m frees block position q = j with sigma = +1 (u enters), slot
    m + q with sigma = -1 (y enters).  A slot is valid when its ray is bounded,
    frees a real row (a triple or a coordinate row) and keeps the decision
    within ``budget`` nonzero weights (:func:`within_budget`); ``coef`` gets
    ``sigma * step``, so the decision's values at the end of the edge are
    ``z + coef * H[q]`` (``H`` as :mod:`gto.engine._block` keeps it).  Variable numbers
    follow :func:`gto.standard_form`: the decision's rows are numbered from
    ``base`` (y), ``base + R`` (u), R the number of rows of all decisions.

    Budget swap: where freeing a coordinate row would exceed the budget, the
    edge instead runs on along its ray to the first weight reaching 0
    (``csteps``, ``cleave``: the ratio tests over the coordinate rows only,
    rows counted from ``coord``), passing the triples' crossings.  Every
    crossing on the ray is a vertex (docs/DESIGN.md §3b, long steps), so this is a
    vertex with the same number of nonzero weights, one feature swapped.
    """
    m = tight.shape[0]
    for j in range(2 * m):
        q = j % m
        row = leave[j]
        step = steps[j]
        if (row >= 0 and cleave[j] >= 0 and coord <= tight[q] < coord + n_coord
                and not within_budget(tight, q, row, coord, n_coord, budget)):
            row = coord + cleave[j]
            step = csteps[j]
        ok = row >= 0 and tight[q] < n_real
        ok = ok and within_budget(tight, q, row, coord, n_coord, budget)
        valid[offset + j] = ok
        if ok:
            entering[offset + j] = base + tight[q] + (R if j < m else 0)
            leaving[offset + j] = base + row + (0 if ybasic[row] else R)
            coef[offset + j] = (1.0 if j < m else -1.0) * step


#: ``leaf_plan(...)[d, 0, 0]`` of a decision some point has two class leaves on one side of
NOT_SIMPLE = -2


@njit(cache=True)
def leaf_terms(ELt, ERt, LE, point_leaves, sides, weight, terms, degrees, stale, product, plan):
    """Per decision d and point i, the point's error as a function of d's new
    decision errors (el, er), from the cached leaf errors; in place.

    ``terms[d]`` stacks, over the points: the coefficients (lowest first) of
    PL(el) = prod (base_k + el) over the class leaves left of d (rows 0..L),
    of PR(er) likewise right of d (rows L+1..2L+1), then C, LOW, A0, B0.
    Product (eq. 19, :func:`product_terms`): ``C * PL(el) * PR(er)``;
    ``degrees[0, d]``, ``degrees[1, d]`` get the degrees of PL and PR.
    Minimum (eq. 17, :func:`minimum_terms`): ``min(LOW, A0 + el, B0 + er)``.
    Only the rows the objective uses are written, and only for decisions
    with ``stale[d]``, whose flags are cleared.  ``plan``: :func:`leaf_plan`
    of ``point_leaves`` and ``sides`` (the product's branch-free path).
    """
    for d in range(terms.shape[0]):
        if not stale[d]:
            continue
        stale[d] = False
        if product and plan[d, 0, 0] != NOT_SIMPLE:
            nl, nr = simple_product_terms(d, ELt, ERt, LE, weight, plan[d], terms[d])
            degrees[0, d] = nl
            degrees[1, d] = nr
        elif product:
            nl, nr = product_terms(d, ELt, ERt, LE, point_leaves, sides, weight, terms[d])
            degrees[0, d] = nl
            degrees[1, d] = nr
        else:
            minimum_terms(d, ELt, ERt, LE, point_leaves, sides, terms[d])


@njit(cache=True)
def leaf_plan(point_leaves, sides):
    """Per decision d and point i, i's class leaves by their side of d, for
    :func:`simple_product_terms`: ``[d, 0, i]`` the leaf left of d, ``[d, 1, i]`` the
    leaf right of d (-1: none), ``[d, 2:, i]`` the leaves not below d in
    ``point_leaves`` order, from row 2 on (-1 after them); ``[d, 0, 0]`` is
    :data:`NOT_SIMPLE` where some point has two class leaves on one side of d (the
    general path then).  Points run along the last axis, so that the terms read
    each row in order.  ``point_leaves`` and ``sides`` are fixed for a search: made
    once, it spares the terms a data-dependent branch per leaf."""
    N, A = point_leaves.shape
    D = sides.shape[1]
    plan = np.full((D, 2 + A, max(N, 1)), -1, dtype=np.int64)
    for d in range(D):
        simple = True
        for i in range(N):
            n0 = 0
            for a in range(A):
                k = point_leaves[i, a]
                if k < 0:
                    break
                s = sides[k, d]
                j = 0 if s < 0 else 1
                if s == 0:
                    plan[d, 2 + n0, i] = k
                    n0 += 1
                elif plan[d, j, i] >= 0:
                    simple = False
                else:
                    plan[d, j, i] = k
        if not simple:
            plan[d, 0, 0] = NOT_SIMPLE
    return plan


@njit(cache=True)
def simple_product_terms(d, ELt, ERt, LE, weight, plan, P):
    """:func:`product_terms` where every point has at most one class leaf on each
    side of d (``plan``: decision d's :func:`leaf_plan`), with the same arithmetic,
    so the same bits.  Per point i, with ``kl = plan[0, i]`` and ``kr = plan[1, i]``:
    ``bl = LE[i, kl] - ELt[d, i]``, PL = (bl, 0 * bl + 1) (NaN where bl is) or
    (1, 0) where ``kl < 0``; PR likewise from ``kr`` and ``ERt``; C = weight[i]
    times ``LE[i, k]`` over the leaves ``plan[2:, i]``, in that order.  Only rows
    0, 1, L1, L1 + 1 and C are written: the degrees are at most 1 and no reader
    goes past them.

    C first, then each side, in passes of their own over the points: short loops
    without data-dependent branches (docs/speed.md, "The product's leaf terms in
    passes")."""
    L1 = (P.shape[0] - 4) // 2
    _constant_row(LE, weight, plan, P[2 * L1])
    deg_l = _side_rows(LE, ELt[d], plan[0], P[0], P[1])
    deg_r = _side_rows(LE, ERt[d], plan[1], P[L1], P[L1 + 1])
    return deg_l, deg_r


@njit(cache=True, inline="always")
def _constant_row(LE, weight, plan, pc):
    """``pc[i] = weight[i] * LE[i, k1] * LE[i, k2] ...`` over the leaves ``k`` of
    ``plan[2:, i]`` (:func:`simple_product_terms`' C), one plan row a pass.  A missing
    leaf is a factor 1.0, exact; :func:`leaf_plan` fills the rows from row 2 on, so
    the first row without a leaf for any point ends the product."""
    N = pc.shape[0]
    n = 0
    for a in range(2, plan.shape[0]):
        top = -1
        for i in range(N):
            top = max(top, plan[a, i])
        if top < 0:
            break
        n += 1
    if n == 0:
        for i in range(N):
            pc[i] = weight[i]
    for a in range(2, 2 + n):
        ks = plan[a]
        src = weight if a == 2 else pc
        for i in range(N):
            k = ks[i]
            v = LE[i, max(k, 0)]
            pc[i] = src[i] * (v if k >= 0 else 1.0)


@njit(cache=True, inline="always")
def _side_rows(LE, e, ks, p0, p1):
    """One side's rows of :func:`simple_product_terms`: ``p0, p1 = b, 0 * b + 1``
    with ``b = LE[i, k] - e[i]`` where point i has a leaf ``k = ks[i]`` on the side,
    else 1, 0.  Returns the degree (1 if some point has a leaf on the side).  The
    leaf errors are gathered into ``p0`` first (no condition), so the selects run
    in a pass LLVM vectorises: no branch on ``k``, which varies point by point."""
    for i in range(p0.shape[0]):
        p0[i] = LE[i, max(ks[i], 0)]
    deg = False
    for i in range(p0.shape[0]):
        b = p0[i] - e[i]
        ok = ks[i] >= 0
        p0[i] = b if ok else 1.0
        p1[i] = 0.0 * b + 1.0 if ok else 0.0
        deg |= ok
    return int(deg)


@njit(cache=True, inline="always")
def _class_leaf(point_leaves, sides, i, a, d):
    """Point i's a-th class leaf k and its side of decision d (-1, 0, +1); k < 0: no more."""
    k = point_leaves[i, a]
    return k, (sides[k, d] if k >= 0 else 0)


@njit(cache=True)
def minimum_terms(d, ELt, ERt, LE, point_leaves, sides, P):
    """Rows LOW, A0, B0 of ``P`` (decision d's block of :func:`leaf_terms`): per
    point the smallest error over its class leaves not below d (LOW), and left
    (A0) and right (B0) of d less d's old decision error on that side (eq. 17)."""
    c_row = P.shape[0] - 4
    for i in range(P.shape[1]):
        low = np.inf
        a0 = np.inf
        b0 = np.inf
        for a in range(point_leaves.shape[1]):
            k, s = _class_leaf(point_leaves, sides, i, a, d)
            if k < 0:
                break
            if s < 0:
                a0 = min(a0, LE[i, k] - ELt[d, i])
            elif s > 0:
                b0 = min(b0, LE[i, k] - ERt[d, i])
            else:
                low = min(low, LE[i, k])
        P[c_row + 1, i] = low
        P[c_row + 2, i] = a0
        P[c_row + 3, i] = b0


@njit(cache=True)
def product_terms(d, ELt, ERt, LE, point_leaves, sides, weight, P):
    """Rows PL, PR and C of ``P`` (decision d's block of :func:`leaf_terms`), eq. 19:
    PL(el) = prod (base_k + el) over the point's class leaves left of d, PR
    likewise right, C the weight times the product over the class leaves not
    below d; ``base_k`` is leaf k's error less d's old decision error on its
    side.  Returns the largest degrees of PL and PR over the points."""
    L1 = (P.shape[0] - 4) // 2
    c_row = 2 * L1
    P[:c_row, :] = 0.0
    deg_l = 0
    deg_r = 0
    for i in range(P.shape[1]):
        P[0, i] = 1.0
        P[L1, i] = 1.0
        nl = 0
        nr = 0
        c = weight[i]
        for a in range(point_leaves.shape[1]):
            k, s = _class_leaf(point_leaves, sides, i, a, d)
            if k < 0:
                break
            if s < 0:
                base = LE[i, k] - ELt[d, i]
                nl += 1
                for g in range(nl, 0, -1):  # multiply PL by (base + el)
                    P[g, i] = P[g, i] * base + P[g - 1, i]
                P[0, i] *= base
            elif s > 0:
                base = LE[i, k] - ERt[d, i]
                nr += 1
                for g in range(nr, 0, -1):
                    P[L1 + g, i] = P[L1 + g, i] * base + P[L1 + g - 1, i]
                P[L1, i] *= base
            else:
                c *= LE[i, k]
        P[c_row, i] = c
        deg_l = max(deg_l, nl)
        deg_r = max(deg_r, nr)
    return deg_l, deg_r


@njit(cache=True, inline="always")
def _side_errors(z, p):
    """Decision errors of a point at value z: ``(max(1 + z, 0)^p, max(1 - z, 0)^p)``, p in {1, 2}."""
    el = max(1.0 + z, 0.0)
    er = max(1.0 - z, 0.0)
    if p == 2:
        return el * el, er * er
    return el, er


@njit(cache=True, fastmath=REASSOC)
def finite_rates(h):
    """True if every entry of ``h`` is finite (``0 * h`` all zeros)."""
    acc = 0.0
    for i in range(h.shape[0]):
        acc += 0.0 * h[i]
    return acc == 0.0


@njit(cache=True)
def table_sums(slots, coef, width, Zt, H, terms, degrees, weight, p, product):
    """:func:`table_sums_into` in arrays of its own: returns (len(slots), 2)."""
    out = np.empty((slots.shape[0], 2))
    table_sums_into(slots, coef, width, Zt, H, terms, degrees, weight, p, product, out,
                    np.empty(Zt.shape[0], dtype=np.int64))
    return out


@njit(cache=True, fastmath=REASSOC)
def table_sums_into(slots, coef, width, Zt, H, terms, degrees, weight, p, product, out, at_z):
    """Objective sums of the moves in edge-table ``slots`` (see :func:`edge_slots`
    and :func:`leaf_terms`): slot j moves decision ``d = j // width`` to
    ``Zt[d] + coef[j] * H[d, j % width % m]``.

    Into ``out[:len(slots)]``: the weighted sum of point errors (product or
    minimum) and, for the minimum, the weighted count of points whose error
    exceeds COUNT_TOL (``at_z``: scratch of one int per decision; the caller holds
    both, see :func:`product_move_sums_into`).  Each move is one contiguous pass over
    the points; the loops over the leaves are written out (see the module docstring).
    Zero-step moves (degenerate edges, a quarter of the slots on diabetes) of
    one decision are scored once: with finite rates their points' errors are
    those at ``z`` bit for bit (``z + 0 h`` is ``z``, up to the sign of a zero
    that ``1 + z`` and ``1 - z`` drop), so are their sums.
    """
    N = Zt.shape[1]
    m = H.shape[1]
    L1 = (terms.shape[1] - 4) // 2
    c_row = 2 * L1
    for d in range(at_z.shape[0]):  # per decision: a zero-step slot scored
        at_z[d] = -1
    for r in range(slots.shape[0]):
        j = slots[r]
        d = j // width
        col = j % width % m
        c = coef[j]
        zero_step = c == 0.0 and finite_rates(H[d, col])
        if zero_step and at_z[d] >= 0:
            out[r, 0] = out[at_z[d], 0]
            out[r, 1] = out[at_z[d], 1]
            continue
        if zero_step:
            at_z[d] = r
        dl = degrees[0, d]
        dr = degrees[1, d]
        acc0 = 0.0
        acc1 = 0.0
        if product and dl <= 1 and dr <= 1:
            for i in range(N):  # the arrays indexed, not viewed: a view per slot is reference-counted
                el, er = _side_errors(Zt[d, i] + c * H[d, col, i], p)
                acc0 += (terms[d, c_row, i] * (terms[d, 0, i] + terms[d, 1, i] * el)
                         * (terms[d, L1, i] + terms[d, L1 + 1, i] * er))
        elif product:
            z, h, P = Zt[d], H[d, col], terms[d]
            for i in range(N):
                el, er = _side_errors(z[i] + c * h[i], p)
                left = P[dl, i]  # Horner on PL(el) and PR(er)
                for g in range(dl - 1, -1, -1):
                    left = left * el + P[g, i]
                right = P[L1 + dr, i]
                for g in range(dr - 1, -1, -1):
                    right = right * er + P[L1 + g, i]
                acc0 += P[c_row, i] * left * right
        else:
            z, h, P = Zt[d], H[d, col], terms[d]
            for i in range(N):
                el, er = _side_errors(z[i] + c * h[i], p)
                e = min(P[c_row + 1, i], min(P[c_row + 2, i] + el, P[c_row + 3, i] + er))
                acc0 += weight[i] * e
                acc1 += weight[i] if e > COUNT_TOL else 0.0  # a select, not a branch
        out[r, 0] = acc0
        out[r, 1] = acc1
    return out


@njit(cache=True, fastmath=REASSOC)
def move_sums(z, h, c, d, ELt, ERt, LE, sides, point_leaves, weight, p, product):
    """Objective sums (as :func:`table_sums`) if decision d's values became
    ``z + c * h``: every class leaf of a point left of d changes by its change
    in el, right of d in er.  (The loop over the leaves is written out: see
    the module docstring.)"""
    s0 = 0.0
    s1 = 0.0
    for i in range(z.shape[0]):
        el, er = _side_errors(z[i] + c * h[i], p)
        dl = el - ELt[d, i]
        dr = er - ERt[d, i]
        acc = 1.0 if product else np.inf
        for a in range(point_leaves.shape[1]):
            k = point_leaves[i, a]
            if k < 0:
                break
            s = sides[k, d]
            e = LE[i, k] + (dl if s < 0 else (dr if s > 0 else 0.0))
            if product:
                acc *= e
            else:
                acc = min(acc, e)
        s0 += weight[i] * acc
        s1 += weight[i] if not product and acc > COUNT_TOL else 0.0
    return s0, s1


@njit(cache=True)
def product_move_sums(z, h, c, d, ELt, ERt, LE, sides, leaf_ok, weight, p):
    """:func:`move_sums` of the product, its bits, where ``leaf_ok`` (N, K) marks each
    point's class leaves and its ``point_leaves`` lists them in increasing leaf
    order (:class:`gto.engine._problem.Layout` builds them so).

    In passes over the points that LLVM vectorises: the changes of the decision
    errors; then one pass per leaf k, in leaf order, multiplying each point's
    product by its factor ``LE[i, k] + change`` where k is a class leaf of the
    point and by 1.0 (exact) where not, so each point's product takes its factors
    in :func:`move_sums`' order; then the weighted sum, in point order (no
    fast-math: the chain of one loop).  :func:`move_sums` runs a loop over each
    point's leaves, with a data-dependent trip count, inside the loop over the
    points, which stays scalar.  The passes per leaf vectorise where ``LE`` and
    ``leaf_ok`` are column-major (the walker's), a leaf's points contiguous."""
    return product_move_sums_into(z, h, c, d, ELt, ERt, LE, sides, leaf_ok, weight, p,
                                  np.empty((3, z.shape[0])))


@njit(cache=True)
def product_move_sums_into(z, h, c, d, ELt, ERt, LE, sides, leaf_ok, weight, p, work):
    """:func:`product_move_sums` with its passes' arrays in the rows of ``work``
    (at least 3 rows of N: the decision errors' changes, the products), scratch the
    caller holds.
    numba's reference-count pruning keeps the counts of a compiled function's
    array arguments (an atomic update each, at its entry and exit) when the
    function allocates (the temporaries' releases stop it); without an
    allocation they are pruned."""
    N = z.shape[0]
    for i in range(N):  # ELt, ERt indexed, not viewed: a view is reference-counted
        el, er = _side_errors(z[i] + c * h[i], p)
        work[0, i] = el - ELt[d, i]
        work[1, i] = er - ERt[d, i]
        work[2, i] = 1.0
    for k in range(LE.shape[1]):
        s = sides[k, d]
        if s < 0:
            for i in range(N):
                work[2, i] = work[2, i] * (LE[i, k] + work[0, i] if leaf_ok[i, k] else 1.0)
        elif s > 0:
            for i in range(N):
                work[2, i] = work[2, i] * (LE[i, k] + work[1, i] if leaf_ok[i, k] else 1.0)
        else:
            for i in range(N):
                work[2, i] = work[2, i] * (LE[i, k] + 0.0 if leaf_ok[i, k] else 1.0)
    s0 = 0.0
    for i in range(N):
        s0 += weight[i] * work[2, i]
    return s0, 0.0


#: :func:`vertex_update`'s rows of ``work``
W_LEFT, W_RIGHT, W_ERR, W_FLIP = range(4)


@njit(cache=True)
def vertex_update(X1t, theta, d, Zt, znew, ELt, ERt, LE, sides, point_leaves, weight, p, product,
                  child_kind, child_index, leaf_ok, wrong, work):
    """Decision d moved to ``theta``: refresh its values ``Zt[d] = theta @ X1t``
    (each summed from 0.0 in the order of theta, :func:`add_rows_times`), its
    decision errors, the leaf errors (eq. 13-14) below it, and the per-point
    ``wrong`` flags of :func:`misclassified` (only points that changed sides at d
    can change leaf), all incrementally.  Returns the sums of the objective (as
    :func:`table_sums`) and the weighted misclassified count.  ``znew`` (N) and
    ``work`` (at least 4 rows of N: the decision errors' changes left and right,
    the points' errors, 1.0 where a point changed sides) are scratch the caller
    holds: a compiled function that allocates keeps the reference counts of its
    array arguments (see :func:`product_move_sums_into`).

    Each step is a pass of its own over the points, so that LLVM vectorises
    all but the last: the values and decision errors; each leaf's errors
    (one addition a point, by the side the leaf is on); each point's product
    over its class leaves, a pass per leaf in leaf order as in
    :func:`product_move_sums` (``leaf_ok`` the class-leaf flags, ``point_leaves``
    in leaf order), or its minimum over ``point_leaves``; the leaf walks of the
    points that crossed; then the sums, in point order (no fast-math: the same
    bits as one pass doing it all).  The passes per leaf run over contiguous
    data where ``LE`` and ``leaf_ok`` are column-major, as the walker holds them.
    """
    N = X1t.shape[1]
    K = LE.shape[1]
    for i in range(N):
        znew[i] = 0.0
    add_rows_times(znew, X1t, theta, 1.0)
    # Zt, ELt, ERt and work indexed, not viewed (a view is reference-counted); a pass
    # each for the values, the left and the right errors: one pass over all of them
    # stayed scalar (too many arrays for LLVM's checks that they do not overlap)
    for i in range(N):
        z = znew[i]
        work[W_FLIP, i] = 1.0 if (z > BOUNDARY_TOL) != (Zt[d, i] > BOUNDARY_TOL) else 0.0
        Zt[d, i] = z
    for i in range(N):
        el, _ = _side_errors(znew[i], p)
        work[W_LEFT, i] = el - ELt[d, i]
        ELt[d, i] = el
    for i in range(N):
        _, er = _side_errors(znew[i], p)
        work[W_RIGHT, i] = er - ERt[d, i]
        ERt[d, i] = er
    for k in range(K):
        if sides[k, d] < 0:
            for i in range(N):
                LE[i, k] += work[W_LEFT, i]
        elif sides[k, d] > 0:
            for i in range(N):
                LE[i, k] += work[W_RIGHT, i]
    if product:  # in leaf order, a pass per leaf (see product_move_sums)
        for i in range(N):
            work[W_ERR, i] = 1.0
        for k in range(K):
            for i in range(N):
                work[W_ERR, i] = work[W_ERR, i] * (LE[i, k] if leaf_ok[i, k] else 1.0)
    else:
        for i in range(N):
            a = np.inf
            for j in range(point_leaves.shape[1]):
                k = point_leaves[i, j]
                if k < 0:
                    break
                a = min(a, LE[i, k])
            work[W_ERR, i] = a
    for i in range(N):
        if work[W_FLIP, i] != 0.0:
            wrong[i] = not leaf_ok[i, reached_leaf(Zt, i, child_kind, child_index)]
    s0 = 0.0
    s1 = 0.0
    count = 0.0
    for i in range(N):
        s0 += weight[i] * work[W_ERR, i]
        if not product and work[W_ERR, i] > COUNT_TOL:
            s1 += weight[i]
        if wrong[i]:
            count += weight[i]
    return s0, s1, count
