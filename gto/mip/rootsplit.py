"""Branch and bound over root sides for depth-2 oblique trees (DESIGN §7).

Same hypothesis class and problem as :mod:`gto.mip.branch` (decisions
``|w|_inf <= 1`` on data scaled to [0, 1], left ``<= 0``, right ``>= epsilon``),
for trees whose root has two children that are each a leaf or a decision
with two leaves (every depth-2 tree, e.g. the paper's ((0, 1), (0, 1))).

Once the root's side of every point is known the two children decouple:
each is one hyperplane (or a leaf) on its own points, and a point is
correct when its child classifies it.  The search therefore branches on
root sides, not on which point is an error, and bounds the errors each
child must make without naming them:

- a node gives some points a root side (left, right, or "gap": an error
  that the root need not place, the class's values between 0 and epsilon)
  and marks some points of a side as errors of their child ("dropped") or
  as surely correct ("kept");
- the root LP must split the left from the right points with margin
  epsilon (dropped points too: an error of a child still took its root
  side), else the node is infeasible;
- each child's points are split by the largest-margin LP
  (:func:`gto.mip.separation.margin`); when the margin is below epsilon
  its dual support is a set of at most ``n + 2`` points no decision
  splits (Kirchberger), so one of them is an error.  Removing its points
  that are not kept and repeating gives disjoint such sets: the lightest
  point of each adds to the bound (a set of kept points only makes the
  node infeasible);
- the node tree (root and child decisions of the last LPs) is evaluated on
  every point and offered as an incumbent; a node whose tree reaches its
  bound is solved;
- otherwise the search branches on a point without a root side that the
  node tree misclassifies (one child per side where its class has a
  leaf, and one where it is a gap error), or, when there is none, on the
  first unsplittable set ``Q`` of a child: child k drops ``Q[k]`` and
  keeps ``Q[:k]``.

Two strengthenings, both from the same LPs on the points left after the
node's disjoint sets are removed:

- lookahead: a free point that would add an unsplittable set on every side
  its class may take (and that is an error as a gap) adds its lightest
  point of those sets to the bound, which are then removed too;
- propagation: at a node one error below pruning, a side of a free point
  that the root cannot take (root LP) or that adds an unsplittable set is
  closed; a point with one side left takes it (repeated to a fixed point),
  a point with none prunes the node.

Symmetry: when the root's two subtrees are identical (labels included),
mirroring the root (:mod:`gto.mip.branch`) maps every tree to one with the
first branched point on the left, so that point is not offered the right.
Bounds are monotone along the search (a child keeps its parent's bound
when its own packing finds less), so the proven bound is the least over
the open and pruned nodes, as in :class:`gto.mip.branch.Search`.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import separation
from .branch import Search, solve_branch

FREE, LEFT, RIGHT, GAP = -1, 0, 1, 2
LOOKAHEAD = True
PROPAGATE = True


@dataclass
class Part:
    """One child of the root: a decision with leaf classes (left, right), or a leaf."""

    decision: int  # -1 for a leaf
    classes: tuple  # (left class, right class) of a decision, (class,) of a leaf


@dataclass
class SideNode:
    side: np.ndarray  # (N,) FREE, LEFT, RIGHT or GAP
    keep: np.ndarray  # (N,) surely correct in its child
    drop: np.ndarray  # (N,) an error of its child
    errors: float  # the node's lower bound (the name Search.run reads)
    first: bool = True  # no point has a root side yet (the mirror may still apply)


def parts_of(tree):
    """The root's two children as :class:`Part`; ValueError if the tree is not of this shape."""
    parts = []
    for kind, i in tree.children[0]:
        if kind == "l":
            parts.append(Part(-1, (tree.leaf_classes[i].item(),)))
            continue
        grand = tree.children[i]
        if any(k != "l" for k, _ in grand):
            raise ValueError(
                "method='rootsplit' needs a root whose children are leaves or decisions with two "
                f"leaves; got structure {tree.structure!r}")
        parts.append(Part(i, tuple(tree.leaf_classes[k].item() for _, k in grand)))
    return parts


