"""gto.engine._svm_start.svm_tree against scikit-learn's own LinearSVC fits (the independent truth)."""
import importlib

import numpy as np
import pytest
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

import gto
import gto.learners._estimator
from gto.engine import _svm_start
from gto.engine._svm_start import _linear_svc_estimator, linear_svc, svm_tree

OPTIMIZE_MODULE = importlib.import_module("gto.learners._optimize")


def _data(seed=0, n=120, n_features=4, noise=0.15):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features)) * [1.0, 5.0, 0.2, 3.0][:n_features] + 2.0
    y = ((X[:, 0] - 2) + 0.2 * (X[:, 1] - 2) > 0).astype(int)
    return X, np.where(rng.uniform(size=n) < noise, 1 - y, y)


def _linear_svc(C, penalty, intercept_scaling=1.0):
    """LinearSVC as documented for each penalty ("l1": the 1-norm SVM, primal)."""
    return LinearSVC(C=C, penalty=penalty, dual="auto" if penalty == "l2" else False,
                     intercept_scaling=intercept_scaling, random_state=0, max_iter=10_000)


def _majority(labels):
    """The class (0 or 1) most of ``labels`` have; a tie (or none): 0."""
    return int(np.sum(labels == 1) > np.sum(labels == 0))


def _svm(X, y, C, penalty="l2", intercept_scaling=1.0):
    """scikit-learn's linear SVM on standardised features, fitted here."""
    return make_pipeline(StandardScaler(), _linear_svc(C, penalty, intercept_scaling)).fit(X, y)


def literal_depth2(X, y, Z, C, penalty="l2", intercept_scaling=1.0):
    """Predictions on Z of the depth-2 tree ((0, 1), (0, 1)) built by hand: the root
    is a linear SVM of class 0 (left) against 1 (right); each child an SVM on the
    training points the root sends its way (one class there: that class; an SVM
    without a nonzero weight: the class most of those points have, a tie class 0).
    Also each Z point's margin: the smallest |decision value| of the SVMs on its path
    (where another solution within the solver's tolerance may send it the other way)."""
    root = _svm(X, y, C, penalty, intercept_scaling)
    go_x, go_z = root.predict(X), root.predict(Z)
    margin = np.abs(root.decision_function(Z))
    if not root[-1].coef_.any():  # no root rule: all to the majority's side
        go_x, go_z = np.full(len(X), _majority(y)), np.full(len(Z), _majority(y))
        margin[:] = np.inf
    out = np.empty(len(Z), dtype=y.dtype)
    for side in (0, 1):
        at = go_x == side
        if len(np.unique(y[at])) == 2:
            # standardised with the whole training set's scaler, as the tree is
            scaler = StandardScaler().fit(X)
            child = _linear_svc(C, penalty, intercept_scaling).fit(scaler.transform(X[at]), y[at])
            if child.coef_.any():
                Zs = scaler.transform(Z[go_z == side])
                out[go_z == side] = child.predict(Zs)
                margin[go_z == side] = np.minimum(margin[go_z == side],
                                                  np.abs(child.decision_function(Zs)))
            else:
                out[go_z == side] = _majority(y[at])
        else:
            out[go_z == side] = y[at][0] if at.any() else side
    return out, margin


def l1_svm_objective(pipe, w, gamma, X, y, C, intercept_scaling):
    """Liblinear's 1-norm SVM objective (squared hinge; the intercept the weight of a
    constant column ``intercept_scaling``, penalised like the others), evaluated
    literally for the rule ``x @ w - gamma`` (original units) in the coordinates of
    ``pipe``'s StandardScaler, for the labels y (0/1)."""
    scaler = pipe[0]
    v, b = w * scaler.scale_, w @ scaler.mean_ - gamma
    hinge = np.maximum(0.0, 1.0 - np.where(y == 1, 1.0, -1.0) * (scaler.transform(X) @ v + b))
    return np.abs(v).sum() + abs(b) / intercept_scaling + C * (hinge @ hinge)


