"""Inspection: export_text, plot_tree, depth, leaves, decision_path, importances, prune.

The independent truth is a literal walk of the tree written here (node by
node, ``x @ w - gamma <= 0`` goes left), and rules read back from the text.
"""
import re

import numpy as np
import pandas as pd
import pytest

import gto
import problems
from gto.model import inspection

from truths import random_tree


def walk(tree, x):
    """Preorder node ids visited by x, and the leaf class reached (written out, no gto code)."""
    ids = {}

    def number(child):
        ids[child] = len(ids)
        if child[0] == "d":
            for c in tree.children[child[1]]:
                number(c)

    number(("d", 0))
    child, path = ("d", 0), []
    while True:
        path.append(ids[child])
        if child[0] == "l":
            return path, tree.leaf_classes[child[1]]
        d = child[1]
        value = sum(x[j] * tree.W[d, j] for j in range(tree.n_features)) - tree.gamma[d]
        child = tree.children[d][0 if value <= 0 else 1]


def depth_of(spec):
    return 0 if not isinstance(spec, tuple) else 1 + max(depth_of(spec[0]), depth_of(spec[1]))


@pytest.mark.parametrize("seed", range(6))
def test_decision_path_depth_and_leaves_match_a_literal_walk(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, int(rng.integers(1, 7)), [0, 1, 2], 3)
    X = rng.normal(size=(40, 3))
    M = tree.decision_path(X)
    assert M.format == "csr" and M.shape == (40, 2 * tree.n_decisions + 1)
    for i, x in enumerate(X):
        path, label = walk(tree, x)
        assert M[i].indices.tolist() == path
        assert tree.predict(X[i:i + 1])[0] == label
    assert tree.get_depth() == depth_of(tree.structure)
    assert tree.get_n_leaves() == len(re.findall(r"\d", str(tree.structure)))


def rules(text, names):
    """Python source of the printed rules, so they can be run on data."""
    src = ["def rule(" + ", ".join(names) + "):"]
    for line in text.splitlines():
        pad = len(line) - len(line.lstrip())
        body = re.sub(r"\s+\[.*\]$", "", line.strip())
        if body.startswith("class "):
            body = "return " + body[len("class "):]
        src.append("    " + " " * pad + body)
    scope = {}
    exec("\n".join(src), scope)  # noqa: S102 (the text of our own test tree)
    return scope["rule"]


def test_printed_rules_predict_like_the_tree_and_hide_round_off():
    rng = np.random.default_rng(0)
    W = np.array([[1e-14, 2.0, 0.0, -3.0],  # round-off, a weight, an exact zero, a weight
                  [0.0, 0.0, -4.0, 0.0],  # one feature, negative weight: a ">=" threshold
                  [0.5, 1e-15, 0.25, 0.0]])
    tree = gto.Tree.from_structure(((0, 1), (1, 0)), 4, W=W, gamma=[0.3, -1.0, 0.2])
    names = ["age", "bp", "chol", "hr"]
    text = gto.export_text(tree, feature_names=names, precision=12)
    first = text.splitlines()[0]
    assert "age" not in first and "chol" not in first  # round-off and zero left out
    assert "chol >= 0.25" in text
    assert "e-1" not in text  # no tiny coefficient anywhere
    rule = rules(text, names)
    X = rng.normal(size=(300, 4))
    assert [rule(*x) for x in X] == [walk(tree, x)[1] for x in X]


def test_constant_decisions_are_flagged_and_pruned_with_the_same_predictions():
    rng = np.random.default_rng(1)
    X = rng.uniform(0, 1, size=(200, 3))
    # decision 1 (left child) never sees x0 > 5: it sends everything left
    W = [[1.0, 0, 0], [1.0, 0, 0], [0, 1.0, -1.0]]
    tree = gto.Tree.from_structure(((0, 1), (1, 0)), 3, W=W, gamma=[0.5, 5.0, 0.0])
    text = tree.to_text(X=X)
    assert re.search(r"decision 1; constant: all \d+ training points go left", text)
    assert "decision 0; constant" not in text and "decision 2; constant" not in text
    small = tree.prune(X)
    assert small.n_decisions == 2
    assert [walk(small, x)[1] for x in X] == [walk(tree, x)[1] for x in X]
    # subtrees with one class on both sides collapse too
    same = gto.Tree.from_structure(((0, 0), 1), 3, W=W[:2], gamma=[0.5, 0.1])
    assert same.prune(X).structure == (0, 1)


def test_heart_tree_with_a_round_off_root_reads_and_prunes_cleanly():
    """The issue's case: a root with coefficients of 1e-14 that sends everything right."""
    X, y = problems.load("heart")
    W = np.vstack([np.full(X.shape[1], 1e-14), np.eye(X.shape[1])[:1]])
    tree = gto.Tree.from_structure((0, (0, 1)), X.shape[1], W=W, gamma=[-1.0, 54.0])
    text = tree.to_text(X=X)
    assert text.splitlines()[0].startswith("if False:")  # no feature: a constant test
    assert f"constant: all {len(X)} training points go right" in text
    pruned = tree.prune(X)
    assert pruned.structure == (0, 1)
    assert np.array_equal(pruned.predict(X), np.array([walk(tree, x)[1] for x in X]))


