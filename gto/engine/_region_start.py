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
        G = ridge * np.eye(m)
        b = np.zeros(m)
        for i in range(n):
            if active[i]:
                for a in range(m):
                    xa = X1[i, a] * w[i]
                    b[a] += xa * t[i]
                    for c in range(a, m):
                        G[a, c] += xa * X1[i, c]
        for a in range(m):
            for c in range(a):
                G[a, c] = G[c, a]
        theta = np.linalg.solve(G, b)
        margin = t * (X1 @ theta)
        inside = (margin < 1.0) & (margin > -ramp)
        if np.array_equal(inside, active) or inside.sum() < m:
            break
        active = inside
    return theta


class _RegionFit:
    """The recursive fits of the module docstring on one problem."""

    def __init__(self, problem, rng):
        self.X1, self.y, self.w = problem.data.X1, problem.data.y, problem.data.weight
        template = problem.layout.template
        self.children, self.leaf = template.children, template.leaf_classes
        self.rng = rng
        self.height = {}
        self._heights(("d", 0))

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
        starts = [(warm[d], warm)] if warm and d in warm else [
            (self.random_gate(points), None)
            for _ in range(CANDIDATES[min(self.height[d], max(CANDIDATES))])]
        return min((self.alternate(d, points, gate, w0) for gate, w0 in starts),
                   key=lambda fit: fit[1])

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
