import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import load_iris
from sklearn.dummy import DummyClassifier
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

import gto
import gto.learners._estimator
import problems

from truths import brute_force_depth2, walk_errors


@parametrize_with_checks([gto.GTOClassifier(max_iter=150, cv=2, random_state=0)])
def test_scikit_learn_conventions(estimator, check):
    check(estimator)


def test_multiclass_pipeline_and_grid_search():
    X, y = load_iris(return_X_y=True)
    pipe = make_pipeline(StandardScaler(), gto.GTOClassifier(max_iter=300, alpha=0.0, random_state=0))
    grid = GridSearchCV(pipe, {"gtoclassifier__objective": ["product", "minimum"]}, cv=3)
    grid.fit(X, y)
    assert grid.best_score_ > 0.85
    proba = grid.predict_proba(X)
    assert proba.shape == (150, 3) and np.allclose(proba.sum(axis=1), 1)


def test_fit_predict_and_proba():
    X, y = problems.load("cancer")
    clf = gto.GTOClassifier(alpha=0.0, random_state=0, max_iter=2000).fit(X, y)
    assert clf.tree_.structure == ((0, 1), (0, 1))
    assert clf.score(X, y) >= 0.96
    assert np.array_equal(clf.predict(X), clf.tree_.predict(X))
    leaf = clf.apply(X)
    for k in np.unique(leaf):
        share = np.bincount(y[leaf == k], minlength=2) / np.sum(leaf == k)
        assert np.allclose(clf.predict_proba(X[leaf == k])[0], share)
    # every restart (the estimator's default three) within max_iter moves; n_iter_ their sum
    runs = clf.result_.restarts
    assert len(runs) == 3 and all(0 < r["nit"] <= 2000 for r in runs)
    assert clf.n_iter_ == sum(r["nit"] for r in runs)
    assert clone(clf).get_params() == clf.get_params()


def test_custom_structure_and_string_labels():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 2))
    y = np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + ((X[:, 1] > 0.5) & (X[:, 0] > 0))]
    clf = gto.GTOClassifier(structure=("a", ("b", "c")), max_iter=500, random_state=0).fit(X, y)
    assert clf.score(X, y) > 0.9
    assert set(clf.predict(X)) <= {"a", "b", "c"}


def test_depth_too_small_for_classes():
    """Two leaves for iris's three classes of 50: the leaves go to the two smaller
    labels (equal weights), and a split separates setosa from versicolor exactly, so
    virginica's 50 points are the only errors."""
    X, y = load_iris(return_X_y=True)
    clf = gto.GTOClassifier(depth=1, random_state=0).fit(X, y)
    assert clf.tree_.leaf_classes.tolist() == [0, 1]
    assert clf.score(X, y) == pytest.approx(100 / 150)
    assert clf.result_.leafless_errors == 50


def test_cross_validation_runs():
    X, y = problems.load("liver")
    scores = cross_val_score(gto.GTOClassifier(max_iter=1000, cv=2, random_state=0), X, y, cv=3)
    majority = cross_val_score(DummyClassifier(strategy="most_frequent"), X, y, cv=3)
    assert scores.mean() > majority.mean() + 0.03  # the floor: always the majority class


