"""Issue 15's side-by-side conditions, and issue 26's limit: our book and message path against the lean heap book.

The issues measured on a 300,000-operation limit/cancel workload (``workloads.standard``),
contenders interleaved in one process, **the collector on**, and **every contender
building its own orders inside the timed loop** (``apply_building``; the lean book,
which has no order object, takes the fields positionally, ``lean_book.apply_lean``):
the conditions a user of a library meets, unlike the main phases of ``bench book`` and
``bench engine`` (collector off, orders built before the clock starts), which isolate
the books' own work. The goals, reported by those benchmarks and never enforced,
against the **lean heap book** (``lean_book.LeanBook``, issue 26: the pure-Python limit;
``BareBook`` stays as the lesson in what features cost):

* ``OrderBook`` ops/s over ``LeanBook`` ops/s ``>= BOOK_GOAL`` (0.5);
* ``Engine.handle`` msg/s (bytes in, frames out) over ``LeanBook`` ops/s ``>= MESSAGE_PATH_GOAL`` (0.15).

A goal is judged from the interval, never from the median alone (``judge``): "met"
when the whole 95 % interval of the ratio is at or above it, "NOT met" when the whole
interval is below it, "too close to call" when the interval straddles it.

``QUOTED_PEERS`` are the issues' figures for the correct pure-Python peers they
found, quoted, not measured here: the course does not install them.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from .. import workloads
from ..kit import Measurement, Pass, compare, interleave, median_interval, ratio_interval
from ..model import ORDER_TYPE_BY_VALUE, SIDE_BY_VALUE, TIF_BY_VALUE, Order, OrderRejected
from .lean_book import LeanBook, apply_lean

__all__ = [
    "ISSUE_OPS", "QUICK_ISSUE_OPS", "BOOK_GOAL", "MESSAGE_PATH_GOAL", "QUOTED_PEERS", "QUOTED_SOURCE",
    "apply_building", "building_pass", "lean_pass", "race_collector_on", "ratio_with_range", "quoted_peer_lines",
    "judge", "goal_line", "rate_interval", "OrdersOnly", "bare_goal_line", "free_book_ceiling",
]

ISSUE_OPS = 300_000
"""Operations per pass in the issue's measurement."""
QUICK_ISSUE_OPS = 20_000
"""Operations per pass with ``--quick``."""
BOOK_GOAL = 0.5
"""The goal: OrderBook ops/s / LeanBook ops/s, collector on, orders built in the loop."""
MESSAGE_PATH_GOAL = 0.15
"""The goal: Engine msg/s / LeanBook ops/s under the same conditions."""
QUOTED_SOURCE = "quoted from issues 15 and 26, measured on this kind of machine (2 shared cores), not measured here"
QUOTED_PEERS: tuple[tuple[str, str], ...] = (
    ("PyLOB", "1.6x slower than OrderBook"),
    ("pyorderbook", "2.3x slower than OrderBook"),
    ("ABIDES", "11x slower than OrderBook"),
    ("fastlob", "gives wrong fills (not a correct peer)"),
    ("OrderBook / BareBook, issue 15", "0.45 (goal >= 0.5 then)"),
    ("Engine message path / BareBook, issue 15", "0.126, about 176k msg/s (goal >= 0.15 then)"),
    ("issue 26's own lean book / BareBook", "1.3-1.6x faster"),
    ("OrderBook / issue 26's own lean book", "0.46 (0.41-0.51)"),
    ("Engine.handle / issue 26's own lean book", "0.133 (0.127-0.146)"),
)
"""The issue's side-by-side figures, label -> figure, printed beside this run's ratio."""


