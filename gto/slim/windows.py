"""``gto.slim.improve``: DT-SLIM local improvement (Schidler & Szeider 2021, Algorithm 1).

``method="sat"``: first the whole instance at depth <= 3 by counting (exact,
cheap where SAT over all samples is not; :func:`encodings.shallow_tree`);
then repeatedly take a deepest leaf not yet finished, and on its
path (from the highest ancestor reached by few samples, then upwards, then
the ancestors below it) grow a
window, build its weighted local instance (``local.py``), reduce features
(first the window's own tests, then every test on its samples, or a support
set when those are too many) and find a local tree of smaller weighted depth
by SAT (``encodings.py``); splice it in with copies of the hanging subtrees at
the special leaves (Theorem 1-2).  Every training sample keeps the class the
input tree predicts for it.  The loop runs in stages of growing sample limits
and per-call SAT effort (``STAGES``), so a short budget goes to many cheap
windows first and a long one reaches the paper's larger windows.

``method="gto"``: the same loop over windows, but the local problem keeps the
window's shape and makes its decisions oblique with :func:`gto.optimize`,
minimising training errors; a decision whose removal costs no error is then
dropped (a smaller shape).  A window is replaced only when the training
errors fall, or stay equal with fewer decisions.
"""
from __future__ import annotations

import time
import warnings
from numbers import Integral

import numpy as np
from scipy.optimize import OptimizeResult
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..learners._optimize import optimize as gto_optimize
from ..model._categorical import _column_indices
from ..model.tree import Tree, as_tree
from ..utils._progress import Progress
from ..utils._validation import RANDOM_STATE, SECONDS, check_labels, check_X
from ..utils.status import Status
from . import local as L
from .encodings import minimum_depth_tree, shallow_tree, weighted_depth
from .nodes import (
    Node,
    decisions,
    from_tree,
    heights_by_node,
    is_axis_aligned,
    leaves_with_depth,
    n_decisions,
    predict,
    prune_empty,
    replace,
    rows_by_node,
    size,
    to_tree,
)

METHODS = ("sat", "gto")
ENCODINGS = ("auto", "depth", "pb")
REDUCTIONS = ("own", "all")  # feat(T'), then every test on the window's samples (§5)
STAGES = (0.25, 0.5, 1.0, 2.0, 4.0)  # multiples of the sample limits and of the per-call SAT time
PB_WEIGHTED_ROWS = 30  # a safe window is tried weighted (DT_pb, O(n^2) pairs) up to this size
LOCAL_CONFLICTS = 20_000  # solver conflicts per SAT call at stage multiple 1
MAX_ALL_CELLS = 200_000  # samples x tests above which "all" falls back to a support set
WHOLE_FLOPS = 1e11  # the whole instance is tried at depth 3 by counting up to n k^3 m this
WHY = ("whole", "improved", "minimal", "timeout", "too_large", "repeat", "one_decision",
       "sat_seconds")  # outcome counts of the windows (improve's result ``windows``)


def sample_limits(max_depth_local, low=300, high=90):
    """Per-depth sample limits: ``low`` samples up to depth 3 falling linearly to
    ``high`` at ``max_depth_local`` (the paper's c_300 ranges from 300 to 90 with
    d_300 = 15; c_60: 70 to 15 with d_60 = 12; §6)."""

    def limit(depth):
        if depth <= 3 or max_depth_local <= 3:
            return low
        frac = min(1.0, (depth - 3) / (max_depth_local - 3))
        return int(round(low + frac * (high - low)))

    return limit


def _limit_fn(max_samples_local, max_depth_local):
    if max_samples_local is None:
        return sample_limits(max_depth_local)
    if callable(max_samples_local):
        return max_samples_local
    if isinstance(max_samples_local, dict):
        keys = sorted(max_samples_local)
        return lambda d: max_samples_local[max(k for k in keys if k <= d)] if d >= keys[0] \
            else max_samples_local[keys[0]]
    if isinstance(max_samples_local, Integral) and max_samples_local >= 2:
        return lambda d: int(max_samples_local)
    raise ValueError(
        "max_samples_local must be an int >= 2, a dict depth -> limit, a callable or None, "
        f"got {max_samples_local!r}")


