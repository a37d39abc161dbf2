"""Throttled snapshots: publishing the book on every change, against at most once per interval.

A *snapshot* (``book.snapshot``) lists the book's best price levels. Building one
reads the level index and sorts its prices (``OrderBook.depth``), so its cost
grows with the number of price levels the book holds. Publishing one after every
change multiplies that cost by the message rate; publishing at most one per
``Engine.snapshot_interval_ns`` turns it into a cost per interval, whatever the
rate. Chapter 08 measures both on books of growing size.

To time the same work many times, the stream must not change the book. A
*replayable* stream (``trade_pairs``) is a list of pairs: a passive order at the
mid, inside the spread of a ramp-built book, then an IOC on the other side that
fills it completely. Each pair prints one trade and leaves the book as it found
it; both ids end, so the stream can be sent again to the same engine.

>>> engine = ramped_engine(200)
>>> sink = CountingSink()
>>> _ = engine.run(IterableSource(trade_pairs(3)), sink)
>>> sink.trades, len(engine.books["EDU"])
(3, 200)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from edumatcher.engine import DEFAULT_SNAPSHOT_INTERVAL_NS, SNAPSHOT_LEVELS, Engine
from edumatcher.kit import TIMER_NAME, Comparison, Measurement, Pass, calibrated_sampler, compare_passes
from edumatcher.messages import TOPIC_TRADE_EXECUTED, make_book_snapshot_request, make_order_new
from edumatcher.sinks import IterableSource
from edumatcher.workloads import MID, SYMBOL, opening_ramp, to_order

__all__ = [
    "ORDERS_PER_LEVEL", "STEP_NS", "MIN_PASSES", "CountingSink", "ramped_engine", "price_levels", "trade_pairs",
    "SnapshotCost", "snapshot_costs", "PublicationCost", "publication_costs", "gap_direction",
]

ORDERS_PER_LEVEL = 10
"""Resting orders per price level in the books built here (on average)."""

STEP_NS = 1_000_000
"""Market time between two messages of the fake clock: 1 ms, i.e. 1,000 messages a second, so the
default 100 ms interval allows one snapshot per 100 messages."""

MIN_PASSES = 40
"""Fewest interleaved rounds (one pass of each policy) per book size, whatever the time budget.

On the largest book a round lasts tens of milliseconds, so a one-second budget on a
busy machine ran out after fewer than 20 rounds: few enough that the bootstrap
interval moves a lot between runs. Forty rounds give an interval worth printing
and cost about two seconds on the largest book."""


class CountingSink:
    """A sink that keeps nothing and counts frames by kind: snapshots, depth updates, trades, others."""

    __slots__ = ("snapshots", "depth", "trades", "other")

    def __init__(self) -> None:
        self.snapshots = self.depth = self.trades = self.other = 0

    def send(self, topic: bytes, payload: bytes) -> None:
        """Count one frame by its topic. O(1)."""
        if topic.startswith(b"book.snapshot."):
            self.snapshots += 1
        elif topic.startswith(b"book.depth."):
            self.depth += 1
        elif topic == TOPIC_TRADE_EXECUTED:
            self.trades += 1
        else:
            self.other += 1

    def send_many(self, frames: list[tuple[bytes, bytes]]) -> None:
        """Count a list of frames. O(len(frames))."""
        for topic, payload in frames:
            self.send(topic, payload)


def _market_clock(step_ns: int = STEP_NS) -> Callable[[], int]:
    """A clock that moves ``step_ns`` each time it is read: the engine reads it once per message."""
    return functools.partial(next, itertools.count(step_ns, step_ns))


def ramped_engine(
    resting: int, *, interval_ns: int = DEFAULT_SNAPSHOT_INTERVAL_NS, seed: int = 1, step_ns: int = STEP_NS,
) -> Engine:
    """An ``Engine`` whose book holds ``resting`` non-crossing orders on about ``resting / ORDERS_PER_LEVEL`` levels.

    The orders come from ``workloads.opening_ramp`` with ``resting // (2 * ORDERS_PER_LEVEL)``
    levels per side, submitted straight to the engine's book (building the book is
    not what is measured). The engine's clock is a fake market clock moving
    ``step_ns`` per read; ``interval_ns`` is its snapshot interval (0: publish
    after every change). O(resting log resting).
    """
    if isinstance(resting, bool) or not isinstance(resting, int) or resting < 1:
        raise ValueError(f"resting must be a positive int, not {resting!r}")
    engine = Engine([SYMBOL], clock=_market_clock(step_ns), snapshot_interval_ns=interval_ns)
    book = engine.books[SYMBOL]
    levels = max(1, resting // (2 * ORDERS_PER_LEVEL))
    for op in opening_ramp(resting, seed, levels=levels):
        book.submit(to_order(op))
    return engine


def price_levels(engine: Engine) -> int:
    """Price levels (both sides) in the engine's book. O(levels log levels)."""
    bids, asks = engine.books[SYMBOL].depth()
    return len(bids) + len(asks)


