"""The command line's reliability cases end to end: each case runs ``python -m gto`` (through
bash where pipes or closed descriptors matter) in a fresh temporary folder and is checked
against what a careful user expects (the exit code, one error line without a traceback,
input bytes unchanged, the output written).  Prints a table case -> outcome (and JSON with
``--json``); ``--quick`` leaves out the large timed cases.

Run: ``python -m experiments.reliability_campaign [--quick] [--json] [--wide]`` (``--wide``:
only the many-feature cases, CPU and peak memory of each).
The timed case reports wall and CPU seconds of the whole command (CPU: the child's
user + sys); the machine's load (``os.getloadavg``) is printed with them.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

from .common import markdown_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = "u,v,class\n" + "".join(f"{i % 7 - 3}.5,{(i * 5) % 11 - 5}.25,{'ab'[(i * 3) % 7 > 3]}\n"
                               for i in range(40))


def _run(command, cwd):
    env = {**os.environ, "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=cwd,
                       env=env, timeout=900)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return r, time.perf_counter() - t0, cpu


def _one_line(err):
    """One error line (argparse's usage lines may precede it), no traceback."""
    lines = err.strip().splitlines()
    return bool(lines) and lines[-1].startswith("gto") and "error:" in lines[-1] and (
        len(lines) == 1 or lines[0].startswith("usage:")) and "Traceback" not in err


def _setup(folder):
    with open(os.path.join(folder, "d.csv"), "w") as fh:
        fh.write(DATA)
    os.link(os.path.join(folder, "d.csv"), os.path.join(folder, "hard.csv"))
    os.symlink("d.csv", os.path.join(folder, "sym.csv"))
    with open(os.path.join(folder, "ro.json"), "w") as fh:
        fh.write("{}\n")
    os.chmod(os.path.join(folder, "ro.json"), 0o444)
    with open(os.path.join(folder, "ragged.csv.gz"), "wb") as fh:
        fh.write(gzip.compress(b"a,b,class\n1,2,x\n3,4,y\n5,6,7,x\n"))
    files = {
        "index.csv": ",u,v,class\n0,1,2,a\n1,3,4,b\n2,5,6,a\n3,7,8,b\n",
        "blank.csv": "u,v,class\n\n\n1,2,a\n3,zz,b\n",
        "multiline.csv": 'u,v,class\n1,2,"a\nb"\n3,zz,b\n',
        "dropped.csv": "u,v,class\n1,2,?\n3,4,b\n5,6,a\n7,zz,b\n",
        "labels.csv": "u,class\n" + "".join(f"{i},{'007' if i < 10 else '7'}\n" for i in range(20)),
        "formula.csv": "u,class\n" + "".join(
            f"{i},{'=HYPERLINK(1)' if i < 5 else 'ok'}\n" for i in range(10)),
        "weights.csv": "u,v,w,class\n" + "".join(
            f"{i % 7},{(i * 3) % 5},1e308,{'ab'[i % 7 > 3]}\n" for i in range(40)),
        "names.csv": '"a\nclass 9",v,class\n' + DATA.split("\n", 1)[1],
    }
    for name, text in files.items():
        with open(os.path.join(folder, name), "w") as fh:
            fh.write(text)
    big = {"1e400": 10**400}
    with open(os.path.join(folder, "big.json"), "w") as fh:
        fh.write('{"format": "gto.Tree", "version": 2, "structure": [0, 1], "n_features": 1, '
                 f'"W": [[{big["1e400"]}]], "gamma": [0]}}')


def _unchanged(*names):
    def check(folder, before, result):
        return all(before[n] == open(os.path.join(folder, n), "rb").read() for n in names)
    return check


PY = f"{sys.executable} -m gto"
#: (case, command, expected exit code, check of the folder afterwards or None)
CASES = [
    ("fit -o onto its data", f"{PY} fit d.csv -q -o d.csv", 2, _unchanged("d.csv")),
    ("fit -o onto a hard link of the data", f"{PY} fit d.csv -q -o hard.csv", 2,
     _unchanged("d.csv")),
    ("fit -o onto a symlink to the data", f"{PY} fit d.csv -q -o sym.csv", 2,
     _unchanged("d.csv")),
    ("export -o onto its model", f"{PY} export m.json -o m.json", 2, _unchanged("m.json")),
    ("predict -o onto its data", f"{PY} predict m.json d.csv -o ./d.csv", 2,
     _unchanged("d.csv")),
    ("fit -o onto a write-protected file", f"{PY} fit d.csv -q -o ro.json", 2,
     _unchanged("ro.json")),
    ("cat d.csv | gto fit /dev/stdin", f"cat d.csv | {PY} fit /dev/stdin -q -o p.json", 0,
     lambda f, b, r: os.path.exists(os.path.join(f, "p.json"))),
    ("gto fit <(cat d.csv)", f"{PY} fit <(cat d.csv) -q -o s.json", 0,
     lambda f, b, r: os.path.exists(os.path.join(f, "s.json"))),
    ("gzip CSV with a ragged line", f"{PY} fit ragged.csv.gz -o r.json", 2, None),
    ("gto show m.json >&-", f"{PY} show m.json >&-", 2, None),
    ("index column (,u,v header)", f"{PY} fit index.csv -o i.json", 2, None),
    ("--sample-weight class", f"{PY} fit d.csv --sample-weight class -o w.json", 2, None),
    ("--jobs 10000", f"{PY} fit d.csv --jobs 10000 -o j.json", 2, None),
    ("--depth 12 on 200 points", f"{PY} fit big200.csv --depth 12 -q -o x.json", 2, None),
    ("line number after blank lines", f"{PY} fit blank.csv -o b.json", 2, "line 5,"),
    ("line number after a quoted two-line field", f"{PY} fit multiline.csv -o b.json", 2,
     "line 4,"),
    ("line number after a dropped row", f"{PY} fit dropped.csv --drop-na -o b.json", 2,
     "line 5,"),
    ("model with 10**400", f"{PY} show big.json", 2, None),
    ("labels 007 and 7", f"{PY} fit labels.csv --depth 1 -q -o l.json && "
     f"{PY} predict l.json labels.csv -q", 0, "007"),
    ("=HYPERLINK label in predicted CSV", f"{PY} fit formula.csv --depth 1 -q -o f.json && "
     f"{PY} predict f.json formula.csv -q -o f.csv && grep -c \"^'=HYPERLINK\" f.csv", 0, None),
    ("1e308 sample weights", f"{PY} fit weights.csv --sample-weight w --depth 1 -o w8.json "
     f"&& {PY} show w8.json > /dev/null", 0,
     lambda f, b, r: "inf" not in r.stderr and "nan" not in r.stderr
     and "Infinity" not in open(os.path.join(f, "w8.json")).read()),
    ("feature name with a newline", f"{PY} fit names.csv -q -o n.json && {PY} show n.json | "
     "grep -c '^  *class 9'", 1, None),
]


def _big(folder, n_points, n_features, name, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_points, n_features))
    y = (X @ rng.normal(size=n_features) > 0).astype(int)
    with open(os.path.join(folder, name), "w") as fh:
        fh.write(",".join(f"f{j}" for j in range(n_features)) + ",class\n")
        for row, c in zip(X, y):
            fh.write(",".join(f"{v:.5f}" for v in row) + f",{c}\n")


