"""Leaf classes as variables (``gto.optimize(..., leaves=...)``) against brute force."""
import itertools

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import gto
from gto.learners._leaves import check_leaves, label_patterns, leaf_weights, orient, with_labels

from truths import count_errors


def _swap_orbit(tree, labels):
    """Every labelling reachable from ``labels`` by swapping the children of decisions
    whose two subtrees have the same shape, by brute force over all swap sets."""
    def leaves_of(child, swaps):
        kind, i = child
        if kind == "l":
            return [labels[i]]
        left, right = tree.children[i]
        a, b = leaves_of(left, swaps), leaves_of(right, swaps)
        return b + a if i in swaps else a + b

    def shape(child):
        kind, i = child
        return "l" if kind == "l" else tuple(sorted((shape(c) for c in tree.children[i]),
                                                   key=repr))

    swappable = [d for d in range(tree.n_decisions)
                 if shape(tree.children[d][0]) == shape(tree.children[d][1])]
    return {tuple(leaves_of(("d", 0), set(s))) for r in range(len(swappable) + 1)
            for s in itertools.combinations(swappable, r)}


def _pure_decision(tree, labels):
    """Whether some decision has one class on all its leaves."""
    return any(len({labels[k] for k in np.flatnonzero(tree.sides[:, d] != 0)}) == 1
               for d in range(tree.n_decisions))


def _flat(pattern):
    return [pattern[1]] if pattern[0] == "leaf" else _flat(pattern[0]) + _flat(pattern[1])


@pytest.mark.parametrize("spec, classes", [
    (((0, 1), (0, 1)), [0, 1]),
    (((0, 1), (0, 1)), [0, 1, 2]),
    ((((0, 1), (0, 1)), ((0, 1), (0, 1))), [0, 1]),
    ((((0, 1), (0, 1)), ((0, 1), (0, 1))), [0, 1, 2]),
    ((0, (1, (0, 1))), [0, 1, 2]),
    (((0, (1, 0)), (1, 0)), [0, 1]),
])
def test_label_patterns_are_the_swap_classes_without_pure_decisions(spec, classes):
    tree = gto.Tree(spec, 2)
    truth = set()
    for labels in itertools.product(classes, repeat=tree.n_leaves):
        if not _pure_decision(tree, labels):
            truth.add(min(_swap_orbit(tree, labels)))
    found = [tuple(_flat(p)) for p in label_patterns(tree, np.array(classes))]
    assert len(found) == len(truth)  # one per swap class, none twice
    assert {min(_swap_orbit(tree, f)) for f in found} == truth
    if set(classes) == {0, 1} and spec[0] == spec[1] and isinstance(spec[0][0], tuple):
        assert len(found) == 1  # complete binary trees: the alternating pattern only


@pytest.mark.parametrize("seed", range(4))
def test_orient_finds_the_best_orientation(seed):
    rng = np.random.default_rng(seed)
    tree = gto.Tree.complete(3, [0, 1, 2], 3)
    tree.W, tree.gamma = rng.normal(size=(7, 3)), rng.normal(size=7)
    X, y = rng.normal(size=(200, 3)), rng.integers(0, 3, 200)
    classes = np.array([0, 1, 2])
    counts = leaf_weights(tree, X, y, np.ones(200), classes)
    cost = counts.sum(axis=1, keepdims=True) - counts
    for pattern in label_patterns(tree, classes)[::7]:
        errors, labels = orient(tree, pattern, cost, classes)
        brute = min(count_errors(with_labels(tree, np.array(o)), X, y)
                    for o in _swap_orbit(tree, _flat(pattern)))
        assert errors == brute == count_errors(with_labels(tree, labels), X, y)


