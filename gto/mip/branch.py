"""Branch and bound over point-to-leaf assignments for a fixed oblique tree (DESIGN §7).

Hypothesis class (the same as :mod:`gto.mip.oblique`'s MIP): on data scaled
to [0, 1] per feature, decision d is ``(w_d, gamma_d)`` with
``|w_d|_inf <= 1``; a point goes left when ``x.w_d - gamma_d <= 0`` and right
when ``>= epsilon``; a point is correct when it reaches a leaf of its class
this way (values strictly between 0 and epsilon reach nothing).  Minimise the
(weighted) number of points that are not correct.

Given which correct point ends in which leaf, the decisions decouple: each
must split the points assigned below its left child from those below its
right child, one small LP (:func:`gto.mip.separation.margin`).  The search
fixes points one at a time:

- a node fixes some points to a leaf of their class and some as errors; its
  bound is the weight of the errors.  It carries a tree (its "node tree")
  that respects every fixed point, fitted by LPs that also pull the free
  points towards the sides where the tree would classify them
  (:func:`gto.mip.separation.fit`);
- free points the node tree classifies need no decision: if there is none
  else, the node tree is the best completion and the node is closed;
- every free point the node tree misclassifies gets its options checked by
  LP: a leaf whose path cannot take the point beside the fixed ones is
  banned for the whole subtree (constraints only grow); a point with no
  option left is an error in every completion (a forced error, added to
  the bound);
- the search branches on the free misclassified point with the fewest
  options: one child per option and one where it is an error.

Symmetry: at a decision whose two subtrees are identical (labels included)
and below which no point is fixed, sending a point into the right subtree
mirrors sending it into the left one (map ``(w, gamma) -> (-w, -gamma -
epsilon)`` and swap the subtrees), so only the left options are branched on.

Nodes are explored depth first with the incumbent (a warm start, the node
trees) pruning every node whose bound reaches it.  The proven bound at any
time is the least bound over the open nodes; with integer weights a node
is pruned once its bound exceeds ``incumbent - 1``.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from . import result as R
from . import separation

#: a point is on a side when its value clears the side's bound to this much
#: (twice the LP tolerance: node trees come out of LPs)
SIDE_TOL = 2 * separation.TOL


@dataclass
class Node:
    leaf: np.ndarray  # (N,) leaf of a fixed correct point, ERROR, or FREE
    banned: np.ndarray  # (N, K) options proven impossible in this subtree
    W: np.ndarray
    gamma: np.ndarray
    errors: float  # weight fixed as errors: the node's bound
    stale: tuple = ()  # decisions to refit before use


FREE, ERROR = -1, -2


@dataclass
class Search:
    """State of one branch and bound on scaled, merged data."""

    tree: object  # gto.Tree: structure and leaf classes
    Xs: np.ndarray
    y: np.ndarray
    weight: np.ndarray
    epsilon: float
    mirror: list  # oblique.mirror_pairs(tree)
    deadline: float = np.inf
    clock: object = time.perf_counter
    mip_gap: float = 0.0
    floor: float = 0.0  # a bound known before the search (conflicting duplicates)
    verbose: bool = False
    incumbent: float = np.inf
    best: tuple = None  # (W, gamma) of the incumbent
    history: list = field(default_factory=list)
    nodes: int = 0
    lps: int = 0
    pruned: float = np.inf  # least bound of a pruned node

    def __post_init__(self):
        S = self.tree.sides
        self.S = S
        self.own = self.y[:, None] == self.tree.leaf_classes[None, :]
        self.integral = bool(np.all(self.weight == np.round(self.weight)))
        self.depth_of = _decision_depths(self.tree)
        self.t0 = self.clock()

    name = "branch"  # the result's ``solver``

    def root(self, W, gamma):
        """The root node, its tree the start's scaled decisions."""
        N, K = len(self.y), self.tree.n_leaves
        return Node(np.full(N, FREE), np.zeros((N, K), dtype=bool), W, gamma, 0.0)

    # -- the node tree ---------------------------------------------------------
    def reach(self, V):
        """(N, K): point i meets every side of leaf k's path with margin."""
        S = self.S[None, :, :]
        v = V[:, None, :]
        ok = (S == 0) | ((S < 0) & (v <= SIDE_TOL)) | ((S > 0) & (v >= self.epsilon - SIDE_TOL))
        return ok.all(axis=2)

    def hard_sets(self, leaf, d):
        fixed = leaf >= 0
        side = np.zeros(len(leaf), dtype=np.int8)
        side[fixed] = self.S[leaf[fixed], d]
        return np.flatnonzero(side < 0), np.flatnonzero(side > 0)

    def desired(self, V, leaf, d):
        """Free points that reach d and whose class the node tree finds on one side only."""
        S = self.S
        below = (S != 0) & (self.depth_of[None, :] > self.depth_of[d])  # (K, D)
        v = V[:, None, :]
        sat = (~below[None]) | ((S < 0) & (v <= SIDE_TOL)) | ((S > 0) & (v >= self.epsilon - SIDE_TOL))
        ok = sat.all(axis=2) & self.own  # (N, K)
        left_ok = ok[:, S[:, d] < 0].any(axis=1)
        right_ok = ok[:, S[:, d] > 0].any(axis=1)
        anc = _ancestor_sides(S, self.depth_of, d)
        reaches = np.ones(len(V), dtype=bool)
        for a in np.flatnonzero(anc):
            reaches &= (V[:, a] > self.epsilon / 2) == (anc[a] > 0)
        free = (leaf == FREE) & reaches
        return np.flatnonzero(free & left_ok & ~right_ok), np.flatnonzero(free & right_ok & ~left_ok)

    def refit(self, node):
        """Refit the node's stale decisions; False when one cannot split its fixed points."""
        W, gamma = node.W.copy(), node.gamma.copy()
        for d in node.stale:
            V = self.Xs @ W.T - gamma
            hl, hr = self.hard_sets(node.leaf, d)
            sl, sr = self.desired(V, node.leaf, d)
            soft_w = self.weight[np.r_[sl, sr]]
            out = separation.fit(self.Xs[hl], self.Xs[hr], self.Xs[sl], self.Xs[sr], soft_w,
                                 self.epsilon)
            self.lps += 1
            if out is None:
                return False
            W[d], gamma[d] = out
        node.W, node.gamma, node.stale = W, gamma, ()
        return True

    # -- options of a free point -------------------------------------------------
    def feasible(self, node, V, j, k, hard):
        """Can point j end in leaf k beside the node's fixed points?  LPs where the tree fails."""
        for d in np.flatnonzero(self.S[k]):
            s = self.S[k, d]
            if (s < 0 and V[j, d] <= SIDE_TOL) or (s > 0 and V[j, d] >= self.epsilon - SIDE_TOL):
                continue
            hl, hr = hard[d]
            hl, hr = (np.r_[hl, j], hr) if s < 0 else (hl, np.r_[hr, j])
            self.lps += 1
            t, _, _ = separation.margin(self.Xs[hl], self.Xs[hr])
            if t < self.epsilon - separation.TOL:
                return False
        return True

    def allowed(self, leaf):
        """(K,) leaves a branch may use: right subtrees of empty mirror pairs are left out."""
        ok = np.ones(self.tree.n_leaves, dtype=bool)
        used = np.unique(leaf[leaf >= 0])
        for _, _, _, left_leaves, right_leaves in self.mirror:
            if not np.isin(used, left_leaves + right_leaves).any():
                ok[right_leaves] = False
        return ok

    # -- one node ----------------------------------------------------------------
    def prunable(self, bound):
        """No completion of a node with this bound can beat the incumbent (within ``mip_gap``)."""
        limit = self.incumbent - 1 + 1e-9 if self.integral else self.incumbent - 1e-9
        if bound > limit or bound >= (1 - self.mip_gap) * self.incumbent:
            self.pruned = min(self.pruned, bound)
            return True
        return False

    def proven(self, open_bounds):
        """Least bound over open and pruned nodes: the proven bound on the optimum."""
        low = min([self.incumbent, self.pruned] + list(open_bounds))
        if self.integral:
            low = np.ceil(low - 1e-9)
        return float(min(max(low, self.floor), self.incumbent)) + 0.0

    def scan(self, node, V, candidates):
        """Options of each candidate by LP; candidates without one become forced errors.

        Returns the node's assignment, bans and errors after the forced errors,
        and ``{point: options}`` of the candidates left free.
        """
        hard = [self.hard_sets(node.leaf, d) for d in range(self.tree.n_decisions)]
        leaf, banned, errors = node.leaf.copy(), node.banned.copy(), node.errors
        options = {}
        for j in candidates:
            opts = []
            for k in np.flatnonzero(self.own[j] & ~banned[j]):
                if self.feasible(node, V, j, k, hard):
                    opts.append(k)
                else:
                    banned[j, k] = True
            if opts:
                options[j] = opts
            else:
                leaf[j] = ERROR
                errors += self.weight[j]
        return leaf, banned, errors, options

    def expand(self, node):
        """Children of ``node`` (best option last), after closing or pruning it.

        A free point with one option whose error alternative would be pruned
        is fixed to that option in place (unit propagation): all such points
        at once make one child, refitted; an infeasible joint fix prunes it.
        """
        if node.stale and not self.refit(node):
            return []
        V = self.Xs @ node.W.T - node.gamma
        correct = (self.reach(V) & self.own).any(axis=1)
        self.offer(node.W, node.gamma, float(self.weight[~correct].sum()))
        candidates = np.flatnonzero((node.leaf == FREE) & ~correct)
        if len(candidates) == 0 or self.prunable(node.errors):
            return []
        leaf, banned, errors, options = self.scan(node, V, candidates)
        if not options or self.prunable(errors):
            return []  # pruned, or every misclassified free point is a forced error
        forced = [j for j, opts in options.items()
                  if len(opts) == 1 and self.prunable(errors + self.weight[j])]
        if forced:
            leaf[forced] = [options[j][0] for j in forced]
            stale = np.flatnonzero(self.S[leaf[forced]].any(axis=0))
            return [Node(leaf, banned, node.W, node.gamma, errors, tuple(stale))]
        choice = min(options, key=lambda j: len(options[j]))
        allowed = self.allowed(leaf)
        e_leaf = leaf.copy()
        e_leaf[choice] = ERROR
        children = [Node(e_leaf, banned, node.W, node.gamma, errors + self.weight[choice])]
        for k in options[choice]:
            if allowed[k]:
                k_leaf = leaf.copy()
                k_leaf[choice] = k
                children.append(Node(k_leaf, banned.copy(), node.W, node.gamma, errors,
                                     tuple(np.flatnonzero(self.S[k]))))
        return children

    def offer(self, W, gamma, errors):
        if errors < self.incumbent - 1e-9:
            self.incumbent, self.best = errors, (W.copy(), gamma.copy())
            self.record(None)

    def record(self, bound):
        t = self.clock() - self.t0
        b = self.history[-1][2] if bound is None and self.history else bound
        b = max(self.floor, 0.0) if b is None else b
        self.history.append((t, self.incumbent, b))
        if self.verbose:
            print(f"{t:9.2f}s  incumbent {self.incumbent:g}  bound {b:g}  nodes {self.nodes}  "
                  f"LPs {self.lps}")

    # -- the loop ----------------------------------------------------------------
    def run(self, root):
        stack = [root]
        bound = self.proven([0.0])
        status, message = R.OPTIMAL, "search tree exhausted"
        try:
            while stack:
                if self.nodes and self.clock() > self.deadline:  # the root gives an incumbent
                    status, message = R.TIME_LIMIT, "time limit reached"
                    break
                node = stack.pop()
                self.nodes += 1
                if self.prunable(node.errors):
                    continue
                stack.extend(self.expand(node))
                low = self.proven(n.errors for n in stack)
                if low > bound:
                    bound = low
                    self.record(bound)
        except KeyboardInterrupt:
            status, message = R.INTERRUPTED, "interrupted"
        bound = self.proven(n.errors for n in stack)
        self.record(bound)
        return status, message, bound


