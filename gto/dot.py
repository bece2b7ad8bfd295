"""Graphviz source for a :class:`gto.Tree` (text only; Graphviz is not needed)."""
from __future__ import annotations

from .inspection import feature_names_of, format_decision, tree_of


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(tree, feature_names=None, precision=3):
    """DOT source: a box per decision (its test over the used features; true edge left),
    an ellipse per leaf.  Same decision text as :func:`gto.export_text`."""
    tree_ = tree_of(tree)
    names = feature_names_of(tree, feature_names)
    lines = ["digraph gto {", '  node [fontname="Helvetica"];']
    for d in range(tree_.n_decisions):
        label = _quote(format_decision(tree_, d, names, precision))
        lines.append(f"  d{d} [shape=box, label={label}];")
    for k, label in enumerate(tree_.leaf_classes.tolist()):
        lines.append(f"  l{k} [shape=ellipse, label={_quote(f'class {label}')}];")
    for d, children in enumerate(tree_.children):
        for (kind, i), edge in zip(children, ("yes", "no")):
            lines.append(f'  d{d} -> {kind}{i} [label="{edge}"];')
    lines.append("}")
    return "\n".join(lines)
