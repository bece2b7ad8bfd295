"""CSV reading through pandas, the one model format, and the command's options."""
import json

import numpy as np
import pandas as pd
import pytest

import gto
import problems
from gto.cli._files import DataError, read_table
from gto.cli._main import main

from truths import leaf_counts as literal_counts
from truths import leaf_walk as _leaf_walk
from truths import walk, walk_errors


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_read_table_keeps_label_types_and_separator(tmp_path):
    path = tmp_path / "d.csv"
    path.write_text("a;b;y;w\n1;2;1.0;1\n3;4;0.0;2\n5;6;1.0;0.5\n")
    t = read_table(path, "y", sep=";", weight="w")
    assert t.y.dtype.kind == "f" and t.y.tolist() == [1.0, 0.0, 1.0]
    assert t.feature_names == ["a", "b"] and t.sample_weight.tolist() == [1, 2, 0.5]
    path.write_text("a\ty\n1\t1\n2\t0\n")
    assert read_table(path, "y", sep="\t").y.dtype.kind == "i"
    path.write_text("a,y\n1, yes\n2,no\n")
    assert read_table(path, "y").y.tolist() == ["yes", "no"]
    path.write_text("a,y,w\n1,1,-1\n2,0,1\n")
    with pytest.raises(DataError, match="negative"):
        read_table(path, "y", weight="w")


def test_optimize_keeps_dataframe_names_and_the_model_round_trips(tmp_path):
    X, y = problems.load("liver")
    frame = pd.DataFrame(X, columns=problems.feature_names("liver"))
    labels = np.where(y == 1, "a", "b")
    w = np.where(np.arange(len(y)) % 3 == 0, 2.0, 1.0)
    tree = gto.Tree.from_structure((("a", "b"), ("a", "b")), X.shape[1])
    res = gto.optimize(tree, frame, labels, max_iter=200, random_state=0, sample_weight=w)
    assert res.tree.feature_names == problems.feature_names("liver")
    classes, counts = literal_counts(res.tree, X, labels, w)
    assert res.tree.classes.tolist() == classes and np.allclose(res.tree.leaf_counts, counts)
    path = tmp_path / "m.json"
    res.tree.save(path)
    back = gto.Tree.load(path)
    assert back.W.tolist() == res.tree.W.tolist() and back.gamma.tolist() == res.tree.gamma.tolist()
    assert back.leaf_classes.tolist() == ["a", "b", "a", "b"]
    assert back.feature_names == res.tree.feature_names
    P = back.predict_proba(X)
    leaf = _leaf_walk(back)
    expect = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1e-300)
    for i in range(0, len(X), 17):
        row = expect[leaf(X[i])]
        assert np.allclose(P[i], row) if row.sum() > 0 else P[i].max() == 1
    assert "sgpt" in back.to_text()


def test_cli_round_trip_with_names_string_labels_proba_and_formats(tmp_path, capsys):
    X, y = problems.load("heart")
    frame = pd.DataFrame(X, columns=problems.feature_names("heart"))
    frame["diagnosis"] = np.where(y == 1, "sick", "ok")
    path = tmp_path / "heart.csv"
    frame.to_csv(path, index=False)
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--target", "diagnosis", "--max-iter", "300",
                       "--restarts", "2", "-o", model)
    assert code == 0, err
    tree = gto.Tree.load(model)
    assert tree.feature_names == problems.feature_names("heart") and tree.target == "diagnosis"
    code, out, err = run(capsys, "predict", model, path, "--proba")
    table = pd.read_csv(pd.io.common.StringIO(out))
    assert list(table.columns) == ["prediction", "proba_ok", "proba_sick"]
    truth = frame["diagnosis"].to_numpy()
    assert table["prediction"].tolist() == [walk(tree, x) for x in X]
    classes, counts = literal_counts(tree, X, truth)
    freq = counts / counts.sum(axis=1, keepdims=True)
    leaf = _leaf_walk(tree)
    assert np.allclose(table[["proba_ok", "proba_sick"]].to_numpy(),
                       [freq[leaf(x)] for x in X], atol=1e-6)
    wrong = int(err.split("predict: ")[1].split(" of ")[0])
    assert wrong == walk_errors(tree, X, truth)
    for fmt, check in (("dot", lambda s: s.startswith("digraph")),
                       ("text", lambda s: s.startswith("if ") and "thal" in s),
                       ("json", lambda s: json.loads(s)["feature_names"][0] == "age")):
        code, out, _ = run(capsys, "export", model, "--format", fmt)
        assert code == 0 and check(out), fmt
    assert run(capsys, "export", model)[1].startswith("digraph")  # dot is the default


def test_sample_weight_column_init_file_and_time_limit(tmp_path, capsys):
    X, y = problems.load("liver")
    frame = pd.DataFrame(X, columns=problems.feature_names("liver"))
    w = np.where(y == 1, 3.0, 1.0)
    frame["w"], frame["class"] = w, y
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--sample-weight", "w", "--max-iter", "300",
                       "-o", model)
    assert code == 0, err
    tree = gto.Tree.load(model)
    assert tree.n_features == X.shape[1] and "w" not in tree.feature_names
    reported = float(err.split("fit: ")[-1].split(" of ")[0])
    assert reported == walk_errors(tree, X, y, w)
    again = tmp_path / "again.json"
    code, _, err = run(capsys, "fit", path, "--init", model, "--max-iter", "5", "-o", again)
    assert code == 0 and walk_errors(gto.Tree.load(again), X, y) <= walk_errors(tree, X, y)
    code, _, err = run(capsys, "fit", path, "--restarts", "400", "--max-iter", "2000",
                       "--time-limit", "1", "--alpha", "0", "-o", again)  # one search
    restarts_run = int(err.split(" of 400 restart")[0].rsplit(", ", 1)[1])
    assert code == 0 and restarts_run < 400


def test_help_shows_defaults_and_experiments_are_listed(capsys):
    with pytest.raises(SystemExit):
        main(["fit", "--help"])
    out = capsys.readouterr().out
    assert "(default: 3000)" in out and "--sample-weight" in out and "lexicographic" in out
    assert main(["experiment"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in ("table1", "figure4", "plots"))
