"""The region start for trees deeper than two levels: top-down alternating fits.

The greedy LP tree (:func:`gto.engine._starts.greedy_theta`) gives each
decision a robust LP separating classes.  That is right for a decision just
above the leaves, but a decision with both classes on both sides (the root
and the second level of a depth-3 tree with alternating leaves) does not
separate classes: it splits the space into regions in each of which its
subtrees can classify well.  Its greedy LP is a poor start there (40-49 %
training errors on planted depth-3 trees, docs/depth3.md).

This start fits such a *region split* as the gate of a mixture of experts,
by hard EM (alternating fits), recursively:

* a decision whose children are leaves of classes a and b: a linear
  classifier of a against b on the points reaching it (:func:`l2_svm`);
* any other decision d, from a gate (a hyperplane): its two subtrees are
  fitted on the points the gate sends them (recursively, each warm-started
  from its previous fit); then every point of d is classified by both
  subtrees, and the points that only the left (right) one gets right must go
  left (right); the gate separating those (:func:`l2_svm`) replaces the gate,
  the subtrees are fitted again, and so on while the sets change, up to
  ``ROUNDS[height]`` rounds.  The fit with the fewest weighted errors is
  kept.  Gates: the warm start when there is one, else ``CANDIDATES[height]``
  random hyperplanes through a random quantile in [0.3, 0.7] of the points.

The result is scaled parameters ``Theta`` (D, n + 1), refined by robust LPs
and searched by the schedule like any start (:mod:`gto.engine._portfolio`).
Linear classifiers here are L2-loss SVMs (squared hinge, solved by an
active-set Newton method: a few small least-squares solves each), cheap
enough for the thousands of fits of one start.
"""
from __future__ import annotations

import math
import zlib

import numpy as np
from numba import njit

from ..utils._interrupt import check_limits

#: random gates tried for a region split without a warm start, by the height of the
#: decision (2: its children are the decisions just above the leaves; greater heights
#: take the last entry).  Each gate of height h refits its subtrees in every round, so
#: the cost multiplies with the height: fewer gates and rounds higher up
CANDIDATES = {2: 4, 3: 6, 4: 3, 5: 1}
#: alternating rounds per gate, by height
ROUNDS = {2: 10, 3: 8, 4: 4, 5: 2}
#: Newton steps of :func:`l2_svm` and its ridge (scaled units)
NEWTON_STEPS, RIDGE = 8, 1e-6
#: points beyond this margin on the wrong side are dropped (a ramp loss: label noise
#: far from the hyperplane would pull a squared hinge hard)
RAMP = 0.5
#: quantiles of a random gate's threshold
GATE_QUANTILES = (0.3, 0.7)


def l2_svm(X1, go_left, w):
    """Hyperplane ``theta`` (``X1 @ theta <= 0``: left) of the L2-loss SVM separating
    ``go_left`` from the rest, weights ``w``: minimise ``sum w_i max(0, 1 - t_i z_i)^2
    + RIDGE |theta|^2`` (``t = -1`` left, ``+1`` right) by active-set Newton steps
    (each a least-squares solve on the points inside the margin)."""
    t = np.where(go_left, -1.0, 1.0)
    return _l2_svm(np.ascontiguousarray(X1, dtype=np.float64), t,
                   np.asarray(w, dtype=np.float64) / np.sum(w), NEWTON_STEPS, RIDGE, RAMP)


@njit(cache=True)
def _l2_svm(X1, t, w, steps, ridge, ramp):  # pragma: no cover - compiled
    n, m = X1.shape
    active = np.ones(n, dtype=np.bool_)
    theta = np.zeros(m)
    for _ in range(steps):
        Xa = X1[active]
        Xw = np.ascontiguousarray((Xa * w[active].reshape(-1, 1)).T)
        G = Xw @ Xa + ridge * np.eye(m)  # the normal equations, by BLAS
        # one right-hand side as an (m, 1) array: LAPACK's very call (gesv, nrhs=1),
        # and numba's solve compiled once, for this and the refactorisation's
        theta = np.linalg.solve(G, (Xw @ t[active]).reshape(-1, 1))[:, 0].copy()
        margin = t * (X1 @ theta)
        inside = (margin < 1.0) & (margin > -ramp)
        if np.array_equal(inside, active) or inside.sum() < m:
            break
        active = inside
    return theta


@njit(cache=True)
def _targets(go_left):  # pragma: no cover - compiled
    """``np.where(go_left, -1.0, 1.0)``: the SVM's targets (a loop: numba's generic
    ``where`` costs seconds of compile time)."""
    t = np.empty(go_left.shape[0])
    for i in range(go_left.shape[0]):
        t[i] = -1.0 if go_left[i] else 1.0
    return t


