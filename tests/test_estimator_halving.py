"""The internal cross-validation's successive halving (GTOClassifier, docs/speed.md):
which searches it runs, when a contender leaves the race, and the refit's start
when the CV ran on a subsample."""
import time
from types import SimpleNamespace

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold

import gto
import problems
from gto.learners import _estimator as E
from gto.learners import _selection as S


def _spy(monkeypatch):
    """Record every ``optimize`` call of the estimator: (points, restarts, init, start
    tree, result)."""
    real, calls = E.optimize, []

    def spy(tree, X, y, **kw):
        res = real(tree, X, y, **kw)
        calls.append((len(y), kw["restarts"], kw["init"], tree, res))
        return res

    monkeypatch.setattr(E, "optimize", spy)
    return calls


def test_a_perfect_svm_tree_leaves_the_searches_unrun(monkeypatch):
    """With "agree" a linear-SVM tree perfect on every fold cannot be passed over: no
    search runs in the internal CV, and neither the searched point nor the
    axis-aligned tree is scored (NaN); with "best" (ties go to the searched point,
    first in the grid) both are."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(80, 2))
    y = (X[:, 0] > 0.5).astype(int)
    calls = _spy(monkeypatch)
    clf = gto.GTOClassifier(random_state=0, max_iter=100).fit(X, y)
    res = clf.cv_results_
    svm = np.isnan(res["param_alpha"]) & np.isfinite(res["param_svm_C"])
    assert res["params"][-1] == E.AXIS_POINT and (~svm).sum() == 2
    assert np.all(res["mean_test_score"][svm].max() == 1.0)
    assert np.all(np.isnan(res["mean_test_score"][~svm]))
    assert res["params"][clf.best_index_]["alpha"] is None
    assert np.all(res["rank_test_score"][~svm] > res["rank_test_score"][svm].max())
    assert calls == []  # not even the refit searches: an SVM tree was chosen
    best = gto.GTOClassifier(random_state=0, max_iter=100, selection="best").fit(X, y)
    assert np.isfinite(best.cv_results_["mean_test_score"]).all() and calls


def _xor(seed=0, noise=0.0, n=150):
    """XOR of two uniform features (the search beats the SVM trees), a ``noise`` share
    of the labels flipped."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, 2))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    return X, np.where(rng.random(n) < noise, 1 - y, y)


def test_a_searched_choice_on_a_subsample_refits_from_its_best_fold_tree(monkeypatch):
    """Above CV_POINTS the CV runs on a subsample; when it chooses the search, the refit
    on all the data is one restart from the contender's fold tree with the fewest
    errors on all the data (on XOR the search beats the SVM trees, and its contender
    stage runs although the short search already wins: its trees are the refit's
    starts)."""
    X, y = _xor()
    monkeypatch.setattr(E, "CV_POINTS", 60)
    calls = _spy(monkeypatch)
    clf = gto.GTOClassifier(random_state=0, max_iter=200).fit(X, y)
    assert clf.alpha_ == 0.0
    folds = [c[4].tree for c in calls if c[0] < 60 and c[1] == E.CONTENDER_RESTARTS]
    assert len(folds) == 5
    refit = [c for c in calls if c[0] == len(y)]
    assert len(refit) == 1 and refit[0][1:3] == (1, "tree")
    errors = [np.sum(t.predict(X) != y) for t in folds]
    start = refit[0][3]
    assert np.sum(start.predict(X) != y) == min(errors)
    assert any(np.allclose(start.W, t.W) and np.allclose(start.gamma, t.gamma) for t in folds)
    # without a subsample the refit runs all its restarts from its own starts
    calls.clear()
    monkeypatch.setattr(E, "CV_POINTS", 4000)
    gto.GTOClassifier(random_state=0, max_iter=200).fit(X, y)
    assert all(c[1] == 3 for c in calls if c[0] == len(y))