# -- model selection ---------------------------------------------
def _tiny(seed=0, n=60):
    """Two informative features and three noise features; labels with 10 % flips."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 5))
    y = (X[:, 0] + 0.5 * X[:, 1] > 0.8).astype(int)
    flip = rng.uniform(size=n) < 0.1
    return X, np.where(flip, 1 - y, y)


def test_cv_selection_picks_the_best_held_out_score(monkeypatch):
    X, y = _tiny()
    grid = (1e4, 0.0, 0.3)  # a huge penalty first: selection must not just take the first
    monkeypatch.setattr(gto.learners._estimator, "ALPHA_GRID", grid)
    clf = gto.GTOClassifier(alpha="auto", cv=3, max_iter=60, random_state=0,
                            selection="best", svm=False).fit(X, y)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    literal = [cross_val_score(gto.GTOClassifier(alpha=a, max_iter=60, random_state=0),
                               X, y, cv=folds).mean() for a in grid]
    assert np.allclose(clf.cv_results_["mean_test_score"], literal, atol=1e-12)
    assert clf.alpha_ == grid[int(np.argmax(literal))]
    assert clf.best_index_ == int(np.argmax(literal))
    assert clf.cv_results_["rank_test_score"][clf.best_index_] == 1
    assert len(set(np.round(literal, 9))) > 1  # the grid points really differ here
    # refit on all the data with the chosen alpha
    again = gto.GTOClassifier(alpha=clf.alpha_, max_iter=60, random_state=0).fit(X, y)
    assert np.array_equal(again.tree_.W, clf.tree_.W)


def test_cv_results_layout_and_joint_budget_selection():
    X, y = _tiny(1)
    clf = gto.GTOClassifier(alpha="auto", max_features="auto", cv=2, max_iter=30,
                            random_state=0).fit(X, y)
    # with the SVM trees the penalty path is alpha 0 alone (searched from the SVM tree
    # of SVM_START_C), then the budgets without a penalty, then the SVM trees, then the
    # axis-aligned tree of the structure
    grid = ([(0.0, None, gto.learners._estimator.SVM_START_C)]
            + [(0.0, m, None) for m in gto.learners._estimator.MAX_FEATURES_GRID if m is not None]
            + [(None, None, c) for c in gto.learners._estimator.SVM_C_GRID] + [(None, 1, None)])
    res = clf.cv_results_
    assert [(p["alpha"], p["max_features"], p["svm_C"]) for p in res["params"]] == grid
    for key in ("param_alpha", "param_max_features", "param_svm_C", "split0_test_score",
                "split1_test_score", "mean_test_score", "std_test_score", "rank_test_score"):
        assert len(res[key]) == len(grid), key
    assert np.allclose(res["mean_test_score"],
                       (res["split0_test_score"] + res["split1_test_score"]) / 2, equal_nan=True)
    assert sorted(res["rank_test_score"])[0] == 1
    assert (clf.alpha_, clf.max_features_, clf.svm_C_) == grid[clf.best_index_]
    budget = clf.max_features_ or X.shape[1]
    assert np.all(np.count_nonzero(clf.tree_.W, axis=1) <= budget)


def _planted_axis(seed, n=90, n_features=10, noise=0.1):
    """Labels of an axis-aligned depth-2 tree (x0 <= .5, then x1 or x2 <= .5 gives
    class 0) with ``noise`` of them flipped; the other features are noise."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, n_features))
    y = np.where(X[:, 0] <= 0.5, X[:, 1] > 0.5, X[:, 2] > 0.5).astype(int)
    return X, np.where(rng.uniform(size=n) < noise, 1 - y, y)


def test_cv_picks_the_axis_aligned_budget_on_a_planted_axis_tree():
    """Few noisy points from an axis-aligned tree: oblique decisions fit the noise,
    the budget of one feature per decision generalises, and the internal CV sees
    it: its scores are those of a hand-run cross_val_score per budget."""
    X, y = _planted_axis(0)
    clf = gto.GTOClassifier(alpha=0.0, max_features="auto", cv=3, max_iter=300,
                            random_state=0, selection="best").fit(X, y)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    budgets = [1, 2, None]
    literal = [cross_val_score(gto.GTOClassifier(alpha=0.0, max_features=m, max_iter=300,
                                                 random_state=0), X, y, cv=folds).mean()
               for m in budgets]
    assert np.allclose(clf.cv_results_["mean_test_score"], literal, atol=1e-12)
    assert clf.max_features_ == 1 and literal[0] > literal[2]
    assert np.all(np.count_nonzero(clf.tree_.W, axis=1) == 1)
    # the refit has the planted tree's features: root on x0, children on x1 and x2,
    # and (exact axis-aligned start) the fewest errors of any axis-aligned tree
    used = [int(np.flatnonzero(w)[0]) for w in clf.tree_.W]
    assert used[0] == 0 and sorted(used[1:]) == [1, 2]
    assert np.sum(clf.predict(X) != y) == brute_force_depth2(X, y)


