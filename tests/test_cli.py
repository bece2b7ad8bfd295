import json
import re
import subprocess
import sys

import numpy as np
import pytest

import gto
import problems
from gto.cli._main import main

from truths import decision_counts


@pytest.fixture
def liver_csv(tmp_path):
    X, y = problems.load("liver")
    names = problems.feature_names("liver")
    path = tmp_path / "liver.csv"
    lines = [",".join(names + ["class"])]
    lines += [",".join([*(f"{v:g}" for v in row), str(c)]) for row, c in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_round_trip_fit_predict_show_export(tmp_path, liver_csv, capsys):
    model = tmp_path / "model.json"
    code, out, err = run(capsys, "fit", liver_csv, "--target", "class", "--structure",
                         "((0,1),(0,1))", "--objective", "product", "--method", "tabu",
                         "--restarts", "2", "--max-iter", "150", "-o", model)
    assert code == 0 and out == ""
    assert "training points misclassified" in err and "wrote" in err
    data = json.loads(model.read_text())
    assert data["format"] == "gto.Tree" and data["version"] == 2 and data["target"] == "class"
    assert data["feature_names"] == problems.feature_names("liver")
    tree = gto.Tree.load(model)
    assert tree.feature_names == problems.feature_names("liver") and tree.target == "class"

    code, out, err = run(capsys, "predict", model, liver_csv)
    assert code == 0
    lines = out.splitlines()
    X, y = problems.load("liver")
    assert lines[0] == "prediction" and len(lines) == len(y) + 1
    assert [int(v) for v in lines[1:]] == tree.predict(X).tolist()
    assert "points misclassified" in err

    preds = tmp_path / "pred.csv"
    assert run(capsys, "predict", model, liver_csv, "-o", preds, "-q") == (0, "", "")
    assert preds.read_text() == out

    code, out, _ = run(capsys, "show", model)
    assert code == 0 and "3 decisions" in out and "sgot" in out and "class 1" in out

    code, out, _ = run(capsys, "export", model, "--dot")
    assert code == 0 and out.startswith("digraph gto {") and out.rstrip().endswith("}")
    assert out.count("shape=box") == 3 and out.count("shape=ellipse") == 4
    assert out.count("->") == 6 and "sgot" in out


def test_string_labels_features_and_depth(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(60, 3))
    y = np.where(X[:, 0] + X[:, 1] > 1, "sick", "well")
    path = tmp_path / "d.csv"
    rows = ["a,b,c,label"] + [f"{r[0]},{r[1]},{r[2]},{c}" for r, c in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--target", "label", "--features", "a,b",
                       "--depth", "1", "--max-iter", "50", "-o", model, "-q")
    assert code == 0 and err == ""
    tree = gto.Tree.load(model)
    assert tree.n_features == 2 and sorted(tree.leaf_classes.tolist()) == ["sick", "well"]
    code, out, _ = run(capsys, "predict", model, path, "-q")
    assert code == 0 and set(out.split()[1:]) <= {"sick", "well"}
    code, _, err = run(capsys, "fit", path, "--target", "label", "--structure", "((0,1),(0,1))",
                       "-o", model)
    assert code == 2 and "not classes of column 'label'" in err


def test_parallel_restarts_give_the_same_model(tmp_path, liver_csv, capsys):
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    common = ["fit", liver_csv, "--restarts", "2", "--max-iter", "60", "--method",
              "frank-wolfe", "--alpha", "0", "-q"]  # one search: no internal CV
    assert run(capsys, *common, "--jobs", "1", "-o", one)[0] == 0
    assert run(capsys, *common, "--jobs", "2", "-o", two)[0] == 0
    assert json.loads(one.read_text()) == json.loads(two.read_text())


def test_bare_tree_files_are_accepted(tmp_path, liver_csv, capsys):
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1], W=np.eye(3, 6), gamma=[30, 90, 60])
    bare = tmp_path / "bare.json"
    tree.save(bare)
    code, out, _ = run(capsys, "predict", bare, liver_csv, "-q")
    assert code == 0 and [int(v) for v in out.split()[1:]] == tree.predict(X).tolist()
    code, out, _ = run(capsys, "show", bare)
    assert code == 0 and "x0" in out


def write(tmp_path, name, text, mode="w"):
    path = tmp_path / name
    (path.write_bytes if mode == "wb" else path.write_text)(text)
    return path


