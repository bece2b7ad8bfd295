"""The structured walker: EPTS on the tree polytope (docs/DESIGN.md §3, paper §4-5.2).

A vertex is D blocks of n + 1 tight rows: triples and, with sparse vertices
(docs/DESIGN.md §3b, ``problem.blocks.n_coord > 0``), coordinate rows ``w_j = 0``.  Its
2 D (n + 1) edges each move one decision only, so the objective of a
neighbour is updated from the cached leaf errors of the other decisions.
Variables are numbered as the columns of the standard form:
``[theta | y | u]`` over all rows (``problem.blocks.R``: per decision its triples,
then its coordinate rows, whose y and u are ``w-`` and ``w+``), so this
walker and the standard-form reference walker name the same edges the same
way.  The L1 penalty (``problem.blocks.alpha``) adds ``alpha * sum |w|`` at each
edge's end to its score (linear along the edge: the ratio test stops where
a weight reaches 0); the feature budget (``problem.blocks.max_features``) drops
edges that would exceed it, except that a freed weight may swap with the
first weight its ray takes to 0 (:func:`gto.engine._kernels.edge_slots`).

The edges live in one table: slot ``d * 2m + j`` holds decision d's edge j
(entering and leaving variables and the step; see
:func:`gto.engine._kernels.edge_slots`).  Its end is ``z_d + step * H_d[q]``, with
``H_d`` the points' rates that the block keeps.  A decision's slots stay
valid until that decision pivots; the others' moves only change the leaf
errors they are scored against, which are folded once per vertex into
per-point polynomials (:func:`gto.engine._kernels.leaf_terms`) so that scoring a
move is one pass over the points.  A single move (EPTS re-checking its
candidate list) is scored directly from the leaf errors
(:func:`gto.engine._kernels.move_sums`).
"""
from __future__ import annotations

import time

import numpy as np

from tabu.walker import Walker

from ._block import DegeneratePivotError
from ._kernels import (
    edge_slots,
    exact_errors,
    exact_vertex,
    leaf_plan,
    leaf_terms,
    move_sums,
    table_sums,
    vertex_update,
    within_budget,
)
from ._tabu_loop import CompiledLoop, block_buffers, built_in

EXACT_EVERY = 256  # pivots between exact recomputations of the cached leaf errors


