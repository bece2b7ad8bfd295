"""``python -m gto``: the ``gto`` command."""
import sys

from .cli import main

sys.exit(main())
