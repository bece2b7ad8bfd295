"""Pictures of trees and runs (matplotlib, the ``plots`` extra).

- :func:`decision_regions`: a model's class regions over 2-D data
  (scikit-learn's ``DecisionBoundaryDisplay``), points and a class legend on top;
  :func:`compare_regions` puts several models side by side (the paper's
  Figure 1 style);
- :func:`convergence`: every restart's objective and error count against
  iteration, with the best-so-far line (log-scaled iterations for Frank-Wolfe);
- :func:`error_bars`: grouped bars of train and test error from a tidy
  DataFrame;
- :func:`gto.plot_tree` (in :mod:`gto.model.inspection`) draws a tree.

Every function takes ``ax=`` (an Axes, or a sequence of Axes where it draws
several panels) and returns the matplotlib Figure; save it with
``fig.savefig(path)``.  Without ``ax`` the Figure is made without pyplot, so no
window opens and no global state changes.
"""
from __future__ import annotations

import numpy as np


def _figure_class():
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("gto's plots need matplotlib: pip install 'gto[plots]'") from None
    return Figure


def figure_and_axes(ax=None, figsize=(6, 4.5), ncols=1, dpi=100):
    """``(figure, axes)``: the given Axes and its Figure, or a new Figure with ``ncols`` Axes.

    With ``ncols > 1`` ``ax`` may be a sequence of that many Axes.
    """
    Figure = _figure_class()
    if ax is None:
        fig = Figure(figsize=figsize, dpi=dpi)
        axes = fig.subplots(1, ncols, squeeze=False)[0]
        return fig, (axes[0] if ncols == 1 else list(axes))
    axes = [ax] if ncols == 1 and not isinstance(ax, (list, tuple, np.ndarray)) else list(
        np.ravel(ax))
    if len(axes) != ncols:
        raise ValueError(f"ax: need {ncols} Axes, got {len(axes)}")
    return axes[0].figure, (axes[0] if ncols == 1 else axes)


def class_colours(classes):
    """One matplotlib colour per class (the default cycle C0, C1, ...)."""
    return [f"C{i % 10}" for i in range(len(classes))]


def _names(model, feature_names):
    if feature_names is not None:
        names = [str(f) for f in feature_names]
    else:
        found = getattr(model, "feature_names_in_", None)
        found = getattr(model, "feature_names", None) if found is None else found
        names = None if found is None else [str(f) for f in found]
    if names is None:
        return ["x0", "x1"]
    if len(names) != 2:
        raise ValueError(f"feature_names: need 2 names, got {len(names)}")
    return names


def decision_regions(model, X, y, ax=None, feature_names=None, title=None, resolution=200,
                     classes=None):
    """Class regions of ``model`` (anything with ``predict``) over the box of 2-D ``X``.

    Points are drawn on top, coloured by class, with a legend; the title ends
    with the number of training errors.  Returns the Figure.
    """
    from matplotlib.colors import ListedColormap
    from matplotlib.lines import Line2D
    from sklearn.inspection import DecisionBoundaryDisplay

    names = _names(model, feature_names)
    X = X.to_numpy() if hasattr(X, "to_numpy") else X
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"decision regions need 2-D points, got shape {X.shape}")
    classes = np.unique(y) if classes is None else np.asarray(classes)
    colours = class_colours(classes)
    fig, ax = figure_and_axes(ax)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.05 * (hi - lo + 1e-12)
    g0, g1 = np.meshgrid(np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution),
                         np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    Xq = X
    if hasattr(model, "feature_names_in_"):  # a fitted estimator wants its DataFrame columns
        import pandas as pd

        grid = pd.DataFrame(grid, columns=model.feature_names_in_)
        Xq = pd.DataFrame(X, columns=model.feature_names_in_)
    region = np.searchsorted(classes, model.predict(grid)).reshape(g0.shape)
    display = DecisionBoundaryDisplay(xx0=g0, xx1=g1, n_classes=max(len(classes), 2),
                                      response=region, xlabel=names[0], ylabel=names[1],
                                      multiclass_colors=colours if len(classes) > 2 else None)
    kwargs = {"alpha": 0.3}
    if len(classes) <= 2:
        kwargs.update(cmap=ListedColormap(colours + ["C1"] * (2 - len(colours))),
                      levels=[-0.5, 0.5, 1.5])
    display.plot(ax=ax, plot_method="contourf", **kwargs)
    code = np.searchsorted(classes, y)
    ax.scatter(X[:, 0], X[:, 1], c=[colours[c] for c in code], s=14, edgecolors="k",
               linewidths=0.3)
    errors = int(np.sum(np.asarray(model.predict(Xq)) != y))
    ax.set_title(f"{title or type(model).__name__}: {errors} training errors", fontsize=10)
    handles = [Line2D([], [], marker="o", linestyle="", color=c, markeredgecolor="k",
                      label=str(k)) for c, k in zip(colours, classes.tolist())]
    ax.legend(handles=handles, title="class", fontsize=8, title_fontsize=8, loc="best")
    return fig


def compare_regions(models, X, y, ax=None, titles=None, feature_names=None, resolution=200,
                    figsize=None):
    """:func:`decision_regions` of several models side by side; returns the Figure."""
    if not models:
        raise ValueError("models: need at least one model")
    fig, axes = figure_and_axes(ax, figsize=figsize or (5 * len(models), 4.5),
                                ncols=len(models))
    axes = axes if len(models) > 1 else [axes]
    titles = titles or [type(m).__name__ for m in models]
    classes = np.unique(np.asarray(y))
    for a, model, title in zip(axes, models, titles):
        decision_regions(model, X, y, ax=a, feature_names=feature_names, title=title,
                         resolution=resolution, classes=classes)
    if ax is None:
        fig.tight_layout()
    return fig


