"""Steepest descent over vertices: the baseline that EPTS (Algorithm 5.2) improves on."""
from __future__ import annotations

import numpy as np

from .result import OptimizeResult
from .status import Status
from .walker import MoveError, Walker


def descent(walker: Walker, max_iter: int = 10_000, tol: float = 1e-12) -> OptimizeResult:
    """Move to the best neighbour while it improves by more than ``tol * max(1, |f|)``.

    Returns ``x``, ``fun``, ``basis`` of the vertex reached, ``nit`` and
    ``status`` ``CONVERGED`` (a local minimum: no improving neighbour) or
    ``ITERATION_LIMIT``; both are a ``success``.
    """
    if not isinstance(walker, Walker):
        raise TypeError("walker must implement tabu.Walker")
    nit, status = 0, Status.ITERATION_LIMIT
    while nit < max_iter:
        E, L, V = walker.candidates()
        cur = float(walker.value)
        V = np.where(np.isnan(V), np.inf, np.asarray(V, dtype=float))
        if len(E) == 0 or not V.min() < cur - tol * max(1.0, abs(cur)):
            status = Status.CONVERGED
            break
        i = int(np.argmin(V))
        try:
            walker.pivot(int(E[i]), int(L[i]))
        except MoveError:  # numerically singular edge: stop at this vertex
            status = Status.CONVERGED
            break
        nit += 1
    return OptimizeResult(x=walker.x, fun=float(walker.value), basis=walker.basis(), nit=nit,
                          status=status, success=True,
                          message=("Local minimum reached." if status == Status.CONVERGED
                                   else status.message))
