"""Graphviz source for a :class:`gto.Tree` (text only; Graphviz is not needed)."""
from __future__ import annotations


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _hyperplane(tree, d, names, precision):
    if tree.subsets[d] is not None:
        from .tree import subset_text

        return subset_text(tree, d, names)
    terms = [f"{w:+.{precision}g}*{names[j]}" for j, w in enumerate(tree.W[d]) if w != 0]
    lhs = " ".join(terms).lstrip("+") if terms else "0"
    return f"{lhs} <= {tree.gamma[d]:.{precision}g}"


def to_dot(tree, feature_names=None, precision=3):
    """DOT source: a box per decision (``w·x <= gamma``, true edge left), an ellipse per leaf."""
    names = feature_names or [f"x{j}" for j in range(tree.n_features)]
    if len(names) != tree.n_features:
        raise ValueError(f"need {tree.n_features} feature names, got {len(names)}")
    lines = ["digraph gto {", '  node [fontname="Helvetica"];']
    for d in range(tree.n_decisions):
        lines.append(f"  d{d} [shape=box, label={_quote(_hyperplane(tree, d, names, precision))}];")
    for k, label in enumerate(tree.leaf_classes.tolist()):
        lines.append(f"  l{k} [shape=ellipse, label={_quote(f'class {label}')}];")
    for d, children in enumerate(tree.children):
        for (kind, i), edge in zip(children, ("yes", "no")):
            lines.append(f'  d{d} -> {kind}{i} [label="{edge}"];')
    lines.append("}")
    return "\n".join(lines)
