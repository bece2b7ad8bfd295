"""Numba's on-disk cache of gto's kernels, invalidated when any kernel's source changes.

gto's compiled functions (``@njit(cache=True)``) call each other across modules:
the compiled EPTS loop (``gto/engine/_tabu_loop.py``) calls the kernels of
``gto/engine/_kernels.py`` and ``tabu/_select.py``, and numba links the callees'
code into the caller's cache file.  Numba decides whether a cache file is fresh
from the caller's own source file only (a documented limitation of numba's
caching), so after an edit of ``_kernels.py`` alone (a ``git pull``, a branch
switch, an editable install) the loop's cache would keep the old kernels: wrong
results, or a crash when an array's layout changed with them.

:func:`guard_compiled_cache` puts, in front of numba's cache locators, locators
that accept only functions defined in the given package folders and whose
source stamp is numba's own stamp *and* a digest of every module of those
folders that uses numba.  Any change of any of them makes every such cache
stale, and numba recompiles and overwrites it; nothing else changes (the same
cache folders, file names and locator order: ``NUMBA_CACHE_DIR``, the
``__pycache__`` beside the source, the user-wide folder).  Functions of other
packages keep numba's locators.  When numba has none of the locators this relies
on (a future numba), or ``NUMBA_CACHE_LOCATOR_CLASSES`` chooses the locators, the
guard does nothing.
"""
from __future__ import annotations

import hashlib
import os
import re

#: modules that import numba are part of the digest (they define or call kernels)
MARKER = re.compile(rb"^\s*(from|import) numba\b", re.MULTILINE)


def compiled_sources(folders):
    """Sorted paths of the ``.py`` files under ``folders`` that import numba."""
    found = []
    for folder in folders:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                path = os.path.join(root, name)
                if name.endswith(".py") and MARKER.search(_read(path)):
                    found.append(os.path.realpath(path))
    return sorted(found)


def sources_digest(paths):
    """SHA-256 hex digest of the files' contents (with their names, so a renamed or
    removed module changes it too)."""
    h = hashlib.sha256()
    for path in paths:
        h.update(os.path.basename(path).encode() + b"\0" + _read(path) + b"\0")
    return h.hexdigest()


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _guarded(base, folders, digest):
    """Subclass of numba's locator ``base`` for the functions defined under ``folders``,
    its source stamp extended by ``digest``."""

    def from_function(cls, py_func, py_file):
        if not os.path.realpath(py_file).startswith(folders):
            return None
        return base.from_function.__func__(cls, py_func, py_file)

    def get_source_stamp(self):
        return base.get_source_stamp(self), digest

    name = f"Guarded{base.__name__}"
    return type(name, (base,), {
        "from_function": classmethod(from_function), "get_source_stamp": get_source_stamp,
        "folders": folders, "__module__": __name__, "__qualname__": name})


def guard_compiled_cache(*folders):
    """Make numba's cache of the functions defined under ``folders`` (package folders;
    None entries are skipped) stale whenever any numba module under them changes.
    Returns the digest, or None if the guard could not be installed.  Call it before
    the modules that define the functions are imported; calling it again for the
    same folders replaces the earlier guard."""
    try:
        from numba.core import caching
        mixin = caching._SourceFileBackedLocatorMixin
    except (ImportError, AttributeError):
        return None
    impl = getattr(caching, "CacheImpl", getattr(caching, "_CacheImpl", None))  # numba >= 0.60: public
    folders = tuple(os.path.realpath(f) + os.sep for f in folders if f is not None)
    classes = getattr(impl, "_locator_classes", None)
    if not folders or not isinstance(classes, list):
        return None
    digest = sources_digest(compiled_sources(folders))
    kept = [c for c in classes if getattr(c, "folders", None) != folders]
    bases = [c for c in kept if issubclass(c, mixin) and not hasattr(c, "folders")]
    impl._locator_classes = [_guarded(b, folders, digest) for b in bases] + kept
    return digest