def test_one_standard_error_rule(monkeypatch):
    """selection="1se": the largest alpha whose mean CV accuracy is within one
    standard error of the best, from hand-run cross_val_score per alpha."""
    X, y = _tiny(4)  # a case where the two rules differ (checked below)
    grid = (0.0, 0.3, 3.0, 30.0)
    monkeypatch.setattr(gto.learners._estimator, "ALPHA_GRID", grid)
    folds = StratifiedKFold(3, shuffle=True, random_state=0)
    scores = np.array([cross_val_score(gto.GTOClassifier(alpha=a, max_iter=60, random_state=0),
                                       X, y, cv=folds) for a in grid])
    mean = scores.mean(axis=1)
    best = int(np.argmax(mean))
    se = np.std(scores[best], ddof=1) / np.sqrt(3)
    simplest = max(i for i in range(len(grid)) if mean[i] >= mean[best] - se)
    assert simplest != best  # the rules differ on this case
    clf = gto.GTOClassifier(alpha="auto", cv=3, max_iter=60, random_state=0,
                            selection="1se", svm=False).fit(X, y)
    assert clf.alpha_ == grid[simplest] and clf.best_index_ == simplest
    plain = gto.GTOClassifier(alpha="auto", cv=3, max_iter=60, random_state=0,
                              selection="best", svm=False).fit(X, y)
    assert plain.alpha_ == grid[best]


def test_a_number_is_used_as_given():
    X, y = _tiny(2)
    clf = gto.GTOClassifier(alpha=0.5, max_features=2, max_iter=50, random_state=0).fit(X, y)
    assert clf.alpha_ == 0.5 and clf.max_features_ == 2
    assert clf.cv_results_ is None and clf.best_index_ is None
    assert np.all(np.count_nonzero(clf.tree_.W, axis=1) <= 2)


@pytest.mark.parametrize("params, name", [
    ({"alpha": -1.0}, "alpha"), ({"alpha": "best"}, "alpha"), ({"max_features": 0}, "max_features"),
    ({"max_features": "all"}, "max_features"), ({"cv": 1}, "cv"), ({"init": "cartt"}, "init"),
    ({"selection": "min"}, "selection"),
])
def test_bad_selection_parameters(params, name):
    X, y = _tiny()
    with pytest.raises(ValueError, match=name):
        gto.GTOClassifier(**params).fit(X, y)


# -- warm start ----------------------------------------------------
def _walk_errors(W, gamma, structure, X, y):
    """Training errors by the literal walk down the nested structure."""
    tree = gto.Tree.from_structure(structure, X.shape[1], W=W, gamma=gamma)
    return walk_errors(tree, X, np.asarray(y))


def test_warm_start_from_a_tree():
    X, y = problems.load("liver")
    rng = np.random.default_rng(3)
    structure = ((1, 0), (0, 1))
    W, gamma = rng.normal(size=(3, X.shape[1])), rng.normal(size=3)
    gamma += np.median(X @ W.T, axis=0)  # cut through the data
    start = gto.Tree.from_structure(structure, X.shape[1], W=W, gamma=gamma)
    start_errors = _walk_errors(W, gamma, structure, X, y)
    clf = gto.GTOClassifier(init=start, alpha=0.0, max_iter=500, random_state=0).fit(X, y)
    assert clf.tree_.structure == structure
    assert clf.result_.start_n_errors == start_errors
    fitted = clf.tree_
    assert _walk_errors(fitted.W, fitted.gamma, structure, X, y) == np.sum(clf.predict(X) != y)
    assert np.sum(clf.predict(X) != y) < start_errors  # improved, not handed back
    assert np.array_equal(start.W, W)  # the caller's tree is not changed


def test_warm_start_from_a_fitted_sklearn_tree():
    X, y = problems.load("heart")
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    cart_errors = int(np.sum(cart.predict(X) != y))
    clf = gto.GTOClassifier(init=cart, alpha=0.0, max_iter=500, random_state=0).fit(X, y)
    assert clf.result_.start_n_errors == cart_errors
    assert np.sum(clf.predict(X) != y) <= cart_errors
    assert clf.tree_.structure == gto.Tree.from_sklearn(cart).structure
    # with the penalty chosen by CV the warm start is still the start of every fit
    auto = gto.GTOClassifier(init=cart, cv=2, max_iter=200, random_state=0).fit(X, y)
    assert auto.result_.start_n_errors == cart_errors and auto.cv_results_ is not None


