"""Every bad input and every interruption ends cleanly, nothing is lost or clobbered.

One test (or more) per case, then hypothesis suites that
feed random structures, labels, weights and corrupted model files to the API.
Predictions are checked against ``walk``, a literal tree walk (tests/truths.py).
Everything is written under ``tmp_path``; FIFOs and symlinks are made there
(never a device or a system path).
"""
import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

import gto
import gto.engine._objectives
import problems
import tabu
from gto.cli._main import main
from gto.engine._crossover import purify
from gto.engine._hinge_lp import solve_hinge_lp
from gto.engine._problem import TreeProblem
from gto.utils._atomic import check_writable, write_text_atomic
from gto.utils.status import Status

from truths import walk, walk_errors

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIG2 = ((0, 1), (0, 1))


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def csv_file(tmp_path, X, y, name="d.csv", target="class"):
    path = tmp_path / name
    cols = [f"f{j}" for j in range(X.shape[1])]
    lines = [",".join(cols + [target])]
    lines += [",".join([*(repr(float(v)) for v in row), str(c)]) for row, c in zip(X, y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def heart_csv(tmp_path):
    X, y = problems.load("heart")
    return csv_file(tmp_path, X, y, "heart.csv")


def gto_env():
    return dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))


# -- never replace a FIFO, a device or a symlink ---------------------------------------------
def _read_fifo(path, box):
    with open(path, "rb") as fh:
        box.append(fh.read())


def _fifo_reader(path):
    """A daemon thread reading ``path``; ``finish()`` unblocks it if nobody wrote to the FIFO."""
    box = []
    reader = threading.Thread(target=_read_fifo, args=(path, box), daemon=True)
    reader.start()

    def finish(timeout):
        reader.join(timeout)
        if reader.is_alive() and stat.S_ISFIFO(os.lstat(path).st_mode):
            os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # let the reader see EOF
            reader.join(5)
        return box

    return finish


def test_fifo_is_written_through_not_replaced(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    finish = _fifo_reader(fifo)
    write_text_atomic(fifo, "hello\n")
    box = finish(10)
    assert box == [b"hello\n"] and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_cli_fit_to_a_fifo_and_through_a_symlink(tmp_path, heart_csv, capsys):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    finish = _fifo_reader(fifo)
    code, _, err = run(capsys, "fit", heart_csv, "--max-iter", "30", "-o", fifo, "-q")
    box = finish(30)
    assert code == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and json.loads(box[0])["format"] == "gto.Tree"
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    assert run(capsys, "fit", heart_csv, "--max-iter", "30", "-o", link, "-q")[0] == 0
    assert os.path.islink(link) and os.readlink(link) == str(target)
    assert gto.Tree.load(target).n_decisions == 3


def test_regular_file_check_refuses_a_folder(tmp_path):
    """The device-node rule's unit: only regular files are replaced; a folder is an error."""
    with pytest.raises(IsADirectoryError):
        write_text_atomic(tmp_path, "x")
    with pytest.raises(IsADirectoryError):
        check_writable(tmp_path)


# -- file modes ------------------------------------------------------------------------
def test_new_files_get_the_umask_mode_and_overwritten_files_keep_theirs(tmp_path):
    old = os.umask(0o027)
    try:
        new = tmp_path / "new.txt"
        write_text_atomic(new, "a")
        assert stat.S_IMODE(os.stat(new).st_mode) == 0o640
        kept = tmp_path / "kept.txt"
        kept.write_text("old")
        os.chmod(kept, 0o604)
        write_text_atomic(kept, "new")
        assert stat.S_IMODE(os.stat(kept).st_mode) == 0o604 and kept.read_text() == "new"
    finally:
        os.umask(old)


# -- the output is checked before the fit; a late failure keeps the model ---------------
def test_unwritable_output_fails_before_fitting(tmp_path, heart_csv, capsys, monkeypatch):
    def no_fit(*args, **kwargs):
        raise AssertionError("fitted although the output cannot be written")

    monkeypatch.setattr("gto.cli._main.fit", no_fit)
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "fit", heart_csv, "-o", blocker / "m.json")
    assert code == 2 and "-o" in err and err.count("\n") == 1


