"""The structured walker with long steps (docs/DESIGN.md §3b).

:class:`LongStepWalker` offers, on an edge, the best vertex along its ray
instead of the first one (:mod:`gto.engine._ray`): the move still enters the edge's
variable, and the leaving one is the row whose crossing is best, so EPTS's
memories work unchanged.  A long move is one pivot (that row replaces the
freed one; the other n tight rows stay); rows crossed on the way swap their
basic y for u or back (:func:`gto.engine._kernels.block_update` sets them by sign).

Sweeping a ray costs about two plain move evaluations (product error) or
``budget`` of them (other errors), so :meth:`candidates` sweeps only the
``sweep`` edges with the best first-vertex values (all with ``sweep=None``).
"""
from __future__ import annotations

import numpy as np

from ._block import PIVOT_RTOL, PIVOT_TOL
from ._kernels import leaf_terms, pivot_threshold
from ._ray import crossings, literal_sums, product_sweep
from ._walker import TreeWalker

#: edges swept per candidate list, and crossings per ray for the non-product errors
DEFAULT_SWEEP, LITERAL_BUDGET = 8, 16


class LongStepWalker(TreeWalker):
    """:class:`gto.engine._walker.TreeWalker` whose moves go to the best vertex on the ray.

    ``sweep``: edges swept per :meth:`candidates` call (best first-vertex
    values first; None: all); ``budget``: crossings examined per ray (None:
    all for the product error, ``LITERAL_BUDGET`` for the others).
    """

    def __init__(self, problem, blocks, objective, sweep=DEFAULT_SWEEP, budget=None):
        if problem.blocks.n_coord or problem.blocks.alpha:
            raise ValueError("long steps need point rows only: alpha=0 and max_features=None")
        super().__init__(problem, blocks, objective)
        self.sweep = sweep
        self.budget = budget if budget is not None or objective.product else LITERAL_BUDGET
        self._long = {}  # entering -> (leaving, row, step, value) found at this vertex
        self.long_moves = 0

    @classmethod
    def from_walker(cls, walker, **kwargs):
        """A long-step walker at ``walker``'s vertex (the blocks are taken over)."""
        return cls(walker.problem, walker.blocks, walker.objective, **kwargs)

    # -- one ray -----------------------------------------------------------------
    def ray(self, d, q, sigma):
        """Best crossing on the ray freeing position q of decision d in direction sigma:
        ``(value, row, step)``, or None when the ray crosses nothing."""
        P, b = self.problem, self.blocks[d]
        g = b.G[q]
        thr = pivot_threshold(g, b.in_block, PIVOT_TOL, PIVOT_RTOL)
        steps, rows = crossings(b.r, g, sigma, b.in_block, b.n_real, thr, self.budget)
        if rows.size == 0:
            return None
        h = sigma * self._H[d, q]
        if self._product:
            leaf_terms(self.ELt, self.ERt, self.LE, P.layout.point_leaves, P.layout.sides, P.data.weight, self._terms,
                       self._degrees, self._stale, True, self._plan)
            act_left, act_right = self._active(d, b, g, sigma)
            points, sides = P.blocks.row_points[d][rows], P.blocks.row_sides[d][rows]
            s0 = product_sweep(self.Zt[d], h, self._terms[d], self._degrees[0, d],
                               self._degrees[1, d], P.p, act_left, act_right, steps, points, sides)
            values = self.objective.finish((s0, np.zeros_like(s0)))
        else:
            sums = literal_sums(self.Zt[d], h, steps, d, self.ELt, self.ERt, self.LE, P.layout.sides,
                                P.layout.point_leaves, P.data.weight, P.p, False)
            values = self.objective.finish((sums[:, 0], sums[:, 1]))
        k = int(np.argmin(values))
        if self._product:  # the chosen vertex scored afresh (the sweep's sum carries round-off)
            exact = literal_sums(self.Zt[d], h, steps[k:k + 1], d, self.ELt, self.ERt, self.LE,
                                 P.layout.sides, P.layout.point_leaves, P.data.weight, P.p, True)
            values[k] = self.objective.finish((exact[:, 0], exact[:, 1]))[0]
        return float(values[k]), int(rows[k]), float(steps[k])

    def _active(self, d, b, g, sigma):
        """Per point, whether its left / right decision error at d is positive just after t = 0."""
        P = self.problem
        n = b.n_real
        r = b.r[:n]
        act = (r > 0) | ((r == 0) & (sigma * g[:n] < 0))
        left, right = np.zeros(P.data.N, dtype=bool), np.zeros(P.data.N, dtype=bool)
        sides, points = P.blocks.row_sides[d], P.blocks.row_points[d]
        left[points[sides < 0]] = act[sides < 0]
        right[points[sides > 0]] = act[sides > 0]
        return left, right

    def _long_move(self, entering, short_value):
        """The long move for ``entering`` if it beats ``short_value``: (leaving, value) or None."""
        found = self._locate(entering)
        if found is None:
            return None
        d, q, sigma = found[:3]
        best = self.ray(d, q, sigma)
        if best is None or not best[0] < short_value:
            return None
        value, row, step = best
        P = self.problem
        leaving = P.blocks.n_theta + P.blocks.start[d] + row + (0 if self.blocks[d].ybasic[row] else P.blocks.T)
        self._long[int(entering)] = (leaving, row, step, value)
        return leaving, value

    def compiled_loop(self, *args):
        """None: long moves are made by the Python driver of :func:`tabu.search`."""
        return None

    # -- Walker interface --------------------------------------------------------
    def candidates(self):
        E, L, V = super().candidates()
        L, V = L.copy(), np.asarray(V, dtype=float).copy()
        k = len(V) if self.sweep is None else min(int(self.sweep), len(V))
        if k:
            finite = np.where(np.isnan(V), np.inf, V)
            for j in np.argpartition(finite, k - 1)[:k]:
                move = self._long_move(int(E[j]), finite[j])
                if move is not None:
                    L[j], V[j] = move
        return E, L, V

    def evaluate(self, entering):
        leaving, value = super().evaluate(entering)
        if leaving >= 0:
            move = self._long_move(int(entering), value)
            if move is not None:
                return move
        return leaving, value

    def pivot(self, entering, leaving):
        far = self._long.get(int(entering))
        self._long = {}
        if far is None or far[0] != leaving:
            return super().pivot(entering, leaving)
        found = self._locate(entering)
        d, q, sigma = found[:3]
        _, row, step, _ = far
        self._located = (entering, (d, q, sigma, row, int(leaving), sigma * step))
        super().pivot(entering, leaving)  # rows crossed on the way: the block's update
        self.long_moves += 1              # sets their basic y / u by the slacks' signs
