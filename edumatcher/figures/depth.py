"""Pictures of an order book: the depth chart, and the queue at each price level.

``depth_chart`` takes what ``OrderBook.depth()`` returns. ``queue_ladder`` takes
the resting orders themselves and draws each price level as a row of boxes in
time priority, so the heap key ``(±price, arrival_seq)`` can be read off the
picture: better price first (rows nearest the spread), then earlier arrival
(boxes nearest the centre line).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from matplotlib.figure import Figure

from ..model import Order, Side

__all__ = ["depth_chart", "queue_ladder", "BID_COLOUR", "ASK_COLOUR"]

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
