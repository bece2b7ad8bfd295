"""gto.slim: SAT encodings against brute force, DT-SLIM on planted trees."""
import itertools
from functools import lru_cache

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

import gto
import gto.slim.encodings as enc_mod
import gto.slim.local as slim_local
import gto.slim.windows as improve_mod
import problems
from gto.slim import improve, minimum_depth_tree, tree_of_depth


# -- brute force: exhaustive search over trees of depth <= 3 ------------------------------
def brute_min_weighted_depth(B, cls, weights, max_depth=3):
    """Smallest D such that some tree of depth <= max_depth puts every leaf of class c at
    depth <= D - weights[c] with pure leaves; tries every feature at every node."""
    n, k = B.shape

    @lru_cache(None)
    def fits(rows, budget, levels):
        r = np.array(rows)
        classes = set(cls[r].tolist())
        if len(classes) == 1:
            return weights[classes.pop()] <= budget
        if levels == 0 or budget <= 0:
            return False
        for j in range(k):
            go = B[r, j]
            if go.all() or not go.any():
                continue
            if fits(tuple(r[~go]), budget - 1, levels - 1) and fits(tuple(r[go]), budget - 1,
                                                                     levels - 1):
                return True
        return False

    for D in range(0, max_depth + int(max(weights)) + 1):
        if fits(tuple(range(n)), D, max_depth):
            return D
    return None


def planted_instance(rng, n_classes):
    """<= 12 distinct binary samples labelled by a random tree of depth <= 3."""
    k = int(rng.integers(3, 6))
    n = int(rng.integers(5, 13))
    rows = rng.choice(2**k, size=min(n, 2**k), replace=False)
    B = ((rows[:, None] >> np.arange(k)) & 1).astype(bool)

    def label(x, depth):
        if depth == 0 or rng.random() < 0.25:
            return int(rng.integers(n_classes))
        j = int(rng.integers(k))
        return (j, label(x, depth - 1), label(x, depth - 1))

    spec = label(None, 3)

    def walk(node, x):
        return node if isinstance(node, int) else walk(node[2] if x[node[0]] else node[1], x)

    cls = np.array([walk(spec, x) for x in B])
    return B, cls


@pytest.mark.parametrize("seed", range(12))
def test_sat_encodings_return_true_minimum_depth(seed):
    rng = np.random.default_rng(seed)
    B, cls = planted_instance(rng, n_classes=2 + seed % 3)
    zero = np.zeros(cls.max() + 1, dtype=int)
    truth = brute_min_weighted_depth(B, cls, zero)
    assert truth is not None and truth <= 3
    for enc in ("depth", "pb"):
        local, depth, optimal = minimum_depth_tree(B, cls, zero, truth + 3, encoding=enc)
        assert (depth, optimal) == (truth, True), enc
        if truth > 0:
            assert tree_of_depth(B, cls, zero, truth - 1, enc) is False
    # weighted instances (DT_pb only): per-class depth offsets
    weights = rng.integers(0, 3, cls.max() + 1)
    truth_w = brute_min_weighted_depth(B, cls, weights)
    _, depth_w, optimal = minimum_depth_tree(B, cls, weights, truth_w + 3, encoding="pb")
    assert (depth_w, optimal) == (truth_w, True)


def literal_tests(X, categorical):
    """Boolean columns "goes right" of every test on the raw values, built by a literal loop
    (not by gto.slim): x_f > v for each value v, and x_f != v on a categorical feature."""
    cols = []
    for f in range(X.shape[1]):
        for v in sorted(set(X[:, f].tolist())):
            cols.append([x[f] > v for x in X])
            if f in categorical:
                cols.append([x[f] != v for x in X])
    return np.array(cols, dtype=bool).T


def planted_categorical(rng):
    """<= 12 distinct samples over 2-3 features with 3-4 values each, labelled by a random
    tree of depth <= 3 whose tests are equalities x_f == v."""
    p = int(rng.integers(2, 4))
    n_vals = rng.integers(3, 5, p)
    grid = np.array(list(itertools.product(*[range(m) for m in n_vals])), dtype=float)
    X = grid[rng.choice(len(grid), size=min(12, len(grid)), replace=False)]

    def label(depth):
        if depth == 0 or rng.random() < 0.2:
            return int(rng.integers(3))
        f = int(rng.integers(p))
        return (f, float(rng.integers(n_vals[f])), label(depth - 1), label(depth - 1))

    spec = label(3)

    def walk(node, x):
        if isinstance(node, int):
            return node
        return walk(node[2] if x[node[0]] == node[1] else node[3], x)

    return X, np.array([walk(spec, x) for x in X])


