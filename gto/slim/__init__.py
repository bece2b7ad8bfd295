"""DT-SLIM: SAT-based local improvement of large decision trees (Schidler & Szeider, AAAI 2021).

``improve(tree, X, y, method="sat")`` lowers the depth of a big axis-aligned
tree window by window, keeping every training sample's predicted class;
``method="gto"`` makes windows oblique with :func:`gto.optimize` to lower
training errors.  See :mod:`gto.slim.windows`.
"""
from .encodings import minimum_depth_tree, tree_of_depth
from .windows import ENCODINGS, METHODS, improve, sample_limits

__all__ = ["improve", "minimum_depth_tree", "tree_of_depth", "sample_limits", "METHODS",
           "ENCODINGS"]
