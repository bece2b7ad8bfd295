"""Capacity control across depths (gto.learners._capacity) against the estimator's own rule."""
from types import SimpleNamespace

import numpy as np
import pytest
from test_selection import _best_completion  # brute force over the folds left

import gto
from gto.learners import _capacity as C
from gto.learners import _estimator as E
from gto.learners import _selection as S
from gto.learners._capacity import _deeper_pays, choose_depth, grid_scores
from gto.learners._estimator import one_standard_error


@pytest.mark.parametrize("seed", range(200))
def test_deeper_pays_is_the_one_standard_error_rule_over_both_grids(seed):
    rng = np.random.default_rng(seed)
    n_shallow, n_deep = rng.integers(1, 4, 2)
    shallow = rng.choice([0.7, 0.75, 0.8, 0.85], (n_shallow, 5))
    deep = np.clip(shallow[rng.integers(n_shallow, size=n_deep)]
                   + rng.choice([-0.05, 0, 0.05, 0.1], (n_deep, 5)), 0, 1)
    # the estimator's rule over all grid points, every shallower one the simpler
    both = np.vstack([shallow, deep])
    picked = one_standard_error(both, [(0,)] * n_shallow + [(1,)] * n_deep)
    assert _deeper_pays(deep, shallow, "1se") == (picked >= n_shallow)
    best = int(np.lexsort((np.arange(len(both)), -np.round(both.mean(axis=1), 12)))[0])
    assert _deeper_pays(deep, shallow, "best") == (best >= n_shallow)


def test_grid_scores_leave_out_points_stopped_in_a_race():
    model = gto.GTOClassifier()
    model.cv_results_ = {"split0_test_score": np.array([0.7, 0.8, 0.9]),
                         "split1_test_score": np.array([0.6, np.nan, 0.7])}
    np.testing.assert_array_equal(grid_scores(model), [[0.7, 0.6], [0.9, 0.7]])


def test_depth_three_keeps_the_shallower_fit_unless_it_pays():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(90, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)  # one hyperplane: depth 3 cannot pay held out
    model = gto.GTOClassifier(depth=3, max_iter=60, random_state=0, cv=3).fit(X, y)
    assert set(model.depth_scores_) == {2, 3}
    shallow = model.shallower_
    assert shallow.depth == 2 and shallow.depth_ == 2 and shallow.shallower_ is None
    # the same depth-3 fit without the comparison (its structure given)
    deep = gto.GTOClassifier(structure=(((0, 1), (0, 1)), ((0, 1), (0, 1))), max_iter=60,
                             random_state=0, cv=3).fit(X, y)
    pays = _deeper_pays(grid_scores(deep), grid_scores(shallow), "1se")
    assert model.depth_ == (3 if pays else 2)
    np.testing.assert_array_equal(model.depth_scores_[3], deep.cv_results_[
        "split0_test_score"][[deep.best_index_]].tolist() + [
        deep.cv_results_[f"split{k}_test_score"][deep.best_index_] for k in (1, 2)])
    kept = deep if pays else shallow
    assert model.alpha_ == kept.alpha_ and model.best_index_ == kept.best_index_
    np.testing.assert_array_equal(model.predict(X), kept.tree_.predict(X))
    # the same depth-2 fit as a depth-2 estimator of its own
    alone = gto.GTOClassifier(depth=2, max_iter=60, random_state=0, cv=3).fit(X, y)
    np.testing.assert_array_equal(alone.predict(X), shallow.predict(X))
    assert not hasattr(alone, "shallower_") or alone.shallower_ is None


def test_no_comparison_for_a_given_structure_or_depth_two():
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int)
    fixed = gto.GTOClassifier(structure=(((0, 1), (0, 1)), ((0, 1), (0, 1))), max_iter=40,
                              random_state=0, cv=3).fit(X, y)
    assert fixed.depth_ == 3 and fixed.shallower_ is None and set(fixed.depth_scores_) == {3}
    assert choose_depth(fixed) is fixed and fixed.tree_.n_decisions == 7


def test_no_comparison_without_an_internal_cross_validation():
    rng = np.random.default_rng(2)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > 0.5).astype(int)
    model = gto.GTOClassifier(depth=3, alpha=0.0, max_iter=40, random_state=0).fit(X, y)
    assert model.cv_results_ is None and model.shallower_ is None
    assert model.depth_ == 3 and model.depth_scores_[3].size == 0


def test_time_limit_is_for_the_whole_fit():
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(80, 3))
    y = (X[:, 0] > X[:, 1]).astype(int)
    limit = 30.0
    model = gto.GTOClassifier(depth=3, max_iter=40, random_state=0, cv=3,
                              time_limit=limit).fit(X, y)
    shallow = model.shallower_
    # the shallower fit gets what the deeper one left of the limit, not a limit of its own
    assert shallow is not None and 0 < shallow.time_limit < limit
    assert model.time_limit == limit