def test_equality_tests_give_the_true_minimum_depth():
    """Windows' candidate tests with one-hot equalities (categorical features), through both
    encodings, against brute force over every threshold and equality test on the raw values;
    the equality tests must lower the minimum depth on some instances."""
    lower = 0
    for seed in range(15):
        rng = np.random.default_rng(200 + seed)
        X, cls = planted_categorical(rng)
        zero = np.zeros(cls.max() + 1, dtype=int)
        cat = list(range(X.shape[1]))
        truth = brute_min_weighted_depth(literal_tests(X, cat), cls, zero)
        truth_thr = brute_min_weighted_depth(literal_tests(X, []), cls, zero, max_depth=5)
        assert truth is not None and truth <= 3
        lower += truth < truth_thr
        for categorical, want in ((cat, truth), ([], truth_thr)):
            tests = slim_local.candidate_tests(X, {}, categorical)
            B = slim_local.binarize(X, tests)
            for enc in ("depth", "pb"):
                local, depth, optimal = minimum_depth_tree(B, cls, zero, want + 3, encoding=enc)
                assert (depth, optimal) == (want, True), (seed, enc, categorical)
                assert enc_mod.classifies(local, B, cls)
    assert lower >= 3


@pytest.mark.parametrize("seed", range(40))
def test_shallow_enumeration_matches_brute_force(seed, monkeypatch):
    """Depth <= 3 by counting (used over many tests instead of SAT) against brute force,
    directly and (depth <= 2) through tree_of_depth; on planted categorical instances and
    random classes, so minimum depths 0 to 4 all occur."""
    rng = np.random.default_rng(100 + seed)
    if seed % 3 == 0:
        X, cls = planted_categorical(rng)
        B = literal_tests(X, list(range(X.shape[1])))
    else:
        B, cls = planted_instance(rng, n_classes=2 + seed % 3)
        if seed % 3 == 2:  # random classes: minimum depth often 4
            cls = rng.integers(0, 2 + seed % 2, len(cls))
    zero = np.zeros(cls.max() + 1, dtype=int)
    truth = brute_min_weighted_depth(B, cls, zero, max_depth=4)
    monkeypatch.setattr(enc_mod, "SHALLOW_TESTS", 0)
    for depth in (1, 2, 3):
        found = [enc_mod.shallow_tree(B, cls, depth)]
        if depth <= 2:
            found.append(tree_of_depth(B, cls, zero, depth, "depth"))
        for local in found:
            assert (local is not False) == (truth <= depth)
            if local is not False:
                assert enc_mod.classifies(local, B, cls)
                assert max(d for _, d in enc_mod.leaf_depths(local)) <= depth


@pytest.mark.parametrize("seed", range(6))
def test_depth_three_enumeration_refutes(seed):
    """Depth-3 counting against brute force where the minimum depth is 3 or 4: parity of
    3 or 4 of 5 bits, and random classes on all 16 points of 4 bits."""
    rng = np.random.default_rng(300 + seed)
    B = ((np.arange(32)[:, None] >> np.arange(5)) & 1).astype(bool)
    if seed < 4:
        bits = rng.permutation(5)[:3 + seed % 2]
        cls = B[:, bits].sum(axis=1) % 2
    else:
        B = B[:16, :4]
        cls = rng.integers(0, 2, 16)
    B = B[:, rng.permutation(B.shape[1])]
    truth = brute_min_weighted_depth(B, cls, np.zeros(2, dtype=int), max_depth=5)
    local = enc_mod.shallow_tree(B, cls, 3)
    assert (local is not False) == (truth <= 3)
    if seed < 4:
        assert truth == 3 + seed % 2
    if local is not False:
        assert enc_mod.classifies(local, B, cls)
        assert max(d for _, d in enc_mod.leaf_depths(local)) <= 3
    # a deadline already passed: unknown (None), never a wrong verdict
    assert enc_mod.shallow_tree(B, cls, 3, deadline=0.0) in ((None,) if truth == 4 else
                                                             (None, local))


