import json

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import gto
import problems

from truths import random_tree, walk_tree


def test_structure_preorder_and_paths():
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), n_features=2)
    assert tree.n_decisions == 3 and tree.n_leaves == 4
    assert tree.leaf_classes.tolist() == [0, 1, 0, 1]
    L, G = zip(*tree.paths)
    assert [list(l) for l in L] == [[0, 1], [0], [2], []]
    assert [list(g) for g in G] == [[], [1], [0], [0, 2]]
    assert tree.structure == ((0, 1), (0, 1))


def test_unbalanced_shape_and_string_labels():
    tree = gto.Tree.from_structure(("a", ("b", ("c", "a"))), n_features=1)
    assert tree.n_decisions == 3
    assert tree.leaf_classes.tolist() == ["a", "b", "c", "a"]
    tree.W = [[1.0], [1.0], [1.0]]
    tree.gamma = [0.0, 1.0, 2.0]
    assert tree.predict([[-1.0], [0.5], [1.5], [3.0]]).tolist() == ["a", "b", "c", "a"]
    # boundary: x.w - gamma == 0 goes left
    assert tree.predict([[0.0], [1.0], [2.0]]).tolist() == ["a", "b", "c"]


def test_complete_tree_is_figure_2():
    assert gto.Tree.complete(2, [0, 1], 3).structure == ((0, 1), (0, 1))
    assert gto.Tree.complete(1, ["x", "y", "z"], 3).structure == ("x", "y")
    assert gto.Tree.complete(3, [0, 1, 2], 1).n_decisions == 7


def brute_force_apply(tree, X):
    return np.array([walk_tree(tree, x) for x in X])


@pytest.mark.parametrize("seed", range(5))
def test_apply_matches_walking_the_tree(seed):
    rng = np.random.default_rng(seed)
    tree = random_tree(rng, 2 + seed, [0, 1, 2], 3)
    X = rng.normal(size=(300, 3))
    assert np.array_equal(tree.apply(X), brute_force_apply(tree, X))


@pytest.mark.parametrize("n_decisions", [40, 255])
def test_apply_of_big_trees_with_ties_matches_walking_the_tree(n_decisions):
    """Irregular shapes many levels deep, integer weights so that points lie on
    hyperplanes (value 0 goes left)."""
    rng = np.random.default_rng(n_decisions)
    tree = random_tree(rng, n_decisions, [0, 1, 2], 3)
    tree.W = rng.integers(-2, 3, size=tree.W.shape)
    tree.gamma = rng.integers(-2, 3, size=n_decisions)
    X = rng.integers(-2, 3, size=(400, 3)).astype(float)
    assert np.any(tree.decision_values(X) == 0)
    assert np.array_equal(tree.apply(X), brute_force_apply(tree, X))


@pytest.mark.parametrize("depth", [1, 2, 3, 4, 5, 6])
@pytest.mark.parametrize("name", ["heart", "diabetes"])
def test_from_sklearn_predicts_like_sklearn(depth, name):
    X, y = problems.load(name)
    model = DecisionTreeClassifier(max_depth=depth, random_state=0).fit(X, y)
    tree = gto.Tree.from_sklearn(model)
    assert tree.n_decisions == model.tree_.node_count // 2
    assert np.array_equal(tree.predict(X), model.predict(X))


def test_from_sklearn_multiclass_string_labels():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = np.array(["red", "green", "blue"])[np.argmax(X[:, :3], axis=1)]
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    tree = gto.Tree.from_sklearn(model)
    assert np.array_equal(tree.predict(X), model.predict(X))


def test_from_sklearn_rejects_unfitted_and_single_leaf():
    with pytest.raises(TypeError, match="fitted"):
        gto.Tree.from_sklearn(DecisionTreeClassifier())
    stump = DecisionTreeClassifier().fit(np.zeros((4, 2)), [0, 0, 0, 0])
    with pytest.raises(ValueError, match="single leaf"):
        gto.Tree.from_sklearn(stump)


