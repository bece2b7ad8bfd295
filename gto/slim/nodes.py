"""Explicit linked nodes for splicing subtrees, and conversion to and from :class:`gto.Tree`.

A :class:`gto.Tree` stores decisions in preorder (W, gamma, subsets) and leaf
labels left to right (docs/DESIGN.md §1); local improvement cuts and re-attaches
subtrees, which is easier on linked nodes.  A point goes left at a hyperplane
decision iff ``x @ w - gamma <= 0``, at a subset decision ``(f, values)`` iff
``x_f`` is one of ``values`` (:mod:`gto.model.tree`).
"""
from __future__ import annotations

import numpy as np

from ..model.tree import Tree


class Node:
    """A decision (``w``, ``gamma`` or ``subset``; ``left``, ``right``) or a leaf
    (``label``).  A subset decision has ``subset = (f, values)`` and ``w`` zero."""

    __slots__ = ("w", "gamma", "left", "right", "label", "subset")

    def __init__(self, w=None, gamma=0.0, left=None, right=None, label=None, subset=None):
        self.w, self.gamma, self.left, self.right, self.label = w, gamma, left, right, label
        self.subset = subset

    @property
    def is_leaf(self):
        return self.left is None

    def goes_left(self, X):
        """Boolean mask of the rows of X sent left (``x @ w - gamma <= 0``, or ``x_f`` in
        the subset)."""
        if self.subset is not None:
            f, values = self.subset
            return np.isin(X[:, f], values)
        return X @ self.w - self.gamma <= 0

    def split_like(self, left, right):
        """A decision with this one's test and the given children."""
        return Node(None if self.w is None else self.w.copy(), self.gamma, left, right,
                    subset=self.subset)

    def copy(self):
        if self.is_leaf:
            return Node(label=self.label)
        return self.split_like(self.left.copy(), self.right.copy())


def from_tree(tree):
    """Linked nodes equal to a :class:`gto.Tree`."""

    def build(child):
        kind, i = child
        if kind == "l":
            return Node(label=tree.leaf_classes[i].item())
        left, right = tree.children[i]
        subset = tree.subsets[i]
        if subset is not None and any(isinstance(v, str) for v in subset[1]):
            raise ValueError(f"tree: subset decision {i} holds strings; gto.slim works on "
                             "numeric X (category codes)")
        return Node(tree.W[i].copy(), float(tree.gamma[i]), build(left), build(right),
                    subset=subset)

    return build(("d", 0))


def to_tree(root, n_features):
    """A :class:`gto.Tree` from linked nodes (decisions in preorder, as Tree numbers them)."""
    if root.is_leaf:
        raise ValueError("the tree is a single leaf: a gto.Tree needs at least one decision")
    W, gamma, subsets = [], [], []

    def build(node):
        if node.is_leaf:
            return node.label
        subsets.append(node.subset)
        W.append(np.zeros(n_features) if node.subset is not None else node.w)
        gamma.append(0.0 if node.subset is not None else node.gamma)
        return (build(node.left), build(node.right))

    spec = build(root)
    return Tree(spec, n_features, W=np.array(W), gamma=np.array(gamma),
                subsets=subsets if any(s is not None for s in subsets) else None)


def height(node):
    """Length of the longest root-to-leaf path below ``node`` (0 for a leaf)."""
    if node.is_leaf:
        return 0
    return 1 + max(height(node.left), height(node.right))


def size(node):
    """Number of nodes (decisions and leaves)."""
    return 1 if node.is_leaf else 1 + size(node.left) + size(node.right)


def n_decisions(node):
    return 0 if node.is_leaf else 1 + n_decisions(node.left) + n_decisions(node.right)


def predict(node, X, rows=None):
    """Labels of the leaves the rows of X reach (a literal walk of the nodes, or its
    result ``rows`` from :func:`rows_by_node` if given)."""
    rows = rows_by_node(node, X) if rows is None else rows
    labels = np.empty(len(X), dtype=object)
    for leaf, _, _ in leaves_with_depth(node):
        labels[rows[id(leaf)]] = leaf.label
    return labels


def is_axis_aligned(node):
    """True when every decision tests one feature: a subset decision, or a w with exactly
    one nonzero, positive (``x_f <= t`` goes left)."""
    if node.is_leaf:
        return True
    one = node.subset is not None or (np.count_nonzero(node.w) == 1 and np.sum(node.w) > 0)
    return one and is_axis_aligned(node.left) and is_axis_aligned(node.right)


def leaves_with_depth(node, depth=0, path=None):
    """List of (leaf, depth, path) with path the list of ancestors from the root."""
    path = [] if path is None else path
    if node.is_leaf:
        return [(node, depth, path)]
    down = path + [node]
    return leaves_with_depth(node.left, depth + 1, down) + leaves_with_depth(
        node.right, depth + 1, down)


def rows_by_node(root, X):
    """Dict ``id(node) -> row indices of X`` reaching it, for every node."""
    out = {}

    def walk(n, rows):
        out[id(n)] = rows
        if not n.is_leaf:
            left = n.goes_left(X[rows])
            walk(n.left, rows[left])
            walk(n.right, rows[~left])

    walk(root, np.arange(len(X)))
    return out


def heights_by_node(root):
    """Dict ``id(node) -> height`` for every node."""
    out = {}

    def walk(n):
        out[id(n)] = 0 if n.is_leaf else 1 + max(walk(n.left), walk(n.right))
        return out[id(n)]

    walk(root)
    return out


def replace(root, old, new):
    """The tree with the subtree at ``old`` replaced by ``new`` (in place; returns the root)."""
    if root is old:
        return new
    stack = [root]
    while stack:
        n = stack.pop()
        if n.is_leaf:
            continue
        if n.left is old:
            n.left = new
            return root
        if n.right is old:
            n.right = new
            return root
        stack += [n.left, n.right]
    raise ValueError("node to replace is not in the tree")


def decisions(root):
    """Decision nodes in breadth-first order."""
    out, queue = [], [root]
    while queue:
        n = queue.pop(0)
        if not n.is_leaf:
            out.append(n)
            queue += [n.left, n.right]
    return out


def prune_empty(node, X):
    """Replace each decision that sends none of the rows of X one way by its other child.

    The rows reach the same leaves as before, so their predictions are kept.
    """
    if node.is_leaf or len(X) == 0:
        return node
    left = node.goes_left(X)
    if not left.any():
        return prune_empty(node.right, X)
    if left.all():
        return prune_empty(node.left, X)
    node.left = prune_empty(node.left, X[left])
    node.right = prune_empty(node.right, X[~left])
    return node
