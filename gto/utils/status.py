"""The status vocabulary of every search, :class:`Status` (defined in :mod:`tabu.status`,
the lower layer, whose docstring tables the codes); also ``gto.Status``."""
from tabu.status import Status

__all__ = ["Status"]
