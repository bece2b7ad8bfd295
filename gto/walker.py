"""The structured walker: EPTS on the tree polytope (DESIGN §3, paper §4-5.2).

A vertex is D blocks of n + 1 tight triples.  Its 2 D (n + 1) edges each move
one decision only, so the objective of a neighbour is updated from the cached
leaf errors of the other decisions.  Variables are numbered as the columns of
:func:`gto.standard_form`: ``[theta | y | u]``, so this walker and the
standard-form reference walker name the same edges the same way.

The edges live in one table: row ``d * 2m + j`` holds decision d's values
at the end of edge slot j (see :func:`gto._kernels.fill_edges`).  A decision's
rows stay valid until that decision pivots; the others' moves only change the
leaf errors they are scored against, which are folded once per vertex into
per-point polynomials (:func:`gto._kernels.leaf_terms`) so that scoring a move
is one pass over the points.
"""
from __future__ import annotations

import time

import numpy as np

from tabu.walker import Walker

from ._kernels import fill_edges, leaf_terms, table_sums, vertex_update

EXACT_EVERY = 256  # pivots between exact recomputations of the cached leaf errors


class TreeWalker(Walker):
    """Walker over the tree polytope of a :class:`gto.problem.TreeProblem`.

    ``blocks`` is one :class:`gto.block.Block` per decision (a vertex, e.g.
    from the crossover); ``objective`` a :class:`gto.problem.Objective`.
    Besides the objective it tracks the vertex with the fewest misclassified
    points (ties by objective), when it was found, and a per-pivot record of
    the count.
    """

    def __init__(self, problem, blocks, objective):
        P = problem
        self.problem = P
        self.blocks = blocks
        self.objective = objective
        for b in blocks:
            b.track(P.X1)
        self.n_variables = P.n_theta + 2 * P.T
        self._X1t = np.ascontiguousarray(P.X1.T)
        self.Zt = np.array([b.theta @ self._X1t for b in blocks])  # decision values per point
        self._exact_errors()
        self._value = float(objective(self.LE))
        self.count = P.n_errors(self.Zt.T)
        self.best_count = (self.count, self._value, self.theta())
        self.best_count_time = time.time()  # wall clock, comparable across workers
        self.counts = [self.count]
        width = 2 * P.m
        self._row_start = np.arange(P.D + 1) * width
        self._row_decision = np.append(np.repeat(np.arange(P.D), width), 0)
        self._table = np.zeros((P.D * width + 1, P.N))  # + a scratch row for stale edges
        self._valid = np.zeros(P.D * width + 1, dtype=bool)
        self._entering = np.zeros(P.D * width + 1, dtype=np.int64)
        self._leaving = np.zeros(P.D * width + 1, dtype=np.int64)
        self._fresh = [False] * P.D
        self._terms = np.zeros((P.D, 2 * (P.point_leaves.shape[1] + 1) + 4, P.N))
        self._degrees = np.zeros((2, P.D), dtype=np.int64)
        self._stale = [True] * P.D  # per decision: leaf terms out of date
        self._scratch_for, self._scratch = None, None  # edge in the scratch row
        self.pivots = 0

    def _exact_errors(self):
        self.EL, self.ER = self.problem.decision_errors(self.Zt.T)
        self.LE = self.EL @ self.problem.SL.T + self.ER @ self.problem.SR.T

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
        for d in range(len(self.blocks)):
            self._refresh(d)
        rows = np.flatnonzero(self._valid[:-1])
        values = self._score(rows, range(len(self.blocks)))
        return self._entering[rows], self._leaving[rows], values

    def evaluate(self, entering):
        found = self._locate(entering)
        if found is None:
            return -1, float("nan")
        return found[4], float(self._score(np.array([found[5]]), (found[0],))[0])

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
            if not (0 <= leave < b.n_real) or not b.is_leaving(q, sigma, leave):
                raise ValueError(f"({entering}, {leaving}) is not an edge at the current vertex")
        b.pivot(q, sigma, leave)
        self._fresh[d] = False
        self._stale = [True] * P.D
        self._scratch_for = None
        self.pivots += 1
        if self.pivots % EXACT_EVERY == 0:  # the update below is incremental
            self.Zt[d] = b.theta @ self._X1t
            self._exact_errors()
        s0, s1, wrong = vertex_update(
            self._X1t, b.theta, d, self.Zt, self.EL, self.ER, self.LE, P.sides, P.point_leaves,
            P.weight, P.p, self.objective.product, P.child_kind, P.child_index, P.mask,
        )
        self._value = float(self.objective.finish((np.array([s0]), np.array([s1])))[0])
        self.count = wrong
        self.counts.append(wrong)
        if (self.count, self._value) < self.best_count[:2]:
            self.best_count = (self.count, self._value, self.theta())
            self.best_count_time = time.time()

    # -- internals ---------------------------------------------------------------
    def _score(self, rows, decisions):
        """Objective at the ends of the edge-table ``rows`` (moves of ``decisions``)."""
        P = self.problem
        needed = [d for d in decisions if self._stale[d]]
        if needed:
            leaf_terms(self.EL, self.ER, self.LE, P.point_leaves, P.sides, P.weight,
                       self._terms, self._degrees, np.array(needed))
            for d in needed:
                self._stale[d] = False
        sums = table_sums(self._table, rows, self._row_decision, self._terms, self._degrees,
                          P.weight, P.p, self.objective.product)
        return self.objective.finish((sums[:, 0], sums[:, 1]))

    def _refresh(self, d):
        """Rebuild decision d's rows of the edge table after it pivoted."""
        if self._fresh[d]:
            return
        P = self.problem
        b = self.blocks[d]
        steps, leave = b.ratio_test_all()
        fill_edges(steps, leave, b.tight, b.n_real, b.ybasic, P.n_theta + P.start[d], P.T,
                   b.H, self.Zt[d], self._table, self._valid, self._entering,
                   self._leaving, self._row_start[d])
        self._fresh[d] = True

    def _locate(self, entering):
        """(d, q, sigma, leave, leaving_id, table row) of the edge ``entering`` opens, or None."""
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
        if self._fresh[d]:  # block unchanged since its edges were tabled
            j = self._row_start[d] + (q if sigma > 0 else P.m + q)
            if not self._valid[j]:
                return None
            leaving = int(self._leaving[j])
            leave = leaving - P.n_theta - P.start[d]
            leave -= P.T if leave >= P.T else 0
            return d, q, sigma, leave, leaving, j
        if b.tight[q] >= b.n_real:
            return None
        if self._scratch_for == entering:  # evaluated just before, vertex unchanged
            return self._scratch
        j = len(self._table) - 1  # one ratio test into the scratch row
        leave = b.edge(q, sigma, self.Zt[d], self._table[j])
        if leave < 0:
            return None
        self._row_decision[j] = d
        leaving = P.n_theta + P.start[d] + leave + (0 if b.ybasic[leave] else P.T)
        self._scratch_for, self._scratch = entering, (d, q, sigma, leave, leaving, j)
        return self._scratch


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