@pytest.mark.parametrize("name, content, message", [
    ("missing.csv", None, "no such file"),
    ("binary.csv", b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not a CSV text file"),
    ("ragged.csv", "a,b,class\n1,2,0\n1,2,0,7\n", "line 3 has 4 fields but the header has 3"),
    ("empty.csv", "", "the file is empty"),
    ("header.csv", "a,b,class\n", "no data rows"),
    ("text.csv", "a,b,class\n1,x,0\n2,3,1\n", "line 2, column 'b': 'x' is not a number"),
    ("nan.csv", "a,b,class\n1,nan,0\n2,3,1\n", "line 2, column 'b': missing value 'nan'"),
    ("inf.csv", "a,b,class\n1,inf,0\n2,3,1\n", "line 2, column 'b': 'inf' is not finite"),
    ("notarget.csv", "a,b,label\n1,2,0\n2,3,1\n", "no target column 'class'"),
    ("onelabel.csv", "a,b,class\n1,2,0\n2,3,0\n", "one class only"),
    ("blank.csv", "a,b,class\n1,2,0\n2,3, \n", "line 3, column 'class': missing value"),
])
def test_fit_rejects_bad_data_in_one_line(tmp_path, capsys, name, content, message):
    path = tmp_path / name
    if content is not None:
        write(tmp_path, name, content, "wb" if isinstance(content, bytes) else "w")
    code, out, err = run(capsys, "fit", path, "-o", tmp_path / "m.json")
    assert code == 2 and out == ""
    assert err.startswith("gto: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize("content, message", [
    ('{"format": "something else"}', "not a gto model file"),
    ("not json at all", "not a gto model file (not JSON)"),
    ('{"format": "gto.Model", "version": 1, "tree": {"format": "gto.Tree"}}',
     "not a gto model file"),
    ('[1, 2, 3]', "not a gto model file"),
])
def test_model_commands_reject_foreign_files(tmp_path, liver_csv, capsys, content, message):
    path = write(tmp_path, "model.json", content)
    for argv in (["show", path], ["export", path, "--dot"], ["predict", path, liver_csv]):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and message in err and err.count("\n") == 1


def test_predict_checks_the_feature_columns(tmp_path, liver_csv, capsys):
    model = tmp_path / "m.json"
    assert run(capsys, "fit", liver_csv, "--max-iter", "20", "-o", model, "-q")[0] == 0
    other = write(tmp_path, "other.csv", "mcv,alkphos\n1,2\n")
    code, _, err = run(capsys, "predict", model, other)
    assert code == 2 and "no feature column(s) 'sgpt'" in err
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), 6)
    bare = tmp_path / "bare.json"
    tree.save(bare)
    code, _, err = run(capsys, "predict", bare, other)
    assert code == 2 and "needs 6 feature columns, the file has 2" in err


def test_structure_is_parsed_safely(tmp_path, liver_csv, capsys):
    marker = tmp_path / "owned"
    evil = f"__import__('pathlib').Path({str(marker)!r}).touch()"
    code, _, err = run(capsys, "fit", liver_csv, "--structure", evil, "-o", tmp_path / "m.json")
    assert code == 2 and "not a nested-pair literal" in err and not marker.exists()
    code, _, err = run(capsys, "fit", liver_csv, "--structure", "(0, 1, 0)")
    assert code == 2 and "--structure: structure is not a binary tree" in err