def test_a_short_search_that_already_wins_is_not_searched_again(monkeypatch):
    """On XOR the first stage's short searches (one restart of ``cv_iter`` moves per
    fold) already pass every SVM tree's mean accuracy and mean Brier score ("agree"
    written out), so no contender stage runs: the searched point's CV scores are those
    of the first stage's fold trees walked on the test folds, and it is chosen."""
    X, y = _xor()
    calls = _spy(monkeypatch)
    clf = gto.GTOClassifier(random_state=0, max_iter=400).fit(X, y)
    cv = [c for c in calls if c[0] < len(y)]
    assert len(cv) == 5 and all(c[1] == 1 for c in cv)  # no contender stage
    _, _, _, folds = clf._folds(X, y, None)
    res = clf.cv_results_
    searched = [i for i, p in enumerate(res["params"]) if p["alpha"] is not None]
    assert clf.best_index_ == searched[0] and clf.alpha_ == 0.0
    for k, (c, (train, test)) in enumerate(zip(cv, folds)):
        assert c[0] == len(train)
        hit = np.mean(c[4].tree.predict(X[test]) == y[test])
        assert res[f"split{k}_test_score"][searched[0]] == pytest.approx(hit)
    svm = [i for i, p in enumerate(res["params"]) if p["alpha"] is None and p["svm_C"]]
    for key in ("mean_test_score", "mean_test_brier"):
        assert res[key][searched[0]] > res[key][svm].max()


def test_the_shallower_depths_fit_scores_its_contender_in_full(monkeypatch):
    """At depth 3 the depth-2 fit is the deeper fit's yardstick: its search is scored by
    the contender stage although the short search already wins on XOR (where a
    depth-2 fit alone stops after the first stage), so its scores are not lowered."""
    X, y = _xor()
    calls = _spy(monkeypatch)
    gto.GTOClassifier(depth=2, random_state=0, max_iter=200).fit(X, y)
    assert not [c for c in calls if c[1] == E.CONTENDER_RESTARTS]
    calls.clear()
    deep = gto.GTOClassifier(depth=3, random_state=0, max_iter=200).fit(X, y)
    second = [c for c in calls if c[1] == E.CONTENDER_RESTARTS and c[3].n_decisions == 3]
    assert len(second) == 5 and deep.shallower_ is not None


@pytest.mark.parametrize("selection", S.SELECTIONS)
def test_settled_means_the_rule_would_choose_the_short_search(selection):
    """``settled`` against ``choose`` on 300 random score tables (three SVM trees and
    one searched point, every fold scored): the contender stage is skipped exactly
    when the rule would pick the searched point on its first-stage scores."""
    grid = [{"alpha": 0.0, "max_features": None, "svm_C": 0.1},
            *({"alpha": None, "max_features": None, "svm_C": c} for c in (0.1, 0.3, 1.0))]
    complexity = [E._complexity(g, 4) for g in grid]
    rng = np.random.default_rng(7)
    picked = 0
    for _ in range(300):
        scores = rng.uniform(0.6, 0.9, size=(2, 4, 5))
        scores[:, 0] += rng.uniform(-0.05, 0.1)  # the search now ahead, now behind
        chosen = S.choose(selection, scores, grid, complexity) == 0
        picked += chosen
        assert S.settled(scores, [0], S.race(selection, scores, [1, 2, 3])) == chosen
    assert 0 < picked < 300
    assert not S.settled(scores, [], S.race(selection, scores, [1, 2, 3]))
    scores[:, 1] = scores[:, 1:].max(axis=1)  # the SVM tree of C = 0.1 best on both,
    scores[:, 0] = scores[:, 1]  # and the search tied with it: a tie is not settled
    assert not S.settled(scores, [0], S.race(selection, scores, [1, 2, 3]))
    assert (S.choose(selection, scores, grid, complexity) == 0) == (selection == "best")


