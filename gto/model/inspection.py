"""Looking inside a fitted tree, as with scikit-learn's trees (docs/DESIGN.md §9, §9b).

``export_text``, ``plot_tree``, depth, leaves, decision paths, feature
importances and pruning of decisions that send every training point the
same way.  Weights are read in original units (``gto.optimize`` folds its
internal scaling back into the tree, docs/DESIGN.md §9b).

One formatter writes a decision for the text, the DOT export and the
picture: :func:`format_decision`.  A hyperplane prints only the features it
uses: exact zeros and round-off (``|w_j| <= ROUND_OFF * max(|w|, |gamma|)``)
are left out, and a one-feature decision reads as a threshold
(``age <= 54.5``).
"""
from __future__ import annotations

import textwrap

import numpy as np
import scipy.sparse as sp

#: a weight at or below this fraction of the decision's largest |w_j| or |gamma|
#: is round-off and is not printed (docs/DESIGN.md §9)
ROUND_OFF = 1e-9


# -- the tree behind a model ------------------------------------------------------
def tree_of(model):
    """The :class:`gto.Tree` of a Tree or a fitted ``GTOClassifier``."""
    if hasattr(model, "children") and hasattr(model, "W"):
        return model
    tree = getattr(model, "tree_", None)
    if tree is not None and hasattr(tree, "children"):
        return tree
    raise TypeError(f"expected a gto.Tree or a fitted GTOClassifier, got {type(model).__name__}")


def feature_names_of(model, feature_names=None):
    """``feature_names``, else the model's own names, else ``x0, x1, ...``."""
    tree = tree_of(model)
    if feature_names is None and tree is not model:  # an estimator: the columns its tree reads
        try:
            feature_names = getattr(model, "tree_feature_names_", None)
        except Exception:  # noqa: BLE001 (not fitted: the checks below say so)
            feature_names = None
    if feature_names is None:
        for source in (model, tree):
            names = getattr(source, "feature_names_in_", None)
            names = getattr(source, "feature_names", None) if names is None else names
            if names is not None:
                feature_names = names
                break
    if feature_names is None:
        return [f"x{j}" for j in range(tree.n_features)]
    names = [str(f) for f in feature_names]
    if len(names) != tree.n_features:
        raise ValueError(f"feature_names: need {tree.n_features} names, got {len(names)}")
    return names


# -- one formatter for text, DOT and pictures -------------------------------------
def used_features(w, gamma=0.0, rtol=ROUND_OFF):
    """Indices of the weights that are neither zero nor round-off."""
    w = np.asarray(w, dtype=float)
    scale = max(float(np.max(np.abs(w), initial=0.0)), abs(float(gamma)))
    return np.flatnonzero(np.abs(w) > rtol * scale)


def _number(value, precision):
    return f"{value:.{precision}g}"


def format_hyperplane(w, gamma, names, precision=3, rtol=ROUND_OFF):
    """``w·x <= gamma`` over the used features only, e.g. ``0.5*age - bp <= 3``.

    With one used feature the decision reads as a threshold on it (dividing
    by its weight, flipping the sign when the weight is negative); with none
    it is the constant test ``0 <= gamma``, printed as what it is: ``True``
    (every point goes left) or ``False`` (every point goes right).
    """
    used = used_features(w, gamma, rtol)
    if len(used) == 0:
        return "True" if gamma >= 0 else "False"
    if len(used) == 1:
        j = used[0]
        op = "<=" if w[j] > 0 else ">="
        return f"{names[j]} {op} {_number(gamma / w[j], precision)}"
    parts = []
    for j in used:
        coef = _number(abs(w[j]), precision)
        term = names[j] if coef == "1" else f"{coef}*{names[j]}"
        sign = "-" if w[j] < 0 else "+"
        parts.append((f"-{term}" if sign == "-" else term) if not parts else f"{sign} {term}")
    return f"{' '.join(parts)} <= {_number(gamma, precision)}"


def printable(text):
    """``text`` with control, format and line/paragraph separator characters
    escaped (``\\n``, ``\\x1b``, ``\\u2028``), so a name cannot start a new line
    or forge the lines of a text rendering; other text is kept as it is."""
    text = str(text)
    if all(c.isprintable() for c in text):
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
                   for c in text)


def _format_value(v):
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return printable(v)


def subset_text(tree, d, names):
    """``name in {a, b}`` for subset decision ``d`` (the text, the DOT export and plot_tree);
    an empty set is the constant test ``False`` (every point goes right)."""
    f, values = tree.subsets[d]
    if len(values) == 0:
        return "False"
    return f"{names[f]} in {{{', '.join(_format_value(v) for v in values)}}}"


