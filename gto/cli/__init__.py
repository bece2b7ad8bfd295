"""The ``gto`` command (``python -m gto``) and the files it reads and writes."""
from ._main import main

__all__ = ["main"]