@njit(cache=True)
def _quantile(a, q):  # pragma: no cover - compiled
    """``np.quantile(a, q)`` as numba computes it, for ``0 < q < 1`` and ``a`` not
    empty: linear interpolation between the order statistics around the rank
    ``1 + (n - 1) q`` (``q`` taken through percent, as numba does), NaN when ``a``
    holds a NaN.  From a sort instead of numba's generic percentile code (about
    5 s of compile time): the same two values and the same arithmetic, so the
    same bits."""
    s = np.sort(a)
    n = s.shape[0]
    if np.isnan(s[n - 1]) or (n == 1 and not np.isfinite(s[0])):
        return np.nan
    if n == 1:
        return s[0]
    rank = 1 + (n - 1) * ((q * 100.0) / 100.0)
    f = math.floor(rank)
    frac = rank - f
    return s[f - 1] * (1 - frac) + s[f] * frac


@njit(cache=True)
def _random_gate(X1, low, high):  # pragma: no cover - compiled
    """:meth:`_RegionFit.random_gate` on numba's random stream."""
    m = X1.shape[1]
    gate = np.zeros(m)
    gate[:m - 1] = np.random.standard_normal(m - 1)
    if X1.shape[0] > 0:
        gate[m - 1] = _quantile(np.ascontiguousarray(X1[:, :m - 1]) @ gate[:m - 1],
                                np.random.uniform(low, high))
    return gate


@njit(cache=True, inline="always")
def _lowest_gate(X1, y, w, a, b, warm, has_warm, low, high, steps, ridge, ramp):  # pragma: no cover
    """:meth:`_RegionFit._lowest` (and the gate of too few points), compiled.  Inlined
    in its one call (numba's IR): as a function of its own, numba would compile it and
    then optimise it again inside its caller (docs/speed.md, cold compile)."""
    n, m = X1.shape
    mask = (y == a) | (y == b)
    n_a, n_ab = np.sum(y[mask] == a), np.sum(mask)
    if n < m + 2 or a == b or n_a == 0 or n_a == n_ab:
        return warm.copy() if has_warm else _random_gate(X1, low, high)
    t = _targets(y[mask] == a)
    ws = w[mask]
    return _l2_svm(X1[mask], t, ws / np.sum(ws), steps, ridge, ramp)


@njit(cache=True)
def _pair_predict(X1, T, classes):  # pragma: no cover - compiled
    """Codes of the height-2 subtree with gates ``T`` (3, m) and leaves ``classes``."""
    out = np.empty(X1.shape[0], dtype=np.int64)
    z0, z1, z2 = X1 @ T[0], X1 @ T[1], X1 @ T[2]
    for i in range(X1.shape[0]):
        if z0[i] <= 0:
            out[i] = classes[0] if z1[i] <= 0 else classes[1]
        else:
            out[i] = classes[2] if z2[i] <= 0 else classes[3]
    return out


@njit(cache=True, inline="always")
def _pair_below(X1, y, w, classes, gate, W, has, low, high, steps, ridge, ramp):  # pragma: no cover
    """:meth:`_RegionFit.below` of a height-2 pair: ``(T, errors)``.  Inlined in its one
    call, as :func:`_lowest_gate` in its one call here (left side, then right)."""
    left = X1 @ gate <= 0
    T = np.empty((3, X1.shape[1]))
    T[0] = gate
    for side in range(2):
        on = left if side == 0 else ~left
        T[1 + side] = _lowest_gate(X1[on], y[on], w[on], classes[2 * side],
                                   classes[2 * side + 1], W[1 + side], has[1 + side], low, high,
                                   steps, ridge, ramp)
    return T, np.sum(w * (_pair_predict(X1, T, classes) != y))


@njit(cache=True)
def _right(z, a, b, y):  # pragma: no cover - compiled
    """Whether a decision sending ``z <= 0`` to class ``a``, the rest to ``b``, gets
    each label ``y`` right (``np.where(z <= 0, a, b) == y``, as a loop)."""
    out = np.empty(z.shape[0], dtype=np.bool_)
    for i in range(z.shape[0]):
        out[i] = (a if z[i] <= 0 else b) == y[i]
    return out