def trade_pairs(pairs: int, *, qty: int = 5, mid: int = MID, decimals: int = 2) -> list[bytes]:
    """A replayable stream of ``2 * pairs`` payloads, one trade per pair (see the module docstring). O(pairs).

    Pair i: a passive order at ``mid`` (SELL on even i, BUY on odd i) by ``maker``,
    then an IOC on the other side at ``mid`` for the same ``qty`` by ``taker``. The
    ramp's books rest nothing at ``mid``, so the passive order is alone at the top
    and the IOC fills exactly it.

    >>> [p[:40] for p in trade_pairs(1)][1]
    b'{"type":"order.new","id":"t0","symbol":"'
    """
    price = f"{mid // 10**decimals}.{mid % 10**decimals:0{decimals}d}"
    out: list[bytes] = []
    for i in range(pairs):
        passive, taker = ("SELL", "BUY") if i % 2 == 0 else ("BUY", "SELL")
        out.append(make_order_new(f"p{i}", SYMBOL, passive, "LIMIT", qty, "maker", tif="GTC", price=price))
        out.append(make_order_new(f"t{i}", SYMBOL, taker, "LIMIT", qty, "taker", tif="IOC", price=price))
    return out


@dataclass(frozen=True)
class SnapshotCost:
    """The time to build one snapshot of a book of ``resting`` orders on ``levels`` price levels."""

    resting: int
    levels: int
    time: Measurement


def snapshot_costs(
    sizes: Sequence[int], *, snapshot_levels: int = SNAPSHOT_LEVELS, repeat: int = 15, target: float = 0.002,
) -> list[SnapshotCost]:
    """Time one snapshot (a ``book.snapshot.request`` through ``Engine.handle``) per book size.

    ``snapshot_levels`` is how many levels per side the snapshot lists (the
    engine publishes ``SNAPSHOT_LEVELS``). Each size gets ``repeat`` samples of
    about ``target`` seconds, read from the clock comparisons use (``comparison.TIMER``,
    the thread's CPU time where it is precise), so these medians can sit beside the
    chapter's interleaved comparison of the same request: on a shared machine, wall
    time also counts what the scheduler gave to other processes.
    O(sizes x (build + repeat x target)).
    """
    out: list[SnapshotCost] = []
    request = make_book_snapshot_request(SYMBOL, "viewer", levels=snapshot_levels)
    for resting in sizes:
        engine = ramped_engine(resting)
        handle = engine.handle
        sample, number = calibrated_sampler(lambda handle=handle: handle(request), target=target)
        time = Measurement(samples=tuple(sample() for _ in range(repeat)), number=number, warmup=1,
                           label=f"one snapshot, {resting:,} resting orders", clock=TIMER_NAME)
        out.append(SnapshotCost(resting, price_levels(engine), time))
    return out


@dataclass(frozen=True)
class PublicationCost:
    """Both publication policies on one book size: their comparison, and the snapshots each published.

    ``comparison.a`` is a snapshot after every change, ``comparison.b`` the
    throttled policy; samples are seconds per pass over the stream, ``per_op``
    seconds per message. ``messages`` and the snapshot counts are totals over
    every pass each policy ran (warm-up included), so their ratio is snapshots
    per message.
    """

    resting: int
    levels: int
    messages: int
    comparison: Comparison
    snapshots_every_change: int
    snapshots_throttled: int

    @property
    def every_change(self) -> Measurement:
        """The passes with a snapshot after every change (``comparison.a``)."""
        return self.comparison.a

    @property
    def throttled(self) -> Measurement:
        """The passes with throttled snapshots (``comparison.b``)."""
        return self.comparison.b


