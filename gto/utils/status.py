"""The status vocabulary of every search, :class:`Status` (defined in :mod:`tabu.status`)."""
from tabu.status import Status

__all__ = ["Status"]