@njit(cache=True)
def _pair_alternate(X1, y, w, classes, gate, W, has, rounds, low, high, steps, ridge,
                    ramp):  # pragma: no cover - compiled
    """:meth:`_RegionFit.alternate` of a height-2 pair: the best ``(T, errors)``.  Round
    0 fits below the starting ``gate`` (warm gates ``W`` where ``has``), each further
    round below the gate separating the points only one subtree gets right (warm:
    the last fit); one call of :func:`_pair_below`, inlined."""
    m = X1.shape[1]
    best, best_errors = np.empty((3, m)), np.inf
    last_care, last_left = np.zeros(0, np.bool_), np.zeros(0, np.bool_)
    warm = np.ones(3, np.bool_)
    for r in range(rounds + 1):
        T, errors = _pair_below(X1, y, w, classes, gate, W, has, low, high, steps, ridge, ramp)
        if r == 0 or errors < best_errors:
            best, best_errors = T.copy(), errors
        if r == rounds:
            break
        z1, z2 = X1 @ T[1], X1 @ T[2]
        right0 = _right(z1, classes[0], classes[1], y)
        right1 = _right(z2, classes[2], classes[3], y)
        care = right0 != right1
        go_left = right0[care]
        same = (len(last_care) == len(care) and np.array_equal(care, last_care)
                and np.array_equal(go_left, last_left))
        if care.sum() < m + 2 or go_left.all() or not go_left.any() or same:
            break
        last_care, last_left = care, go_left
        ws = w[care]
        gate = _l2_svm(X1[care], _targets(go_left), ws / np.sum(ws), steps, ridge, ramp)
        W, has = T, warm
    return best, best_errors


@njit(cache=True)
def _seed(seed):  # pragma: no cover - compiled
    """Seed numba's random stream (one per thread, shared by every compiled function)."""
    np.random.seed(seed)


def _fit_pair(X1, y, w, classes, W, has, gates, seed):
    """:meth:`_RegionFit.fit` of a decision of height 2 whose children are decisions
    of height 1 (leaf codes ``classes``, left to right): from the warm gates ``W``
    (``has[0]``), else from each of the random ``gates``; ``(T (3, m), errors)`` of
    the fewest errors.  Random gates needed inside come from numba's stream seeded
    by ``seed``.  A Python loop over compiled fits: a compiled one would add a
    level of numba's compile (every callee optimised again inside it, about 5 s)
    for four calls."""
    _seed(seed)
    args = (ROUNDS[2], *GATE_QUANTILES, NEWTON_STEPS, RIDGE, RAMP)
    if has[0]:
        return _pair_alternate(X1, y, w, classes, W[0].copy(), W, has, *args)
    none = np.zeros(3, np.bool_)
    best, best_errors = np.zeros((3, X1.shape[1])), np.inf
    for gate in gates:
        T, errors = _pair_alternate(X1, y, w, classes, gate.copy(), W, none, *args)
        if errors < best_errors:
            best, best_errors = T, errors
    return best, best_errors


