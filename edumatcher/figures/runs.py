"""Run-to-run pictures for chapter 09: the bimodal trap run by run, every run of every configuration, a before/after pair.

* ``trap_runs``: the trap's runs in order, CPU time of each, a run with a full
  collection inside drawn as a red diamond; the control (collector off) beside
  it on the same axis.
* ``runs_strip``: one column per configuration, one dot per run (its throughput),
  the median as a bar across the column; a run during which a full collection
  happened is drawn as a red diamond, so the reader can see which slow runs the
  collector explains and which it does not.
* ``before_after``: two measurements' samples side by side (alone against
  beside a CPU hog), same layout.
* ``single_vs_median_figure``: single passes against medians of groups of them.
"""

from __future__ import annotations

import textwrap

from matplotlib.figure import Figure

from ..experiments.bimodal import BimodalResult, TrapRun
from ..experiments.pitfalls import SingleVsMedian
from ..measure import Measurement

__all__ = ["trap_runs", "runs_strip", "before_after", "single_vs_median_figure"]


def trap_runs(trap: TrapRun, control: TrapRun) -> Figure:
    """Two panels on one y axis: each run's CPU time (ms) in order, the trap left, the control right."""
    fig = Figure(figsize=(9.5, 3.8), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, run in zip(axes, (trap, control), strict=True):
        plain = [(s.index, s.cpu * 1e3) for s in run.samples if not s.full]
        full = [(s.index, s.cpu * 1e3) for s in run.samples if s.full]
        if plain:
            ax.scatter([i for i, _ in plain], [y for _, y in plain], s=28, color="#1565c0", zorder=3, label="run without a full collection")
        if full:
            ax.scatter([i for i, _ in full], [y for _, y in full], s=46, marker="D", color="#c62828", zorder=4, label="run with a full collection inside")
        median = run.measurement().median * 1e3
        ax.axhline(median, color="#212121", linewidth=1, linestyle="--", label=f"median of all runs {median:,.1f} ms")
        ax.set_title("\n".join(textwrap.wrap(f"{run.label}; {run.frames:,} frames kept per run", 48)), fontsize=9)
        ax.set_xlabel("run, in the order timed")
        ax.legend(fontsize=8, loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("CPU time of the run (ms)")
    top = max(s.cpu for run in (trap, control) for s in run.samples) * 1e3
    axes[0].set_ylim(0, top * 1.5)  # headroom for the legends above the points
    fig.suptitle(f"The same benchmark, run after run, each side in a fresh process (Python {trap.python})", fontsize=10)
    return fig


def runs_strip(result: BimodalResult, *, title: str = "") -> Figure:
    """Throughput of each run (k messages/s) per configuration; red diamonds had a full collection inside."""
    labels = [m.label for m in result.measurements]
    fig = Figure(figsize=(9.5, 4.2), layout="constrained")
    ax = fig.add_subplot()
    labelled = False
    for x, m in enumerate(result.measurements):
        runs = result.runs.get(m.label, [])
        plain = [r.rate / 1e3 for r in runs if not r.full_collections]
        full = [r.rate / 1e3 for r in runs if r.full_collections]
        jitter = [x + 0.06 * ((i % 5) - 2) for i in range(len(runs))]
        ax.scatter(jitter[:len(plain)], plain, s=28, color="#1565c0", alpha=0.8, zorder=3,
                   label="run" if x == 0 else None)
        ax.scatter(jitter[len(plain):], full, s=46, marker="D", color="#c62828", zorder=4,
                   label="run with a full collection inside" if full and not labelled else None)
        labelled = labelled or bool(full)
        median = m.rate / 1e3
        ax.hlines(median, x - 0.3, x + 0.3, color="#212121", linewidth=2, zorder=2)
        ax.annotate(f"median {median:,.0f}k\nspread {m.spread:.0%}", xy=(x + 0.32, median), fontsize=8, va="center")
    ax.set_xticks(range(len(labels)), ["\n".join(textwrap.wrap(label, 18)) for label in labels], fontsize=8)
    ax.set_xlim(-0.5, len(labels) - 0.2)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("throughput of the run (thousand messages/s)")
    ax.set_title(title or "The same workload, run after run", fontsize=10)
    ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def before_after(first: Measurement, second: Measurement, *, unit: str = "messages/s", title: str = "") -> Figure:
    """Each sample of two measurements as a rate (``ops_per_call / sample``), side by side, medians marked."""
    fig = Figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    for x, m in enumerate((first, second)):
        rates = [m.ops_per_call / s / 1e3 for s in m.samples]
        ax.scatter([x + 0.05 * ((i % 5) - 2) for i in range(len(rates))], rates, s=28, color=("#1565c0", "#ef6c00")[x], zorder=3)
        ax.hlines(m.rate / 1e3, x - 0.25, x + 0.25, color="#212121", linewidth=2)
        ax.annotate(f"median {m.rate / 1e3:,.1f}k", xy=(x + 0.27, m.rate / 1e3), fontsize=8, va="center")
    ax.set_xticks([0, 1], ["\n".join(textwrap.wrap(m.label, 28)) for m in (first, second)], fontsize=8)
    ax.set_xlim(-0.5, 1.8)
    ax.set_ylim(bottom=0)
    ax.set_ylabel(f"thousand {unit}")
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def single_vs_median_figure(result: SingleVsMedian) -> Figure:
    """Left: every single pass as a throughput; right: the median of each group of passes. Same axis."""
    m = result.measurement
    singles = [m.ops_per_call / s / 1e3 for s in m.samples]
    medians = [m.ops_per_call / s / 1e3 for s in result.group_medians]
    fig = Figure(figsize=(7.0, 3.4), layout="constrained")
    ax = fig.add_subplot()
    ax.scatter([0.05 * ((i % 5) - 2) for i in range(len(singles))], singles, s=28, color="#90a4ae", zorder=3)
    ax.scatter([1 + 0.05 * ((i % 3) - 1) for i in range(len(medians))], medians, s=46, color="#1565c0", zorder=3)
    for x, values, width in ((0, singles, result.single_range), (1, medians, result.median_range)):
        ax.vlines(x + 0.3, min(values), max(values), color="#212121", linewidth=1.5)
        ax.annotate(f"fastest to slowest:\n{width:.0%} of the median", xy=(x + 0.33, (min(values) + max(values)) / 2),
                    fontsize=8, va="center")
    ax.set_xticks([0, 1], [f"{len(singles)} single passes", f"medians of {result.group} passes"], fontsize=9)
    ax.set_xlim(-0.4, 2.0)
    ax.set_ylim(bottom=0)
    ax.set_ylabel("thousand messages/s")
    ax.set_title("What one run could have reported, against a median of several", fontsize=10)
    ax.grid(True, axis="y", alpha=0.3)
    return fig
