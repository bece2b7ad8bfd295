"""The package layout: no import cycles (lazy, function-level imports included) and each
layer of ``gto`` importing only the layers below it (docs/DESIGN.md §9b).

The import graph is read from the source with ``ast`` (every ``import`` and ``from ...
import`` anywhere in a module, and ``importlib.import_module`` with a literal name), so
an import hidden inside a function counts like one at the top.
"""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: rank of each part of gto: a module may import its own subpackage and lower ranks only
#: (tabu, the problem-agnostic engine, is below all of gto and never imports it)
LAYERS = {
    "tabu": 0,
    "gto.utils": 1,
    "gto._version": 1,
    "gto.model": 2,
    "gto.engine": 3,
    "gto.learners": 4,
    "gto.mip": 4,
    "gto.slim": 5,
    "gto.cli": 6,
    "gto": 7,  # the front door: gto/__init__.py and gto/__main__.py
}


def _module_name(path, root):
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def _resolve(module, is_package, level, name):
    """The absolute name of a relative import ``from <level dots><name> import ...``."""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _imports(tree, module, is_package, modules):
    """The modules of ``modules`` that a module imports.  ``from pkg import x`` depends on
    the module ``pkg.x`` when there is one, else on ``pkg`` itself (its ``__init__``)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = (_resolve(module, is_package, node.level, node.module) if node.level
                      else node.module)
            for a in node.names:
                found.add(f"{target}.{a.name}" if f"{target}.{a.name}" in modules else target)
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "import_module"
              and node.args and isinstance(node.args[0], ast.Constant)):
            name = node.args[0].value
            if name.startswith("."):
                level = len(name) - len(name.lstrip("."))
                name = _resolve(module, is_package, level, name.lstrip("."))
            found.add(name)
    return {m for m in found if m in modules and m != module}


def import_graph(root, packages):
    """``{module: set of modules of ``packages`` it imports}`` for every .py under them."""
    files = {}
    for package in packages:
        for path in sorted((Path(root) / package).rglob("*.py")):
            files[path] = _module_name(path, Path(root))
    modules = {name for name, _ in files.values()}
    graph = {}
    for path, (name, is_package) in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        graph[name] = _imports(tree, name, is_package, modules)
    return graph


def cycles(graph):
    """Every import cycle as a list of modules (one per strongly connected component)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def layer_of(module, layers=LAYERS):
    """The part of ``layers`` a module belongs to (its longest matching prefix)."""
    best = None
    for part in layers:
        if module == part or module.startswith(part + "."):
            if best is None or len(part) > len(best):
                best = part
    return best


def upward_imports(graph, layers=LAYERS):
    """``(importer, imported)`` pairs where a module imports a part of a higher or equal
    rank other than its own."""
    bad = []
    for module, targets in graph.items():
        own = layer_of(module, layers)
        for target in targets:
            part = layer_of(target, layers)
            if part != own and layers[part] >= layers[own]:
                bad.append((module, target))
    return sorted(bad)


def test_no_import_cycles():
    graph = import_graph(ROOT, ["gto", "tabu"])
    assert len(graph) > 40  # the graph was read
    assert cycles(graph) == []


def test_layers_import_only_lower_layers():
    graph = import_graph(ROOT, ["gto", "tabu"])
    assert all(layer_of(m) is not None for m in graph)  # every module sits in a layer
    assert upward_imports(graph) == []


def test_known_edges_are_seen():
    """The graph holds edges of each kind: top-level, relative from a parent package,
    function-level, and the front door's lazy ``import_module``."""
    graph = import_graph(ROOT, ["gto", "tabu"])
    assert "gto.model.tree" in graph["gto.engine._problem"]
    assert "gto.utils._validation" in graph["gto.mip.fixed"]
    assert "gto.mip.warm_start" in graph["gto.mip.oblique"]  # imported inside solve()
    assert "gto.learners._estimator" in graph["gto"]  # importlib.import_module


def _write(root, files):
    for name, text in files.items():
        path = Path(root) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_finds_a_lazy_cycle_and_an_upward_import(tmp_path):
    """A planted package: ``a.low.x`` imports ``a.high.y`` inside a function (a lazy cycle
    with y's top-level import of x, and an import of a higher layer); ``a.high.z`` imports
    y by ``importlib.import_module``."""
    _write(tmp_path, {
        "a/__init__.py": "",
        "a/low/__init__.py": "",
        "a/low/x.py": "def f():\n    from ..high import y\n    return y\n",
        "a/high/__init__.py": "",
        "a/high/y.py": "from a.low.x import f\n",
        "a/high/z.py": "import importlib\nm = importlib.import_module('.y', __package__)\n",
    })
    graph = import_graph(tmp_path, ["a"])
    assert cycles(graph) == [["a.high.y", "a.low.x"]]
    layers = {"a": 2, "a.low": 0, "a.high": 1}
    assert upward_imports(graph, layers) == [("a.low.x", "a.high.y")]
    assert graph["a.high.z"] == {"a.high.y"}  # import_module with a relative name


@pytest.mark.parametrize("module, part", [("gto.engine._walker", "gto.engine"), ("gto", "gto"),
                                          ("gto.__main__", "gto"), ("tabu.epts", "tabu")])
def test_layer_of(module, part):
    assert layer_of(module) == part


def test_no_function_over_the_limit_outside_numba_kernels():
    """Functions read as the algorithm: at most LIMIT lines of code (docstrings apart)."""
    from experiments.function_lengths import LIMIT, function_lengths

    rows = function_lengths()
    assert len(rows) > 300  # the functions were read
    assert [r for r in rows if r[0] > LIMIT] == []


def test_function_lengths_skip_kernels_and_docstrings(tmp_path):
    from experiments.function_lengths import function_lengths

    body = "\n".join(f"    x{i} = {i}" for i in range(5))
    _write(tmp_path, {"p/m.py": (
        "import numba\n\n\n@numba.njit(cache=True)\ndef kernel():\n" + body + "\n\n\n"
        "def f():\n    '''Doc\n    string.'''\n" + body + "\n\n\n"
        "class C:\n    def g(self):\n        return 1\n")})
    assert function_lengths(tmp_path, ["p"]) == [(6, "p/m.py:13 f"), (2, "p/m.py:24 C.g")]
