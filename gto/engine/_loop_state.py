"""The compiled EPTS loop's state, passed by reference (numba structrefs).

:mod:`gto.engine._tabu_loop` makes its moves on the walker's arrays
(:data:`TREE_FIELDS`) and the search's memories (:data:`SEARCH_FIELDS`).  Passed
as tuples, every compiled function taking them had the whole tuple (~65 arrays,
seven values each) flattened into its arguments, and increfed and decrefed every
array at each call.  A :class:`TreeState` or :class:`SearchState` is one pointer
to a heap struct holding those arrays (the same buffers: the compiled moves
change the walker in place); a function reads only the fields it uses, and a
call passes and reference-counts one pointer (docs/speed.md, round 9).

The types live in a module of their own, with no compiled function: numba's
on-disk cache of the functions that take them (in ``_tabu_loop.py``) must find
the type classes by import when it loads, as it does for any module-level
class; structref types defined and used in one file, or made by a factory,
are known to miss the cache.
"""
from __future__ import annotations

from numba.core import types
from numba.experimental import structref

#: the walker's arrays (:data:`gto.engine._tabu_loop.TreeArrays`), in order
TREE_FIELDS = (
    "Zt", "znew", "ELt", "ERt", "LE", "wrong", "H", "X1t", "terms", "degrees", "stale", "valid",
    "entering", "leaving", "coef", "fresh", "point_leaves", "sides", "weight", "child_kind",
    "child_index", "leaf_ok", "row_start", "row_decision", "Binv", "G", "rows_t", "rhs", "tight",
    "in_block", "position", "ybasic", "theta", "r", "rabs", "coord", "n_coord", "n_real",
    "updates", "off", "ints", "floats", "counts", "best_theta", "plan", "rows", "X1", "work",
    "ratio", "score_work")

#: the search's memories (:data:`gto.engine._tabu_loop.SearchArrays`), in order
SEARCH_FIELDS = (
    "last_left", "last_entered", "F", "cand", "E", "L", "V", "ist", "fst", "hv", "hb", "hm",
    "saved_theta", "saved_in_block", "saved_ybasic", "par", "fpar", "div_work")


@structref.register
class TreeStateType(types.StructRef):
    """numba type of a :class:`TreeState`: one field per :data:`TREE_FIELDS` array."""


@structref.register
class SearchStateType(types.StructRef):
    """numba type of a :class:`SearchState`: one field per :data:`SEARCH_FIELDS` array."""


class TreeState(structref.StructRefProxy):
    """Python handle of a walker's arrays held by reference; made in compiled code
    (``TreeState(*arrays)``, :func:`gto.engine._tabu_loop.loop_state`), read there."""


class SearchState(structref.StructRefProxy):
    """Python handle of a search's memories held by reference (as :class:`TreeState`)."""


structref.define_constructor(TreeState, TreeStateType, TREE_FIELDS)
structref.define_boxing(TreeStateType, TreeState)
structref.define_constructor(SearchState, SearchStateType, SEARCH_FIELDS)
structref.define_boxing(SearchStateType, SearchState)