def test_a_short_search_that_cannot_reach_the_contenders_bar_stops_early():
    """First stage: a searched point stops after the first fold from which its mean can
    no longer reach the best SVM tree's mean minus that one's standard error (the bar
    of a contender), so it can be neither chosen nor a contender; the choice is the
    one-standard-error rule over the SVM trees."""
    from sklearn.preprocessing import MinMaxScaler

    import problems

    X, y = problems.load("wdbc")
    X = MinMaxScaler().fit_transform(X)
    clf = gto.GTOClassifier(random_state=0, max_iter=300, selection="1se").fit(X, y)
    res = clf.cv_results_
    n_folds = 5
    scores = np.array([res[f"split{k}_test_score"] for k in range(n_folds)]).T
    svm = np.isnan(res["param_alpha"])
    best = np.argmax(scores[svm].mean(axis=1))
    bar = scores[svm][best].mean() - scores[svm][best].std(ddof=1) / np.sqrt(n_folds)
    row = scores[~svm][0]
    run = int(np.sum(~np.isnan(row)))
    assert 1 <= run < n_folds and np.isnan(row[run:]).all()
    assert not S.can_be_chosen(row[:run], n_folds, bar, False, strict=False)
    assert all(S.can_be_chosen(row[:k], n_folds, bar, False, strict=False) for k in range(run))
    assert row[:run].mean() < bar  # and by hand: even all-perfect later folds fall short
    assert (row[:run].sum() + n_folds - run) / n_folds < bar
    complexity = [E._complexity(p, X.shape[1]) for p in np.array(res["params"])[svm]]
    assert clf.best_index_ == np.flatnonzero(svm)[E.one_standard_error(scores[svm], complexity)]


def test_slow_svm_trees_under_a_time_limit_keep_the_folds_they_were_scored_on(monkeypatch):
    """The SVM fits cannot be stopped, so with ``time_limit`` the internal CV scores
    them fold by fold and keeps only the folds run before its share of the time
    passed: every candidate is scored on the same folds, a tree comes back."""
    real = E._svm_result

    def slow(tree, X, y, *args, **kw):
        time.sleep(0.2)  # one fold's three SVM trees take 0.6 s, above the SVM share of 1 s
        return real(tree, X, y, *args, **kw)

    monkeypatch.setattr(E, "_svm_result", slow)
    X, y = problems.load("heart")
    clf = gto.GTOClassifier(time_limit=1.0, random_state=0).fit(X, y)
    splits = [k for k in clf.cv_results_ if k.startswith("split")]
    assert splits == ["split0_test_score"]
    assert np.all(np.isfinite(clf.cv_results_["split0_test_score"][:3]))
    assert clf.score(X, y) > 0.5
    free = gto.GTOClassifier(random_state=0).fit(X, y)  # no limit: every fold
    assert len([k for k in free.cv_results_ if k.startswith("split")]) == 5


def test_slow_axis_trees_out_of_time_are_not_chosen(monkeypatch):
    """With ``time_limit`` the axis-aligned tree is fitted fold by fold only while the
    SVM trees' share of the time lasts: slowed to 0.4 s a fit (five folds: 2 s, above
    the share of a 2 s limit, 0.75 s) it runs out, its row is NaN and it is not chosen,
    where without the limit it is (XOR of two of 30 features); a tree comes back."""
    real, fits = E._axis_result, []

    def slow(*args):
        fits.append(1)
        time.sleep(0.4)
        return real(*args)

    rng = np.random.default_rng(1)
    X = rng.uniform(size=(240, 30))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.4)).astype(int)
    y = np.where(rng.random(240) < 0.05, 1 - y, y)
    monkeypatch.setattr(E, "_axis_result", slow)
    clf = gto.GTOClassifier(max_iter=300, random_state=0, time_limit=2.0).fit(X, y)
    row = [clf.cv_results_[f"split{k}_test_score"][-1] for k in range(5)]
    assert clf.cv_results_["params"][-1] == E.AXIS_POINT and np.isnan(row).all()
    assert 1 <= len(fits) < 5 and clf.best_index_ != len(row) - 1
    assert clf.tree_.n_decisions == 3
    fits.clear()
    free = gto.GTOClassifier(max_iter=300, random_state=0).fit(X, y)
    assert free.best_index_ == len(free.cv_results_["params"]) - 1 and len(fits) == 6


