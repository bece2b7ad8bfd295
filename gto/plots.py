"""Pictures of trees and runs (matplotlib, the ``plots`` extra).

- :func:`decision_regions`: 2-D class regions of several models side by side
  (the paper's Figure 1 style);
- :func:`convergence`: objective and misclassified count against iteration
  from ``gto.optimize`` results;
- :func:`error_bars`: grouped bars of mean train and test error with std.

Each writes a PNG of exactly ``figsize * dpi`` pixels and returns its path.
Figures are made without pyplot, so no window opens and no global state
changes.
"""
from __future__ import annotations

import numpy as np


def _figure(figsize, dpi):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("gto's plots need matplotlib: pip install 'gto[plots]'") from None
    return Figure(figsize=figsize, dpi=dpi)


def _save(fig, path):
    fig.savefig(path, dpi=fig.dpi)
    return path


def decision_regions(models, X, y, path, titles=None, figsize=(10, 4.5), dpi=100,
                     resolution=300):
    """Class regions over the box of ``X`` (2 features) for each model, points on top.

    ``models`` have ``predict`` (a :class:`gto.Tree`, a fitted scikit-learn
    classifier, ...).  Each panel's title ends with its training errors.
    """
    X, y = np.asarray(X, dtype=float), np.asarray(y)
    if X.ndim != 2 or X.shape[1] != 2:
        raise ValueError(f"decision regions need 2-D points, got shape {X.shape}")
    classes = np.unique(y)
    lo, hi = X.min(axis=0), X.max(axis=0)
    pad = 0.05 * (hi - lo + 1e-12)
    g0, g1 = np.meshgrid(np.linspace(lo[0] - pad[0], hi[0] + pad[0], resolution),
                         np.linspace(lo[1] - pad[1], hi[1] + pad[1], resolution))
    grid = np.column_stack([g0.ravel(), g1.ravel()])
    fig = _figure(figsize, dpi)
    axes = fig.subplots(1, len(models), squeeze=False)[0]
    titles = titles or [type(m).__name__ for m in models]
    cmap = "coolwarm" if len(classes) == 2 else "tab10"
    for ax, model, title in zip(axes, models, titles):
        region = np.searchsorted(classes, model.predict(grid)).reshape(g0.shape)
        ax.pcolormesh(g0, g1, region, cmap=cmap, alpha=0.3, shading="auto",
                      vmin=0, vmax=max(len(classes) - 1, 1))
        ax.scatter(X[:, 0], X[:, 1], c=np.searchsorted(classes, y), cmap=cmap, s=12,
                   edgecolors="k", linewidths=0.3, vmin=0, vmax=max(len(classes) - 1, 1))
        errors = int(np.sum(model.predict(X) != y))
        ax.set_title(f"{title}: {errors} training errors", fontsize=10)
        ax.set_xlabel("x0")
        ax.set_ylabel("x1")
    fig.tight_layout()
    return _save(fig, path)


def convergence(results, path, labels=None, figsize=(10, 4), dpi=100):
    """Objective (log scale) and misclassified count against iteration, one line per run.

    ``results`` are ``gto.optimize`` results; their ``history`` is used.
    """
    fig = _figure(figsize, dpi)
    ax_value, ax_count = fig.subplots(1, 2)
    labels = labels or [f"run {i}" for i in range(len(results))]
    for res, label in zip(results, labels):
        h = res.history
        marker = "o" if len(h) < 50 else None
        ax_value.plot(h["iteration"], np.maximum(h["value"], 1e-12), label=label, marker=marker,
                      markersize=3)
        ax_count.plot(h["iteration"], h["n_errors"], label=label, marker=marker, markersize=3)
    ax_value.set_yscale("log")
    ax_value.set(xlabel="iteration", ylabel="objective", title="objective")
    ax_count.set(xlabel="iteration", ylabel="misclassified points", title="errors")
    ax_value.legend(fontsize=8)
    fig.tight_layout()
    return _save(fig, path)


def error_bars(summary, path, groups, arms, title="", figsize=(11, 4.5), dpi=100):
    """Grouped bars: for each group (data set) one bar per arm, train and test panels.

    ``summary[(group, arm)]`` has ``"train"`` and ``"test"`` as (mean, std)
    in percent, as made by ``experiments.common.summarize``.
    """
    fig = _figure(figsize, dpi)
    axes = fig.subplots(1, 2, sharey=True)
    width = 0.8 / max(len(arms), 1)
    x = np.arange(len(groups))
    for ax, part in zip(axes, ("train", "test")):
        for i, arm in enumerate(arms):
            stats = [summary.get((g, arm), {}).get(part, (np.nan, np.nan)) for g in groups]
            mean, std = np.array(stats, dtype=float).T
            ax.bar(x + (i - (len(arms) - 1) / 2) * width, mean, width, yerr=std, capsize=2,
                   label=arm)
        ax.set_xticks(x)
        ax.set_xticklabels(groups, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{part} error", fontsize=10)
    axes[0].set_ylabel("error %")
    axes[1].legend(fontsize=7, ncol=2)
    if title:
        fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    return _save(fig, path)
