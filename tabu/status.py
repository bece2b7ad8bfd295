"""One status vocabulary for every search: tabu, Frank-Wolfe, ``gto.optimize``, the MIP
backend and DT-SLIM.

Defined here, in the lower layer (tabu does not import gto); ``gto.utils.status``
re-exports it.

``Status`` is an ``IntEnum`` with one value per member (no aliases), so a result's
``status`` says why the search ended and the scipy-style integer codes stay usable
(``res.status == 3``):

====  ===================  =====================================================
code  member               meaning
====  ===================  =====================================================
0     ``OPTIMAL``          proven optimal (a MIP solved to its relative gap)
1     ``TIME_LIMIT``       the time limit ran out; best solution so far
2     ``CALLBACK``         the callback asked to stop; best solution so far
3     ``INTERRUPTED``      Ctrl-C; best solution so far
4     ``NO_MOVE``          no bounded edge leaves the current vertex
5     ``INFEASIBLE``       the problem has no feasible point
6     ``ERROR``            the solver failed, or the objective gave NaN
7     ``ITERATION_LIMIT``  the iteration budget was used
8     ``COMPLETED``        a heuristic ran its schedule (restarts, rounds and
                           their stopping rules); no optimality claim
9     ``CONVERGED``        a local stopping test held (Frank-Wolfe's minimum
                           principle, no improving window); a local optimum
====  ===================  =====================================================

A member compares equal to its own integer code and to its own lower-case name only
(``res.status == "interrupted"``): an iteration limit is neither 0 nor "optimal".
``str(status)`` is that name and ``status.message`` a sentence for
``OptimizeResult.message``.  Whether a result is usable is ``res.success``, set by each
search.  ``tabu.linprog`` keeps scipy's own LP codes (0 optimal, 1 iteration limit,
2 infeasible, 3 unbounded, 4 numerical), as ``scipy.optimize.linprog`` does.
"""
from __future__ import annotations

import enum

_MESSAGES = {
    "OPTIMAL": "Solved to optimality (within the relative gap).",
    "TIME_LIMIT": "Time limit reached; best solution so far returned.",
    "CALLBACK": "Stopped by the callback; best solution so far returned.",
    "INTERRUPTED": "Interrupted (Ctrl-C); best solution so far returned.",
    "NO_MOVE": "No bounded edge leaves the current vertex.",
    "INFEASIBLE": "The problem is infeasible.",
    "ERROR": "The solver failed.",
    "ITERATION_LIMIT": "Iteration limit reached.",
    "COMPLETED": "The search ran its schedule; best solution found returned (not a proof of optimality).",
    "CONVERGED": "A local stopping test held: a local optimum (not a proof of global optimality).",
}


class Status(enum.IntEnum):
    """Why a search ended (module docstring: codes and meanings)."""

    OPTIMAL = 0
    TIME_LIMIT = 1
    CALLBACK = 2
    INTERRUPTED = 3
    NO_MOVE = 4
    INFEASIBLE = 5
    ERROR = 6
    ITERATION_LIMIT = 7
    COMPLETED = 8
    CONVERGED = 9

    @property
    def message(self):
        return _MESSAGES[self.name]

    @classmethod
    def _missing_(cls, value):
        """``Status("time_limit")``: a member from its name (any case)."""
        if isinstance(value, str):
            return cls.__members__.get(value.upper())
        return None

    def __eq__(self, other):
        if isinstance(other, str):
            return other.lower() == self.name.lower()
        return int.__eq__(self, other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = int.__hash__

    def __str__(self):
        return self.name.lower()

    def __format__(self, spec):
        """The name (``f"{status:>12}"``), or the code under a numeric type (``f"{status:d}"``)."""
        if spec and spec[-1] in "bcdoxXneEfFgG%":
            return int.__format__(self, spec)
        return format(str(self), spec)