def assert_root_is_the_svm(tree, X, y, C, penalty, intercept_scaling=1.0):
    """The tree's root rule against scikit-learn's pipeline on the same data.  L2: the
    same decision values up to rounding (a strictly convex problem, solved to
    1e-8 here).  L1: the problem is not strictly convex and the solver stops at a
    gradient tolerance (1e-4), so 1e-15 rounding of its input (our scaling against
    StandardScaler's) moves the decision values by up to ~2e-5 (measured over
    1-ulp perturbations of X) while the objective agrees to ~1e-11: the objective
    of both rules, evaluated literally, agrees to 1e-8, and the values to 1e-3."""
    ref = _svm(X, y, C, penalty, intercept_scaling)
    ours = X @ tree.W[0] - tree.gamma[0]
    if penalty == "l2":
        assert np.allclose(ours, ref.decision_function(X), atol=1e-8)
        return
    assert np.allclose(ours, ref.decision_function(X), atol=1e-3)
    coef = ref[-1].coef_[0] / ref[0].scale_  # the reference in original units
    best = l1_svm_objective(ref, coef, coef @ ref[0].mean_ - ref[-1].intercept_[0], X, y, C,
                            intercept_scaling)
    assert np.isclose(l1_svm_objective(ref, tree.W[0], tree.gamma[0], X, y, C, intercept_scaling),
                      best, rtol=1e-8, atol=0)


def literal_pruned(X, y, Z, C):
    """Predictions on Z of the tree ((0, 1), (0, 1)) pruned to its root by hand: the
    root's linear SVM, then each side the class most of the training points the
    root sends there have (a tie: class 0, the left leaf of either child)."""
    root = _svm(X, y, C)
    go_x, go_z = root.predict(X), root.predict(Z)
    out = np.empty(len(Z), dtype=y.dtype)
    for side in (0, 1):
        at = go_x == side
        out[go_z == side] = _majority(y[at])
    return out


@pytest.mark.parametrize("C, penalty", [(0.01, "l2"), (1.0, "l2"), (0.1, "l1"), (1.0, "l1")])
def test_root_decision_is_sklearns_linear_svm(C, penalty):
    X, y = _data()
    tree, n_iter = svm_tree(gto.Tree.from_structure((0, 1), X.shape[1]), X, y, C=C,
                            penalty=penalty)
    assert_root_is_the_svm(tree, X, y, C, penalty)  # the scaling folded back
    ref = _svm(X, y, C, penalty)
    sure = np.abs(ref.decision_function(X)) > 1e-3  # not within the L1 solver's tolerance
    assert np.array_equal(tree.predict(X)[sure], ref.predict(X)[sure]) and n_iter >= 1
    assert np.allclose(tree.leaf_counts.sum(), len(y))  # training data recorded


@pytest.mark.parametrize("penalty, intercept_scaling", [("l2", 1.0), ("l1", 1.0), ("l1", 10.0)])
def test_depth2_tree_equals_the_tree_built_by_hand(penalty, intercept_scaling):
    X, y = _data(1, n=200, noise=0.25)
    Z = _data(2, n=300)[0]
    for C in (0.01, 0.1, 1.0):
        tree, _ = svm_tree(gto.Tree.complete(2, [0, 1], X.shape[1]), X, y, C=C, penalty=penalty,
                           intercept_scaling=intercept_scaling)
        expected, margin = literal_depth2(X, y, Z, C, penalty, intercept_scaling)
        sure = margin > (1e-8 if penalty == "l2" else 1e-3)  # see assert_root_is_the_svm
        assert np.mean(sure) > 0.95
        assert np.array_equal(tree.predict(Z)[sure], expected[sure])
        # the root sends the first class left (documented; the tree is symmetric)
        assert_root_is_the_svm(tree, X, y, C, penalty, intercept_scaling)


def test_l1_trees_drop_features_and_a_weightless_decision_goes_to_the_majority():
    """The 1-norm SVM tree of a rule on two of six features: its root uses only
    those two (L2 uses all six); with a C so small that no weight survives, every
    decision sends all points to the side most of them want, so the tree predicts
    the majority class (here class 1, on the right: the intercept alone would
    not say so)."""
    rng = np.random.default_rng(8)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] - 0.5 * X[:, 3] > -0.6).astype(int)
    assert np.mean(y) > 0.6
    start = gto.Tree.complete(2, [0, 1], 6)
    l1 = svm_tree(start, X, y, C=0.1, penalty="l1")[0]
    l2 = svm_tree(start, X, y, C=0.1, penalty="l2")[0]
    assert set(np.flatnonzero(l1.W[0]).tolist()) == {0, 3}
    assert np.count_nonzero(l2.W[0]) == 6
    assert np.mean(l1.predict(X) == y) > 0.95
    empty = svm_tree(start, X, y, C=1e-4, penalty="l1")[0]
    assert not empty.W.any()
    assert np.all(empty.predict(X) == 1)
    with pytest.raises(ValueError, match="penalty"):
        svm_tree(start, X, y, penalty="elasticnet")


