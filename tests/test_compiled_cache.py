"""Numba's cache of gto's kernels follows every kernel module (gto.utils._compiled_cache).

Truth: a compiled function that calls a kernel of another module, run from its
cache after that kernel's source changed, must return the new kernel's value
(numba alone checks only the caller's own file)."""
import inspect
import os
import subprocess
import sys

import pytest
from numba.core.dispatcher import Dispatcher

from gto.utils._compiled_cache import compiled_sources, sources_digest
from gto.utils._siblings import ROOT, sibling

# the guard's module loaded by path: the subprocesses need not import gto (seconds each)
INIT = """import importlib.util
import os

spec = importlib.util.spec_from_file_location("guard", {!r})
guard = importlib.util.module_from_spec(spec)
spec.loader.exec_module(guard)
guard.guard_compiled_cache(os.path.dirname(os.path.abspath(__file__)))
""".format(os.path.join(ROOT, "gto", "utils", "_compiled_cache.py"))
CALLER = """from numba import njit

from .kernel import f


@njit(cache=True)
def g():
    return f()
"""
KERNEL = """from numba import njit


@njit(cache=True)
def f():
    return {}
"""


def _run_caller(tmp_path, env):
    out = subprocess.run([sys.executable, "-c", "import pkg.caller as c; print(c.g())"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return int(out.stdout)


def _write_kernel(path, value, stamp):
    path.write_text(KERNEL.format(value))
    os.utime(path, (stamp, stamp))  # numba < 0.60 stamps by mtime and size, not contents


@pytest.mark.parametrize("where", ["beside the source", "NUMBA_CACHE_DIR"])
def test_a_cached_caller_follows_its_kernels_module(tmp_path, where):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "caller.py").write_text(CALLER)
    _write_kernel(pkg / "kernel.py", 1, 1_000_000_000)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    env.pop("NUMBA_CACHE_DIR", None)
    env.pop("NUMBA_DISABLE_JIT", None)
    cache = pkg / "__pycache__"
    if where == "NUMBA_CACHE_DIR":
        cache = tmp_path / "numba_cache"
        env["NUMBA_CACHE_DIR"] = str(cache)
    assert _run_caller(tmp_path, env) == 1
    written = sorted(p.name for p in cache.rglob("caller.g-*.nbi"))
    assert written, "the caller was not cached: the test would prove nothing"
    assert _run_caller(tmp_path, env) == 1  # from the cache
    _write_kernel(pkg / "kernel.py", 2, 1_000_000_100)
    assert _run_caller(tmp_path, env) == 2


def test_every_cached_kernel_is_in_the_digest():
    import gto.engine._hinge_loop  # noqa: F401  (every kernel module loaded)
    import gto.engine._ray  # noqa: F401
    import gto.engine._region_start  # noqa: F401
    import gto.engine._tabu_loop  # noqa: F401
    import tabu._select  # noqa: F401

    folders = (os.path.dirname(gto.__file__), sibling("tabu"))
    digested = set(compiled_sources(folders))
    cached = set()
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] not in ("gto", "tabu"):
            continue
        for obj in vars(module).values():
            if isinstance(obj, Dispatcher) and type(obj._cache).__name__ != "NullCache":
                cached.add(os.path.realpath(inspect.getfile(obj.py_func)))
    assert len(cached) >= 6
    assert cached <= digested


def test_the_digest_changes_with_any_module(tmp_path):
    a, b = tmp_path / "a.py", tmp_path / "b.py"
    a.write_text("import numba\n")
    b.write_text("from numba import njit\nX = 1\n")
    (tmp_path / "c.py").write_text("# no numba here\n")
    found = compiled_sources([str(tmp_path)])
    assert [os.path.basename(p) for p in found] == ["a.py", "b.py"]
    before = sources_digest(found)
    b.write_text("from numba import njit\nX = 2\n")
    assert sources_digest(found) != before