def format_decision(tree, d, names, precision=3):
    """The test of decision ``d`` (what a point must satisfy to go left): a hyperplane
    over the used features, or a subset test ``name in {a, b}`` (:func:`subset_text`)."""
    if getattr(tree, "subsets", None) is not None and tree.subsets[d] is not None:
        return subset_text(tree, d, names)
    return format_hyperplane(tree.W[d], tree.gamma[d], names, precision)


# -- structure ------------------------------------------------------------------
def nodes(tree):
    """All nodes in preorder (scikit-learn's numbering): ``(kind, index, depth, parent)``.

    ``kind`` is "d" (decision ``index``) or "l" (leaf ``index``); ``parent``
    is the parent's node id (-1 at the root).
    """
    out = []

    def walk(child, depth, parent):
        node_id = len(out)
        out.append((child[0], child[1], depth, parent))
        if child[0] == "d":
            for c in tree.children[child[1]]:
                walk(c, depth + 1, node_id)

    walk(("d", 0), 0, -1)
    return out


def get_depth(tree):
    """Length of the longest root-to-leaf path (a single decision has depth 1)."""
    return int(np.abs(tree.sides).sum(axis=1).max())


def decision_path(tree, X):
    """(n_samples, n_nodes) CSR indicator of the nodes each sample visits (preorder ids)."""
    leaf = tree.apply(X)
    all_nodes = nodes(tree)
    column = {(kind, i): c for c, (kind, i, _, _) in enumerate(all_nodes)}
    D = tree.n_decisions
    dec_cols = np.array([column["d", d] for d in range(D)])
    leaf_cols = np.array([column["l", k] for k in range(tree.n_leaves)])
    on_path = tree.sides[leaf] != 0  # (n, D)
    rows, dec = np.nonzero(on_path)
    r = np.concatenate([rows, np.arange(len(leaf))])
    c = np.concatenate([dec_cols[dec], leaf_cols[leaf]])
    M = sp.csr_matrix((np.ones(len(r), dtype=np.int64), (r, c)), shape=(len(leaf), len(all_nodes)))
    M.sort_indices()
    return M


def node_samples(tree, X, sample_weight=None):
    """(D, 2) training weight sent left and right by each decision (0 off a point's path)."""
    leaf = tree.apply(X)
    w = np.ones(len(leaf)) if sample_weight is None else np.asarray(sample_weight, dtype=float)
    side = tree.sides[leaf]  # (n, D): -1 left, +1 right, 0 not reached
    return np.column_stack([w @ (side < 0), w @ (side > 0)])


def recorded_counts(tree):
    """(D, 2) training weight each decision sent left and right, from the per-leaf
    class counts the model keeps (``leaf_counts``, :meth:`gto.Tree.record_training`);
    None for a bare tree.  The same as :func:`node_samples` on the training data."""
    counts = getattr(tree, "leaf_counts", None)
    if counts is None:
        return None
    totals = np.asarray(counts, dtype=float).sum(axis=1)  # (K,) training weight per leaf
    return np.column_stack([totals @ (tree.sides < 0), totals @ (tree.sides > 0)])


def training_counts(model, X=None, sample_weight=None):
    """(D, 2) weight sent left and right by each decision: on ``X`` if given, else
    the training data's (a GTOClassifier's ``n_node_samples_``, else the model's
    recorded leaf counts); None if none of them is at hand."""
    if X is not None:
        return node_samples(tree_of(model), X, sample_weight)
    counts = getattr(model, "n_node_samples_", None)
    return counts if counts is not None else recorded_counts(tree_of(model))


def constant_decisions(counts):
    """Decisions that send every point reaching them one way: (index, "left"/"right", weight)."""
    out = []
    for d, (left, right) in enumerate(np.asarray(counts)):
        if left > 0 and right == 0:
            out.append((d, "left", left))
        elif right > 0 and left == 0:
            out.append((d, "right", right))
    return out


def constant_flags(model, X=None, sample_weight=None):
    """``{d: "constant: all N training points go right"}`` for the decisions that send
    every training point one way (:func:`training_counts`); the one wording of the
    text, DOT and picture."""
    counts = training_counts(model, X, sample_weight)
    if counts is None:
        return {}
    return {d: f"constant: all {n:g} training points go {side}"
            for d, side, n in constant_decisions(counts)}


