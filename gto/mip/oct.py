"""Optimal classification trees (Bertsimas & Dunn, 2017): axis-aligned, depth D.

Nodes of the complete depth-D tree are numbered breadth first: branch nodes
``0 .. B-1`` (children ``2t+1``, ``2t+2``), then the ``B + 1`` leaves.  On
data scaled to [0, 1] per feature, branch t has a one-hot ``a_t`` (or all
zero when ``d_t = 0``, no split: every point goes right) and a threshold
``0 <= b_t <= d_t``; a point goes left iff ``x_j < b_t``, written with the
per-feature ``epsilon_j`` (smallest positive gap between sorted distinct
values of feature j) as ``a_t.(x + epsilon) <= b_t``.  Leaves take one class
``c_kt`` when used (``l_t``), hold at least ``n_min`` points, and ``L_t`` is
the number they misclassify.  The objective is ``sum L_t / L_hat +
alpha * sum d_t`` with ``L_hat`` the error of predicting the majority class;
``max_splits`` bounds ``sum d_t``.
"""
from __future__ import annotations

from numbers import Integral, Real

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, validate_params

from ..engine._formulation import merge_duplicates
from ..model.tree import Tree
from ..utils._validation import check_labels, check_sample_weight, check_X
from . import backend
from .result import MIPResult
from .scaling import Scaling


def feature_epsilons(Xs):
    """Per feature the smallest positive gap between sorted distinct values (1 if none)."""
    eps = np.ones(Xs.shape[1])
    for j in range(Xs.shape[1]):
        gaps = np.diff(np.unique(Xs[:, j]))
        if gaps.size:
            eps[j] = gaps.min()
    return eps


def leaves_below(t, n_branch):
    """Leaf positions (0 .. n_branch) in the subtree of node t."""
    nodes = [t]
    while nodes[0] < n_branch:
        nodes = [c for u in nodes for c in (2 * u + 1, 2 * u + 2)]
    return [u - n_branch for u in nodes]


class OCTModel:
    """The cvxpy model of OCT on merged, scaled data."""

    def __init__(self, X, y, weight, depth, alpha, n_min, max_splits):
        self.scaling = Scaling(X)
        self.X, self.Xs, self.y, self.weight = X, self.scaling.transform(X), y, weight
        self.depth, self.alpha, self.n_min, self.max_splits = depth, alpha, n_min, max_splits
        self.classes = np.unique(y)
        self.eps = feature_epsilons(self.Xs)
        self.eps_max = self.eps[~self.scaling.constant].max()
        B, L, N, p, K = 2**depth - 1, 2**depth, len(y), X.shape[1], len(self.classes)
        self.n_branch = B
        counts = np.array([weight[y == k].sum() for k in self.classes])
        self.baseline = weight.sum() - counts.max()
        self.a = cp.Variable((B, p), boolean=True, name="a")
        self.b = cp.Variable(B, name="b")
        self.d = cp.Variable(B, boolean=True, name="d")
        self.z = cp.Variable((N, L), boolean=True, name="z")
        self.l = cp.Variable(L, boolean=True, name="l")
        self.c = cp.Variable((K, L), boolean=True, name="c")
        self.Lt = cp.Variable(L, name="L")
        self.problem = cp.Problem(cp.Minimize(self._objective()), self._constraints(N, L, K))

    def _objective(self):
        return cp.sum(self.Lt) / self.baseline + self.alpha * cp.sum(self.d)

    def _constraints(self, N, L, K):
        B, n = self.n_branch, self.weight.sum()
        a, b, d, z, l, c, Lt = self.a, self.b, self.d, self.z, self.l, self.c, self.Lt
        parent = (np.arange(1, B) - 1) // 2
        cons = [cp.sum(a, axis=1) == d, b >= 0, b <= d, d[1:] <= d[parent]]
        if self.scaling.constant.any():
            cons.append(a[:, self.scaling.constant] == 0)  # nothing to split on
        cons += [z <= np.ones((N, 1)) @ cp.reshape(l, (1, L), order="C")]
        cons += [self.weight @ z >= self.n_min * l, cp.sum(z, axis=1) == 1]
        for m in range(B):
            u_left = cp.sum(z[:, leaves_below(2 * m + 1, B)], axis=1)
            u_right = cp.sum(z[:, leaves_below(2 * m + 2, B)], axis=1)
            value = self.Xs @ a[m]
            cons += [
                value + self.eps @ a[m] <= b[m] + (1 + self.eps_max) * (1 - u_left),
                value >= b[m] - (1 - u_right),
                u_left <= d[m],  # without a split every point goes right
            ]
        Y = (self.y[:, None] == self.classes[None, :]) * self.weight[:, None]  # (N, K)
        Nkt = sp.csr_matrix(Y.T) @ z
        Nt = np.ones((K, 1)) @ cp.reshape(self.weight @ z, (1, L), order="C")
        # big-M n - n_k instead of n: N_t - N_kt never exceeds the weight outside class k
        M = (n - Y.sum(axis=0))[:, None] * np.ones((1, L))
        cons += [
            np.ones((K, 1)) @ cp.reshape(Lt, (1, L), order="C") >= Nt - Nkt - cp.multiply(M, 1 - c),
            Lt >= 0,
            cp.sum(c, axis=0) == l,
        ]
        if self.max_splits is not None:
            cons.append(cp.sum(d) <= self.max_splits)
        return cons

    def routing(self, a, b, d):
        """Leaf position of every point under splits (a, b, d) on scaled data."""
        node = np.zeros(len(self.y), dtype=np.int64)
        for _ in range(self.depth):
            j = np.argmax(a[node], axis=1)
            go_left = (d[node] > 0.5) & (
                self.Xs[np.arange(len(node)), j] + self.eps[j] <= b[node] + 1e-9
            )
            node = np.where(go_left, 2 * node + 1, 2 * node + 2)
        return node - self.n_branch

    def tree_from(self, a, b, d, c):
        """gto.Tree of splits (a, b, d) and leaf classes c, in original units.

        A split on feature j sends ``x_j <= lo_j + span_j (b - epsilon_j / 2)``
        left, which on the training data is ``x_s < b``; a branch without split
        gets ``w = 0, gamma = -1`` (always right).  Empty leaves take the
        majority class of the training points at their nearest nonempty ancestor.
        """
        B, p = self.n_branch, self.X.shape[1]
        leaf = self.routing(a, b, d)
        labels = []
        for k in range(B + 1):
            used = c[:, k] > 0.5
            if used.any():
                labels.append(self.classes[np.argmax(used)])
                continue
            t = B + k
            while True:
                t = (t - 1) // 2
                here = np.isin(leaf, leaves_below(t, B))
                if here.any() or t == 0:
                    break
            w = np.array([self.weight[here & (self.y == cls)].sum() for cls in self.classes])
            labels.append(self.classes[np.argmax(w)])
        W, gamma = [], []

        def build(t):
            if t >= B:
                return labels[t - B].item()
            if d[t] > 0.5:
                j = int(np.argmax(a[t]))
                row = np.zeros(p)
                row[j] = 1.0
                W.append(row)
                gamma.append(self.scaling.lo[j] + self.scaling.span[j] * (b[t] - self.eps[j] / 2))
            else:
                W.append(np.zeros(p))
                gamma.append(-1.0)
            return (build(2 * t + 1), build(2 * t + 2))

        spec = build(0)
        return Tree(spec, p, W=np.array(W), gamma=np.array(gamma))