def test_python_dash_m_gto_runs_the_command():
    done = subprocess.run([sys.executable, "-m", "gto", "--version"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == f"gto {gto.__version__}"


# -- constant decisions flagged from the model file's leaf counts ------------
FLAG = re.compile(r"\[decision (\d+); constant: all (\S+) training points go (left|right)")


def expected_flags(counts):
    return {(d, f"{max(l, r):g}", "left" if r == 0 else "right")
            for d, (l, r) in enumerate(counts) if (l == 0) != (r == 0)}


def check_flags(capsys, model, X):
    """`gto show`, `export --format text|dot` flag exactly the one-sided decisions of a walk."""
    counts = decision_counts(gto.Tree.load(model), X)
    want = expected_flags(counts)
    code, shown, _ = run(capsys, "show", model)
    assert code == 0 and set(FLAG.findall(shown)) == {(str(d), n, s) for d, n, s in want}
    code, text, _ = run(capsys, "export", model, "--format", "text")
    assert code == 0 and set(FLAG.findall(text)) == {(str(d), n, s) for d, n, s in want}
    code, dot, _ = run(capsys, "export", model, "--format", "dot")
    dashed = re.findall(r"d(\d+) \[shape=box, style=dashed, label=\"[^\"]*\\n\(constant: all "
                        r"(\S+) training points go (left|right)\)\"\]", dot)
    assert code == 0 and set(dashed) == {(str(d), n, s) for d, n, s in want}
    return counts, want


@pytest.fixture
def two_feature_data(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.uniform(-1, 1, size=(60, 2))
    y = (X[:, 0] + 0.3 * X[:, 1] > 0).astype(int)
    path = tmp_path / "d.csv"
    rows = "".join(f"{float(a)!r},{float(b)!r},{c}\n" for (a, b), c in zip(X, y))
    path.write_text("a,b,class\n" + rows)
    return path, X, y


def test_show_flags_a_root_that_sends_every_training_point_one_way(tmp_path, two_feature_data,
                                                                      capsys):
    _, X, y = two_feature_data
    # the root sends every point right (a + 10 > 0); decision 1 is never reached
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), 2, W=[[1.0, 0], [0, 1.0], [1.0, 0.3]],
                                   gamma=[-10.0, 0.0, 0.0])
    tree.record_training(X, y, feature_names=["a", "b"], target="class")
    model = tmp_path / "m.json"
    tree.save(model)
    counts, want = check_flags(capsys, model, X)
    assert counts[0].tolist() == [0, 60] and counts[1].tolist() == [0, 0]
    assert want == {(0, "60", "right")}  # an unreached decision is not "constant"
    _, shown, _ = run(capsys, "show", model)
    assert "(prune with tree.prune())" in shown
    pruned = gto.Tree.load(model).prune()  # from the recorded counts, no data needed
    assert pruned.n_decisions == 1 and pruned.predict(X).tolist() == tree.predict(X).tolist()


def test_show_flags_constant_decisions_of_a_model_written_by_fit(tmp_path, two_feature_data,
                                                                  capsys):
    data, X, y = two_feature_data
    start = gto.Tree.from_structure(((0, 1), (0, 1)), 2, W=[[0, 0], [1.0, 0], [1.0, 0.3]],
                                    gamma=[-1.0, 0.0, 0.0])  # root: 0 <= -1, all go right
    start.feature_names, start.target = ["a", "b"], "class"
    start.save(tmp_path / "start.json")
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", data, "--init", tmp_path / "start.json", "--max-iter", "1",
                       "-o", model, "-q")
    assert code == 0, err
    counts, want = check_flags(capsys, model, X)
    assert counts.sum(axis=1)[0] == len(X)
    assert want, "precondition: the fitted tree keeps a constant decision"


def test_fit_leaves_option_keeps_or_frees_the_leaf_classes(tmp_path, two_feature_data, capsys):
    data, X, y = two_feature_data
    start = gto.Tree.from_structure(((1, 1), (0, 1)), 2, W=[[1.0, 0], [0, 1.0], [0, 1.0]],
                                    gamma=[0.0, 0.0, 0.0])
    start.feature_names, start.target = ["a", "b"], "class"
    start.save(tmp_path / "start.json")
    labels = {}
    for leaves in ("keep", "free"):
        model = tmp_path / f"{leaves}.json"
        code, _, err = run(capsys, "fit", data, "--init", tmp_path / "start.json", "--max-iter",
                           "20", "--leaves", leaves, "-o", model, "-q")
        assert code == 0, err
        fitted = gto.Tree.load(model)
        labels[leaves] = fitted.leaf_classes.tolist()
        assert fitted.n_errors(X, y) <= start.n_errors(X, y)
    assert labels["keep"] == [1, 1, 0, 1]
    # gto fit runs GTOClassifier: its warm start with the leaves chosen anew
    free = gto.GTOClassifier(init=start, max_iter=20, random_state=0, leaves="free").fit(X, y)
    assert labels["free"] == free.tree_.leaf_classes.tolist()
    with pytest.raises(SystemExit) as exit_:
        run(capsys, "fit", data, "--leaves", "fixed")
    assert exit_.value.code == 2
