import csv
import importlib.util

import numpy as np
import pytest

import gto
import problems
import tabu
from experiments import common, figure4, peers, table1
from gto.cli._main import main


def read(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_table1_quick_through_the_gto_command(tmp_path, capsys):
    code = main(["experiment", "table1", "--quick", "--jobs", "1", "--out", str(tmp_path),
                 "--peers", "CART-d2", "-q"])
    out = capsys.readouterr().out
    assert code == 0
    rows = read(tmp_path / "table1-quick.csv")
    datasets = [*problems.DATASETS, "synthetic-5d", "synthetic-10d", "synthetic-20d"]
    assert list(dict.fromkeys(r["dataset"] for r in rows)) == datasets
    assert [r["arm"] for r in rows[:5]] == ["FW", "EPTS", "EPTS default", "C4.5", "CART-d2"]
    assert len(rows) == len(datasets) * 5 and not any(r["failed"] for r in rows)
    for r in rows:
        assert 0 <= float(r["train_error"]) <= 100 and 0 <= float(r["test_error"]) <= 100
        assert int(r["decisions"]) >= 1
    assert all(r["decisions"] == "3" for r in rows if r["arm"] in ("FW", "EPTS", "EPTS default"))
    md = (tmp_path / "table1-quick.md").read_text()
    assert md.strip() == out.strip()
    table = [line for line in md.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| data | arm | train % paper | train % ours | test % paper")
    assert len(table) == 1 + len(datasets) * 5
    # the paper's figures sit beside ours (problems.paper_table), n/a for arms it lacks
    assert "| heart | FW | 17.7 | " in md and "| 17.8 | " in md
    for line in table[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert (cells[2::2] == ["n/a"] * 3) == (cells[1] in ("CART-d2", "EPTS default"))
    assert "RPI Math Report 214" in md


def test_table1_puts_the_papers_numbers_beside_ours():
    rows = [{"dataset": "liver", "split": 0, "arm": "EPTS", "train_error": 10.0,
             "test_error": 20.0, "decisions": 3, "seconds": 0.1, "failed": ""}]
    text = table1.table(rows, ["EPTS"])
    # Bennett & Blue Table 1, liver, EPTS: 35.3 % train, 38.6 % test, 3 decisions
    last = "| liver | EPTS | 35.3 | 10.0 ± 0.0 | 38.6 | 20.0 ± 0.0 | 3.0 | 3.0 |"
    assert text.splitlines()[-1] == last


def test_splits_follow_the_protocol():
    splits = table1.splits(quick=False)
    real = [s for s in splits if not s.dataset.startswith("synthetic")]
    assert len(real) == 20 and len(splits) == 35
    for name in problems.DATASETS:
        X, y = problems.load(name)
        folds = [s for s in real if s.dataset == name]
        assert sum(len(s.y_test) for s in folds) == len(y)
        assert all(abs(np.mean(s.y_test) - np.mean(y)) < 0.05 for s in folds)  # stratified
    generated = [s for s in splits if s.dataset == "synthetic-10d"]
    assert [s.split for s in generated] == list(range(5))
    assert all(s.X_train.shape == (500, 10) and s.X_test.shape == (2000, 10) for s in generated)


def test_a_failing_arm_is_recorded_not_fatal():
    def broken(X, y, seed, max_iter):
        raise RuntimeError("boom")

    split = next(common.synthetic_splits(2, 40, 40, 1))
    rows = common.run_split(split, {"C4.5": common.fit_c45, "broken": broken}, 10)
    assert rows[1]["failed"] == "RuntimeError: boom" and rows[1]["train_error"] == ""
    summary = common.summarize(rows + [dict(rows[0], split=1)])
    assert summary["synthetic-2d", "broken"]["failed"] == 1
    assert common.pm(summary["synthetic-2d", "broken"]["test"]) == "failed"
    assert common.pm((1.0, 0.5), failed=2) == "1.0 ± 0.5 (2 failed)"
    assert common.failures(rows) == ["failed: synthetic-2d split 0 broken: RuntimeError: boom"]


def test_figure4_quick_writes_csv_markdown_and_picture(tmp_path):
    text = figure4.run(str(tmp_path), quick=True, n_jobs=2, dims=(2, 3), quiet=True)
    rows = read(tmp_path / "figure4-quick.csv")
    assert [r["arm"] for r in rows[:4]] == ["EPTS-M", "EPTS-P", "FW", "C4.5"]
    assert len(rows) == 8 and {r["dataset"] for r in rows} == {"synthetic-2d", "synthetic-3d"}
    assert (tmp_path / "figure4-quick.md").read_text().strip() == text.strip()
    assert "the paper's are not known to us" in text
    assert (tmp_path / "figure4-quick.png").stat().st_size > 1000


def test_peer_selection_skips_missing_packages(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "stree" else real(name, *a))
    arms, notes = peers.select(["CART", "stree-d2"], mip_budget=5)
    assert list(arms) == ["CART", "MIP-5s"]
    assert notes == ["stree-d2 skipped: the 'stree' package is not installed (pip install stree)"]
    with pytest.raises(ValueError, match="unknown peer"):
        peers.select(["C5.0"])


@pytest.mark.parametrize("name", list(peers.PEERS))
def test_peer_arms_fit_and_report_decisions(name):
    if name in peers.NEEDS:
        pytest.importorskip(peers.NEEDS[name])
    split = next(common.synthetic_splits(3, 120, 200, 1))
    row, = common.run_split(split, {name: peers.PEERS[name]}, 10)
    assert not row["failed"] and row["train_error"] <= 50 and row["test_error"] <= 50
    assert 1 <= row["decisions"] <= (3 if name.endswith("d2") else 200)


def test_mip_arm_within_its_budget():
    split = next(common.synthetic_splits(2, 30, 50, 1))
    arms, _ = peers.select([], mip_budget=10)
    row, = common.run_split(split, arms, 10)
    assert row["arm"] == "MIP-10s" and not row["failed"] and row["decisions"] == 3
    assert row["train_error"] == 0.0  # labelled by a three-decision tree: the MIP fits it
    assert row["seconds"] < 30


@pytest.mark.slow  # about two minutes: every benchmark of bench_gto, on small settings
def test_bench_gto_reports_every_figure(capsys):
    from experiments import bench_gto

    report = bench_gto.main(["--iterations", "300", "--speedup-iterations", "2", "--folds", "2"])
    assert report["epts"]["iterations"] == 300 and report["epts"]["iterations_per_second"] > 0
    assert set(report["epts_seconds_other_objectives"]) == {"minimum", "lexicographic"}
    assert report["walker_speedup"]["speedup"] > 1  # the structured walker beats the reference
    for arm in ("EPTS", "FW", "CART depth 2"):
        cv = report["cross_validation"][arm]
        assert 0 <= cv["train_error_%"] <= 100 and 0 <= cv["test_error_%"] <= 100
    assert "iterations in" in capsys.readouterr().out


def test_fit_speed_times_the_contender_stage_inside_the_internal_cv():
    """``stage_clock``'s "contenders" counts the internal CV's second stage only: on
    XOR with 30 % of the labels flipped the search is a contender (its short search
    reaches the contenders' bar, not the SVM trees'); on wdbc the first stage runs and
    stops the search before it becomes one, so nothing is counted; the estimator's
    method is restored afterwards."""
    from sklearn.preprocessing import MinMaxScaler

    import gto
    from experiments import fit_speed
    from gto.learners._estimator import GTOClassifier

    original = vars(GTOClassifier)["_race_folds"]
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(150, 2))
    y = ((X[:, 0] > 0.5) ^ (X[:, 1] > 0.5)).astype(int)
    y = np.where(rng.random(150) < 0.3, 1 - y, y)
    with fit_speed.stage_clock() as stages:
        gto.GTOClassifier(random_state=0, max_iter=400).fit(X, y)
    assert 0 < stages["contenders"] <= stages["cv"]
    X, y = problems.load("wdbc")
    with fit_speed.stage_clock() as stages:
        clf = gto.GTOClassifier(random_state=0, max_iter=300).fit(MinMaxScaler().fit_transform(X), y)
    ran = np.isfinite(clf.cv_results_["split0_test_score"][~np.isnan(clf.cv_results_["param_alpha"])])
    assert ran.all() and stages["contenders"] == 0 and stages["search"] > 0
    assert vars(GTOClassifier)["_race_folds"] is original


def test_seed_spread_shifts_the_seed_of_the_quality_protocols_fit():
    from sklearn.preprocessing import MinMaxScaler

    from experiments import quality, seed_spread

    # liver's first split: 34.78 % at seed 0, 24.64 % at seed 2 (the seed matters there)
    got = seed_spread.spread(["liver"], [0, 2], quick=True)["liver"]
    split, = quality.splits(["liver"], quick=True)
    scaler = MinMaxScaler().fit(split.X_train)
    for offset in (0, 2):
        model = gto.GTOClassifier(depth=2, random_state=split.seed + offset)
        model.fit(scaler.transform(split.X_train), split.y_train)
        error = 100 * np.mean(model.predict(scaler.transform(split.X_test)) != split.y_test)
        assert got[offset]["folds"] == [round(error, 2)]
        assert got[offset]["test"] == round(error, 2)


def test_fit_speed_generates_data_of_the_dimensions_asked():
    """``--features`` draws the generated data in that many dimensions, labelled by the
    split's planted tree (a literal walk of it), and names the split by its size and
    width; the default keeps the paper's 10-d name."""
    from experiments import fit_speed

    split, = fit_speed.splits([], [60], None, None, features=7)
    assert split.dataset == "synthetic-60x7"
    assert split.X_train.shape == (60, 7) and split.X_test.shape == (10_000, 7)
    tree = problems.synthetic(7, 60, 10_000, random_state=0).tree
    for X, y in ((split.X_train, split.y_train), (split.X_test, split.y_test)):
        leaves = []
        for x in X:  # Figure 2's tree: the root, then the decision on the point's side
            d = 2 if x @ tree.W[0] - tree.gamma[0] > 0 else 1
            leaves.append(2 * (d - 1) + int(x @ tree.W[d] - tree.gamma[d] > 0))
        assert np.array_equal(np.asarray(tree.leaf_classes)[leaves], y)
    default, = fit_speed.splits([], [60], None, None)
    assert default.dataset == "synthetic-60" and default.X_train.shape == (60, 10)
    assert fit_speed.parser().parse_args(["--features", "100"]).features == 100
    with pytest.raises(SystemExit) as stop:
        fit_speed.main(["--features", "0", "--data", "--synthetic"])
    assert stop.value.code == 2


def test_fit_speed_takes_the_multiclass_sets_on_the_protocols_folds():
    """``--data iris`` gives iris's folds of the quality protocol (stratified 5-fold,
    shuffled with seed 0), the first ``folds`` of them; an unknown name is refused."""
    from sklearn.datasets import load_iris
    from sklearn.model_selection import StratifiedKFold

    from experiments import fit_speed

    got = list(fit_speed.splits(["iris"], [], 2, None))
    X, y = load_iris(return_X_y=True)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[:2]
    assert [s.dataset for s in got] == ["iris", "iris"] and len(folds) == 2
    for split, (train, test) in zip(got, folds):
        assert np.array_equal(split.X_train, X[train]) and np.array_equal(split.y_test, y[test])
    assert len(list(fit_speed.splits(["wine"], [], None, None))) == 5
    with pytest.raises(ValueError, match="unknown data set"):
        fit_speed.run(["nope"], [], 1, None, 2, [], {}, "unused")


def test_fit_speed_compares_peers_of_the_same_depth():
    from experiments import fit_speed, quality

    names = [fit_speed._peer_names(fit_speed.parser().parse_args(argv))
             for argv in ([], ["--depth", "3"], ["--depth", "4"], ["--depth", "3", "--peers", "CART-d2"])]
    assert names[0] == list(quality.PEERS) and all(n.endswith("-d2") for n in names[0])
    assert names[1] and all(n.endswith("-d3") for n in names[1])
    assert names[2] == [] and names[3] == ["CART-d2"]


def test_purify_speed_times_signed_rows(capsys):
    """experiments.purify_speed: the rows are the points twice with signs (each row of
    the second half is a signed copy of one of the first), the last column -sign; one
    JSON entry per shape with nonnegative times; a malformed shape is refused."""
    import json

    from experiments import purify_speed

    rows, theta, cost = purify_speed.signed_rows(10, 4, 0)
    assert rows.shape == (10, 4) and theta.shape == (4,) and cost.shape == (10,)
    signs = -rows[:, -1]
    assert set(signs.tolist()) <= {-1.0, 1.0}
    np.testing.assert_array_equal(rows[:5, :-1] * signs[:5, None], rows[5:, :-1] * signs[5:, None])
    purify_speed.main(["--shapes", "40x5", "12x3", "--repeats", "1"])
    got = json.loads(capsys.readouterr().out)
    assert set(got) == {"40x5", "12x3"}
    assert all(v["best"] >= 0 and v["median"] >= v["best"] for v in got.values())
    with pytest.raises(SystemExit):
        purify_speed.main(["--shapes", "40by5"])


def test_signed_rows_finds_g_is_the_signed_h():
    """experiments.signed_rows: on the walker after a few moves every block's rows are
    its points signed, and its G is its signed H, bit for bit; a G one ulp off
    somewhere is seen, and so is H unsigned."""
    from experiments import signed_rows
    from experiments.bench_gto import FIG2, _start_walker
    from gto.engine._problem import TreeProblem

    X, y = problems.load("liver")
    problem = TreeProblem(gto.Tree.from_structure(FIG2, X.shape[1]), X, y)
    walker = _start_walker(problem, 0, "product")
    tabu.search(walker, max_iter=60, random_state=0, compiled=False)
    report = signed_rows.compare(walker)
    assert [(r["signed_points"], r["bit_equal"]) for r in report] == [(True, 1.0)] * 3
    assert sum(r["rows"] for r in report) == sum(b.n_real for b in walker.blocks)
    assert all(r["signs"]["-"] > 0 for r in report)  # so a lost sign would show
    G = walker.blocks[1].G
    G[0, 0] = np.nextafter(G[0, 0], np.inf)
    assert signed_rows.compare(walker)[1]["bit_equal"] < 1.0


def test_multiclass_scores_each_arm_on_the_quality_protocol(tmp_path, monkeypatch):
    """experiments.multiclass: the GTO, GTO-sorted, GTO-cart and CART errors are those of
    the fits on the protocol's folds (stratified, shuffled with seed 0, min-max scaled
    on the training fold, random_state the fold), recomputed here (GTO-sorted: the given
    structure of the classes in sorted order; GTO-cart: of CART's favourite labelling
    of its splits); the JSON is written to --out."""
    import json

    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import MinMaxScaler
    from sklearn.tree import DecisionTreeClassifier

    from experiments import multiclass
    from gto.learners._leaves import cart_candidates, heaviest_classes, with_labels

    monkeypatch.setattr(peers, "select", lambda names, mip_budget=None: (
        {"CART-d2": peers.PEERS["CART-d2"]}, []))
    rows, _ = multiclass.run(["imb7"], 2, folds=2, compare=True)
    X, y = multiclass.DATA["imb7"]()
    assert rows[0]["classes"] == len(np.unique(y)) == 7
    errors = {"GTO": [], "GTO-sorted": [], "GTO-cart": [], "CART-d2": []}
    for k, (train, test) in enumerate(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y)):
        scaler = MinMaxScaler().fit(X[train])
        Xtr, Xte = scaler.transform(X[train]), scaler.transform(X[test])
        in_order = gto.Tree.complete(2, heaviest_classes(np.unique(y), y[train], None, 4),
                                     X.shape[1])
        favourite = with_labels(in_order, cart_candidates(in_order, Xtr, y[train])[0][1])
        for arm, model in (("GTO", gto.GTOClassifier(random_state=k)),
                           ("GTO-sorted", gto.GTOClassifier(structure=in_order.structure,
                                                            random_state=k)),
                           ("GTO-cart", gto.GTOClassifier(structure=favourite.structure,
                                                          random_state=k)),
                           ("CART-d2", DecisionTreeClassifier(max_depth=2, random_state=k))):
            errors[arm].append(100 * np.mean(model.fit(Xtr, y[train]).predict(Xte) != y[test]))
    for arm, values in errors.items():
        assert rows[0]["test_error_%"][arm] == pytest.approx(np.mean(values))
    monkeypatch.setattr(multiclass, "run", lambda names, depth, compare: (rows, []))
    multiclass.main(["--data", "imb7", "--out", str(tmp_path)])
    assert json.loads((tmp_path / "multiclass.json").read_text())[0]["data"] == "imb7"


def test_wide_scores_its_sets_on_the_quality_protocol(tmp_path, monkeypatch):
    """experiments.wide: its sets (the planted axis-aligned tree's labels those of the
    tree walked literally, a tenth flipped) scored by experiments.multiclass's protocol:
    the GTO error is that of the default fit on each fold, recomputed here; the JSON is
    written to --out."""
    import json

    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import MinMaxScaler

    from experiments import multiclass, wide

    X, y = wide.DATA["axis500x60"]()
    tree = np.array([(x[9] > 0.3) if x[4] <= 0.5 else (x[17] > 0.6) for x in X], dtype=int)
    assert X.shape == (500, 60) and 0.05 < np.mean(tree != y) < 0.15
    assert wide.DATA["w500x200"]()[0].shape == (500, 200)
    monkeypatch.setattr(peers, "select", lambda names, mip_budget=None: ({}, []))
    rows, _ = multiclass.run(["w300x80"], 2, folds=2, data=wide.DATA)
    X, y = wide.DATA["w300x80"]()
    errors = []
    for k, (train, test) in enumerate(StratifiedKFold(2, shuffle=True, random_state=0).split(X, y)):
        scaler = MinMaxScaler().fit(X[train])
        model = gto.GTOClassifier(random_state=k).fit(scaler.transform(X[train]), y[train])
        errors.append(100 * np.mean(model.predict(scaler.transform(X[test])) != y[test]))
    assert rows[0]["test_error_%"]["GTO"] == pytest.approx(np.mean(errors))
    monkeypatch.setattr(multiclass, "run", lambda names, depth, data: (rows, []))
    wide.main(["--data", "w300x80", "--out", str(tmp_path)])
    assert json.loads((tmp_path / "wide.json").read_text())[0]["data"] == "w300x80"
