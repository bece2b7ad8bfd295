"""gto: global tree optimization (Bennett & Blue, Optimal Decision Trees, 1996).

A fixed-structure oblique decision tree becomes a set of disjunctive linear
inequalities; an error measuring their violation is minimised over a polytope.
"""
from .formulation import merge_duplicates, standard_form
from .objectives import OBJECTIVES, error
from .tree import Tree

__all__ = ["Tree", "error", "standard_form", "merge_duplicates", "OBJECTIVES"]
__version__ = "0.1.0"