@validate_params(
    {"tree": "no_validation", "X": "no_validation", "y": "no_validation",
     "method": [StrOptions(set(METHODS))],
     "max_depth_local": [Interval(Integral, 1, None, closed="left"), None],
     "max_samples_local": "no_validation",  # its meaning depends on the method: checked below
     "time_limit": SECONDS, "random_state": RANDOM_STATE,
     "categorical_features": [str, "array-like", None], "local_time_limit": SECONDS,
     "encoding": [StrOptions(set(ENCODINGS))],
     "max_iter": [Interval(Integral, 0, None, closed="left")], "quiet": ["boolean"],
     "shrink": ["boolean"]},
    prefer_skip_nested_validation=True,
)
def improve(tree, X, y, method="sat", max_depth_local=None, max_samples_local=None,
            time_limit=300.0, random_state=None, *, categorical_features=None,
            local_time_limit=None, encoding="auto", max_iter=2000, quiet=False, shrink=True):
    """Improve a decision tree window by window (DT-SLIM; module doc).

    Parameters
    ----------
    tree : gto.Tree or fitted sklearn DecisionTreeClassifier
        For ``method="sat"`` every decision must test one feature: axis-aligned
        (one positive weight) or a subset decision on numeric codes; any depth.
    X, y : training data.  ``"sat"`` keeps every sample's *predicted* class
        (y only sets the input checks); ``"gto"`` minimises errors against y.
    method : "sat" (minimum weighted depth windows) or "gto" (oblique windows).
    max_depth_local : deepest window; default 15 for "sat" (the paper's d_300),
        3 for "gto".
    max_samples_local : samples of the reduced local instance allowed per
        window depth: int, dict depth -> limit, callable, or None for
        :func:`sample_limits` (the paper's c_300); "sat" runs in stages that
        allow ``STAGES`` (1/4 ... 4) times these limits, small windows first.
        For "gto" an int caps the samples reaching a window (None: no cap).
    time_limit : seconds for the whole run (None: until no window improves).
    random_state : seeds ``gto.optimize`` ("gto"); "sat" is deterministic.
    categorical_features : None, "all", a bool mask or column indices (as
        :func:`gto.model._categorical.encode`): features whose values are category
        codes.  "sat" windows may then also use the paper's one-hot tests
        ``x_f == v`` (subset decisions ``(f, (v,))`` in the result) beside
        thresholds.  None: thresholds only.
    local_time_limit : seconds per window's SAT calls at stage multiple 1
        (default 20; each call also stops after ``LOCAL_CONFLICTS`` times the
        multiple solver conflicts) / per ``gto.optimize`` call (default 10).
    encoding : "auto" (DT_depth up to depth 10 on unweighted windows, DT_pb
        otherwise), "depth" or "pb" (DT_pb also takes weighted windows).
    max_iter : tabu moves per window for "gto".
    quiet : no progress bar.
    shrink : "gto": after a window's search, drop its decisions that cost no
        error (True, a smaller tree), or keep the tree's shape (False: a
        window is replaced only when the errors fall; ``gto.optimize`` uses
        this for its depth >= 3 window rounds).

    Returns
    -------
    scipy.optimize.OptimizeResult with ``tree`` (gto.Tree), ``depth_before``,
    ``depth_after``, ``size_before``, ``size_after`` (nodes), ``n_errors_before``,
    ``n_errors_after`` (training errors against y), ``n_windows`` (windows
    replaced), ``n_tried`` (windows solved), ``n_sat`` (SAT searches),
    ``n_timeouts`` (windows given up on a time or conflict limit), ``stage``
    (last stage reached), ``windows`` (outcome counts per window and feature
    reduction looked at, "sat": "whole" (1 when the whole tree was replaced by
    a tree of depth <= 3 found by counting), "improved", "minimal" (SAT proved no
    shallower tree), "timeout", "too_large" (over the sample limit), "repeat"
    (failed before, unchanged), "one_decision"; and "sat_seconds" spent in
    SAT), ``status`` (a :class:`gto.utils.status.Status`: ``CONVERGED``, the
    last stage improved nothing; ``TIME_LIMIT`` or ``INTERRUPTED``), ``message``, ``time``.
    """
    t0 = time.monotonic()
    tree = as_tree(tree)
    X = check_X(X, tree.n_features)
    y = check_labels(y, len(X))
    categorical = [] if categorical_features is None else _column_indices(
        categorical_features, [f"x{j}" for j in range(X.shape[1])], [], "categorical_features")
    root = from_tree(tree)
    if max_depth_local is None:
        max_depth_local = 15 if method == "sat" else 3
    if local_time_limit is None:
        local_time_limit = 20.0 if method == "sat" else 10.0
    deadline = None if time_limit is None else t0 + time_limit
    depth_before, size_before = leaves_depth(root), size(root)
    errors_before = int(np.sum(predict(root, X) != y))
    state = dict(root=root, n_windows=0, n_tried=0, n_sat=0, n_timeouts=0, stage=0,
                 failed={}, why=dict.fromkeys(WHY, 0), shrink=bool(shrink))
    status = Status.CONVERGED
    try:
        with Progress(desc=f"slim-{method}", quiet=quiet) as bar:
            if method == "sat":
                if not is_axis_aligned(root):
                    raise ValueError("tree: method='sat' needs axis-aligned decisions "
                                     "(one positive weight) or subset decisions")
                limit = _limit_fn(max_samples_local, max_depth_local)
                status = _run_sat(state, X, categorical, max_depth_local, limit,
                                  local_time_limit, encoding, deadline, bar)
            else:
                cap = max_samples_local
                if cap is not None and (not isinstance(cap, Integral) or cap < 2):
                    raise ValueError(f"max_samples_local must be an int >= 2 or None for "
                                     f"method='gto', got {cap!r}")
                status = _run_gto(state, X, y, max_depth_local, cap, local_time_limit, max_iter,
                                  random_state, deadline, bar)
    except KeyboardInterrupt:
        status = Status.INTERRUPTED
        warnings.warn("gto.slim.improve interrupted: returning the best tree so far",
                      RuntimeWarning, stacklevel=2)
    root = state["root"]
    errors_after = int(np.sum(predict(root, X) != y))
    messages = {Status.CONVERGED: "no window improves", Status.TIME_LIMIT: "time limit reached",
                Status.INTERRUPTED: "interrupted; best tree so far returned"}
    return OptimizeResult(
        tree=to_tree(root, tree.n_features), depth_before=depth_before,
        depth_after=leaves_depth(root), size_before=size_before, size_after=size(root),
        n_errors_before=errors_before, n_errors_after=errors_after,
        n_windows=state["n_windows"], n_tried=state["n_tried"], n_sat=state["n_sat"],
        n_timeouts=state["n_timeouts"], stage=state["stage"], status=status,
        windows=dict(state["why"]),
        message=messages[status], success=status != Status.INTERRUPTED,
        time=time.monotonic() - t0)


