"""The course's shared plotting: one colour scheme and the figures several chapters draw.

Each function returns a matplotlib ``Figure``. Cost bars (``cost_bars``, ``ratio_bars``, ``saving_bars``) colour a
comparison by its verdict; latency figures (``latency_histogram``, ``response_timeline``) mark p50, p99 and the
maximum; depth charts (``depth_chart``, ``queue_ladder``) draw a book's two sides. Colours are named once here
(``FASTER_B_COLOUR``, ``SLOWER_B_COLOUR``, ``UNDECIDED_COLOUR``, ``BID_COLOUR``, ``ASK_COLOUR``).

Bar charts of measured costs: medians with their min-max range, and savings side by side.

Three shapes the chapters on representation, construction and serialisation need:

* ``cost_bars``: one bar per ``Measurement`` (its median per operation), a whisker
  from its fastest to its slowest sample, so the reader sees the spread next to
  the difference; a ``Comparison`` gives two bars, a above b, and the ratio a/b
  with its confidence interval written beside the b bar. On a logarithmic axis a
  bar has no zero to start from, so its length would mean nothing: there each
  median is a dot with its whisker instead;
* ``ratio_bars``: one row per ``Comparison`` in two panels: both forms' times per
  operation (log axis), and the ratio a/b as a bar from 1 on a log axis with its
  95 % confidence interval, for pairs whose absolute costs and ratios differ by
  orders of magnitude;
* ``saving_bars``: one bar per technique, the time it saves per order, so a
  macro saving and a handful of micro ones can be compared at a glance.

Pictures of latency: the distribution of handling times, and response time over a run.

* ``latency_histogram``: a latency distribution is skewed: most messages take
  about the same time and a few take far longer (a collection, a big sweep). A
  histogram on a logarithmic time axis shows both the body and the tail in one
  picture; the p50, p99 and max lines say where "typical" ends and "unlucky" begins.
* ``response_timeline``: each message's response time (completion - intended
  send time) and service time against when it was due, one panel per open-loop
  run. A pause between messages shows as a spike in response time that falls off
  in a straight line while the queue drains, with no trace in service time.

Pictures of an order book: the depth chart, and the queue at each price level.

``depth_chart`` takes what ``OrderBook.depth()`` returns. ``queue_ladder`` takes
the resting orders themselves and draws each price level as a row of boxes in
time priority, so the heap key ``(±price, arrival_seq)`` can be read off the
picture: better price first (rows nearest the spread), then earlier arrival
(boxes nearest the centre line).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, LogLocator, NullLocator

from ..metrics import nearest_rank
from ..model import Order, Side
from ._compare import Comparison
from ._measurement import Measurement
from .open_loop import OpenLoopRun

__all__ = [
    "cost_bars", "ratio_bars", "saving_bars", "time_unit", "FASTER_B_COLOUR", "SLOWER_B_COLOUR", "UNDECIDED_COLOUR",
    "latency_histogram", "response_timeline", "depth_chart", "queue_ladder", "BID_COLOUR", "ASK_COLOUR",
]


FASTER_B_COLOUR = "#1565c0"
"""``ratio_bars``: a pair whose second form (b) is the cheaper one."""
SLOWER_B_COLOUR = "#ef6c00"
"""``ratio_bars``: a pair whose second form (b) is the dearer one."""
UNDECIDED_COLOUR = "#90a4ae"
"""``ratio_bars``: a pair the same to within the band, or undetermined."""


def time_unit(seconds: float) -> tuple[float, str]:
    """The scale and unit that show ``seconds`` with 1 to 3 digits before the point.

    >>> time_unit(2.5e-7), time_unit(3e-5)
    ((1000000000.0, 'ns'), (1000000.0, 'µs'))
    """
    magnitude = abs(seconds)
    if magnitude >= 1:
        return 1.0, "s"
    if magnitude >= 1e-3:
        return 1e3, "ms"
    if magnitude >= 1e-6:
        return 1e6, "µs"
    return 1e9, "ns"


def cost_bars(
    measurements: Sequence[Measurement | Comparison], *, title: str = "", per_op: bool = True, log: bool = False,
    colours: Sequence[str] | None = None, legend: Sequence[tuple[str, str]] = (),
) -> Figure:
    """Horizontal bars of each measurement's median, whiskers from min to max, first one at the top.

    Each item is a ``Measurement`` (one bar) or a ``Comparison`` (two bars, its
    ``a`` then its ``b``, with "a/b = ratio (95 % CI lo–hi)" written beside the ``b`` bar).
    ``colours`` gives one colour per bar, in the same order; ``legend`` is a list of
    ``(colour, meaning)`` drawn as a legend, so what a colour means is stated by the
    caller beside the colours it chose. ``per_op`` divides by ``ops_per_call`` (a pass
    over 1 000 messages shows per message). ``log`` uses a logarithmic axis, for
    costs that differ by orders of magnitude, and draws each median as a dot (a bar
    on a log axis starts nowhere, so its length would mislead); to compare pairs of
    very different sizes, ``ratio_bars`` is usually the clearer figure.
    """
    if not measurements:
        raise ValueError("cost_bars needs at least one measurement")
    flat: list[Measurement] = []
    notes: dict[int, str] = {}  # index in flat of a comparison's b bar -> the ratio written beside it
    for item in measurements:
        if isinstance(item, Comparison):
            flat += [item.a, item.b]
            notes[len(flat) - 1] = f"a/b = {item.ratio:.2f} ({item.ci_text})"
        else:
            flat.append(item)
    ms = list(reversed(flat))
    ratio_at = {len(flat) - 1 - i: text for i, text in notes.items()}  # positions after reversing
    div = [m.ops_per_call if per_op else 1 for m in ms]
    scale, unit = time_unit(max(m.median / d for m, d in zip(ms, div, strict=True)))
    med = [m.median / d * scale for m, d in zip(ms, div, strict=True)]
    low = [(m.median - m.min) / d * scale for m, d in zip(ms, div, strict=True)]
    high = [(m.max - m.median) / d * scale for m, d in zip(ms, div, strict=True)]
    fig = Figure(figsize=(8.5, 0.42 * len(ms) + 1.3), layout="constrained")
    ax = fig.add_subplot()
    if colours is not None and len(colours) != len(ms):
        raise ValueError(f"colours gives {len(colours)} colours for {len(ms)} bars")
    palette = list(reversed(colours)) if colours else ["#1565c0"] * len(ms)
    labels = [m.label or f"#{i}" for i, m in enumerate(ms)]
    if log:
        ax.set_xscale("log")
        ax.errorbar(med, range(len(ms)), xerr=[low, high], fmt="none", ecolor="#37474f", elinewidth=1, capsize=3)
        ax.scatter(med, range(len(ms)), c=palette, s=40, zorder=3)
        ax.set_yticks(range(len(ms)), labels)
        ax.grid(axis="x", which="both", alpha=0.3)
    else:
        ax.barh(labels, med, xerr=[low, high], color=palette,
                alpha=0.8, capsize=3, error_kw={"elinewidth": 1, "ecolor": "#37474f"})
        ax.set_xlim(0, max(m + h for m, h in zip(med, high, strict=True)) * 1.2)
    for y, v in enumerate(med):
        text = f"{v:,.3g} {unit}" + (f"   {ratio_at[y]}" if y in ratio_at else "")
        ax.annotate(text, xy=(v, y), xytext=(4, 6), textcoords="offset points", fontsize=8)
    if legend:
        ax.legend(handles=[Patch(color=c, label=text) for c, text in legend], fontsize=8, loc="lower right")
    if log:
        ax.set_xlim(right=max(med) * 4)  # room for the labels right of the last dot
    scale_note = ", log scale" if log else ""
    ax.set_xlabel(f"median time per {'operation' if per_op else 'call'} ({unit}{scale_note}); "
                  "whisker: fastest to slowest sample")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig


def _three_figures(v: float) -> str:
    """A positive number with about three significant figures and no exponent: 1,075, 530, 63.7, 12.6, 1.52."""
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}" if v >= 10 else f"{v:.2f}"


def _ratio_ticks(ax: Axes, low: float, high: float) -> None:
    """A log ratio axis from ``low`` to ``high`` with ticks at 1, 2, 5 times powers of ten, written "2x"."""
    ax.set_xscale("log")
    ax.set_xlim(low, high)
    ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}x"))


def ratio_bars(comparisons: Sequence[Comparison], *, title: str = "") -> Figure:
    """Each pair in two panels sharing its row: both forms' times per operation, and the ratio of the first to the second.

    Left: each form's median time per operation on a log axis, the first form (a)
    a hollow circle and the second (b) a filled one, joined by a line, both times
    written at the end of the row. Right: the ratio a/b as a bar from 1 on a log
    axis (ticks 1x, 2x, 5x, 10x, ...), so a 2x pair and a 20x pair both read, the
    95 % confidence interval as the whisker, the "same" band shaded around 1. The
    bar's colour is the comparison's outcome (b cheaper, b dearer, or no difference
    shown); the legend, under the panels, names exactly the colours drawn. First
    pair at the top.
    """
    if not comparisons:
        raise ValueError("ratio_bars needs at least one comparison")
    items = list(reversed(comparisons))
    ys = list(range(len(items)))
    by_outcome = {"slower": FASTER_B_COLOUR, "faster": SLOWER_B_COLOUR}  # outcome words describe a against b
    colours = [by_outcome.get(c.outcome, UNDECIDED_COLOUR) for c in items]
    fig = Figure(figsize=(11, 0.5 * len(items) + 2.0), layout="constrained")
    times, ratios = fig.subplots(1, 2, sharey=True, width_ratios=(1, 1))

    per_op = [(c.a.per_op, c.b.per_op) for c in items]
    everything = [t for pair in per_op for t in pair]
    scale, unit = time_unit(min(everything))
    for y, (a, b) in zip(ys, per_op, strict=True):
        times.plot([a * scale, b * scale], [y, y], color="#b0bec5", linewidth=2, zorder=1)
        times.annotate(f"{_three_figures(a * scale)} → {_three_figures(b * scale)} {unit}", xy=(max(a, b) * scale, y), xytext=(7, 0),
                       textcoords="offset points", va="center", fontsize=8)
    times.scatter([a * scale for a, _ in per_op], ys, s=36, facecolor="white", edgecolor="#37474f", linewidth=1.3,
                  zorder=3, label="first form (a)")
    times.scatter([b * scale for _, b in per_op], ys, s=36, color="#37474f", zorder=3, label="second form (b)")
    times.set_xscale("log")
    times.set_xlim(min(everything) * scale / 1.6, max(everything) * scale * 14)  # room for the times written
    times.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))
    times.set_yticks(ys, [f"{c.a.label}\nvs {c.b.label}" for c in items])
    times.tick_params(axis="y", labelsize=8)
    times.set_xlabel(f"median time per operation ({unit}, log scale)")
    times.set_title("Each form's time", fontsize=10)
    times.grid(True, axis="x", which="major", alpha=0.3)

    lows = [c.ratio - c.ci[0] for c in items]
    highs = [c.ci[1] - c.ratio for c in items]
    ratios.barh(ys, [c.ratio - 1 for c in items], left=1, height=0.6, color=colours, alpha=0.85, xerr=[lows, highs],
                capsize=3, error_kw={"elinewidth": 1, "ecolor": "#37474f"})
    band = items[0].negligible
    ratios.axvspan(1 / (1 + band), 1 + band, color="#cfd8dc", alpha=0.6, zorder=0)
    ratios.axvline(1, color="#37474f", linewidth=0.8)
    for y, c in enumerate(items):
        ratios.annotate(f"{c.ratio:.2f}x ({c.ci_text})", xy=(max(c.ci[1], 1.0), y), xytext=(4, 0),
                        textcoords="offset points", va="center", fontsize=8)
    low = min(min(c.ci[0] for c in items), 1 / (1 + band)) / 1.3
    high = max(max(c.ci[1] for c in items), 1 + band) * 6  # room for the ratio written beside the bar
    _ratio_ticks(ratios, low, high)
    ratios.set_xlabel("first form's time ÷ second's (log scale; whisker: 95 % CI)")
    ratios.set_title("The ratio: first form's time ÷ second's", fontsize=10)
    ratios.grid(True, axis="x", which="major", alpha=0.3)

    shown = dict.fromkeys(reversed(colours))  # legend in reading order, top pair first
    meaning = {FASTER_B_COLOUR: "second form (b) is cheaper", SLOWER_B_COLOUR: "second form (b) is dearer",
               UNDECIDED_COLOUR: "same, or undetermined"}
    handles = (times.get_legend_handles_labels()[0] + [Patch(color=c, label=meaning[c]) for c in shown]
               + [Patch(color="#cfd8dc", label=f"'same' band (±{band * 100:.0f} %)")])
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncols=len(handles), frameon=False)
    fig.suptitle(title or "Pairs of forms: what each form costs, and the first's time as a multiple of the second's",
                 fontsize=11)
    return fig


def saving_bars(savings: Sequence[tuple[str, float]], *, title: str = "", highlight: Sequence[str] = (),
                per: str = "order") -> Figure:
    """Bars of ``(label, seconds saved per <per>)``, largest first; labels in ``highlight`` drawn dark.

    A negative saving (the "optimisation" made things slower here) is drawn to the
    left of zero, so it cannot be mistaken for a gain.
    """
    if not savings:
        raise ValueError("saving_bars needs at least one saving")
    items = sorted(savings, key=lambda s: s[1])
    scale, unit = time_unit(max(abs(s) for _, s in items) or 1e-9)
    values = [s * scale for _, s in items]
    fig = Figure(figsize=(8.5, 0.42 * len(items) + 1.3), layout="constrained")
    ax = fig.add_subplot()
    colours = ["#1565c0" if label in highlight else "#90caf9" for label, _ in items]
    ax.barh([label for label, _ in items], values, color=colours)
    ax.axvline(0, color="#37474f", linewidth=0.8)
    for y, v in enumerate(values):
        ax.annotate(f"{v:,.3g} {unit}", xy=(v, y), xytext=(4 if v >= 0 else -4, 0), textcoords="offset points",
                    va="center", ha="left" if v >= 0 else "right", fontsize=8)
    top = max(values + [0.0])
    ax.set_xlim(min(values + [0.0]) * 1.3, top * 1.25 if top > 0 else 1)
    ax.set_xlabel(f"time saved per {per} ({unit}, median of each side)")
    ax.tick_params(axis="y", labelsize=9)
    ax.set_title(title)
    return fig


_MARKS = (("p50", 50.0, "#2e7d32"), ("p99", 99.0, "#ef6c00"), ("max", 100.0, "#c62828"))


def latency_histogram(latencies_ns: Sequence[int], *, title: str = "", bins: int = 60, log_count: bool = True) -> Figure:
    """Histogram of ``latencies_ns`` on a log time axis (µs), with p50, p99 and max drawn as lines.

    ``log_count`` puts the counts on a log scale too, so a handful of slow
    messages stays visible beside thousands of fast ones. O(n log n).
    """
    if not latencies_ns:
        raise ValueError("latency_histogram needs at least one latency")
    xs = sorted(max(int(x), 1) for x in latencies_ns)
    us = [x / 1e3 for x in xs]
    lo, hi = math.log10(us[0]), math.log10(us[-1])
    if hi - lo < 1e-9:  # all equal: give the single bar some width around the value
        lo, hi = lo - 0.05, hi + 0.05
    edges = [10 ** (lo + (hi - lo) * i / bins) for i in range(bins + 1)]
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    ax.hist(us, bins=edges, color="#90a4ae", edgecolor="#607d8b", linewidth=0.4)
    ax.set_xscale("log")
    if log_count:
        ax.set_yscale("log")
    for name, p, colour in _MARKS:
        value = nearest_rank(xs, p) / 1e3
        ax.axvline(value, color=colour, linewidth=1.6, linestyle="--")
        ax.annotate(f"{name} {value:,.1f} µs", xy=(value, 1), xycoords=("data", "axes fraction"),
                    xytext=(3, -4), textcoords="offset points", va="top", fontsize=9, color=colour,
                    rotation=90, bbox={"facecolor": "white", "alpha": 0.75, "edgecolor": "none", "pad": 1})
    ax.set_xlabel("handling time per message (µs, log scale)")
    ax.set_ylabel("messages" + (" (log scale)" if log_count else ""))
    ax.set_title(title or f"Per-message handling latency, {len(xs):,} messages")
    ax.grid(True, which="major", axis="both", alpha=0.3)
    return fig


def response_timeline(
    runs: Sequence[OpenLoopRun], *, windows: Sequence[tuple[int, int] | None] = (), window_label: str = "freeze",
) -> Figure:
    """Response and service time (µs, log axis) of every message against its intended send time (ms), a panel per run.

    ``windows``: for each run, an optional ``(start_ns, end_ns)`` span to shade
    (e.g. the policy's freeze), labelled ``window_label``. O(n).
    """
    if not runs or not all(r.completed_ns for r in runs):
        raise ValueError("response_timeline needs runs with messages")
    fig = Figure(figsize=(8.5, 2.4 + 2.0 * len(runs)), layout="constrained")
    axes = fig.subplots(len(runs), 1, sharex=True, sharey=True, squeeze=False)[:, 0]
    spans = list(windows) + [None] * (len(runs) - len(windows))
    for ax, run, span in zip(axes, runs, spans, strict=True):
        due_ms = [t / 1e6 for t in run.intended_ns]
        ax.scatter(due_ms, [max(x, 1) / 1e3 for x in run.service_ns], s=3, color="#b0bec5", label="service time", rasterized=True)
        ax.scatter(due_ms, [max(x, 1) / 1e3 for x in run.response_ns], s=3, color="#c62828", label="response time", rasterized=True)
        if span is not None:
            ax.axvspan(span[0] / 1e6, span[1] / 1e6, color="#1565c0", alpha=0.2, label=f"{window_label} ({(span[1] - span[0]) / 1e6:,.1f} ms)")
        ax.set_yscale("log")
        ax.set_ylabel("µs (log)")
        ax.set_title(f"{run.label}: {len(run.completed_ns):,} messages offered at {run.offered_rate:,.0f}/s", fontsize=9)
        ax.legend(fontsize=8, loc="upper right", markerscale=3)
        ax.grid(True, which="major", alpha=0.3)
    axes[-1].set_xlabel("intended send time (ms from the start of the stream)")
    return fig


BID_COLOUR = "#2e7d32"
ASK_COLOUR = "#c62828"

Level = tuple[int, int, int]


def _cumulative(levels: Sequence[Level]) -> list[int]:
    out, total = [], 0
    for _, _, qty in levels:
        total += qty
        out.append(total)
    return out


def depth_chart(
    bids: Sequence[Level], asks: Sequence[Level], *, decimals: int = 2, title: str = "",
) -> Figure:
    """Depth chart: displayed quantity per level (bars) and cumulative quantity (steps), bids left, asks right.

    ``bids`` and ``asks`` are ``(price_ticks, order_count, displayed_qty)``, best
    first, as ``OrderBook.depth()`` returns them. Prices are shown in currency
    with ``decimals`` places. An empty side is simply not drawn.
    """
    scale = 10**decimals
    fig = Figure(figsize=(8.5, 3.6), layout="constrained")
    ax = fig.add_subplot()
    for levels, colour, name in ((bids, BID_COLOUR, "bids"), (asks, ASK_COLOUR, "asks")):
        if not levels:
            continue
        prices = [p / scale for p, _, _ in levels]
        width = 0.8 / scale
        ax.bar(prices, [q for _, _, q in levels], width=width, color=colour, alpha=0.35,
               label=f"{name}: displayed qty per level")
        # The step starts at zero at the best price and runs outwards, one tick past the last level.
        outward = -1 if name == "bids" else 1
        cumulative = _cumulative(levels)
        xs = [prices[0]] + prices + [prices[-1] + outward / scale]
        ys = [0] + cumulative + [cumulative[-1]]
        ax.step(xs, ys, where="post", color=colour, linewidth=1.8, label=f"{name}: cumulative qty")
    if bids and asks:
        spread_mid = (bids[0][0] + asks[0][0]) / 2 / scale
        ax.axvline(spread_mid, color="#455a64", linewidth=0.8, linestyle=":")
    ax.set_xlabel("price")
    ax.set_ylabel("quantity")
    ax.set_title(title or "Order book depth")
    ax.grid(True, alpha=0.3)
    if bids or asks:
        ax.legend(fontsize=8, loc="upper center", ncols=2)
    return fig


def queue_ladder(orders: Iterable[Order], *, decimals: int = 2, title: str = "") -> Figure:
    """Each price level as a row of boxes, one box per resting order in time priority.

    Asks are stacked above bids, best prices nearest the middle. A box's width is
    the order's visible quantity; its label is the order id and ``arrival_seq``.
    Bid boxes run leftwards from the centre line and ask boxes rightwards, first
    in the queue nearest the line. O(n log n).
    """
    scale = 10**decimals
    by_level: dict[tuple[Side, int], list[Order]] = {}
    for o in orders:
        if o.price is None:
            continue  # a pending stop has no place in the ladder
        by_level.setdefault((o.side, o.price), []).append(o)
    asks = sorted((p for s, p in by_level if s is Side.SELL), reverse=True)  # worst ask on top
    bids = sorted((p for s, p in by_level if s is Side.BUY), reverse=True)  # best bid first
    rows = [(Side.SELL, p) for p in asks] + [(Side.BUY, p) for p in bids]
    fig = Figure(figsize=(8.5, 0.45 * max(len(rows), 1) + 1.4), layout="constrained")
    ax = fig.add_subplot()
    widest = 1
    for y, (side, price) in enumerate(reversed(rows)):
        queue = sorted(by_level[(side, price)], key=lambda o: o.arrival_seq)
        colour, direction = (ASK_COLOUR, 1) if side is Side.SELL else (BID_COLOUR, -1)
        x = 0.0
        for o in queue:
            w = o.visible_qty
            left = x if direction > 0 else -x - w
            ax.barh(y, w, left=left, height=0.7, color=colour, alpha=0.25, edgecolor=colour)
            ax.text(left + w / 2, y, f"{o.id}\nseq {o.arrival_seq}", ha="center", va="center", fontsize=7)
            x += w
        widest = max(widest, x)
    ax.set_yticks(range(len(rows)), [f"{side.value} {price / scale:.{decimals}f}" for side, price in reversed(rows)])
    ax.axvline(0, color="#455a64", linewidth=0.8)
    ax.set_xlim(-widest * 1.05, widest * 1.05)
    ax.set_xlabel("visible quantity (bids grow leftwards, asks rightwards; first in queue next to the line)")
    ax.set_title(title or "Price levels and their queues (price first, then arrival)")
    return fig