class TreeWalker(Walker):
    """Walker over the tree polytope of a :class:`gto.engine._problem.TreeProblem`.

    ``blocks`` is one :class:`gto.engine._block.Block` per decision (a vertex, e.g.
    from the crossover); ``objective`` a :class:`gto.engine._problem.Objective`.
    Besides the objective it tracks the vertex with the fewest misclassified
    points (ties by objective), when it was found, and a per-pivot record of
    the count.
    """

    def __init__(self, problem, blocks, objective):
        P = self.problem = problem
        self.blocks = blocks
        self.objective = objective
        self._product = objective.product
        self._H = np.empty((P.layout.D, P.data.m, P.data.N))  # per decision, the points' rates along its edges
        for b, H in zip(blocks, self._H):
            b.track(P.data.X1, out=H)
        self.n_variables = P.blocks.n_theta + 2 * P.blocks.R
        self._X1t = np.ascontiguousarray(P.data.X1.T)
        self.Zt = np.array([b.theta @ self._X1t for b in blocks])  # decision values per point
        # scratch of the kernels (gto.engine._kernels.vertex_update, block_update,
        # product_move_sums_into): rows as long as the points and any block's rows
        self._znew = np.empty(P.data.N)
        self._work = np.empty((4, max([P.data.N, P.data.m] + [b.G.shape[1] for b in blocks])))
        # (D, N) like Zt: C-contiguous for every D, so the compiled loops see one array type
        self.ELt, self.ERt = np.empty_like(self.Zt), np.empty_like(self.Zt)
        # (N, K) column-major, as the class-leaf flags: a leaf's errors over the points are
        # contiguous, so the kernels' passes per leaf vectorise (gto.engine._kernels.vertex_update)
        self.LE = np.empty((P.data.N, P.layout.K), order="F")
        self._leaf_ok = P.layout.mask_by_leaf
        self._wrong = np.empty(P.data.N, dtype=bool)
        self._exact_errors()
        self._alpha = P.blocks.alpha
        self._budget = -1 if P.blocks.max_features is None else P.blocks.max_features
        self._pen = np.array([self._penalty(b.theta) for b in blocks])  # per decision
        # numpy on a C copy: its row reductions then run as they always did
        self._value = float(objective(np.ascontiguousarray(self.LE))) + float(self._pen.sum())
        self.count = float(P.data.weight @ self._wrong)
        self.best_count = (self.count, self._value, self.theta())
        self.best_count_time = time.time()  # wall clock, comparable across workers
        self.counts = [self.count]
        self._width = 2 * P.data.m  # edge slots per decision
        self._valid = np.zeros(P.layout.D * self._width, dtype=bool)
        self._entering = np.zeros(P.layout.D * self._width, dtype=np.int64)
        self._leaving = np.zeros(P.layout.D * self._width, dtype=np.int64)
        self._coef = np.zeros(P.layout.D * self._width)
        self._dpen = np.zeros(P.layout.D * self._width)  # penalty change along each slot's edge
        self._fresh = np.zeros(P.layout.D, dtype=bool)  # per decision: slots up to date
        self._terms = np.zeros((P.layout.D, 2 * (P.layout.point_leaves.shape[1] + 1) + 4, P.data.N))
        self._degrees = np.zeros((2, P.layout.D), dtype=np.int64)
        self._stale = np.ones(P.layout.D, dtype=bool)  # per decision: leaf terms out of date
        self._plan = leaf_plan(P.layout.point_leaves, P.layout.sides)
        self._located = (None, None)  # (entering, _locate's answer) at this vertex
        self._layout = (P.blocks.n_theta, P.blocks.R, P.data.m, P.blocks.row_decision.tolist(),
                        P.blocks.row_start.tolist())
        self.pivots = 0
        self.exact_every = EXACT_EVERY

    def __setstate__(self, state):
        """After a copy or unpickling, the blocks' H are views into the walker's again."""
        self.__dict__.update(state)
        for b, H in zip(self.blocks, self._H):
            H[...] = b.H
            b.H = H

    def _exact_errors(self, d=None):
        """The cached errors recomputed from ``Zt`` (:func:`gto.engine._kernels.exact_errors`),
        in place: a compiled search holds these arrays (:mod:`gto.engine._tabu_loop`), and
        recomputes them with the same kernels.  ``d``: a decision that just pivoted, whose
        values are recomputed first (:func:`gto.engine._kernels.exact_vertex`)."""
        L = self.problem.layout
        tail = (self.problem.p, L.sides, L.child_kind, L.child_index, self._leaf_ok, self.ELt, self.ERt,
                self.LE, self._wrong)
        if d is None:
            exact_errors(self.Zt, *tail)
        else:
            exact_vertex(self._X1t, self.blocks[d].theta, d, self.Zt, *tail)

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
        return self.basis_of([b.in_block for b in self.blocks], [b.ybasic for b in self.blocks])

    def basis_of(self, in_blocks, ybasics):
        """Basic variables of the vertex whose blocks have flags ``in_blocks``, ``ybasics``."""
        P = self.problem
        ids = [np.arange(P.blocks.n_theta)]
        for d, b in enumerate(self.blocks):
            local = np.flatnonzero(~in_blocks[d][: b.n_real])
            ids.append(P.blocks.n_theta + P.blocks.row_start[d] + local
                       + np.where(ybasics[d][local], 0, P.blocks.R))
        return np.concatenate(ids)

    def compiled_loop(self, *args):
        """EPTS moves in compiled code (:class:`gto.engine._tabu_loop.CompiledLoop`, arguments
        as there), on dense vertices; None with a penalty or coordinate rows."""
        if self._alpha or self.problem.blocks.n_coord:
            return None
        return CompiledLoop(self, *args)

    def candidates(self):
        for d in range(len(self.blocks)):
            if not self._fresh[d]:
                self._refresh(d)
        P = self.problem
        slots = np.flatnonzero(self._valid)
        leaf_terms(self.ELt, self.ERt, self.LE, P.layout.point_leaves, P.layout.sides, P.data.weight, self._terms,
                   self._degrees, self._stale, self._product, self._plan)
        sums = table_sums(slots, self._coef, self._width, self.Zt, self._H, self._terms,
                          self._degrees, P.data.weight, P.p, self._product)
        values = self.objective.finish((sums[:, 0], sums[:, 1]))
        if self._alpha:
            values = values + (self._pen.sum() + self._dpen[slots])
        return self._entering[slots], self._leaving[slots], values

    def evaluate(self, entering):
        found = self._locate(entering)
        if found is None:
            return -1, float("nan")
        P = self.problem
        d, q, _, _, leaving, c = found
        sums = move_sums(self.Zt[d], self._H[d, q], c, d, self.ELt, self.ERt, self.LE, P.layout.sides,
                         P.layout.point_leaves, P.data.weight, P.p, self._product)
        value = float(self.objective.finish(sums))
        if self._alpha:
            b = self.blocks[d]
            value += self._pen.sum() - self._pen[d] + self._penalty(b.theta + c * b.Binv[:, q])
        return leaving, value

    def pivot(self, entering, leaving):
        """Move along (entering, leaving); any leaving row that ties the ratio test is accepted."""
        P = self.problem
        found = self._locate(entering)
        if found is None:
            raise ValueError(f"{entering} does not enter along a bounded edge here")
        d, q, sigma, leave, leaving_id, _ = found
        b = self.blocks[d]
        if leaving != leaving_id:
            leave = int(leaving) - P.blocks.n_theta - P.blocks.row_start[d]
            leave -= P.blocks.R if leave >= P.blocks.R else 0
            if not (0 <= leave < b.n_real) or not b.is_leaving(q, sigma, leave):
                raise ValueError(f"({entering}, {leaving}) is not an edge at the current vertex")
        try:
            b.pivot(q, sigma, leave)
        except DegeneratePivotError:  # refused, the block as before: not offered again here
            self._refuse(d, q, sigma)
            raise
        self._fresh[d] = False
        self._stale[:] = True
        self._located = (None, None)
        self.pivots += 1
        if self.pivots % self.exact_every == 0:  # the update below is incremental
            self._exact_errors(d)
        s0, s1, count = vertex_update(
            self._X1t, b.theta, d, self.Zt, self._znew, self.ELt, self.ERt, self.LE, P.layout.sides,
            P.layout.point_leaves, P.data.weight, P.p, self._product, P.layout.child_kind,
            P.layout.child_index, self._leaf_ok, self._wrong, self._work,
        )
        self._pen[d] = self._penalty(b.theta)
        self._value = float(self.objective.finish((s0, s1))) + float(self._pen.sum())
        self.count = count
        self.counts.append(count)
        if count < self.best_count[0] or (count == self.best_count[0]
                                          and self._value < self.best_count[1]):
            self.best_count = (count, self._value, self.theta())
            self.best_count_time = time.time()

    # -- internals ---------------------------------------------------------------
    def _refuse(self, d, q, sigma):
        """Drop decision d's edge freeing block position q (direction ``sigma``) from the
        moves at this vertex (until decision d pivots): its pivot was refused."""
        if not self._fresh[d]:
            self._refresh(d)
        self._valid[d * self._width + (q if sigma > 0 else self.problem.data.m + q)] = False
        self._located = (None, None)

    def _refresh(self, d):
        """Rebuild decision d's slots of the edge table after it pivoted."""
        P = self.problem
        b = self.blocks[d]
        steps, leave = b.ratio_test_all()
        csteps, cleave = b.coordinate_ratio_test_all() if self._budget >= 0 else (steps, -1 - leave)
        j0 = d * self._width
        edge_slots(steps, leave, csteps, cleave, b.tight, b.n_real, b.ybasic,
                   P.blocks.n_theta + P.blocks.row_start[d], P.blocks.R,
                   b.coord, b.n_coord, self._budget, self._valid, self._entering, self._leaving,
                   self._coef, j0)
        if self._alpha:  # sum |w| at each edge's end: w + coef * (column q of M^-1)
            coef = self._coef[j0: j0 + self._width]
            ends = b.theta[:-1, None] + b.Binv[:-1, np.arange(self._width) % P.data.m] * coef
            self._dpen[j0: j0 + self._width] = self._alpha * np.abs(ends).sum(axis=0) - self._pen[d]
        self._fresh[d] = True

    def _penalty(self, theta):
        """``alpha * sum |w|`` of one decision's scaled parameters (docs/DESIGN.md §3b)."""
        return self._alpha * float(np.abs(theta[:-1]).sum()) if self._alpha else 0.0

    def _locate(self, entering):
        """(d, q, sigma, leave, leaving_id, sigma * step) of the edge ``entering`` opens, or None."""
        if self._located[0] == entering:  # asked before at this vertex
            return self._located[1]
        n_theta, T, m, triple_decision, start = self._layout
        k = int(entering) - n_theta
        found = None
        if 0 <= k < 2 * T:
            sigma = 1.0 if k >= T else -1.0
            t = k - T if k >= T else k
            d = triple_decision[t]
            b = self.blocks[d]
            local = t - start[d]
            q = int(b.position[local])  # -1: not in the block, no edge
            if q >= 0 and self._fresh[d]:  # block unchanged since its edges were tabled
                j = d * self._width + (q if sigma > 0 else m + q)
                if self._valid[j]:
                    leaving = int(self._leaving[j])
                    leave = leaving - n_theta - start[d]
                    found = (d, q, sigma, leave - T if leave >= T else leave, leaving,
                             float(self._coef[j]))
            elif q >= 0:  # one ratio test
                step, leave = b.ratio_test(q, sigma)
                if leave >= 0 and not within_budget(b.tight, q, leave, b.coord, b.n_coord,
                                                    self._budget):
                    leave = -1  # over the budget; a freed weight may swap instead
                    if b.coord <= b.tight[q] < b.coord + b.n_coord:
                        step, k = b.coordinate_ratio_test(q, sigma)
                        leave = b.coord + k if k >= 0 else -1
                if leave >= 0:
                    leaving = n_theta + start[d] + leave + (0 if b.ybasic[leave] else T)
                    found = (d, q, sigma, int(leave), leaving, sigma * step)
        self._located = (entering, found)
        return found


