"""Run-to-run pictures for chapter 03: the bimodal trap run by run, every run of every configuration, a before/after pair.

* ``trap_runs``: the trap's runs in order, CPU time of each as a bar split into
  the benchmark's own work and the collections inside the run (red when a full
  one was among them); the control (collector off) beside it on the same axis.
* ``kept_frames_figure``: CPU time per run and minor page faults per run, the
  engine's frames discarded or kept (collector off).
* ``handoff_figure``: messages handed between two threads, per consumer and
  core setting: throughput and the median wait, on log axes.
* ``runs_strip``: one column per configuration, one dot per run (its throughput),
  the median as a bar across the column; a run during which a full collection
  happened is drawn as a red diamond, so the reader can see which slow runs the
  collector explains and which it does not.
* ``before_after``: two measurements' samples side by side (alone against
  beside a CPU hog), same layout.
* ``single_vs_median_figure``: single passes against medians of groups of them.
* ``method_figure``: how a comparison is made and read: one comparison's rounds as
  per-round ratios, and its interval placed among the four verdict words.
"""

from __future__ import annotations

import statistics
import textwrap

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from edumatcher.kit import Comparison, Measurement

from .bimodal import BimodalResult, TrapRun
from .handoff import KINDS, Handoff
from .kept_frames import KeptFrames
from .pitfalls import SingleVsMedian

__all__ = ["trap_runs", "kept_frames_figure", "handoff_figure", "runs_strip", "before_after", "single_vs_median_figure",
           "method_figure", "VERDICT_EXAMPLES"]


def trap_runs(trap: TrapRun, control: TrapRun) -> Figure:
    """Two panels on one y axis: each run's CPU time (ms) as a bar, in order; the trap left, the control right.

    Each bar is split in two: the benchmark's own work (blue) and the CPU time
    of the collections inside the run (on top: red when a full collection was
    among them, grey when only young ones ran). A legend entry is made only for
    what is drawn, so a panel without a full collection shows no red entry.
    """
    fig = Figure(figsize=(9.5, 3.9), layout="constrained")
    axes = fig.subplots(1, 2, sharey=True)
    for ax, run in zip(axes, (trap, control), strict=True):
        xs = [s.index for s in run.samples]
        own = [max(s.cpu_outside_gc, 0.0) * 1e3 for s in run.samples]
        ax.bar(xs, own, width=0.8, color="#1565c0", label="the benchmark's own work")
        for full, color, label in ((True, "#c62828", "collections inside, a full one among them"),
                                   (False, "#9e9e9e", "collections inside, young ones only")):
            picked = [(s.index, o, s.gc_seconds * 1e3) for s, o in zip(run.samples, own, strict=True)
                      if s.full == full and s.gc_seconds > 0]
            if picked:
                ax.bar([i for i, _, _ in picked], [g for _, _, g in picked], width=0.8,
                       bottom=[o for _, o, _ in picked], color=color, label=label)
        median = run.measurement().median * 1e3
        ax.axhline(median, color="#212121", linewidth=1, linestyle="--", label=f"median of all runs {median:,.1f} ms")
        ax.set_title("\n".join(textwrap.wrap(f"{run.label}; {run.frames:,} frames kept per run", 48)), fontsize=9)
        ax.set_xlabel("run, in the order timed")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.legend(fontsize=8, loc="upper right")
        ax.grid(True, axis="y", alpha=0.3)
    axes[0].set_ylabel("CPU time of the run (ms)")
    top = max(s.cpu for run in (trap, control) for s in run.samples) * 1e3
    axes[0].set_ylim(0, top * 1.6)  # headroom for the legends above the bars
    fig.suptitle(f"The same benchmark, run after run, each side in a fresh process (Python {trap.python})", fontsize=10)
    return fig


