"""Exact MIP backend (docs/DESIGN.md §7): the fixed-structure oblique tree and OCT.

``solve`` fits the weights of a fixed oblique tree to proven optimality (or
a proven gap); ``solve_oct`` is Bertsimas & Dunn's axis-aligned optimal
classification tree; ``solve_odt`` is Günlük et al.'s tree with subset
decisions on categorical features.  All model with cvxpy and run HiGHS by default
(through highspy, which accepts warm starts); any installed cvxpy MIP solver
can be chosen.  ``solve(..., method="branch")`` replaces the MIP by a branch
and bound over point-to-leaf assignments with HiGHS LPs (``branch.py``), same
hypothesis class and result, plus a (seconds, incumbent, bound) history;
``method="rootsplit"`` branches on the root's sides of depth-2 trees instead,
bounded by sets of points no hyperplane splits (``rootsplit.py``).
"""
from .oblique import solve
from .oct import solve_oct
from .odt import solve_odt
from .result import MIPResult

__all__ = ["solve", "solve_oct", "solve_odt", "MIPResult"]
