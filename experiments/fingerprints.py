"""Behaviour fingerprints: what a fixed set of small searches returns, as JSON.

Each case runs one public entry point (``gto.optimize`` over data sets,
objectives, methods, starts, the penalty, ``max_features``, categorical data,
the paper's Algorithm 5.2 and the coarse-to-fine schedule; ``GTOClassifier``;
``gto.mip.solve``; ``gto.slim.improve``; ``tabu.linprog`` and ``tabu.epts``) and
records ``n_errors``, ``fun``, ``nit`` and a hash of its weights rounded to 9
decimals.  Two runs of the same code print the same JSON, so a refactoring that
claims "behaviour unchanged" is checked by comparing the output before and after:

    python -m experiments.fingerprints --out before.json
    ... change the code ...
    python -m experiments.fingerprints --compare before.json

The whole run takes about a minute of CPU.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time

import numpy as np

import gto
import problems
import tabu
from gto.utils._atomic import write_text_atomic

ROUND = 9  # decimals kept before hashing: far below any tolerance of the searches


def weights_hash(*arrays):
    """A short hash of the arrays rounded to ROUND decimals (-0.0 made 0.0)."""
    h = hashlib.sha256()
    for a in arrays:
        a = np.round(np.asarray(a, dtype=float), ROUND) + 0.0
        h.update(str(a.shape).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def _number(value):
    return None if value is None else float(value)


def tree_print(res):
    """Fingerprint of an optimize-style result holding a ``tree``."""
    t = res.tree
    return {"n_errors": _number(res.n_errors), "fun": _number(res.get("fun")),
            "nit": None if res.get("nit") is None else int(res.nit),
            "weights": weights_hash(t.W, t.gamma, t.leaf_classes)}


def _subset(name, n, seed=0):
    X, y = problems.load(name)
    idx = np.random.default_rng(seed).permutation(len(y))[:n]
    return X[idx], y[idx]


def _fig2(n_features):
    return gto.Tree.from_structure(((0, 1), (0, 1)), n_features=n_features)


def optimize_case(data, n=None, **kwargs):
    X, y = problems.load(data) if n is None else _subset(data, n)
    return tree_print(gto.optimize(_fig2(X.shape[1]), X, y, random_state=0, **kwargs))


def categorical_case(one_group):
    import pandas as pd

    X, y = _subset("monk1", 300)
    frame = pd.DataFrame(X.astype(int).astype(str), columns=problems.feature_names("monk1"))
    res = gto.optimize(_fig2(X.shape[1]), frame, y, categorical_features="auto",
                       one_group=one_group, max_iter=200, random_state=0)
    out = tree_print(res)
    if one_group:
        out["predict"] = weights_hash(res.tree.predict(frame))
    return out


def classifier_case():
    X, y = _subset("liver", 120)
    clf = gto.GTOClassifier(random_state=0).fit(X, y)
    t = clf.tree_
    return {"alpha": str(clf.alpha_), "n_errors": float(t.n_errors(X, y)),
            "weights": weights_hash(t.W, t.gamma, t.leaf_classes),
            "predict": weights_hash(clf.predict(X))}


def mip_case():
    X, y = _subset("heart", 40)
    X = X[:, :3]
    res = gto.mip.solve(gto.Tree.from_structure((0, 1), n_features=3), X, y, time_limit=60)
    return {"n_errors": _number(res.n_errors), "bound": _number(res.bound),
            "success": bool(res.success), "weights": weights_hash(res.tree.W, res.tree.gamma)}


def slim_case():
    from sklearn.tree import DecisionTreeClassifier

    X, y = _subset("cancer", 200)
    cart = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    res = gto.slim.improve(cart, X, y, method="gto", max_depth_local=2, time_limit=60,
                           random_state=0, max_iter=200, quiet=True)
    t = res.tree
    return {"n_errors": _number(t.n_errors(X, y)), "predict": weights_hash(t.predict(X)),
            "weights": weights_hash(t.W, t.gamma)}


def linprog_case():
    rng = np.random.default_rng(0)
    A = rng.uniform(-1, 1, (12, 8))
    b = rng.uniform(1, 2, 12)
    c = rng.uniform(-1, 1, 8)
    res = tabu.linprog(c, A_ub=A, b_ub=b, bounds=(0, 5))
    return {"fun": float(res.fun), "nit": int(res.nit), "weights": weights_hash(res.x)}


def epts_case():
    rng = np.random.default_rng(1)
    A = rng.uniform(-1, 1, (10, 6))
    b = rng.uniform(1, 2, 10)

    def fun(x):
        return float(np.sum(np.abs(np.sin(3 * x))))

    res = tabu.epts(fun, A_ub=A, b_ub=b, bounds=(0, 3), max_iter=200, random_state=0)
    return {"fun": float(res.fun), "nit": int(res.nit), "weights": weights_hash(res.x)}


CASES = {
    "heart-product-tabu": lambda: optimize_case("heart", max_iter=300, restarts=3),
    "cancer-minimum-tabu-greedy": lambda: optimize_case("cancer", objective="minimum",
                                                        init="greedy", max_iter=300),
    "diabetes-count-tabu-cart": lambda: optimize_case("diabetes", objective="count", init="cart",
                                                      max_iter=200),
    "liver-lexicographic": lambda: optimize_case("liver", objective="lexicographic",
                                                 max_iter=300, restarts=2),
    "liver-frank-wolfe": lambda: optimize_case("liver", method="frank-wolfe", max_iter=100),
    "heart-fw-random": lambda: optimize_case("heart", method="frank-wolfe", init="random",
                                             max_iter=50, restarts=2),
    "heart-paper-p2": lambda: optimize_case("heart", p=2, max_iter=300,
                                            options={"paper": True}, restarts=2),
    "cancer-alpha": lambda: optimize_case("cancer", alpha=0.1, max_iter=300),
    "heart-max-features-1": lambda: optimize_case("heart", max_features=1, max_iter=200),
    "liver-max-features-2": lambda: optimize_case("liver", max_features=2, init="random",
                                                  max_iter=200),
    "australian-axis": lambda: optimize_case("australian", n=300, init="axis", max_iter=100),
    "phoneme-coarse-to-fine": lambda: optimize_case("phoneme", max_iter=100, restarts=2),
    "monk1-categorical": lambda: categorical_case(False),
    "monk1-one-group": lambda: categorical_case(True),
    "classifier-liver": classifier_case,
    "mip-heart": mip_case,
    "slim-cancer": slim_case,
    "tabu-linprog": linprog_case,
    "tabu-epts": epts_case,
}


def run(names=None):
    out = {}
    for name in names or CASES:
        t = time.process_time()
        out[name] = CASES[name]()
        print(f"{name}: {time.process_time() - t:.1f} s CPU", file=sys.stderr)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m experiments.fingerprints", description=__doc__)
    p.add_argument("--compare", metavar="JSON", help="compare with an earlier output; exit 1 on a difference")
    p.add_argument("--out", metavar="JSON", help="also write the JSON to this file (solvers may "
                   "print banners on stdout)")
    p.add_argument("cases", nargs="*", help=f"cases to run (all): {', '.join(CASES)}")
    args = p.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        p.error(f"unknown case(s) {unknown}")
    out = run(args.cases)
    text = json.dumps(out, indent=1, sort_keys=True)
    print(text)
    if args.out:
        write_text_atomic(args.out, text + "\n")
    if args.compare:
        with open(args.compare, encoding="utf-8") as fh:
            before = json.load(fh)
        diff = [k for k in out if before.get(k) != out[k]]
        for k in diff:
            print(f"DIFFERENT {k}: before {before.get(k)} now {out[k]}", file=sys.stderr)
        print(f"{len(out) - len(diff)} of {len(out)} cases identical", file=sys.stderr)
        return 1 if diff else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
