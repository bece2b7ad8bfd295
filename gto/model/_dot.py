"""Graphviz source for a :class:`gto.Tree` (text only; Graphviz is not needed)."""
from __future__ import annotations

from .inspection import constant_flags, feature_names_of, format_decision, tree_of


def _quote(text):
    """A DOT string: backslashes and quotes escaped, line breaks as DOT's ``\\n``."""
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + escaped + '"'


def to_dot(tree, feature_names=None, precision=3):
    """DOT source: a box per decision (its test over the used features; true edge left),
    an ellipse per leaf.  Same decision text as :func:`gto.export_text`; a decision
    that sends every training point one way (:func:`gto.model.inspection.constant_flags`)
    is dashed and says so."""
    tree_ = tree_of(tree)
    names = feature_names_of(tree, feature_names)
    flags = constant_flags(tree)
    lines = ["digraph gto {", '  node [fontname="Helvetica"];']
    for d in range(tree_.n_decisions):
        test = format_decision(tree_, d, names, precision)
        if d in flags:
            label = _quote(f"{test}\n({flags[d]})")
            lines.append(f"  d{d} [shape=box, style=dashed, label={label}];")
        else:
            lines.append(f"  d{d} [shape=box, label={_quote(test)}];")
    for k, label in enumerate(tree_.leaf_classes.tolist()):
        lines.append(f"  l{k} [shape=ellipse, label={_quote(f'class {label}')}];")
    for d, children in enumerate(tree_.children):
        for (kind, i), edge in zip(children, ("yes", "no")):
            lines.append(f'  d{d} -> {kind}{i} [label="{edge}"];')
    lines.append("}")
    return "\n".join(lines)