def test_a_contender_searches_half_the_moves_of_the_refit(monkeypatch):
    """Second stage: each of a contender's restarts runs at most ``contender_iter`` moves
    (CONTENDER_ITER_SHARE of ``max_iter``; XOR with 30 % of the labels flipped, where
    the short search reaches the contenders' bar but not the SVM trees'); the refit
    of the chosen search runs ``max_iter`` per restart (XOR: the search beats the
    SVM trees)."""
    real, calls = E.optimize, []

    def spy(tree, X, y, **kw):
        res = real(tree, X, y, **kw)
        calls.append((len(y), kw["restarts"], kw["max_iter"], res))
        return res

    monkeypatch.setattr(E, "optimize", spy)
    X, y = _xor(0, 0.3)
    gto.GTOClassifier(random_state=0, max_iter=400).fit(X, y)
    assert E.contender_iter(400) == round(E.CONTENDER_ITER_SHARE * 400) < 400
    second = [c for c in calls if c[0] < len(y) and c[1] == E.CONTENDER_RESTARTS]
    assert second and all(c[2] == E.contender_iter(400) for c in second)
    assert all(r.nit <= restarts * it for _, restarts, it, r in second)
    calls.clear()
    X, y = _xor()
    clf = gto.GTOClassifier(random_state=0, max_iter=400).fit(X, y)
    assert clf.alpha_ == 0.0
    refit = [c for c in calls if c[0] == len(y)]
    assert len(refit) == 1 and refit[0][1:3] == (3, 400)


def test_the_svm_start_is_charged_to_the_fits_time_limit(monkeypatch):
    """A fit of the alpha-0 search from the L2 SVM tree has ``time_limit`` seconds in
    all: with the clock frozen but for the SVM start, which takes 4 of its 10 s, the
    search gets the 6 left (not 10 from after the SVM fit)."""
    clock = [50.0]
    monkeypatch.setattr(E, "time", SimpleNamespace(perf_counter=lambda: clock[0]))
    real_svm, real_optimize, seen = E._svm_result, E.optimize, []

    def svm(*args, **kw):
        clock[0] += 4.0
        return real_svm(*args, **kw)

    def optimize(tree, X, y, **kw):
        seen.append(kw["time_limit"])
        return real_optimize(tree, X, y, **{**kw, "time_limit": None})  # the real clock aside

    monkeypatch.setattr(E, "_svm_result", svm)
    monkeypatch.setattr(E, "optimize", optimize)
    rng = np.random.default_rng(1)
    X = rng.uniform(size=(60, 2))
    y = (X[:, 0] > X[:, 1]).astype(int)
    clf = gto.GTOClassifier(max_iter=30, random_state=0)
    clf._categorical = {}
    params = {"alpha": 0.0, "max_features": None, "svm_C": E.SVM_START_C}
    res = clf._fit_tree(gto.Tree.complete(2, [0, 1], 2), X, y, None, params, 1, time_limit=10.0)
    assert seen == [pytest.approx(6.0)]
    assert res.tree.n_decisions == 3


def test_one_decision_fits_any_labels_only_of_independent_points():
    """``_fits_any_labels`` against its definition: where it says yes, a hyperplane
    solved from ``[X, 1] theta = s`` splits the points as every one of 20 random sign
    vectors ``s`` asks; two copies of one point (no hyperplane splits them) or more
    points than weights, no; zero-weight points do not count."""
    rng = np.random.default_rng(3)
    X = rng.uniform(size=(12, 15)) * np.linspace(1, 1e3, 15)  # columns of unlike scales
    rows = np.arange(12)
    assert E._fits_any_labels(X, None, rows)
    A = np.column_stack([X, np.ones(12)])
    for _ in range(20):
        s = rng.choice([-1.0, 1.0], size=12)
        theta = np.linalg.lstsq(A, s, rcond=None)[0]
        assert np.array_equal(np.sign(A @ theta), s)
    twin = np.vstack([X, X[:1]])
    assert not E._fits_any_labels(twin, None, np.arange(13))
    w = np.ones(13)
    w[12] = 0.0
    assert E._fits_any_labels(twin, w, np.arange(13))  # the copy weighs nothing
    assert not E._fits_any_labels(rng.uniform(size=(17, 15)), None, np.arange(17))


