"""SAT encodings for minimum-depth decision trees on binary data (Schidler & Szeider 2021, §4).

An *instance* is a boolean matrix ``B`` (n samples x k binary features; a
sample goes left at feature j when ``B[i, j]`` is False), integer classes
``cls`` and a weight per class ``weights`` (the depth of the subtree a class
stands for; 0 for a real class).  A tree of *weighted depth* D puts every
leaf of class c at depth <= D - weights[c].

``DT_depth`` (Avellaneda 2020): a complete tree of depth D, one feature per
decision (exactly-one), leaf classes in binary; for every sample and leaf,
"the sample leaves the leaf's path somewhere, or the leaf has its class".
Unweighted; Omega(2^D) clauses.

``DT_pb`` (the paper's partition encoding, Theorem 3-4): g[i,j,m] = samples i
and j share a group at level m, s[i,m,l] = the group of i splits on l at
level m.  Weights by per-class levels: two samples of different classes are
apart by level ``D - max(w(c_i), w(c_j))``.  O(n^2 k D) clauses.

Solutions are decoded into a tree of nested tuples ``(feature, left, right)``
with leaves ``("leaf", class)``; a split that sends every sample one way is
dropped, so decoded trees have no empty leaves.  Every decoded tree is checked
against the instance before it is returned.
"""
from __future__ import annotations

import threading
import time

import numpy as np
from pysat.card import CardEnc, EncType
from pysat.formula import IDPool
from pysat.solvers import Solver

SOLVER = "glucose4"  # the paper's Glucose 4.1; faster here than CaDiCaL (experiments.slim)
SWITCH_DEPTH = 10  # paper §6: DT_depth up to depth 10, DT_pb above
MAX_LITERALS = 20_000_000  # larger encodings are not built (tree_of_depth returns None)
LITERALS_PER_SECOND = 2_000_000  # nor those that would take longer than the time limit to build
SHALLOW_TESTS = 16  # depth <= 2 over more tests than this: enumeration (shallow_tree)


def _solve(clauses, time_limit, conflicts=None, solver_name=None):
    """Model (set of true variables) if satisfiable, False if not, None on time-out or when
    the solver used up ``conflicts`` conflicts (a load-independent effort bound).
    ``solver_name``: a python-sat solver name (default :data:`SOLVER`)."""
    with Solver(name=solver_name or SOLVER, bootstrap_with=clauses) as solver:
        if conflicts is not None:
            solver.conf_budget(int(conflicts))
        timer = None
        if time_limit is not None:
            if time_limit <= 0:
                return None
            timer = threading.Timer(time_limit, solver.interrupt)
            timer.start()
        try:
            sat = solver.solve_limited(expect_interrupt=True)
        finally:
            if timer is not None:
                timer.cancel()
        if sat is None:
            return None
        if not sat:
            return False
        return {v for v in solver.get_model() if v > 0}


# -- checks -----------------------------------------------------------------
def leaf_depths(local):
    """List of (class, depth) of the leaves of a decoded tree."""
    out = []

    def walk(node, d):
        if node[0] == "leaf":
            out.append((node[1], d))
        else:
            walk(node[1], d + 1)
            walk(node[2], d + 1)

    walk(local, 0)
    return out


def weighted_depth(local, weights):
    """max over leaves of depth + weight of the leaf's class (the paper's d_w)."""
    return max(d + int(weights[c]) for c, d in leaf_depths(local))


def classifies(local, B, cls):
    """True when every sample reaches a leaf of its own class."""

    def walk(node, rows):
        if node[0] == "leaf":
            return bool(np.all(cls[rows] == node[1]))
        go = B[rows, node[0]]
        return walk(node[1], rows[~go]) and walk(node[2], rows[go])

    return walk(local, np.arange(len(cls)))


