"""What a new user reads and gets first: honest ``--help``, the CLI's fit equal to
GTOClassifier's, readable constant decisions, a quiet MIP solver, progress over
the whole estimator fit, and no folders made behind the user's back."""
import re
import subprocess
import sys

import numpy as np
import pytest

import gto
import problems
from gto.cli._main import build_parser, main


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def subparser(command):
    return build_parser()._subparsers._group_actions[0].choices[command]


def expanded_help(parser):
    """``{option: help text as printed}`` of each option of ``parser``."""
    formatter = parser._get_formatter()
    return {(a.option_strings or [a.dest])[-1]: formatter._expand_help(a)
            for a in parser._actions if a.help}


def test_fit_help_shows_every_default_once():
    helps = expanded_help(subparser("fit"))
    for dest, default in (("--objective", "product"), ("--method", "tabu"),
                          ("--restarts", "3"), ("--seed", "0"), ("--max-iter", "3000"),
                          ("--alpha", "auto"), ("--depth", "2"), ("--cv", "5"),
                          ("--target", "class"), ("--jobs", "1"), ("--init", "auto"),
                          ("--output", "model.json"), ("--sep", ",")):
        assert helps[dest].count(f"(default: {default})") == 1, dest
    for dest, text in helps.items():
        assert text.count("default") <= 1, dest
        assert "(default: None)" not in text and "(default: False)" not in text, dest
        assert "if this version has it" not in text
    assert "(default: dot)" in expanded_help(subparser("export"))["--format"]


def test_init_lists_every_accepted_start():
    text = " ".join(subparser("fit").format_help().split())
    listed = re.search(r"--init \{([a-z,]+)\} or FILE", text).group(1).split(",")
    assert set(listed) == set(gto.learners._estimator.INITS) >= {"cart", "axis"}


def test_cli_fit_equals_the_estimator_by_default(tmp_path, capsys):
    X, y = problems.load("liver")
    X, y = X[:90], y[:90]
    path = tmp_path / "d.csv"
    names = [f"f{j}" for j in range(X.shape[1])]
    rows = [",".join(names + ["class"])] + [
        ",".join([*(repr(float(v)) for v in row), str(c)]) for row, c in zip(X, y)]
    path.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.json"
    code, _, err = run(capsys, "fit", path, "--max-iter", "100", "-o", model)
    assert code == 0, err
    assert "5-fold CV" in err  # says what it runs
    clf = gto.GTOClassifier(max_iter=100, random_state=0).fit(X, y)
    tree = gto.Tree.load(model)
    assert np.allclose(tree.W, clf.tree_.W) and np.allclose(tree.gamma, clf.tree_.gamma)
    assert np.array_equal(tree.predict(X), clf.predict(X))


def test_output_into_a_missing_folder_is_one_line_exit_2(tmp_path, capsys):
    data = tmp_path / "d.csv"
    data.write_text("a,b,class\n" + "".join(f"{i},{i % 7},{i % 2}\n" for i in range(20)))
    target = tmp_path / "nowhere" / "m.json"
    code, _, err = run(capsys, "fit", data, "--alpha", "0", "-o", target)
    assert code == 2 and err.count("\n") == 1 and "no such folder" in err
    assert not (tmp_path / "nowhere").exists()
    model = tmp_path / "m.json"
    assert run(capsys, "fit", data, "--alpha", "0", "--max-iter", "20", "-q", "-o", model)[0] == 0
    for argv in (("predict", model, data), ("export", model)):
        code, _, err = run(capsys, *argv, "-o", target)
        assert code == 2 and err.count("\n") == 1 and not (tmp_path / "nowhere").exists()


def test_constant_decisions_and_empty_subsets_read_as_constants():
    tree = gto.Tree.from_structure(((0, 1), 1), 2, W=[[0, 0], [1, 0]], gamma=[-1.0, 0.5])
    lines = tree.to_text().splitlines()
    assert lines[0].startswith("if False:") and "0 <= -1" not in tree.to_text()
    tree = gto.Tree.from_structure(((0, 1), 1), 2, W=[[0, 0], [1, 0]], gamma=[2.0, 0.5])
    assert tree.to_text().startswith("if True:")
    sub = gto.Tree(((0, 1), 1), 2, W=np.zeros((2, 2)), gamma=[0.0, 0.0],
                   subsets=[(1, ()), (0, ("a",))])
    text = sub.to_text(["colour", "shape"])
    assert text.startswith("if False:") and "{}" not in text and "colour in {a}" in text
    X = np.array([["a", "b"], ["c", "b"]], dtype=object)  # empty set: every point goes right
    assert np.array_equal(sub.apply(X), [2, 2])


def test_mip_solve_prints_nothing_on_stdout(tmp_path):
    """HiGHS prints a banner to file descriptor 1 at its first use in a process."""
    script = ("import numpy as np, gto\n"
              "X = np.array([[0.], [1.], [2.], [3.]]); y = np.array([0, 0, 1, 1])\n"
              "r = gto.mip.solve(gto.Tree.complete(1, [0, 1], 1), X, y, time_limit=20)\n"
              "import sys; sys.stderr.write(f'errors {r.n_errors}\\n')\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False,
                          cwd=tmp_path, env=_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "errors 0" in proc.stderr and proc.stdout == ""


def _env():
    import os

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return dict(os.environ, PYTHONPATH=repo + os.pathsep + os.environ.get("PYTHONPATH", ""))


def test_verbose_shows_progress_over_the_internal_cv(capfd):
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))  # an XOR of two cuts: a searched tree wins, no SVM tree
    y = ((X[:, 0] + 0.2 * X[:, 2] > 0.6) ^ (X[:, 1] - 0.1 * X[:, 2] > 0.45)).astype(int)
    clf = gto.GTOClassifier(max_iter=300, random_state=0, verbose=1).fit(X, y)
    assert clf.alpha_ is not None  # a searched tree, so the final fit is a search
    err = capfd.readouterr().err
    n_fits = len(clf.cv_results_["params"]) * 5  # every grid point's first stage, five folds each
    assert "internal CV" in err and f"{n_fits}/{n_fits}" in err
    assert "gto.optimize" in err  # then the final search's bar


@pytest.mark.parametrize("command", ["fit", "predict", "show", "export", "experiment"])
def test_every_option_has_help(command):
    for action in subparser(command)._actions:
        assert action.help, (command, action.dest)