def apply_building(book: workloads.BookLike, ops: list[workloads.Op], symbol: str = workloads.SYMBOL) -> workloads.Tally:
    """Apply ``"new"`` and ``"cancel"`` operations, building each ``Order`` just before submitting it. O(n).

    The same loop for every book, so the cost of building orders is in every
    contender's time, as it is for a library's user. It uses the plain ``Order``
    constructor (enums from the model's lookup tables) with every argument by
    position, as ``apply_lean`` passes its fields, the cheapest way to build a
    complete order: a keyword argument (``owner=owner``) makes every call build a
    keyword dict and match the name, a cost the lean loop does not pay (time both
    forms with ``python -m timeit``), and a dearer builder would add the same time
    to every book and flatter the slower one's ratio.

    >>> from edumatcher.bare_book import BareBook
    >>> apply_building(BareBook(workloads.SYMBOL), workloads.standard(200, seed=1)).trades > 0
    True
    """
    sides, types, tifs = SIDE_BY_VALUE, ORDER_TYPE_BY_VALUE, TIF_BY_VALUE
    submit, cancel = book.submit, book.cancel
    trades = rejects = cancelled = misses = 0
    for op in ops:
        kind = op[0]
        if kind == workloads.NEW:
            _, order_id, side, order_type, tif, price, qty, owner = op
            try:
                trades += len(submit(Order(order_id, symbol, sides[side], types[order_type], tifs[tif], qty, price,
                                           None, None, owner)))
            except OrderRejected:
                rejects += 1
        elif kind == workloads.CANCEL:
            if cancel(op[1]):
                cancelled += 1
            else:
                misses += 1
        else:
            raise ValueError(f"the issue's workload has only new orders and cancels, not {op!r}")
    return workloads.Tally(trades, rejects, cancelled, misses, 0)


def building_pass(label: str, book_class: type, ops: list[workloads.Op]) -> Pass:
    """One pass = a new book of ``book_class`` fed ``ops`` by ``apply_building`` (orders built in the timed loop)."""

    def prepare() -> Any:
        return book_class(workloads.SYMBOL)

    def run(book: Any) -> workloads.Tally:
        return apply_building(book, ops)

    return Pass(label, run, prepare, ops_per_call=len(ops))


def lean_pass(label: str, ops: list[workloads.Op]) -> Pass:
    """One pass = a new ``LeanBook`` fed ``ops`` by ``apply_lean`` (fields passed positionally, no order objects)."""

    def prepare() -> Any:
        return LeanBook(workloads.SYMBOL)

    def run(book: Any) -> workloads.Tally:
        return apply_lean(book, ops)

    return Pass(label, run, prepare, ops_per_call=len(ops))


class OrdersOnly:
    """A "book" that takes every order and does nothing with it: ``apply_building``'s loop and order building alone.

    Timed beside ``OrderBook`` in the same loop, it lets a benchmark take the book's own
    work out of a time that contains it (``free_book_ceiling``). O(1) per call.
    """

    def __init__(self, symbol: str) -> None:
        self.symbol = symbol

    def submit(self, order: Order) -> list[Any]:
        """Drop the order; no trades. O(1)."""
        return []

    def cancel(self, order_id: str) -> bool:
        """Nothing rests here, so nothing is cancelled. O(1)."""
        return False


def race_collector_on(contenders: list[Pass], repeat: int, on_pass: Any = None) -> list[Measurement]:
    """Interleave ``contenders`` A B A B ... with the collector on, as the issue measured; one warm-up each."""
    return interleave(contenders, repeat=repeat, warmup=1, gc=True, on_pass=on_pass)


def ratio_with_range(ours: Measurement, base: Measurement) -> tuple[float, float, float]:
    """Our throughput over the base's: ratio of the medians, and its extremes over the passes (low, high).

    Both run the same operations, so the throughput ratio is the inverse ratio of times.
    """
    return base.median / ours.median, base.min / ours.max, base.max / ours.min


def judge(low: float, high: float, goal: float) -> str:
    """The verdict word for an interval ``[low, high]`` of a ratio against a goal it must reach.

    >>> judge(0.52, 0.58, 0.5), judge(0.41, 0.48, 0.5), judge(0.46, 0.53, 0.5)
    ('met', 'NOT met', 'too close to call')
    """
    if low >= goal:
        return "met"
    if high < goal:
        return "NOT met"
    return "too close to call"


