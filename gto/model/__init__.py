"""The tree model: :class:`Tree` (paper §2) with its JSON file format, inspection
(``export_text``, ``plot_tree``, decision paths, importances, pruning), the DOT export,
plots, and the encoding of categorical columns.  Knows nothing of the search."""
from .inspection import export_text, plot_tree
from .tree import FIGURE2, Tree, as_tree

__all__ = ["Tree", "FIGURE2", "as_tree", "export_text", "plot_tree"]