def leaves_depth(root):
    return max(d for _, d, _ in leaves_with_depth(root))


def _remaining(deadline):
    return None if deadline is None else deadline - time.monotonic()


# -- method "sat" ----------------------------------------------------------------
def _run_sat(state, X, categorical, max_depth_local, limit, local_time_limit, encoding,
             deadline, bar):
    """Algorithm 1 of the paper, run in stages of growing windows.

    Stage k allows ``STAGES[k]`` times the sample limits and a per-call SAT
    time of the same fraction of ``local_time_limit``: small windows are cheap
    and lower the depth first; when a stage's round over all deepest-leaf paths
    improves nothing, the next stage retries with larger windows (the paper's
    c_60 -> c_300 -> c_800 ladder in one run).  Converged after the last stage.
    """
    root = state["root"]
    pred0 = predict(root, X)
    labels = sorted({n.label for n, _, _ in leaves_with_depth(root)}, key=repr)
    code = {lab: i for i, lab in enumerate(labels)}
    own = {}
    for n in decisions(root):
        t = L.node_test(n)
        own.setdefault(t[0], set()).add(t)
    own = {f: sorted(ts) for f, ts in own.items()}
    ctx = dict(X=X, code=code, labels=labels, tests=own, categorical=categorical,
               encoding=encoding,
               max_depth=max_depth_local, row_id=np.unique(X, axis=0, return_inverse=True)[1]
               .ravel().astype(np.int64))
    new = _shallow_whole(root, X, pred0, ctx, deadline)
    if new is not None:
        root = state["root"] = new
        state["n_windows"] += 1
        state["why"]["whole"] = 1
        assert np.all(predict(root, X) == pred0), "a training sample changed its predicted class"
    for stage, frac in enumerate(STAGES):
        state["stage"] = stage
        ctx["limit"] = lambda d, frac=frac: max(2, int(round(frac * limit(d))))
        cmax = max(ctx["limit"](d) for d in range(1, max_depth_local + 1))
        tcall = frac * local_time_limit
        ctx["conflicts"] = int(frac * LOCAL_CONFLICTS)
        done, windows_at_round = set(), state["n_windows"]
        dead = {}  # id -> node: local roots that gave nothing since the tree below them changed
        rows_of, heights = rows_by_node(root, X), heights_by_node(root)
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                return Status.TIME_LIMIT
            cand = [(v, d, p) for v, d, p in leaves_with_depth(root) if v not in done]
            if not cand:  # a round is over: another one if it improved something
                if state["n_windows"] == windows_at_round:
                    break
                windows_at_round, done, dead = state["n_windows"], set(), {}
                continue
            v, dv, path = max(cand, key=lambda c: c[1])
            i0 = next((i for i, u in enumerate(path) if len(rows_of[id(u)]) <= cmax),
                      len(path) - 1)
            new = None
            # the paper's order (from i0 up to the root), then the nodes below i0
            for i in list(range(i0, -1, -1)) + list(range(i0 + 1, len(path))):
                left = _remaining(deadline)
                if left is not None and left <= 0:
                    return Status.TIME_LIMIT
                tlim = tcall if left is None else min(tcall, left)
                if id(path[i]) in dead:
                    continue
                new = _sat_window(path[i], rows_of, heights, ctx, tlim, state)
                if new is None:
                    dead[id(path[i])] = path[i]
                else:
                    for u in path[:i + 1]:  # the windows above the change see a new tree
                        dead.pop(id(u), None)
                    # copies of a hanging subtree get only part of its samples: drop empty sides
                    new = prune_empty(new, X[rows_of[id(path[i])]])
                    root = replace(root, path[i], new)
                    state["root"] = root
                    state["n_windows"] += 1
                    rows_of, heights = rows_by_node(root, X), heights_by_node(root)
                    after = predict(root, X, rows_of)
                    assert np.all(after == pred0), "a training sample changed its predicted class"
                    break
            if new is None:
                done.update(path + [v])
            bar.update(note=f"depth {leaves_depth(root)}, {state['n_windows']} windows, "
                            f"stage {stage}")
    return Status.CONVERGED


