"""Optimal decision trees on categorical data (Günlük et al. 2021, model (8)).

Every feature is a *group* g of 0/1 columns J(g), one per value (categorical
columns) or per decile bin (numeric columns, paper §4.4); ``a_ij = 1`` when
point i has value j.  At decision k the model picks one group (``v_gk``,
eq. 1) and a set of its values (``z_jk <= v_{g(j)k}``, eq. 2); a point goes
left when its value is in the set, ``L(i, k) = sum_j a_ij z_jk`` (eq. 3,
Proposition 1: 0 or 1), right when ``R = 1 - L`` (eq. 4).  ``c_ib`` says that
point i reaches leaf b and is correct there; the leaf classes are fixed (any
number of classes), so ``c_ib`` exists only where leaf b has i's class
(§4.3.3, "deleting unnecessary variables": the others do not enter the
objective).  The model minimises the (weighted) number of points with no
``c_ib = 1``, i.e. maximises (8a) with C = 1 (or per-point weights).

Strengthening and reduction (all on by default, each a keyword of
:func:`solve_odt` so its effect can be measured):

- ``strengthen`` (§4.3.1, eq. 11-12): for each point i and decision k, the
  sum of ``c_ib`` over the leaves b below k's left branch is ``<= L(i, k)``
  (likewise right with R).  Valid: the leaves of one branch are disjoint
  destinations, so at most one of those c is 1, and none when i does not go
  that way.  It replaces the per-leaf rows ``c_ib <= L(i, k)`` (eq. 5-6) and
  makes ``sum_b c_ib <= 1`` (eq. 7) redundant.
- ``anchor`` (§4.3.2, eq. 13): at a decision whose two subtrees are
  identical (structure and leaf classes), the first value of the chosen
  group goes left: ``z_{j(g)k} = v_gk``.  Valid: complementing the value
  set at k and swapping the two subtrees gives the same classifier, so
  every tree has an equivalent one that meets the rule.  Also valid with
  max_card (the complement of an allowed set is allowed) and with ordinal
  groups (the complement of a suffix is a prefix).
- ``relax`` (§4.3.4, Proposition 3): ``v`` is continuous, and so is ``z`` at
  decisions whose two children are leaves of different classes; ``c`` is
  always continuous (§4.3.3).  Valid for the plain model because every
  extreme point of its relaxation is integral in these variables
  (Proposition 3).  The side constraints below (ordinal, max_card, TPR/TNR)
  are outside that proposition, so with any of them only ``c`` is relaxed
  (its integrality never matters: it is bounded by 0/1 routing terms and
  only counted in the objective or in a ``>=`` constraint).

Side constraints: ordinal groups branch only by ``<=``/``>=`` thresholds
(§4.4: ``z_j >= z_{j+1} - w_gk``, ``z_j >= z_{j-1} - (1 - w_gk)``);
``max_card`` limits a categorical value set to at most ``max_card`` values
or all but ``max_card`` (§4.5); ``min_tpr``/``min_tnr`` bound the training
sensitivity/specificity (§4.6, eq. 15-16).

The fitted tree is read from the incumbent (group ``argmax v``, values with
``z > 1/2``), built on the original columns (a categorical decision is a
subset test ``colour in {red, blue}``, an ordinal one a threshold
``x <= t``), and ``n_errors`` is counted on the original data with that tree.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from numbers import Integral, Real

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import Interval, StrOptions, validate_params

from ..model._categorical import NOMINAL, ORDINAL, encode
from ..model.tree import Tree
from ..utils._validation import check_labels, check_sample_weight, leaf_class_points
from . import backend
from .oblique import mirror_pairs
from .result import MIPResult


def as_structure_tree(structure, classes):
    """A :class:`gto.Tree` (n_features 1) of the given structure.

    ``structure`` is nested pairs, a ``gto.Tree`` (its structure) or an int
    depth (a complete tree whose leaves cycle through the classes).
    """
    if isinstance(structure, Tree):
        return Tree(structure.structure, 1)
    if isinstance(structure, Integral) and not isinstance(structure, bool):
        if 2**structure < len(classes):
            raise ValueError(
                f"a complete tree of depth {structure} has fewer leaves than the {len(classes)} classes"
            )
        return Tree.complete(int(structure), classes, 1)
    if isinstance(structure, (tuple, list)):
        return Tree(structure, 1)
    raise TypeError(f"structure must be nested pairs, a gto.Tree or an int depth, got {structure!r}")


def cart_groups(encoding, A, y, w, depth):
    """Groups used by a CART tree on the one-hot data (feature selection, paper §5.2).

    The paper runs CART (depth 3) first and lets ODT branch only on the
    features CART used; here CART is scikit-learn's, of depth max(3, depth).
    """
    from sklearn.tree import DecisionTreeClassifier

    cart = DecisionTreeClassifier(max_depth=max(3, depth), random_state=0).fit(A, y, sample_weight=w)
    used = np.unique(cart.tree_.feature[cart.tree_.feature >= 0])
    group_of = np.concatenate([np.full(len(g), k) for k, g in enumerate(encoding.groups)])
    groups = np.unique(group_of[used]).tolist()
    return groups or [0]


@dataclass
class ODTModel:
    """The cvxpy model (8) with its options, on merged points (``A`` one-hot rows)."""

    tree: Tree  # structure and leaf classes
    encoding: object
    groups: list  # indices of the groups that may be branched on
    A: np.ndarray  # (N, J) one-hot rows of the merged points (all groups)
    y: np.ndarray
    weight: np.ndarray
    max_card: int = None
    min_tpr: float = None
    min_tnr: float = None
    positive: object = None
    strengthen: bool = True
    anchor: bool = True
    relax: bool = True
    problem: cp.Problem = field(init=False)

    def __post_init__(self):
        tree, enc = self.tree, self.encoding
        K = tree.n_decisions
        self.cols = [enc.groups[g] for g in self.groups]  # encoded columns per selected group
        self.kinds = [enc.columns[g].kind for g in self.groups]
        sizes = [len(c) for c in self.cols]
        self.offsets = np.concatenate([[0], np.cumsum(sizes)])
        J, G = int(self.offsets[-1]), len(self.groups)
        self.Ag = self.A[:, np.concatenate(self.cols)]  # (N, J) columns of the selected groups
        member = np.zeros((J, G))
        for g in range(G):
            member[self.offsets[g] : self.offsets[g + 1], g] = 1
        self.mirror = mirror_pairs(tree)
        mirrored = {d for d, *_ in self.mirror}
        children = tree.children
        leaf_pair = [
            l[0] == "l" and r[0] == "l" and tree.leaf_classes[l[1]] != tree.leaf_classes[r[1]]
            for l, r in children
        ]
        self.side_constraints = bool(
            any(k == ORDINAL for k in self.kinds) or self.max_card is not None
            or self.min_tpr is not None or self.min_tnr is not None
        )
        relax = self.relax and not self.side_constraints
        self.v = [cp.Variable(G, boolean=not relax, name=f"v{k}") for k in range(K)]
        self.z = [cp.Variable(J, boolean=not (relax and leaf_pair[k]), name=f"z{k}") for k in range(K)]
        self.c_point, self.c_leaf = np.nonzero(self.y[:, None] == tree.leaf_classes[None, :])
        self.c = cp.Variable(len(self.c_point), name="c")
        cons = [self.c >= 0, self.c <= 1]
        for k in range(K):
            cons += [self.v[k] >= 0, self.v[k] <= 1, self.z[k] >= 0, cp.sum(self.v[k]) == 1,
                     self.z[k] <= member @ self.v[k]]  # eq. (1), (2)
        cons += self._routing()
        if self.anchor:  # eq. (13)
            first = self.offsets[:-1]
            for k in sorted(mirrored):
                cons.append(self.z[k][first] == self.v[k])
        self.w_ord = self._ordinal(cons)
        self.w_card = self._max_card(cons)
        wc = self.weight[self.c_point]
        correct = wc @ self.c
        total = self.weight.sum()
        if self.min_tpr is not None or self.min_tnr is not None:
            pos = self.y[self.c_point] == self.positive
            w_pos = self.weight[self.y == self.positive].sum()
            w_neg = self.weight[self.y != self.positive].sum()
            integral = np.allclose(self.weight, np.round(self.weight))
            for rate, mask, mass in ((self.min_tpr, pos, w_pos), (self.min_tnr, ~pos, w_neg)):
                if rate is not None:
                    need = rate * mass
                    need = math.ceil(need - 1e-9) if integral else need
                    cons.append((wc * mask) @ self.c >= need)  # eq. (15)
            if self.min_tnr is None:  # maximise specificity (eq. 16 mirrored)
                objective = w_neg - (wc * ~pos) @ self.c
            elif self.min_tpr is None:  # maximise sensitivity (eq. 16)
                objective = w_pos - (wc * pos) @ self.c
            else:
                objective = total - correct
        else:
            objective = total - correct
        self.problem = cp.Problem(cp.Minimize(objective), cons)

    def _routing(self):
        """Eq. (11)-(12) (``strengthen``) or eq. (5)-(6) per leaf."""
        tree, cons = self.tree, []
        sides = tree.sides  # (n_leaves, K)
        N = len(self.y)
        for k in range(tree.n_decisions):
            L = self.Ag @ self.z[k]  # (N,) L(i, k), eq. (3)
            for s in (-1, 1):
                on = np.flatnonzero(sides[self.c_leaf, k] == s)  # c entries on side s of k
                if not on.size:
                    continue
                rhs = L if s < 0 else 1 - L
                if self.strengthen:
                    pts, rows = np.unique(self.c_point[on], return_inverse=True)
                    S = sp.csr_matrix((np.ones(on.size), (rows.ravel(), on)), shape=(len(pts), len(self.c_point)))
                    cons.append(S @ self.c <= rhs[pts])
                else:
                    P = sp.csr_matrix((np.ones(on.size), (np.arange(on.size), self.c_point[on])), shape=(on.size, N))
                    cons.append(self.c[on] <= P @ rhs)
        return cons

    def _ordinal(self, cons):
        """§4.4: the value set of an ordinal group is a prefix (w = 0) or a suffix (w = 1)."""
        ords = [g for g, kind in enumerate(self.kinds) if kind == ORDINAL and len(self.cols[g]) > 1]
        if not ords:
            return None
        K = self.tree.n_decisions
        w = cp.Variable((K, len(ords)), boolean=True, name="w_ord")
        for k in range(K):
            for t, g in enumerate(ords):
                j = np.arange(self.offsets[g], self.offsets[g + 1])
                z = self.z[k]
                cons += [z[j[:-1]] >= z[j[1:]] - w[k, t], z[j[1:]] >= z[j[:-1]] - (1 - w[k, t])]
        self.ordinal_groups = ords
        return w

    def _max_card(self, cons):
        """§4.5: at most ``max_card`` or at least ``|J(g)| - max_card`` values go left."""
        if self.max_card is None:
            return None
        big = [g for g, kind in enumerate(self.kinds) if kind == NOMINAL and len(self.cols[g]) > self.max_card]
        if not big:
            return None
        K, m = self.tree.n_decisions, self.max_card
        w = cp.Variable((K, len(big)), boolean=True, name="w_card")
        for k in range(K):
            for t, g in enumerate(big):
                n = len(self.cols[g])
                s = cp.sum(self.z[k][self.offsets[g] : self.offsets[g + 1]])
                cons += [s <= m + (n - m) * (1 - w[k, t]), s >= (n - m) * (1 - w[k, t])]
        self.card_groups = big
        return w

    # -- reading and writing solutions -------------------------------------
    def choices(self, values):
        """Per decision (selected-group index, bool mask of its values going left)."""
        out = []
        for k in range(self.tree.n_decisions):
            g = int(np.argmax(values[self.v[k]]))
            z = np.asarray(values[self.z[k]])[self.offsets[g] : self.offsets[g + 1]] > 0.5
            out.append((g, z))
        return out

    def tree_of(self, choices, n_features):
        """The fitted :class:`gto.Tree` on the original columns."""
        K = self.tree.n_decisions
        W, gamma, subsets = np.zeros((K, n_features)), np.zeros(K), [None] * K
        for k, (g, left) in enumerate(choices):
            col = self.encoding.columns[self.groups[g]]
            if col.kind == NOMINAL:
                subsets[k] = (col.index, tuple(col.values[left].tolist()))
                continue
            W[k], gamma[k] = _threshold(col, left, n_features)
        return Tree(self.tree.structure, n_features, W=W, gamma=gamma, subsets=subsets)

    def start(self, choices):
        """Complete assignment ``{Variable: value}`` of given (group, value mask) choices.

        ValueError when the choices break a side constraint of the model.
        """
        K = self.tree.n_decisions
        choices = list(choices)
        if self.anchor:  # complement and swap mirrored subtrees top-down (same classifier)
            for d, ld, rd, _, _ in self.mirror:
                g, left = choices[d]
                if not left[0]:
                    choices[d] = (g, ~left)
                    for a, b in zip(ld, rd):
                        choices[a], choices[b] = choices[b], choices[a]
        start = {}
        J = int(self.offsets[-1])
        Lk = np.zeros((len(self.y), K), dtype=bool)
        for k, (g, left) in enumerate(choices):
            v = np.zeros(len(self.groups))
            v[g] = 1.0
            z = np.zeros(J)
            z[self.offsets[g] : self.offsets[g + 1]] = left
            start[self.v[k]], start[self.z[k]] = v, z
            Lk[:, k] = self.Ag @ z > 0.5
        if self.w_ord is not None:
            start[self.w_ord] = _indicator(self.w_ord.shape, self.ordinal_groups, 0.0, choices,
                                           self._direction)
        if self.w_card is not None:
            start[self.w_card] = _indicator(self.w_card.shape, self.card_groups, 1.0, choices,
                                            self._small)
        sides = self.tree.sides[self.c_leaf]  # (nc, K)
        went_left = Lk[self.c_point]
        ok = np.where(sides < 0, went_left, np.where(sides > 0, ~went_left, True)).all(axis=1)
        start[self.c] = ok.astype(float)
        if self.positive is not None:
            pos = self.y[self.c_point] == self.positive
            mass = self.weight[self.c_point] * start[self.c]
            for rate, mask, arg in ((self.min_tpr, pos, "min_tpr"), (self.min_tnr, ~pos, "min_tnr")):
                total = self.weight[(self.y == self.positive) == (arg == "min_tpr")].sum()
                if rate is not None and mass[mask].sum() < rate * total - 1e-9:
                    raise ValueError(f"warm_start breaks {arg} = {rate} on the training data")
        return start


    @staticmethod
    def _direction(k, left):
        """w of §4.4: 0 for a prefix of bins going left, 1 for a suffix."""
        if _is_prefix(left):
            return 0.0
        if _is_prefix(left[::-1]):
            return 1.0
        raise ValueError(f"warm_start: decision {k} is not a threshold on an ordinal feature")

    def _small(self, k, left):
        """w of §4.5: 1 when at most max_card values go left, 0 when all but max_card."""
        n, s = len(left), int(left.sum())
        if s <= self.max_card:
            return 1.0
        if s >= n - self.max_card:
            return 0.0
        raise ValueError(f"warm_start: decision {k} sends {s} values left, breaking max_card")


def _indicator(shape, groups, fill, choices, rule):
    """Start values of a per-(decision, group) binary: ``rule`` where the group is chosen."""
    w = np.full(shape, fill)
    for k, (g, left) in enumerate(choices):
        if g in groups:
            w[k, groups.index(g)] = rule(k, left)
    return w


def _is_prefix(mask):
    """True when ``mask`` is 1...10...0 (possibly all ones or all zeros)."""
    return not np.any(np.diff(mask.astype(int)) > 0)


def _threshold(col, left, n_features):
    """Hyperplane of an ordinal decision: prefix -> ``x <= edge``, suffix -> ``x >= edge``."""
    w = np.zeros(n_features)
    if left.all():
        return w, 0.0  # 0 <= 0: every point left
    if not left.any():
        return w, -1.0  # 0 - (-1) > 0: every point right
    if _is_prefix(left):
        t = int(np.flatnonzero(left)[-1])
        w[col.index] = 1.0
        return w, float(col.edges[t])
    if _is_prefix(left[::-1]):
        t = int(np.flatnonzero(left)[0])
        w[col.index] = -1.0
        return w, -float(col.edges[t - 1])
    raise RuntimeError("an ordinal decision is neither a prefix nor a suffix of bins")


def _choices_of_tree(model, start, X_raw):
    """(group, value mask) per decision of a start tree, from its routing of the training data.

    A decision is representable when every value of some selected group sends
    all of its training points one way; the group of the decision's own
    feature is tried first.
    """
    if not isinstance(start, Tree):
        raise TypeError(f"warm_start must be a gto.Tree, got {type(start).__name__}")
    if start.structure != model.tree.structure:
        raise ValueError(
            f"warm_start has structure {start.structure!r}, the model needs {model.tree.structure!r}"
        )
    left_all = start.decision_values(X_raw) <= 0  # (N_raw, K)
    codes = model.raw_codes  # (N_raw, n_groups_total) value index per original column
    out = []
    for k in range(start.n_decisions):
        own = None
        if start.subsets[k] is not None:
            own = start.subsets[k][0]
        elif np.count_nonzero(start.W[k]) == 1:
            own = int(np.flatnonzero(start.W[k])[0])
        order = sorted(range(len(model.groups)), key=lambda g: model.groups[g] != own)
        for g in order:
            col = codes[:, model.groups[g]]
            n = len(model.cols[g])
            n_left = np.bincount(col, weights=left_all[:, k], minlength=n)
            n_all = np.bincount(col, minlength=n)
            if np.all((n_left == 0) | (n_left == n_all)):
                out.append((g, n_left > 0))
                break
        else:
            raise ValueError(
                f"warm_start decision {k} does not split the training data by one feature's values"
            )
    return out


def build(X, y, structure, categorical_features="all", max_card=None, ordinal=(), min_tpr=None,
          min_tnr=None, *, sample_weight=None, feature_selection=None, n_bins=10, strengthen=True,
          anchor=True, relax=True):
    """Validate the arguments of :func:`solve_odt` and build its :class:`ODTModel`
    on the points merged by (codes, label)."""
    enc = encode(X, categorical_features, ordinal, bin_numeric=True, n_bins=n_bins)
    A = enc.transform(X)
    codes = enc.codes(X)
    y = check_labels(y, len(A))
    w = check_sample_weight(sample_weight, len(A))
    classes = np.unique(y)
    if len(classes) < 2:
        raise ValueError(f"y has one class only ({classes[0]!r}); a tree needs at least two")
    shape = as_structure_tree(structure, classes)
    # a point whose class has no leaf has no c (eq. 8): an error whatever the splits,
    # counted by the objective's total; two classes must have leaves
    _, leafless = leaf_class_points(shape, y, None if sample_weight is None else w,
                                    searched=True)
    positive = None
    if min_tpr is not None or min_tnr is not None:
        if len(classes) != 2:
            raise ValueError("min_tpr / min_tnr need binary labels")
        positive = classes[1]
    groups = list(range(enc.n_features))
    if feature_selection == "cart":
        groups = cart_groups(enc, A, y, w, _depth(shape))
    # merge points with equal codes and label (same routing in every tree)
    key = np.column_stack([codes, np.searchsorted(classes, y)])
    uniq, inverse = np.unique(key, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    wm = np.bincount(inverse, weights=w)
    first = np.zeros(len(uniq), dtype=np.int64)
    first[inverse[::-1]] = np.arange(len(inverse))[::-1]
    keep = wm > 0
    model = ODTModel(
        shape, enc, groups, A[first][keep], y[first][keep], wm[keep], max_card=max_card,
        min_tpr=min_tpr, min_tnr=min_tnr, positive=positive, strengthen=bool(strengthen),
        anchor=bool(anchor), relax=bool(relax),
    )
    model.raw_codes, model.classes, model.sample_weight, model.y_raw = codes, classes, w, y
    model.leafless = leafless
    return model


@validate_params(
    {"X": "no_validation", "y": "no_validation", "structure": "no_validation",
     "categorical_features": [str, "array-like", None],  # "auto", "all", a name, names...
     "max_card": [Interval(Integral, 1, None, closed="left"), None],
     "ordinal": ["array-like"],
     "min_tpr": [Interval(Real, 0, 1, closed="both"), None],
     "min_tnr": [Interval(Real, 0, 1, closed="both"), None],
     "warm_start": "no_validation",
     "feature_selection": [StrOptions({"cart"}), None],
     "n_bins": [Interval(Integral, 2, None, closed="left")],
     "strengthen": ["boolean"], "anchor": ["boolean"], "relax": ["boolean"], **backend.BUDGET},
    prefer_skip_nested_validation=True,
)
def solve_odt(X, y, structure, time_limit=300.0, categorical_features="all", max_card=None,
              ordinal=(), min_tpr=None, min_tnr=None, warm_start=None, solver=None, *,
              sample_weight=None, feature_selection=None, n_bins=10, strengthen=True,
              anchor=True, relax=True, mip_gap=1e-4, verbose=False):
    """Optimal fixed-structure tree on categorical data by the integer program (8).

    Parameters
    ----------
    X : array (category codes or strings) or DataFrame.
    y : labels (any number of classes; the leaves' classes are fixed).
    structure : nested pairs (leaves are class labels), a gto.Tree or an int
        depth (complete tree, leaves cycling through the sorted classes).  A
        structure may leave classes of y without a leaf (two must have leaves):
        their points are errors whatever the splits, counted in ``n_errors``,
        ``objective`` and ``bound`` (``leafless_errors``: their weight).
    time_limit : seconds for the solver; the incumbent is returned at the end.
    categorical_features : "all" (default), "auto", a mask, or column
        indices/names; the other columns are binned by deciles into ordinal
        groups (§4.4).
    max_card : int, optional; categorical decisions send at most ``max_card``
        or all but ``max_card`` values left (§4.5).
    ordinal : categorical columns with ordered codes, branched on by
        thresholds only (§4.4).
    min_tpr, min_tnr : float in [0, 1], optional; training sensitivity /
        specificity bounds (§4.6, binary ``y``; the positive class is the
        larger label).  With only ``min_tpr`` the objective is the number of
        misclassified negatives (maximise TNR), with only ``min_tnr`` the
        misclassified positives, with both the total.
    warm_start : gto.Tree on the original columns (subset or one-feature
        decisions, e.g. the GTO ``one_group`` tree); HiGHS only.
    solver : cvxpy MIP solver name, HiGHS by default.
    sample_weight : per-point weights (the objective's C of (8a) per point).
    feature_selection : None or "cart" (branch only on the features a CART
        tree uses, paper §5.2).
    n_bins : quantile bins per numeric column (10: deciles).
    strengthen, anchor, relax : the model improvements of §4.3 (module docstring).
    mip_gap : relative gap at which the solver stops as optimal.

    Returns
    -------
    MIPResult (as :func:`gto.mip.solve`): ``tree`` (subset / threshold
    decisions on the original columns), ``n_errors`` (counted with that tree
    on X), ``objective``, ``bound``, ``gap``, ``status``, times; plus
    ``encoding`` (the fitted :class:`gto.model._categorical.Encoding`), ``groups``
    (original columns the model could branch on), ``tpr``/``tnr`` on the
    training data (binary y), ``leafless_errors``.
    """
    name = backend.check_solver(solver)
    model = build(X, y, structure, categorical_features, max_card, ordinal, min_tpr, min_tnr,
                  sample_weight=sample_weight, feature_selection=feature_selection, n_bins=n_bins,
                  strengthen=strengthen, anchor=anchor, relax=relax)
    enc, classes, w, groups = model.encoding, model.classes, model.sample_weight, model.groups
    y = model.y_raw
    start = None
    if warm_start is not None:
        choices = _choices_of_tree(model, warm_start, X)
        start = model.start(choices)
    out = backend.run(model.problem, name, time_limit, mip_gap, start, verbose)
    values = out.pop("values")
    fitted, n_errors, rates = None, None, {}
    if values is not None:
        fitted = model.tree_of(model.choices(values), enc.n_features)
        n_errors = fitted.n_errors(X, y, sample_weight)
        counts_errors = min_tpr is None and min_tnr is None
        if counts_errors and n_errors > out["objective"] + 1e-6:  # a fractional incumbent rounded
            out["objective"] = float(n_errors)
            out["gap"] = backend.gap(float(n_errors), out["bound"])
        if len(classes) == 2:
            pred = fitted.predict(X)
            pos = y == classes[1]
            rates = {"tpr": float(w[pos & (pred == y)].sum() / w[pos].sum()),
                     "tnr": float(w[~pos & (pred == y)].sum() / w[~pos].sum())}
    return MIPResult(tree=fitted, n_errors=n_errors, success=fitted is not None, encoding=enc,
                     groups=[enc.columns[g].name for g in groups], leafless_errors=model.leafless,
                     **rates, **out)


def _depth(tree):
    return int(max(np.abs(tree.sides).sum(axis=1)))