def _decision_depths(tree):
    depth = np.zeros(tree.n_decisions, dtype=int)
    for d, pair in enumerate(tree.children):
        for kind, i in pair:
            if kind == "d":
                depth[i] = depth[d] + 1
    return depth


def _ancestor_sides(S, depth, d):
    """(D,) side at each ancestor of decision d on the way to it, 0 elsewhere."""
    k = np.flatnonzero(S[:, d])[0]
    return np.where(depth < depth[d], S[k], 0)


def _start(tree, X, y, w, warm_start, scaling, Xs, epsilon):
    """Scaled decisions of the warm start, or of the greedy LP tree (paper §6) without one."""
    from ..engine._problem import TreeProblem
    from ..engine._starts import greedy_theta
    from .warm_start import scaled_start

    if warm_start is None:
        problem = TreeProblem(tree, X, y, w)
        warm_start = problem.tree_of(greedy_theta(problem, rng=0))
    return scaled_start(warm_start, tree, scaling, Xs, epsilon)


def duplicate_floor(Xs, y, weight):
    """Equal points with different labels reach the same leaf: all but one class are errors.

    Returns the sum over groups of equal points of (group weight - heaviest
    class's weight), a bound valid for every tree.
    """
    _, group = np.unique(Xs, axis=0, return_inverse=True)
    group = group.reshape(-1)
    _, label = np.unique(y, return_inverse=True)
    per_class = np.zeros((group.max() + 1, label.max() + 1))
    np.add.at(per_class, (group, label.reshape(-1)), weight)
    return float((per_class.sum(axis=1) - per_class.max(axis=1)).sum())