def test_no_search_where_one_decision_fits_any_labels(monkeypatch):
    """More features than training points per fold: every labelling is a zero-error
    tree (the unpenalised search does end at zero errors there), so the CV scores the
    linear-SVM trees alone (the searched point NaN, no search run) and picks one; with
    fewer features than points the search is scored as before."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 80))
    y = (X[:, 0] + 0.5 * rng.normal(size=60) > 0).astype(int)
    train = next(iter(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y)))[0]
    fold = gto.optimize(gto.Tree.complete(2, [0, 1], 80), X[train], y[train], max_iter=300,
                        random_state=0)
    assert fold.n_errors == 0  # the premise: the search interpolates a training fold
    calls = _spy(monkeypatch)
    clf = gto.GTOClassifier(max_iter=200, random_state=0).fit(X, y)
    searched = [i for i, p in enumerate(clf.cv_results_["params"]) if p["alpha"] is not None]
    assert np.isnan(clf.cv_results_["mean_test_score"][searched]).all()
    assert clf.alpha_ is None and calls == []  # an SVM tree, and no search at all
    narrow = gto.GTOClassifier(max_iter=200, random_state=0).fit(X[:, :5], y)
    assert np.isfinite(narrow.cv_results_["split0_test_score"][searched]).all()


def walked(tree, X):
    """Each point of ``X`` sent down ``tree``'s decisions literally: its leaf's class."""
    out = []
    for x in X:
        node = ("d", 0)
        while node[0] == "d":
            d = node[1]
            node = tree.children[d][0 if x @ tree.W[d] <= tree.gamma[d] else 1]
        out.append(tree.leaf_classes[node[1]])
    return np.array(out)


@pytest.mark.parametrize("wide", [True, False])
def test_the_axis_aligned_tree_of_the_structure_is_scored(wide):
    """The grid gains ``AXIS_POINT`` (last): its fold scores are those of
    ``structured_axis`` (as many quantile cuts as ``cuts_within`` allows) fitted on
    each training fold, walked literally on the test fold; so where one decision fits
    any labelling (60 x 80, no search runs) and where it does not (60 x 5)."""
    from gto.engine._axis import cuts_within
    from gto.engine._starts import structured_axis

    rng = np.random.default_rng(6)
    X = rng.uniform(size=(60, 80 if wide else 5))
    y = (X[:, 3] > 0.5).astype(int)
    clf = gto.GTOClassifier(max_iter=100, random_state=0, selection="best").fit(X, y)
    params = clf.cv_results_["params"]
    assert params[-1] == E.AXIS_POINT and len(params) == 5
    Xs, ys, ws, folds = clf._folds(X, y, None)
    tree = gto.Tree.complete(2, [0, 1], X.shape[1])
    for k, (train, test) in enumerate(folds):
        cuts = cuts_within(Xs[train], E.AXIS_WORK_LIMIT, E.AXIS_CUTS)
        fitted = structured_axis(tree, Xs[train], ys[train], None, cuts)
        assert clf.cv_results_[f"split{k}_test_score"][-1] == pytest.approx(
            np.mean(walked(fitted, Xs[test]) == ys[test]))


def test_at_depth_3_the_axis_point_is_cart_and_only_where_no_search_runs():
    """Deeper than 2 the axis-aligned tree is CART's splits on the structure
    (``structured_cart``), scored only where no search runs."""
    from gto.engine._starts import structured_cart

    rng = np.random.default_rng(6)
    X = rng.uniform(size=(60, 80))
    y = (X[:, 3] > 0.5).astype(int)
    clf = gto.GTOClassifier(depth=3, max_iter=100, random_state=0, selection="best").fit(X, y)
    deep = clf.shallower_ if clf.depth_ == 2 else clf
    assert deep.cv_results_["params"][-1] == E.AXIS_POINT
    deeper = gto.GTOClassifier(depth=3, max_iter=100, random_state=0, selection="best")
    deeper.classes_, deeper._categorical = np.array([0, 1]), {}
    res = deeper._select(gto.Tree.complete(3, [0, 1], 80), X, y, None, deeper._grid(80))
    assert res[3][-1] == E.AXIS_POINT
    Xs, ys, _, folds = deeper._folds(X, y, None)
    train, test = folds[0]
    fitted = structured_cart(gto.Tree.complete(3, [0, 1], 80), Xs[train], ys[train], None, 0)
    assert res[1]["split0_test_score"][-1] == pytest.approx(
        np.mean(walked(fitted, Xs[test]) == ys[test]))
    narrow = gto.GTOClassifier(depth=3, max_iter=100, random_state=0)
    narrow.classes_, narrow._categorical = np.array([0, 1]), {}
    grid = narrow._select(gto.Tree.complete(3, [0, 1], 5), X[:, :5], y, None,
                          narrow._grid(5))[3]
    assert E.AXIS_POINT not in grid


def test_agree_takes_the_axis_tree_only_above_every_svm_tree_on_every_fold():
    """``choose`` against the rule written out, on random scores of three SVM trees,
    the axis-aligned tree and (in half the tables) a searched point: the axis tree
    replaces the SVM trees' own one-standard-error pick exactly when its accuracy is
    above every SVM tree's on every fold and its mean Brier score above each of
    theirs; the searched point replaces either exactly when both its means are above
    every SVM tree's, whatever the axis tree scores."""
    grid = [{"alpha": 0.0, "max_features": None, "svm_C": 0.1},
            *({"alpha": None, "max_features": None, "svm_C": c} for c in (0.1, 0.3, 1.0)),
            E.AXIS_POINT]
    complexity = [E._complexity(g, 10) for g in grid]
    rng = np.random.default_rng(7)
    seen = {"axis": 0, "svm": 0, "search": 0}
    for t in range(600):
        scores = rng.uniform(0.6, 0.9, size=(2, 5, 5))
        scores[:, 4] += rng.uniform(0.0, 0.15)  # the axis tree often better
        if t % 2:
            scores[:, 0] = np.nan
        got = S.choose("agree", scores, grid, complexity)
        svm = scores[:, 1:4]
        search = scores[:, 0].mean(axis=1)
        if t % 2 == 0 and all(search[j] > svm[j].mean(axis=1).max() for j in (0, 1)):
            want, kind = 0, "search"
        elif (np.all(scores[0, 4] > svm[0].max(axis=0))
              and scores[1, 4].mean() > svm[1].mean(axis=1).max()):
            want, kind = 4, "axis"
        else:
            want, kind = 1 + S.one_standard_error(svm[0], complexity[1:4]), "svm"
        assert got == want
        seen[kind] += 1
    assert min(seen.values()) > 20  # every case was met