# -- DT_depth ----------------------------------------------------------------
def encode_depth(B, cls, depth):
    """CNF of DT_depth and the variable tables ``(clauses, x, c)``.

    As Avellaneda (2020): x[t, j] = decision t tests feature j (exactly one),
    c[l, b] = bit b of leaf l's class.  "Sample i goes right at t" is named by
    z[i, t] (z -> some feature with B[i, j] true is chosen, not z -> some with
    B[i, j] false), so the clause "i leaves the path of leaf l, or l has i's
    class bit" has d + 1 literals instead of up to d * k.
    """
    n, k = B.shape
    n_classes = int(cls.max()) + 1
    nb = max(1, int(np.ceil(np.log2(n_classes))))
    pool = IDPool()
    n_inner, n_leaves = 2**depth - 1, 2**depth
    x = np.array([[pool.id(("x", t, j)) for j in range(k)] for t in range(n_inner)]).reshape(
        n_inner, k)
    c = np.array([[pool.id(("c", l, b)) for b in range(nb)] for l in range(n_leaves)])
    z = np.array([[pool.id(("z", i, t)) for t in range(n_inner)] for i in range(n)])
    clauses = []
    for t in range(n_inner):
        clauses.extend(CardEnc.equals(lits=x[t].tolist(), bound=1, vpool=pool,
                                      encoding=EncType.seqcounter).clauses)
    for i in range(n):
        right, left = np.flatnonzero(B[i]), np.flatnonzero(~B[i])
        clauses += np.column_stack([-z[i], x[:, right]]).tolist()
        clauses += np.column_stack([z[i], x[:, left]]).tolist()
    # paths: heap numbering, children 2t+1 (left) and 2t+2 (right)
    nodes = np.zeros((n_leaves, depth), dtype=np.int64)
    goes_right = np.zeros((n_leaves, depth), dtype=bool)
    for leaf in range(n_leaves):
        node = n_inner + leaf
        for level in range(depth - 1, -1, -1):
            parent = (node - 1) // 2
            nodes[leaf, level], goes_right[leaf, level] = parent, node == 2 * parent + 2
            node = parent
    zl = z[:, nodes]  # (n, leaves, depth)
    away = np.where(goes_right[None], -zl, zl)  # i leaves the path at that level
    bits = (cls[:, None] >> np.arange(nb)) & 1  # (n, nb)
    lit = np.where(bits[:, None, :], c[None, :, :], -c[None, :, :])  # (n, leaves, nb)
    block = np.concatenate([np.broadcast_to(away[:, :, None, :], (n, n_leaves, nb, depth)),
                            lit[..., None]], axis=-1)
    clauses += block.reshape(-1, depth + 1).tolist()
    return clauses, x, c


def decode_depth(model, x, B, cls):
    def build(t, rows):
        if len(np.unique(cls[rows])) <= 1:
            return ("leaf", int(cls[rows[0]]))
        if t >= len(x):
            raise AssertionError("DT_depth model leaves an impure leaf")
        j = int(next(j for j in range(x.shape[1]) if int(x[t, j]) in model))
        go = B[rows, j]
        if go.all():
            return build(2 * t + 2, rows)
        if not go.any():
            return build(2 * t + 1, rows)
        return (j, build(2 * t + 1, rows[~go]), build(2 * t + 2, rows[go]))

    return build(0, np.arange(len(cls)))


# -- DT_pb -------------------------------------------------------------------
def encode_pb(B, cls, weights, depth):
    """CNF of DT_pb for weighted depth ``depth``; None if some class cannot fit at all."""
    n, k = B.shape
    w = np.asarray(weights)[cls]
    levels = depth - int(w.min())
    if depth - int(w.max()) < 0:
        return None
    iu, ju = np.triu_indices(n, 1)
    P = len(iu)
    # variable numbers: g[p, m] for pairs p and levels 0..levels, s[i, m, l] for m < levels
    g = 1 + np.arange(P * (levels + 1)).reshape(P, levels + 1)
    s = 1 + g.size + np.arange(n * levels * k).reshape(n, levels, k)
    parts = [g[:, :1]]  # level 0: one group
    differ = cls[iu] != cls[ju]
    apart = depth - np.maximum(w[iu], w[ju])  # level by which the pair must be apart
    parts.append(-g[differ, apart[differ]][:, None])
    out = [p.tolist() for p in parts]
    if levels > 0:
        out.append(np.column_stack([g[:, :-1].ravel(), -g[:, 1:].ravel()]).tolist())
        out.append(s.reshape(n * levels, k).tolist())  # at least one feature per sample, level
        agree = B[iu] == B[ju]  # (P, k)
        for m in range(levels):
            gm, gn = g[:, m][:, None], g[:, m + 1][:, None]
            si, sj = s[iu, m, :], s[ju, m, :]  # (P, k)
            G = np.broadcast_to(gm, si.shape)
            Gn = np.broadcast_to(gn, si.shape)
            # a group chooses one feature for all its members (both directions)
            out.append(np.stack([-G, -si, sj], axis=-1).reshape(-1, 3).tolist())
            out.append(np.stack([-G, -sj, si], axis=-1).reshape(-1, 3).tolist())
            # DT2: agreeing members stay together, disagreeing ones split
            out.append(np.stack([-G[agree], -si[agree], Gn[agree]], axis=-1).tolist())
            out.append(np.stack([-si[~agree], -Gn[~agree]], axis=-1).tolist())
    clauses = [cl for block in out for cl in block]
    return clauses, s, levels


