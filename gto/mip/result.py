"""Result type of the MIP solvers, a ``scipy.optimize.OptimizeResult``."""
from __future__ import annotations

from scipy.optimize import OptimizeResult

from ..utils.status import Status

# members of the shared :class:`gto.utils.status.Status`; each equals its name ("optimal", ...)
OPTIMAL = Status.OPTIMAL
TIME_LIMIT = Status.TIME_LIMIT
INFEASIBLE = Status.INFEASIBLE
INTERRUPTED = Status.INTERRUPTED
ERROR = Status.ERROR
STATUSES = (OPTIMAL, TIME_LIMIT, INFEASIBLE, INTERRUPTED, ERROR)


class MIPResult(OptimizeResult):
    """Outcome of :func:`gto.mip.solve` or :func:`gto.mip.solve_oct`.

    Attributes
    ----------
    tree : gto.Tree or None
        Best incumbent in original units, ``None`` when no incumbent was found.
    n_errors : int or float
        (Weighted) misclassified count of ``tree`` re-evaluated on the
        original data with the strict rule.
    objective : float
        Objective value of the incumbent in the model.
    bound : float
        Best proven lower bound on the model objective.
    gap : float
        ``(objective - bound) / max(|objective|, 1e-10)``; 0 when proven optimal.
    status : gto.utils.status.Status
        Equal to one of ``"optimal"`` (within ``mip_gap``), ``"time_limit"``,
        ``"infeasible"``, ``"interrupted"`` or ``"error"``.
    success : bool
        True when an incumbent exists (optimal or stopped early with a tree).
    message : str
        The solver's own status text.
    time_to_first, time_to_best : float or None
        Seconds from solver start to the first and to the final incumbent
        (from the HiGHS improving-solution callback; ``None`` for solvers
        without callbacks).
    runtime : float
        Wall-clock seconds of the solver run.
    start_objective : float or None
        Model objective of the warm start given to the solver.
    incumbents : list of (seconds, objective)
        Every improving solution the solver reported, in order.
    leafless_errors : int or float
        (:func:`gto.mip.solve`, :func:`gto.mip.solve_odt`) The (weighted) points
        of classes with no leaf in the given structure: errors whatever the
        splits, counted in ``n_errors``, ``objective`` and ``bound``; 0 when every
        class has a leaf.
    solver : str
    """