def test_warm_start_mismatch_and_structure_misuse():
    X, y = problems.load("heart")
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X[:, :5], y)
    with pytest.raises(ValueError, match="features"):
        gto.GTOClassifier(init=cart).fit(X, y)
    with pytest.raises(TypeError, match="init="):
        gto.GTOClassifier(structure=gto.Tree.complete(2, [0, 1], X.shape[1])).fit(X, y)
    with pytest.raises(TypeError, match="init"):
        gto.GTOClassifier(init=3).fit(X, y)


def test_the_search_starts_at_the_warm_start():
    """With no moves the answer is the warm start's vertex (Theorem 4.1 crossover),
    which classifies almost every point as the start does; another start would not."""
    X, y = problems.load("liver")
    rng = np.random.default_rng(3)
    W, gamma = rng.normal(size=(3, X.shape[1])), rng.normal(size=3)
    gamma += np.median(X @ W.T, axis=0)
    start = gto.Tree.from_structure(((1, 0), (0, 1)), X.shape[1], W=W, gamma=gamma)
    walked = np.array([_walk_errors(W, gamma, start.structure, x[None], [1]) for x in X])
    start_labels = np.where(walked == 0, 1, 0)  # the label the literal walk reaches
    # one restart: the default's further restarts start from the greedy LP tree and CART
    clf = gto.GTOClassifier(init=start, alpha=0.0, max_iter=0, restarts=1,
                            random_state=0).fit(X, y)
    assert np.mean(clf.predict(X) == start_labels) >= 0.95
    X, y = problems.load("heart")
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    clf = gto.GTOClassifier(init=cart, alpha=0.0, max_iter=0, restarts=1,
                            random_state=0).fit(X, y)
    assert np.mean(clf.predict(X) == cart.predict(X)) >= 0.95


# -- the whole fit's time limit and parallel CV ------------------------------------
def test_time_limit_is_shared_over_the_cv_and_the_refit(monkeypatch):
    """time_limit bounds the whole fit: every search in the internal CV gets at most
    CV_SHARE of it over the number of searched fold fits (of one stage), and the
    refit at most what is left of it (spied on the optimize calls; no clock read)."""
    X, y = _tiny(3)
    real, limits = gto.learners._estimator.optimize, []

    def spy(tree, X_, y_, **kw):
        limits.append((len(y_), kw["time_limit"]))
        return real(tree, X_, y_, **kw)

    monkeypatch.setattr(gto.learners._estimator, "optimize", spy)
    clf = gto.GTOClassifier(cv=3, max_iter=30, time_limit=6.0, random_state=0).fit(X, y)
    searched = sum(p["alpha"] is not None for p in clf.cv_results_["params"]) * 3
    folds = [t for n, t in limits if n < len(y)]
    assert folds and all(0 < t <= gto.learners._estimator.CV_SHARE * 6.0 / searched for t in folds)
    assert all(0 < t <= 6.0 for n, t in limits if n == len(y))
    untimed = gto.GTOClassifier(cv=3, max_iter=30, random_state=0)
    limits.clear()
    untimed.fit(X, y)
    assert all(t is None for _, t in limits)


def test_n_jobs_gives_the_same_fit():
    """The internal CV's fold fits run in joblib workers with n_jobs=2: same scores,
    same choice and same tree as one by one."""
    X, y = _tiny(1)
    one = gto.GTOClassifier(cv=3, max_iter=60, random_state=0).fit(X, y)
    two = gto.GTOClassifier(cv=3, max_iter=60, random_state=0, n_jobs=2).fit(X, y)
    for k in range(3):  # NaN: a contender out of the race (the same folds either way)
        key = f"split{k}_test_score"
        assert np.array_equal(one.cv_results_[key], two.cv_results_[key], equal_nan=True)
    assert one.best_index_ == two.best_index_
    assert np.allclose(one.tree_.W, two.tree_.W) and np.allclose(one.tree_.gamma, two.tree_.gamma)
