"""gto: global tree optimization (Bennett & Blue, Optimal Decision Trees, 1996).

A fixed-structure oblique decision tree becomes a set of disjunctive linear
inequalities; an error measuring their violation is minimised over a polytope
by extreme point tabu search or Frank-Wolfe.  The design notes cited as
"DESIGN §n" in the docstrings are ``docs/DESIGN.md``.
"""
from .formulation import merge_duplicates, standard_form
from .inspection import export_text, plot_tree
from .objectives import OBJECTIVES, error
from .optimize import METHODS, optimize
from .tree import Tree

__all__ = [
    "Tree", "error", "optimize", "GTOClassifier", "standard_form", "merge_duplicates",
    "OBJECTIVES", "METHODS", "mip", "slim", "export_text", "plot_tree",
]
__version__ = "0.1.0"


def __getattr__(name):
    """``gto.mip`` (cvxpy), ``gto.slim`` (python-sat) and ``GTOClassifier``
    (scikit-learn) are imported on first use."""
    import importlib

    if name in ("mip", "slim"):
        return importlib.import_module(f".{name}", __name__)
    if name == "GTOClassifier":
        return importlib.import_module(".estimator", __name__).GTOClassifier
    raise AttributeError(f"module 'gto' has no attribute {name!r}")
