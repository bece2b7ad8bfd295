"""Exact MIP for a fixed-structure oblique tree (docs/DESIGN.md §7).

The model, on data scaled to [0, 1] per feature (``Scaling``):

- decision d has weights ``-1 <= w_d <= 1`` and threshold ``-n <= gamma_d <= n``;
- a point i of class c takes one of its class's leaves (``z_ik = 1``) or is an
  error (``e_i = 1``): ``sum_k z_ik + e_i = 1``;
- for each (point, decision, side) triple, ``u = sum of z_ik`` over the
  class-c leaves on that side; u = 1 forces ``x_i.w_d - gamma_d <= 0`` (left)
  or ``>= epsilon`` (right) through a big-M;
- minimise ``sum_i weight_i e_i``, the weighted misclassified count.

Hypothesis class.  Any tree splits the points the same way after dividing
each (w_d, gamma_d) by a positive constant, so the weight bounds lose
nothing; the margin does: a split is representable only if its right-going
points clear ``epsilon`` after that normalisation (``|w|_inf <= 1``,
``|gamma| <= n``).  The MIP's class is therefore slightly smaller than
"any oblique tree" and its optimum is exact for that class.

Choice of ``epsilon`` (default 1e-3, scaled units where ``x.w - gamma``
ranges over [-2n, 2n]).  Larger excludes more splits; smaller lets solver
tolerances blur the strict side: HiGHS accepts violations of 1e-6 in a row
and in integrality, i.e. up to about ``1e-6 * (1 + 2n)`` in a decision
value.  The returned tree puts its threshold in the middle of the margin
(``gamma + epsilon / 2``), so both sides stay ``epsilon / 2`` clear of 0
and the strict rule on the original data reproduces the MIP's routing;
the result's ``n_errors`` is re-evaluated there regardless.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Real

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..engine._formulation import build_triples
from ..model.tree import Tree
from ..utils._validation import check_fit_data, leaf_class_points
from . import backend
from .fixed import EPSILON, mirror_pairs, prepare, scaled_tree
from .result import MIPResult
from .scaling import Scaling


@dataclass
class ObliqueModel:
    """The cvxpy model of one tree on merged, scaled data."""

    tree: Tree
    X: np.ndarray  # merged data, original units
    Xs: np.ndarray  # merged data, scaled
    y: np.ndarray
    weight: np.ndarray
    scaling: Scaling
    epsilon: float
    tighten: bool
    w: cp.Variable = field(init=False)  # (D * n,), row d is w_d
    gamma: cp.Variable = field(init=False)
    z: cp.Variable = field(init=False)
    e: cp.Variable = field(init=False)
    problem: cp.Problem = field(init=False)

    def __post_init__(self):
        tree, N = self.tree, len(self.y)
        D, n = tree.n_decisions, tree.n_features
        self.mirror_pairs = mirror_pairs(tree)
        self.z_point, self.z_leaf = np.nonzero(self.y[:, None] == tree.leaf_classes[None, :])
        self.w = cp.Variable(D * n, name="w")
        self.gamma = cp.Variable(D, name="gamma")
        self.z = cp.Variable(len(self.z_point), boolean=True, name="z")
        self.e = cp.Variable(N, name="e")
        cons = [self.w >= -1, self.w <= 1, self.gamma >= -n, self.gamma <= n, self.e >= 0, self.e <= 1]
        route = sp.csr_matrix(
            (np.ones(len(self.z_point)), (self.z_point, np.arange(len(self.z_point)))),
            shape=(N, len(self.z_point)),
        )
        cons.append(route @ self.z + self.e == 1)
        cons += self._side_constraints()
        if self.tighten:
            cons += self.conflict_cuts() + self.symmetry_cuts()
        self.problem = cp.Problem(cp.Minimize(self.weight @ self.e), cons)

    def _side_constraints(self):
        """Big-M side constraints, one per (point, decision, side) triple.

        Valid big-M: x_s in [0, 1]^n, |w| <= 1 and |gamma| <= n give
        ``|x_i.w - gamma| <= ||x_i||_1 + n =: M_i``.  Using the aggregate
        ``u = sum of z over the leaves on that side`` instead of one row per
        leaf is valid because at most one z of a point is 1, and it is
        tighter in the LP relaxation (u >= each of its z).
        """
        t = build_triples(self.tree, self.y)
        n = self.tree.n_features
        T = len(t)
        # u = U @ z: z of leaf k counts for triple (i, d, s) when k's path has side s at d
        index = -np.ones((len(self.y), self.tree.n_decisions, 2), dtype=np.int64)
        index[t.point, t.decision, (t.side + 1) // 2] = np.arange(T)
        rows, cols = [], []
        sides = self.tree.sides
        for d in range(self.tree.n_decisions):
            on = sides[self.z_leaf, d] != 0
            j = np.flatnonzero(on)
            rows.append(index[self.z_point[j], d, (sides[self.z_leaf[j], d] + 1) // 2])
            cols.append(j)
        U = sp.csr_matrix(
            (np.ones(sum(map(len, rows))), (np.concatenate(rows), np.concatenate(cols))),
            shape=(T, len(self.z_point)),
        )
        B = sp.csr_matrix(
            (
                self.Xs[t.point].ravel(),
                (np.repeat(np.arange(T), n), (t.decision[:, None] * n + np.arange(n)).ravel()),
            ),
            shape=(T, self.tree.n_decisions * n),
        )
        P = sp.csr_matrix((np.ones(T), (np.arange(T), t.decision)), shape=(T, self.tree.n_decisions))
        value = B @ self.w - P @ self.gamma
        M = np.abs(self.Xs[t.point]).sum(axis=1) + n
        u = U @ self.z
        left, right = t.side < 0, t.side > 0
        self.triples = t
        return [
            value[left] <= cp.multiply(M[left], 1 - u[left]),
            value[right] >= self.epsilon - cp.multiply(M[right] + self.epsilon, 1 - u[right]),
        ]

    def conflict_cuts(self):
        """Points with equal x and different labels: at most one is correct.

        Valid because equal points reach the same leaf, which has one class:
        ``sum over the group of e_i >= size - 1``.
        """
        _, group = np.unique(self.X, axis=0, return_inverse=True)
        group = group.reshape(-1)
        counts = np.bincount(group)
        cuts = []
        for g in np.flatnonzero(counts > 1):
            members = np.flatnonzero(group == g)
            cuts.append(cp.sum(self.e[members]) >= len(members) - 1)
        return cuts

    def symmetry_cuts(self):
        """At a decision with identical subtrees, the left one serves at least as much weight.

        Valid: if a solution routes more weight right than left at d, map
        ``(w_d, gamma_d) -> (-w_d, -gamma_d - epsilon)``, swap the hyperplanes
        of the two subtrees and the z of mirrored leaves (same classes).
        Values become ``epsilon - v``, so ``v <= 0`` turns into ``>= epsilon``
        and back: every constraint holds and the objective is unchanged;
        the new gamma is within [-n, n] because some routed point has
        ``v >= epsilon``, so ``gamma <= n - epsilon``.  Applying the map top-down
        satisfies every cut, since a flip at d leaves the weights on each side
        of its ancestors unchanged.
        """
        wz = self.weight[self.z_point]
        cuts = []
        for _, _, _, left_leaves, right_leaves in self.mirror_pairs:
            on_left = np.isin(self.z_leaf, left_leaves)
            on_right = np.isin(self.z_leaf, right_leaves)
            cuts.append(wz[on_left] @ self.z[on_left] >= wz[on_right] @ self.z[on_right])
        return cuts

    def tree_from(self, w, gamma):
        """The tree in original units of scaled ``(w, gamma)``, threshold mid-margin."""
        return scaled_tree(self.tree, self.scaling, w, gamma, self.epsilon)


def build(tree, X, y, sample_weight=None, epsilon=EPSILON, tighten=True):
    """Validate the data and build the :class:`ObliqueModel` on merged, scaled points."""
    _, _, _, Xm, Xs, ym, wm, scaling = prepare(tree, X, y, sample_weight, epsilon)
    return ObliqueModel(tree, Xm, Xs, ym, wm, scaling, float(epsilon), tighten)


@validate_params(
    {"tree": "no_validation", "X": "no_validation", "y": "no_validation",
     "warm_start": "no_validation", "epsilon": [Interval(Real, 0, 1, closed="right")],
     "tighten": ["boolean"], "method": [StrOptions({"mip", "branch", "rootsplit"})],
     **backend.BUDGET},
    prefer_skip_nested_validation=True,
)
def solve(
    tree,
    X,
    y,
    time_limit=60.0,
    warm_start=None,
    solver=None,
    mip_gap=1e-4,
    *,
    sample_weight=None,
    epsilon=EPSILON,
    tighten=True,
    verbose=False,
    method="mip",
):
    """Minimum (weighted) misclassified count of ``tree``'s structure, by MIP.

    Parameters
    ----------
    tree : gto.Tree
        Structure and leaf classes to fit; its W and gamma are not used.
    X, y : training data; ``sample_weight`` optional.
    time_limit : float or None
        Seconds; the best incumbent is returned when it runs out.
    warm_start : gto.Tree or fitted sklearn DecisionTreeClassifier, optional
        A tree of the same structure; it becomes a complete feasible
        assignment given to the solver (HiGHS only, see ``warm_start.py``).
    solver : str, optional
        Any installed cvxpy MIP solver; HiGHS by default.
    mip_gap : float
        Relative gap at which the solver stops as optimal.
    epsilon : float
        Margin for the right side on scaled data (see the module docstring).
    tighten : bool
        Add the conflict and symmetry-breaking cuts (both valid).
    method : {"mip", "branch", "rootsplit"}
        ``"mip"``: the big-M model above on ``solver``.  ``"branch"``: branch
        and bound over point-to-leaf assignments with HiGHS LPs
        (:mod:`gto.mip.branch`), same hypothesis class, optimum and result
        fields, plus ``history`` (seconds, incumbent, bound); ``solver`` must
        be HiGHS and ``tighten`` does not apply.  ``"rootsplit"``: branch and
        bound over the root's sides with bounds from sets of points no
        hyperplane splits (:mod:`gto.mip.rootsplit`; trees of depth 2 only),
        otherwise as ``"branch"``.

    Returns
    -------
    MIPResult with ``tree`` re-evaluated on (X, y): ``n_errors`` is the
    strict-rule count of the returned tree on the original data.  Points of a
    class with no leaf in the tree are errors whatever the splits: the solver
    runs on the others, and ``n_errors``, ``objective``, ``bound`` (so ``gap``)
    count them too (``leafless_errors``: their weight).
    """
    from .warm_start import oblique_start

    name = backend.check_solver(solver)
    if isinstance(tree, Tree):  # else prepare's TypeError below
        checked = check_fit_data(tree, X, y, sample_weight, leafless=True)
        if not np.isin(checked[1], tree.leaf_classes).all():  # errors whatever the splits
            def again(Xk, yk, wk):
                return solve(tree, Xk, yk, time_limit, warm_start, solver, mip_gap,
                             sample_weight=wk, epsilon=epsilon, tighten=tighten,
                             verbose=verbose, method=method)
            return _solve_leaf_classes(again, tree, checked, sample_weight)
    if method != "mip":
        from .branch import solve_branch
        from .rootsplit import solve_rootsplit

        if name != "HIGHS":
            raise ValueError(f"method={method!r} solves its LPs with HiGHS, not solver={solver!r}")
        run = solve_branch if method == "branch" else solve_rootsplit
        res = run(tree, X, y, time_limit, warm_start, sample_weight=sample_weight,
                  epsilon=epsilon, mip_gap=mip_gap, verbose=verbose)
        res.leafless_errors = 0
        return res
    model = build(tree, X, y, sample_weight, epsilon, tighten)
    start = None if warm_start is None else oblique_start(model, warm_start)
    out = backend.run(model.problem, name, time_limit, mip_gap, start, verbose)
    values = out.pop("values")
    fitted = None
    n_errors = None
    if values is not None:
        fitted = model.tree_from(values[model.w], values[model.gamma])
        n_errors = fitted.n_errors(X, y, sample_weight)
    return MIPResult(tree=fitted, n_errors=n_errors, success=fitted is not None, leafless_errors=0,
                     **out)


def _solve_leaf_classes(again, tree, checked, sample_weight):
    """:func:`solve` (``again``) on the points whose class has a leaf in ``tree``.  A
    point of a class without a leaf has no triple (DESIGN §2): it is misclassified by
    every tree of this structure, a constant of the objective.  The result's
    ``n_errors``, ``objective``, ``bound``, ``start_objective``, ``incumbents`` and
    ``history`` count those points too (``leafless_errors``: their weight), ``gap`` is
    recomputed from them (the solver stopped on the other points' gap), and the tree
    records all the training data."""
    X, y, w = checked
    has_leaf, lost = leaf_class_points(tree, y, None if sample_weight is None else w,
                                       searched=True)
    res = again(X[has_leaf], y[has_leaf], None if sample_weight is None else w[has_leaf])
    res.leafless_errors = lost
    for key in ("objective", "bound", "start_objective"):
        if res.get(key) is not None:
            res[key] = res[key] + lost
    if res.get("incumbents") is not None:
        res.incumbents = [(t, value + lost) for t, value in res.incumbents]
    if res.get("history") is not None:
        res.history = [(t, value + lost, bound + lost) for t, value, bound in res.history]
    if res.get("gap") is not None:
        res.gap = backend.gap(res.objective, res.bound)
    if res.tree is not None:
        res.tree.record_training(X, y, None if sample_weight is None else w)
        res.n_errors = res.tree.n_errors(X, y, None if sample_weight is None else w)
    return res

