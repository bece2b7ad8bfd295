"""Quick start: GTO on a pandas DataFrame, read the tree, draw it.

A notebook-style script (run the ``# %%`` cells one by one in an editor that
knows them, or the whole file):

    python examples/quickstart.py [OUTDIR] [--max-iter N]

It writes ``tree.png`` and ``regions.png`` to OUTDIR (default: a new
temporary folder, printed at the end).
"""
# %% Imports and data: the Wisconsin breast cancer data with named columns
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.tree import DecisionTreeClassifier

import gto
import problems
from gto import plots


def load_frame():
    X, y = problems.load("cancer")
    frame = pd.DataFrame(X, columns=problems.feature_names("cancer"))
    return frame, pd.Series(np.where(y == 1, "malignant", "benign"), name="diagnosis")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", default=None, help="folder for the PNGs")
    parser.add_argument("--max-iter", type=int, default=2000, help="EPTS moves per restart")
    args = parser.parse_args(argv)
    out = Path(args.outdir or tempfile.mkdtemp(prefix="gto-quickstart-"))
    out.mkdir(parents=True, exist_ok=True)

    # %% Fit the paper's three-decision tree on a training split
    X, y = load_frame()
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, stratify=y,
                                                        random_state=0)
    clf = gto.GTOClassifier(depth=2, max_iter=args.max_iter, random_state=0)
    clf.fit(X_train, y_train)
    print(f"test accuracy {clf.score(X_test, y_test):.3f}, depth {clf.get_depth()}, "
          f"{clf.get_n_leaves()} leaves")

    # %% Read the tree: only the features each decision uses, in original units
    print(gto.export_text(clf))
    importance = pd.Series(clf.feature_importances_, index=clf.feature_names_in_)
    print("feature importances:")
    print(importance.sort_values(ascending=False).round(3).to_string())

    # %% A decision that sends every training point one way can go: same predictions
    pruned = clf.tree_.prune(X_train)
    same = np.array_equal(pruned.predict(X_train), clf.tree_.predict(X_train))
    print(f"pruned: {clf.tree_.n_decisions} -> {pruned.n_decisions} decisions, "
          f"same training predictions: {same}")
    print(gto.export_text(pruned, feature_names=clf.feature_names_in_))

    # %% Draw the tree
    fig = gto.plot_tree(clf)
    fig.savefig(out / "tree.png", dpi=100, bbox_inches="tight")

    # %% Decision regions on the two most important features, GTO against CART of depth 2
    top = importance.sort_values(ascending=False).index[:2].tolist()
    two = X_train[top]
    small = gto.GTOClassifier(depth=2, max_iter=args.max_iter, random_state=0).fit(two, y_train)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(two, y_train)
    fig = plots.compare_regions([small, cart], two, y_train.to_numpy(),
                                titles=["GTO depth 2", "CART depth 2"])
    fig.savefig(out / "regions.png", dpi=100)

    print(f"wrote {out / 'tree.png'} and {out / 'regions.png'}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
