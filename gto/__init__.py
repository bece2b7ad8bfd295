"""gto: global tree optimization (Bennett & Blue, Optimal Decision Trees, 1996).

A fixed-structure oblique decision tree becomes a set of disjunctive linear
inequalities; an error measuring their violation is minimised over a polytope
by extreme point tabu search or Frank-Wolfe.  Docstrings cite the design notes as
"docs/DESIGN.md §n": that file of the source repository and distribution (sdist),
which also has the map of these layers (§8); measurements behind the defaults are
in docs/decisions.md.

Layers, each importing only the ones before it: ``gto.utils`` (input checks,
interrupts, progress, statuses, atomic writes) -> ``gto.model`` (the tree, its
file format, inspection, export, plots) -> ``gto.engine`` (the search) ->
``gto.learners`` (``optimize``, ``GTOClassifier``) and ``gto.mip`` -> ``gto.slim``
-> ``gto.cli``.
"""
from .utils._compiled_cache import guard_compiled_cache
from .utils._siblings import check_sibling, sibling

check_sibling("tabu")  # gto's search engine, never a user's module of the same name
# before any kernel is defined: numba's cached kernels follow every kernel module's source
guard_compiled_cache(sibling("gto"), sibling("tabu"))

from ._version import __version__  # noqa: E402
from .engine._formulation import merge_duplicates, standard_form  # noqa: E402
from .engine._objectives import OBJECTIVES, error  # noqa: E402
from .learners._optimize import METHODS, optimize  # noqa: E402
from .model.inspection import export_text, plot_tree  # noqa: E402
from .model.tree import Tree  # noqa: E402
from .utils.status import Status  # noqa: E402

__all__ = [
    "Tree", "error", "optimize", "GTOClassifier", "standard_form", "merge_duplicates",
    "OBJECTIVES", "METHODS", "Status", "mip", "slim", "export_text", "plot_tree", "__version__",
]

# public modules reached as attributes, imported on first use: the exact solvers (cvxpy),
# DT-SLIM (python-sat) and the tree model's modules, under the names they always had
_MODULES = {"mip": ".mip", "slim": ".slim", "plots": ".model.plots", "tree": ".model.tree",
            "inspection": ".model.inspection"}


def __getattr__(name):
    """``gto.mip`` (cvxpy), ``gto.slim`` (python-sat), ``gto.plots`` (matplotlib) and
    ``GTOClassifier`` (scikit-learn) are imported on first use."""
    import importlib

    if name in _MODULES:
        return importlib.import_module(_MODULES[name], __name__)
    if name == "GTOClassifier":
        return importlib.import_module(".learners._estimator", __name__).GTOClassifier
    raise AttributeError(f"module 'gto' has no attribute {name!r}")
