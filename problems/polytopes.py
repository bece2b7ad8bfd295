"""Generic polytope test problems for EPTS: concave minimisation with a known global optimum.

A concave function attains its minimum over a polytope at a vertex, so on a
polytope small enough to enumerate every vertex (brute force over all
``n``-subsets of constraints, independent of the simplex code) the global
optimum is known exactly.  Such problems have many local minima on the vertex
graph, which is what extreme point tabu search (paper §5.2) is for.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ConcaveProblem:
    """``min fun(x)`` over ``{A_ub x <= b_ub}`` (``x`` free) with every vertex enumerated.

    ``fun`` accepts one point (n,) or a stack (k, n) (returns k values).
    """

    fun: object
    A_ub: np.ndarray
    b_ub: np.ndarray
    vertices: np.ndarray   #: (V, n) every vertex
    values: np.ndarray     #: (V,) fun at each vertex

    bounds = (None, None)

    @property
    def f_min(self) -> float:
        """The global minimum (over vertices, hence over the polytope)."""
        return float(self.values.min())

    @property
    def x_min(self) -> np.ndarray:
        """A global minimiser."""
        return self.vertices[int(np.argmin(self.values))]

    def is_global(self, value: float, rtol: float = 1e-9) -> bool:
        """Whether ``value`` equals the global minimum up to ``rtol`` (relative to max(1, |f_min|))."""
        return value <= self.f_min + rtol * max(1.0, abs(self.f_min))


def inequality_system(A_ub, b_ub, bounds=(0, None)) -> tuple[np.ndarray, np.ndarray]:
    """All constraints as ``G x <= h``: the rows of ``A_ub`` and the finite bounds."""
    A_ub = np.asarray(A_ub, dtype=float)
    n = A_ub.shape[1]
    lo, hi = bounds
    rows, rhs = [A_ub], [np.asarray(b_ub, dtype=float)]
    if lo is not None:
        rows.append(-np.eye(n))
        rhs.append(np.full(n, -float(lo)))
    if hi is not None:
        rows.append(np.eye(n))
        rhs.append(np.full(n, float(hi)))
    return np.vstack(rows), np.concatenate(rhs)


def enumerate_vertices(A_ub, b_ub, bounds=(0, None), tol=1e-9) -> np.ndarray:
    """Every vertex of ``{A_ub x <= b_ub, lo <= x <= hi}`` by brute force over n-subsets of constraints."""
    G, h = inequality_system(A_ub, b_ub, bounds)
    n = G.shape[1]
    found = []
    for rows in itertools.combinations(range(G.shape[0]), n):
        sub = G[list(rows)]
        if abs(np.linalg.det(sub)) < 1e-10:
            continue
        x = np.linalg.solve(sub, h[list(rows)])
        if np.all(G @ x <= h + tol * (1.0 + np.abs(h))):
            found.append(x)
    if not found:
        return np.zeros((0, n))
    V = np.array(found)
    _, keep = np.unique(np.round(V, 8), axis=0, return_index=True)
    return V[np.sort(keep)]


def active_sets(vertices, A_ub, b_ub, bounds=(0, None), tol=1e-8) -> list[frozenset]:
    """Indices (into :func:`inequality_system`) of the constraints tight at each vertex."""
    G, h = inequality_system(A_ub, b_ub, bounds)
    return [frozenset(np.flatnonzero(np.abs(G @ v - h) <= tol * (1.0 + np.abs(h))).tolist())
            for v in vertices]


def adjacent(active_u: frozenset, active_v: frozenset, G: np.ndarray) -> bool:
    """Vertices are adjacent iff the constraints tight at both have rank n - 1 (they span an edge)."""
    common = sorted(active_u & active_v)
    return bool(common) and np.linalg.matrix_rank(G[common]) == G.shape[1] - 1


def random_polytope(n: int, m: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """A bounded ``{A x <= b}`` with free ``x``: ``m`` random unit normals at distance 1 from 0,
    in the box ``|x_i| <= 2``."""
    rng = np.random.default_rng(rng)
    N = rng.normal(size=(m, n))
    N /= np.linalg.norm(N, axis=1, keepdims=True)
    box = np.vstack([np.eye(n), -np.eye(n)]) / 2.0
    return np.vstack([N, box]), np.ones(m + 2 * n)


def _problem(fun, A, b) -> ConcaveProblem:
    V = enumerate_vertices(A, b, bounds=(None, None))
    return ConcaveProblem(fun=fun, A_ub=A, b_ub=b, vertices=V, values=np.asarray(fun(V), float))


def concave_quadratic(n: int = 4, m: int = 10, seed=None) -> ConcaveProblem:
    """``f(x) = -||x - c||^2`` (farthest vertex from ``c``) over a random polytope."""
    rng = np.random.default_rng(seed)
    A, b = random_polytope(n, m, rng)
    centre = rng.uniform(-0.2, 0.2, n)

    def fun(x):
        return -np.sum((np.asarray(x) - centre) ** 2, axis=-1)

    return _problem(fun, A, b)


def min_of_linear(n: int = 4, m: int = 10, k: int = 3, seed=None) -> ConcaveProblem:
    """``f(x) = min_i g_i . x``, a nonsmooth concave function, over a random polytope."""
    rng = np.random.default_rng(seed)
    A, b = random_polytope(n, m, rng)
    G = rng.normal(size=(k, n))

    def fun(x):
        return np.min(np.asarray(x) @ G.T, axis=-1)

    return _problem(fun, A, b)