def test_conflict_budget_gives_up_without_a_verdict():
    """A depth-3 instance Glucose refutes with enough conflicts; one conflict is not enough,
    which must read as 'unknown' (None), never as 'no tree' (False)."""
    rng = np.random.default_rng(0)
    B, cls = rng.random((60, 12)) < 0.5, rng.integers(0, 2, 60)
    zero = np.zeros(2, dtype=int)
    assert tree_of_depth(B, cls, zero, 3, "depth") is False
    assert tree_of_depth(B, cls, zero, 3, "depth", conflicts=1) is None
    local, depth, optimal = minimum_depth_tree(B, cls, zero, 4, conflicts=1)
    assert (local, optimal) == (None, False)


def test_oversized_encoding_is_unknown_not_unsat(monkeypatch):
    """An encoding that would take longer than the time limit to build is not built: the
    answer is 'unknown' (None), and the size estimate is within 2x of the real CNF."""
    rng = np.random.default_rng(1)
    B, cls = rng.random((30, 8)) < 0.5, rng.integers(0, 2, 30)
    zero = np.zeros(2, dtype=int)
    for enc, depth in (("depth", 4), ("pb", 4)):
        clauses = (enc_mod.encode_depth(B, cls, depth) if enc == "depth"
                   else enc_mod.encode_pb(B, cls, zero, depth))[0]
        real = sum(map(len, clauses))
        assert real / 2 <= enc_mod.encoding_size(B.shape, depth, enc) <= 2 * real
        assert tree_of_depth(B, cls, zero, depth, enc, time_limit=60) is not None
        monkeypatch.setattr(enc_mod, "LITERALS_PER_SECOND", 1)
        assert tree_of_depth(B, cls, zero, depth, enc, time_limit=60) is None
        monkeypatch.undo()


# -- DT-SLIM on planted trees ---------------------------------------------------------------
def caterpillar_xor(n_noise=3):
    """All 2^(2+n_noise) binary points labelled x0 XOR x1 and a correct tree that first
    tests the noise features one after another: depth n_noise + 2, while depth 2 suffices."""
    p = 2 + n_noise
    X = np.array(list(itertools.product([0.0, 1.0], repeat=p)))
    y = (X[:, 0] != X[:, 1]).astype(int)
    xor = ((0, 1), (1, 0))
    spec = xor
    for _ in range(n_noise):
        spec = (xor, spec)
    tree = gto.Tree(spec, p)
    W, gamma = [], []

    def fill(node, level):
        if isinstance(node, int):
            return
        if node == xor:
            W.extend([np.eye(p)[0], np.eye(p)[1], np.eye(p)[1]])
            gamma.extend([0.5, 0.5, 0.5])
            return
        W.append(np.eye(p)[2 + level])
        gamma.append(0.5)
        fill(node[0], level + 1)
        fill(node[1], level + 1)

    fill(spec, 0)
    tree.W, tree.gamma = np.array(W), np.array(gamma)
    assert np.all(tree.predict(X) == y)
    return tree, X, y


def tree_depth(tree):
    """Depth of a gto.Tree from its leaf paths (independent of gto.slim's nodes)."""
    return int(np.abs(tree.sides).sum(axis=1).max())


@pytest.fixture
def windows_only(monkeypatch):
    """Without the whole-tree count at depth <= 3, so that windows do the work."""
    monkeypatch.setattr(improve_mod, "_shallow_whole", lambda *args: None)


def test_whole_tree_by_counting():
    """The whole instance at depth <= 3 by counting before any window: XOR in depth 2."""
    tree, X, y = caterpillar_xor()
    res = improve(tree, X, y, time_limit=None, quiet=True)
    assert res.depth_after == 2 == tree_depth(res.tree)
    assert res.windows["whole"] == 1 and res.windows["improved"] == 0 == res.n_windows - 1
    assert np.all(res.tree.predict(X) == y)
    # parity of x0, x1, x2 under a complete tree that tests x3 and x4 first: depth 5 -> 3
    X = np.array(list(itertools.product([0.0, 1.0], repeat=5)))
    order = [3, 4, 0, 1, 2]
    W = []

    def full(level, bits):  # preorder: this decision's row, then the left and right subtrees
        if level == 5:
            return int((bits[0] + bits[1] + bits[2]) % 2)
        W.append(np.eye(5)[order[level]])
        return tuple(full(level + 1, {**bits, order[level]: b}) for b in (0, 1))

    spec = full(0, {})
    tree = gto.Tree(spec, 5, W=np.array(W), gamma=np.full(len(W), 0.5))
    y = X[:, :3].sum(axis=1) % 2
    assert np.all(tree.predict(X) == y) and tree_depth(tree) == 5
    res = improve(tree, X, y, time_limit=None, quiet=True)
    assert res.windows["whole"] == 1 and res.depth_after == 3 == tree_depth(res.tree)
    assert np.all(res.tree.predict(X) == y)