class _RegionFit:
    """The recursive fits of the module docstring on one problem."""

    def __init__(self, problem, rng):
        self.X1, self.w = problem.data.X1, problem.data.weight
        template = problem.layout.template
        self.children = template.children
        # labels as codes 0..K-1 (the compiled fits compare integers)
        labels = np.unique(np.concatenate([problem.data.y, template.leaf_classes]))
        self.y = np.searchsorted(labels, problem.data.y).astype(np.int64)
        self.leaf = np.searchsorted(labels, template.leaf_classes).astype(np.int64)
        self.rng = rng
        self.height = {}
        self._heights(("d", 0))
        # decisions of height 2 over two decisions of height 1 (the compiled fit)
        self.pairs = {d: ([c for _, c in self.children[d]],
                          np.array([self.leaf[c] for _, k in self.children[d]
                                    for _, c in self.children[k]], dtype=np.int64))
                      for d, h in self.height.items() if h == 2
                      and all(kind == "d" for kind, _ in self.children[d])}

    def _heights(self, child):
        kind, d = child
        if kind == "l":
            return 0
        self.height[d] = 1 + max(self._heights(c) for c in self.children[d])
        return self.height[d]

    def predict(self, child, T, points):
        """Class of each of ``points`` under the subtree at ``child`` with gates ``T``."""
        kind, d = child
        if kind == "l":
            return np.full(len(points), self.leaf[d])
        left = self.X1[points] @ T[d] <= 0
        out = np.empty(len(points), dtype=self.leaf.dtype)
        out[left] = self.predict(self.children[d][0], T, points[left])
        out[~left] = self.predict(self.children[d][1], T, points[~left])
        return out

    def errors(self, child, T, points):
        return float(self.w[points] @ (self.predict(child, T, points) != self.y[points]))

    def random_gate(self, points):
        normal = self.rng.standard_normal(self.X1.shape[1] - 1)
        if len(points) == 0:
            return np.append(normal, 0.0)
        return np.append(normal, np.quantile(self.X1[points, :-1] @ normal,
                                             self.rng.uniform(*GATE_QUANTILES)))

    def fit(self, child, points, warm=None):
        """``(T, errors)``: gates of the subtree at ``child`` fitted on ``points``
        (``warm``: gates of an earlier fit to start from)."""
        kind, d = child
        if kind == "l":
            return {}, self.errors(child, {}, points)
        check_limits()
        if len(points) < self.X1.shape[1] + 2:  # too few points to fit: any gates do
            T = self._any_gates(d, points, warm or {})
            return T, self.errors(child, T, points)
        if self.height[d] == 1:
            T = {d: self._lowest(d, points, warm or {})}
            return T, self.errors(child, T, points)
        if d in self.pairs:
            return self._pair(d, points, warm or {})
        starts = [(warm[d], warm)] if warm and d in warm else [
            (self.random_gate(points), None)
            for _ in range(CANDIDATES[min(self.height[d], max(CANDIDATES))])]
        return min((self.alternate(d, points, gate, w0) for gate, w0 in starts),
                   key=lambda fit: fit[1])

    def _pair(self, d, points, warm):
        """:meth:`fit` of a decision of height 2 over two decisions of height 1, compiled
        (:func:`_fit_pair`: the same alternating fits from the same gates)."""
        (l, r), classes = self.pairs[d]
        m = self.X1.shape[1]
        has = np.array([k in warm for k in (d, l, r)]) if d in warm else np.zeros(3, bool)
        W = np.array([warm[k] if ok else np.zeros(m) for k, ok in zip((d, l, r), has)])
        gates = W[:1] if has[0] else np.array([self.random_gate(points)
                                               for _ in range(CANDIDATES[2])])
        # the rare random gates inside (a side without both leaf classes) from a stream
        # seeded by the starting gates: rng's own stream stays as in the Python fit
        T, errors = _fit_pair(np.ascontiguousarray(self.X1[points]), self.y[points],
                              self.w[points], classes, W, has, gates, zlib.crc32(gates.tobytes()))
        return {d: T[0], l: T[1], r: T[2]}, errors

    def _any_gates(self, d, points, warm):
        T = {d: warm.get(d, self.random_gate(points))}
        for kind, c in self.children[d]:
            if kind == "d":
                T.update(self._any_gates(c, points, warm))
        return T

    def _lowest(self, d, points, warm):
        """A decision just above the leaves: classifier of its left leaf's class against
        its right leaf's (any gate when that is not a two-class problem here)."""
        (_, a), (_, b) = self.children[d]
        a, b = self.leaf[a], self.leaf[b]
        y = self.y[points]
        mask = (y == a) | (y == b)
        if a == b or not np.any(y[mask] == a) or np.all(y[mask] == a):
            return warm.get(d, self.random_gate(points))
        return l2_svm(self.X1[points[mask]], y[mask] == a, self.w[points[mask]])

    def below(self, d, gate, points, warm):
        """Gates of the subtree at ``d`` with ``gate`` at d and its subtrees fitted on
        the points the gate sends them; ``(T, errors)``."""
        left = self.X1[points] @ gate <= 0
        T, errors = {d: gate}, 0.0
        for child, side in zip(self.children[d], (left, ~left)):
            Tc, e = self.fit(child, points[side], warm)
            T.update(Tc)
            errors += e
        return T, errors

    def alternate(self, d, points, gate, warm):
        """The alternating fits of a region split from ``gate``; the best ``(T, errors)``."""
        T, errors = self.below(d, gate, points, warm)
        best, last = (T, errors), None
        for _ in range(ROUNDS[min(self.height[d], max(ROUNDS))]):
            right = [self.predict(c, T, points) == self.y[points] for c in self.children[d]]
            care = right[0] != right[1]
            go_left = right[0][care]
            key = (care.tobytes(), go_left.tobytes())
            if care.sum() < self.X1.shape[1] + 2 or go_left.all() or not go_left.any() \
                    or key == last:
                break
            last = key
            gate = l2_svm(self.X1[points[care]], go_left, self.w[points[care]])
            T, errors = self.below(d, gate, points, T)
            if errors < best[1]:
                best = (T, errors)
        return best


def region_theta(problem, rng=None):
    """Scaled parameters (D, n + 1) of the region start (module docstring).  Raises
    :class:`gto.utils._interrupt.OutOfTime` when an enclosing
    :func:`gto.utils._interrupt.limits` runs out."""
    fit = _RegionFit(problem, np.random.default_rng(rng))
    T, _ = fit.fit(("d", 0), np.arange(problem.data.N))
    return np.array([T[d] for d in range(problem.layout.D)])


def needs_regions(template):
    """Whether a structure has a region split worth this start: a decision of height
    3 or more (a depth-3 subtree); at depth 2 the greedy LP tree is kept."""
    return int(np.count_nonzero(template.sides, axis=1).max()) >= 3