class _Policy:
    """One engine and the stream it replays, counting passes and the snapshots they published."""

    def __init__(self, engine: Engine, stream: list[bytes]) -> None:
        self.engine, self.stream = engine, stream
        self.passes = self.snapshots = 0
        self._sink: CountingSink | None = None

    def prepare(self) -> tuple[Engine, list[bytes], CountingSink]:
        # Off the clock: tally the previous pass's sink, hand out a fresh one.
        self._tally()
        self._sink = CountingSink()
        return self.engine, self.stream, self._sink

    def _tally(self) -> None:
        if self._sink is not None:
            self.passes += 1
            self.snapshots += self._sink.snapshots
            self._sink = None

    def totals(self) -> tuple[int, int]:
        """``(messages, snapshots)`` over every pass run so far."""
        self._tally()
        return self.passes * len(self.stream), self.snapshots


def _run_pass(data: tuple[Engine, list[bytes], CountingSink]) -> CountingSink:
    engine, stream, sink = data
    engine.run(IterableSource(stream), sink)
    return sink


def publication_costs(
    sizes: Sequence[int], *, pairs: int = 100, interval_ns: int = DEFAULT_SNAPSHOT_INTERVAL_NS, budget: float = 1.0,
    min_rounds: int = MIN_PASSES,
) -> list[PublicationCost]:
    """Compare ``Engine.run`` over ``trade_pairs(pairs)`` with snapshots after every change and throttled.

    Per book size, two engines are built from the same ramp: one with
    ``snapshot_interval_ns=0`` (a snapshot and a depth update after every message
    that changed the book) and one with ``interval_ns`` (at most one per interval
    of market time; the fake clock moves ``STEP_NS`` per message). Their passes are
    compared in interleaved, adaptive rounds (``comparison.compare_passes``, about
    ``budget`` seconds per size, but never fewer than ``min_rounds`` rounds); each
    sample is one pass over the stream, ``ops_per_call`` = messages.
    """
    stream = trade_pairs(pairs)
    out: list[PublicationCost] = []
    for resting in sizes:
        every = _Policy(ramped_engine(resting, interval_ns=0), stream)
        throttled = _Policy(ramped_engine(resting, interval_ns=interval_ns), stream)
        comparison = compare_passes(
            Pass(f"snapshot after every change, {resting:,} resting", _run_pass, every.prepare, len(stream)),
            Pass(f"throttled (one per {interval_ns / 1e6:g} ms), {resting:,} resting", _run_pass, throttled.prepare,
                 len(stream)),
            budget=budget, min_rounds=min_rounds,
        )
        messages, published = every.totals()
        throttled_messages, published_throttled = throttled.totals()
        if messages != throttled_messages:  # compare_passes runs both the same number of times
            raise RuntimeError(f"the policies ran {messages} and {throttled_messages} messages")
        out.append(PublicationCost(resting, price_levels(every.engine), messages, comparison, published,
                                   published_throttled))
    return out


GAP_BAND = 1.25
"""A change in the gap smaller than this factor is shown as a figure, not judged: a snapshot's cost
is nearly flat in the book's size, so the two ratios sit close together and a verdict on their order
would flip between runs on a busy machine (``check-verdicts`` saw it)."""


def gap_direction(publication: Sequence[PublicationCost], *, band: float = GAP_BAND) -> str:
    """How the every-change / throttled ratio moves from the smallest book to the largest, judged by their CIs.

    "widens" when the largest book's interval lies wholly above the smallest's
    times ``band``; "narrows" when wholly below it divided by ``band``; otherwise
    the two ratios are printed as a figure (no ``verdict:`` prefix), because a change
    under the band, real or not, is not a conclusion a rerun would keep. O(1).
    """
    if len(publication) < 2:
        raise ValueError("gap_direction needs at least two book sizes")
    small, large = publication[0], publication[-1]
    (s_lo, s_hi), (l_lo, l_hi) = small.comparison.ci, large.comparison.ci
    figures = (f"{small.comparison.ratio:.1f}x ({small.comparison.ci_text}) at {small.levels:,} levels, "
               f"{large.comparison.ratio:.1f}x ({large.comparison.ci_text}) at {large.levels:,}")
    if l_lo > s_hi * band:
        return f"verdict: the gap between the policies widens as the book grows: {figures}"
    if l_hi * band < s_lo:
        return f"verdict: the gap between the policies narrows as the book grows, against the mechanism: {figures}"
    return (f"the gap between the policies, smallest book against largest: {figures} "
            f"(a figure, not a verdict: a change under {band:g}x is not judged)")