class RootSearch(Search):
    """:class:`gto.mip.branch.Search` with nodes over root sides (module docstring)."""

    name = "rootsplit"

    def root(self, W, gamma):
        """The root node (points whose class has no leaf are gap errors); offers the start."""
        V = self.Xs @ W.T - gamma
        self.offer(W, gamma, float(self.weight[~(self.reach(V) & self.own).any(axis=1)].sum()))
        N = len(self.y)
        side = np.where(self.can.any(axis=1), FREE, GAP).astype(np.int8)
        return SideNode(side, np.zeros(N, dtype=bool), np.zeros(N, dtype=bool),
                        float(self.weight[side == GAP].sum()))

    def __post_init__(self):
        super().__post_init__()
        self.parts = parts_of(self.tree)
        self.can = np.stack([np.isin(self.y, p.classes) for p in self.parts], axis=1)  # (N, 2)
        self.mirrored = any(d == 0 for d, *_ in self.mirror)

    # -- bounds ------------------------------------------------------------------
    def pack(self, s, node):
        """(bound, (w, gamma), sets) of child s, or None when its kept points cannot be split."""
        part = self.parts[s]
        on = np.flatnonzero((node.side == s) & ~node.drop)
        if part.decision < 0:
            return 0.0, None, []
        left = on[self.y[on] == part.classes[0]]
        right = on[self.y[on] == part.classes[1]]
        if part.classes[0] == part.classes[1]:
            left, right = on, on[:0]
        bound, sets = 0.0, []
        while True:
            t, w, gamma, support = separation.margin(self.Xs[left], self.Xs[right], support=True)
            self.lps += 1
            if t >= self.epsilon - separation.TOL:
                return bound, (w, gamma), sets
            pts = np.r_[left, right][support]
            soft = pts[~node.keep[pts]]
            if len(soft) == 0:
                return None
            bound += self.weight[soft].min()
            sets.append(soft)
            left, right = np.setdiff1d(left, soft), np.setdiff1d(right, soft)

    def split_sets(self, s, node, sets):
        """Points of child s left after removing ``sets``, as (left, right) by class."""
        part = self.parts[s]
        on = np.flatnonzero((node.side == s) & ~node.drop)
        if len(sets):
            on = np.setdiff1d(on, np.concatenate(sets))
        if part.decision < 0:
            return None
        if part.classes[0] == part.classes[1]:
            return on, on[:0]
        return on[self.y[on] == part.classes[0]], on[self.y[on] == part.classes[1]]

    def witness(self, rest, s, j, keep):
        """Soft points of an unsplittable set of child s's rest plus free point j, or None."""
        part = self.parts[s]
        if part.decision < 0:
            return None  # j is correct in the leaf of its class
        left, right = rest
        if self.y[j] == part.classes[0]:
            left = np.r_[left, j]
        else:
            right = np.r_[right, j]
        t, _, _, support = separation.margin(self.Xs[left], self.Xs[right], support=True)
        self.lps += 1
        if t >= self.epsilon - separation.TOL:
            return None
        pts = np.r_[left, right][support]
        return pts[~keep[pts]]

    def side_ok(self, side, keep, rest, s, j, bound):
        """Can free point j take root side s without making the node prunable?"""
        left = (side == LEFT) | ((np.arange(len(side)) == j) & (s == LEFT))
        right = (side == RIGHT) | ((np.arange(len(side)) == j) & (s == RIGHT))
        t, _, _ = separation.margin(self.Xs[left], self.Xs[right])
        self.lps += 1
        if t < self.epsilon - separation.TOL:
            return False
        q = self.witness(rest[s], s, j, keep)
        return q is None or (len(q) > 0 and not self.prunable(bound + self.weight[q].min()))

    def propagate(self, node, bound, sets):
        """Root sides after fixing every free point with one side left (None: one has none).

        Only at nodes whose bound is one step below pruning: a side that
        adds an unsplittable set (or a gap error) to such a node is pruned,
        so a point with a single other side must take it.
        """
        free = np.flatnonzero(node.side == FREE)
        if not self.prunable(bound + self.weight[free].min()):
            return node.side
        side = node.side.copy()
        rest = [self.split_sets(s, node, sets) for s in (0, 1)]
        changed = True
        while changed:
            changed = False
            for j in np.flatnonzero(side == FREE):
                ok = [s for s in (LEFT, RIGHT) if self.can[j, s] and self.side_ok(side, node.keep, rest, s, j,
                                                                         bound)]
                if not ok:
                    return None
                if len(ok) == 1:
                    s = ok[0]
                    side[j] = s
                    changed = True
                    if rest[s] is not None:
                        left, right = rest[s]
                        on_left = self.y[j] == self.parts[s].classes[0]
                        rest[s] = (np.r_[left, j], right) if on_left else (left, np.r_[right, j])
        return side

    def lookahead(self, node, candidates, sets):
        """Bound from free points that add an unsplittable set on every side they may take.

        Each such point, with its sets on both sides, is disjoint from the
        sets before it: wherever it goes (or as a gap error) one point of
        them is an error.
        """
        rest = [self.split_sets(s, node, sets) for s in (0, 1)]
        extra = 0.0
        for j in candidates:
            found = []
            for s in (0, 1):
                if not self.can[j, s]:
                    continue
                q = self.witness(rest[s], s, j, node.keep)
                if q is None:
                    break
                found.append((s, q))
            else:
                union = np.unique(np.concatenate([q for _, q in found] + [[j]]))
                extra += self.weight[union].min()
                for s, q in found:
                    rest[s] = tuple(np.setdiff1d(part, q) for part in rest[s])
        return extra

    def evaluate(self, node):
        """(bound, W, gamma, sets) of the node, or None when it is infeasible."""
        t, w0, g0 = separation.margin(self.Xs[node.side == LEFT], self.Xs[node.side == RIGHT])
        self.lps += 1
        if t < self.epsilon - separation.TOL:
            return None
        W = np.zeros((self.tree.n_decisions, self.Xs.shape[1]))
        gamma = np.zeros(self.tree.n_decisions)
        W[0], gamma[0] = w0, g0
        bound = float(self.weight[(node.side == GAP) | node.drop].sum())
        sets = []
        for s, part in enumerate(self.parts):
            out = self.pack(s, node)
            if out is None:
                return None
            b, dec, found = out
            bound += b
            sets += found
            if dec is not None:
                W[part.decision], gamma[part.decision] = dec
        return max(bound, node.errors), W, gamma, sets

    # -- branching ---------------------------------------------------------------
    def expand(self, node):
        out = self.evaluate(node)
        if out is None:
            return []
        bound, W, gamma, sets = out
        V = self.Xs @ W.T - gamma
        correct = (self.reach(V) & self.own).any(axis=1)
        self.offer(W, gamma, float(self.weight[~correct].sum()))
        if self.incumbent <= bound + 1e-9 or self.prunable(bound):
            return []
        free = np.flatnonzero((node.side == FREE) & ~correct)
        if LOOKAHEAD and len(free):
            bound += self.lookahead(node, free, sets)
            if self.prunable(bound):
                return []
        if PROPAGATE and (node.side == FREE).any():
            side = self.propagate(node, bound, sets)
            if side is None:
                self.prunable(np.inf)
                return []
            if (side != node.side).any():
                return [SideNode(side, node.keep, node.drop, bound, node.first and
                                 not np.isin(side, (LEFT, RIGHT)).any())]
        if len(free):
            return self.side_children(node, bound, free, V)
        return self.drop_children(node, bound, sets[0])

    def side_children(self, node, bound, free, V):
        """Children giving the chosen free point each possible root side (best guess last)."""
        j = free[np.argmax(np.abs(V[free, 0]))]
        guess = LEFT if V[j, 0] <= self.epsilon / 2 else RIGHT
        sides = [s for s in (1 - guess, guess) if self.can[j, s]]
        if node.first and self.mirrored:
            sides = [LEFT]
        children = []
        for s in [GAP] + sides:
            side = node.side.copy()
            side[j] = s
            extra = self.weight[j] if s == GAP else 0.0
            children.append(SideNode(side, node.keep, node.drop, bound + extra,
                                     node.first and s == GAP))
        return children

    def drop_children(self, node, bound, Q):
        """Child k drops ``Q[k]`` and keeps ``Q[:k]``: one of an unsplittable set is an error."""
        children = []
        for k, q in enumerate(Q):
            keep, drop = node.keep.copy(), node.drop.copy()
            keep[Q[:k]] = True
            drop[q] = True
            children.append(SideNode(node.side, keep, drop, bound, node.first))
        return children[::-1]


def solve_rootsplit(tree, X, y, time_limit=60.0, warm_start=None, **kwargs):
    """:func:`gto.mip.branch.solve_branch` with :class:`RootSearch` (depth-2 trees only)."""
    parts_of(tree)  # refuse other shapes before any work
    return solve_branch(tree, X, y, time_limit, warm_start, search_class=RootSearch, **kwargs)
