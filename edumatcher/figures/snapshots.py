"""Snapshot costs against book size: one snapshot, and the message path under both publication policies.

Left panel: the time to build one snapshot, against the number of price levels
in the book. Right panel: the time per message of ``Engine.run`` when a snapshot
follows every change and when snapshots are throttled, against the same sizes.
Each point is a median; the bars run from the fastest to the slowest sample.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from ..experiments.snapshots import PublicationCost, SnapshotCost
from ..measure import Measurement

__all__ = ["snapshot_cost_figure"]


def _us(m: Measurement) -> tuple[float, float, float]:
    """Median per operation and its distances to min and max, in µs."""
    per = m.ops_per_call
    med = m.median / per * 1e6
    return med, med - m.min / per * 1e6, m.max / per * 1e6 - med


def snapshot_cost_figure(snapshots: Sequence[SnapshotCost], publication: Sequence[PublicationCost]) -> Figure:
    """Two panels sharing the book-size axis: one snapshot's cost, and the cost per message under both policies."""
    if not snapshots or not publication:
        raise ValueError("snapshot_cost_figure needs at least one snapshot cost and one publication cost")
    fig = Figure(figsize=(10, 3.9), layout="constrained")
    left, right = fig.subplots(1, 2)
    xs = [s.levels for s in snapshots]
    meds, lows, highs = zip(*(_us(s.time) for s in snapshots), strict=True)
    left.errorbar(xs, meds, yerr=[lows, highs], marker="o", color="#6a1b9a", capsize=3)
    for s, y in zip(snapshots, meds, strict=True):
        left.annotate(f"{s.resting:,} orders", xy=(s.levels, y), xytext=(5, -12), textcoords="offset points", fontsize=8)
    left.set_xscale("log")
    left.set_xlabel("price levels in the book (log scale)")
    left.set_ylabel("µs per snapshot (median)")
    left.set_title("Building one snapshot", fontsize=10)
    left.grid(True, alpha=0.3)

    px = [p.levels for p in publication]
    for attr, label, colour in (("every_change", "snapshot after every change", "#c62828"),
                                ("throttled", "throttled: at most one per interval", "#1565c0")):
        meds, lows, highs = zip(*(_us(getattr(p, attr)) for p in publication), strict=True)
        right.errorbar(px, meds, yerr=[lows, highs], marker="o", color=colour, capsize=3, label=label)
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("price levels in the book (log scale)")
    right.set_ylabel("µs per message (median, log scale)")
    right.set_title("Engine.run over the same trades", fontsize=10)
    right.legend(fontsize=8, loc="upper left")
    right.grid(True, which="both", alpha=0.3)
    return fig