def _shallow_whole(root, X, pred0, ctx, deadline=None):
    """The whole tree as a window with every candidate test, at depth 1, 2, 3 below the
    tree's depth, by counting (:func:`encodings.shallow_tree`): exact and cheap enough for
    the whole instance, which is far over the windows' sample limits (depth 3 only while
    n k^3 m <= ``WHOLE_FLOPS``, and given up at ``deadline``).  Returns new nodes or None."""
    depth = leaves_depth(root)
    tests = L.candidate_tests(X, ctx["tests"], ctx["categorical"])
    if depth < 2 or tests is None:
        return None
    cls = np.array([ctx["code"][p] for p in pred0], dtype=np.int64)
    red = L.reduce_rows(L.binarize(X, tests), cls)
    if red is None:
        return None
    B, c = red
    n, k = B.shape
    for d in range(1, min(3, depth - 1) + 1):
        if d == 3 and n * k**3 * (c.max() + 1) > WHOLE_FLOPS:
            break
        local = shallow_tree(B, c, d, deadline)
        if local is None:
            return None
        if local is not False:
            return _nodes_of(local, tests, ctx["labels"], [], X.shape[1])
    return None


def _sat_window(r, rows_of, heights, ctx, time_limit, state):
    """A replacement for a window rooted at r of smaller weighted depth, or None.

    Feature reductions in the paper's order (§5): first the window's own tests
    feat(T') (only a rearrangement), then every test on the window's samples
    (:func:`local.candidate_tests`; a greedy support set when that is too
    large).  Each reduction grows its own window under the sample limit of
    its reduced instance.
    """
    X, code, limit = ctx["X"], ctx["code"], ctx["limit"]
    if r.is_leaf or len(rows_of[id(r)]) == 0:
        return None
    deadline = time.monotonic() + time_limit
    timed_out = False
    for reduction in REDUCTIONS:
        if deadline - time.monotonic() <= 0:
            return None

        def fits(window, reduction=reduction):
            rows, cls, weights, _, _, depth = L.local_classes(window, rows_of, code, heights)
            if reduction == "own":
                red = L.reduce_rows(L.binarize(X[rows], L.window_tests(window)), cls)
                return red is not None and len(red[0]) <= limit(depth)
            return len(np.unique(ctx["row_id"][rows] * len(weights) + cls)) <= limit(depth)

        why = state["why"]
        window = L.grow_window(r, rows_of, heights, code, ctx["max_depth"], fits)
        if not fits(window):
            why["too_large"] += 1
            continue
        rows, cls, weights, hanging, wdepth, depth = L.local_classes(window, rows_of, code,
                                                                      heights)
        # a window that failed before fails again while its nodes and hanging depths stay
        key = (reduction,) + tuple(id(n) for n in window) + tuple(
            (id(u), heights[id(u)]) for u in hanging)
        if key in state["failed"]:
            why["repeat"] += 1
            continue
        if depth < 2 and len(np.unique(cls)) > 1:
            why["one_decision"] += 1
            continue  # one decision separating two classes cannot get shallower
        Xr = X[rows]
        if reduction == "own":
            tests = L.window_tests(window)
        else:
            tests = L.candidate_tests(Xr, ctx["tests"], ctx["categorical"])
            if tests is not None and len(tests) * len(Xr) > MAX_ALL_CELLS:
                tests = _support_tests(Xr, cls, window, tests)
            if tests is None:
                why["too_large"] += 1
                continue
        red = L.reduce_rows(L.binarize(Xr, tests), cls)
        if red is None or len(red[0]) > limit(depth):
            why["too_large"] += 1
            continue
        B, c = red
        # safe window (Corollary 1): the unweighted depth bounds the weighted one
        safe = all(depth + w <= wdepth for w in weights[len(code):])
        state["n_tried"] += 1
        # a safe window first by its unweighted depth (DT_depth, Corollary 1), then any
        # window by its weighted depth (DT_pb), which may also move leaves of small
        # weight down to lift a heavy one
        tries = [(np.zeros_like(weights), depth)] if safe else []
        if not safe or (len(hanging) > 1 and len(B) <= PB_WEIGHTED_ROWS):
            tries.append((weights, wdepth))
        failed = True
        for w_use, below in tries:
            left = deadline - time.monotonic()
            if left <= 0:
                timed_out, failed = True, False
                break
            t_sat = time.monotonic()
            local, _, optimal = minimum_depth_tree(B, c, w_use, below, ctx["encoding"],
                                                   time_limit=left, conflicts=ctx["conflicts"])
            why["sat_seconds"] += time.monotonic() - t_sat
            state["n_sat"] += 1
            if local is None and not optimal:
                timed_out, failed = True, False
            if local is not None and weighted_depth(local, weights) < wdepth:
                why["improved"] += 1
                return _nodes_of(local, tests, ctx["labels"], hanging, X.shape[1])
        why["minimal" if failed else "timeout"] += 1
        if failed:
            state["failed"][key] = window + hanging  # keeps the nodes (and so their ids) alive
    state["n_timeouts"] += timed_out
    return None


