"""The internal CV's selection rules (gto.learners._selection) against literal
computations on hand-made score matrices, and their race bounds against brute force
over the folds not yet run."""
from itertools import product

import numpy as np
import pytest

from gto.learners import _estimator as E
from gto.learners import _selection as S

#: the default grid's layout: the alpha-0 search first, then the SVM trees by C
GRID = [{"alpha": 0.0, "max_features": None, "svm_C": 0.1},
        *({"alpha": None, "max_features": None, "svm_C": c} for c in (0.1, 0.3, 1.0))]
CX = [E._complexity(g, 10) for g in GRID]


def _literal_agree(acc, brier):
    """"agree" by hand, written out for the default grid: the 1se pick among the SVM
    rows 1..3 (smallest C first), the search (row 0) only if both its means beat
    every SVM row's."""
    means = [sum(acc[i]) / len(acc[i]) for i in range(4)]
    best = max(range(1, 4), key=lambda i: (means[i], -i))
    K = len(acc[best])
    sd = (sum((a - means[best]) ** 2 for a in acc[best]) / (K - 1)) ** 0.5
    pick = next(i for i in (1, 2, 3) if means[i] >= means[best] - sd / K ** 0.5 - 1e-12)
    bmeans = [sum(brier[i]) / len(brier[i]) for i in range(4)]
    if means[0] > max(means[1:]) + 1e-12 and bmeans[0] > max(bmeans[1:]) + 1e-12:
        return 0
    return pick


def test_agree_on_hand_made_matrices():
    acc = np.array([[0.90, 0.85, 0.88, 0.86, 0.87],  # search: best accuracy
                    [0.84, 0.86, 0.87, 0.85, 0.86],
                    [0.86, 0.85, 0.87, 0.86, 0.85],
                    [0.85, 0.86, 0.86, 0.87, 0.86]])
    brier = np.array([[0.70, 0.71, 0.69, 0.72, 0.70],
                      [0.71, 0.72, 0.70, 0.73, 0.71],  # an SVM tree has the best Brier
                      [0.70, 0.70, 0.70, 0.70, 0.70],
                      [0.69, 0.69, 0.69, 0.69, 0.69]])
    both = np.stack([acc, brier])
    # SVM means 0.856, 0.858, 0.860 (standard error 0.0032): the 1se pick is C = 0.3
    assert S.choose("agree", both, GRID, CX) == 2 == _literal_agree(acc, brier)
    brier[0] += 0.05  # now the search wins on both
    assert S.choose("agree", np.stack([acc, brier]), GRID, CX) == 0
    acc[0] = acc[3]  # a tie on accuracy: the SVM trees keep it
    assert S.choose("agree", np.stack([acc, brier]), GRID, CX) == 2
    # "best" on the same scores; "1se" keeps C = 0.3 where the search's lead (0.868
    # against 0.860) is within the search's standard error (0.0116)
    acc[0] = [0.90, 0.83, 0.88, 0.86, 0.87]
    assert S.choose("best", np.stack([acc, brier]), GRID, CX) == 0
    assert S.choose("1se", np.stack([acc, brier]), GRID, CX) == 2


def test_agree_matches_the_literal_rule_on_random_matrices():
    rng = np.random.default_rng(0)
    for _ in range(500):
        K = int(rng.integers(2, 7))
        acc = np.round(rng.uniform(0.6, 0.95, size=(4, K)), 2)  # rounded: ties happen
        brier = np.round(rng.uniform(0.4, 0.8, size=(4, K)), 2)
        assert S.choose("agree", np.stack([acc, brier]), GRID, CX) == _literal_agree(acc, brier)


def test_agree_keeps_a_perfect_svm_tree_and_skips_unscored_rows():
    acc = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [0.9, 1.0, 1.0], [1.0, 1.0, 1.0]])
    brier = np.array([[0.99, 0.99, 0.99], [0.9, 0.9, 0.9], [0.8, 0.8, 0.8], [0.9, 0.9, 0.9]])
    assert S.choose("agree", np.stack([acc, brier]), GRID, CX) == 1
    acc[0, 1:] = brier[0, 1:] = np.nan  # stopped in a race: never chosen
    acc[1:] = 0.5
    assert S.choose("agree", np.stack([acc, brier]), GRID, CX) == 1