@pytest.mark.parametrize("encoding", ["auto", "pb"])
def test_improve_finds_the_shallow_xor_tree(encoding, windows_only):
    tree, X, y = caterpillar_xor()
    res = improve(tree, X, y, time_limit=None, encoding=encoding, quiet=True)
    assert res.depth_before == 5 == tree_depth(tree)
    assert res.depth_after == 2 == tree_depth(res.tree)  # XOR needs depth 2, not 1
    assert np.all(res.tree.predict(X) == y)
    assert res.status == "converged" and res.n_windows >= 1
    # converged means every stage (up to the largest windows) ran out of improvements
    assert res.stage == len(improve_mod.STAGES) - 1
    assert res.n_sat >= res.n_tried >= res.n_windows and res.n_timeouts == 0
    why = res.windows
    assert why["improved"] == res.n_windows and why["timeout"] == why["whole"] == 0
    assert why["improved"] + why["minimal"] + why["timeout"] == res.n_tried
    assert 0 < why["sat_seconds"] <= res.time


def test_small_windows_with_hanging_subtrees_keep_classes(windows_only):
    """Windows of depth <= 3 on a depth-7 tree: special classes and weights at work."""
    tree, X, y = caterpillar_xor(n_noise=5)
    res = improve(tree, X, y, max_depth_local=3, time_limit=None, quiet=True)
    assert res.depth_before == 7
    assert tree_depth(res.tree) == res.depth_after < 7
    assert np.all(res.tree.predict(X) == tree.predict(X))


def test_window_with_hanging_subtrees_is_rebalanced(windows_only):
    """A depth-3 chain over x2, x3, x4 above four different subtrees: with the feature
    x5 = x2 or x3 the window has a depth-2 replacement, so the depth falls from 5 to 4
    and every subtree must land under its own special leaf."""
    X = np.array([[a, b, *chain, chain[0] or chain[1]] for a in (0, 1) for b in (0, 1)
                  for chain in ((1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 0, 0))], dtype=float)
    h4, h3, h2, h1 = (0, (0, 1)), (0, 1), ((1, 0), (0, 1)), ((0, 1), (1, 0))
    features = [2, 3, 4, 0, 1, 0, 0, 1, 1, 0, 1, 1]  # preorder
    tree = gto.Tree((((h4, h3), h2), h1), 6, W=np.eye(6)[features], gamma=[0.5] * 12)
    y = tree.predict(X)
    assert tree_depth(tree) == 5
    res = improve(tree, X, y, max_depth_local=3, time_limit=None, quiet=True)
    assert tree_depth(res.tree) == res.depth_after <= 4
    assert np.array_equal(res.tree.predict(X), y)


def test_improve_unpruned_sklearn_tree_keeps_every_training_class():
    X, y = problems.load("monk1")
    clf = DecisionTreeClassifier(random_state=0).fit(X, y)
    res = improve(clf, X, y, time_limit=None, quiet=True)
    assert res.depth_before == clf.get_depth()
    assert tree_depth(res.tree) == res.depth_after <= res.depth_before
    assert res.depth_after < res.depth_before
    assert np.array_equal(res.tree.predict(X), clf.predict(X))
    assert isinstance(res.tree, gto.Tree) and res.time > 0


def subset_path(tree, x):
    """Leaf label of one point by a literal walk of a gto.Tree with subset decisions."""
    kind, i = "d", 0
    while kind == "d":
        s = tree.subsets[i] if tree.has_subsets else None
        left = x[s[0]] in s[1] if s is not None else x @ tree.W[i] - tree.gamma[i] <= 0
        kind, i = tree.children[i][0 if left else 1]
    return tree.leaf_classes[i]


def test_categorical_features_give_one_hot_tests(windows_only):
    """y = [x0 == 2] on four codes: thresholds need depth 2, the one-hot test depth 1, and
    the result holds it as a subset decision (0, (2,)); a seen and an unseen code follow the
    subset rule."""
    rng = np.random.default_rng(0)
    X = np.column_stack([np.repeat(np.arange(4.0), 10), rng.integers(0, 2, 40)])
    y = (X[:, 0] == 2).astype(int)
    clf = DecisionTreeClassifier(random_state=0).fit(X, y)
    assert clf.get_depth() == 2
    plain = improve(clf, X, y, time_limit=None, quiet=True)
    assert plain.depth_after == 2 and not plain.tree.has_subsets
    for cat in ("all", [0], [True, False]):
        res = improve(clf, X, y, time_limit=None, categorical_features=cat, quiet=True)
        assert res.depth_after == 1 == tree_depth(res.tree)
        assert res.tree.subsets == [(0, (2.0,))]
        assert np.array_equal(res.tree.predict(X), y)
        new = np.array([[2.0, 0.0], [7.0, 1.0]])
        assert list(res.tree.predict(new)) == [subset_path(res.tree, x) for x in new] == [1, 0]