def _support_tests(Xr, cls, window, tests):
    """The window's own tests plus a greedy support set of all its ``tests`` (paper §5),
    or None."""
    red = L.reduce_rows(L.binarize(Xr, tests), cls)
    keep = None if red is None else L.support_set(*red)
    if keep is None:
        return None
    own = L.window_tests(window)
    return own + [t for t in (tests[j] for j in keep) if t not in own]


def _nodes_of(local, tests, labels, hanging, n_features):
    """Linked nodes of a decoded local tree; special leaves get copies of their subtrees."""
    s = len(labels)
    if local[0] == "leaf":
        c = local[1]
        return Node(label=labels[c]) if c < s else hanging[c - s].copy()
    f, kind, arg = tests[local[0]]
    w = np.zeros(n_features)
    if kind == "le":
        w[f] = 1.0
    return Node(w, float(arg) if kind == "le" else 0.0,
                _nodes_of(local[1], tests, labels, hanging, n_features),
                _nodes_of(local[2], tests, labels, hanging, n_features),
                subset=(f, tuple(arg)) if kind == "in" else None)


# -- method "gto" ----------------------------------------------------------------
def _gto_window(r, max_depth_local):
    """Hyperplane decisions of T_r within ``max_depth_local`` levels of r, r first (a
    subset decision and what hangs below it stay as they are)."""
    window, level = [], [r]
    for _ in range(max_depth_local):
        level = [n for n in level if not n.is_leaf and n.subset is None]
        window += level
        level = [c for n in level for c in (n.left, n.right)]
    return window


def _shrink(node, X, target):
    """Drop decisions (keep one child) while the errors against ``target`` do not rise."""
    best = int(np.sum(predict(node, X) != target))
    changed = True
    while changed:
        changed = False
        for d in decisions(node):
            for child in (d.left, d.right):
                candidate = _without(node, d, child)
                if candidate.is_leaf:
                    continue
                err = int(np.sum(predict(candidate, X) != target))
                if err <= best:
                    node, best, changed = candidate, err, True
                    break
            if changed:
                break
    return node, best