def convergence(runs, ax=None, labels=None, figsize=(11, 4)):
    """Objective and misclassified count against iteration, every restart and the best so far.

    ``runs`` are ``gto.optimize`` results (each restart's history is in
    ``restarts[i]["history"]``) or history arrays.  Frank-Wolfe runs (mode "fw") get a log-scaled x axis.
    Two panels: ``ax`` is None or a pair of Axes.
    """
    fig, (ax_value, ax_count) = figure_and_axes(ax, figsize=figsize, ncols=2)
    labels = labels or [f"run {i}" for i in range(len(runs))]
    log_x = False
    for i, (run, label) in enumerate(zip(runs, labels)):
        histories = _histories(run)
        colour = f"C{i % 10}"
        for h in histories:
            x = h["iteration"] + 1  # 1-based so that a log axis shows the start
            log_x |= bool(np.any(h["mode"] == "fw"))
            faint = dict(color=colour, alpha=0.35, linewidth=0.8)
            ax_value.plot(x, np.maximum(h["value"], 1e-12), **faint)
            ax_count.plot(x, h["n_errors"], **faint)
        best_value, best_count = _best_so_far(histories)
        ax_value.plot(np.arange(1, len(best_value) + 1), np.maximum(best_value, 1e-12),
                      color=colour, linewidth=2,
                      label=f"{label}: best of {len(histories)} restart(s)")
        ax_count.plot(np.arange(1, len(best_count) + 1), best_count, color=colour, linewidth=2,
                      label=label)
    ax_value.set_yscale("log")
    for a in (ax_value, ax_count):
        if log_x:
            a.set_xscale("log")
        a.set_xlabel("iteration (log scale)" if log_x else "iteration")
    ax_value.set(ylabel="objective", title="objective (thin: each restart; thick: best so far)")
    ax_count.set(ylabel="misclassified points", title="training errors")
    ax_value.title.set_fontsize(10)
    ax_count.title.set_fontsize(10)
    ax_value.legend(fontsize=8)
    if ax is None:
        fig.tight_layout()
    return fig


def _histories(run):
    """Every restart's history of a ``gto.optimize`` result (or one history array)."""
    if isinstance(run, np.ndarray):
        return [run]
    every = [r.get("history") for r in run.get("restarts", [])]
    every = [h for h in every if h is not None and len(h)]
    return every or [run.history]


def _best_so_far(histories):
    """The best value and count over all restarts up to each iteration (restarts side by side)."""
    length = max(len(h) for h in histories)
    value = np.full((len(histories), length), np.inf)
    count = np.full((len(histories), length), np.inf)
    for r, h in enumerate(histories):
        value[r, : len(h)] = np.minimum.accumulate(h["value"])
        count[r, : len(h)] = np.minimum.accumulate(h["n_errors"])
        value[r, len(h):] = value[r, len(h) - 1]
        count[r, len(h):] = count[r, len(h) - 1]
    return value.min(axis=0), count.min(axis=0)


def error_bars(frame, ax=None, title="", figsize=(11, 4.5)):
    """Grouped bars of mean error with std: one group per data set, one bar per arm.

    ``frame`` is tidy: one row per run with columns ``dataset``, ``arm``,
    ``set`` ("train" / "test") and ``error`` (percent); an optional
    ``source`` column (e.g. "ours" / "paper") becomes hatched bars.  Two
    panels (train, test): ``ax`` is None or a pair of Axes.
    """
    import pandas as pd

    frame = pd.DataFrame(frame)
    missing = {"dataset", "arm", "set", "error"} - set(frame.columns)
    if missing:
        raise ValueError(f"frame: missing columns {sorted(missing)}")
    if "source" not in frame:
        frame = frame.assign(source="ours")
    fig, axes = figure_and_axes(ax, figsize=figsize, ncols=2)
    groups = list(dict.fromkeys(frame["dataset"]))
    bars = list(dict.fromkeys(zip(frame["arm"], frame["source"])))
    stats = frame.groupby(["dataset", "arm", "source", "set"], observed=True)["error"].agg(["mean", "std"])
    width = 0.8 / max(len(bars), 1)
    x = np.arange(len(groups))
    arms = list(dict.fromkeys(frame["arm"]))
    for a, part in zip(axes, ("train", "test")):
        for i, (arm, source) in enumerate(bars):
            mean = [stats["mean"].get((g, arm, source, part), np.nan) for g in groups]
            std = [stats["std"].get((g, arm, source, part), np.nan) for g in groups]
            a.bar(x + (i - (len(bars) - 1) / 2) * width, mean, width,
                  yerr=None if np.all(np.isnan(std)) else np.nan_to_num(std), capsize=2,
                  color=f"C{arms.index(arm) % 10}",
                  hatch="//" if source != "ours" else None,
                  edgecolor="white" if source != "ours" else None,
                  label=arm if source == "ours" else f"{arm} ({source})")
        a.set_xticks(x)
        a.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
        a.set_title(f"{part} error", fontsize=10)
    axes[0].set_ylabel("error %")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    if title:
        fig.suptitle(title, fontsize=11)
    if ax is None:
        fig.tight_layout()
    return fig