def goal_line(ours: Measurement, base: Measurement, goal: float, what: str) -> str:
    """``what >= goal; this run: r (95 % CI a-b), <verdict>``: our throughput over the base's, judged from the interval.

    The interval is ``compare``'s bootstrap interval of the ratio of median times (paired
    when the two were interleaved), inverted: throughput is operations over time.
    """
    times = compare(ours, base)
    low_t, high_t = times.ci
    ratio = 1 / times.ratio if times.ratio else float("inf")
    low, high = (1 / high_t if high_t else float("inf")), (1 / low_t if low_t else float("inf"))
    return f"goal: {what} >= {goal:.2f}; this run: {ratio:.3f} (95 % CI {low:.3f}–{high:.3f}), {judge(low, high, goal)}"


def bare_goal_line(bare: Measurement, lean: Measurement, goal: float) -> str:
    """The book goal applied to ``BareBook``, in two lines: what ``OrderBook``'s data and API reach with no feature at all.

    ``BareBook`` takes an ``Order``, keeps it behind an int heap key and returns ``Trade``
    objects, as ``OrderBook`` does, with no validation, no events and no index beyond the
    heaps. Its ratio over ``LeanBook`` is what ``OrderBook`` would reach if every feature
    were free; a book with the same API and a leaner inside can do better.
    """
    judged = goal_line(bare, lean, goal, "BareBook ops/s / LeanBook ops/s").removeprefix("goal: ")
    return (f"the same goal, for BareBook: {judged}\n"
            "  (BareBook: OrderBook's data and API, an Order in and Trade objects out, and not one feature)")


def free_book_ceiling(engine: Measurement, book: Measurement, orders_only: Measurement,
                      lean: Measurement) -> tuple[float, float, float, float, float]:
    """What ``Engine``/``LeanBook`` would be if the engine's book cost nothing: per-round median, its interval, and ns.

    All four were interleaved on the same operations, so round i of each belongs
    together. The message path without matching is, per round, the engine's time less
    the book's own work (``OrderBook``'s pass less the ``OrdersOnly`` pass: the same
    loop and orders without a book); the ratio is ``LeanBook``'s time over it. Returns
    (median ratio, interval low, interval high, the interval's coverage, median ns per
    message outside the book), the interval being ``median_interval``'s of the
    per-round ratios. O(rounds log rounds).

    >>> from edumatcher.kit import Measurement
    >>> m = lambda *s: Measurement.from_samples(s, ops_per_call=1_000)
    >>> free_book_ceiling(m(10.0, 12.0), m(3.0, 3.0), m(1.0, 1.0), m(0.8, 0.8))
    (0.09, 0.08, 0.1, 0.5, 9000000.0)
    """
    rounds = zip(engine.samples, book.samples, orders_only.samples, lean.samples, strict=True)
    outside, ratios = [], []
    for e, b, n, lean_s in rounds:
        rest = e - (b - n)
        outside.append(rest / engine.ops_per_call * 1e9)
        ratios.append(lean_s / rest if rest > 0 else float("inf"))
    low, high, coverage = median_interval(ratios)
    return median(ratios), low, high, coverage, median(outside)


def rate_interval(m: Measurement) -> tuple[float, float]:
    """A 95 % bootstrap interval of ``m``'s median rate (operations per second). O(resamples x passes)."""
    if m.repeat < 2:
        return m.rate, m.rate
    low_t, high_t = ratio_interval(m.samples, [1.0] * m.repeat, paired=False)  # the median's interval, in seconds
    return m.ops_per_call / high_t, m.ops_per_call / low_t


def quoted_peer_lines() -> list[str]:
    """The issue's side-by-side figures as printable lines, labelled as quoted."""
    lines = [f"peers and earlier figures, {QUOTED_SOURCE}:"]
    lines += [f"  {name:<46} {figure}" for name, figure in QUOTED_PEERS]
    return lines