def _without(root, d, child):
    """Copy of ``root`` with decision ``d`` replaced by its subtree ``child``."""
    if root is d:
        return child.copy()
    if root.is_leaf:
        return Node(label=root.label)
    return root.split_like(_without(root.left, d, child), _without(root.right, d, child))


def _run_gto(state, X, y, max_depth_local, cap, local_time_limit, max_iter, random_state,
             deadline, bar):
    rng = np.random.default_rng(random_state)
    n_features = X.shape[1]
    while True:
        improved = False
        for r in decisions(state["root"]):
            root = state["root"]
            if r.subset is not None or not _contains(root, r):
                continue  # a subset decision is kept as it is
            left = _remaining(deadline)
            if left is not None and left <= 0.05:
                return Status.TIME_LIMIT
            rows = rows_by_node(root, X)[id(r)]
            if len(rows) < 2 or (cap is not None and len(rows) > cap):
                continue
            new = _gto_local(r, X[rows], y[rows], max_depth_local, n_features,
                             local_time_limit if left is None else min(local_time_limit, left),
                             max_iter, int(rng.integers(2**31)), state)
            if new is not None:
                before = int(np.sum(predict(root, X) != y))
                state["root"] = replace(root, r, new)
                state["n_windows"] += 1
                improved = True
                after = int(np.sum(predict(state["root"], X) != y))
                assert after <= before, "a window raised the training errors"
            bar.update(note=f"errors {int(np.sum(predict(state['root'], X) != y))}")
        if not improved:
            return Status.CONVERGED


def _contains(root, node):
    return any(n is node for n in decisions(root))


def _gto_local(r, Xr, yr, max_depth_local, n_features, time_limit, max_iter, seed, state):
    """Oblique window at r (fixed shape, then shrunk) if it has fewer errors, or the same
    errors with fewer decisions; else None.

    Leaves of the local tree: a leaf of T keeps its class; a hanging subtree u_i
    becomes class K + i, the target of exactly those samples that reach u_i in
    the input and that u_i classifies correctly.  A sample whose target matches
    its local leaf is then classified correctly by the spliced tree, so the
    local error count bounds the true one and the input window meets it.
    """
    window = _gto_window(r, max_depth_local)
    labels = list(np.unique(np.concatenate([yr, np.array(
        [n.label for n, _, _ in leaves_with_depth(r)], dtype=yr.dtype)])))
    code = {lab: i for i, lab in enumerate(labels)}
    K = len(labels)
    leaves = L.window_leaves(window)
    hanging = [n for n, _ in leaves if not n.is_leaf]
    target = np.array([code[v] for v in yr], dtype=np.int64)
    reach = rows_by_node(r, Xr)
    for i, u in enumerate(hanging):
        rows = reach[id(u)]
        target[rows[predict(u, Xr[rows]) == yr[rows]]] = K + i
    inside = {id(n) for n in window}
    W, gamma = [], []
    hang_index = {id(u): i for i, u in enumerate(hanging)}

    def spec(n):
        if id(n) not in inside:
            return code[n.label] if n.is_leaf else K + hang_index[id(n)]
        W.append(n.w)
        gamma.append(n.gamma)
        return (spec(n.left), spec(n.right))

    local = Tree(spec(r), n_features, W=np.array(W), gamma=np.array(gamma))
    errors_old = int(np.sum(predict(r, Xr) != yr))
    decisions_old = n_decisions(r)
    candidate = from_tree(local)
    # samples whose target no leaf carries are errors whatever the decisions: left out
    fit = np.isin(target, local.leaf_classes)
    if len(np.unique(target[fit])) > 1 and errors_old > 0:
        state["n_tried"] += 1
        res = gto_optimize(local, Xr[fit], target[fit], time_limit=time_limit,
                           random_state=seed, max_iter=max_iter, leaves="keep")
        candidate = from_tree(res.tree)
    if state.get("shrink", True):
        candidate, _ = _shrink(candidate, Xr, target)
    new = _decode_codes(candidate, labels, hanging, K)
    errors_new = int(np.sum(predict(new, Xr) != yr))
    if errors_new < errors_old or (errors_new == errors_old
                                   and n_decisions(new) < decisions_old):
        return new
    return None


def _decode_codes(node, labels, hanging, K):
    if node.is_leaf:
        c = int(node.label)
        if c >= K:
            return hanging[c - K].copy()
        lab = labels[c]
        return Node(label=lab.item() if isinstance(lab, np.generic) else lab)
    return node.split_like(_decode_codes(node.left, labels, hanging, K),
                           _decode_codes(node.right, labels, hanging, K))
