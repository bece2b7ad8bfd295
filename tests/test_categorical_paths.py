"""Categorical columns end to end, as a new user meets them: DataFrames with string
columns through GTOClassifier (names, importances, unseen categories, columns
matched by name) and string/code CSV columns through ``gto fit --categorical``,
``gto show`` and ``gto predict``."""
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import gto
from gto.cli._main import main
from gto.model._categorical import UnseenCategoryWarning


def mixed_frame(n=90, seed=0):
    """One numeric column, one string column, one more numeric; the class is planted on
    the string column and ``a`` (so a tree needs both)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.normal(size=n).round(3),
                       "colour": rng.choice(["red", "green", "blue"], n),
                       "b": rng.normal(size=n).round(3)})
    y = np.where((df["colour"] == "red").to_numpy() ^ (df["a"] > 0).to_numpy(), 1, 0)
    return df, y


@pytest.fixture(scope="module")
def fitted():
    df, y = mixed_frame()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning at all from a plain fit on a DataFrame
        clf = gto.GTOClassifier(max_iter=200, random_state=0).fit(df, y)
    return clf, df, y


def test_dataframe_fit_and_predict_warn_nothing():
    """A numeric DataFrame: fit, predict, score without the feature-names warning."""
    frame, y = mixed_frame()
    num = frame[["a", "b"]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf = gto.GTOClassifier(max_iter=100, alpha=0, random_state=0).fit(num, y)
        clf.predict(num), clf.predict_proba(num), clf.decision_path(num), clf.score(num, y)
    assert list(clf.feature_names_in_) == ["a", "b"]


def test_numeric_dataframe_names_reach_the_tree(tmp_path):
    """The fitted ``tree_`` of a numeric DataFrame carries its column names (printed,
    pruned, saved), as a categorical one's does; a plain array leaves them unset."""
    frame, y = mixed_frame()
    num = frame[["a", "b"]]
    clf = gto.GTOClassifier(max_iter=100, alpha=0, random_state=0).fit(num, y)
    assert clf.tree_.feature_names == ["a", "b"]
    text = clf.tree_.to_text()
    assert "x0" not in text and "x1" not in text and ("a" in text or "b" in text)
    assert clf.tree_.prune().feature_names == ["a", "b"]
    clf.tree_.save(tmp_path / "t.json")
    assert gto.Tree.load(tmp_path / "t.json").feature_names == ["a", "b"]
    plain = gto.GTOClassifier(max_iter=100, alpha=0, random_state=0).fit(num.to_numpy(), y)
    assert plain.tree_.feature_names is None


def test_string_column_export_text_names_the_one_hot_columns(fitted):
    clf = fitted[0]
    text = gto.export_text(clf)  # no names given
    used = {j for d in range(clf.tree_.n_decisions)
            for j in gto.model.inspection.used_features(clf.tree_.W[d], clf.tree_.gamma[d])}
    names = clf.encoding_.encoded_names
    assert names[:4] == ["a", "colour=blue", "colour=green", "colour=red"]
    for j in used:
        assert names[j] in text
    gto.plot_tree(clf)  # draws with the same names


def test_feature_importances_are_per_input_column(fitted):
    clf, df, _ = fitted
    imp = pd.Series(clf.feature_importances_, index=clf.feature_names_in_)
    assert list(imp.index) == ["a", "colour", "b"]
    # the same number by hand: |w| * std of each encoded column, shares per decision, reach
    Xe = clf.encoding_.transform(df)
    counts = clf.n_node_samples_
    reach = counts.sum(axis=1) / counts[0].sum()
    by_column = np.zeros(Xe.shape[1])
    for d in range(clf.tree_.n_decisions):
        c = np.abs(clf.tree_.W[d]) * Xe.std(axis=0)
        if c.sum() > 0:
            by_column += reach[d] * c / c.sum()
    expected = np.array([by_column[g].sum() for g in clf.encoding_.groups])
    assert np.allclose(imp.to_numpy(), expected / expected.sum())


def test_planted_string_tree_gives_all_importance_to_its_features():
    """Class = colour only: a one-group tree splits on colour alone."""
    df, _ = mixed_frame(seed=3)
    y = (df["colour"] == "green").astype(int).to_numpy()
    clf = gto.GTOClassifier(depth=1, one_group=True, max_iter=100, random_state=0).fit(df, y)
    assert clf.score(df, y) == 1.0
    assert np.allclose(clf.feature_importances_, [0, 1, 0])


def test_reordered_categorical_frame_predicts_the_same(fitted):
    clf, df, _ = fitted
    reordered = df[["b", "colour", "a"]]
    assert np.array_equal(clf.predict(reordered), clf.predict(df))
    assert np.array_equal(clf.predict_proba(reordered), clf.predict_proba(df))
    with pytest.raises(ValueError, match="missing column.*'b'"):
        clf.predict(df[["a", "colour"]])
    with pytest.raises(ValueError, match="unknown column.*'c'"):
        clf.predict(df.assign(c=1.0))


