"""gto.mip.solve_odt against brute force over every group/subset choice."""
import itertools
import math

import numpy as np
import pytest

import gto
from gto.mip import solve_odt

STRUCT = ((0, 1), (0, 1))


def tiny(seed, n=36, n_feat=4, n_val=3, n_classes=2):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_val, size=(n, n_feat)).astype(float)
    # labels from a planted subset rule plus noise, so optima are not trivial
    y = ((np.isin(X[:, 0], [0, 2]) ^ (X[:, 1] == 1)) | (rng.random(n) < 0.2)).astype(int)
    if n_classes == 3:
        y = np.where(X[:, 2] == 2, 2, y)
    return X, y


def choices(X, allowed=lambda col, S: True):
    """Every (feature, value set) decision and its left mask on X."""
    out = []
    for f in range(X.shape[1]):
        vals = np.unique(X[:, f])
        for r in range(len(vals) + 1):
            for S in itertools.combinations(vals.tolist(), r):
                if allowed(vals, S):
                    out.append(((f, S), np.isin(X[:, f], S)))
    return out


def brute(X, y, leaves, allowed=lambda col, S: True, score=None):
    """Minimum score over all depth-2 trees ((l0, l1), (l2, l3)) of subset decisions."""
    ch = choices(X, allowed)
    M = np.array([m for _, m in ch])  # (C, N)
    l0, l1, l2, l3 = leaves
    best = math.inf
    for a in range(len(ch)):
        pred = np.where(M[a][None, None, :], np.where(M[:, None, :], l0, l1), np.where(M[None, :, :], l2, l3))
        # pred[b, c, i]
        s = (pred != y).sum(axis=2) if score is None else score(pred)
        best = min(best, s.min())
    return best


@pytest.mark.parametrize("seed", range(4))
def test_equals_brute_force(seed):
    X, y = tiny(seed)
    res = solve_odt(X, y, STRUCT, time_limit=60)
    assert res.status == "optimal"
    truth = brute(X, y, (0, 1, 0, 1))
    assert res.n_errors == truth
    assert res.objective == pytest.approx(truth, abs=1e-6)
    assert res.tree.n_errors(X, y) == truth
    assert res.tree.has_subsets and res.leafless_errors == 0


@pytest.mark.parametrize("flags", [dict(strengthen=False), dict(anchor=False), dict(relax=False),
                                   dict(strengthen=False, anchor=False, relax=False)])
def test_every_option_keeps_the_optimum(flags):
    X, y = tiny(7)
    truth = brute(X, y, (0, 1, 0, 1))
    res = solve_odt(X, y, STRUCT, time_limit=60, **flags)
    assert res.n_errors == truth


def test_multiclass_fixed_leaves():
    X, y = tiny(3, n_classes=3)
    struct = ((0, 1), (2, 0))
    res = solve_odt(X, y, struct, time_limit=60)
    assert res.n_errors == brute(X, y, (0, 1, 2, 0))
    assert res.tree.structure == struct


@pytest.mark.parametrize("weighted", [False, True])
def test_a_structure_may_leave_a_class_out(weighted):
    """Class 2 has no leaf in ((0, 1), (0, 1)): its points are errors whatever the
    splits, and the optimum, its bound and ``n_errors`` count them (brute force over
    every pair of subset decisions, class 2 never predicted)."""
    X, y = tiny(3, n_classes=3)
    w = np.linspace(0.5, 2.0, len(y)) if weighted else None
    assert np.any(y == 2)
    res = solve_odt(X, y, STRUCT, time_limit=60, sample_weight=w)
    weights = np.ones(len(y)) if w is None else w
    truth = brute(X, y, (0, 1, 0, 1), score=lambda pred: ((pred != y) * weights).sum(axis=2))
    assert res.status == "optimal"
    assert res.n_errors == pytest.approx(truth) and res.objective == pytest.approx(truth, abs=1e-6)
    assert res.bound == pytest.approx(truth, abs=1e-4 * truth + 1e-6)
    assert res.leafless_errors == pytest.approx(weights[y == 2].sum())
    assert res.tree.n_errors(X, y, w) == pytest.approx(truth)


def test_a_structure_needs_two_classes_with_points():
    X, y = tiny(0)  # classes 0 and 1; class 1 has no leaf in ((0, 2), (0, 2))
    with pytest.raises(ValueError, match="have no leaf"):
        solve_odt(X, y, ((0, 2), (0, 2)))