def test_a_large_intercept_scaling_leaves_an_off_centre_boundary_in_place():
    """Liblinear penalises the intercept as the weight of a constant column: with the
    L1 penalty and a small C the offset of a boundary far from the points' mean (on
    the standardised scale) is pulled towards that mean, and the rule misclassifies
    the points between; with a large constant column the offset costs (nearly)
    nothing and the boundary lands where the classes meet."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    y = (X[:, 0] > 0.9).astype(int)
    start = gto.Tree.from_structure((0, 1), 2)
    fits = {s: svm_tree(start, X, y, C=0.1, penalty="l1", intercept_scaling=s)[0] for s in (1.0, 10.0)}
    cut = {s: t.gamma[0] / t.W[0][0] for s, t in fits.items()}  # x0 at the boundary
    errors = {s: t.n_errors(X, y) for s, t in fits.items()}
    assert abs(cut[10.0] - 0.9) < 0.03 < abs(cut[1.0] - 0.9)
    assert errors[10.0] < errors[1.0]


def test_pruned_tree_is_the_root_svm_and_majority_sides():
    X, y = _data(1, n=200, noise=0.25)
    Z = _data(2, n=300)[0]
    for C in (0.01, 0.1, 1.0):
        tree, _ = svm_tree(gto.Tree.complete(2, [0, 1], X.shape[1]), X, y, C=C, max_depth=1)
        assert np.array_equal(tree.predict(Z), literal_pruned(X, y, Z, C))
        assert np.all(tree.W[1:] == 0)  # the children pass every point on
    # a root that sends a majority of class 1 left: the pruned left child sends them to
    # its class-1 leaf (the root SVM alone would call them class 0)
    rng = np.random.default_rng(7)
    X = rng.normal(size=(60, 2))
    y = np.r_[np.zeros(10, int), np.ones(50, int)]
    X[10:40] = [-3.0, 0.0] + 0.1 * rng.normal(size=(30, 2))  # class 1 deep on the left
    X[:10] = [-1.0, 0.0] + 0.1 * rng.normal(size=(10, 2))
    tree, _ = svm_tree(gto.Tree.complete(2, [0, 1], 2), X, y, C=1.0, max_depth=1)
    assert np.array_equal(tree.predict(X), literal_pruned(X, y, X, 1.0))


def test_multiclass_targets_follow_the_structure():
    """Structure ((0, 1), 2): the root separates class 2 (right) from 0 and 1."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 3))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.5, 0.5])
    tree, _ = svm_tree(gto.Tree.from_structure(((0, 1), 2), 3), X, y, C=1.0)
    ref = _svm(X, y == 2, 1.0)
    assert np.allclose(X @ tree.W[0] - tree.gamma[0], ref.decision_function(X), atol=1e-8)
    assert np.mean(tree.predict(X) == y) > 0.85


@pytest.mark.parametrize("penalty, C, intercept_scaling", [("l1", 0.1, 10.0), ("l1", 1.0, 1.0),
                                                         ("l2", 0.1, 1.0), ("l2", 3.0, 10.0)])
@pytest.mark.parametrize("n", [40, 200])  # n = 40 < 60 features: LinearSVC's dual="auto" takes the dual
def test_linear_svc_is_sklearns_linear_svc_bit_for_bit(penalty, C, intercept_scaling, n):
    """svm_tree's direct liblinear call against LinearSVC itself, as svm_tree used
    it: the same coefficients, intercept and iterations bit for bit, weighted and
    not, for an int seed, a RandomState (both draw the same seeds from it) and
    None (the global generator, reseeded before each); and the fallback through
    LinearSVC the same."""
    rng = np.random.default_rng(n)
    Z = rng.normal(size=(n, 60 if n == 40 else 5))
    target = Z[:, 0] + 0.5 * Z[:, 1] + rng.normal(scale=0.8, size=n) > 0.3
    weight = rng.uniform(0.2, 3.0, size=n)
    for w, seed in [(np.ones(n), 0), (weight, 7), (weight, "rs"), (np.ones(n), None)]:
        ref = _linear_svc(C, penalty, intercept_scaling)
        ref.set_params(random_state=np.random.RandomState(3) if seed == "rs" else seed)
        np.random.seed(5)
        ref.fit(Z, target, sample_weight=w)
        np.random.seed(5)
        got = linear_svc(Z, target, w, C, penalty, intercept_scaling,
                         np.random.RandomState(3) if seed == "rs" else seed)
        assert np.array_equal(got[0], ref.coef_) and np.array_equal(got[1], ref.intercept_)
        assert got[2] == ref.n_iter_
        np.random.seed(5)  # the fallback through LinearSVC (a scikit-learn without the binding)
        slow = _linear_svc_estimator(Z, target, w, C, penalty, intercept_scaling,
                                     np.random.RandomState(3) if seed == "rs" else seed)
        assert all(np.array_equal(a, b) for a, b in zip(slow, got))


