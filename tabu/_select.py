"""Compiled move selection for :func:`tabu.search` (numba).

Choosing among a vertex's moves is a dozen small numpy operations per
iteration; done in one pass here it stops dominating the driver's time.
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, inline="always")
def frequency_term(F, e, leave, weight, it):
    """The frequency part of a move's eq. 25 key, ``weight * (F[e] - F[leave] - it)``
    (entering variable ``e``, leaving ``leave``); one expression, so a caller that
    bounds keys by it (``gto.engine._tabu_loop._diversify``) sees the very bits
    :func:`best_admissible` ranks by."""
    return weight * (F[e] - F[leave] - it)


@njit(cache=True)
def best_admissible(E, L, V, F, weight, it, te, tl, last_left, last_entered, asp):
    """Indices of the moves minimising ``V + weight * (F[E] - F[L] - it)``
    among the admissible ones (not tabu, or ``V < asp``); among all moves if
    none is admissible or all admissible keys are +inf.

    Move i is tabu when ``last_left[E[i]] >= it - te`` or
    ``last_entered[L[i]] >= it - tl`` (recency memory).  With ``weight = 0``
    the key is the value itself.
    """
    n = E.shape[0]
    key = np.empty(n)
    allowed = np.empty(n, dtype=np.bool_)
    best = np.inf
    for i in range(n):
        key[i] = V[i] + frequency_term(F, E[i], L[i], weight, it)
        tabu = last_left[E[i]] >= it - te or last_entered[L[i]] >= it - tl
        allowed[i] = not tabu or V[i] < asp
        if allowed[i] and key[i] < best:
            best = key[i]
    if best == np.inf:  # nothing admissible (or only +inf keys): all moves compete
        best = key.min()
        allowed[:] = True
    ties = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if allowed[i] and key[i] == best:
            ties[k] = i
            k += 1
    return ties[:k]