def test_under_1se_the_axis_tree_counts_as_the_least_simple():
    """``choose("1se")`` against the rule written out: the axis-aligned tree is taken
    only when no other grid point's mean is within one standard error of the best
    (else the simplest of those that are: SVM trees by smaller C, then the search)."""
    grid = [{"alpha": 0.0, "max_features": None, "svm_C": 0.1},
            *({"alpha": None, "max_features": None, "svm_C": c} for c in (0.1, 0.3, 1.0)),
            E.AXIS_POINT]
    complexity = [E._complexity(g, 10) for g in grid]
    order = [1, 2, 3, 0, 4]  # simplest first
    rng = np.random.default_rng(9)
    axis = 0
    for _ in range(400):
        scores = rng.uniform(0.6, 0.9, size=(2, 5, 5))
        scores[:, 4] += rng.uniform(0.0, 0.2)
        mean = scores[0].mean(axis=1)
        best = int(np.argmax(mean))
        bar = mean[best] - scores[0, best].std(ddof=1) / np.sqrt(5)
        want = next(i for i in order if mean[i] >= bar - 1e-12)
        assert S.choose("1se", scores, grid, complexity) == want
        axis += want == 4
    assert 20 < axis < 380


def test_the_axis_tree_leaves_the_race_at_its_first_fold_below_an_svm_tree(monkeypatch):
    """Under "agree" the axis-aligned tree is fitted fold by fold only while it is
    above every SVM tree on every fold so far: on linear data it stops at the first
    fold where it is not (its later folds NaN, so many fits and no more); with
    "1se" every fold is scored."""
    real, fits = E._axis_result, []

    def spy(*args):
        fits.append(1)
        return real(*args)

    monkeypatch.setattr(E, "_axis_result", spy)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 4))
    y = (X @ np.array([1.0, 1.0, -1.0, 0.5]) + 0.3 * rng.normal(size=300) > 0).astype(int)
    clf = gto.GTOClassifier(max_iter=100, random_state=0).fit(X, y)
    res = clf.cv_results_
    row = np.array([res[f"split{k}_test_score"][-1] for k in range(5)])
    svm = np.array([[res[f"split{k}_test_score"][i] for k in range(5)] for i in (1, 2, 3)])
    run = np.flatnonzero(~np.isnan(row))
    assert len(fits) == len(run) < 5 and np.array_equal(run, np.arange(len(run)))
    assert np.all(row[run[:-1]] > svm[:, run[:-1]].max(axis=0))  # above on the folds before
    assert row[run[-1]] <= svm[:, run[-1]].max()  # not above on the last one run
    fits.clear()
    gto.GTOClassifier(max_iter=100, random_state=0, selection="1se").fit(X, y)
    assert len(fits) >= 5