@validate_params(
    {"X": "no_validation", "y": "no_validation",
     "depth": [Interval(Integral, 1, 8, closed="both")],  # 2^8 leaves: the model's limit
     "alpha": [Interval(Real, 0, None, closed="left")],
     "n_min": [Interval(Integral, 1, None, closed="left")],
     "max_splits": [Interval(Integral, 0, None, closed="left"), None],
     "warm_start": "no_validation", **backend.BUDGET},
    prefer_skip_nested_validation=True,
)
def solve_oct(
    X,
    y,
    depth,
    alpha=0.0,
    n_min=1,
    max_splits=None,
    time_limit=60.0,
    solver=None,
    warm_start="cart",
    *,
    sample_weight=None,
    mip_gap=1e-4,
    verbose=False,
):
    """Optimal classification tree of ``depth`` by MIP (Bertsimas & Dunn 2017).

    Parameters
    ----------
    X, y : training data (any number of classes >= 2); ``sample_weight`` optional.
    depth : int >= 1
    alpha : float >= 0
        Complexity penalty per split; errors enter as a fraction of the baseline.
    n_min : int >= 1
        Minimum number of points in a used leaf.
    max_splits : int, optional
        At most this many splits (the thesis's C).
    warm_start : "cart", None or a fitted sklearn DecisionTreeClassifier
        ``"cart"`` starts from scikit-learn's CART with the same depth, leaf
        size and split budget (HiGHS only; see ``warm_start.py``).

    Returns
    -------
    MIPResult whose ``tree`` is a complete depth-D ``gto.Tree`` (unused
    branches never send a point left); ``n_errors`` is re-evaluated on (X, y);
    ``objective``/``bound`` are in the model's units; ``n_splits`` counts splits.
    """
    from .warm_start import oct_start

    X = check_X(X)
    y = check_labels(y, len(X))
    w = check_sample_weight(sample_weight, len(X))
    depth, n_min = int(depth), int(n_min)
    max_splits = None if max_splits is None else int(max_splits)
    if len(np.unique(y[w > 0])) < 2:
        raise ValueError("y needs at least two classes with positive weight")
    if np.all(X == X[0]):
        raise ValueError("every feature is constant: there is nothing to split on")
    name = backend.check_solver(solver)
    Xm, ym, wm, _ = merge_duplicates(X, y, w)
    keep = wm > 0
    model = OCTModel(Xm[keep], ym[keep], wm[keep], depth, float(alpha), n_min, max_splits)
    start = None if warm_start is None else oct_start(model, warm_start, X, y, w)
    out = backend.run(model.problem, name, time_limit, mip_gap, start, verbose)
    values = out.pop("values")
    tree = n_errors = n_splits = None
    if values is not None:
        tree = model.tree_from(values[model.a], values[model.b], values[model.d], values[model.c])
        n_errors = tree.n_errors(X, y, sample_weight)
        n_splits = int(np.round(values[model.d]).sum())
    return MIPResult(tree=tree, n_errors=n_errors, n_splits=n_splits, success=tree is not None, **out)