#: many features on 20 points (y from a random hyperplane): (case, Python statement on X, y)
WIDE = [(f"GTOClassifier(max_iter=30), 20 x {n}",
         n, "gto.GTOClassifier(max_iter=30, random_state=0).fit(X, y)")
        for n in (100, 300, 1000, 10_000)] + [
    ("optimize(init='cart', time_limit=60), 20 x 3000", 3000,
     "gto.optimize(gto.Tree.complete(2, [0, 1], X.shape[1]), X, y, init='cart', "
     "random_state=0, time_limit=60)")]


def _wide_command(n, statement):
    code = (f"import numpy as np, gto; rng = np.random.default_rng(0); "
            f"X = rng.normal(size=(20, {n})); y = (X @ rng.normal(size={n}) > 0).astype(int); "
            f"{statement}")
    return f"/usr/bin/time -f 'peak %M KB' {sys.executable} -c \"{code}\""


def wide_cases():
    """The many-feature cases: CPU (user + sys) and peak memory of each in its own process."""
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, n, statement in WIDE:
            r, wall, cpu = _run(_wide_command(n, statement), folder)
            peak = [line for line in r.stderr.splitlines() if line.startswith("peak")]
            rows.append({"case": name, "exit": r.returncode, "expected": 0,
                         "outcome": "ok" if r.returncode == 0 else "BAD",
                         "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                         "message": (peak or [r.stderr.strip()[-90:]])[-1]})
    return rows


def campaign(quick):
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        _setup(folder)
        _big(folder, 200, 4, "big200.csv")
        _run(f"{PY} fit d.csv --max-iter 50 -q -o m.json", folder)
        cases = list(CASES)
        if not quick:
            _big(folder, 3000, 300, "big3000.csv")
            _big(folder, 5000, 500, "big5000.csv")
            _big(folder, 20, 3000, "wide3000.csv")
            cases += [("fit 3000 x 300 --time-limit 5", f"{PY} fit big3000.csv "
                       "--time-limit 5 -o t.json", 0, "time limit reached"),
                      ("fit 5000 x 500 --time-limit 30", f"{PY} fit big5000.csv "
                       "--time-limit 30 -o t5.json", 0, "time limit reached"),
                      ("Ctrl-C 15 s into fit 5000 x 500", "timeout --preserve-status -s INT "
                       f"15 {PY} fit big5000.csv --time-limit 30 -o c5.json", 130,
                       "interrupted"),
                      ("fit 20 x 3000 --init cart", f"{PY} fit wide3000.csv --init cart "
                       "-o w.json", 0, None)]
        for name, command, code, check in cases:
            before = {n: open(os.path.join(folder, n), "rb").read()
                      for n in os.listdir(folder) if os.path.isfile(os.path.join(folder, n))}
            r, wall, cpu = _run(command, folder)
            ok = r.returncode == code
            if code == 2:
                ok = ok and _one_line(r.stderr)
            if isinstance(check, str):
                ok = ok and check in r.stdout + r.stderr
            elif check is not None:
                ok = ok and check(folder, before, r)
            tail = (r.stderr.strip().splitlines() or [""])[-1][:90]
            rows.append({"case": name, "exit": r.returncode, "expected": code,
                         "outcome": "ok" if ok else "BAD", "wall_s": round(wall, 2),
                         "cpu_s": round(cpu, 2), "message": tail})
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="leave out the large timed cases")
    parser.add_argument("--json", action="store_true", help="also print the rows as JSON")
    parser.add_argument("--wide", action="store_true",
                        help="only the many-feature cases (20 points, 100 - 10 000 features)")
    args = parser.parse_args(argv)
    rows = wide_cases() if args.wide else campaign(args.quick)
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"load average: {load}; {sum(r['outcome'] == 'ok' for r in rows)} of {len(rows)} ok")
    print(markdown_table(["case", "exit", "expected", "outcome", "wall s", "cpu s", "message"],
                         [[r[k] for k in ("case", "exit", "expected", "outcome", "wall_s",
                                          "cpu_s", "message")] for r in rows]))
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