def solve_branch(tree, X, y, time_limit=60.0, warm_start=None, *, sample_weight=None,
                 epsilon=None, mip_gap=0.0, verbose=False, clock=time.perf_counter,
                 search_class=None):
    """Minimum (weighted) misclassified count of ``tree``'s structure, by branch and bound.

    Same hypothesis class and arguments as :func:`gto.mip.solve` (see the
    module docstring); ``clock`` measures ``time_limit`` (``time.process_time``
    budgets CPU seconds).  ``search_class`` is :class:`Search` (branching on
    point-to-leaf assignments) or a subclass with its own nodes
    (:class:`gto.mip.rootsplit.RootSearch`).  Without a warm start the
    search starts from the greedy LP tree.  Returns a
    :class:`gto.mip.MIPResult` whose ``history`` lists ``(seconds,
    incumbent, bound)`` at every change and whose ``nodes`` and ``lps``
    count the work.
    """
    from .backend import gap as _gap
    from .fixed import EPSILON, mirror_pairs, prepare, scaled_tree

    cls = Search if search_class is None else search_class
    epsilon = EPSILON if epsilon is None else epsilon
    X, y, w, _, Xs, ym, wm, scaling = prepare(tree, X, y, sample_weight, epsilon)
    t0 = clock()
    W, gamma = _start(tree, X, y, w, warm_start, scaling, Xs, float(epsilon))
    search = cls(tree, Xs, ym, wm, float(epsilon), mirror_pairs(tree), clock=clock,
                 deadline=np.inf if time_limit is None else t0 + float(time_limit),
                 mip_gap=float(mip_gap), floor=duplicate_floor(Xs, ym, wm), verbose=verbose)
    search.t0 = t0
    root = search.root(W, gamma)
    status, message, bound = search.run(root)
    runtime = clock() - t0
    W, gamma = search.best
    fitted = scaled_tree(tree, scaling, W, gamma, epsilon)
    incumbents = [(t, inc) for t, inc, _ in search.history]
    incumbents = [p for i, p in enumerate(incumbents) if i == 0 or p[1] < incumbents[i - 1][1]]
    return R.MIPResult(
        tree=fitted, n_errors=fitted.n_errors(X, y, sample_weight), success=True,
        objective=search.incumbent, bound=bound, gap=_gap(search.incumbent, bound),
        status=status, message=message, time_to_first=incumbents[0][0],
        time_to_best=incumbents[-1][0], incumbents=incumbents, runtime=runtime,
        start_objective=incumbents[0][1], solver=search.name,
        history=search.history,
        nodes=search.nodes, lps=search.lps,
    )
