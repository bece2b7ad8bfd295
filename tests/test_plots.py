import sys

import numpy as np
import pytest

pytest.importorskip("matplotlib")
from matplotlib.image import imread  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import gto  # noqa: E402
import problems  # noqa: E402
from experiments import common  # noqa: E402
from experiments import plots as pictures  # noqa: E402
from gto import plots  # noqa: E402


def pixels(path):
    """(height, width) of a PNG, read back as an image."""
    image = imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert np.ptp(image[..., :3]) > 0  # not a blank canvas
    return image.shape[:2]


@pytest.fixture(scope="module")
def data2d():
    d = problems.synthetic(2, n_train=80, n_test=0, random_state=1)
    return d.X_train, d.y_train


def test_decision_regions_png_has_figsize_times_dpi(tmp_path, data2d):
    X, y = data2d
    tree = gto.optimize(gto.Tree.from_structure(((0, 1), (0, 1)), 2), X, y, max_iter=50,
                        random_state=0).tree
    cart = DecisionTreeClassifier(random_state=0).fit(X, y)
    path = plots.decision_regions([tree, cart], X, y, tmp_path / "regions.png",
                                  titles=["GTO", "CART"], figsize=(6, 3), dpi=50, resolution=60)
    assert pixels(path) == (150, 300)


def test_decision_regions_needs_two_features(tmp_path):
    with pytest.raises(ValueError, match="2-D points"):
        plots.decision_regions([], np.zeros((5, 3)), np.zeros(5), tmp_path / "x.png")


def test_convergence_png(tmp_path):
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    runs = [gto.optimize(tree, X, y, method=m, init="greedy", max_iter=60, random_state=0)
            for m in ("tabu", "frank-wolfe")]
    path = plots.convergence(runs, tmp_path / "history.png", labels=["EPTS", "FW"],
                             figsize=(8, 3), dpi=80)
    assert pixels(path) == (240, 640)


def test_error_bars_png(tmp_path):
    rows = [{"dataset": d, "split": s, "arm": a, "train_error": 10.0 + s, "test_error": 20.0 - s,
             "decisions": 3, "seconds": 0.0, "failed": ""}
            for d in ("heart", "liver") for a in ("FW", "EPTS") for s in range(3)]
    path = plots.error_bars(common.summarize(rows), tmp_path / "bars.png", ["heart", "liver"],
                            ["FW", "EPTS"], title="t", figsize=(7, 3), dpi=60)
    assert pixels(path) == (180, 420)


def test_experiment_pictures(tmp_path):
    assert pixels(pictures.figure1(str(tmp_path), max_iter=30, restarts=2)) == (450, 1000)
    assert pixels(pictures.history(str(tmp_path), max_iter=30, dataset="liver")) == (400, 1000)
    split = next(common.synthetic_splits(2, 40, 40, 1))
    common.write_csv(tmp_path / "table1.csv",
                     common.run_split(split, {"C4.5": common.fit_c45}, 10))
    assert pixels(pictures.table1(str(tmp_path))) == (450, 1100)


def test_missing_matplotlib_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'gto\[plots\]'"):
        plots.error_bars({}, tmp_path / "x.png", [], [])