def test_laplace_brier_by_hand():
    # two points: one in a leaf with counts (3, 1) of true class 0, one in a leaf
    # with counts (0, 0) of true class 1: p = (4/6, 2/6) and (1/2, 1/2)
    score = S.laplace_brier([[3, 1], [0, 0]], np.array([0, 1]))
    first = (4 / 6 - 1) ** 2 + (2 / 6) ** 2
    second = 0.25 + 0.25
    assert score == pytest.approx(1 - (first + second) / 2, abs=1e-15)
    weighted = S.laplace_brier([[3, 1], [0, 0]], np.array([0, 1]), np.array([3.0, 1.0]))
    assert weighted == pytest.approx(1 - (3 * first + second) / 4, abs=1e-15)


def _best_completion(done, n_folds, one_se, values):
    rest = np.array(list(product(values, repeat=n_folds - len(done))))
    full = np.hstack([np.broadcast_to(done, (len(rest), len(done))), rest])
    value = full.mean(axis=1)
    if one_se:
        value = value - full.std(axis=1, ddof=1) / np.sqrt(n_folds)
    return value.max()


@pytest.mark.parametrize("one_se", [True, False])
def test_can_be_chosen_agrees_with_brute_force_over_the_missing_folds(one_se):
    rng = np.random.default_rng(0)
    values = np.linspace(0, 1, 11)
    for _ in range(60):
        n_folds = int(rng.integers(2, 6))
        done = rng.uniform(0.5, 1.0, size=int(rng.integers(0, n_folds)))
        bar = rng.uniform(0.6, 1.0)
        best = _best_completion(done, n_folds, one_se, values)
        if best > bar + 1e-9:  # a completion on the grid wins: so must the bound
            assert S.can_be_chosen(done, n_folds, bar, one_se)
        elif best < bar - (0.05 if one_se else 1e-9):  # (the mean: exact on the grid's 1)
            assert not S.can_be_chosen(done, n_folds, bar, one_se)


def test_the_race_never_stops_a_row_the_rule_would_choose():
    """Racing the search against "agree"'s bars fold by fold (as the estimator does)
    stops it only when the rule on the full matrix would not choose it."""
    rng = np.random.default_rng(1)
    stopped = 0
    for _ in range(400):
        K = 5
        acc = np.round(rng.uniform(0.7, 0.9, size=(4, K)), 2)
        brier = np.round(rng.uniform(0.5, 0.7, size=(4, K)), 2)
        both = np.stack([acc, brier])
        bars = S.race("agree", both, [1, 2, 3])
        row = both[:, 0].copy()
        if not E._race(row, K, bars):
            stopped += 1
            assert S.choose("agree", both, GRID, CX) != 0
            assert S.choose("agree", np.stack([np.vstack([row[0], acc[1:]]),
                                               np.vstack([row[1], brier[1:]])]), GRID, CX) \
                == S.choose("agree", both, GRID, CX)
    assert stopped > 50


def test_race_drops_a_contender_after_the_first_fold_it_cannot_win_from():
    row = np.array([[0.70, 0.71, 0.69, 0.72, 0.70], [0.5, 0.5, 0.5, 0.5, 0.5]])
    bars = [(S.ACCURACY, 0.75, True)]
    assert E._race(row.copy(), 0, bars)
    out = row.copy()
    assert not E._race(out, 5, bars)
    first = next(k for k in range(1, 6) if not S.still_in(row, k, bars))
    assert np.array_equal(out[:, :first], row[:, :first]) and np.isnan(out[:, first:]).all()
    assert E._race(np.array([[0.9, 0.95, 0.92, 0.9, 0.93], [0.5] * 5]), 5, bars)
    # "agree": a Brier bar it cannot reach stops it too
    assert not E._race(row.copy(), 5, [(S.ACCURACY, 0.6, False), (S.BRIER, 0.9, False)])
