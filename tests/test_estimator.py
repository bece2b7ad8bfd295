import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks

import gto
import problems


@parametrize_with_checks([gto.GTOClassifier(max_iter=150, random_state=0)])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


def test_multiclass_pipeline_and_grid_search():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), gto.GTOClassifier(max_iter=300, random_state=0))
    grid = GridSearchCV(pipe, {"gtoclassifier__objective": ["product", "minimum"]}, cv=3)
    grid.fit(X, y)
    assert grid.best_score_ > 0.85
    proba = grid.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)


def test_fit_predict_and_proba():
    X, y = problems.load("cancer")
    clf = gto.GTOClassifier(random_state=0, max_iter=2000).fit(X, y)
    assert clf.tree_.structure == ((0, 1), (0, 1))
    assert clf.score(X, y) >= 0.96
    assert np.array_equal(clf.predict(X), clf.tree_.predict(X))
    leaf = clf.apply(X)
    for k in np.unique(leaf):
        assert np.allclose(clf.predict_proba(X[leaf == k])[0], np.bincount(y[leaf == k], minlength=2) / np.sum(leaf == k))
    assert clf.n_iter_ == 2000
    assert clone(clf).get_params() == clf.get_params()


def test_custom_structure_and_string_labels():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 2))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + ((X[:, 1] > 0.5) & (X[:, 0] > 0))]
    clf = gto.GTOClassifier(structure=("a", ("b", "c")), max_iter=500, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert set(clf.predict(X)) <= {"a", "b", "c"}


def test_depth_too_small_for_classes():
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="depth"):
        gto.GTOClassifier(depth=1).fit(X, y)


def test_cross_validation_runs():
    X, y = problems.load("liver")
    scores = cross_val_score(gto.GTOClassifier(max_iter=300, random_state=0), X, y, cv=3)
    majority = cross_val_score(DummyClassifier(strategy="most_frequent"), X, y, cv=3)
    assert scores.mean() > majority.mean() + 0.03  # the floor: always the majority class
