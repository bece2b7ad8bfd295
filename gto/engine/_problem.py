"""A tree fitting problem prepared once: merged, scaled data and its triples.

Everything the walker, the crossover, Frank-Wolfe and the starting points
share: ``X1 = [x', -1]`` on the internally scaled data (so decision values
are ``X1 @ theta_d``), per-decision triple rows ``s [x', -1]``, the leaves of
each point's class, and the objective of paper §3 over cached leaf errors.
"""
from __future__ import annotations

import numpy as np

from ..model.tree import Tree
from ..utils._memory import check_fits
from ..utils._validation import check_fit_data
from ._block import decision_part
from ._formulation import build_triples, class_leaf_mask, decision_errors, merge_duplicates
from ._kernels import BOUNDARY_TOL, misclassified
from ._objectives import OBJECTIVES, lexicographic, lexicographic_eps, point_errors
from ._scaling import Scaler

WALK_OBJECTIVES = OBJECTIVES
SNAP_TOL = 1e-12  # |w| below this (scaled units) is a rounding error


class Objective:
    """Paper eq. 15/17/19 summed over points, for the walker.

    Calling it on leaf errors ``LE`` (N, K) scores a vertex; ``finish`` turns
    the kernels' (total, count) sums into objective values.  "lexicographic"
    is the count first, then the minimum error: ``count + eps * m / (m + m0)``,
    with eps below the smallest point weight so that a lower count always
    wins, and m0 the minimum error it was built with.
    """

    def __init__(self, name, problem, lex_scale=1.0):
        if name not in WALK_OBJECTIVES:
            raise ValueError(f"objective must be one of {WALK_OBJECTIVES}, got {name!r}")
        self.name = name
        self.problem = problem
        self.product = name == "product"
        self.eps = lexicographic_eps(problem.data.weight)
        self.lex_scale = max(float(lex_scale), 1e-12)

    def finish(self, sums):
        """Objective values from the kernels' (total, count) sums."""
        total, count = sums
        if self.name in ("product", "minimum"):
            return total
        if self.name == "count":
            return count
        return lexicographic(count, total, self.eps, self.lex_scale)

    def __call__(self, LE):
        """Objective of the (N, K) leaf errors."""
        P = self.problem
        if self.product:
            return float(P.data.weight @ point_errors(LE, P.layout.mask, "product"))
        total = P.data.weight @ point_errors(LE, P.layout.mask, "minimum")
        count = P.data.weight @ point_errors(LE, P.layout.mask, "count")
        return float(self.finish((np.array([total]), np.array([count])))[0])


class PreparedData:
    """Validated data, duplicates merged (docs/DESIGN.md §3), zero weights dropped, points
    grouped by class and scaled (:class:`gto.engine._scaling.Scaler`): ``X1 = [x', -1]``."""

    def __init__(self, tree, X, y, sample_weight=None, coordinate_rows=False):
        X, y, w = check_fit_data(tree, X, y, sample_weight)
        self.X_orig, self.y_orig, self.w_orig = X, y, w
        Xm, ym, wm, _ = merge_duplicates(X, y, w)
        keep = wm > 0
        _, codes = np.unique(ym, return_inverse=True)
        order = np.argsort(codes.reshape(-1)[keep], kind="stable")  # group points by class
        Xm, ym, wm = Xm[keep][order], ym[keep][order], wm[keep][order]
        self.X_points = Xm  # the search's points in original units
        self.scaler = Scaler(Xm, diagonal=coordinate_rows)
        Xs = self.scaler.transform(Xm)
        self.N, self.n = Xs.shape
        self.m = self.n + 1
        self.X1 = np.column_stack([Xs, -np.ones(self.N)])
        self.y = ym
        self.weight = wm


class Layout:
    """The structure against the points' classes: leaf sides of each decision,
    the class leaves of each point (``mask``, ``point_leaves``, ``leaf_slices``)
    and the children of each decision (paper §2, docs/DESIGN.md §1)."""

    def __init__(self, tree, y):
        self.structure = tree.structure
        self.template = tree
        self.n_features = tree.n_features
        self.sides = tree.sides
        self.D, self.K = tree.n_decisions, tree.n_leaves
        self.SL = (self.sides == -1).astype(float)  # (K, D)
        self.SR = (self.sides == +1).astype(float)
        self.mask = class_leaf_mask(tree, y)
        # the same flags column-major, a leaf's points contiguous as in the walkers' leaf
        # errors (gto.engine._kernels.vertex_update's passes per leaf read them so)
        self.mask_by_leaf = np.asfortranarray(self.mask)
        self.leaf_slices = []
        for k in range(self.K):
            idx = np.flatnonzero(self.mask[:, k])
            self.leaf_slices.append(slice(idx[0], idx[-1] + 1) if idx.size else slice(0, 0))
        # per point its class leaves in order, padded with -1 (a stable sort puts
        # the class leaves first)
        width = int(self.mask.sum(axis=1).max(initial=0))
        order = np.argsort(~self.mask, axis=1, kind="stable")[:, :width]
        self.point_leaves = np.where(np.take_along_axis(self.mask, order, axis=1), order, -1)
        kinds = {"d": 0, "l": 1}
        self.child_kind = np.array([[kinds[c[0]] for c in pair] for pair in tree.children])
        self.child_index = np.array([[c[1] for c in pair] for pair in tree.children])


