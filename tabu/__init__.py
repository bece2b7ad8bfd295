"""Problem-agnostic engine of gto: revised simplex and extreme point tabu search.

* :func:`linprog` - scipy-style LP solver on a revised simplex (LU + eta updates).
* :func:`search` - extreme point tabu search (Bennett & Blue 1996, Algorithm 5.2)
  driving any :class:`Walker`; :func:`epts` runs it on a scipy-style polytope.
* :class:`StandardFormWalker` - the reference walker on ``{A x = b, x >= 0}``.
* :func:`descent` - steepest descent over vertices, the baseline.
"""
from .descent import descent
from .epts import HISTORY_DTYPE, MODES, default_tenures, epts, search
from .linprog import linprog
from .lu import BasisFactor, SingularBasisError
from .result import OptimizeResult
from .simplex import RevisedSimplex, phase_one
from .standard_form import StandardForm, to_standard_form
from .standard_walker import StandardFormWalker
from .walker import Walker

__all__ = [
    "linprog", "epts", "search", "descent", "Walker", "StandardFormWalker", "OptimizeResult",
    "RevisedSimplex", "phase_one", "BasisFactor", "SingularBasisError", "StandardForm",
    "to_standard_form", "default_tenures", "HISTORY_DTYPE", "MODES",
]