def test_linear_svc_calls_the_binding_with_this_scikit_learn(monkeypatch):
    """With the installed scikit-learn the direct call is taken (not the LinearSVC
    fallback, which the bit-for-bit test cannot tell apart from it)."""
    def no_fallback(*args):
        raise AssertionError("LinearSVC fallback taken")

    monkeypatch.setattr(_svm_start, "_linear_svc_estimator", no_fallback)
    Z, target = np.array([[0.0, 1.0], [1.0, 0.0], [0.2, 0.9], [0.9, 0.1]]), np.array([1, 0, 1, 0]) > 0
    coef, _, _ = linear_svc(Z, target, np.ones(4), 1.0, "l1", 1.0, 0)
    assert coef.shape == (1, 2) and coef[0, 0] < 0 < coef[0, 1]


def test_linear_svc_falls_back_to_linear_svc_when_the_binding_changed(monkeypatch):
    """A binding that takes other arguments (TypeError) gives LinearSVC's answer, and
    LinearSVC is used from then on."""
    class Changed:
        calls = 0

        def set_verbosity_wrap(self, verbosity):
            pass

        def train_wrap(self, *args):
            Changed.calls += 1
            raise TypeError("train_wrap() takes exactly 13 positional arguments")

    monkeypatch.setattr(_svm_start, "_liblinear", Changed())
    rng = np.random.default_rng(2)
    Z = rng.normal(size=(50, 3))
    target = Z[:, 0] > 0.1
    for _ in range(2):
        got = linear_svc(Z, target, np.ones(50), 0.5, "l1", 10.0, 0)
        ref = _linear_svc(0.5, "l1", 10.0).set_params(random_state=0).fit(Z, target)
        assert np.array_equal(got[0], ref.coef_) and np.array_equal(got[1], ref.intercept_)
    assert Changed.calls == 1 and _svm_start._liblinear is None


def test_a_pure_node_sends_everything_to_its_class():
    X, y = _data(4)
    tree, _ = svm_tree(gto.Tree.from_structure((0, 1), X.shape[1]), X, np.ones_like(y))
    assert np.all(tree.W == 0) and np.all(tree.predict(X) == 1)


def test_cv_scores_of_the_svm_candidates_are_hand_run_cross_validation():
    """GTOClassifier's cv_results_ for its SVM grid points: the mean held-out accuracy
    of the hand-built tree on the same stratified folds."""
    X, y = _data(5, n=90, noise=0.2)
    clf = gto.GTOClassifier(cv=3, max_iter=40, random_state=0).fit(X, y)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    res = clf.cv_results_
    svm_rows = np.flatnonzero(np.isnan(res["param_alpha"]) & np.isfinite(res["param_svm_C"]))
    assert [res["params"][i]["svm_C"] for i in svm_rows] == list(gto.learners._estimator.SVM_C_GRID)
    for i in svm_rows:
        C = res["params"][i]["svm_C"]
        right, unsure = [], []  # per fold: held-out accuracy; share within the solver's tolerance
        for tr, te in folds:
            pred, margin = literal_depth2(X[tr], y[tr], X[te], C, gto.learners._estimator.SVM_PENALTY,
                                          gto.learners._estimator.SVM_INTERCEPT_SCALING)
            right.append(np.mean(pred == y[te]))
            unsure.append(np.mean(margin <= 1e-3))  # see assert_root_is_the_svm
        assert np.mean(unsure) < 0.02
        assert res["mean_test_score"][i] == pytest.approx(np.mean(right), abs=np.mean(unsure) + 1e-12)


def test_cv_does_not_pick_an_svm_tree_on_a_planted_xor_tree():
    """Noise-free XOR of two oblique cuts: no linear root helps, so every SVM tree
    stays near chance while a searched depth-2 tree is exact; the CV must see it."""
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(120, 3))
    y = ((X[:, 0] + 0.2 * X[:, 2] > 0.6) ^ (X[:, 1] - 0.1 * X[:, 2] > 0.45)).astype(int)
    clf = gto.GTOClassifier(cv=3, max_iter=300, random_state=0).fit(X, y)
    res = clf.cv_results_
    is_svm = np.isnan(res["param_alpha"]) & np.isfinite(res["param_svm_C"])
    searched = ~np.isnan(res["param_alpha"])
    assert res["mean_test_score"][is_svm].max() < 0.8 < res["mean_test_score"][searched].max()
    assert clf.alpha_ is not None  # a searched tree (svm_C_: the C of its SVM start)
    assert clf.score(X, y) > 0.95


