"""Categorical encoding, subset decisions in gto.Tree and GTO with one_group."""
import json

import numpy as np
import pandas as pd
import pytest

import gto
from gto.learners._one_group import one_group_tree
from gto.model._categorical import NOMINAL, NUMERIC, ORDINAL, decile_edges, encode
from gto.model._dot import to_dot

from truths import walk_subsets


def frame(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "colour": pd.Categorical(rng.choice(["red", "green", "blue"], n)),
        "size": rng.normal(size=n),
        "shape": rng.choice(["round", "square"], n).astype(object),
    })


# -- encoding ----------------------------------------------------------------
def test_one_hot_groups_literal():
    df = frame()
    enc = encode(df)  # auto: category and object columns
    assert [c.kind for c in enc.columns] == [NOMINAL, NUMERIC, NOMINAL]
    A = enc.transform(df)
    for c, g in zip(enc.columns, enc.groups):
        if c.kind == NOMINAL:  # exactly one 1 per row, at the column of the row's value
            assert np.all(A[:, g].sum(axis=1) == 1)
            values = df[c.name].astype(object).to_numpy()
            for i in range(len(df)):
                assert c.values[np.argmax(A[i, g])] == values[i]
        else:
            assert np.array_equal(A[:, g[0]], df[c.name].to_numpy())


def test_unseen_value_is_all_zero_and_names():
    df = frame()
    enc = encode(df)
    new = df.head(2).copy()
    new["shape"] = np.array(["oval", "round"], dtype=object)
    A = enc.transform(new)
    g = enc.groups[2]
    assert A[0, g].sum() == 0 and A[1, g].sum() == 1
    assert "colour=red" in enc.encoded_names


def test_decile_bins_are_balanced_and_off_the_data():
    x = np.random.default_rng(3).normal(size=1000)
    edges = decile_edges(x)
    assert len(edges) == 9
    assert not np.isin(x, edges).any()
    counts = np.bincount(np.searchsorted(edges, x), minlength=10)
    assert counts.min() == counts.max() == 100
    enc = encode(x[:, None], categorical_features=[], bin_numeric=True)
    assert enc.columns[0].kind == ORDINAL and enc.columns[0].n_values == 10


def test_encode_rejects_bad_specs():
    df = frame()
    with pytest.raises(ValueError, match="categorical_features"):
        encode(df, categorical_features=["nope"])
    with pytest.raises(ValueError, match="categorical_features"):
        encode(df, categorical_features=[7])
    with pytest.raises(TypeError, match="non-numbers"):
        encode(df, categorical_features=["colour"])  # 'shape' holds strings
    with pytest.raises(ValueError, match="n_bins"):
        encode(df, n_bins=1)


# -- subset decisions in gto.Tree ---------------------------------------------
def mixed_tree():
    W = np.zeros((3, 3))
    W[1, 1] = 1.0
    return gto.Tree(((0, 1), (1, 0)), 3, W=W, gamma=[0, 0.25, 0],
                    subsets=[(0, ("red", "blue")), None, (2, ("square",))])


def test_subset_tree_predicts_like_a_literal_walk():
    df = frame()
    tree = mixed_tree()
    rows = df.to_numpy(dtype=object)
    expected = [walk_subsets(tree, r) for r in rows]
    assert tree.predict(df).tolist() == expected
    assert tree.predict(rows).tolist() == expected


def test_subset_tree_json_text_dot(tmp_path):
    tree = mixed_tree()
    path = tmp_path / "t.json"
    tree.save(path)
    back = gto.Tree.load(path)
    assert back.subsets == tree.subsets
    assert json.loads(path.read_text())["subsets"][0] == [0, ["blue", "red"]]
    df = frame()
    assert np.array_equal(back.predict(df), tree.predict(df))
    names = ["colour", "size", "shape"]
    assert "if colour in {blue, red}:" in tree.to_text(names)
    assert "shape in {square}" in to_dot(tree, names)
    assert "subsets" not in gto.Tree(((0, 1), (0, 1)), 2).to_dict()  # old format unchanged


def test_subset_spec_errors():
    with pytest.raises(ValueError, match="subsets"):
        gto.Tree(((0, 1), (0, 1)), 2, subsets=[None])
    with pytest.raises(ValueError, match="feature"):
        gto.Tree(((0, 1), (0, 1)), 2, subsets=[(5, (1,)), None, None])
    with pytest.raises(TypeError, match="values"):
        gto.Tree(((0, 1), (0, 1)), 2, subsets=[(0, "ab"), None, None])


# -- GTO on categorical data ----------------------------------------------------
def planted(n=80, seed=1):
    df = frame(n, seed)
    y = (df["colour"].isin(["red", "blue"]).to_numpy() ^ (df["size"] > 0.5).to_numpy()).astype(int)
    return df, y


