"""The longest functions of the library, in lines of code (signature to last line, without
the docstring - a numpydoc Parameters section documents, it is not the algorithm - and
without decorators).

The project keeps every function at most ``LIMIT`` lines so that it reads as the
algorithm; compiled numba kernels (decorated ``@njit``/``@jit``/``@numba.njit``...) are
left out, as their loops are written out by hand.  ``tests/test_layout.py`` fails on a
longer one.

    python -m experiments.function_lengths            # the 10 longest
    python -m experiments.function_lengths --top 30
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("gto", "tabu", "problems")
LIMIT = 80


def _is_kernel(node):
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in ("njit", "jit", "vectorize", "guvectorize", "stencil"):
            return True
    return False


def _docstring_lines(node):
    first = node.body[0] if node.body else None
    if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return first.end_lineno - first.lineno + 1
    return 0


def function_lengths(root=ROOT, packages=PACKAGES):
    """``[(lines, "path:line qualified.name")]`` of every function, longest first."""
    out = []
    for package in packages:
        for path in sorted((Path(root) / package).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            stack = [(tree, "")]
            while stack:
                node, prefix = stack.pop()
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        name = f"{prefix}{child.name}"
                        if not isinstance(child, ast.ClassDef) and not _is_kernel(child):
                            lines = child.end_lineno - child.lineno + 1 - _docstring_lines(child)
                            where = f"{path.relative_to(root)}:{child.lineno} {name}"
                            out.append((lines, where))
                        stack.append((child, name + "."))
                    else:
                        stack.append((child, prefix))
    return sorted(out, key=lambda t: (-t[0], t[1]))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.function_lengths", description=__doc__)
    p.add_argument("--top", type=int, default=10, help="how many to list (10)")
    args = p.parse_args(argv)
    rows = function_lengths()
    over = [r for r in rows if r[0] > LIMIT]
    print(json.dumps({"limit": LIMIT, "functions": len(rows), "over_limit": len(over),
                      "longest": [{"lines": n, "function": w} for n, w in rows[:args.top]]},
                     indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