def subset_caterpillar(n_noise=3):
    """A correct tree of subset decisions on codes 0..2: noise features first, then
    y = [x0 in {1}] XOR [x1 in {0, 2}]; depth n_noise + 2 where 2 suffices."""
    p = 2 + n_noise
    X = np.array(list(itertools.product([0.0, 1.0, 2.0], repeat=p)))
    y = ((X[:, 0] == 1) != np.isin(X[:, 1], [0, 2])).astype(int)
    xor = ((0, 1), (1, 0))  # x0 == 1 left; then x1 in {0, 2} left
    spec, subsets = xor, []
    for _ in range(n_noise):
        spec = (xor, spec)

    def fill(node, level):
        if isinstance(node, int):
            return
        if node == xor:
            subsets.extend([(0, (1.0,)), (1, (0.0, 2.0)), (1, (0.0, 2.0))])
            return
        subsets.append((2 + level, (0.0, 1.0)))
        fill(node[0], level + 1)
        fill(node[1], level + 1)

    fill(spec, 0)
    tree = gto.Tree(spec, p, subsets=subsets)
    assert [subset_path(tree, x) for x in X] == list(y)
    return tree, X, y


@pytest.mark.parametrize("categorical", [None, "all"])
def test_subset_decision_input_tree(categorical, windows_only):
    """A gto.Tree of subset decisions: windows keep or replace them (the input tree's own
    subsets stay available), every training class is kept and the depth falls to 2."""
    tree, X, y = subset_caterpillar()
    res = improve(tree, X, y, time_limit=None, categorical_features=categorical, quiet=True)
    assert res.depth_before == 5 == tree_depth(tree)
    assert res.depth_after == 2 == tree_depth(res.tree)
    assert [subset_path(res.tree, x) for x in X] == list(y)
    assert res.tree.has_subsets


def test_subset_decisions_kept_by_gto_windows():
    """method='gto' leaves a subset decision as it is and works below it."""
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.integers(0, 3, 200).astype(float), rng.uniform(size=(200, 2))])
    y = np.where(X[:, 0] == 1, (X[:, 1] + X[:, 2] > 1).astype(int), 0)
    tree = gto.Tree((0, (0, 1)), 3, W=np.array([[0, 0, 0], [0, 1.0, 0]]), gamma=[0, 0.5],
                    subsets=[(0, (0.0, 2.0)), None])
    res = improve(tree, X, y, method="gto", time_limit=None, local_time_limit=600,
                  max_iter=200, random_state=0, quiet=True)
    assert res.tree.subsets[0] == (0, (0.0, 2.0))
    assert res.n_errors_after < res.n_errors_before == int(np.sum(tree.predict(X) != y))


def test_numeric_features_and_string_labels():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(120, 3))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "a", np.where(X[:, 2] > 0.5, "b", "c"))
    clf = DecisionTreeClassifier(random_state=0).fit(X, y)
    res = improve(clf, X, y, time_limit=8, quiet=True)
    assert np.array_equal(res.tree.predict(X), clf.predict(X))
    assert tree_depth(res.tree) == res.depth_after <= res.depth_before


def test_interrupt_returns_current_tree(monkeypatch):
    tree, X, y = caterpillar_xor()
    real, calls = improve_mod.minimum_depth_tree, []

    def once_then_interrupt(*args, **kwargs):
        calls.append(1)
        if len(calls) > 1:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(improve_mod, "minimum_depth_tree", once_then_interrupt)
    with pytest.warns(RuntimeWarning, match="interrupted"):
        res = improve(tree, X, y, max_depth_local=3, time_limit=30, quiet=True)
    assert res.status == "interrupted"
    assert np.all(res.tree.predict(X) == y)
    assert tree_depth(res.tree) == res.depth_after <= 5


def test_time_limit_status():
    X, y = problems.load("car")
    clf = DecisionTreeClassifier(random_state=0).fit(X, y)
    res = improve(clf, X, y, time_limit=0.5, quiet=True)
    assert res.status == "time_limit" and res.time < 30
    assert np.array_equal(res.tree.predict(X), clf.predict(X))