def walker_from_theta(problem, Theta, objective, rng=None):
    """Crossover (Theorem 4.1) from scaled parameters, then a walker at that vertex.

    With a feature budget (``problem.blocks.max_features``) each decision first keeps
    only its largest ``max_features`` weights (scaled units); the crossover
    then keeps the zeros at zero, so the walk starts within the budget.
    """
    from ._crossover import crossover_blocks, margin_scaled

    Theta = sparsified(Theta, problem.blocks.max_features)
    Z = problem.data.X1 @ Theta.T
    shift, scale = margin_scaled(Z)
    Theta[:, -1] += shift
    Theta *= scale[:, None]
    adopted, views = block_buffers(problem)  # the blocks are built in the compiled loop's buffers
    blocks = crossover_blocks(problem.blocks.rows, problem.blocks.triple_weight, Theta, rng, problem.blocks.rhs,
                              problem.blocks.n_point, problem.blocks.n_coord, problem.blocks.rows_t, views)
    walker = TreeWalker(problem, blocks, objective)
    if built_in(blocks, problem, views):
        walker._adopted = adopted  # see gto.engine._tabu_loop.tree_arrays
    return walker


def sparsified(Theta, max_features):
    """A copy of ``Theta`` (D, n + 1) keeping per decision the ``max_features``
    largest |w| (all of them for None)."""
    Theta = np.array(Theta, dtype=float)
    if max_features is not None and max_features < Theta.shape[1] - 1:
        W = Theta[:, :-1]
        order = np.argsort(-np.abs(W), axis=1, kind="stable")
        np.put_along_axis(W, order[:, max_features:], 0.0, axis=1)
    return Theta