def test_the_refit_gets_what_the_shallower_fit_and_the_cv_left(monkeypatch):
    """One clock for the whole fit: with the estimator's clock frozen except during the
    shallower fit, which takes 5 of the 30 s, the CV gets ``CV_SHARE`` of the 25 s left
    and the refit all 25 (the elapsed time counted once, not once more for the refit)."""
    clock = [100.0]
    monkeypatch.setattr(E, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    real_shallower, real_select, real_optimize = E.fit_shallower, E.GTOClassifier._select, E.optimize
    seen = {}

    def shallower(estimator, *args):
        out = real_shallower(estimator, *args)
        clock[0] += 5.0 if estimator.depth == 3 else 0.0  # the deeper fit's call
        return out

    def select(self, tree, X, y, w, grid, time_limit=None):
        if self.depth == 3:
            seen["cv"] = time_limit
        return real_select(self, tree, X, y, w, grid, time_limit)

    def optimize(tree, X, y, **kw):
        if tree.n_decisions == 7 and len(y) == 80:
            seen["refit"] = kw["time_limit"]
        return real_optimize(tree, X, y, **kw)

    monkeypatch.setattr(E, "fit_shallower", shallower)
    monkeypatch.setattr(E.GTOClassifier, "_select", select)
    monkeypatch.setattr(E, "optimize", optimize)
    monkeypatch.setattr(E, "shallower_stands", lambda estimator: False)  # the deeper refit runs
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(80, 3))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    model = gto.GTOClassifier(depth=3, max_iter=40, random_state=0, cv=3, time_limit=30.0,
                              svm=False).fit(X, y)  # a searched winner: the refit searches
    assert model.shallower_ is not None
    assert seen["cv"] == pytest.approx(E.CV_SHARE * 25.0)
    assert seen["refit"] == pytest.approx(25.0)


@pytest.mark.parametrize("one_se", [True, False])
def test_a_capped_race_agrees_with_brute_force_over_completions_below_the_cap(one_se):
    rng = np.random.default_rng(4)
    for _ in range(80):
        n_folds = int(rng.integers(2, 6))
        done = rng.uniform(0.5, 0.9, size=int(rng.integers(1, n_folds)))
        cap = rng.uniform(0.7, 0.95)
        level = rng.uniform(0.6, 0.9)
        # after each fold: the folds left score at most the cap (or its own best so far)
        best = [_best_completion(done[:k], n_folds, one_se,
                                 np.linspace(0, max(cap, done[:k].max()), 11))
                for k in range(1, len(done) + 1)]
        row = np.full((2, n_folds), np.nan)
        row[S.ACCURACY, :len(done)] = done
        alive = all(S.still_in(row, k, [(S.ACCURACY, level, one_se, cap)])
                    for k in range(1, len(done) + 1))
        if min(best) > level + 1e-9:
            assert alive
        elif min(best) < level - 0.02:  # the grid's step is 0.1 at most
            assert not alive


class _Fitted:
    """A stand-in for a fitted estimator: the attributes the depth comparison reads."""

    def __init__(self, scores, selection="1se", shallower=None, depth=3):
        scores = np.asarray(scores, dtype=float)
        self.cv_results_ = {f"split{k}_test_score": scores[:, k] for k in range(scores.shape[1])}
        self.best_index_, self.selection, self.shallower_ = 0, selection, shallower
        self.structure, self.init, self.depth, self.classes_ = None, "auto", depth, np.array([0, 1])


def test_the_deeper_race_adds_the_best_shallower_mean_unless_an_svm_tree_pays():
    shallow = _Fitted([[0.70, 0.72, 0.68, 0.70], [0.74, 0.70, 0.71, 0.73], [0.5, np.nan, 0.6, 0.6]],
                      depth=2)  # best complete mean: 0.72 (the stopped row left out)
    # grid rows: the searched contender (first stage), then two linear-SVM trees
    deep = np.array([[0.80, 0.76, 0.75, 0.79], [0.71, 0.73, 0.70, 0.72], [0.69, 0.70, 0.70, 0.70]])
    model = _Fitted(deep, shallower=shallow)
    model.cv_results_ = None  # the deeper grid is being scored
    scores = np.stack([deep, np.zeros_like(deep)])  # (accuracy, Brier) per grid row and fold
    # literal: bar 0.72 with the one-standard-error rule over 4 folds, cap the best fold
    # score of either grid
    assert C.deeper_race(model, scores, [1, 2]) == [(S.ACCURACY, 0.72, True, 0.80)]
    model.selection = "best"
    assert C.deeper_race(model, scores, [1, 2]) == [(S.ACCURACY, 0.72, False, 0.80)]
    paying = scores.copy()
    paying[S.ACCURACY, 1] = [0.80, 0.81, 0.80, 0.79]  # mean 0.80 minus its se is above 0.72
    assert C.deeper_race(_Fitted(deep, shallower=shallow), paying, [1, 2]) == []
    assert C.deeper_race(_Fitted(deep, shallower=None), scores, [1, 2]) == []


def test_a_deeper_tree_that_does_not_pay_is_not_refitted(monkeypatch):
    rng = np.random.default_rng(5)
    X = rng.uniform(size=(120, 3))
    y = (X[:, 0] + X[:, 1] > 1).astype(int)  # one hyperplane: depth 3 cannot pay held out
    refits = []
    real = E.GTOClassifier._fit_tree

    def spy(self, tree, Xf, *args, **kwargs):
        if len(Xf) == len(X):  # a fit on all the data (the internal CV's see a fold)
            refits.append(tree.n_decisions)
        return real(self, tree, Xf, *args, **kwargs)

    monkeypatch.setattr(E.GTOClassifier, "_fit_tree", spy)
    model = gto.GTOClassifier(depth=3, max_iter=100, random_state=0, cv=3).fit(X, y)
    assert model.depth_ == 2 and model.tree_ is model.shallower_.tree_
    assert refits == [3]  # the depth-2 refit only
    monkeypatch.setattr(C, "shallower_stands", lambda estimator: False)
    monkeypatch.setattr(E, "shallower_stands", lambda estimator: False)
    refits.clear()
    again = gto.GTOClassifier(depth=3, max_iter=100, random_state=0, cv=3).fit(X, y)
    assert refits == [3, 7]  # without the shortcut both are refitted ...
    assert again.tree_.n_decisions == 7  # ... and the depth-3 tree is kept unchecked