@pytest.mark.parametrize("seed", range(3))
def test_free_leaves_never_worse_than_any_labelling_of_the_given_splits(seed):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(150, 3))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] + 0.2 * rng.normal(size=150) > 0.5)).astype(int)
    cart = gto.Tree.from_sklearn(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    given = with_labels(cart, 1 - cart.leaf_classes)  # splits of CART, the wrong classes
    best_labelling = min(count_errors(with_labels(given, np.array(lab)), X, y)
                         for lab in itertools.product([0, 1], repeat=given.n_leaves))
    res = gto.optimize(given, X, y, max_iter=200, random_state=seed)  # "auto": free
    assert res.start_n_errors == count_errors(given, X, y)
    assert count_errors(res.tree, X, y) == res.n_errors <= best_labelling
    assert res.leaf_patterns[0]["start_n_errors"] == best_labelling  # majority first
    assert res.tree.get_depth() == given.get_depth()


def test_free_leaves_reach_the_alternating_pattern_on_planted_data():
    from experiments.search_power import planted

    X, y, planted_tree = planted(768, 0)
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    assert gto.Tree.from_sklearn(cart).leaf_classes.tolist() == [1, 0, 1, 1]  # the trap
    kept = gto.optimize(cart, X, y, random_state=0, leaves="keep")
    free = gto.optimize(cart, X, y, random_state=0)
    assert kept.tree.leaf_classes.tolist() == [1, 0, 1, 1]
    assert [p["leaf_classes"] for p in free.leaf_patterns][-1] in ([1, 0, 1, 0], [0, 1, 0, 1])
    assert count_errors(free.tree, X, y) == free.n_errors < kept.n_errors
    assert free.n_errors <= 1.3 * count_errors(planted_tree, X, y)


def test_leaves_argument():
    X = np.random.default_rng(0).normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    bare = gto.Tree.complete(2, [1, 0], 2)  # labels chosen by the user: kept under "auto"
    assert check_leaves("auto", bare) == "keep"
    res = gto.optimize(bare, X, y, max_iter=50, random_state=0)
    assert res.tree.leaf_classes.tolist() == [1, 0, 1, 0] and "leaf_patterns" not in res
    assert check_leaves("auto", res.tree) == "free"
    for bad in ("fixed", None, 1):
        with pytest.raises(ValueError, match="'leaves' parameter of optimize"):
            gto.optimize(bare, X, y, leaves=bad)


def _wrong_labels(seed):
    """Data and a depth-2 CART tree's splits with every leaf class flipped."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(120, 2))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    cart = gto.Tree.from_sklearn(DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y))
    given = with_labels(cart, 1 - cart.leaf_classes)
    best = min(count_errors(with_labels(given, np.array(lab)), X, y)
               for lab in itertools.product([0, 1], repeat=given.n_leaves))
    return X, y, given, best


def test_estimator_warm_start_leaves():
    X, y, given, best = _wrong_labels(0)
    kept = gto.GTOClassifier(init=given, alpha=0, max_iter=100, random_state=0).fit(X, y)
    assert kept.tree_.leaf_classes.tolist() == given.leaf_classes.tolist()
    free = gto.GTOClassifier(init=given, alpha=0, max_iter=100, random_state=0,
                             leaves="free").fit(X, y)
    assert count_errors(free.tree_, X, y) <= best < count_errors(given, X, y)
    assert free.tree_.leaf_classes.tolist() != given.leaf_classes.tolist()  # chosen anew
    assert "leaf_patterns" in free.result_
    # the default trees keep their labels whatever leaves says (a bare structure)
    bare = gto.GTOClassifier(structure=((1, 0), (1, 0)), alpha=0, max_iter=50, random_state=0,
                             leaves="free").fit(X, y)
    assert bare.tree_.leaf_classes.tolist() == [1, 0, 1, 0]


def test_cli_fit_init_file_leaves(tmp_path, capsys):
    from gto.cli._main import main

    X, y, given, best = _wrong_labels(1)
    given.feature_names, given.target = ["a", "b"], "class"
    given.save(tmp_path / "start.json")
    data = tmp_path / "d.csv"
    data.write_text("a,b,class\n" + "".join(f"{float(a)!r},{float(b)!r},{c}\n"
                                             for (a, b), c in zip(X, y)))
    for leaves in ("keep", "free"):
        out = tmp_path / f"{leaves}.json"
        code = main([str(a) for a in ("fit", data, "--init", tmp_path / "start.json", "--alpha",
                                      "0", "--max-iter", "100", "--leaves", leaves, "-o", out,
                                      "-q")])
        assert code == 0, capsys.readouterr().err
        fitted = gto.Tree.load(out)
        if leaves == "keep":
            assert fitted.leaf_classes.tolist() == given.leaf_classes.tolist()
        else:
            assert count_errors(fitted, X, y) <= best
            assert fitted.leaf_classes.tolist() != given.leaf_classes.tolist()
