"""One status vocabulary for every search: tabu, Frank-Wolfe, ``gto.optimize`` and the MIP backend.

Defined here, in the lower layer (tabu does not import gto); ``gto.utils.status`` re-exports it.

``Status`` is an ``IntEnum`` (so ``res.status == 3`` keeps working) whose
members also compare equal to their lower-case names (``res.status ==
"interrupted"``, ``mip_res.status == "optimal"``).  ``str(status)`` is that
name and ``status.message`` a sentence for ``OptimizeResult.message``.
``tabu.linprog`` keeps scipy's LP codes (0 optimal, 1 iteration limit,
2 infeasible, 3 unbounded, 4 numerical), as ``scipy.optimize.linprog`` does.
"""
from __future__ import annotations

import enum

_MESSAGES = {
    "SUCCESS": "Finished: the iteration limit or a stopping rule was reached.",
    "TIME_LIMIT": "Time limit reached; best solution so far returned.",
    "CALLBACK": "Stopped by the callback; best solution so far returned.",
    "INTERRUPTED": "Interrupted (Ctrl-C); best solution so far returned.",
    "NO_MOVE": "No bounded edge leaves the current vertex.",
    "INFEASIBLE": "The problem is infeasible.",
    "ERROR": "The solver failed.",
}


class Status(enum.IntEnum):
    """Outcome of a search; ``SUCCESS`` (alias ``OPTIMAL``) is 0."""

    SUCCESS = 0
    OPTIMAL = 0  # alias: a MIP solved to its gap
    ITERATION_LIMIT = 0  # alias: a local search that used its iterations
    TIME_LIMIT = 1
    CALLBACK = 2
    INTERRUPTED = 3
    NO_MOVE = 4
    INFEASIBLE = 5
    ERROR = 6

    @property
    def message(self):
        return _MESSAGES[self.name]

    def _names(self):
        return {n.lower() for n, m in type(self).__members__.items() if m is self}

    def __eq__(self, other):
        if isinstance(other, str):
            return other.lower() in self._names()
        return int.__eq__(self, other)

    def __ne__(self, other):
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    __hash__ = int.__hash__

    def __str__(self):
        return self.name.lower()

    def __format__(self, spec):
        return format(str(self), spec) if not spec or spec[-1] == "s" else int.__format__(self, spec)