# -- method="gto" ---------------------------------------------------------------------------
def test_gto_windows_lower_errors_of_an_oblique_problem():
    rng = np.random.default_rng(0)
    X = rng.uniform(size=(200, 2))
    y = ((X[:, 0] + X[:, 1] > 1) ^ (X[:, 0] - X[:, 1] > 0.3)).astype(int)
    clf = DecisionTreeClassifier(max_depth=2, random_state=0).fit(X, y)
    before = int(np.sum(clf.predict(X) != y))
    # bounded by iterations, not wall time, so the outcome does not depend on machine load
    res = improve(clf, X, y, method="gto", time_limit=None, local_time_limit=600,
                  max_iter=300, random_state=0, quiet=True)
    after = int(np.sum(res.tree.predict(X) != y))
    assert res.n_errors_before == before and res.n_errors_after == after
    assert after < before


def test_gto_never_more_errors_and_may_shrink():
    """A tree with a useless decision (same class both sides) loses it, at no error."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(150, 3))
    y = (X[:, 0] > 0).astype(int)
    tree = gto.Tree(((0, 0), 1), 3, W=np.eye(3)[[0, 1]], gamma=[0.0, 0.0])
    assert np.sum(tree.predict(X) != y) == 0
    res = improve(tree, X, y, method="gto", time_limit=None, local_time_limit=600,
                  max_iter=100, random_state=0, quiet=True)
    assert np.sum(res.tree.predict(X) != y) == 0
    assert res.tree.n_decisions == 1
    assert res.n_errors_after <= res.n_errors_before
    Xs, ys = problems.load("liver")
    clf = DecisionTreeClassifier(max_depth=3, random_state=0).fit(Xs, ys)
    res = improve(clf, Xs, ys, method="gto", time_limit=3, random_state=0,
                  local_time_limit=0.5, max_iter=200, quiet=True)
    assert np.sum(res.tree.predict(Xs) != ys) <= np.sum(clf.predict(Xs) != ys)


# -- input checks ---------------------------------------------------------------------------
def test_bad_arguments():
    tree, X, y = caterpillar_xor(1)
    with pytest.raises(ValueError, match="method"):
        improve(tree, X, y, method="weka")
    with pytest.raises(ValueError, match="max_depth_local"):
        improve(tree, X, y, max_depth_local=0)
    with pytest.raises(ValueError, match="time_limit"):
        improve(tree, X, y, time_limit=-1)
    with pytest.raises(ValueError, match="max_samples_local"):
        improve(tree, X, y, max_samples_local=1)
    with pytest.raises(TypeError, match="tree"):
        improve("tree", X, y)
    oblique = tree.copy()
    oblique.W = oblique.W + 0.5
    with pytest.raises(ValueError, match="axis-aligned"):
        improve(oblique, X, y, quiet=True)
    with pytest.raises(ValueError, match="categorical_features"):
        improve(tree, X, y, categorical_features=[7], quiet=True)
    with pytest.raises(ValueError, match="categorical_features"):
        improve(tree, X, y, categorical_features=[True], quiet=True)
    strings = gto.Tree((0, 1), X.shape[1], subsets=[(0, ("a",))])
    with pytest.raises(ValueError, match="strings"):
        improve(strings, X, y, quiet=True)


def test_experiment_script_prints_the_tables(capsys):
    from experiments import slim as script

    out = script.main(["--sets", "monk1", "--numeric", "none", "--gto-sets", "australian",
                       "--budget", "2", "--gto-budget", "2", "--folds", "2"])
    text = capsys.readouterr().out
    assert "monk1" in text and "mean" in text and "errors lower on" in text
    rows = out["discrete"]["rows"]
    assert len(rows) == 2 and all(r["train_classes_kept"] for r in rows)
    assert all(r["depth_after"] <= r["depth_before"] for r in rows)
    assert all(r["errors_after"] <= r["errors_before"] for r in out["gto"]["rows"])
    out = script.main(["--sets", "none", "--numeric", "none", "--gto-sets", "none",
                       "--solvers", "monk1", "--solver-budget", "2"])
    rows = out["solvers"]
    assert [r["solver"] for r in rows] == list(script.SOLVERS) and rows[0]["calls"] > 0
    # three different solvers, no conflict budget hit on monk1: the same verdicts
    assert len({(r["sat"], r["unsat"], r["unknown"]) for r in rows}) == 1
