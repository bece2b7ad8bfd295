"""The top-level packages installed with gto (``tabu``, ``problems``) must be gto's own.

``pip install .`` puts ``gto``, ``tabu`` and ``problems`` side by side (the
public contract, DESIGN §9: ``import gto, tabu, problems``); the repository
holds them side by side too.  Python looks for a top-level name first in the
script's folder or the current one, so a user's own ``tabu.py`` or
``tabu/`` folder there would silently replace gto's search engine.
:func:`sibling` finds where the package of that name beside gto lives and
:func:`check_sibling` raises ImportError, naming both places, when the name
resolves elsewhere.  (The experiment scripts are installed as
``gto._experiments``, not as a top-level ``experiments`` that would collide
with the many folders of that name.)
"""
from __future__ import annotations

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sibling(name):
    """Path of the package ``name`` beside gto (its folder), or None if there is none."""
    folder = os.path.join(ROOT, name)
    return folder if os.path.isfile(os.path.join(folder, "__init__.py")) else None


def check_sibling(name):
    """ImportError if ``import name`` would not give the package beside gto."""
    expected = sibling(name)
    if expected is None:  # an unusual installation (zip, frozen): nothing to compare
        return
    spec = importlib.util.find_spec(name)
    origin = None if spec is None else spec.origin
    if origin is None or not os.path.exists(origin) or not os.path.samefile(
            os.path.dirname(origin), expected):
        raise ImportError(f"gto needs its own {name!r} package ({expected}), but "
                          f"'import {name}' finds {origin or 'none'}: a module or folder "
                          f"named {name!r} in the current folder or on PYTHONPATH shadows it; "
                          "rename it or run from another folder")