def test_json_round_trip_keeps_predictions(tmp_path):
    X, y = problems.load("cancer")
    model = DecisionTreeClassifier(max_depth=4, random_state=0).fit(X, y)
    tree = gto.Tree.from_sklearn(model)
    tree.W = tree.W + np.random.default_rng(0).normal(scale=0.1, size=tree.W.shape)
    path = tmp_path / "model.json"
    tree.save(path)
    loaded = gto.Tree.load(path)
    assert np.array_equal(loaded.predict(X), tree.predict(X))
    assert np.array_equal(loaded.W, tree.W) and np.array_equal(loaded.gamma, tree.gamma)
    assert loaded.structure == tree.structure
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_round_trip_string_labels(tmp_path):
    tree = gto.Tree.from_structure((("a", "b"), "c"), 2, W=[[1, 2], [3, 4]], gamma=[0.5, -1])
    again = gto.Tree.from_dict(json.loads(json.dumps(tree.to_dict())))
    assert again.structure == (("a", "b"), "c")


@pytest.mark.parametrize(
    "content",
    ["not json at all", json.dumps({"format": "sklearn"}), json.dumps([1, 2]),
     json.dumps({"format": "gto.Tree", "version": 1, "structure": [0, 1], "n_features": 2,
                 "W": [[1, 2, 3]], "gamma": [0]})],
)
def test_load_rejects_files_that_are_not_ours(tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match="not a"):
        gto.Tree.load(path)


def test_str_is_readable():
    tree = gto.Tree.from_structure((0, ("x", 1)), 2, W=[[1, -2], [0, 3]], gamma=[0.5, 1])
    text = str(tree)
    assert "if x0 - 2*x1 <= 0.5" in text and "if x1 <= 0.333" in text
    assert "class 'x'" in text and "else:" in text
    assert tree.to_text(feature_names=["age", "bp"]).count("age") == 1


@pytest.mark.parametrize(
    "spec, error",
    [
        ((0, 1, 2), "binary"),
        (0, "at least one decision"),
        ((0, None), "invalid leaf"),
        (((0, 1), (0,)), "binary"),
    ],
)
def test_bad_structures(spec, error):
    with pytest.raises(ValueError, match=error):
        gto.Tree.from_structure(spec, 2)


def test_bad_parameters():
    tree = gto.Tree.from_structure((0, 1), 2)
    with pytest.raises(ValueError, match="shape"):
        tree.W = np.zeros((2, 2))
    with pytest.raises(ValueError, match="NaN"):
        tree.gamma = [np.nan]
    with pytest.raises(TypeError, match="n_features"):
        gto.Tree.from_structure((0, 1), 2.5)


@pytest.mark.parametrize(
    "X, y, match",
    [
        (np.array([[np.nan, 0.0], [1, 1]]), [0, 1], "NaN"),
        (np.zeros((2, 3)), [0, 1], "3 features"),
        (np.zeros(4), [0, 1, 0, 1], "2-D"),
        (np.zeros((2, 2)), [0, 1, 1], "labels for 2"),
        (np.zeros((2, 2)), [0, 0], "one class"),
    ],
)
def test_bad_data(X, y, match):
    tree = gto.Tree.from_structure((0, 1), 2)
    with pytest.raises(ValueError, match=match):
        gto.error(tree, X, y)


def test_labels_without_a_leaf():
    """The validation refuses a label with no leaf unless asked to let it through;
    gto.error lets it through and leaves its points out (they have no triple)."""
    from gto.utils._validation import check_fit_data

    tree = gto.Tree.from_structure((0, 1), 2)
    X, y = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]]), np.array([0, 7, 1])
    with pytest.raises(ValueError, match=r"\[7\] have no leaf"):
        check_fit_data(tree, X, y)
    assert len(check_fit_data(tree, X, y, leafless=True)[1]) == 3
    assert gto.error(tree, X, y) == gto.error(tree, X[[0, 2]], y[[0, 2]])