def decode_pb(model, s, levels, B, cls):
    def build(rows, m):
        if len(np.unique(cls[rows])) <= 1:
            return ("leaf", int(cls[rows[0]]))
        if m >= levels:
            raise AssertionError("DT_pb model leaves an impure group")
        j = int(next(j for j in range(s.shape[2]) if int(s[rows[0], m, j]) in model))
        go = B[rows, j]
        if go.all() or not go.any():
            return build(rows, m + 1)
        return (j, build(rows[~go], m + 1), build(rows[go], m + 1))

    return build(np.arange(len(cls)), 0)


def encoding_size(shape, depth, encoding):
    """Rough literal count of the CNF: DT_depth n 2^D (k + D + 2), DT_pb 9 (n^2 / 2) k D."""
    n, k = shape
    if encoding == "depth":
        return n * 2**depth * (k + depth + 2)
    return 9 * (n * (n - 1) // 2) * k * depth


# -- depth <= 3 by enumeration -------------------------------------------------
def shallow_tree(B, cls, depth, deadline=None):
    """A tree of (unweighted) depth <= ``depth`` <= 3 by enumerating root and child tests,
    False if none exists.  Exact like the encodings, but a CDCL solver may need many
    conflicts to refute depth 2 over hundreds of tests, which counting does at once.
    Depth 3: every root test (best Gini split first) with depth <= 2 counted on each side;
    about ``n k^3 m`` multiply-adds when no such tree exists; None (unknown) if
    ``time.monotonic()`` passes ``deadline`` before the roots are all tried."""
    m = int(cls.max()) + 1
    C = np.eye(m)[cls]  # (n, m); float: the counts below are BLAS products, exact below 2^53
    Bi = B.astype(np.float64)
    side = (1 - Bi, Bi)  # side[a][:, j]: the sample goes left (a = 0) / right (a = 1) at j

    def pure_pairs():
        # pure[a, b][j, t]: the samples with side a at j and side b at t have <= 1 class;
        # pure[1, 0] is pure[0, 1] transposed (the same samples)
        out = {}
        for a, b in ((0, 0), (0, 1), (1, 1)):
            counts = np.stack([(side[a] * C[:, c:c + 1]).T @ side[b] for c in range(m)])
            out[a, b] = (counts > 0).sum(axis=0) <= 1
        out[1, 0] = out[0, 1].T
        return out

    def leaf(rows):
        return ("leaf", int(cls[rows[0]]))

    def split(j, rows):
        go = B[rows, j]
        return (j, leaf(rows[~go]), leaf(rows[go]))

    rows = np.arange(len(cls))
    if depth < 1:
        return False
    pure = pure_pairs()
    k = B.shape[1]
    diag = np.arange(k)
    # depth 1: a test with two pure sides (pure[a, a][j, j] is the side a of j)
    one = pure[0, 0][diag, diag] & pure[1, 1][diag, diag]
    one &= B.any(axis=0) & ~B.all(axis=0)
    if one.any():
        return split(int(np.flatnonzero(one)[0]), rows)
    if depth < 2:
        return False
    left_ok = pure[0, 0] & pure[0, 1]  # [j, t]: t splits j's left side into pure parts
    right_ok = pure[1, 0] & pure[1, 1]
    splits = B.any(axis=0) & ~B.all(axis=0)
    root = left_ok.any(axis=1) & right_ok.any(axis=1) & splits
    if not root.any():
        return False if depth < 3 else _three(B, cls, C, splits, deadline)
    j = int(np.flatnonzero(root)[0])
    go = B[:, j]
    parts = []
    for ok, sub in ((left_ok, rows[~go]), (right_ok, rows[go])):
        if len(np.unique(cls[sub])) == 1:
            parts.append(leaf(sub))
        else:
            parts.append(split(int(np.flatnonzero(ok[j])[0]), sub))
    return (j, parts[0], parts[1])


def _three(B, cls, C, splits, deadline):
    """Depth 3 (none of depth <= 2 exists): a root test whose two sides have depth <= 2."""
    right = B.T.astype(np.float64) @ C  # (k, m) class counts on the right of each test
    left = C.sum(axis=0) - right
    gini = sum(n - (part**2).sum(axis=1) / np.maximum(n, 1)
               for part in (left, right) for n in [part.sum(axis=1)])
    rows = np.arange(len(cls))
    for j in np.flatnonzero(splits)[np.argsort(gini[splits], kind="stable")]:
        if deadline is not None and time.monotonic() > deadline:
            return None
        go = B[:, j]
        parts = []
        for sub in (rows[~go], rows[go]):
            if len(np.unique(cls[sub])) == 1:
                parts.append(("leaf", int(cls[sub[0]])))
                continue
            part = shallow_tree(B[sub], cls[sub], 2)
            if part is False:
                break
            parts.append(part)
        else:
            return (int(j), parts[0], parts[1])
    return False


# -- search -------------------------------------------------------------------
def tree_of_depth(B, cls, weights, depth, encoding, time_limit=None, conflicts=None):
    """A decoded tree of weighted depth <= ``depth``, False if none exists, None on time-out
    (``time_limit`` seconds or ``conflicts`` solver conflicts).

    ``encoding`` is "depth" (DT_depth, needs all weights 0) or "pb" (DT_pb).
    """
    B = np.asarray(B, dtype=bool)
    cls = np.asarray(cls, dtype=np.int64)
    weights = np.asarray(weights, dtype=np.int64)
    present = np.unique(cls)
    if len(present) <= 1:
        local = ("leaf", int(cls[0]))
        return local if weights[cls[0]] <= depth else False
    if depth < 1:
        return False
    unweighted = not np.any(weights[present])
    if encoding not in ("depth", "pb"):
        raise ValueError(f"encoding must be 'depth' or 'pb', got {encoding!r}")
    if encoding == "depth" and not unweighted:
        raise ValueError("DT_depth is unweighted: the weights must be 0")
    if unweighted and depth <= 2 and B.shape[1] > SHALLOW_TESTS:
        local = shallow_tree(B, cls, depth)
        if local is False:
            return False
    elif encoding_size(B.shape, depth, encoding) > min(
            MAX_LITERALS, np.inf if time_limit is None else LITERALS_PER_SECOND * time_limit):
        return None  # too large to build within the time: unknown, like a time-out
    elif encoding == "depth":
        clauses, x, _ = encode_depth(B, cls, depth)
        model = _solve(clauses, time_limit, conflicts)
        if not model:
            return model
        local = decode_depth(model, x, B, cls)
    elif encoding == "pb":
        enc = encode_pb(B, cls, weights, depth)
        if enc is None:
            return False
        clauses, s, levels = enc
        model = _solve(clauses, time_limit, conflicts)
        if not model:
            return model
        local = decode_pb(model, s, levels, B, cls)
    if not classifies(local, B, cls) or weighted_depth(local, weights) > depth:
        raise AssertionError(f"{encoding} returned a tree that does not solve the instance")
    return local


def minimum_depth_tree(B, cls, weights, below, encoding="auto", time_limit=None,
                       conflicts=None):
    """Smallest weighted depth < ``below`` found by SAT, descending one depth at a time.

    Returns ``(tree, depth, optimal)``: ``tree`` None if no tree of weighted
    depth < ``below`` was found; ``optimal`` True when the next depth down was
    proven UNSAT.  ``encoding="auto"`` uses DT_depth up to depth
    :data:`SWITCH_DEPTH` on unweighted instances, DT_pb otherwise (paper §6).
    ``conflicts`` bounds each SAT call (python-sat ``conf_budget``).
    """
    weights = np.asarray(weights, dtype=np.int64)
    deadline = None if time_limit is None else time.monotonic() + time_limit
    best, best_depth = None, None
    depth = below - 1
    while depth >= 0:
        enc = encoding
        if encoding == "auto":
            unweighted = not np.any(weights[np.unique(cls)])
            enc = "depth" if unweighted and depth <= SWITCH_DEPTH else "pb"
        left = None if deadline is None else deadline - time.monotonic()
        found = tree_of_depth(B, cls, weights, depth, enc, left, conflicts)
        if found is None:
            return best, best_depth, False
        if found is False:
            return best, best_depth, True
        best = found
        best_depth = weighted_depth(found, weights)
        depth = best_depth - 1
    return best, best_depth, True