def feature_importances(tree, X, sample_weight=None, groups=None):
    """Normalised importance of each feature in ``tree`` on data ``X``.

    A decision d reached by a share ``r_d`` of the (weighted) points spreads
    ``r_d`` over its features in proportion to ``|w_dj| * std_j`` (the
    weight on the standardised feature); a subset test gives all of it to
    its feature.  The sums over decisions are normalised to 1 (all zeros
    when no decision uses a feature).  ``groups`` (a list of column-index
    arrays, e.g. ``Encoding.groups`` of one-hot columns) adds the columns of
    each group up into one importance per group (per input column).
    """
    counts = node_samples(tree, X, sample_weight)
    reach = counts.sum(axis=1) / max(counts[0].sum(), 1e-300)
    values = X.to_numpy(dtype=object) if hasattr(X, "to_numpy") else np.asarray(X)
    contribution = np.zeros((tree.n_decisions, tree.n_features))
    subsets = getattr(tree, "subsets", None) or [None] * tree.n_decisions
    for d in range(tree.n_decisions):
        if subsets[d] is not None:
            contribution[d, subsets[d][0]] = 1.0
            continue
        used = used_features(tree.W[d], tree.gamma[d])
        spread = np.asarray(values[:, used], dtype=float).std(axis=0)
        contribution[d, used] = np.abs(tree.W[d, used]) * spread
    totals = contribution.sum(axis=1, keepdims=True)
    share = np.divide(contribution, totals, out=np.zeros_like(contribution), where=totals > 0)
    importance = reach @ share
    if groups is not None:
        importance = np.array([importance[np.asarray(g, dtype=int)].sum() for g in groups])
    total = importance.sum()
    return importance / total if total > 0 else importance


def prune(tree, X=None):
    """The smaller tree with the same predictions on ``X`` (default: the training data,
    through the recorded leaf counts, :func:`training_counts`).

    A decision that sends every point of ``X`` reaching it one way is
    replaced by that child; a decision whose two children are leaves of one
    class is replaced by the leaf.  The root stays a decision (a tree has at
    least one).
    """
    counts = training_counts(tree, X)
    if counts is None:
        raise ValueError("X: give the data to prune on (this tree has no recorded training "
                         "counts)")
    W, gamma = [], []

    def build(child):
        kind, i = child
        if kind == "l":
            return ("l", tree.leaf_classes[i].item())
        left, right = tree.children[i]
        if counts[i, 1] == 0 and counts[i, 0] > 0:
            return build(left)
        if counts[i, 0] == 0 and counts[i, 1] > 0:
            return build(right)
        return ("d", i, build(left), build(right))

    def same_leaves(node):
        if node[0] == "d":
            a, b = same_leaves(node[2]), same_leaves(node[3])
            if a[0] == "l" and b[0] == "l" and a[1] == b[1]:
                return a
            return ("d", node[1], a, b)
        return node

    root = same_leaves(build(("d", 0)))
    if root[0] == "l":  # keep the root decision, its subtrees pruned
        left, right = tree.children[0]
        root = ("d", 0, same_leaves(build(left)), same_leaves(build(right)))

    def spec(node):
        if node[0] == "l":
            return node[1]
        W.append(tree.W[node[1]])
        gamma.append(tree.gamma[node[1]])
        return (spec(node[2]), spec(node[3]))

    structure = spec(root)
    pruned = type(tree)(structure, tree.n_features, W=np.array(W), gamma=np.array(gamma))
    names = getattr(tree, "feature_names", None)
    if names is not None:
        try:
            pruned.feature_names = names
        except AttributeError:
            pass
    return pruned


# -- text -----------------------------------------------------------------------
def export_text(model, feature_names=None, precision=3, X=None, sample_weight=None):
    """Nested if/else text of a tree or fitted ``GTOClassifier``.

    Feature names default to ``feature_names_in_`` (or the tree's own names);
    control characters in them are escaped (:func:`printable`).  A decision that
    sends every training point the same way is flagged; the training points
    are ``X`` if given, else those the model was fitted on
    (:func:`training_counts`: a ``GTOClassifier``'s, or the leaf counts a
    model file keeps).
    """
    tree = tree_of(model)
    names = [printable(n) for n in feature_names_of(model, feature_names)]
    flags = constant_flags(model, X, sample_weight)
    hint = "tree.prune(X)" if X is not None else "tree.prune()"
    lines = []

    def walk(child, indent):
        kind, i = child
        pad = "  " * indent
        if kind == "l":
            lines.append(f"{pad}class {tree.leaf_classes[i].item()!r}  [leaf {i}]")
            return
        left, right = tree.children[i]
        flag = f"; {flags[i]} (prune with {hint})" if i in flags else ""
        lines.append(f"{pad}if {format_decision(tree, i, names, precision)}:  [decision {i}{flag}]")
        walk(left, indent + 1)
        lines.append(f"{pad}else:")
        walk(right, indent + 1)

    walk(("d", 0), 0)
    return "\n".join(lines)