def test_unseen_category_is_warned_and_reads_as_no_known_value(fitted):
    clf, df, _ = fitted
    new = df.head(5).copy()
    new.loc[new.index[0], "colour"] = "purple"
    with pytest.warns(UnseenCategoryWarning, match="colour: 'purple'"):
        pred = clf.predict(new)
    # the documented behaviour, literally: all of colour's one-hot columns are 0
    Xe = clf.encoding_.transform(df.head(5))
    Xe[0, clf.encoding_.groups[1]] = 0.0
    walked = [clf.tree_.leaf_classes[walk_leaf(clf.tree_, x)] for x in Xe]
    assert pred.tolist() == walked
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict(df.head(5))  # seen categories: no warning


def walk_leaf(tree, x):
    from truths import walk_tree

    return walk_tree(tree, x)


# -- the command line -------------------------------------------------------------------
def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def subset_data(tmp_path, codes=False):
    """The class is ``shape == ball`` or ``colour == red`` on string (or coded) columns."""
    rng = np.random.default_rng(1)
    n = 80
    colour = rng.choice(["red", "green", "blue"], n)
    shape = rng.choice(["box", "ball"], n)
    y = np.where((colour == "red") | (shape == "ball"), "yes", "no")
    frame = pd.DataFrame({"colour": colour, "x": rng.normal(size=n).round(3), "shape": shape,
                          "class": y})
    if codes:
        frame["colour"] = frame["colour"].map({"red": 0, "green": 1, "blue": 2})
        frame["shape"] = frame["shape"].map({"box": 0, "ball": 1})
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_cli_string_categories_fit_show_predict(tmp_path, capsys):
    path, frame = subset_data(tmp_path)
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--categorical", "colour,shape", "--depth", "2",
                       "-o", model)
    assert code == 0, err
    data = json.loads(model.read_text())
    assert data["feature_names"] == ["colour", "x", "shape"] and data["target"] == "class"
    tree = gto.Tree.load(model)
    # planted: colour == red or shape == ball, a depth-2 subset tree without errors
    assert (tree.predict(frame[["colour", "x", "shape"]].to_numpy(dtype=object))
            == frame["class"].to_numpy()).all()
    code, out, _ = run(capsys, "show", model)
    assert code == 0 and ("colour in {" in out or "shape in {" in out) and "x0" not in out
    code, out, err = run(capsys, "predict", model, path)  # the training file: target left out
    assert code == 0 and "0 of 80 points misclassified" in err
    assert out.splitlines()[1:] == frame["class"].tolist()
    moved = tmp_path / "moved.csv"
    frame[["shape", "class", "x", "colour"]].to_csv(moved, index=False)
    code, out2, _ = run(capsys, "predict", model, moved)  # columns found by name
    assert code == 0 and out2 == out


def test_cli_coded_categories_keep_names_and_target(tmp_path, capsys):
    path, _ = subset_data(tmp_path, codes=True)
    model = tmp_path / "m.json"
    assert run(capsys, "fit", path, "--categorical", "colour,shape", "-o", model)[0] == 0
    data = json.loads(model.read_text())
    assert data["feature_names"] == ["colour", "x", "shape"] and data["target"] == "class"
    code, out, _ = run(capsys, "show", model)
    assert code == 0 and "x0" not in out and "in {" in out
    code, out, err = run(capsys, "predict", model, path)
    assert code == 0, err
    assert "0 of 80 points misclassified" in err


def test_cli_predict_says_which_categories_are_new(tmp_path, capsys):
    path, frame = subset_data(tmp_path)
    model = tmp_path / "m.json"
    assert run(capsys, "fit", path, "--categorical", "colour,shape", "-o", model)[0] == 0
    data = json.loads(model.read_text())
    assert data["categories"] == [[0, ["blue", "green", "red"]], [2, ["ball", "box"]]]
    new = frame.head(4).copy()
    new.loc[new.index[:2], "colour"] = ["purple", "purple"]
    new_path = tmp_path / "new.csv"
    new.to_csv(new_path, index=False)
    code, out, err = run(capsys, "predict", model, new_path)
    assert code == 0, err
    assert "column 'colour' has 1 value(s) not seen in training ('purple'; 2 row(s))" in err
    tree = gto.Tree.load(model)  # the documented behaviour: in no subset, so sent right
    rows = new[["colour", "x", "shape"]].to_numpy(dtype=object)
    assert out.splitlines()[1:] == tree.predict(rows).tolist()
    code, _, err = run(capsys, "predict", model, path)
    assert "not seen" not in err
