import sys

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.image import imread  # noqa: E402
from sklearn.tree import DecisionTreeClassifier  # noqa: E402

import gto  # noqa: E402
import problems  # noqa: E402
from experiments import common  # noqa: E402
from experiments import plots as pictures  # noqa: E402
from experiments import table1 as table1_experiment  # noqa: E402
from gto import plots  # noqa: E402


def pixels(path):
    """(height, width) of a PNG, read back as an image that is not blank."""
    image = imread(path)
    assert image.ndim == 3 and image.shape[2] in (3, 4)
    assert np.ptp(image[..., :3]) > 0
    return image.shape[:2]


@pytest.fixture(scope="module")
def data2d():
    d = problems.synthetic(2, n_train=80, n_test=0, random_state=1)
    return d.X_train, d.y_train


def test_decision_regions_draws_on_the_given_axes_with_names_and_legend(data2d):
    X, y = data2d
    tree = d_tree = gto.Tree.from_structure(((0, 1), (0, 1)), 2, W=[[1, 0], [0, 1], [1, 1]],
                                            gamma=[0.5, 0.5, 1.0])
    fig = Figure()
    ax = fig.subplots()
    assert plots.decision_regions(tree, X, y, ax=ax, feature_names=["age", "bp"]) is fig
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("age", "bp")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["0", "1"]
    wrong = int(np.sum(d_tree.predict(X) != y))  # counted here, shown in the title
    assert ax.get_title().endswith(f": {wrong} training errors")


def test_decision_regions_takes_an_estimator_fitted_on_a_dataframe(data2d):
    X, y = data2d
    df = pd.DataFrame(X, columns=["width", "height"])
    clf = gto.GTOClassifier(max_iter=50, random_state=0).fit(df, np.where(y == 1, "b", "a"))
    fig = plots.decision_regions(clf, df, np.where(y == 1, "b", "a"))
    ax = fig.axes[0]
    assert ax.get_xlabel() == "width" and ax.get_ylabel() == "height"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["a", "b"]


def test_decision_regions_needs_two_features():
    with pytest.raises(ValueError, match="2-D points"):
        plots.decision_regions(None, np.zeros((5, 3)), np.zeros(5), feature_names=["a", "b"])


def test_compare_regions_png(tmp_path, data2d):
    X, y = data2d
    tree = gto.optimize(gto.Tree.from_structure(((0, 1), (0, 1)), 2), X, y, max_iter=50,
                        random_state=0).tree
    cart = DecisionTreeClassifier(random_state=0).fit(X, y)
    fig = plots.compare_regions([tree, cart], X, y, titles=["GTO", "CART"], figsize=(6, 3),
                                resolution=60)
    assert len(fig.axes) == 2 and fig.axes[1].get_title().startswith("CART: ")
    fig.savefig(tmp_path / "regions.png", dpi=50)
    assert pixels(tmp_path / "regions.png") == (150, 300)


def test_convergence_draws_every_restart_and_the_best_so_far():
    X, y = problems.load("liver")
    tree = gto.Tree.from_structure(((0, 1), (0, 1)), X.shape[1])
    runs = [gto.optimize(tree, X, y, method=m, init="random", max_iter=150, restarts=3,
                         random_state=0) for m in ("tabu", "frank-wolfe")]
    fig = plots.convergence(runs, labels=["EPTS", "FW"])
    ax_value, ax_count = fig.axes
    assert len(ax_count.lines) == 2 * (3 + 1)  # three restarts and one best-so-far line each
    assert ax_value.get_xscale() == "log"  # a Frank-Wolfe run is among them
    best = ax_count.lines[3].get_ydata()  # the EPTS best so far, checked against the restarts
    histories = [r["history"]["n_errors"] for r in runs[0].restarts]
    assert len(histories) == 3
    length = max(map(len, histories))
    expect = [min(min(h[: i + 1]) for h in histories) for i in range(length)]
    assert np.array_equal(best, expect)
    assert not any(np.array_equal(np.minimum.accumulate(h), expect) for h in histories)
    only_epts = plots.convergence(runs[:1])
    assert only_epts.axes[0].get_xscale() == "linear"


def test_error_bars_from_a_tidy_dataframe():
    frame = pd.DataFrame([{"dataset": d, "arm": a, "set": s, "error": e}
                          for d in ("heart", "liver") for a in ("FW", "EPTS")
                          for s, e in (("train", 10.0), ("test", 20.0), ("test", 30.0))])
    fig = plots.error_bars(frame, title="t")
    train, test = fig.axes
    heights = sorted({round(p.get_height(), 6) for p in test.patches})
    assert heights == [25.0]  # mean of 20 and 30 for every bar
    assert len(train.patches) == 4 and {p.get_height() for p in train.patches} == {10.0}
    with pytest.raises(ValueError, match="error"):
        plots.error_bars(frame.drop(columns="error"))


def test_experiment_pictures(tmp_path):
    pictures.figure1(str(tmp_path), max_iter=30, restarts=2)
    assert pixels(tmp_path / "figure1.png")[0] > 300
    pictures.history(str(tmp_path), max_iter=30, dataset="liver", restarts=2)
    assert pixels(tmp_path / "history.png")[0] > 500
    split = next(common.synthetic_splits(5, 40, 40, 1))
    rows = common.run_split(split, {"C4.5": common.fit_c45}, 10)
    common.write_csv(tmp_path / "table1.csv", rows)
    pictures.table1(str(tmp_path))
    assert pixels(tmp_path / "table1.png")[1] > 800
    # the tidy frame carries the paper's figure beside ours
    frame = common.tidy(rows, table1_experiment.PAPER)
    paper = frame[frame["source"] == "paper"]
    assert sorted(paper["error"]) == [6.9, 19.4]  # Bennett & Blue, 5-d, C4.5 train / test


def test_missing_matplotlib_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"pip install 'gto\[plots\]'"):
        plots.error_bars(pd.DataFrame({"dataset": [], "arm": [], "set": [], "error": []}))
