"""The structured walker: EPTS on the tree polytope (DESIGN §3, paper §4-5.2).

A vertex is D blocks of n + 1 tight triples.  Its 2 D (n + 1) edges each move
one decision only, so the objective of a neighbour is updated from the cached
leaf errors of the other decisions.  Variables are numbered as the columns of
:func:`gto.standard_form`: ``[theta | y | u]``, so this walker and the
standard-form reference walker name the same edges the same way.
"""
from __future__ import annotations

import time

import numpy as np

from tabu.walker import Walker

from .block import Block


class TreeWalker(Walker):
    """Walker over the tree polytope of a :class:`gto.problem.TreeProblem`.

    ``blocks`` is one :class:`gto.block.Block` per decision (a vertex, e.g.
    from the crossover); ``objective`` a :class:`gto.problem.Objective`.
    Besides the objective it tracks the vertex with the fewest misclassified
    points (ties by objective), when it was found, and a per-pivot record of
    the count.
    """

    def __init__(self, problem, blocks, objective):
        self.problem = problem
        self.blocks = blocks
        self.objective = objective
        self.n_variables = problem.n_theta + 2 * problem.T
        self.Z = np.column_stack([problem.X1 @ b.theta for b in blocks])
        self.EL, self.ER = problem.decision_errors(self.Z)
        self.LE = self.EL @ problem.SL.T + self.ER @ problem.SR.T
        self._value = float(objective(self.LE))
        self.count = problem.n_errors(self.Z)
        self.best_count = (self.count, self._value, self.theta())
        self.best_count_time = time.time()  # wall clock, comparable across workers
        self.counts = [self.count]
        self._edges = [None] * len(blocks)
        self.pivots = 0

    # -- Walker interface --------------------------------------------------------
    @property
    def value(self):
        return self._value

    @property
    def x(self):
        return self.theta().ravel()

    def theta(self):
        """(D, n + 1) current parameters in scaled units."""
        return np.array([b.theta for b in self.blocks])

    def basis(self):
        P = self.problem
        ids = [np.arange(P.n_theta)]
        for d, b in enumerate(self.blocks):
            local = np.flatnonzero(~b.in_block[: b.n_real])
            ids.append(P.n_theta + P.start[d] + local + np.where(b.ybasic[local], 0, P.T))
        return np.concatenate(ids)

    def candidates(self):
        values, entering, leaving = [], [], []
        for d in range(len(self.blocks)):
            Zd, e, l, _ = self._decision_edges(d)
            if len(e):
                values.append(self.objective.values(Zd, d, self.EL, self.ER, self.LE))
                entering.append(e)
                leaving.append(l)
        if not values:
            empty = np.array([], dtype=np.int64)
            return empty, empty, np.array([])
        return np.concatenate(entering), np.concatenate(leaving), np.concatenate(values)

    def evaluate(self, entering):
        found = self._locate(entering)
        if found is None:
            return -1, float("nan")
        d, _, _, _, leaving, z = found
        return leaving, float(self.objective.values(z, d, self.EL, self.ER, self.LE)[0])

    def pivot(self, entering, leaving):
        """Move along (entering, leaving); any leaving row that ties the ratio test is accepted."""
        P = self.problem
        found = self._locate(entering)
        if found is None:
            raise ValueError(f"{entering} does not enter along a bounded edge here")
        d, q, sigma, leave, leaving_id, _ = found
        b = self.blocks[d]
        if leaving != leaving_id:
            leave = int(leaving) - P.n_theta - P.start[d]
            leave -= P.T if leave >= P.T else 0
            if not (0 <= leave < b.n_real) or not b.is_leaving(b.rows @ b.Binv[:, q], sigma, leave):
                raise ValueError(f"({entering}, {leaving}) is not an edge at the current vertex")
        b.pivot(q, sigma, leave)
        self._edges[d] = None
        self.Z[:, d] = P.X1 @ b.theta
        self.EL[:, d], self.ER[:, d] = P.decision_errors(self.Z[:, d])
        self.LE = self.EL @ P.SL.T + self.ER @ P.SR.T
        self._value = float(self.objective(self.LE))
        self.count = P.n_errors(self.Z)
        self.counts.append(self.count)
        self.pivots += 1
        if (self.count, self._value) < self.best_count[:2]:
            self.best_count = (self.count, self._value, self.theta())
            self.best_count_time = time.time()

    # -- internals ---------------------------------------------------------------
    def _locate(self, entering):
        """(d, q, sigma, leave, leaving_id, z) of the edge ``entering`` opens, or None.

        ``z`` is decision d's values at the neighbour, (N, 1).
        """
        P = self.problem
        k = int(entering) - P.n_theta
        if k < 0 or k >= 2 * P.T:
            return None
        sigma = 1.0 if k >= P.T else -1.0
        t = k % P.T
        d = int(P.triple_decision[t])
        b = self.blocks[d]
        local = t - P.start[d]
        if not b.in_block[local]:
            return None
        q = int(b.position[local])
        edges = self._edges[d]
        if edges is not None:  # block unchanged since its edges were listed
            j = edges[3][q if sigma > 0 else P.m + q]
            if j < 0:
                return None
            leaving = int(edges[2][j])
            leave = leaving - P.n_theta - P.start[d]
            leave -= P.T if leave >= P.T else 0
            return d, q, sigma, leave, leaving, edges[0][:, j : j + 1]
        direction = b.Binv[:, q]
        step, leave = b.ratio_test(b.rows @ direction, sigma)
        if leave < 0:
            return None
        z = (P.X1 @ (b.theta + (step * sigma) * direction))[:, None]
        leaving = P.n_theta + P.start[d] + leave + (0 if b.ybasic[leave] else P.T)
        return d, q, sigma, leave, leaving, z

    def _decision_edges(self, d):
        """Decision d's bounded edges: (new values (N, M), entering, leaving, column).

        ``column[j]`` is the column of edge slot j (q with sigma=+1, then
        m + q with sigma=-1), -1 for rays and pseudo-rows.  Cached until
        decision d pivots: other decisions' moves do not change its block,
        only the leaf errors its moves are scored against.
        """
        if self._edges[d] is None:
            P = self.problem
            b = self.blocks[d]
            steps, leave = b.ratio_test_all()
            ok = leave >= 0
            ok[: P.m] &= b.real_positions()
            ok[P.m :] &= b.real_positions()
            slots = np.flatnonzero(ok)
            q = slots % P.m
            sigma = np.where(slots < P.m, 1.0, -1.0)
            Zd = P.X1 @ (b.theta[:, None] + b.Binv[:, q] * (sigma * steps[slots]))
            base = P.n_theta + P.start[d]
            entering = base + b.tight[q] + np.where(slots < P.m, P.T, 0)
            lv = leave[slots]
            leaving = base + lv + np.where(b.ybasic[lv], 0, P.T)
            column = np.full(2 * P.m, -1)
            column[slots] = np.arange(slots.size)
            self._edges[d] = (Zd, entering, leaving, column)
        return self._edges[d]


def walker_from_theta(problem, Theta, objective, rng=None):
    """Crossover (Theorem 4.1) from scaled parameters, then a walker at that vertex."""
    from .crossover import crossover_blocks, margin_scaled

    Z = problem.X1 @ Theta.T
    shift, scale = margin_scaled(Z)
    Theta = Theta.copy()
    Theta[:, -1] += shift
    Theta *= scale[:, None]
    blocks = crossover_blocks(problem.rows, problem.triple_weight, Theta, rng)
    return TreeWalker(problem, blocks, objective)


def walker_from_blocks(problem, tights, objective):
    """Walker at the vertex given by each decision's tight triples."""
    return TreeWalker(problem, [Block(r, t) for r, t in zip(problem.rows, tights)], objective)
