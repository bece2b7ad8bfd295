import csv
import json

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import MinMaxScaler
from sklearn.tree import DecisionTreeClassifier

import problems
from experiments import quality


def test_quick_run_writes_its_own_files(tmp_path):
    text = quality.run(out=str(tmp_path), data=["liver"], quick=True, n_jobs=1,
                       peer_names=["CART-d2"], gto_params={"cv": 2}, quiet=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "quality-quick.csv", "quality-quick.json", "quality-quick.md"]
    assert (tmp_path / "quality-quick.md").read_text().strip() == text.strip()
    with open(tmp_path / "quality-quick.csv", newline="") as fh:
        rows = {r["arm"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"GTO", "GTO-alpha0", "CART-d2"}
    assert not any(r["failed"] for r in rows.values())
    # CART-d2 on the first fold, min-max scaled on the training part: computed here
    X, y = problems.load("liver")
    train, test = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    scaler = MinMaxScaler().fit(X[train])
    cart = DecisionTreeClassifier(max_depth=2, random_state=0).fit(scaler.transform(X[train]),
                                                                   y[train])
    expected = 100 * np.mean(cart.predict(scaler.transform(X[test])) != y[test])
    assert float(rows["CART-d2"]["test_error"]) == expected
    for arm in ("GTO", "GTO-alpha0"):
        assert int(rows[arm]["decisions"]) == 3
        assert 1 <= float(rows[arm]["nonzero"]) <= X.shape[1]
        assert 0 <= float(rows[arm]["test_error"]) <= 100
    summary = json.loads((tmp_path / "quality-quick.json").read_text())["summary"]
    assert summary["liver"]["CART-d2"]["test"] == expected
    header = next(line for line in text.splitlines() if line.startswith("| data"))
    assert "GTO test %" in header and "CART-d2 dec / nz" in header
    assert "liver: GTO" in text  # the verdict line against the peers
    assert "GTO: gto.GTOClassifier(depth=2, random_state=fold, cv=2); GTO-alpha0: the same" in text
    assert "paper sets: at or below the best peer on" in text and "of 1 run (4 in all)" in text
    assert "GTO s" in header and summary["liver"]["GTO"]["seconds"] > 0
    # a report combined from the CSV has the same table
    again = quality.combine([str(tmp_path / "quality-quick.csv")], out=str(tmp_path / "c"))
    assert ([line for line in again.splitlines() if line.startswith("|")]
            == [line for line in text.splitlines() if line.startswith("|")])
    assert (tmp_path / "c" / "quality.md").exists()


def test_big_sets_are_subsampled_stratified():
    folds = quality.splits(["phoneme"])
    X, y = problems.load("phoneme")
    assert len(folds) == 5
    assert sum(len(s.y_test) for s in folds) == quality.BIG_SAMPLE
    assert abs(np.mean(np.concatenate([s.y_test for s in folds])) - np.mean(y)) < 0.002
    assert all(len(s.y_train) + len(s.y_test) == quality.BIG_SAMPLE for s in folds)


def test_unknown_data_set():
    import pytest
    with pytest.raises(ValueError, match="unknown data set"):
        quality.run(data=["nope"])


def test_selection_rules_on_hand_made_records():
    from experiments import selection
    recs = [{"candidate": "a0", "inner": [0.80, 0.90, 0.70, 0.80, 0.80], "test": 10.0},
            {"candidate": "a1", "inner": [0.78, 0.80, 0.76, 0.80, 0.76], "test": 20.0},
            {"candidate": "axis", "inner": [0.60] * 5, "test": 30.0}]
    # best mean 0.80 (a0); its standard error std([.8,.9,.7,.8,.8], ddof=1)/sqrt(5) = 0.0316
    assert selection.choose(recs, ["a0", "a1", "axis"], "max")["candidate"] == "a0"
    # a1 (mean 0.78) is within one SE and simpler than a0; axis is not within it
    assert selection.choose(recs, ["a0", "a1", "axis"], "1se")["candidate"] == "a1"
    assert selection.choose(recs, ["a0", "axis"], "1se")["candidate"] == "a0"
    # a pruned SVM tree ("lin") counts simpler than the whole one at any C
    recs += [{"candidate": "svm0.01", "inner": [0.79] * 5, "test": 1.0},
             {"candidate": "lin", "inner": [0.78] * 5, "test": 2.0}]
    assert selection.choose(recs, ["a0", "svm0.01", "lin"], "1se")["candidate"] == "lin"
    assert selection.choose(recs, ["a0", "svm0.01"], "1se")["candidate"] == "svm0.01"


def test_selection_ranks_the_search_from_the_svm_tree_with_the_searched_trees():
    """The candidate "svm0.1-a0" (alpha-0 search from an SVM tree) is as complex as
    a0 in the one-standard-error rule: an SVM tree or a larger alpha within one SE
    is simpler."""
    from experiments import selection
    recs = [{"candidate": "svm0.1-a0", "inner": [0.80, 0.90, 0.70, 0.80, 0.80], "test": 1.0},
            {"candidate": "a1", "inner": [0.79] * 5, "test": 2.0},
            {"candidate": "svm", "inner": [0.78] * 5, "test": 3.0}]
    assert selection.choose(recs, ["svm0.1-a0", "a1", "svm"], "1se")["candidate"] == "svm"
    assert selection.choose(recs, ["svm0.1-a0", "a1"], "1se")["candidate"] == "a1"
    assert selection.choose(recs, ["svm0.1-a0", "a1", "svm"], "max")["candidate"] == "svm0.1-a0"


def test_selection_svm_candidate_is_the_estimators_svm_tree():
    """experiments.selection's 1-norm SVM candidate is the tree GTOClassifier's
    internal CV scores (same penalty, same liblinear intercept scaling), on data
    (spectf, 21 % / 79 %) where the scaling changes the tree."""
    import gto
    from experiments import selection
    from gto.engine._svm_start import svm_tree

    X, y = problems.load("spectf")
    X = MinMaxScaler().fit_transform(X)
    start = gto.Tree.complete(2, np.unique(y), X.shape[1])
    grid_point = {"alpha": None, "max_features": None, "svm_C": 0.1}
    ours = gto.GTOClassifier(random_state=0)._fit_tree(start, X, y, None, grid_point, 1).tree
    theirs = selection.SVMTree(C=0.1, penalty="l1", random_state=0).fit(X, y).tree_
    np.testing.assert_array_equal(theirs.W, ours.W)
    np.testing.assert_array_equal(theirs.gamma, ours.gamma)
    unscaled = svm_tree(start, X, y, C=0.1, random_state=0, penalty="l1")[0]
    assert not np.array_equal(unscaled.W, ours.W)


def test_gto_max_iter_from_the_command_line_reaches_the_estimator(monkeypatch):
    # --gto max_iter=N is passed on to GTOClassifier (it was a second value of the arms'
    # own max_iter argument), and wins over the run's (--quick's) budget
    import gto

    seen = []
    real = gto.GTOClassifier.fit

    def spy(self, X, y, sample_weight=None):
        seen.append(self.max_iter)
        return real(self, X, y, sample_weight)

    monkeypatch.setattr(gto.GTOClassifier, "fit", spy)
    the_arms, _ = quality.arms(peer_names=[], gto_params={"max_iter": 7, "alpha": 0.0})
    X, y = problems.load("liver")
    for arm in the_arms.values():
        predict, n_decisions, _ = arm(X[:60], y[:60], 0, None)
        assert n_decisions == 3 and len(predict(X[60:70])) == 10
        arm(X[:60], y[:60], 0, quality.QUICK_ITER)
    assert seen == [7, 7, 7, 7]


def test_repeated_cv_runs_one_stratified_5_fold_cv_per_shuffle_seed():
    once, twice = quality.splits(["liver", quality.SYNTHETIC]), quality.splits(
        ["liver", quality.SYNTHETIC], shuffles=(0, 3))
    liver = [s for s in twice if s.dataset == "liver"]
    assert [s.split for s in liver] == [*range(5), *range(15, 20)]
    X, y = problems.load("liver")
    folds = [*StratifiedKFold(5, shuffle=True, random_state=0).split(X, y),
             *StratifiedKFold(5, shuffle=True, random_state=3).split(X, y)]
    for s, (train, test) in zip(liver, folds):
        assert np.array_equal(s.X_train, X[train]) and np.array_equal(s.y_test, y[test])
        assert s.seed == s.split % 5  # GTO's random_state: the fold, as in one CV
    generated = [s for s in twice if s.dataset == quality.SYNTHETIC]
    assert [s.split for s in generated] == [*range(5), *range(15, 20)]
    draw = problems.synthetic(10, 500, 2000, random_state=17)
    assert np.array_equal(generated[7].X_train, draw.X_train)
    first = [s for s in twice if s.split < 5]  # the first seed's: the default protocol's
    assert [(s.dataset, s.split) for s in first] == [(s.dataset, s.split) for s in once]
    assert all(np.array_equal(a.X_test, b.X_test) for a, b in zip(first, once))


def test_repeated_cv_report_names_its_seeds_and_runs_combine(tmp_path):
    import pytest
    kw = dict(data=["liver"], quick=True, n_jobs=1, peer_names=["CART-d2"], gto_arms=[],
              quiet=True)
    text = quality.run(out=str(tmp_path / "a"), shuffles=(0, 1), **kw)
    assert "shuffle seed 0, 1" in text
    assert "GTOClassifier" not in text and "GTO-alpha0" not in text  # no GTO arm was run
    with open(tmp_path / "a" / "quality-quick.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["split"] for r in rows] == ["0", "5"]
    # one run per seed, combined: the same rows, the same table
    quality.run(out=str(tmp_path / "b0"), shuffles=(0,), **kw)
    quality.run(out=str(tmp_path / "b1"), shuffles=(1,), **kw)
    again = quality.combine([str(tmp_path / f"b{s}" / "quality-quick.csv") for s in (0, 1)],
                            out=str(tmp_path / "c"))
    assert "shuffle seeds 0, 1" in again
    assert ([line for line in again.splitlines() if line.startswith("|")]
            == [line for line in text.splitlines() if line.startswith("|")])
    errors = [float(r["test_error"]) for r in rows]
    assert f"{np.mean(errors):.1f} ± {np.std(errors):.1f}" in again
    for bad in ((), (0, 0), (-1,), (0.5,)):
        with pytest.raises(ValueError, match="shuffles"):
            quality.run(out=str(tmp_path), data=["liver"], quick=True, shuffles=bad)
