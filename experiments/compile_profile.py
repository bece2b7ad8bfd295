"""Cold numba compile time of a fit, per compiled function.

Runs a default ``GTOClassifier`` fit on heart (and with ``--depth3`` a depth-3
fit after it) and listens to numba's ``numba:compile`` events: each compiled
function's seconds inclusive (with the functions compiled while it was being
typed) and exclusive (without them), and how often it was compiled (once per
new combination of argument types).  Run it with a fresh cache, from the
checkout to measure (docs/speed.md, "Cold compile time"):

    NUMBA_CACHE_DIR=$(mktemp -d) PYTHONPATH=. python -m experiments.compile_profile --depth3

Prints the fit's wall seconds, the total exclusive compile seconds and the
number of compilations, then the ``--top`` functions by exclusive seconds, and
every gto dispatcher holding more than one compiled type; ``--json`` writes the
raw events.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from numba.core import event


class CompileListener(event.Listener):
    """``records``: ``(name, inclusive, exclusive)`` seconds of each compilation."""

    def __init__(self):
        self.stack, self.records = [], []

    def on_start(self, ev):
        func = ev.data["dispatcher"].py_func
        self.stack.append([f"{func.__module__}.{func.__qualname__}", time.perf_counter(), 0.0])

    def on_end(self, ev):
        name, start, children = self.stack.pop()
        seconds = time.perf_counter() - start
        self.records.append((name, seconds, seconds - children))
        if self.stack:
            self.stack[-1][2] += seconds


def by_function(records):
    """``{name: [compilations, inclusive, exclusive]}`` summed over ``records``."""
    out = {}
    for name, inclusive, exclusive in records:
        row = out.setdefault(name, [0, 0.0, 0.0])
        row[0] += 1
        row[1] += inclusive
        row[2] += exclusive
    return out


def several_types():
    """gto's dispatchers compiled for more than one type: ``{name: [signature, ...]}``."""
    out = {}
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith(("gto", "tabu")):
            continue
        for name, value in vars(module).items():
            func = getattr(value, "py_func", None)
            if func is not None and func.__module__ == module_name and len(value.signatures) > 1:
                out[f"{module_name}.{name}"] = [str(s) for s in value.signatures]
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth3", action="store_true", help="a depth-3 fit after the default one")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--json", help="write the raw events here")
    args = parser.parse_args(argv)
    listener = CompileListener()
    event.register("numba:compile", listener)
    import gto  # after the listener: importing gto may compile
    import problems
    from gto.utils._atomic import write_text_atomic

    X, y = problems.load("heart")
    start = time.perf_counter()
    gto.GTOClassifier(random_state=0).fit(X, y)
    fit = time.perf_counter() - start
    if args.depth3:
        gto.GTOClassifier(depth=3, random_state=0).fit(X, y)
    depth3 = time.perf_counter() - start - fit
    rows = by_function(listener.records)
    total = sum(row[2] for row in rows.values())
    print(f"fit {fit:.1f} s, depth3 {depth3:.1f} s, total exclusive compile {total:.1f} s, "
          f"{len(listener.records)} compiles")
    for name, (count, inclusive, exclusive) in sorted(rows.items(), key=lambda kv: -kv[1][2])[:args.top]:
        print(f"{exclusive:7.2f} {inclusive:7.2f} {count:3d} {name}")
    duplicates = several_types()
    for name, signatures in duplicates.items():
        print(f"{len(signatures)} types: {name}")
    if args.json:
        write_text_atomic(args.json, json.dumps({"records": listener.records,
                                                 "several_types": duplicates}))


if __name__ == "__main__":
    main()
