"""Time per sweep against the levels an order sweeps: Python, NumPy and compiled forms on log-log axes.

Each point is a form's median time per sweep; its bar spans the middle half of
its samples (25th to 75th percentile), so the reader sees the spread behind the
median. The lines cross where one form's fixed cost per call stops mattering.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from matplotlib.figure import Figure

from ..comparison import Comparison
from ..measure import interpreter

__all__ = ["sweep_figure"]

_STYLE = {0: ("#455a64", "o"), 1: ("#ef6c00", "s"), 2: ("#1565c0", "^"), 3: ("#6a1b9a", "v")}


def _series(points: list[tuple[int, object]]) -> tuple[list[int], np.ndarray, np.ndarray]:
    xs = [k for k, _ in points]
    medians, quartiles = [], []
    for _, m in points:
        samples = np.asarray(m.samples) * 1e6  # type: ignore[attr-defined]
        medians.append(np.median(samples))
        quartiles.append(np.percentile(samples, [25, 75]))
    med = np.asarray(medians)
    q = np.asarray(quartiles)
    return xs, med, np.vstack([med - q[:, 0], q[:, 1] - med])


def sweep_figure(results: Mapping[int, Mapping[str, Comparison]], *, baseline: str = "Python loop over a list") -> Figure:
    """µs per sweep against levels swept, for the baseline (``b`` of every comparison) and each form (``a``)."""
    if not results:
        raise ValueError("sweep_figure needs at least one size")
    sizes = sorted(results)
    forms = list(results[sizes[0]])
    fig = Figure(figsize=(8.5, 4.2), layout="constrained")
    ax = fig.add_subplot()
    lines = [(baseline, [(k, next(iter(results[k].values())).b) for k in sizes])]
    lines += [(form, [(k, results[k][form].a) for k in sizes]) for form in forms]
    for i, (name, points) in enumerate(lines):
        color, marker = _STYLE[i % len(_STYLE)]
        xs, med, err = _series(points)
        ax.errorbar(xs, med, yerr=err, marker=marker, color=color, capsize=3, label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("levels the order sweeps (log scale)")
    ax.set_ylabel("µs per sweep (log scale; bars: middle half of samples)")
    info = interpreter()
    ax.set_title(f"One sweep over price levels, four ways ({info.implementation} {info.version})", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    return fig