def test_max_card_equals_brute_force():
    X, y = tiny(11, n_feat=3)
    X[:, 2] = np.random.default_rng(0).integers(0, 5, len(X))  # a 5-valued feature
    y = np.isin(X[:, 2], [0, 2]).astype(int) ^ (X[:, 0] == 1)
    def ok(vals, S):
        return len(S) <= 1 or len(S) >= len(vals) - 1

    res = solve_odt(X, y, STRUCT, time_limit=60, max_card=1)
    assert res.n_errors == brute(X, y, (0, 1, 0, 1), ok)
    assert res.n_errors > brute(X, y, (0, 1, 0, 1))  # the restriction bites here
    for s in res.tree.subsets:
        f, S = s
        n = len(np.unique(X[:, f]))
        assert len(S) <= 1 or len(S) >= n - 1


def test_ordinal_equals_brute_force():
    X, y = tiny(5)
    X[:, 1] = np.random.default_rng(1).integers(0, 4, len(X))
    y = ((X[:, 1] == 1) | (X[:, 1] == 3)).astype(int) ^ (X[:, 0] == 2)

    def allowed_for(f):  # feature 1 only by prefixes and suffixes of its sorted values
        def allowed(vals, S):
            if f != 1:
                return True
            idx = np.isin(vals, S)
            return not np.any(np.diff(idx.astype(int)) > 0) or not np.any(np.diff(idx.astype(int)) < 0)
        return allowed

    res = solve_odt(X, y, STRUCT, time_limit=60, ordinal=[1])
    # brute force with the ordinal restriction on feature 1
    truth = _brute_restricted(X, y, lambda f, vals, S: allowed_for(f)(vals, S))
    assert res.n_errors == truth
    assert truth > brute(X, y, (0, 1, 0, 1))  # the restriction bites here
    for d in range(3):
        if res.tree.subsets[d] is None:  # ordinal decisions are thresholds on the column
            assert np.count_nonzero(res.tree.W[d]) <= 1


def _brute_restricted(X, y, allowed):
    ch = []
    for f in range(X.shape[1]):
        vals = np.unique(X[:, f])
        for r in range(len(vals) + 1):
            for S in itertools.combinations(vals.tolist(), r):
                if allowed(f, vals, S):
                    ch.append(np.isin(X[:, f], S))
    M = np.array(ch)
    best = math.inf
    for a in range(len(M)):
        pred = np.where(M[a][None, None, :], np.where(M[:, None, :], 0, 1), np.where(M[None, :, :], 0, 1))
        best = min(best, (pred != y).sum(axis=2).min())
    return best


@pytest.mark.parametrize("level", [1.0, 0.9])
def test_min_tpr_equals_brute_force(level):
    X, y = tiny(2)
    pos = y == 1
    need = math.ceil(level * pos.sum() - 1e-9)

    def score(pred):  # false positives if TPR holds, else infinity
        tp = (pred[..., pos] == 1).sum(axis=-1)
        fp = (pred[..., ~pos] == 1).sum(axis=-1)
        return np.where(tp >= need, fp, 10**6)

    truth = brute(X, y, (0, 1, 0, 1), score=score)
    res = solve_odt(X, y, STRUCT, time_limit=60, min_tpr=level)
    assert res.objective == pytest.approx(truth, abs=1e-6)
    pred = res.tree.predict(X)
    assert (pred[pos] == 1).sum() >= need
    assert (pred[~pos] == 1).sum() == truth
    assert res.tpr >= level - 1e-12


def test_string_categories_and_text():
    X, y = tiny(1)
    names = np.array(["red", "green", "blue"], dtype=object)
    Xs = names[X.astype(int)]
    a = solve_odt(X, y, STRUCT, time_limit=60)
    b = solve_odt(Xs, y, STRUCT, time_limit=60)
    assert a.n_errors == b.n_errors == b.tree.n_errors(Xs, y)
    text = b.tree.to_text(feature_names=["colour", "size", "shape", "taste"])
    assert " in {" in text and any(c in text for c in ("red", "green", "blue"))


def test_numeric_column_is_binned_into_thresholds():
    rng = np.random.default_rng(0)
    x = rng.normal(size=60)
    X = np.column_stack([x, rng.integers(0, 3, 60)])
    y = (x > 0.3).astype(int)
    res = solve_odt(X, y, STRUCT, time_limit=60, categorical_features=[1])
    assert res.n_errors == 0
    assert res.tree.n_errors(X, y) == 0
    assert any(res.tree.subsets[d] is None and res.tree.W[d, 0] != 0 for d in range(3))