def test_late_write_failure_keeps_the_model_and_says_where(tmp_path, heart_csv, capsys,
                                                             monkeypatch):
    target = tmp_path / "m.json"
    save = gto.Tree.save

    def failing_save(self, path):
        if str(path) == str(target):
            raise PermissionError(13, "Permission denied")
        save(self, path)

    monkeypatch.setattr(gto.Tree, "save", failing_save)
    code, _, err = run(capsys, "fit", heart_csv, "--max-iter", "30", "-o", target, "-q")
    assert code == 2 and "the fitted model is in" in err
    rescue = err.rsplit("the fitted model is in ", 1)[1].strip()
    try:
        assert gto.Tree.load(rescue).n_decisions == 3
    finally:
        os.unlink(rescue)


# -- Ctrl-C ------------------------------------------------------------------------------
def _default_sigint_in_child():
    """``preexec_fn``: the child starts with SIGINT at its default (see ``default_sigint``)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _sigint_at(iteration):
    def callback(it, state, value):
        if it == iteration:
            os.kill(os.getpid(), signal.SIGINT)

    return callback


def test_sigint_stops_optimize_returns_best_and_warns(default_sigint):
    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(FIG2, X.shape[1])
    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = gto.optimize(tree, X, y, max_iter=5000, restarts=3, random_state=0,
                           callback=_sigint_at(40))
    assert res.status == "interrupted" and res.status == Status.INTERRUPTED
    assert len(res.restarts) == 1 and res.nit < 100  # the whole call stopped, not one restart
    assert res.n_errors == walk_errors(res.tree, X, y) <= res.start_n_errors


def test_sigint_stops_the_estimator_and_cross_validation(default_sigint):
    from sklearn.model_selection import cross_val_score

    X, y = problems.load("heart")
    calls = []
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    # no internal CV; restarts end by patience, so many of them keep the search going
    model = gto.GTOClassifier(max_iter=10**7, alpha=0.0, restarts=1000, random_state=0)
    fit = model.fit

    def counting_fit(*args, **kwargs):
        calls.append(1)
        return fit(*args, **kwargs)

    model.fit = counting_fit
    timer.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with pytest.raises(KeyboardInterrupt):
                model.fit(X, y)
    finally:  # a fit that ended first must not leave the signal to a later test
        timer.cancel()
        timer.join()
    assert len(calls) == 1 and model.tree_.n_decisions == 3  # recorded, then re-raised
    timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            with pytest.raises(KeyboardInterrupt):  # searched grid points only (svm=False)
                cross_val_score(gto.GTOClassifier(max_iter=10**7, restarts=1000, svm=False,
                                                  random_state=0), X, y, cv=3, error_score="raise")
    finally:
        timer.cancel()
        timer.join()
    assert time.perf_counter() - t0 < 60


def test_gto_fit_sigint_after_2s_writes_the_best_tree_and_exits_130(tmp_path, heart_csv):
    model = tmp_path / "m.json"
    old = os.umask(0o027)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "gto", "fit", str(heart_csv), "--restarts", "1000",
             "--alpha", "0", "-o", str(model)],  # no internal CV: the final search runs
            stderr=subprocess.PIPE, text=True, env=gto_env(), cwd=tmp_path,
            preexec_fn=_default_sigint_in_child)
    finally:
        os.umask(old)
    first = proc.stderr.readline()  # "fit: N points ...": the fit has started
    assert first.startswith("fit:"), first
    time.sleep(2)
    proc.send_signal(signal.SIGINT)
    with proc.stderr:  # closed here: an open pipe is a ResourceWarning (warnings are errors)
        err = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, err
    assert "interrupted" in err and "Traceback" not in err and "SystemError" not in err
    assert stat.S_IMODE(os.stat(model).st_mode) == 0o640
    tree = gto.Tree.load(model)
    X, y = problems.load("heart")
    n_errors = int(err.split("(")[1].split(" of ")[0])
    assert walk_errors(tree, X, y) == n_errors < np.sum(y != np.bincount(y).argmax())


# -- command-line mistakes: one line, exit 2 --------------------------------------------------
def test_classes_without_leaves(tmp_path, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    three = csv_file(tmp_path, X, np.arange(60) % 3, "three.csv")
    code, _, err = run(capsys, "fit", three, "--structure", "(0,1)", "-o", tmp_path / "m.json")
    assert code == 2 and "have no leaf" in err and err.count("\n") == 1
    # five classes, four leaves at --depth 2: fitted as GTOClassifier does, with a note
    y = np.repeat(np.arange(5), [16, 8, 12, 14, 10])
    five = csv_file(tmp_path, X, y, "five.csv")
    code, _, err = run(capsys, "fit", five, "-o", tmp_path / "m.json")
    assert code == 0 and "5 classes" in err and "--depth" in err and "errors" in err
    model = gto.Tree.load(tmp_path / "m.json")
    assert sorted(set(model.leaf_classes.tolist())) == [0, 2, 3, 4]  # all but the lightest
    assert walk_errors(model, X, y) >= 8  # class 1 has no leaf


def test_numeric_target_with_hundreds_of_values(tmp_path, capsys):
    X, _ = problems.load("heart")
    path = csv_file(tmp_path, X[:, 1:], X[:, 0] + 0.5, "t.csv")
    code, _, err = run(capsys, "fit", path, "-o", tmp_path / "m.json")
    assert code == 2 and "really the class column" in err and err.count("\n") == 1


def test_bad_options_are_usage_errors(tmp_path, heart_csv, capsys):
    for argv in (["fit", heart_csv, "--method", "frank-wolfe", "--objective", "minimum"],
                 ["fit", heart_csv, "--seed", "-1"],
                 ["experiment", "table1", "--jobs", "0"],
                 ["experiment", "table1", "--peers", "bogus"],
                 ["experiment", "table1", "--max-iter", "-5"],
                 ["experiment", "figure4", "--max-iter", "-5"]):
        with pytest.raises(SystemExit) as exc:
            main([str(a) for a in argv])
        assert exc.value.code == 2, argv
        err = capsys.readouterr().err
        assert "error" in err and "Traceback" not in err


def test_constant_column_at_1e308(tmp_path, capsys):
    X, y = problems.load("heart")
    X = X.copy()
    X[:, 3] = 1e308
    path = csv_file(tmp_path, X, y)
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--max-iter", "200", "-o", model, "-q")
    assert code == 0, err
    tree = gto.Tree.load(model)
    assert tree.W[:, 3].tolist() == [0.0, 0.0, 0.0]
    assert walk_errors(tree, X, y) < np.sum(y == 1)


# -- missing values in the target --------------------------------------------------------------
@pytest.mark.parametrize("marker", ["?", "NA", "NaN", ""])
def test_missing_target_values_are_rejected_or_dropped(tmp_path, capsys, marker):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int).astype(str)
    y[6] = marker
    path = csv_file(tmp_path, X, y)
    code, _, err = run(capsys, "fit", path, "-o", tmp_path / "m.json")
    assert code == 2 and "line 8" in err and "missing value" in err
    code, _, err = run(capsys, "fit", path, "--drop-na", "--max-iter", "50", "-o",
                       tmp_path / "m.json")
    assert code == 0 and "dropped 1 row" in err
    assert sorted(gto.Tree.load(tmp_path / "m.json").classes.tolist()) == [0, 1]


# -- label types round-trip --------------------------------------------------------------------
def test_float_labels_score_correctly(tmp_path, capsys):
    X, y = problems.load("heart")
    path = csv_file(tmp_path, X, y.astype(float))  # written as 0.0 / 1.0
    model = tmp_path / "m.json"
    assert run(capsys, "fit", path, "--max-iter", "200", "-o", model, "-q")[0] == 0
    tree = gto.Tree.load(model)
    assert tree.leaf_classes.dtype.kind == "f" and json.loads(model.read_text())["label_type"] == "float"
    code, out, err = run(capsys, "predict", model, path)
    wrong = int(err.split("predict: ")[1].split(" of ")[0])
    assert code == 0 and wrong == walk_errors(tree, X, y.astype(float)) < 100
    assert out.splitlines()[1] in ("0.0", "1.0")


# -- 8, 9. corrupted model files -------------------------------------------------------------------
def _model_dict():
    tree = gto.Tree.from_structure(FIG2, 2, W=[[1, 0], [0, 1], [1, 1]], gamma=[0, 0, 1])
    return tree.to_dict()


@pytest.mark.parametrize("key", ["W", "gamma"])
def test_null_weights_are_rejected(tmp_path, key):
    data = _model_dict()
    data[key] = None
    path = tmp_path / "m.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=key):
        gto.Tree.load(path)


def test_deep_nesting_is_a_one_line_error(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match="not a gto model"):
        gto.Tree.load(path)
    for depth in (500, 5000):
        text = json.dumps({**_model_dict(), "structure": "S"})
        path.write_text(text.replace('"S"', "[" * depth + "[0, 1]" + ", 0]" * depth))
        with pytest.raises(ValueError, match="gto model"):
            gto.Tree.load(path)
        code, _, err = run(capsys, "show", path)
        assert code == 2 and err.count("\n") == 1
    deep = "(" * 5000 + "0,1" + "),1" * 5000
    code, _, err = run(capsys, "fit", tmp_path / "x.csv", "--structure", deep)
    assert code == 2 and err.count("\n") == 1


# -- subtrees of classes absent from y ----------------------------------------------------------
def test_unused_subtrees_are_fitted_and_stay_put():
    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(((0, 1), (2, 3)), X.shape[1])
    tree.W[2] = np.arange(X.shape[1])
    res = gto.optimize(tree, X, y, max_iter=300, random_state=0, leaves="keep")
    assert res.tree.W[2].tolist() == tree.W[2].tolist()  # decision 2 splits classes 2 and 3
    assert res.n_errors == walk_errors(res.tree, X, y) < np.sum(y == 1)
    w = np.where(y == 1, 0.0, 1.0)  # a whole class with zero weight
    res = gto.optimize(gto.Tree.from_structure(FIG2, X.shape[1]), X, y, max_iter=100,
                       sample_weight=w, random_state=0)
    assert res.n_errors == walk_errors(res.tree, X, y, w) == 0


def test_estimator_rejects_leaf_labels_outside_y():
    X, y = problems.load("heart")
    with pytest.raises(ValueError, match=r"leaf labels \[7\]"):
        gto.GTOClassifier(structure=((0, 1), (0, 7)), max_iter=20).fit(X, y)


# -- deep trees keep a finite objective ---------------------------------------------------------
def test_product_objective_of_a_depth_9_tree_is_finite():
    X, y = problems.load("heart")
    tree = gto.Tree.complete(9, [0, 1], X.shape[1])
    res = gto.optimize(tree, X, y, max_iter=30, random_state=0)
    assert np.isfinite(res.fun) and np.isfinite(res.min_fun) and res.fun > 0
    assert res.n_errors == walk_errors(res.tree, X, y)
    factors = np.array([[1e200, 1e200, 0.0], [1e200, 1e200, 1.0], [2.0, 3.0, 1.0]])
    P = gto.engine._objectives.class_product(factors)
    assert P[0] == 0 and P[1] == gto.engine._objectives.PRODUCT_CAP and P[2] == 6.0


# -- extreme feature scales -----------------------------------------------------------------
def test_extreme_scales_give_the_same_trees():
    X, y = problems.load("heart")
    tree = gto.Tree.from_structure(FIG2, X.shape[1])
    plain = gto.optimize(tree, X, y, max_iter=300, random_state=0)
    factors = np.ones(X.shape[1])
    factors[0], factors[1] = 1e155, 1e-200
    Xs = X * factors
    scaled = gto.optimize(tree, Xs, y, max_iter=300, random_state=0)
    assert scaled.n_errors == walk_errors(scaled.tree, Xs, y) == plain.n_errors
    Xc = np.column_stack([X, np.full(len(X), 1e200), np.full(len(X), -1e308)])
    const = gto.optimize(gto.Tree.from_structure(FIG2, Xc.shape[1]), Xc, y, max_iter=300,
                         random_state=0)
    assert const.n_errors == walk_errors(const.tree, Xc, y) == plain.n_errors
    assert np.all(const.tree.W[:, -2:] == 0)


# -- broken pipe ----------------------------------------------------------------------------
def test_broken_pipe_exits_quietly(tmp_path):
    """Like `gto show m.json | head`: the reader has gone before the output is written."""
    X, y = problems.load("heart")
    data = csv_file(tmp_path, X, y)
    model = tmp_path / "m.json"
    gto.Tree.from_structure(FIG2, X.shape[1], W=np.eye(3, X.shape[1]), gamma=[50, 1, 100]) \
        .save(model)
    for argv in (["show", model], ["predict", model, data, "-q"], ["export", model]):
        read, write = os.pipe()
        os.close(read)  # the reader left
        done = subprocess.run([sys.executable, "-m", "gto", *map(str, argv)], stdout=write,
                              stderr=subprocess.PIPE, env=gto_env(), timeout=120)
        os.close(write)
        assert done.stderr == b"" and done.returncode == 141, (argv, done.stderr)


# -- smaller ones ---------------------------------------------------------------------------
def test_input_messages_name_the_argument():
    import scipy.sparse as sp

    X, y = problems.load("heart")
    tree = gto.Tree.from_structure((0, 1), X.shape[1])
    dense = gto.optimize(tree, X, y, max_iter=20, random_state=0)
    sparse = gto.optimize(tree, sp.csr_matrix(X), y, max_iter=20, random_state=0)
    assert sparse.n_errors == dense.n_errors
    for kwargs, error, name in (
            (dict(sample_weight=["a"] * len(y)), TypeError, "sample_weight"),
            (dict(random_state=-1), ValueError, "random_state"),
            (dict(random_state="0"), TypeError, "random_state"),
            (dict(time_limit="5"), TypeError, "time_limit")):
        with pytest.raises(error, match=name):
            gto.optimize(tree, X, y, max_iter=5, **kwargs)
    res = gto.optimize(tree, X, y, max_iter=20, random_state=np.random.RandomState(0))
    assert res.n_errors == walk_errors(res.tree, X, y)
    with pytest.raises(ValueError) as exc:
        gto.optimize(tree, X, np.zeros(len(y), dtype=np.int64))
    assert "np.int64" not in str(exc.value) and "(0)" in str(exc.value)


def test_model_files_from_fit_old_files_and_bom(tmp_path, heart_csv, capsys):
    model = tmp_path / "m.json"
    assert run(capsys, "fit", heart_csv, "--max-iter", "30", "-o", model, "-q")[0] == 0
    tree = gto.Tree.load(model)
    old = {"format": "gto.Model", "version": 1, "feature_names": tree.feature_names,
           "target": "class", "tree": {**tree.to_dict(), "version": 1}}
    old_path = tmp_path / "old.json"
    old_path.write_text(json.dumps(old))
    again = gto.Tree.load(old_path)
    assert again.feature_names == tree.feature_names and again.target == "class"
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + model.read_bytes())
    assert gto.Tree.load(bom).W.tolist() == tree.W.tolist()


def test_epts_nan_objective_is_not_success_and_linprog_empty_c():
    res = tabu.epts(lambda u: np.nan, A_ub=[[1.0, 1.0]], b_ub=[1.0], max_iter=10)
    assert not res.success and res.status == Status.ERROR and "NaN" in res.message
    half = tabu.epts(lambda u: np.nan if u.sum() == 0 else -u.sum(), A_ub=[[1.0, 1.0]],
                     b_ub=[1.0], max_iter=10)
    assert half.success and half.fun == -1.0
    with pytest.raises(ValueError, match="c must be"):
        tabu.linprog([])


# -- hypothesis: random structures, labels, weights ----------------------------------------------
#: an error message must name what was wrong (as a word: "identity" does not name y)
ARGUMENT = re.compile(r"\b(X|y|sample_weight|structure|labels?|tree|class(es)?)\b")


def _structure(draw, n_decisions, labels):
    if n_decisions == 0:
        return draw(st.sampled_from(labels))
    left = draw(st.integers(0, n_decisions - 1))
    return (_structure(draw, left, labels), _structure(draw, n_decisions - 1 - left, labels))


@st.composite
def fit_cases(draw):
    n, d = draw(st.integers(2, 25)), draw(st.integers(1, 3))
    kind = draw(st.sampled_from(["int", "str", "float"]))
    pool = {"int": [0, 1, 2, 7], "str": ["a", "b", "c"], "float": [0.0, 1.5, -2.0]}[kind]
    spec = _structure(draw, draw(st.integers(1, 5)), pool)
    leaves = sorted(set(gto.Tree(spec, 1).leaf_classes.tolist()) if isinstance(spec, tuple)
                    else {spec}, key=str)
    # mostly labels the tree has (a subset: unused subtrees), sometimes one it has not
    used = draw(st.lists(st.sampled_from(leaves), min_size=min(2, len(leaves)),
                         max_size=len(leaves), unique=True))
    if draw(st.integers(0, 9)) == 0:
        used.append(draw(st.sampled_from(pool)))
    used = used[:n]
    labels_y = used + draw(st.lists(st.sampled_from(used), min_size=n - len(used),
                                    max_size=n - len(used)))
    # a grid of moderate values, per column times a scale (1e-200 .. 1e155); sometimes
    # points that (nearly) coincide, whatever their labels, and one far out
    X = np.array(draw(st.lists(st.integers(-50, 50), min_size=n * d, max_size=n * d)),
                 dtype=float).reshape(n, d) / 10
    X *= draw(st.lists(st.sampled_from([1.0, 1.0, 1e-7, 1e7, 1e-200, 1e155]), min_size=d,
                       max_size=d))
    for _ in range(draw(st.integers(0, 2))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        X[j] = X[i] * (1 + draw(st.sampled_from([0.0, 1e-12, 1e-7, 1e-3])))
    if draw(st.booleans()):
        X[draw(st.integers(0, n - 1))] *= draw(st.sampled_from([1e7, -1e7, 1e-7]))
    weights = draw(st.one_of(st.none(), st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]),
                                                 min_size=n, max_size=n)))
    return spec, X, np.array(labels_y), weights


#: more examples locally: GTO_HYPOTHESIS_EXAMPLES=300 pytest --hypothesis-seed=N ...
FIT_EXAMPLES = int(os.environ.get("GTO_HYPOTHESIS_EXAMPLES", 60))


#: found by the widened strategy (300 examples, --hypothesis-seed=1): points a sliver apart
#: with another far out made the hinge LP cycle through rising pivots (no convergence in
#: 100 000 pivots) and the crossover pick a dependent row (SingularBlockError)
SLIVERS = np.array([[-3.2e-200, -5e-08], [-4e-200, -2e-08], [5e-201, 1.7e-07], [7e-201, 2.3e-07],
                    [-2.5e-200, -3e-07], [2e-200, -1.2e-07], [-4.8e-200, 1.8e-07], [3e-201, 3e-07],
                    [3.3e-193, -2.8], [-3.1e-200, 1.1e-07], [-1.7e-200, -2.5e-07],
                    [-2.5e-200, 1.7e-07], [4e-200, 2.1e-07], [8e-201, 1.4e-07], [-3.1e-200, -4e-07],
                    [2.4e-200, 1.6e-07], [-4.60000046e-200, -3.50000035e-07],
                    [-4.6e-200, -3.5e-07], [-6e-201, -1.3e-07], [-1.5e-200, 4.2e-07],
                    [-2.4e-200, 2.9e-07], [-1.1e-200, -4.3e-07], [-4.8e-200, 1.8e-07]])


@settings(max_examples=FIT_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fit_cases(), st.sampled_from(["product", "minimum", "count", "lexicographic"]))
@example(((0.0, (-2.0, 0.0)), SLIVERS, np.array([-2.0, 0, -2, -2, 0, 0, 0, 0, -2, 0, -2, 0, -2,
                                                  0, 0, -2, 0, 0, 0, 0, -2, -2, -2]), None),
         "lexicographic")
@example(((1, (0, (0, (0, 2)))), np.array([[0, 0, 0], [0, 0, 0.1], [0, 0, 0], [0.1, 0, 0],
                                           [-1e6, 0, 0], [0, 0.1, 0]]),
          np.array([0, 1, 2, 0, 0, 0]), None), "product")
@example(((1, (0, (0, (0, 0)))), np.array([[-9e-201, 1.5e155, 4.4], [-9e-201, 4.2e155, -3.7],
                                           [2.8e-200, 3.2e155, -1.5], [-1.7e-193, 1e162, 4.3e7],
                                           [-1.1e-200, -3.2e155, -4.4],
                                           [-2.3e-200, 3e155, 2.0]]),
          np.array([0, 1, 1, 0, 1, 0]), None), "lexicographic")
@example((((1.5, (1.5, -2.0)), 0.0), np.array([[0, 0, 0], [-0.1, 0.7, 0], [0, 0, 1e13],
                                             [-0.1, 0, 0], [0, 0, -1e6], [0, 0.1, 0]]),
          np.array([-2.0, 1.5, 0, -2, -2, -2]), None), "product")  # a pivot element of 0
def test_hypothesis_optimize_fails_clearly_or_is_right(case, objective):
    spec, X, y, weights = case
    try:
        tree = gto.Tree.from_structure(spec, X.shape[1])
        res = gto.optimize(tree, X, y, objective=objective, max_iter=15, random_state=0,
                           sample_weight=weights)
    except (ValueError, TypeError) as exc:
        assert ARGUMENT.search(str(exc)), str(exc)
        return
    assert np.isfinite(res.fun)
    assert res.tree.predict(X).tolist() == [walk(res.tree, x) for x in X]
    assert res.n_errors == pytest.approx(walk_errors(res.tree, X, y, weights))
    assert res.n_errors <= walk_errors(tree, X, y, weights) + 1e-9


def hinge_highs(rows, cost):
    """``min sum c max(0, 1 - rows @ theta)`` by HiGHS (dual simplex, tight tolerances,
    no presolve: the defaults stop far from the optimum on these scales)."""
    T, m = rows.shape
    ref = linprog(np.concatenate([np.zeros(m), cost]), A_ub=np.hstack([-rows, -np.eye(T)]),
                  b_ub=-np.ones(T), bounds=[(None, None)] * m + [(0, None)] * T,
                  method="highs-ds", options=dict(presolve=False, dual_feasibility_tolerance=1e-10,
                                                  primal_feasibility_tolerance=1e-10))
    assert ref.status == 0, ref.message
    return float(cost @ np.maximum(0, 1 - rows @ ref.x[:m]))


def greedy_lp_matches_highs(X, y, seed):
    """The greedy start's robust LP for the root of ``(0, 1)`` (as gto.engine._starts builds it):
    our block simplex against HiGHS on the same scaled rows.  Returns (ours, highs)."""
    P = TreeProblem(gto.Tree.from_structure((0, 1), X.shape[1]), X, y)
    go_left = P.data.y == P.data.y[0]
    rows = np.where(go_left, -1.0, 1.0)[:, None] * P.data.X1
    cost = P.data.weight / np.where(go_left, P.data.weight[go_left].sum(), P.data.weight[~go_left].sum())
    rng = np.random.default_rng(seed)
    block = purify(rows, rng.normal(size=P.data.m), cost, rng)
    value, _ = solve_hinge_lp(block, cost)
    # rel 1e-6: the blocks are conditioned up to 1e7 (points of magnitude 1e-3 .. 1e7)
    assert value == pytest.approx(cost @ np.maximum(0, 1 - rows @ block.theta), rel=1e-6)
    return value, hinge_highs(rows, cost)


def test_hinge_lp_on_conflicting_duplicates_at_extreme_scale():
    """Found by the hypothesis suite: two points with conflicting labels coincide and another
    is 1e7 times farther out.  The block is then conditioned at 1e7 and a rate that is 0
    in exact arithmetic came out at 5e-10, so a flat edge looked like a descent edge whose
    ray never turned up (RuntimeError).  Slopes now count only beyond their rounding bound."""
    X = np.zeros((13, 2))
    X[10, 1], X[12, 1] = 6.25001e5, 6.25e-2
    y = np.array([0, 1] + [0] * 11)
    tree = gto.Tree.from_structure((0, 1), 2)
    res = gto.optimize(tree, X, y, max_iter=15, random_state=0)
    assert res.success and res.n_errors == walk_errors(res.tree, X, y) == 1.0  # the duplicate
    for seed in range(5):
        ours, highs = greedy_lp_matches_highs(X, y, seed)
        assert ours == pytest.approx(highs, rel=1e-7, abs=1e-9)


@pytest.mark.parametrize("seed", [102, 143, 245, 263] + list(range(12)))
def test_hinge_lp_matches_highs_at_extreme_scales(seed):
    """Exact duplicates with conflicting labels among points of magnitude 1e-3 .. 1e7 (the
    first four seeds raised RuntimeError before the fix; seed 263 then stopped at 0.76
    with HiGHS at 0.29: an edge whose only blocking rates were below the relative pivot
    tolerance, now pivoted on when the new block stays well conditioned)."""
    rng = np.random.default_rng(seed)
    d, n = int(rng.integers(1, 4)), int(rng.integers(4, 30))
    X = rng.normal(size=(n, d)) * 10.0 ** rng.integers(-3, 8, size=(n, 1))
    X[1:1 + int(rng.integers(1, 4))] = X[0]
    y = rng.integers(0, 2, n)
    y[0], y[1] = 0, 1
    ours, highs = greedy_lp_matches_highs(X, y, seed)
    assert ours == pytest.approx(highs, rel=1e-6, abs=1e-9)


# -- hypothesis: corrupted model files ----------------------------------------------------------
def _json_containers(inner):
    return st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False) | st.text(max_size=3),
    _json_containers, max_leaves=8)


@st.composite
def corrupted_models(draw):
    tree = gto.Tree.from_structure(FIG2, 2, W=[[1, 0], [0, 1], [1, 1]], gamma=[0, 0, 1])
    tree.record_training(np.array([[0, 0], [1, 1], [2, -1], [-1, 2]]), [0, 1, 1, 0],
                         feature_names=["a", "b"], target="t")
    data = tree.to_dict()
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(data)))
        action = draw(st.sampled_from(["delete", "replace", "null"]))
        if action == "delete":
            data.pop(key, None)
        else:
            data[key] = None if action == "null" else draw(JSON_VALUES)
    text = json.dumps(data)
    if draw(st.booleans()):  # cut the file short
        text = text[: draw(st.integers(0, len(text)))]
    return text


@settings(max_examples=150, deadline=None)
@given(corrupted_models())
def test_hypothesis_corrupted_model_files(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("m") / "m.json"
    path.write_text(text)
    try:
        tree = gto.Tree.load(path)
    except ValueError as exc:
        assert "gto model" in str(exc)
        return
    X = np.array([[0.5, -0.5], [3.0, 1.0], [-2.0, 0.1]])
    assert tree.predict(X).tolist() == [walk(tree, x) for x in X]
    if tree.leaf_counts is not None:
        P = tree.predict_proba(X)
        assert np.allclose(P.sum(axis=1), 1) and np.all(P >= 0)


def test_one_non_numeric_check_serves_tree_and_optimize():
    """Strings in a column the tree does not use: Tree.predict reads the numbers it needs
    (labels by hand: x0 <= 0.5 goes left to class 0).  gto.utils._validation.non_numeric is the
    one check, also the one that sends such data down optimize's categorical path."""
    import pandas as pd

    from gto.utils._validation import non_numeric

    tree = gto.Tree.from_structure((0, 1), 3, W=[[1.0, 0, 0]], gamma=[0.5])
    objects = np.array([[0.0, "a", 1], [1.0, "b", 2], [0.2, "a", 3]], dtype=object)
    frame = pd.DataFrame({"a": [0.0, 1.0, 0.2], "b": [True, False, True], "c": ["x", "y", "x"]})
    for X in (objects, frame):
        assert non_numeric(X)
        assert tree.predict(X).tolist() == [0, 1, 0]
    assert not non_numeric(np.array([[0.0, 1.0]], dtype=object)) and not non_numeric([[1, 2]])