def test_feature_importances_by_hand():
    X = np.array([[0.0, 0, 0], [2, 0, 1], [0, 4, 1], [2, 4, 0]])  # stds 1, 2, 0.5
    tree = gto.Tree.from_structure((0, (0, 1)), 3, W=[[1.0, 0, 0], [0, 1.0, 2.0]],
                                   gamma=[1.0, 2.0])
    # root reaches 4 points (share 1), all on x0; decision 1 reaches the 2 with x0 = 2
    # (share 1/2), split |1|*2 : |2|*0.5 = 2 : 1 between x1 and x2
    expected = np.array([1.0, 0.5 * 2 / 3, 0.5 / 3]) / 1.5
    assert np.allclose(tree.feature_importances(X), expected)


def test_estimator_inspection_uses_dataframe_names():
    X, y = problems.load("cancer")
    names = [f"c{j}" for j in range(X.shape[1])]
    df = pd.DataFrame(X, columns=names)
    clf = gto.GTOClassifier(max_iter=200, random_state=0).fit(df, y)
    text = gto.export_text(clf)
    assert "x0" not in text and re.search(r"\bc\d\b", text)
    assert clf.get_depth() == 2 and clf.get_n_leaves() == 4
    M = clf.decision_path(df.iloc[:25])
    for i in range(25):
        assert M[i].indices.tolist() == walk(clf.tree_, X[i])[0]
    truth = np.zeros((3, 2))
    for x in X:
        path, _ = walk(clf.tree_, x)
        ids = inspection.nodes(clf.tree_)
        for a, b in zip(path, path[1:]):
            kind, d, _, _ = ids[a]
            side = 0 if clf.tree_.children[d][0] == ids[b][:2] else 1
            truth[d, side] += 1
    assert np.array_equal(clf.n_node_samples_, truth)
    imp = clf.feature_importances_
    assert imp.shape == (X.shape[1],) and imp.sum() == pytest.approx(1.0) and np.all(imp >= 0)


def test_export_text_rejects_wrong_names_and_models():
    tree = gto.Tree.from_structure((0, 1), 2, W=[[1.0, 1.0]], gamma=[0.0])
    with pytest.raises(ValueError, match="feature_names"):
        gto.export_text(tree, feature_names=["a"])
    with pytest.raises(TypeError, match="GTOClassifier"):
        gto.export_text(object())


def test_plot_tree_returns_the_figure_and_draws_every_node(tmp_path):
    pytest.importorskip("matplotlib")
    from matplotlib.figure import Figure

    tree = gto.Tree.from_structure((("a", "b"), "a"), 2, W=[[1.0, -2], [0, 3]], gamma=[0.5, 1])
    fig = gto.plot_tree(tree, feature_names=["u", "v"])
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "u - 2*v <= 0.5" in texts and "v <= 0.333" in texts
    assert sum(t.startswith("class ") for t in texts) == 3
    own = Figure()
    ax = own.subplots()
    assert gto.plot_tree(tree, ax=ax) is own
    fig.savefig(tmp_path / "tree.png")


@pytest.mark.parametrize("seed", range(4))
def test_recorded_leaf_counts_give_the_walked_node_counts(seed):
    """A model's leaf counts stand in for the training data: (D, 2) weight per side from
    them equals a literal walk's, and the text flags the same decisions as with X."""
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, int(rng.integers(2, 6)), [0, 1, 2], 3)
    X = rng.normal(size=(50, 3))
    X[:, 0] = np.abs(X[:, 0]) + 0.1  # the root often sends everything one way
    tree.W[0], tree.gamma[0] = [1.0, 0, 0], float(rng.choice([0.0, 0.5, 10.0]))
    w = rng.uniform(0.5, 2.0, 50)
    tree.record_training(X, tree.predict(X), sample_weight=w)
    walked = np.zeros((tree.n_decisions, 2))
    for x, wi in zip(X, w):  # walk the children table: left iff x @ w - gamma <= 0
        child = ("d", 0)
        while child[0] == "d":
            d = child[1]
            left = sum(x[j] * tree.W[d, j] for j in range(3)) - tree.gamma[d] <= 0
            walked[d, 0 if left else 1] += wi
            child = tree.children[d][0 if left else 1]
    assert np.allclose(inspection.recorded_counts(tree), walked)
    with_data = gto.export_text(tree, X=X, sample_weight=w)
    assert tree.to_text() == with_data.replace("tree.prune(X)", "tree.prune()")
    assert tree.prune().structure == tree.prune(X).structure
