"""Capacity control across depths (gto.learners._capacity) against the estimator's own rule."""
import numpy as np
import pytest

import gto
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
    assert choose_depth(fixed, X, y) is fixed and fixed.tree_.n_decisions == 7


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
