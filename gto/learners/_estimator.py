"""``GTOClassifier``: global tree optimization as a scikit-learn estimator.

Capacity control (docs/DESIGN.md §3b): the L1 penalty ``alpha`` and the budget
``max_features`` of nonzero weights per decision are chosen by internal
stratified cross-validation over a small grid when set to ``"auto"``; with
``alpha="auto"`` the same CV also weighs linear-SVM trees of the same
structure (:mod:`gto.engine._svm_start`).
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from itertools import product
from numbers import Integral, Real

import numpy as np
from joblib import Parallel, delayed
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import StratifiedKFold, check_cv
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from threadpoolctl import threadpool_limits

from ..engine._axis import cuts_within
from ..engine._problem import PreparedData, check_search_fits
from ..engine._starts import is_complete, is_shallow, structured_axis, structured_cart
from ..engine._svm_start import svm_tree
from ..model._categorical import by_name, warn_unseen
from ..model.tree import Tree, as_tree
from ..utils._progress import Progress
from ..utils._validation import check_sample_weight, leaf_class_points, non_numeric
from ..utils._workers import capped_jobs, no_workers_left
from ..utils.status import Status
from ._capacity import choose_depth, deeper_race, fit_shallower, shallower_stands
from ._leaves import arrange_classes, heaviest_classes
from ._optimize import AXIS_WORK_LIMIT, SEARCH_CONSTRAINTS, optimize, stop_if_interrupted
from ._selection import (  # noqa: F401 (one_standard_error: re-exported)
    ACCURACY,
    BRIER,
    SELECTIONS,
    choose,
    contender_bars,
    dominates_so_far,
    families,
    one_standard_error,
    race,
    settled,
    still_in,
    tree_brier,
)

INITS = ("auto", "greedy", "cart", "axis", "random")
ALPHA_GRID = (0.0, 0.3, 1.0, 3.0)
#: the searched penalties beside the SVM trees (docs/speed.md)
SVM_ALPHA_GRID = (0.0,)
MAX_FEATURES_GRID = (1, 2, None)
SVM_C_GRID = (0.1, 0.3, 1.0)  # the 1-norm SVM trees of the auto grid
SVM_PENALTY = "l1"  # their penalty (gto.engine._svm_start.svm_tree): sparse, readable decisions
#: their liblinear ``intercept_scaling``: large enough that a decision's offset is
#: (nearly) not penalised, only its weights are.  Liblinear penalises the intercept
#: as one more weight; with the L1 penalty and a small ``C`` that pulls every
#: offset towards 0 on the standardised scale, i.e. towards the mean of all the
#: training points, where neither a decision below the root (its points' mean is
#: elsewhere) nor a root with unequal classes has its boundary (docs/speed.md)
SVM_INTERCEPT_SCALING = 10.0
SVM_START_C = 0.1  # the (L2) SVM tree the auto grid's alpha-0 search also starts from
#: the grid point of the axis-aligned tree of the structure (no search, one feature a
#: decision; :func:`_axis_result`), scored beside the linear-SVM trees where the
#: structure is complete of depth 1 or 2, or complete and one decision can fit any
#: labelling of every training fold
AXIS_POINT = {"alpha": None, "max_features": 1, "svm_C": None}
#: the axis-aligned tree's cuts a feature: at most this many, at its quantiles
#: (fewer where ``AXIS_WORK_LIMIT`` asks; docs/speed.md)
AXIS_CUTS = 32
#: with ``time_limit``, the share of it the internal cross-validation may use (the
#: searched fold fits split it; the refit gets what is left)
CV_SHARE = 0.75
#: with ``time_limit``, the share of the internal CV's time that its linear-SVM
#: trees may use (the folds they are scored on are the CV's folds; the searches get
#: the rest)
SVM_SHARE = 0.5
#: above this many points the internal cross-validation (int ``cv``) runs on a
#: stratified subsample of this size; the chosen grid point is refitted on all
#: the data (docs/speed.md)
CV_POINTS = 2000
#: the searches of the internal cross-validation run this share of ``max_iter``
#: moves (they rank the grid points; the refit of the chosen one runs them all)
CV_ITER_SHARE = 0.1
#: restarts of a contender's searches in the second stage of the internal CV
CONTENDER_RESTARTS = 2
#: a contender's restarts run at most this share of ``max_iter`` moves each
CONTENDER_ITER_SHARE = 0.5
#: a search's restart ends after this many rounds' worth of moves without fewer
#: training errors (gto.portfolio's ``patience``; docs/speed.md)
PATIENCE = 1


class GTOClassifier(ClassifierMixin, BaseEstimator):
    """Oblique decision tree of fixed structure, fitted by GTO (Bennett & Blue).

    Parameters
    ----------
    structure : nested pairs, optional
        Leaves are class labels, internal nodes ``(left, right)`` pairs, e.g.
        ``((0, 1), (0, 1))``.  By default a complete tree of ``depth`` with the
        classes on its leaves as ``depth`` describes (the paper's Figure 2 tree
        for two classes and depth 2).
    depth : int, default 2
        Depth of the default complete tree.  Two classes alternate on its leaves
        (the paper's Figure 2 at depth 2); more are arranged on them by the label
        pattern, of those with the fewest errors on the splits of CART of the
        same depth, whose linear-SVM tree fits best
        (:func:`gto.learners._leaves.arrange_classes`: which classes share a
        subtree).  With more classes than its ``2**depth`` leaves, the leaves go
        to the classes of the largest training weight (ties to the smaller
        label), and the points of the other classes are misclassified whatever
        the splits, as in a CART tree of that depth.
        At ``depth >= 3`` the estimator's own fit one level shallower is kept
        unless the deeper tree pays in the internal cross-validation (``depth_``).
    alpha : float >= 0 or "auto", default "auto"
        L1 penalty ``alpha * sum |w|`` on the standardised scale (docs/DESIGN.md §3b).
        ``"auto"`` picks it by internal stratified ``cv``-fold
        cross-validation (held-out accuracy), then refits the winner on all
        the data: with ``svm`` on, among the linear-SVM trees and the searches
        of ``SVM_ALPHA_GRID`` (the alpha-0 search's restarts start from the SVM
        tree of ``SVM_START_C``, the greedy LP tree and CART), by successive
        halving (:meth:`_halving`); without, among the searches of
        ``ALPHA_GRID``.  A number is used as given.  (Defaults and the
        measurements behind them: docs/speed.md.)
    max_features : int >= 1, None or "auto", default None
        Most nonzero weights per decision (None: no cap; 1: axis-aligned).
        ``"auto"`` picks it from ``MAX_FEATURES_GRID`` (with ``alpha="auto"``
        too: the alphas without a budget, then the budgets with alpha 0).
        With a budget of 1 the start is the exact axis-aligned tree when
        affordable (``init="auto"`` of :func:`gto.optimize`).
    cv : int >= 2, CV splitter or iterable of (train, test), default 5
        The internal cross-validation.  An int is a shuffled stratified K-fold
        seeded by ``random_state`` (fewer folds when a class has fewer members;
        with fewer than 2 per class the first grid point is used unscored).
    selection : "agree", "1se" or "best", default "agree"
        How the internal CV picks (:mod:`gto.learners._selection`): "best", the
        best mean held-out accuracy (ties: the first grid point); "1se", the
        one-standard-error rule (Breiman et al., CART §3.4.3;
        :func:`~gto.learners._selection.one_standard_error`): the simplest grid
        point whose mean is within one standard error (over the folds) of the
        best, simplest meaning a 1-norm SVM tree (smaller ``C``, so fewer
        features, first), then fewer features per decision, then a larger
        ``alpha``, and last the axis-aligned tree of the structure;
        "agree", the one-standard-error rule within the linear-SVM trees (one
        regularisation path), replaced by the axis-aligned tree of the structure
        (where it is in the grid) only when its held-out accuracy is above every
        SVM tree's on every fold and its mean held-out Brier score (of the leaves'
        Laplace-smoothed training class frequencies) above each of theirs, and by
        the searched grid points' own one-standard-error pick when that one's
        mean held-out accuracy and mean held-out Brier score are both above every
        SVM tree's (the kinds of tree have the same shape, so none is simpler: the
        later kind must win on both scores).  Without SVM trees in the grid
        "agree" is "1se".  (Measurements: docs/speed.md.)
    svm : bool, default True
        With ``alpha="auto"`` (and no warm start) the internal CV also scores
        the 1-norm SVM trees of ``SVM_C_GRID``: each decision scikit-learn's
        ``LinearSVC(penalty="l1")`` on the points reaching it (STree-style, no
        search, :func:`gto.engine._svm_start.svm_tree` with ``penalty=SVM_PENALTY``
        and ``intercept_scaling=SVM_INTERCEPT_SCALING``, so that the penalty
        falls on the weights and not on where the boundary sits), whose zero
        weights leave features out of the rule, and may pick one.
        They cost milliseconds, and as convex fits they count as the simplest
        candidates.  The alpha-0 search also starts from the L2 SVM tree of
        ``SVM_START_C``.  The axis-aligned tree of the structure (one feature a
        decision, no search: :func:`_axis_result`) is scored beside them where
        the structure is complete of depth 1 or 2, or complete and one decision
        can fit any labelling of every training fold (as many features as points
        or more), where no search runs.  (With ``svm=False`` the alpha-0 search
        starts from the ``init`` portfolio.)
    init : "auto", "greedy", "cart", "axis", "random", gto.Tree or fitted DecisionTreeClassifier
        Starting trees.  "auto": both the greedy LP tree and, when the
        structure is complete, the CART tree of the same shape (``init="cart"``
        of :func:`gto.optimize`); the better one wins (fewest training errors,
        or lowest penalised objective when ``alpha > 0``).  "greedy", "cart",
        "axis", "random": that start alone (as in :func:`gto.optimize`).  A ``gto.Tree`` or fitted
        scikit-learn tree is a
        warm start: its structure is kept, and its leaf classes as ``leaves``
        says (``structure`` and ``depth`` are then not used); with ``alpha=0``
        the fitted tree never has more training errors than it.
    leaves : "keep", "free" or "auto", default "keep"
        Leaf classes of a warm start (``init`` a tree), as :func:`gto.optimize`'s
        ``leaves``: kept, chosen anew with the splits (:mod:`gto.learners._leaves`),
        or "auto" (free for a tree with splits).  The default trees' leaf classes
        (``structure``, ``depth``) are always kept.
    objective, method, p, max_iter, restarts, random_state, verbose
        As in :func:`gto.optimize` (``max_iter`` moves per restart, each restart
        also ending after ``PATIENCE`` round(s) without fewer training errors;
        ``verbose=1`` shows a progress bar over the internal
        cross-validation's fits, then :func:`gto.optimize`'s bar over the final
        fit's moves).  A search is not stopped at
        objective 0 (a global optimum with ``alpha = 0``): held out that was
        mixed (docs/decisions.md).
    time_limit : seconds or None, for the whole fit: ``CV_SHARE`` of it for
        the internal cross-validation (shared by its searched fold fits), the
        rest for the refit.  When the fit one level shallower is compared
        (``depth >= 3``, attribute ``depth_``), that one is fitted first with
        ``1 - DEEP_SHARE`` of it (gto.learners._capacity), the fit at ``depth``
        gets what is left.
    n_jobs : int, joblib workers for the internal cross-validation fits (and
        the restarts of the final fit).
    categorical_features : None, "auto", "all", mask, indices or names
        Categorical columns, one-hot encoded for the search (pandas
        category/object columns and string columns are found by themselves
        when None).  The fitted ``encoding_`` encodes new data the same way.
        With categorical columns the internal cross-validation is not run:
        ``alpha="auto"`` means 0 and ``max_features="auto"`` means None.
    one_group : bool, default False
        Restrict each decision to one original feature (a subset test on a
        categorical one); the fitted tree then works on the original columns
        (``feature_importances_`` is then not computed).

    Attributes
    ----------
    tree_ : gto.Tree
        The fitted tree (fewest training errors found).
    alpha_, max_features_ : float or None, int or None
        The penalty and budget used for ``tree_`` (both None when a linear-SVM tree
        was chosen; None and 1 for the axis-aligned tree of the structure,
        ``AXIS_POINT``).
    svm_C_ : float or None
        The ``C`` of the chosen linear-SVM tree (``alpha_`` None) or of the SVM
        tree the chosen search also started from (``alpha_`` 0), else None (the
        axis-aligned tree, or a search without the SVM start).
    cv_results_ : dict of arrays or None
        As scikit-learn's searches: ``params`` (with ``AXIS_POINT`` last where it
        is scored: :meth:`_select`), ``param_alpha`` (NaN for the SVM
        and axis-aligned trees), ``param_max_features``, ``param_svm_C`` (NaN for the searched
        trees), ``split{k}_test_score``, ``mean_test_score``, ``std_test_score``,
        ``rank_test_score`` (held-out accuracy), ``mean_test_brier``,
        ``std_test_brier`` (held-out Brier score of the leaves' Laplace-smoothed
        class frequencies, as 1 - Brier: higher is better; ``selection="agree"``);
        None when nothing was selected (no "auto" parameter, or too few points per
        class).  A searched point's scores are
        NaN where successive halving did not run it (:meth:`_halving`: beside a
        linear-SVM tree perfect on every fold, where one decision fits any labelling
        of every training fold, or on the folds after it could no longer be chosen);
        such a mean ranks last; so are the axis-aligned tree's on the folds after
        the first where it was not above every SVM tree (``"agree"``: it can then
        not be chosen), and all of them beside a perfect SVM tree.  A searched
        point whose short first-stage searches
        already won keeps their scores (no contender stage ran, :meth:`_halving`).
    best_index_ : int or None
        Index of the chosen grid point in ``cv_results_``.
    classes_ : ndarray
        The class labels.
    leaf_proba_ : ndarray of shape (n_leaves, n_classes)
        Class frequencies of the training points in each leaf; an empty leaf
        predicts its own label with 1.
    result_ : OptimizeResult
        The :func:`gto.optimize` result of the final fit (for a linear-SVM tree
        one with ``tree``, ``n_errors``, ``nit``, ``message``).
    n_iter_ : int
        Tabu moves or Frank-Wolfe iterations over all restarts (the SVM
        solver's iterations for a linear-SVM tree).
    n_features_in_ : int
        Number of input columns.
    feature_names_in_ : ndarray of str
        Names of the DataFrame columns fitted on, if any.
    encoding_ : Encoding or None
        The one-hot encoding of categorical columns (None without them).
    tree_feature_names_ : list of str
        Names of the columns ``tree_`` reads (one-hot columns as ``name=value``).
    n_node_samples_ : ndarray of shape (D, 2)
        Training weight each decision sent left and right.
    feature_importances_ : ndarray of shape (n_features,)
        One importance per input column (:func:`gto.model.inspection.feature_importances`;
        the one-hot columns of a categorical feature add up to its importance).
    depth_ : int
        Depth of the tree kept (capacity control across depths,
        :func:`gto.learners._capacity.choose_depth`: at ``depth >= 3`` the
        estimator's own fit one level shallower is kept unless the deeper tree
        pays in the internal cross-validation).
    depth_scores_ : dict
        ``{depth: per-fold held-out accuracy of that depth's chosen grid point}``.
    shallower_ : GTOClassifier or None
        The fit one level shallower that was compared (None when no comparison
        ran: ``depth`` 2, a given ``structure`` or ``init`` tree, or no internal
        cross-validation).

    Notes
    -----
    The default grid, the selection rule ("agree") and the starts of the
    unpenalised search were chosen on held-out measurements (stratified 5-fold
    cross-validation over the bundled data sets, ``python -m
    experiments.selection`` and ``python -m experiments.quality``); the tables
    and the alternatives tried are in ``docs/benchmarks.md`` ("How
    GTOClassifier's defaults were chosen"), ``docs/speed.md`` (the searched
    point alpha 0 beside the SVM trees, successive halving) and
    ``docs/decisions.md``, and docs/DESIGN.md §6.  A fit runs with one
    BLAS thread: the search's linear algebra works on (n+1)-sized blocks, where
    BLAS threads cost more than they give; ``n_jobs`` spreads the internal
    cross-validation instead.
    """

    def __init__(self, structure=None, depth=2, objective="product", method="tabu", p=1,
                 max_iter=3000, time_limit=None, restarts=3, n_jobs=1, random_state=None,
                 init="auto", alpha="auto", max_features=None, cv=5, selection="agree",
                 svm=True, verbose=0, categorical_features=None, one_group=False, leaves="keep"):
        self.structure = structure
        self.depth = depth
        self.objective = objective
        self.method = method
        self.p = p
        self.max_iter = max_iter
        self.time_limit = time_limit
        self.restarts = restarts
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.init = init
        self.alpha = alpha
        self.max_features = max_features
        self.cv = cv
        self.selection = selection
        self.svm = svm
        self.verbose = verbose
        self.categorical_features = categorical_features
        self.one_group = one_group
        self.leaves = leaves

    # -- checks ----------------------------------------------------------------
    _parameter_constraints = {
        "structure": "no_validation",  # nested pairs of labels; see _check_structure
        "depth": [Interval(Integral, 1, None, closed="left")],
        **SEARCH_CONSTRAINTS,
        "init": [StrOptions(set(INITS)), Tree, HasMethods(["predict"])],
        "alpha": [Interval(Real, 0, None, closed="left"), StrOptions({"auto"})],
        "max_features": [Interval(Integral, 1, None, closed="left"), StrOptions({"auto"}), None],
        "cv": ["cv_object"],
        "selection": [StrOptions(set(SELECTIONS))],
        "svm": ["boolean"],
    }

    def _check_structure(self):
        """A tree given as ``structure`` is a starting point: say where it goes."""
        if isinstance(self.structure, Tree) or hasattr(self.structure, "tree_"):
            raise TypeError(
                "structure takes nested (left, right) pairs of class labels; to start "
                "from a gto.Tree or a fitted DecisionTreeClassifier pass it as init="
            )
        if not isinstance(self.init, str) and not isinstance(self.init, Tree) \
                and not hasattr(self.init, "tree_"):
            raise TypeError("init must be a string, a gto.Tree or a fitted DecisionTreeClassifier, "
                            f"got a {type(self.init).__name__} without a fitted tree_")

    def _initial_tree(self, n_features, X, y, w):
        if not isinstance(self.init, str):
            tree = as_tree(self.init).copy()
            if tree.n_features != n_features:
                raise ValueError(f"init has {tree.n_features} features, X has {n_features}")
            unknown = set(tree.leaf_classes.tolist()) - set(self.classes_.tolist())
            if unknown:
                raise ValueError(f"init has leaf classes {sorted(unknown)} not in y")
            return tree
        if self.structure is not None:
            tree = Tree.from_structure(self.structure, n_features)
            unknown = np.setdiff1d(tree.leaf_classes, self.classes_)
            if unknown.size:
                raise ValueError(
                    f"structure has leaf labels {unknown.tolist()} that are not classes of y "
                    f"({self.classes_.tolist()})"
                )
            return tree
        classes = heaviest_classes(self.classes_, y, w, 2**self.depth)
        tree = Tree.complete(self.depth, classes, n_features)
        if len(classes) > 2 and not self._categorical:  # which classes share a subtree
            seed = _seed(self.random_state)
            Xs, ys, ws = _cv_sample(X, y, w, seed)  # chosen on a sample of the internal CV's size
            tree = arrange_classes(tree, Xs, ys, ws, C=SVM_START_C, random_state=seed)
        return tree

    # -- fitting ---------------------------------------------------------------
    def _grid(self, n_features):
        """Grid points in order (ties in the CV go to the first, as in scikit-learn).

        Both "auto": the penalty path ``ALPHA_GRID`` without a budget, then the
        budgets of ``MAX_FEATURES_GRID`` without a penalty (not the product: a
        budget of one feature needs no penalty, and the product would cost
        ``len(ALPHA_GRID)`` times more fits).  One "auto": that parameter's grid
        with the other as given.  With ``alpha="auto"``, ``svm`` and no warm start
        the linear-SVM trees of ``SVM_C_GRID`` come last (``alpha`` None), and the
        unpenalised search without a budget also starts from the SVM tree of
        ``SVM_START_C`` (``svm_C`` set and ``alpha`` 0), besides the portfolio; the
        penalised searches of ``ALPHA_GRID`` are then left out (on overlapping data they
        end at the trivial tree, and the SVM trees are the sparse candidates; DESIGN
        §6, docs/speed.md)."""
        with_svm = isinstance(self.alpha, str) and self.svm and isinstance(self.init, str)
        alphas = (SVM_ALPHA_GRID if with_svm else ALPHA_GRID) if isinstance(self.alpha, str) else (
            float(self.alpha),)
        budgets = (self.max_features,)
        if isinstance(self.max_features, str):
            budgets = [m for m in MAX_FEATURES_GRID if m is None or m < n_features]
        if isinstance(self.alpha, str) and isinstance(self.max_features, str):
            grid = ([{"alpha": a, "max_features": None} for a in alphas]
                    + [{"alpha": 0.0, "max_features": m} for m in budgets if m is not None])
        else:
            grid = [{"alpha": a, "max_features": m} for a, m in product(alphas, budgets)]
        grid = [{**g, "svm_C": None} for g in grid]
        if with_svm:  # the unpenalised search also starts from the SVM tree (docs/DESIGN.md §6)
            grid = [{**g, "svm_C": SVM_START_C}
                    if g["alpha"] == 0 and g["max_features"] is None else g for g in grid]
            grid += [{"alpha": None, "max_features": None, "svm_C": c} for c in SVM_C_GRID]
        return grid

    def _starts(self, tree, params):
        """The ``init`` values of :func:`optimize` to run, one search each: the warm
        start, or the portfolio.  An unpenalised search without a budget is one call
        whose later rounds start from the portfolio's other trees (greedy LP tree,
        CART; :func:`gto.portfolio.round_starts`); a penalised or budgeted search
        runs once per start (it has no rounds), and with ``max_features=1``
        optimize's own choice (the exact axis-aligned tree when it is affordable,
        else CART)."""
        if not isinstance(self.init, str):
            return ["tree"]
        if self.init == "auto":
            if params["max_features"] == 1:
                return ["auto"]
            if params["alpha"] == 0 and params["max_features"] is None:
                return ["greedy"]
            return ["greedy", "cart"] if is_complete(tree) else ["greedy"]
        return [self.init]

    def _fit_tree(self, tree, X, y, w, params, n_jobs, verbose=0, time_limit=None,
                  max_iter=None, restarts=None, warm=None):
        """Best of the starts under ``params``: fewest training errors (ties by
        objective), or with ``alpha > 0`` the lowest penalised objective, as
        :func:`optimize` chooses among its restarts.  A grid point with ``svm_C``
        and ``alpha`` None is the linear-SVM tree instead (:func:`gto.engine._svm_start.svm_tree`,
        no search); with ``svm_C`` and ``alpha`` 0 the search starts from that
        (L2) tree, its later rounds from the greedy LP tree and CART.
        ``time_limit``: seconds for this fit (None: the estimator's own);
        ``max_iter``, ``restarts``: per search (None: the estimator's own);
        ``warm``: searched trees of this grid point (the internal CV's) to start
        from instead, the one with the fewest errors on (X, y)."""
        limit = self.time_limit if time_limit is None else time_limit
        deadline = None if limit is None else time.perf_counter() + limit  # the SVM start too
        starts = [(tree, init) for init in self._starts(tree, params)]
        if warm:
            starts = [(min(warm, key=lambda t: t.n_errors(X, y, w)), "tree")]
        elif params == AXIS_POINT:
            return _axis_result(tree, X, y, w, _seed(self.random_state))
        elif params["svm_C"] is not None:
            penalty = SVM_PENALTY if params["alpha"] is None else "l2"
            svm = _svm_result(tree, X, y, w, params["svm_C"], _seed(self.random_state), penalty)
            if params["alpha"] is None:
                return svm
            starts = [(svm.tree, "tree")]  # optimize's rounds add greedy and CART
        best = None
        for start, init in starts:
            left = None if deadline is None else max(deadline - time.perf_counter(), 1e-3)
            with config_context(skip_parameter_validation=True):  # fit validated them all
                res = optimize(
                    start, X, y, objective=self.objective, method=self.method, p=self.p,
                    max_iter=self.max_iter if max_iter is None else max_iter, time_limit=left,
                    restarts=self.restarts if restarts is None else restarts,
                    n_jobs=n_jobs, random_state=self.random_state, sample_weight=w, init=init,
                    verbose=verbose, alpha=params["alpha"], max_features=params["max_features"],
                    options={"patience": PATIENCE} if self.method == "tabu" else None,
                    leaves="keep" if isinstance(self.init, str) else self.leaves, **self._categorical,
                )
            key = (res.fun,) if params["alpha"] > 0 else (res.n_errors, res.fun)
            if best is None or key < best[0]:
                best = (key, res)
            if res.status == "interrupted":  # Ctrl-C: no further starts
                return res
        return best[1]

    def _select(self, tree, X, y, w, grid, time_limit=None):
        """Internal CV over ``grid``; ``(best_index, cv_results, trees, grid)`` or ``(0,
        None, None, grid)``; ``trees``: the chosen grid point's fold trees when the CV ran
        on a subsample (:meth:`_folds`) and it is searched (the refit starts from them),
        else None; ``grid``: the grid scored, with ``AXIS_POINT`` added, the sparse
        candidate of one feature a decision beside the 1-norm SVM trees, where the
        structure is complete of depth 1 or 2, or complete and one decision can fit any
        labelling of every training fold (:func:`_fits_any_labels`), where the searches
        are not run (docs/speed.md, rounds 20 and 23).

        With linear-SVM trees in the grid the scores come by successive halving
        (:meth:`_halving`), else every grid point is scored with the estimator's
        budget.  ``time_limit`` (seconds for the whole CV): each searched fold fit
        gets its share, ``n_jobs`` of them at a time."""
        if len(grid) == 1:
            return 0, None, None, grid
        split = self._folds(X, y, w)
        if split is None:
            return 0, None, None, grid
        Xs, y, w, folds = split
        svm = any(g["alpha"] is None for g in grid)
        free = svm and all(_fits_any_labels(Xs, w, train) for train, _ in folds)
        if svm and is_complete(tree) and (free or is_shallow(tree)):
            grid = [*grid, AXIS_POINT]  # the sparse candidate of one feature a decision
        if not free and any(g["alpha"] is not None for g in grid):
            _refuse_too_big(tree, Xs, y, w, folds)
        with no_workers_left():  # workers started for the CV end with it
            if svm:
                settle = len(Xs) == len(X) and not getattr(self, "_yardstick", False)
                scores, trees = self._halving(tree, Xs, y, w, grid, folds, time_limit, free,
                                              settle)
            else:
                scores, trees = self._scores(tree, Xs, y, w, grid, folds, time_limit, None)
        results = _cv_results(grid, scores)
        # the rule (gto.learners._selection) on the folds scored (fewer under a time limit)
        best = choose(self.selection, scores, grid, [_complexity(g, Xs.shape[1]) for g in grid])
        warm = None
        if len(Xs) < len(X) and grid[best]["alpha"] is not None:
            warm = [t for t in trees[best] if t is not None]
        return best, results, warm, grid

    def _halving(self, tree, X, y, w, grid, folds, time_limit, free=False, settle=True):
        """``(scores, trees)``, (2, len(grid), K) held-out accuracies and Brier scores
        and (len(grid), K) fold trees, by successive halving.

        The linear-SVM trees first (no search), then the axis-aligned tree of the
        structure where it is in the grid (:meth:`_axis_folds`: under "agree" fold by
        fold while it beats every SVM tree on every fold).  Unless "best", when an SVM
        tree is perfect on every fold nothing can be chosen before it, and neither the
        axis-aligned tree nor the searches are run (NaN).  Nor are they, whatever the rule, with ``free``: a single
        decision can fit any labelling of every training fold
        (:func:`_fits_any_labels`: at least as many weights as points), so every
        labelling is a zero-error tree, and the unpenalised search, which only counts
        errors, ends at one of them of no particular kind.  Else every searched grid
        point runs one restart of
        ``cv_iter(max_iter)`` moves per fold; one whose means then reach the
        contenders' bars (:func:`gto.learners._selection.contender_bars`: the
        rule's bars less a standard error) is scored again with
        ``contender_iter(max_iter)`` moves and up to ``CONTENDER_RESTARTS``
        restarts, the first from its first-stage tree of that fold, while it can
        still be chosen over the SVM trees whatever it scores on the folds left
        (:func:`gto.learners._selection.race`; the first stage's scores are
        replaced) - unless ``settle`` and every contender already passes the race's
        bars on its first-stage scores (:func:`gto.learners._selection.settled`: the
        rule would choose it as it stands), when the first stage's scores stand.
        (Not ``settle``: the CV runs on a subsample, and a chosen search's refit
        starts from its contender's fold trees, :meth:`_select`; or this fit is the
        shallower depth's, whose scores are a deeper fit's bar,
        :func:`gto.learners._capacity.fit_shallower`, and a short search's scores
        would lower it.)  Both stages run fold by fold (:meth:`_race_folds`); the
        first stops a searched point once it cannot reach the contenders' bars any
        more.  A point stopped keeps NaN on the folds it did not run."""
        t0 = time.perf_counter()
        svm, axis, searched = families(grid)  # the rows of each kind of tree
        scores = np.full((2, len(grid), len(folds)), np.nan)
        trees = np.full((len(grid), len(folds)), None, dtype=object)
        with self._bar(len(grid) * len(folds)) as bar:  # verbose: the first stage's fits
            ran = self._svm_folds(tree, X, y, w, grid, svm, folds, scores, trees,
                                  None if time_limit is None else SVM_SHARE * time_limit, bar)
            if ran < len(folds):  # out of time: every candidate is scored on these folds
                bar.update((len(grid)) * (len(folds) - ran))
                folds, scores, trees = folds[:ran], scores[:, :, :ran], trees[:, :ran]
            perfect = scores[ACCURACY, svm].mean(axis=1).max() >= 1 - 1e-12
            unbeatable = self.selection != "best" and len(folds) > 1 and perfect
            if axis and not unbeatable:
                left = None if time_limit is None else SVM_SHARE * time_limit - (
                    time.perf_counter() - t0)  # the SVM trees' share, as theirs
                self._axis_folds(tree, X, y, w, grid, axis[0], svm, folds, scores, trees, left,
                                 bar)
            else:
                bar.update(len(axis) * len(folds))
            if not searched or free or unbeatable:
                bar.update(len(searched) * len(folds))
                return scores, trees
            reach = [(j, b, False) for j, b in contender_bars(self.selection, scores, svm)]
            self._race_folds(tree, X, y, w, grid, searched, folds, scores, trees,
                             (cv_iter(self.max_iter), 1), (reach, False), _left(time_limit, t0),
                             bar)  # one short restart each
        again = [] if len(folds) < 2 or perfect else [  # nothing beats a perfect score
            i for i in searched if still_in(scores[:, i], len(folds), reach, False)]
        budget = (contender_iter(self.max_iter), min(self.restarts, CONTENDER_RESTARTS))
        if settle and settled(scores, again, race(self.selection, scores, svm)
                               + deeper_race(self, scores, svm)):  # depth >= 3: shallower
            again = []  # every contender has already won on its short search
        scores[:, again] = np.nan
        if again:
            bars = race(self.selection, scores, svm, alone=len(again) == 1)
            bars += deeper_race(self, scores, svm)  # depth >= 3: the shallower bar
            with self._bar(len(again) * len(folds), "contenders") as bar:
                self._race_folds(tree, X, y, w, grid, again, folds, scores, trees, budget,
                                 (bars, True), _left(time_limit, t0), bar, warm=True)
        for i in again:  # the fold trees of the contender's own stage only
            trees[i, np.isnan(scores[ACCURACY, i])] = None
        return scores, trees

    def _svm_folds(self, tree, X, y, w, grid, svm, folds, scores, trees, time_limit, bar):
        """Score the linear-SVM trees ``svm`` (grid rows) into ``scores`` and ``trees``
        (in place), with ``time_limit`` (seconds) fold by fold (``n_jobs`` folds at a
        time); returns the number of folds scored: all, or with ``time_limit`` those
        run before the next chunk of folds would pass it (at least one chunk; the SVM
        fits themselves cannot be stopped)."""
        t0 = time.perf_counter()
        # without a time limit one call scores every fold (n_jobs at a time)
        step = len(folds) if time_limit is None else capped_jobs(self.n_jobs, len(folds))
        for k in range(0, len(folds), step):
            at = np.ix_(svm, range(k, min(k + step, len(folds))))
            scores[(slice(None), *at)], trees[at] = self._scores(
                tree, X, y, w, [grid[i] for i in svm], folds[k:k + step], None, None, bar=bar)
            spent = time.perf_counter() - t0
            done = at[1].size + k
            if time_limit is not None and done < len(folds) and spent * (1 + step / done) > time_limit:
                return done
        return len(folds)

    def _axis_folds(self, tree, X, y, w, grid, row, svm, folds, scores, trees, time_limit,
                    bar):
        """Score the axis-aligned tree (grid row ``row``) into ``scores`` and ``trees``
        (in place) fold by fold, ``n_jobs`` folds at a time; under "agree" only while it
        beats every linear-SVM tree (rows ``svm``) on every fold so far
        (:func:`gto.learners._selection.dominates_so_far`: else it cannot be chosen;
        the folds after the first where it is not are NaN, whatever ``n_jobs``), and
        with ``time_limit`` (seconds) only while there is time; its folds not run stay
        NaN (it is then not chosen)."""
        t0 = time.perf_counter()
        step = capped_jobs(self.n_jobs, len(folds))
        for k in range(0, len(folds), step):
            if time_limit is not None and time.perf_counter() - t0 >= time_limit:
                scores[:, row] = np.nan
                bar.update(len(folds) - k)
                return
            at = np.ix_([row], range(k, min(k + step, len(folds))))
            scores[(slice(None), *at)], trees[at] = self._scores(
                tree, X, y, w, [grid[row]], folds[k:k + step], None, None, bar=bar)
            done = k + at[1].size
            if self.selection == "agree" and not dominates_so_far(scores, row, svm, done):
                first = next(j for j in range(done)  # the first fold below: as one at a time
                             if not dominates_so_far(scores, row, svm, j + 1))
                scores[:, row, first + 1:], trees[row, first + 1:] = np.nan, None
                bar.update(len(folds) - done)
                return

    def _race_folds(self, tree, X, y, w, grid, rows, folds, scores, trees, budget, bars,
                    time_limit, bar, warm=False):
        """Score the grid points ``rows`` fold by fold (``n_jobs`` folds at a time) into
        ``scores`` (2, G, K) and ``trees`` (in place), each while it can still pass
        ``bars = (bars, strict)`` (:func:`_race`: its later folds stay NaN); ``time_limit``:
        seconds for all of them; ``bar``: the progress bar (a fit not run counts as
        done); ``warm``: start each fold's search from the tree in ``trees``."""
        step = capped_jobs(self.n_jobs, len(folds))  # folds fitted at a time
        alive = list(rows)
        for k in range(0, len(folds), step):
            if not alive:
                break
            at = np.ix_(alive, range(k, min(k + step, len(folds))))
            # the time limit split evenly over the folds, as one call would
            limit = None if time_limit is None else time_limit * at[1].size / len(folds)
            scores[(slice(None), *at)], trees[at] = self._scores(
                tree, X, y, w, [grid[i] for i in alive], folds[k:k + step], limit, budget,
                trees[at] if warm else None, bar)
            out = [i for i in alive if not _race(scores[:, i], k + at[1].size, *bars)]
            bar.update(len(out) * (len(folds) - k - at[1].size))
            alive = [i for i in alive if i not in out]

    def _folds(self, X, y, w):
        """``(X, y, w, folds)`` of the internal CV (a stratified subsample of
        ``CV_POINTS`` above that size, for an int ``cv``), or None if a class is too
        small to split."""
        if not isinstance(self.cv, Integral):
            return X, y, w, list(check_cv(self.cv, y, classifier=True).split(X, y))
        n_splits = min(self.cv, int(np.min(np.unique(y, return_counts=True)[1])))
        if n_splits < 2:
            return None
        X, y, w = _cv_sample(X, y, w, _seed(self.random_state))  # select on it, refit on all
        splitter = StratifiedKFold(n_splits, shuffle=True, random_state=_seed(self.random_state))
        return X, y, w, list(splitter.split(X, y))

    def _bar(self, total, what=None):
        """A progress bar over ``total`` fits of the internal CV (drawn when verbose)."""
        desc = "GTOClassifier internal CV" + ("" if what is None else f", {what}")
        return Progress(total=total, desc=desc, quiet=not self.verbose, force=True)

    def _scores(self, tree, X, y, w, grid, folds, time_limit, budget, warm=None, bar=None):
        """``(scores, trees)``: (2, len(grid), len(folds)) held-out accuracies and Brier
        scores (gto.learners._selection) and the (len(grid), len(folds)) fitted trees;
        ``budget``: ``(max_iter, restarts)`` of the searches (None: the
        estimator's); ``warm``: (len(grid), len(folds)) trees to start from (None:
        the grid point's own starts); ``bar``: a progress bar to tick (None: one of
        its own)."""
        workers = capped_jobs(self.n_jobs, len(grid) * len(folds))  # at most the fits and cores
        limit = None
        if time_limit is not None:
            searched = sum(g["alpha"] is not None for g in grid) * len(folds)
            limit = time_limit / max(1, -(-searched // workers))
        warm = np.full((len(grid), len(folds)), None) if warm is None else warm
        jobs = [delayed(_fold_score)(self, tree, X, y, w, params, train, test, limit, budget,
                                     warm[g, k])
                for g, params in enumerate(grid) for k, (train, test) in enumerate(folds)]
        with nullcontext(bar) if bar is not None else self._bar(len(jobs)) as ticks:
            done = [ticks.update() or s  # verbose: a bar over the CV fits, as they end
                    for s in Parallel(n_jobs=workers, return_as="generator")(jobs)]
        trees = np.empty(len(done), dtype=object)
        trees[:] = [t for *_, t in done]
        scores = np.array([s for *s, _ in done]).T.reshape(2, len(grid), len(folds))
        return scores, trees.reshape(len(grid), len(folds))

    def fit(self, X, y, sample_weight=None):
        """Select ``alpha``/``max_features`` if "auto", then fit the tree to (X, y)."""
        self._validate_params()
        self._check_structure()
        self._categorical = {}
        if self.categorical_features is not None or self.one_group or non_numeric(X):
            from sklearn.utils.validation import _check_feature_names

            from ..model._categorical import as_table

            _check_feature_names(self, X, reset=True)
            self.n_features_in_ = as_table(X)[0].shape[1]
            y = np.asarray(y)
            self._categorical = {"categorical_features": self.categorical_features or "auto",
                                 "one_group": self.one_group}
        else:
            X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has one class only ({self.classes_[0].item()!r}); a classifier needs at least two"
            )
        # checked here (huge weights rescaled by a power of two) for the SVM trees and CV scores
        w = None if sample_weight is None else check_sample_weight(sample_weight, len(y))
        t0 = time.perf_counter()  # the time limit counts all below, the default tree's set-up too
        tree = self._initial_tree(self.n_features_in_, X, y, w)
        grid = self._grid(self.n_features_in_)
        if self._categorical:  # no internal CV on categorical data: "auto" is 0 / None
            grid = [{"alpha": 0.0 if isinstance(self.alpha, str) else float(self.alpha),
                     "max_features": None if isinstance(self.max_features, str)
                     else self.max_features, "svm_C": None}]
        if len(grid) > 1:  # depth >= 3: the fit one level shallower first, then the rest
            fit_shallower(self, X, y, sample_weight, _left(self.time_limit, t0))
        with threadpool_limits(limits=1, user_api="blas"):  # one BLAS thread (Notes)
            limit = _left(self.time_limit, t0)
            self.best_index_, self.cv_results_, warm, grid = self._select(
                tree, X, y, w, grid, None if limit is None else CV_SHARE * limit)
            if self.cv_results_ is None:
                self.best_index_ = None
            if shallower_stands(self):  # depth >= 3: no refit of a deeper tree that does not pay
                return self
            params = grid[self.best_index_ or 0]
            self.alpha_, self.max_features_ = params["alpha"], params["max_features"]
            self.svm_C_ = params["svm_C"]
            left = _left(self.time_limit, t0)
            self.result_ = self._fit_tree(tree, X, y, w, params, self.n_jobs, self.verbose,
                                          time_limit=left, restarts=1 if warm else None,
                                          warm=warm)
        self.encoding_ = self.result_.get("encoding")
        self.tree_ = self.result_.tree
        if self.tree_.feature_names is None:  # a DataFrame's columns, or e.g. "colour=red"
            self.tree_.feature_names = self.tree_feature_names_
        self.n_iter_ = self.result_.nit
        self.leaf_proba_ = self.tree_.leaf_proba()  # recorded by optimize
        self._fit_inspection(X if self.encoding_ is None else self._tree_input(X), w)
        stop_if_interrupted(self.result_)  # Ctrl-C: stop loops over fits, as scikit-learn does
        return choose_depth(self)  # depth_, depth_scores_

    def apply(self, X):
        """Index of the leaf each sample reaches."""
        check_is_fitted(self)
        return self.tree_.apply(self._model_input(X))

    def _model_input(self, X):
        """New data as the fitted tree reads it (checked against the data fitted on).

        Numeric data go through scikit-learn's checks (a DataFrame must have the
        fitted columns in the fitted order).  With categorical columns a
        DataFrame's columns are matched by name (any order; a missing or extra
        column is a ValueError), and categories not seen in ``fit`` are
        reported by an :class:`~gto.model._categorical.UnseenCategoryWarning`:
        such a value matches none of the known ones (all its one-hot columns
        are 0, and a subset test sends it right).
        """
        if self.encoding_ is None:
            return validate_data(self, X, reset=False, dtype=np.float64)
        X = by_name(X, getattr(self, "feature_names_in_", None))
        warn_unseen(self.encoding_, X)
        return self._tree_input(X)

    def _tree_input(self, X):
        """Checked data in the tree's columns: one-hot encoded unless the tree is on
        the original columns (``one_group``)."""
        return X if self.one_group else self.encoding_.transform(X)

    def predict(self, X):
        """Class label of each sample's leaf."""
        leaf = self.apply(X)
        return self.tree_.leaf_classes[leaf].astype(self.classes_.dtype)

    def predict_proba(self, X):
        """Class frequencies of the training points in each sample's leaf."""
        leaf = self.apply(X)
        return self.leaf_proba_[leaf]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    # -- inspection (docs/DESIGN.md §9; gto.model.inspection) ------------------------------------
    def _fit_inspection(self, X, sample_weight):
        """Training counts per decision and importances per input column (the
        one-hot columns of a categorical feature add up to that feature's)."""
        from ..model import inspection

        self.n_node_samples_ = inspection.node_samples(self.tree_, X, sample_weight)
        groups = None
        if self.encoding_ is not None and not self.one_group:
            groups = self.encoding_.groups
        self.feature_importances_ = inspection.feature_importances(self.tree_, X, sample_weight,
                                                                   groups=groups)

    @property
    def tree_feature_names_(self):
        """Names of the columns ``tree_`` reads: ``feature_names_in_`` (or ``x0, x1,
        ...``), with a one-hot encoded categorical feature as ``name=value`` columns."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        if self.encoding_ is None:
            return None if names is None else [str(n) for n in names]
        if self.one_group:
            return self.encoding_.feature_names
        return self.encoding_.encoded_names

    def get_depth(self):
        """Depth of the fitted tree (longest root-to-leaf path)."""
        check_is_fitted(self)
        return self.tree_.get_depth()

    def get_n_leaves(self):
        """Number of leaves of the fitted tree."""
        check_is_fitted(self)
        return self.tree_.n_leaves

    def decision_path(self, X):
        """(n_samples, n_nodes) CSR indicator of the nodes each sample visits (preorder ids)."""
        check_is_fitted(self)
        return self.tree_.decision_path(self._model_input(X))


def _cv_results(grid, both):
    """``cv_results_`` (scikit-learn's layout) of ``both`` (2, len(grid), K): the
    held-out accuracies (``*_test_score``) and Brier scores (``*_test_brier``, the
    means and standard deviations only)."""
    scores, brier = both[ACCURACY], both[BRIER]
    mean = scores.mean(axis=1)
    results = {"params": grid,
               "param_alpha": np.array([np.nan if g["alpha"] is None else g["alpha"]
                                        for g in grid], dtype=float),
               "param_max_features": np.array([g["max_features"] for g in grid], dtype=object),
               "param_svm_C": np.array([np.nan if g["svm_C"] is None else g["svm_C"]
                                        for g in grid], dtype=float)}
    for k in range(scores.shape[1]):
        results[f"split{k}_test_score"] = scores[:, k]
    order = np.lexsort((np.arange(len(grid)), -np.round(mean, 12)))
    rank = np.empty(len(grid), dtype=np.int32)
    rank[order] = np.arange(1, len(grid) + 1)
    results.update(mean_test_score=mean, std_test_score=scores.std(axis=1),
                   rank_test_score=rank, mean_test_brier=brier.mean(axis=1),
                   std_test_brier=brier.std(axis=1))
    return results


def _race(row, n_run, bars, strict=True):
    """Whether a searched point with scores ``row`` (2, K: accuracy and Brier score per
    fold) on its first ``n_run`` folds is still in the race against ``bars``
    (:func:`gto.learners._selection.still_in` after each of them, in fold order, so
    that the scores do not depend on how many folds ran at a time); if not, its
    scores after the fold where it dropped out become NaN (in place)."""
    for k in range(1, n_run + 1):
        if not still_in(row, k, bars, strict):
            row[:, k:] = np.nan
            return False
    return True


def _left(time_limit, t0):
    """Seconds left of ``time_limit`` since ``t0`` (None: no limit)."""
    return None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1e-3)


def _complexity(params, n_features):
    """Sort key of a grid point, simplest first (for the one-standard-error rule):
    the linear-SVM trees (convex max-margin fits; fewer SVM levels first, for
    the pruned ones ``svm_depth`` that ``experiments.selection`` measures,
    then smaller ``C``), then the searched trees by fewer features per
    decision, then a larger penalty, and last the axis-aligned tree of the
    structure (the exact minimiser of training errors over its cuts, the fit
    that chases the folds' noise most: counted simplest, it was taken on near
    ties and held out worse on five of the thirteen quality sets, docs/speed.md,
    round 23)."""
    if params.get("alpha") is None and params.get("svm_C") is None:  # AXIS_POINT
        return (np.inf, 0.0)
    if params.get("svm_C") is not None and params.get("alpha") is None:
        depth = params.get("svm_depth")
        return (0, np.inf if depth is None else depth, params["svm_C"])
    budget = params["max_features"] or n_features
    return (min(budget, n_features), -params["alpha"])


def _cv_sample(X, y, w, seed):
    """``(X, y, w)`` as given, or above ``CV_POINTS`` points a stratified subsample of
    that size (:func:`_subsample`): the data the internal CV selects on."""
    if len(y) <= CV_POINTS:
        return X, y, w
    keep = _subsample(y, CV_POINTS, seed)
    return X[keep], y[keep], None if w is None else w[keep]


def _fits_any_labels(X, w, rows):
    """Whether one decision can send the points ``rows`` of ``X`` (those of positive
    weight) to either side as any labelling asks: as many weights as points or more,
    and the points with the constant column linearly independent (standardised
    columns, numerical rank), so that ``[X, 1] theta = s`` has a solution for every
    sign vector ``s``.  Then every decision of a tree can split its points as it
    likes, and a tree that has a leaf of each class fits the training points
    without an error, whatever their classes."""
    rows = rows if w is None else rows[w[rows] > 0]
    if len(rows) > X.shape[1] + 1:
        return False
    spread = X[rows].std(axis=0)
    Z = X[rows][:, spread > 0]
    Z = (Z - Z.mean(axis=0)) / spread[spread > 0]
    return int(np.linalg.matrix_rank(np.column_stack([Z, np.ones(len(rows))]))) == len(rows)


def _subsample(y, size, seed):
    """Indices of a stratified subsample of ``size`` points (every class kept)."""
    from sklearn.model_selection import train_test_split

    _, counts = np.unique(y, return_counts=True)
    stratify = y if counts.min() >= 2 else None
    keep, _ = train_test_split(np.arange(len(y)), train_size=size, stratify=stratify,
                               random_state=seed)
    return np.sort(keep)


def cv_iter(max_iter, share=None):
    """Moves per restart of a search inside the internal cross-validation: ``share`` of
    the final fit's ``max_iter`` (at least one); None: ``CV_ITER_SHARE``, the first
    stage's."""
    share = CV_ITER_SHARE if share is None else share
    return max(1, int(round(share * max_iter))) if max_iter else max_iter


def contender_iter(max_iter):
    """Moves per restart of a contender's searches in the second stage of the internal
    cross-validation (``CONTENDER_ITER_SHARE`` of the final fit's)."""
    return cv_iter(max_iter, CONTENDER_ITER_SHARE)


def _seed(random_state):
    """An int seed for the CV shuffle from an int, None or Generator."""
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**31))
    return random_state


def svm_intercept_scaling(penalty):
    """Liblinear's ``intercept_scaling`` for the grid's SVM tree of ``penalty``:
    ``SVM_INTERCEPT_SCALING`` for the 1-norm trees (``SVM_PENALTY``), scikit-learn's 1
    for the L2 start tree of the alpha-0 search (scaling it too made spectf worse,
    docs/speed.md)."""
    return SVM_INTERCEPT_SCALING if penalty == SVM_PENALTY else 1.0


def _svm_result(tree, X, y, w, C, seed, penalty):
    """The linear-SVM tree of ``penalty`` (and :func:`svm_intercept_scaling`) as an
    ``OptimizeResult`` like :func:`optimize`'s (``nit``: the SVM solver's iterations)."""
    t0 = time.perf_counter()
    fitted, n_iter = svm_tree(tree, X, y, sample_weight=w, C=C, random_state=seed,
                              penalty=penalty, intercept_scaling=svm_intercept_scaling(penalty))
    return _unsearched(fitted, X, y, w, n_iter, t0,
                       f"linear-SVM tree (gto.engine._svm_start, {penalty}, C={C}); no search")


def _axis_result(tree, X, y, w, seed):
    """The axis-aligned tree of the structure, fitted on the points whose class has a
    leaf, as an ``OptimizeResult`` like :func:`_svm_result`'s: for a complete
    structure of depth 1 or 2 the one with the fewest weighted training errors over
    at most ``AXIS_CUTS`` cuts a feature at its quantiles, as many as keep its work
    within ``AXIS_WORK_LIMIT`` (:func:`gto.engine._starts.structured_axis`); else,
    or where not even one cut a feature does, CART's splits placed on the
    structure's decisions (:func:`gto.engine._starts.structured_cart`)."""
    t0 = time.perf_counter()
    has_leaf, _ = leaf_class_points(tree, y, w)
    Xl, yl, wl = X[has_leaf], y[has_leaf], None if w is None else w[has_leaf]
    cuts = cuts_within(Xl, AXIS_WORK_LIMIT, AXIS_CUTS) if is_shallow(tree) else None
    if cuts is None:
        fitted = structured_cart(tree, Xl, yl, wl, seed)
        how = "CART tree of the structure (gto.engine._starts.structured_cart)"
    else:
        fitted = structured_axis(tree, Xl, yl, wl, cuts)
        how = f"axis-aligned tree of the structure, {cuts} cuts a feature (structured_axis)"
    fitted.record_training(X, y, w)  # the leaves' class counts, as svm_tree records them
    return _unsearched(fitted, X, y, w, 0, t0, how + "; no search")


def _unsearched(fitted, X, y, w, nit, t0, message):
    """A tree fitted without a search (begun at ``t0``, ``nit`` solver iterations) as an
    ``OptimizeResult`` like :func:`optimize`'s: its training errors, those of classes
    without a leaf among them."""
    from scipy.optimize import OptimizeResult

    n_errors = fitted.n_errors(X, y, w)
    _, lost = leaf_class_points(fitted, y, w)  # errors whatever the splits
    return OptimizeResult(tree=fitted, n_errors=n_errors, start_n_errors=n_errors, nit=nit,
                          leafless_errors=lost, status=Status.COMPLETED, success=True,
                          time=time.perf_counter() - t0, message=message)


def _refuse_too_big(tree, X, y, w, folds):
    """The searched folds' memory check (ValueError), made before the CV's first fit,
    so that a tree too big to search is refused at once, not after the SVM trees."""
    train = max((train for train, _ in folds), key=len)
    train = train[np.isin(y[train], tree.leaf_classes)]  # the points a search sees (optimize)
    check_search_fits(tree, PreparedData(tree, X[train], y[train], None if w is None else w[train]))


def _fold_score(estimator, tree, X, y, w, params, train, test, time_limit=None, budget=None,
                warm=None):
    """``(held-out accuracy, held-out Brier score (gto.learners._selection.tree_brier),
    fitted tree)`` of one grid point on one fold (both weighted by w); ``budget``:
    ``(max_iter, restarts)`` of its searches (None: the estimator's); ``warm``: a tree
    to start the search from (None: its own starts)."""
    ww = None if w is None else w[train]
    max_iter, restarts = budget or (None, None)
    res = estimator._fit_tree(tree, X[train], y[train], ww, params, 1, time_limit=time_limit,
                              max_iter=max_iter, restarts=restarts,
                              warm=None if warm is None else [warm])
    stop_if_interrupted(res)  # Ctrl-C stops the internal cross-validation
    hit = res.tree.predict(X[test]) == y[test]
    weights = None if w is None or not np.any(w[test] > 0) else w[test]
    brier = tree_brier(res.tree, X[train], y[train], ww, X[test], y[test],
                       None if w is None else w[test], estimator.classes_)
    return float(np.average(hit, weights=weights)), brier, res.tree