@pytest.mark.parametrize("seed, noise", [(10, 0.1), (13, 0.1)])  # best: SVM C = 1; the search
def test_one_standard_error_rule_ranks_the_svm_trees_simplest(seed, noise):
    """selection="1se" over the whole grid, evaluated literally on cv_results_: the
    SVM trees (smaller C first) come before every searched tree, and these by
    larger alpha."""
    X, y = _data(seed, n=90, noise=noise)
    clf = gto.GTOClassifier(cv=3, max_iter=40, random_state=0, selection="1se").fit(X, y)
    res = clf.cv_results_
    scores = np.array([res[f"split{k}_test_score"] for k in range(3)]).T
    mean = scores.mean(axis=1)
    best = int(np.nanargmax(mean))  # NaN: a searched point the halving did not run to the end
    se = np.std(scores[best], ddof=1) / np.sqrt(3)
    near = [i for i in range(len(mean)) if mean[i] >= mean[best] - se - 1e-12]
    svm = [i for i in near if res["params"][i]["alpha"] is None]
    expect = (min(svm, key=lambda i: res["params"][i]["svm_C"]) if svm else
              max(near, key=lambda i: res["params"][i]["alpha"]))
    assert clf.best_index_ == expect
    assert len(near) > 1 and expect != best  # the rule matters here


def test_the_auto_grids_alpha0_search_starts_at_the_svm_tree_then_the_portfolio(monkeypatch):
    """alpha="auto": the unpenalised grid point is one search per fit whose restarts
    start from the linear-SVM tree of SVM_START_C (the hand-built tree here), the
    greedy LP tree and CART (the kinds each restart starts from, recorded by a spy;
    the first CV stage runs the first restart only, the refit all three: the
    choice is forced to the search here); the answer never has more training
    errors than the SVM tree, and it is the restart with the fewest (counted here
    from predictions)."""
    X, y = _data(5, n=90, noise=0.2)
    real, calls = gto.learners._estimator.optimize, []
    real_run = OPTIMIZE_MODULE.run_restart

    def spy(tree, X_, y_, **kw):
        if kw["alpha"] == 0:
            calls.append({"tree": tree, "X": X_, "y": y_, "init": kw["init"], "runs": [],
                          "restarts": kw["restarts"]})
        res = real(tree, X_, y_, **kw)
        if kw["alpha"] == 0:
            calls[-1]["res"] = res
        return res

    def run_spy(problem, kind, tree, *args, **kw):
        run = real_run(problem, kind, tree, *args, **kw)
        if calls and "res" not in calls[-1]:
            calls[-1]["runs"].append((kind, problem.tree_of(run.Theta_count, snap=True)))
        return run

    monkeypatch.setattr(gto.learners._estimator, "optimize", spy)
    monkeypatch.setattr(OPTIMIZE_MODULE, "run_restart", run_spy)
    monkeypatch.setattr(gto.learners._estimator, "choose", lambda *a: 0)
    clf = gto.GTOClassifier(cv=3, max_iter=60, random_state=0).fit(X, y)
    assert clf.best_index_ == 0 and clf.cv_results_["params"][0]["svm_C"] is not None
    assert len(calls) >= 4 and len(calls[-1]["y"]) == len(y)  # the folds, then the refit
    second = gto.learners._estimator.CONTENDER_RESTARTS
    assert calls[-1]["restarts"] == 3 and all(c["restarts"] in (1, second, 3) for c in calls)
    first = {}  # a contender's second-stage search on a fold starts from its first-stage tree
    for call in calls:
        Xf, yf, res = call["X"], call["y"], call["res"]
        assert call["init"] == "tree"
        assert [kind for kind, _ in call["runs"]] == ["tree", "greedy", "cart"][:call["restarts"]]
        literal = literal_depth2(Xf, yf, Xf, gto.learners._estimator.SVM_START_C)[0]  # L2: exact
        key = Xf.tobytes()
        if call["restarts"] == second and len(yf) < len(y):
            literal = first[key].predict(Xf)
        else:
            first[key] = res.tree
        assert np.array_equal(call["tree"].predict(Xf), literal)
        found = int(np.sum(res.tree.predict(Xf) != yf))
        assert found <= np.sum(literal != yf)
        assert found == min(int(np.sum(t.predict(Xf) != yf)) for _, t in call["runs"])
