import numpy as np
import pytest

import problems


@pytest.mark.parametrize("name, shape", problems.DATASETS.items())
def test_bundled_data_sets(name, shape):
    X, y = problems.load(name)
    assert X.shape == shape and X.dtype == float
    assert y.dtype.kind == "i" and set(np.unique(y)) == {0, 1}
    assert np.all(np.isfinite(X))
    assert len(problems.feature_names(name)) == shape[1]


@pytest.mark.parametrize("name, shape", {**problems.NUMERIC, **problems.CATEGORICAL}.items())
def test_more_bundled_data_sets(name, shape):
    X, y = problems.load(name)
    assert X.shape == shape and np.all(np.isfinite(X))
    assert y.dtype.kind == "i" and len(np.unique(y)) >= 2
    assert len(problems.feature_names(name)) == shape[1]
    if name in problems.CATEGORICAL:  # category codes 0, 1, 2, ...
        assert np.array_equal(X, np.round(X)) and X.min() >= 0


def test_paper_tables_ship_with_the_package():
    rows = problems.paper_table("bennett_blue_table1")
    heart = {r["set"]: r for r in rows if r["data"] == "heart"}
    assert heart["test"]["EPTS"] == "20.6" and heart["test"]["FW"] == "17.8"
    odt = problems.paper_table("gunluk_odt_table8")
    assert {r["data"] for r in odt} >= {"monks-1", "votes", "krkp", "mush"}
    with pytest.raises(ValueError, match="unknown paper table"):
        problems.paper_table("nope")


def test_unknown_data_set():
    with pytest.raises(ValueError, match="unknown data set"):
        problems.load("iris")


@pytest.mark.parametrize("n", [2, 5, 10])
def test_synthetic_is_labelled_by_its_tree(n):
    data = problems.synthetic(n, n_train=300, n_test=700, random_state=n)
    assert data.X_train.shape == (300, n) and data.X_test.shape == (700, n)
    assert data.tree.structure == ((0, 1), (0, 1))
    assert np.all((data.X_train >= 0) & (data.X_train <= 1))
    assert np.all(np.abs(data.tree.W) <= 1) and np.all(np.abs(data.tree.gamma) <= 1)
    assert data.tree.n_errors(data.X_train, data.y_train) == 0
    assert np.array_equal(data.tree.predict(data.X_test), data.y_test)
    assert 0.1 <= data.y_train.mean() <= 0.9


def test_synthetic_is_reproducible():
    a = problems.synthetic(3, 50, 10, random_state=4)
    b = problems.synthetic(3, 50, 10, random_state=4)
    assert np.array_equal(a.X_train, b.X_train) and np.array_equal(a.tree.W, b.tree.W)