class TripleRows:
    """Per decision, the rows of its block (docs/DESIGN.md §3, :mod:`gto.engine._block`): triple rows
    ``s [x', -1]`` with right-hand side 1, then (sparse vertices, docs/DESIGN.md §3b) its
    coordinate rows ``e_j @ theta_d = 0`` (j < n) with right-hand side 0."""

    def __init__(self, tree, data, coordinate_rows=False, alpha=0.0, max_features=None):
        self.triples = t = build_triples(tree, data.y)
        self.T = len(t)
        self.n_theta = tree.n_decisions * data.m
        self.start = t.start
        self.triple_decision = t.decision
        self.alpha = float(alpha)
        self.max_features = None if max_features is None else int(max_features)
        self.n_coord = data.n if coordinate_rows else 0
        D = tree.n_decisions
        self.R = self.T + D * self.n_coord  # rows: triples and coordinate rows
        self.row_start = t.start + self.n_coord * np.arange(D + 1)
        self.row_decision = np.repeat(np.arange(D), np.diff(self.row_start))
        self.rhs, self.row_points, self.row_sides = [], [], []
        self.n_point = np.diff(t.start)  # triples per decision (the first rows of its block)
        self.m = data.m
        self._flat, self._flat_t = np.empty(self.R * self.m), np.empty(self.R * self.m)
        self._view()
        for d in range(D):
            sl = slice(t.start[d], t.start[d + 1])
            coord = np.eye(self.n_coord, data.m)
            rows = np.vstack([t.side[sl, None] * data.X1[t.point[sl]], coord])
            self.rows[d][...] = rows
            self.rows_t[d][...] = rows.T
            self.rhs.append(np.concatenate([np.ones(sl.stop - sl.start), np.zeros(self.n_coord)]))
            self.row_points.append(t.point[sl])
            self.row_sides.append(t.side[sl])
        self.triple_weight = [data.weight[pts] for pts in self.row_points]

    def _view(self):
        """``rows[d]`` and ``rows_t[d]`` (its transpose, C-ordered): views of two buffers
        holding every decision's in turn, the layout a walker's blocks share them in
        (:func:`gto.engine._tabu_loop.adopt_blocks`), so that the walkers' blocks view
        these instead of each making and concatenating copies."""
        m, off = self.m, self.row_start.tolist()
        sizes = np.diff(self.row_start).tolist()
        self.rows = [decision_part(self._flat, off, d, m).reshape(k, m) for d, k in enumerate(sizes)]
        self.rows_t = [decision_part(self._flat_t, off, d, m).reshape(m, k) for d, k in enumerate(sizes)]

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["rows"], state["rows_t"]
        return state

    def __setstate__(self, state):
        """After a copy or unpickling the rows are views of the buffers again, and the
        buffers new float64 arrays (unpickled, as joblib's workers receive them, they
        may be views of the message, and their dtype is another object than numpy's
        float64, for which ``np.ascontiguousarray(rows, dtype=float)`` makes a new
        view): a walker's blocks then hold the problem's very views, with the buffer
        as ``base``, which is how :func:`gto.engine._walker.walker_from_theta` and
        :func:`gto.engine._tabu_loop.adopt_blocks` know them built in place."""
        self.__dict__.update(state)
        for name in ("_flat", "_flat_t"):
            buffer = np.empty(len(state[name]))
            buffer[:] = state[name]
            setattr(self, name, buffer)
        self._view()


def search_bytes(tree, y, m, coordinate_rows=False):
    """Bytes of the search's largest arrays for ``tree`` on points of classes ``y``
    with ``m = n + 1`` scaled columns: the rows of every block, their rates G and
    a transposed copy (3 R m; R rows: each point's triples, one per decision and
    side with a leaf of its class, plus n coordinate rows per decision with sparse
    vertices), the blocks' inverses (D m^2) and the crossover's work arrays
    (3 m^2), the walker's rates and leaf terms per decision and point
    (D N (m + 2 L + 6); L: leaves of a point's class)."""
    D, N = tree.n_decisions, len(y)
    classes, counts = np.unique(y, return_counts=True)
    leaves = tree.leaf_classes
    R, L = 0, 1
    for c, n_c in zip(classes.tolist(), counts.tolist()):
        mine = leaves == c
        sides = tree.sides[mine]
        R += n_c * int((sides < 0).any(axis=0).sum() + (sides > 0).any(axis=0).sum())
        L = max(L, int(mine.sum()))
    R += D * (m - 1) * bool(coordinate_rows)
    return 8 * (3 * R * m + (D + 3) * m * m + D * N * (m + 2 * L + 6))