def test_optimize_one_group_is_a_coordinate_optimum():
    """No single decision can be replaced by a better one-feature decision (brute force)."""
    df, y = planted()
    noisy = y.copy()
    noisy[::9] ^= 1
    res = gto.optimize(gto.Tree.complete(2, [0, 1], 3), df, noisy, one_group=True, max_iter=300,
                       random_state=0)
    tree = res.tree
    assert res.n_errors == int((tree.predict(df) != noisy).sum())
    for d in range(3):  # one original feature per decision
        assert tree.subsets[d] is not None or np.count_nonzero(tree.W[d]) <= 1
    rows = df.to_numpy(dtype=object)
    for d in range(3):
        for f, vals in ((0, ["blue", "green", "red"]), (2, ["round", "square"])):
            for mask in range(2 ** len(vals)):
                S = tuple(v for k, v in enumerate(vals) if mask >> k & 1)
                subsets = list(tree.subsets)
                subsets[d] = (f, S)
                W = tree.W.copy()
                W[d] = 0
                alt = gto.Tree(tree.structure, 3, W=W, gamma=tree.gamma, subsets=subsets)
                assert (alt.predict(rows) != noisy).sum() >= res.n_errors
        xs = np.sort(df["size"].to_numpy())
        for t in (xs[:-1] + xs[1:]) / 2:
            for sign in (1.0, -1.0):
                subsets = list(tree.subsets)
                subsets[d] = None
                W = tree.W.copy()
                W[d] = [0, sign, 0]
                gamma = tree.gamma.copy()
                gamma[d] = sign * t
                alt = gto.Tree(tree.structure, 3, W=W, gamma=gamma, subsets=subsets)
                assert (alt.predict(rows) != noisy).sum() >= res.n_errors


def test_planted_subset_tree_recovered():
    df, y = planted(seed=4)
    clf = gto.GTOClassifier(depth=2, one_group=True, max_iter=300, random_state=0).fit(df, y)
    assert clf.score(df, y) == 1.0
    assert clf.tree_.has_subsets
    oblique = gto.GTOClassifier(depth=2, max_iter=300, random_state=0).fit(df, y)
    assert oblique.encoding_ is not None and oblique.predict(df).shape == (len(y),)


def test_one_group_tree_from_given_routing():
    """Starting from the planted routing, the descent keeps zero errors."""
    df, y = planted(seed=2)
    enc = encode(df)
    left = np.column_stack([df["colour"].isin(["red", "blue"]), df["size"] <= 0.5, df["size"] <= 0.5])
    tree = one_group_tree(left, ((0, 1), (1, 0)), enc, df, y)
    assert tree.n_errors(df, y) == 0


def test_one_group_stump_equals_brute_force():
    """With one decision the descent step is the exact best one-feature split."""
    df, y = planted(seed=5)
    noisy = y.copy()
    noisy[::4] ^= 1
    enc = encode(df)
    tree = one_group_tree(np.ones((len(df), 1), bool), (0, 1), enc, df, noisy)
    best = np.inf
    rows = df.to_numpy(dtype=object)
    for f, vals in ((0, ["blue", "green", "red"]), (2, ["round", "square"])):
        for mask in range(2 ** len(vals)):
            S = [v for k, v in enumerate(vals) if mask >> k & 1]
            left = np.isin(rows[:, f].astype(str), S)
            best = min(best, (np.where(left, 0, 1) != noisy).sum())
    xs = np.sort(df["size"].to_numpy())
    for t in np.concatenate([[xs[0] - 1], (xs[:-1] + xs[1:]) / 2, [xs[-1] + 1]]):
        for left in (df["size"].to_numpy() <= t, df["size"].to_numpy() > t):
            best = min(best, (np.where(left, 0, 1) != noisy).sum())
    assert tree.n_errors(df, noisy) == best


def test_cli_fit_with_categorical_columns(tmp_path):
    from gto.cli._main import main

    df, y = planted(seed=4)
    codes = pd.DataFrame({"colour": df["colour"].cat.codes, "size": df["size"],
                          "shape": (df["shape"] == "square").astype(int), "class": y})
    data = tmp_path / "d.csv"
    codes.to_csv(data, index=False)
    model = tmp_path / "m.json"
    assert main(["fit", str(data), "--categorical", "colour,shape", "--max-iter", "300",
                 "-o", str(model), "-q"]) in (0, None)
    tree = gto.Tree.load(model)  # the one model format (docs/model_format.md)
    assert tree.has_subsets
    X = codes[["colour", "size", "shape"]].to_numpy(float)
    assert tree.n_errors(X, y) == 0