def test_warm_start_accepted_and_first_incumbent_no_worse():
    X, y = tiny(4)
    g = gto.optimize(gto.Tree.complete(2, [0, 1], 4), X, y, categorical_features="all",
                     one_group=True, max_iter=200, random_state=0)
    res = solve_odt(X, y, STRUCT, time_limit=60, warm_start=g.tree)
    assert res.start_objective == pytest.approx(g.n_errors)
    assert res.incumbents and res.incumbents[0][1] <= g.n_errors + 1e-9
    assert res.n_errors <= g.n_errors


def test_feature_selection_cart_uses_cart_groups():
    X, y = tiny(6)
    res = solve_odt(X, y, STRUCT, time_limit=60, feature_selection="cart")
    used = {s[0] for s in res.tree.subsets}
    assert used <= {int(g[1:]) for g in res.groups}


@pytest.mark.parametrize("kw, exc", [
    (dict(max_card=0), ValueError), (dict(min_tpr=1.5), ValueError),
    (dict(feature_selection="lasso"), ValueError), (dict(categorical_features=["nope"]), ValueError),
    (dict(time_limit=-1), ValueError),
])
def test_bad_arguments(kw, exc):
    X, y = tiny(0)
    with pytest.raises(exc):
        solve_odt(X, y, STRUCT, **kw)


@pytest.mark.parametrize("kw", [dict(), dict(max_card=1), dict(ordinal=[0]), dict(min_tpr=0.5)])
def test_warm_start_assignment_is_feasible_and_exact(kw):
    """A start tree breaking the anchor rule (first value right at the root) is mirrored into
    a feasible assignment whose objective is the tree's error count."""
    from gto.mip.odt import _choices_of_tree, build

    X, y = tiny(8)
    start = gto.Tree(((0, 1), (0, 1)), 4, subsets=[(0, (1.0, 2.0)), (1, (1.0,)), (2, (0.0,))])
    assert 0.0 not in start.subsets[0][1]
    model = build(X, y, STRUCT, **kw)
    values = model.start(_choices_of_tree(model, start, X))
    for var, val in values.items():
        var.value = np.reshape(val, var.shape)
    worst = max(float(np.max(c.violation())) for c in model.problem.constraints)
    assert worst <= 1e-9
    errors = (start.predict(X) != y)
    expected = errors.sum() if "min_tpr" not in kw else (errors & (y == 0)).sum()
    assert model.problem.objective.value == pytest.approx(expected)


@pytest.mark.slow
def test_experiment_prints_table8_rows_beside_the_paper(tmp_path, capsys):
    from experiments import odt as exp

    rows = exp.main(["--data", "monk1", "--depths", "2", "--splits", "1", "--time-limit", "60",
                     "--gto-iter", "50", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    (row,) = rows
    assert row["n_train"] == min(math.ceil(0.9 * 556), 600) and row["n_test"] == 556 - math.ceil(0.9 * 556)
    assert row["status"] == "optimal" and row["gap"] == 0
    assert row["odt_train"] >= row["gto_train"]  # the MIP optimum is at least as good as GTO
    line = next(l for l in out.splitlines() if l.startswith("| monk1 | 2 |"))
    assert line.endswith("| 78.2 (74.1) | 76.6 (76.8) |")
    assert (tmp_path / "odt.jsonl").exists()


def test_other_cvxpy_solver_and_dataframe_input():
    pd = pytest.importorskip("pandas")
    X, y = tiny(9)
    res = solve_odt(X, y, STRUCT, time_limit=60, solver="SCIPY")
    assert res.n_errors == brute(X, y, (0, 1, 0, 1))
    df = pd.DataFrame({f"f{j}": pd.Categorical(np.array(["a", "b", "c"])[X[:, j].astype(int)])
                       for j in range(X.shape[1])})
    res_df = solve_odt(df, y, 2, time_limit=60)
    assert res_df.n_errors == res.n_errors == res_df.tree.n_errors(df, y)


@pytest.mark.slow
def test_min_tpr_on_cancer_holds_and_tnr_falls_as_it_tightens():
    import problems

    X, y = problems.load("cancer")
    rng = np.random.default_rng(0)
    idx = rng.permutation(len(y))[:60]
    X, y = X[idx], y[idx].copy()
    y[rng.random(60) < 0.15] ^= 1  # noise, so the bound costs specificity
    tnr = []
    for level in (0.8, 0.9, 1.0):
        res = solve_odt(X, y, 2, time_limit=120, categorical_features=(), min_tpr=level, n_bins=4)
        assert res.status == "optimal"
        pred = res.tree.predict(X)
        assert np.mean(pred[y == 1] == 1) >= level - 1e-12  # literal training TPR
        tnr.append(np.mean(pred[y == 0] == 0))
    assert tnr[0] >= tnr[1] >= tnr[2] and tnr[0] > tnr[2]
