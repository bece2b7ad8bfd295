"""Result object shared by :func:`tabu.linprog`, :func:`tabu.search` and :func:`tabu.epts`."""
from scipy.optimize import OptimizeResult as _ScipyResult


class OptimizeResult(_ScipyResult):
    """``scipy.optimize.OptimizeResult``: a dict with attribute access (``.x``, ``.fun``, ``.status``...)."""