def kept_frames_figure(result: dict[str, KeptFrames]) -> Figure:
    """Left: CPU time of each run (ms) per sink. Right: minor page faults of each run per sink.

    One dot per run, the median marked and labelled. The right panel is the
    verdict's measure: memory the process touched for the first time. Where the
    platform cannot count page faults it says so instead.
    """
    fig = Figure(figsize=(9.5, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    modes = list(result)
    colors = {"discard": "#1565c0", "keep": "#c62828"}
    panels = ((left, [[c * 1e3 for c in result[m].cpu] for m in modes], "{:,.1f} ms"),
              (right, [list(result[m].faults) for m in modes], "{:,.0f}"))
    for ax, values, label in panels:
        if any(v < 0 for vs in values for v in vs):
            ax.text(0.5, 0.5, "page faults are not counted on this platform", ha="center", va="center",
                    transform=ax.transAxes)
            continue
        for x, (mode, vs) in enumerate(zip(modes, values, strict=True)):
            ax.scatter([x + 0.05 * ((i % 5) - 2) for i in range(len(vs))], vs, s=24,
                       color=colors.get(mode, "#616161"), zorder=3)
            middle = statistics.median(vs)
            ax.hlines(middle, x - 0.25, x + 0.25, color="#212121", linewidth=2)
            ax.annotate(label.format(middle), xy=(x + 0.27, middle), fontsize=8, va="center")
        ax.set_xticks(range(len(modes)), [f"frames: {m}" for m in modes], fontsize=8)
        ax.set_xlim(-0.5, len(modes) - 0.3)
        ax.set_ylim(bottom=0, top=max(max(vs) for vs in values) * 1.15 or 1)
        ax.grid(True, axis="y", alpha=0.3)
    messages = result[modes[0]].messages
    left.set_ylabel(f"CPU time of a run of {messages:,} messages (ms)")
    left.set_title("CPU time of each run", fontsize=9)
    right.set_ylabel(f"minor page faults in a run of {messages:,} messages")
    right.set_title("Memory touched for the first time, per run", fontsize=9)
    python = result[modes[0]].python
    fig.suptitle(f"Keeping every frame, collector off: two sinks in one fresh process, rounds interleaved "
                 f"(Python {python}); bar = median", fontsize=10)
    return fig


def handoff_figure(result: dict[str, Handoff]) -> Figure:
    """Left: throughput (messages/s) per consumer, one bar per core setting. Right: median wait (µs). Log axes.

    Each bar is the median over runs; the thin line on it spans the fastest to
    the slowest run, so the spread is drawn with the figure.
    """
    fig = Figure(figsize=(9.5, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    settings = list(result)
    width = 0.8 / max(len(settings), 1)
    colors = ["#1565c0", "#ef6c00", "#6a1b9a"]
    for j, setting in enumerate(settings):
        h = result[setting]
        xs = [i + (j - (len(settings) - 1) / 2) * width for i in range(len(KINDS))]
        rates = [1 / h.seconds(k).median for k in KINDS]
        left.bar(xs, rates, width=width * 0.95, color=colors[j % 3], label=setting)
        left.vlines(xs, [1 / h.seconds(k).max for k in KINDS], [1 / h.seconds(k).min for k in KINDS], color="#212121")
        waits = [h.median_wait(k) for k in KINDS]
        right.bar(xs, [w.median * 1e6 for w in waits], width=width * 0.95, color=colors[j % 3], label=setting)
        right.vlines(xs, [w.min * 1e6 for w in waits], [w.max * 1e6 for w in waits], color="#212121")
    for ax, label in ((left, "throughput (messages/s)"), (right, "median wait of a message (µs)")):
        ax.set_yscale("log")
        ax.set_xticks(range(len(KINDS)), list(KINDS), fontsize=8)
        ax.set_ylabel(label)
        ax.grid(True, axis="y", alpha=0.3, which="both")
        ax.legend(fontsize=8, loc="best")
    left.set_title("Higher is better", fontsize=9)
    right.set_title("Lower is better (put to get, queueing included)", fontsize=9)
    first = result[settings[0]]
    fig.suptitle(f"A producer thread hands payloads to a consumer thread running Engine.handle (Python {first.python}, "
                 f"GIL {'on' if first.gil else 'off'})", fontsize=10)
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


VERDICT_EXAMPLES: tuple[tuple[str, float, float], ...] = (
    ("faster", 0.78, 0.86),
    ("same", 0.975, 1.03),
    ("undetermined", 0.97, 1.09),
    ("slower", 1.12, 1.22),
)
"""Drawn, not measured: one example interval (low, high) per verdict word, for ``method_figure``'s key."""


def method_figure(comparison: Comparison) -> Figure:
    """The course's comparison method, drawn from one real comparison (issue 22: the harness's picture).

    Left: each round's ratio (first side's sample / second's, the two taken back to
    back in a random order), in round order, with the ratio of the medians as a line
    and the negligible band shaded: the scatter is the noise the interval summarises.
    Right: the negligible band on a ratio axis, the drawn example interval of each
    verdict word (grey, labelled "example") and this comparison's measured interval
    (blue), so the reader sees why the words fall as they do. O(rounds).
    """
    a, b = comparison.a.samples, comparison.b.samples
    ratios = [x / y for x, y in zip(a, b, strict=True)] if comparison.paired else []
    band = (1 - comparison.negligible, 1 + comparison.negligible)
    fig = Figure(figsize=(11.0, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.1, 1]})
    for ax in (left, right):
        ax.axhspan(*band, color="#cfd8dc", alpha=0.6, zorder=0) if ax is left else ax.axvspan(*band, color="#cfd8dc",
                                                                                              alpha=0.6, zorder=0)
    if ratios:
        left.scatter(range(1, len(ratios) + 1), ratios, s=14, color="#546e7a", zorder=3, label="one round: a / b")
    left.axhline(comparison.ratio, color="#1565c0", linewidth=1.6, zorder=4,
                 label=f"ratio of the medians: {comparison.ratio:.2f}x")
    left.axhline(1.0, color="#212121", linewidth=0.8, linestyle=":", zorder=2)
    left.set_xlabel("round (one sample of a and one of b, in random order)")
    left.xaxis.set_major_locator(MaxNLocator(integer=True))  # rounds are whole numbers
    left.set_ylabel("time of a ÷ time of b")
    left.set_title(f"{comparison.rounds} interleaved rounds", fontsize=10)
    left.grid(True, alpha=0.3)
    left.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=8, frameon=False)
    rows = [(f"{word} (example)", lo, hi, "#90a4ae") for word, lo, hi in VERDICT_EXAMPLES]
    rows.append((f"this comparison: {comparison.outcome}", *comparison.ci, "#1565c0"))
    for y, (label, lo, hi, colour) in enumerate(reversed(rows)):
        right.plot([lo, hi], [y, y], color=colour, linewidth=6, solid_capstyle="butt", zorder=3)
        right.annotate(label, xy=(hi, y), xytext=(6, 0), textcoords="offset points", va="center", fontsize=8.5)
    lows = [r[1] for r in rows] + [band[0]]
    highs = [r[2] for r in rows] + [band[1]]
    right.set_xscale("log")
    right.set_xlim(min(lows) / 1.08, max(highs) * 1.9)
    right.axvline(1.0, color="#212121", linewidth=0.8, linestyle=":")
    right.set_yticks([])
    right.set_ylim(-0.7, len(rows) - 0.3)
    right.set_xlabel("ratio a / b and its 95 % interval (log scale)")
    right.set_title("The interval decides the word (grey: the ±5 % negligible band)", fontsize=10)
    low, high = right.get_xlim()
    ticks = [t for t in (0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20) if low <= t <= high]
    right.set_xticks(ticks, [f"{t:g}x" for t in ticks])
    right.xaxis.set_minor_formatter(FuncFormatter(lambda v, _: ""))
    fig.suptitle(f"How two things are compared: {comparison.a.label} (a) against {comparison.b.label} (b)", fontsize=10.5)
    return fig
