"""The full-data walk of the coarse-to-fine schedule ends at a tree without errors, or
after FINE_PATIENCE_SHARE of the restarts' patience in moves without fewer errors."""
import numpy as np
import pytest

import gto
import gto.learners._optimize as gopt
import problems
from gto.engine._portfolio import SCHEDULE, round_lengths

FIG2 = ((0, 1), (0, 1))


def _expected_stop(counts, patience, every):
    """Where the rule ends a walk whose full run visited vertices of ``counts`` errors
    (row 0 the start): the first multiple of ``every`` at which the fewest errors so
    far are 0, or were last lowered ``patience`` or more moves before (judged at those
    multiples only); None if the walk runs out first."""
    best, at = np.inf, 0
    for k in range(every, len(counts), every):
        fewest = counts[: k + 1].min()
        if fewest < best:
            best, at = fewest, k
        if fewest <= 0 or k - at >= patience:
            return k
    return None


def _fit(X, y, start, patience):
    """One walk (``leaves="keep"``: with free leaves a later labelling's search would
    start from where the first walk stopped, so the walks with and without the rule
    would differ past the first stop)."""
    return gto.optimize(start, X, y, max_iter=1000, random_state=0, leaves="keep",
                        options={"patience": patience})


@pytest.mark.parametrize("seed, patience", [(4, 1), (5, 1), (6, 1), (11, 1), (3, 1), (5, 40)])
def test_full_data_walk_stops_by_patience(monkeypatch, seed, patience):
    """Against the same schedule without the rule: the same moves up to the stop, the
    stop where the rule says on the full walk's history, and the fewest errors of that
    prefix (so the same tree whenever nothing better came later)."""
    monkeypatch.setattr(gopt, "COARSE_POINTS", 300)
    data = problems.synthetic(4, n_train=1500, n_test=0, random_state=seed)
    X, y = data.X_train, data.y_train
    flip = np.random.default_rng(seed).random(len(y)) < 0.03  # noise: errors stay above 0
    y = np.where(flip, 1 - y, y)
    start = gto.Tree.from_structure(FIG2, 4, W=np.eye(4)[:3], gamma=np.full(3, 0.5))
    short = _fit(X, y, start, patience)
    monkeypatch.setattr(gopt, "_patience", lambda patience: lambda iteration, walker: None)
    full = _fit(X, y, start, patience)
    counts = full.restarts[0]["history"]["n_errors"]
    moves = int(gopt.FINE_PATIENCE_SHARE * patience * sum(round_lengths(SCHEDULE, len(y))))
    stop = _expected_stop(counts, moves, gopt.PATIENCE_EVERY)
    got = short.restarts[0]["history"]
    if stop is None:
        assert len(got) == len(counts)
    else:
        assert len(got) == stop + 1 < len(counts)
        assert short.restarts[0]["status"] == gto.Status.COMPLETED
    np.testing.assert_array_equal(got["n_errors"], counts[: len(got)])
    assert short.n_errors == counts[: len(got)].min() == short.tree.n_errors(X, y)
    if seed in (4, 5, 6, 11) and patience == 1:
        assert stop is not None  # the rule was exercised (seed 3 runs out of moves first)


def test_full_data_walk_stops_without_errors(monkeypatch):
    """Separable data: the walk ends at the first check after reaching 0 errors."""
    monkeypatch.setattr(gopt, "COARSE_POINTS", 300)
    data = problems.synthetic(3, n_train=1500, n_test=0, random_state=1)
    X, y = data.X_train, data.y_train
    start = gto.Tree.from_structure(FIG2, 3, W=np.eye(3), gamma=np.full(3, 0.5))
    res = _fit(X, y, start, 10**6)
    counts = res.restarts[0]["history"]["n_errors"]
    assert res.n_errors == 0 == counts[-1]
    first = int(np.argmax(counts == 0))
    every = gopt.PATIENCE_EVERY
    assert len(counts) - 1 == max(every, -(-first // every) * every)


def test_no_patience_walks_every_move(monkeypatch):
    """``patience=None`` (never) or a time limit: the full-data walk runs its budget."""
    monkeypatch.setattr(gopt, "COARSE_POINTS", 300)
    data = problems.synthetic(4, n_train=1500, n_test=0, random_state=5)
    X, y = data.X_train, data.y_train
    flip = np.random.default_rng(5).random(len(y)) < 0.03
    y = np.where(flip, 1 - y, y)
    start = gto.Tree.from_structure(FIG2, 4, W=np.eye(4)[:3], gamma=np.full(3, 0.5))
    res = gto.optimize(start, X, y, max_iter=1000, random_state=0, options={"patience": None})
    assert len(res.restarts[0]["history"]) == 1001  # patience 1 stops this walk (above)


def test_fine_patience_is_a_share_of_the_restarts():
    """Half of one round's worth of moves at the estimator's patience (1): 200 moves at
    N >= 750 (rounds of 100 + 300), never below one move."""
    assert gopt.fine_patience(1, round_lengths(SCHEDULE, 10_000)) == 200
    assert gopt.fine_patience(40, (100, 300)) == 8000
    assert gopt.fine_patience(1, (1, 0)) == 1