def check_search_fits(tree, data, coordinate_rows=False):
    """Refuse, by a ValueError, a search of ``tree`` on ``data`` (:class:`PreparedData`)
    whose arrays (:func:`search_bytes`) would not fit in the available memory."""
    check_fits(search_bytes(tree, data.y, data.m, coordinate_rows),
               f"the search of a tree with {tree.n_decisions} decisions on "
               f"{data.N} points and {data.n} features",
               "use a smaller tree (depth), fewer features or fewer points")


class TreeProblem:
    """Validated, merged and scaled data for one tree structure.

    Holds three parts, read by name: ``data`` (:class:`PreparedData`: ``P.data.X1``,
    ``P.data.weight``, ``P.data.N``...), ``layout`` (:class:`Layout`: ``P.layout.D``,
    ``P.layout.mask``...) and ``blocks`` (:class:`TripleRows`: ``P.blocks.rows[d]``,
    ``P.blocks.n_theta``, ``P.blocks.alpha``...); ``p`` is the power on the decision errors.
    """

    def __init__(self, tree, X, y, sample_weight=None, p=1, coordinate_rows=False, alpha=0.0,
                 max_features=None):
        self.data = PreparedData(tree, X, y, sample_weight, coordinate_rows)
        check_search_fits(tree, self.data, coordinate_rows)
        self.layout = Layout(tree, self.data.y)
        self.blocks = TripleRows(tree, self.data, coordinate_rows, alpha, max_features)
        self.p = p

    def penalty(self, Theta):
        """``alpha * sum |w|`` of scaled parameters ``Theta`` (D, n + 1) (docs/DESIGN.md §3b)."""
        return self.blocks.alpha * float(np.abs(np.asarray(Theta)[:, :-1]).sum())

    # -- evaluation ------------------------------------------------------------
    def decision_errors(self, Z):
        return decision_errors(Z, self.p)

    def leaf_errors(self, Z):
        left, right = self.decision_errors(Z)
        return left @ self.layout.SL.T + right @ self.layout.SR.T

    def n_errors(self, Z):
        """Weighted misclassified count under the strict rule (z <= 0 goes left)."""
        return float(self.data.weight @ self.misclassified(np.ascontiguousarray(Z.T)))

    def misclassified(self, Zt):
        """Bool per point from decision values ``Zt`` (D, N): misclassified (strict rule)."""
        return misclassified(Zt, self.layout.child_kind, self.layout.child_index, self.layout.mask)

    def value(self, objective, Theta):
        """The ``objective``'s value (no penalty) at scaled parameters ``Theta`` (D, n + 1)."""
        Z = self.data.X1 @ np.asarray(Theta).T
        return float(self.objective(objective, Z)(self.leaf_errors(Z)))

    def objective(self, name, Z=None):
        """The objective callable; the lexicographic one is scaled at ``Z``."""
        scale = 1.0
        if name == "lexicographic" and Z is not None:
            LE = self.leaf_errors(Z)
            scale = self.data.weight @ np.where(self.layout.mask, LE, np.inf).min(axis=1)
        return Objective(name, self, lex_scale=scale)

    # -- trees -----------------------------------------------------------------
    def theta_of(self, tree):
        """Scaled (D, n + 1) parameters of a tree given in original units.

        Each point keeps the side the tree itself gives it (left iff
        ``x @ w - gamma <= 0``): where the change of units puts a point that lies
        on a hyperplane (a CART threshold equal to a data value) a rounding error
        to the other side, that decision's offset moves to the middle of the gap.
        """
        W, gamma = self.data.scaler.to_scaled(tree.W, tree.gamma)
        Theta = np.column_stack([W, gamma])
        if tree.has_subsets or not self.data.N:
            return Theta
        left = tree.decision_values(self.data.X_points) <= 0
        Z = self.data.X1 @ Theta.T
        for d in range(Theta.shape[0]):
            low = Z[left[:, d], d].max(initial=-np.inf)
            high = Z[~left[:, d], d].min(initial=np.inf)
            if (low > 0 or high <= 0) and low < high and np.isfinite(low + high):
                Theta[d, -1] += (low + high) / 2
        return Theta

    def tree_of(self, Theta, snap=False):
        """The tree in original units for scaled parameters ``Theta``.

        ``snap``: for a tree to return, weights below ``SNAP_TOL`` (scaled units:
        rounding errors at a degenerate vertex) become exact zeros, and
        ``gamma`` rises by ``BOUNDARY_TOL`` so that points a rounding error from
        a hyperplane go left, as the walker counted them.
        """
        Theta = np.array(Theta, dtype=float)
        if snap:
            Theta[:, :-1][np.abs(Theta[:, :-1]) < SNAP_TOL] = 0.0
            Theta[:, -1] += BOUNDARY_TOL
        W, gamma = self.data.scaler.to_original(Theta[:, :-1], Theta[:, -1])
        return Tree(self.layout.structure, self.layout.n_features, W=W, gamma=gamma)