def test_where_a_few_of_many_features_carry_the_signal_the_axis_tree_is_chosen():
    """XOR of two of 30 uniform features (5 % of the labels flipped): the linear-SVM
    trees cannot split it and the short searches do not find it among 30 features;
    the axis-aligned tree is chosen, uses the two features, and holds out above 90 %
    on fresh points."""
    rng = np.random.default_rng(1)

    def draw(n):
        X = rng.uniform(size=(n, 30))
        y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.4)).astype(int)
        return X, np.where(rng.random(n) < 0.05, 1 - y, y)

    X, y = draw(240)
    clf = gto.GTOClassifier(max_iter=300, random_state=0).fit(X, y)
    assert clf.best_index_ == len(clf.cv_results_["params"]) - 1
    assert clf.alpha_ is None and clf.svm_C_ is None and clf.max_features_ == 1
    W = clf.tree_.W
    assert np.all(np.count_nonzero(W, axis=1) == 1)
    assert set(np.flatnonzero(W.any(axis=0)).tolist()) == {0, 1}
    X_new, y_new = draw(2000)
    assert clf.score(X_new, y_new) > 0.9
    svm_trees = [res for res in clf.cv_results_["mean_test_score"][1:4]]
    assert max(svm_trees) < 0.7  # the premise: no SVM tree splits XOR


def test_the_command_lines_summary_names_each_kind_of_pick():
    """The ``gto fit`` summary of the CV's pick: the axis-aligned tree, an SVM tree, a
    search."""
    from gto.cli._main import _grid_choice

    cv = {"split0_test_score": [1.0], "split1_test_score": [1.0]}
    fitted = SimpleNamespace(cv_results_=cv, cv=2, alpha_=None, svm_C_=None, max_features_=1)
    assert _grid_choice(fitted) == "2-fold CV chose the axis-aligned tree of the structure"
    fitted.svm_C_ = 0.3
    assert _grid_choice(fitted) == "2-fold CV chose the 1-norm SVM tree of C = 0.3"
    fitted.alpha_, fitted.max_features_ = 0.0, None
    assert _grid_choice(fitted) == "2-fold CV chose alpha 0"
