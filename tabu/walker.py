"""The walker interface that extreme point tabu search drives (paper Algorithm 5.2).

A walker stands on one vertex of a polytope and knows the edges leaving it.
EPTS (:func:`tabu.search`) only ever talks to a walker through this interface,
so a polytope with special structure can bring its own basis handling (the
tree polytope of ``gto`` does: D small dense blocks instead of one big basis).
The standard-form revised simplex is the reference walker.

Variables are numbered as the columns of the standard form ``A x = b``; an
edge is named by the variable that enters the basis and the one that leaves.
EPTS keeps its tabu and frequency memories over those numbers.
"""
from __future__ import annotations

import abc

import numpy as np


class MoveError(RuntimeError):
    """Raised by :meth:`Walker.pivot` when the chosen edge cannot be taken (its pivot
    element is numerically zero); the walker is left on its vertex, unchanged."""


class Walker(abc.ABC):
    """A vertex of a polytope with a black-box objective, and its edges.

    Subclasses set ``n_variables`` (the number of standard-form columns; it
    fixes the default tabu tenures) and implement the methods below.  Only
    bounded edges, those that end in an adjacent vertex, count as moves;
    degenerate edges (step length 0, same point, new basis) do count.
    """

    #: number of standard-form variables ``c`` (tenures are sqrt(c/8) and a quarter of it)
    n_variables: int

    @property
    @abc.abstractmethod
    def value(self) -> float:
        """Objective at the current vertex."""

    @property
    @abc.abstractmethod
    def x(self) -> np.ndarray:
        """The current vertex, in the caller's variables (a copy)."""

    @abc.abstractmethod
    def basis(self) -> np.ndarray:
        """Indices of the basic variables at the current vertex."""

    @abc.abstractmethod
    def candidates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every bounded edge at the current vertex.

        Returns ``(entering, leaving, values)``: int arrays of the entering and
        leaving variables and a float array of the objective at the vertex the
        edge leads to, one entry per edge.
        """

    @abc.abstractmethod
    def evaluate(self, entering: int) -> tuple[int, float]:
        """The edge on which ``entering`` enters, from the current vertex.

        Returns ``(leaving, value)``; ``leaving`` is ``-1`` (and ``value`` is
        ``nan``) when ``entering`` is basic or its edge is an unbounded ray.
        """

    @abc.abstractmethod
    def pivot(self, entering: int, leaving: int) -> None:
        """Move along the edge ``(entering, leaving)`` to the adjacent vertex.

        Raises :class:`MoveError`, leaving the walker unchanged, when the move
        would make the basis numerically singular."""

    def compiled_loop(self, max_iter, rng, tenures, k_stag, m_div, delta, zero_scale, tol, cur, rho):
        """An object making :func:`tabu.search`'s moves in compiled code, or None (the default:
        the Python driver moves this walker).

        It must offer ``run(stop_at) -> bool`` (make moves by the rules of
        :mod:`tabu.epts` until ``stop_at`` are done; False when no move is
        left), ``done`` and ``best`` (moves made, best value), and ``state()``
        (what :func:`tabu.epts._result` reads); the walker is up to date
        between ``run`` calls.
        """
        return None
