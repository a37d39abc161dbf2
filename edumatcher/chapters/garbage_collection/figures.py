"""Pictures of the cyclic collector: pause against live objects, memory over an opening, tails with and without the policy.

* ``pause_curve``: a full collection's pause (median, min-max bar) against the
  number of objects the collector tracks, with the least-squares line and its fit.
* ``ramp_memory``: bytes held while an opening ramp fills the book, with the
  start-up and the end of the ramp marked and the objects a freeze would take at each.
* ``tail_histograms``: two service-time histograms, default collector above and
  ``GcPolicy`` below, on one log time axis, with p99, p99 ex GC and max marked.
* ``rush_timeline``: the opening rush, message by message (service time), a panel
  per contender, with every collection drawn at the message it ran in, coloured
  by generation, and the messages that grew the book's dicts marked.
* ``tail_timeline``: response time over an open-loop stream as p50, p99 and max
  per span of time (``binned_percentiles``), default collector above, policy below.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from edumatcher.metrics import nearest_rank

from .gc_pauses import PauseFit, PauseRow, pause_fit
from .gc_tail import DictResize, TailRun
from .opening_memory import RampProfile

__all__ = ["pause_curve", "ramp_memory", "tail_histograms", "rush_timeline", "tail_timeline", "binned_percentiles",
           "TIMELINE_BINS"]

_GENERATION_COLOURS = ("#ef6c00", "#6a1b9a", "#c62828")
_MARKED_RESIZE_ENTRIES = 1_000


def pause_curve(rows: Sequence[PauseRow], *, fit: PauseFit | None = None, title: str = "") -> Figure:
    """Full-collection pause (ms) against tracked objects: medians with min-max bars, and the fitted line.

    The bars are the clock the fit used (CPU time when the rows have it); wall
    time is drawn beside as hollow markers. ``fit`` defaults to
    ``pause_fit(rows)`` when the rows hold at least three sizes; the legend
    carries its slope, confidence interval and r².
    """
    if not rows:
        raise ValueError("pause_curve needs at least one row")
    has_cpu = all(r.cpu is not None for r in rows)
    if fit is None and len({r.tracked for r in rows}) >= 3:
        fit = pause_fit(rows, clock="cpu" if has_cpu else "wall")
    use_cpu = has_cpu and (fit is None or fit.clock == "cpu")
    shown = [r.cpu if use_cpu else r.full for r in rows]
    xs = [r.tracked for r in rows]
    med = [m.median * 1e3 for m in shown]  # type: ignore[union-attr]
    low = [(m.median - m.min) * 1e3 for m in shown]  # type: ignore[union-attr]
    high = [(m.max - m.median) * 1e3 for m in shown]  # type: ignore[union-attr]
    fig = Figure(figsize=(8.5, 3.8), layout="constrained")
    ax = fig.add_subplot()
    what = "CPU time" if use_cpu else "wall time"
    ax.errorbar(xs, med, yerr=[low, high], marker="o", linestyle="none", color="#ad1457", capsize=3, zorder=3,
                label=f"{what}: median of {rows[0].full.repeat} collections, bar min to max")
    top = max(m + h for m, h in zip(med, high, strict=True))
    if use_cpu:
        wall = [r.full.median * 1e3 for r in rows]
        ax.plot(xs, wall, marker="o", markerfacecolor="none", linestyle="none", color="#78909c", zorder=2,
                label="wall time, median (adds time slices other processes took)")
        top = max(top, max(wall))
    if fit is not None:
        slope, lo, hi = fit.per_100k_ms
        line_x = [0, max(xs) * 1.1]
        ax.plot(line_x, [(fit.intercept + fit.slope * x) * 1e3 for x in line_x], color="#455a64", linewidth=1.3,
                label=f"least-squares fit: {slope:+.1f} ms per 100k objects\n"
                      f"({fit.confidence * 100:.0f} % CI {lo:.1f} to {hi:.1f}), r² = {fit.r2:.2f}")
    unit = "resting" if rows[0].objects == "book" else "objects"
    for r, x, y in zip(rows, xs, med, strict=True):
        ax.annotate(f"{r.resting:,} {unit}" if r.resting else "nothing kept", xy=(x, y), xytext=(6, -12),
                    textcoords="offset points", fontsize=8)
    ax.set_xlim(0, max(xs) * 1.15)
    ax.set_ylim(0, top * 1.15)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("objects tracked by the collector in the measuring process")
    ax.set_ylabel("full collection pause (ms)")
    ax.set_title(title or "A full collection walks every tracked object (each size in a fresh process)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, alpha=0.3)
    return fig


def ramp_memory(profile: RampProfile) -> Figure:
    """Megabytes held (tracemalloc) against operations fed, with the freeze points and their object counts."""
    fig = Figure(figsize=(8.5, 3.8), layout="constrained")
    ax = fig.add_subplot()
    mb = [b / 2**20 for b in profile.traced_bytes]
    ax.plot(profile.ops, mb, color="#00695c", linewidth=1.8)
    ax.axvspan(0, profile.ramp_end, color="#ffe0b2", alpha=0.5, label="the opening ramp")
    top = max(mb) if mb else 1.0
    counts = profile.freeze_counts
    marks = (
        (0, "start-up", "#9e9e9e"),
        (profile.ramp_end, "end of the ramp", "#c62828"),
    )
    for x, name, colour in marks:
        ax.axvline(x, color=colour, linestyle="--", linewidth=1.4)
        ax.annotate(f"freeze at {name}:\n{counts.get(name, 0):,} objects", xy=(x, top * 0.55), xytext=(6, 0),
                    textcoords="offset points", fontsize=8, color=colour,
                    bbox={"facecolor": "white", "alpha": 0.8, "edgecolor": "none", "pad": 1})
    ax.set_xlim(0, profile.ops[-1] if profile.ops else 1)
    ax.set_ylim(0, top * 1.12)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_xlabel("operations fed to the book")
    ax.set_ylabel("MiB allocated and still held")
    ax.set_title(f"Memory over an opening: {profile.ramp_end:,} resting orders, then a steady stream", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    return fig


def _log_edges(lo: float, hi: float, bins: int) -> list[float]:
    lo, hi = math.log10(lo), math.log10(hi)
    if hi - lo < 1e-9:
        lo, hi = lo - 0.05, hi + 0.05
    return [10 ** (lo + (hi - lo) * i / bins) for i in range(bins + 1)]


def tail_histograms(default: TailRun, policy: TailRun, *, bins: int = 60) -> Figure:
    """Two histograms of per-message service time (µs, log axes), the default collector above and the policy below."""
    everything = [max(x, 1) / 1e3 for run in (default, policy) for x in run.latencies_ns]
    if not everything:
        raise ValueError("tail_histograms needs latencies")
    edges = _log_edges(min(everything), max(everything), bins)
    fig = Figure(figsize=(8.5, 5.2), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True)
    for ax, run, colour in zip(axes, (default, policy), ("#8d6e63", "#1565c0"), strict=True):
        us = [max(x, 1) / 1e3 for x in run.latencies_ns]
        ax.hist(us, bins=edges, color=colour, alpha=0.75)
        ax.set_xscale("log")
        ax.set_yscale("log")
        s = run.summary()
        for key, style, shade in (("p99", "--", "#ef6c00"), ("p99 ex GC", ":", "#2e7d32"), ("max", "--", "#c62828")):
            ax.axvline(s[key], color=shade, linestyle=style, linewidth=1.5, label=f"service {key} {s[key]:,.1f} µs")
        g0, g1, g2 = run.collections
        ax.set_title(f"{run.label}: collections while messages were handled g0/g1/g2 = {g0}/{g1}/{g2}", fontsize=9)
        ax.set_ylabel("messages (log)")
        ax.legend(fontsize=8, loc="upper right")
        ax.grid(True, which="major", alpha=0.3)
    axes[-1].set_xlabel("service time per message: the handle() call (µs, log scale)")
    return fig


def rush_timeline(default: TailRun, policy: TailRun, resizes: Sequence[DictResize] = ()) -> Figure:
    """Service time (µs, log axis) of every rush message against its index, a panel per run. O(n log n).

    Each collection of the rush is drawn as a marker at the message it ended in,
    at the height of its own pause, coloured by generation (the legend counts
    them and gives the longest); messages that grew the book's dicts
    (``resizes`` with ``phase="rush"``) are dotted vertical lines.
    """
    runs = [t for t in (default, policy) if t.rush is not None and t.rush.completed_ns]
    if len(runs) != 2:
        raise ValueError("rush_timeline needs two TailRuns with a rush record")
    fig = Figure(figsize=(8.5, 5.6), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    # Only tables big enough to matter: the many early growths of small tables would hide the axis.
    grown = sorted({r.message for r in resizes if r.phase == "rush" and r.entries >= _MARKED_RESIZE_ENTRIES})
    for ax, tail in zip(axes, runs, strict=True):
        rush = tail.rush
        assert rush is not None
        service = rush.service_ns
        ax.scatter(range(len(service)), [max(x, 1) / 1e3 for x in service], s=2, color="#b0bec5",
                   label="service time of each message", rasterized=True)
        completed = rush.completed_ns
        for g in (0, 1, 2):
            hits = [(min(bisect.bisect_left(completed, end), len(completed) - 1), d) for gen, d, end in tail.rush_collections if gen == g]
            if hits:
                longest = max(d for _, d in hits)
                ax.scatter([i for i, _ in hits], [max(d, 1) / 1e3 for _, d in hits], s=28, marker="D",
                           color=_GENERATION_COLOURS[g], edgecolor="black", linewidth=0.4, zorder=3,
                           label=f"generation-{g} collection: {len(hits):,}, longest {longest / 1e6:,.2f} ms")
        for k, i in enumerate(grown):
            ax.axvline(i, color="#1565c0", linestyle=":", linewidth=1.2,
                       label=f"a dict of {_MARKED_RESIZE_ENTRIES:,}+ entries grew its table" if k == 0 else None)
        ax.set_yscale("log")
        ax.set_ylim(top=max(max(service), max((d for _, d, _ in tail.rush_collections), default=1)) / 1e3 * 60)  # room for the legend
        ax.set_ylabel("µs (log)")
        ax.set_title(f"{tail.label}: the opening rush, {len(service):,} resting orders handled back to back", fontsize=9)
        ax.legend(fontsize=8, loc="upper left", markerscale=1.2, ncol=2)
        ax.grid(True, which="major", alpha=0.3)
    axes[-1].set_xlabel("message of the rush")
    return fig


TIMELINE_BINS = 70
"""How many time bins ``tail_timeline`` cuts a stream into (fewer when there are few messages)."""

_TIMELINE_MARKS = (("p50", 50.0, "#2e7d32", "-"), ("p99", 99.0, "#ef6c00", "-"), ("max", 100.0, "#c62828", ":"))
_MARK_LABELS = {"p50": "median (p50)", "p99": "p99", "max": "slowest (max)"}


def binned_percentiles(times_ns: Sequence[int], values_ns: Sequence[int], bins: int = TIMELINE_BINS,
                       ) -> tuple[list[float], dict[str, list[float]]]:
    """Cut ``times_ns`` into ``bins`` equal spans; per span, the p50, p99 and max of ``values_ns`` (nearest rank). O(n log n).

    Returns each span's centre (ns) and, for each of "p50", "p99" and "max", one
    value per span (``nan`` for an empty span, so a line breaks there rather than
    inventing a value). At least 20 messages per span on average: fewer messages
    give fewer spans.

    >>> centres, marks = binned_percentiles(list(range(40)), list(range(40)), bins=2)
    >>> marks["p50"], marks["max"]
    ([9, 29], [19, 39])
    """
    if not times_ns or len(times_ns) != len(values_ns):
        raise ValueError("binned_percentiles needs as many values as times, at least one")
    bins = max(1, min(bins, len(times_ns) // 20))
    lo, hi = min(times_ns), max(times_ns)
    width = (hi - lo) / bins or 1
    groups: list[list[int]] = [[] for _ in range(bins)]
    for t, v in zip(times_ns, values_ns, strict=True):
        groups[min(int((t - lo) / width), bins - 1)].append(v)
    centres = [lo + width * (i + 0.5) for i in range(bins)]
    marks: dict[str, list[float]] = {name: [] for name, *_ in _TIMELINE_MARKS}
    for group in groups:
        group.sort()
        for name, p, *_ in _TIMELINE_MARKS:
            marks[name].append(nearest_rank(group, p) if group else math.nan)
    return centres, marks


def tail_timeline(default: TailRun, policy: TailRun, *, bins: int = TIMELINE_BINS) -> Figure:
    """Response time (ms, log) over the stream, as p50, p99 and max per time span; default above, policy below.

    A dot per message would be a solid cloud; each of ``bins`` spans of intended
    send time gives its median, its 99th percentile and its slowest message
    instead (``binned_percentiles``), with the band between median and p99
    shaded. The default collector's full collections inside a message and the
    policy's freeze are shaded, each labelled with its length. O(n log n).
    """
    runs = [t for t in (default, policy) if t.run is not None and t.run.completed_ns]
    if len(runs) != 2:
        raise ValueError("tail_timeline needs two runs with open-loop records")
    fig = Figure(figsize=(8.5, 5.8), layout="constrained")
    axes = fig.subplots(2, 1, sharex=True, sharey=True)
    span_ms = 0.0
    for ax, t in zip(axes, runs, strict=True):
        run = t.run
        assert run is not None
        centres, marks = binned_percentiles(run.intended_ns, run.response_ns, bins)
        xs = [c / 1e9 for c in centres]
        span_ms = (centres[1] - centres[0]) / 1e6 if len(centres) > 1 else (max(run.intended_ns) - min(run.intended_ns)) / 1e6
        ms = {name: [max(v, 1_000) / 1e6 for v in values] for name, values in marks.items()}
        ax.fill_between(xs, ms["p50"], ms["p99"], step="mid", color="#ffe0b2", alpha=0.7, linewidth=0)
        for name, _, colour, style in _TIMELINE_MARKS:
            ax.step(xs, ms[name], where="mid", color=colour, linestyle=style, linewidth=1.5, label=_MARK_LABELS[name])
        for k, (a, b) in enumerate(t.full_on_path()):
            ax.axvspan(a / 1e9, b / 1e9 + 0.02, color="#6a1b9a", alpha=0.3,
                       label=f"full collection in a message ({(b - a) / 1e6:,.0f} ms)" if k == 0 else None)
        if t.freeze_window is not None:
            a, b = t.freeze_window
            ax.axvspan(a / 1e9, b / 1e9 + 0.02, color="#1565c0", alpha=0.3, label=f"freeze ({(b - a) / 1e6:,.0f} ms)")
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        ax.set_ylabel("response time (ms, log scale)")
        ax.set_title(f"{t.label}: {len(run.completed_ns):,} messages at {run.offered_rate:,.0f}/s, "
                     f"max {max(run.response_ns) / 1e6:,.0f} ms", fontsize=9)
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.grid(True, which="major", alpha=0.3)
    axes[-1].set_xlabel("intended send time (s from the start of the stream)")
    fig.suptitle(f"Response time over the stream: median, p99 and slowest message in each {span_ms:,.0f} ms of it",
                 fontsize=10)
    return fig
