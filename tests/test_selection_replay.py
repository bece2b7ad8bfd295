"""``experiments.selection_replay``'s further inner splits and its close-call test."""
import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import MinMaxScaler

import gto
import gto.learners._estimator as E
from experiments import quality
from experiments import selection_replay as R
from gto.engine._svm_start import svm_tree


def test_another_inner_split_scores_the_candidates_on_other_folds():
    """``record(split, repeat=1)``: the same training points in other stratified folds
    (shuffled by ``repeat_seed``), each 1-norm SVM tree's per-point hits there as a
    direct ``svm_tree`` fit on those folds gives them (the estimator's penalty and
    intercept scaling), and no outer refits."""
    split = quality.splits(["liver"], quick=True)[0]
    rec = R.record(split, repeat=1)
    X, y = MinMaxScaler().fit(split.X_train).transform(split.X_train), split.y_train
    seed = R.repeat_seed(split.seed, 1)
    assert seed == R.repeat_seed(split.seed, 1) != split.seed and R.repeat_seed(None, 1) is None
    own = StratifiedKFold(5, shuffle=True, random_state=split.seed).split(X, y)
    folds = list(StratifiedKFold(5, shuffle=True, random_state=seed).split(X, y))
    assert any(not np.array_equal(a, b) for (_, a), (_, b) in zip(own, folds))
    assert rec["repeat"] == 1 and rec["outer"] == {} and rec["n_folds"] == len(folds)
    tree = gto.Tree.complete(2, np.unique(y), X.shape[1])
    rows = [i for i, g in enumerate(rec["grid"]) if g["alpha"] is None]
    assert len(rows) == 3
    for i in rows:
        for k, (train, test) in enumerate(folds):
            fitted, _ = svm_tree(tree, X[train], y[train], C=rec["grid"][i]["svm_C"],
                                 random_state=split.seed, penalty=E.SVM_PENALTY,
                                 intercept_scaling=E.SVM_INTERCEPT_SCALING)
            hit = (fitted.predict(X[test]) == y[test]).astype(int).tolist()
            assert rec["first"][f"{i},{k}"]["hit"] == hit
    search = next(i for i, g in enumerate(rec["grid"]) if g["alpha"] is not None)
    for k, (_, test) in enumerate(folds):
        assert rec["second"][f"{search},{k}"]["true"] == np.searchsorted(
            np.unique(y), y[test]).tolist()


def test_a_close_call_is_within_a_standard_error_of_a_bar():
    """The bars are the SVM trees' best mean accuracy (0.8, standard error 0.1 / sqrt 5
    over the folds) and best mean Brier score (0.6, the same spread): a search within
    that of either bar (and at or above both less it) is a close call; clearly above
    both, or clearly below one, is not."""
    svm_acc = np.array([[0.7, 0.9, 0.7, 0.9, 0.8], [0.7] * 5, [0.75] * 5])
    svm_brier = svm_acc - 0.2
    se = 0.1 / np.sqrt(5)

    def close(acc, brier):
        scores = np.stack([np.vstack([np.full(5, acc), svm_acc]),
                           np.vstack([np.full(5, brier), svm_brier])])
        return R.close_call(scores, [1, 2, 3], 0)

    assert close(0.8 + se / 2, 0.6 + 2 * se)  # above both, the first by less than se
    assert close(0.8 - se / 2, 0.6 + 2 * se)  # just below one bar
    assert not close(0.8 + 2 * se, 0.6 + 2 * se)  # a clear pass
    assert not close(0.8 + 2 * se, 0.6 - 2 * se)  # a clear fail on Brier
    assert not close(0.8 - 2 * se, 0.6 + se / 2)