# -- picture --------------------------------------------------------------------
def _layout(tree):
    """Per node ``(kind, index)``: x (leaves at 0, 1, ... in order, parents centred) and
    the number of leaves below it."""
    x, span = {}, {}

    def place(child, next_leaf):
        if child[0] == "l":
            x[child], span[child] = next_leaf, 1
            return next_leaf + 1
        left, right = tree.children[child[1]]
        after = place(right, place(left, next_leaf))
        x[child] = (x[left] + x[right]) / 2
        span[child] = span[left] + span[right]
        return after

    place(("d", 0), 0)
    return x, span


def plot_tree(model, ax=None, feature_names=None, precision=3, fontsize=9):
    """Draw the tree: a box per decision (its test; yes = left), a rounded box per leaf.

    Long tests are wrapped to the width their subtree has.  Returns the
    matplotlib Figure (a new one, made without pyplot, when ``ax`` is None).
    """
    from .plots import figure_and_axes

    tree = tree_of(model)
    names = feature_names_of(model, feature_names)
    flagged = constant_flags(model)
    x, span = _layout(tree)
    depth, K = get_depth(tree), tree.n_leaves
    tests = {d: format_decision(tree, d, names, precision) for d in range(tree.n_decisions)}
    oblique = max(len(t) for t in tests.values()) > 40
    width = ax.figure.get_size_inches()[0] * ax.get_position().width if ax is not None else (
        0.8 * max(6.0, (2.6 if oblique else 1.8) * K))
    texts = {}
    for d, test in tests.items():
        chars = int(0.9 * width * span["d", d] / K * 72 / (0.62 * fontsize))
        lines = textwrap.wrap(test, max(chars, 12), break_on_hyphens=False)
        if d in flagged:
            lines.append(f"({flagged[d]})")
        texts["d", d] = "\n".join(lines)
    tallest = max(t.count("\n") + 1 for t in texts.values())
    box_inches = tallest * fontsize * 1.35 / 72 + 0.15
    # levels 1 / depth apart on a (depth + 1) / depth tall axes, 0.77 of the figure
    fig, ax = figure_and_axes(ax, figsize=(width / 0.8, (box_inches + 0.5) * (depth + 1) / 0.77))
    all_nodes = nodes(tree)
    pos = {n[:2]: (x[n[:2]] / max(K - 1, 1), 1 - n[2] / max(depth, 1)) for n in all_nodes}
    colours = {c: f"C{i % 10}" for i, c in enumerate(dict.fromkeys(tree.leaf_classes.tolist()))}
    artists = {}
    for kind, i, _, _ in all_nodes:
        if kind == "d":
            text, box = texts["d", i], dict(boxstyle="square,pad=0.4", fc="white", ec="0.3")
        else:
            label = tree.leaf_classes[i].item()
            text = f"class {label}"
            box = dict(boxstyle="round,pad=0.4", fc=colours[label], ec="0.3", alpha=0.35)
        artists[kind, i] = ax.text(*pos[kind, i], text, ha="center", va="center",
                                   fontsize=fontsize, bbox=box, zorder=2)
    for kind, i, _, parent in all_nodes:  # arrows from a box's bottom to its child's top
        if parent < 0:
            continue
        pkind, pi, _, _ = all_nodes[parent]
        child, above = artists[kind, i], artists[pkind, pi]
        ax.annotate("", xy=(0.5, 1.0), xycoords=child, xytext=(0.5, 0.0), textcoords=above,
                    arrowprops=dict(arrowstyle="->", color="0.4", shrinkA=6, shrinkB=6),
                    zorder=1)
        label = "yes" if tree.children[pi][0] == (kind, i) else "no"
        ax.annotate(label, xy=(0.5, 1.0), xycoords=child, xytext=(-5 if label == "yes" else 5, 6),
                    textcoords="offset points", ha="right" if label == "yes" else "left",
                    va="bottom",
                    fontsize=fontsize - 1, color="0.3")
    ax.set_xlim(-0.5 / max(K - 1, 1), 1 + 0.5 / max(K - 1, 1))
    ax.set_ylim(-0.5 / max(depth, 1), 1 + 0.5 / max(depth, 1))
    ax.axis("off")
    return fig
