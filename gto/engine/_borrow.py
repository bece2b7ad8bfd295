"""Arrays the compiled EPTS loop borrows: no reference count of their own.

numba counts references to an array through its ``meminfo``: every read of a
structref field, view and call argument that its pruning pass does not remove
is an atomic increment and decrement (``NRT_incref``/``NRT_decref``), most of
the loop's glue around its kernels (docs/speed.md, round 15).  An array
whose ``meminfo`` is NULL (as numba's own ``carray`` makes) has its counts
skipped: the same calls return at once.  :func:`borrowed` makes such arrays of
a tuple's arrays: the same data, shape and strides, without an owner.

The owner must outlive every use: :class:`gto.engine._tabu_loop.CompiledLoop`
holds the tuples whose borrowed copies its :class:`gto.engine._loop_state.TreeState`
and :class:`gto.engine._loop_state.SearchState` hold, and only compiled code reads
those (a borrowed array must not reach Python: it would not keep its data alive).
"""
from __future__ import annotations

from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np.arrayobj import make_array


def _borrow_one(context, builder, ty, value):
    """The array ``value`` of type ``ty`` with a NULL meminfo and parent, a tuple's arrays
    likewise (other types as they are)."""
    if isinstance(ty, types.BaseTuple):
        out = value
        for i, item_ty in enumerate(ty.types):
            item = builder.extract_value(value, i)
            out = builder.insert_value(out, _borrow_one(context, builder, item_ty, item), i)
        return out
    if not isinstance(ty, types.Array):
        return value
    src = make_array(ty)(context, builder, value=value)
    out = make_array(ty)(context, builder)
    for field in ("nitems", "itemsize", "data", "shape", "strides"):
        setattr(out, field, getattr(src, field))
    out.meminfo = cgutils.get_null_value(out.meminfo.type)
    out.parent = cgutils.get_null_value(out.parent.type)
    return out._getvalue()


@intrinsic
def borrowed(typingctx, tup):
    """``tup`` (a tuple or named tuple) with each array, also in tuples it holds, replaced
    by a borrowed one (module docstring): same data, no reference count."""
    if not isinstance(tup, types.BaseTuple):
        return None

    def codegen(context, builder, signature, args):
        return _borrow_one(context, builder, tup, args[0])

    return tup(tup), codegen
