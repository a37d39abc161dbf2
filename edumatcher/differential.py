"""Differential testing: drive two books with the same random operations and compare everything.

The book under test (the fast ``OrderBook``) and the reference (``NaiveBook``) each get
their own copy of every order, built from the same dict. After **every** operation the
harness compares what each call returned (trades, or the rejection code), the events (and
that every cancel in them has its reason),
``depth()``, ``best_bid()``/``best_ask()``, ``last_price``, ``len``, which orders are
live, and every field of every order submitted so far, and it calls the tested book's
``check_invariants()``. The first difference stops the run and is described with its
seed, operation index and the operation itself, so it can be replayed.

A differential test is only as good as its input. The C++ engine README tells how a random test
with continuous prices let a planted time-priority bug through, because two orders
almost never shared a price, and how a 10-tick price ladder caught it at once
(quoted: C++ engine README). Here both distributions are available by name:

* ``"ladder"``: 10 adjacent ticks, so equal prices, queues and time priority are common;
* ``"wide"``: 100 000 ticks, close to continuous prices: equal prices are rare.

``LifoTieBook`` is ``OrderBook`` with that bug planted (newest first at equal prices).

>>> from edumatcher.book import OrderBook
>>> from edumatcher.reference import NaiveBook
>>> run_differential(OrderBook, NaiveBook, seeds=range(2), ops_per_seed=50).ok
True
>>> result = run_differential(LifoTieBook, NaiveBook, seeds=range(3), ops_per_seed=300)
>>> result.ok, result.divergences[0].seed
(False, 0)
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Protocol

import orjson

from .book import SEQ_SPAN, OrderBook, heap_key
from .model import Order, OrderRejected, OrderStatus, Side, Trade
from .rules import MAX_QTY

__all__ = [
    "Book", "BookFactory", "PriceDistribution", "PRICE_DISTRIBUTIONS", "Case", "Divergence",
    "DifferentialResult", "generate_case", "compare_case", "run_differential", "shrink_case", "LifoTieBook",
]

SYMBOL = "XYZ"
OWNERS = ("ann", "bob", "cat", "dan")


class Book(Protocol):
    """The public API both books share (see ``rules.py``)."""

    last_price: int | None
    events: list[tuple[str, Any]]

    def submit(self, order: Order, *, now_ns: int = 0) -> list[Trade]: ...
    def cancel(self, order_id: str, now_ns: int = 0) -> bool: ...
    def cancel_owner(self, owner: str, *, now_ns: int = 0) -> list[str]: ...
    def maintain(self, *, now_ns: int = 0) -> bool: ...
    def has_outstanding_work(self) -> bool: ...
    def best_bid(self) -> int | None: ...
    def best_ask(self) -> int | None: ...
    def depth(self, levels: int | None = None) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]: ...
    def get(self, order_id: str) -> Order | None: ...
    def __len__(self) -> int: ...
    def check_invariants(self) -> None: ...


BookFactory = Callable[[str, "int | None"], Book]
"""Builds an empty book from ``(symbol, last_price)``; a book class itself is one."""


# ---------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class PriceDistribution:
    """Prices (and stop prices) drawn uniformly from the ticks ``low..high``, both included."""

    name: str
    low: int
    high: int

    def draw(self, rng: random.Random) -> int:
        """One price in ticks. O(1)."""
        return rng.randint(self.low, self.high)


PRICE_DISTRIBUTIONS: dict[str, PriceDistribution] = {
    "ladder": PriceDistribution("ladder", 100, 109),
    "wide": PriceDistribution("wide", 1, 100_000),
}
"""The two distributions chapter 03 compares; pass a ``PriceDistribution`` to try others."""


@dataclass
class Case:
    """One generated run: a book's starting ``last_price`` and its operations.

    An operation is a dict, one of ``{"op": "submit", "order": {...}, "now_ns": int}``,
    ``{"op": "cancel", "id": ...}``, ``{"op": "cancel_owner", "owner": ...}`` or
    ``{"op": "maintain"}`` (the last three may carry a ``now_ns`` too).
    """

    seed: int
    last_price: int | None
    ops: list[dict[str, Any]]
    symbol: str = SYMBOL

    def to_jsonl(self) -> str:
        """The case as JSON lines (a header, then one operation per line), for a bug report."""
        header = {"seed": self.seed, "symbol": self.symbol, "last_price": self.last_price}
        lines = [orjson.dumps(header, option=orjson.OPT_SORT_KEYS)]
        lines += [orjson.dumps(op, option=orjson.OPT_SORT_KEYS) for op in self.ops]
        return b"\n".join(lines).decode()


def _pick(rng: random.Random, weighted: Sequence[tuple[Any, float]]) -> Any:
    return rng.choices([v for v, _ in weighted], [w for _, w in weighted])[0]


# A bad order is a good one with one defect; each entry changes the order dict in place.
# Some defects are caught by ``Order.from_dict`` (before any book sees the order).
_DEFECTS: tuple[Callable[[dict[str, Any]], None], ...] = (
    lambda d: d.update(qty=0),
    lambda d: d.update(qty=-2),
    lambda d: d.update(qty=True),
    lambda d: d.update(qty=2.5),
    lambda d: d.update(qty=MAX_QTY + 1),
    lambda d: d.update(order_type="LIMIT", price=0, stop_price=None),
    lambda d: d.update(order_type="LIMIT", price=101.0, stop_price=None),
    lambda d: d.update(order_type="LIMIT", price=None, stop_price=None),
    lambda d: d.update(order_type="MARKET", price=100, stop_price=None, display_qty=None),
    lambda d: d.update(order_type="LIMIT", price=100, stop_price=100),
    lambda d: d.update(order_type="STOP", price=None, stop_price=None, display_qty=None),
    lambda d: d.update(order_type="STOP_LIMIT", price=100, stop_price=-1),
    lambda d: d.update(order_type="LIMIT", price=100, stop_price=None, display_qty=d["qty"] + 1),
    lambda d: d.update(order_type="LIMIT", price=100, stop_price=None, display_qty=0),
    lambda d: d.update(order_type="MARKET", price=None, stop_price=None, display_qty=1),
    lambda d: d.update(symbol="OTHER"),
    lambda d: d.update(id=""),
    lambda d: d.update(id=17),
    lambda d: d.update(owner=""),
    lambda d: d.update(side="HOLD"),  # Order.from_dict: UNKNOWN_ENUM
    lambda d: d.update(tif="GTD"),  # Order.from_dict: UNKNOWN_ENUM
    lambda d: d.pop("qty"),  # Order.from_dict: MISSING_FIELD
)


def _order_dict(rng: random.Random, oid: str, prices: PriceDistribution) -> dict[str, Any]:
    kind = _pick(rng, (("LIMIT", 0.6), ("MARKET", 0.1), ("STOP", 0.12), ("STOP_LIMIT", 0.18)))
    priced = kind in ("LIMIT", "STOP_LIMIT")
    if priced:
        tif = _pick(rng, (("GTC", 0.45), ("DAY", 0.2), ("IOC", 0.2), ("FOK", 0.15)))
    else:
        tif = _pick(rng, (("GTC", 0.3), ("DAY", 0.1), ("IOC", 0.4), ("FOK", 0.2)))
    qty = rng.randint(1, 10) if rng.random() < 0.85 else rng.randint(11, 40)
    d: dict[str, Any] = {
        "id": oid,
        "symbol": SYMBOL,
        "side": rng.choice(("BUY", "SELL")),
        "order_type": kind,
        "tif": tif,
        "qty": qty,
        "owner": rng.choice(OWNERS),
        "smp": _pick(rng, (("NONE", 0.5), ("CANCEL_NEWEST", 0.125), ("CANCEL_OLDEST", 0.125),
                           ("CANCEL_BOTH", 0.125), ("DECREMENT", 0.125))),
    }
    if priced:
        d["price"] = prices.draw(rng)
        if rng.random() < 0.2:
            d["display_qty"] = rng.randint(1, qty)
    if kind in ("STOP", "STOP_LIMIT"):
        d["stop_price"] = prices.draw(rng)
    return d


def generate_case(seed: int, ops: int, prices: str | PriceDistribution = "ladder", *, maintain: float = 0.0) -> Case:
    """A reproducible random ``Case`` of ``ops`` operations. O(ops).

    About 80% submits (every order type, TIF, icebergs, stops, self-match modes; one
    in 20 has a defect and one in 25 reuses a recent id, live or not), 16% cancels
    (mostly of recent ids, some unknown), 4% cancels of a whole owner. With
    ``maintain`` > 0, that share of the operations are ``maintain()`` calls instead
    (the run loop's maintenance between messages, for books with a work budget); at 0
    the cases are the ones this function always made.

    >>> case = generate_case(1, 5)
    >>> len(case.ops), case.ops == generate_case(1, 5).ops
    (5, True)
    """
    dist = PRICE_DISTRIBUTIONS[prices] if isinstance(prices, str) else prices
    rng = random.Random(seed)
    last_price = None if rng.random() < 0.25 else dist.draw(rng)
    ids: list[str] = []
    out: list[dict[str, Any]] = []
    for i in range(ops):
        if maintain and rng.random() < maintain:
            out.append({"op": "maintain", "now_ns": 1_000 * (i + 1)})
            continue
        roll = rng.random()
        if roll < 0.80:
            if ids and rng.random() < 0.04:
                oid = rng.choice(ids[-20:])  # live (DUPLICATE_ID) or ended (may be reused)
            else:
                oid = f"o{len(ids) + 1}"
                ids.append(oid)
            d = _order_dict(rng, oid, dist)
            if rng.random() < 0.05:
                rng.choice(_DEFECTS)(d)
            out.append({"op": "submit", "order": d, "now_ns": 1_000 * (i + 1) + rng.randint(0, 999)})
        elif roll < 0.96:
            if ids and rng.random() < 0.8:
                oid = rng.choice(ids[-30:])
            else:
                oid = f"unknown{rng.randint(1, 99)}"
            out.append({"op": "cancel", "id": oid})
        else:
            out.append({"op": "cancel_owner", "owner": rng.choice((*OWNERS, "nobody"))})
    return Case(seed, last_price, out)


# ----------------------------------------------------------------- comparison


@dataclass
class Divergence:
    """The first point where the two books disagreed (or the tested one broke an invariant)."""

    seed: int
    op_index: int
    op: dict[str, Any]
    what: str
    reference: Any
    tested: Any
    case: Case = field(repr=False)

    def describe(self) -> str:
        """A readable report: where, the operation, what differed, both values."""
        return (
            f"seed {self.seed}, operation {self.op_index}: {orjson.dumps(self.op).decode()}\n"
            f"  {self.what} differs\n"
            f"  reference: {self.reference!r}\n"
            f"  tested:    {self.tested!r}"
        )

    __str__ = describe


@dataclass
class DifferentialResult:
    """What ``run_differential`` found: how much it ran, and the divergences (at most one per seed)."""

    prices: str
    seeds_run: int = 0
    ops_run: int = 0
    divergences: list[Divergence] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no seed diverged."""
        return not self.divergences

    def describe(self) -> str:
        """One line of totals, then the first divergence in full."""
        head = (f"{self.seeds_run} seeds, {self.ops_run} operations on the {self.prices!r} prices: "
                f"{len(self.divergences)} diverged")
        return head if self.ok else f"{head}\nfirst: {self.divergences[0].describe()}"

    __str__ = describe


_ORDER_STATE = attrgetter(*Order.__slots__)  # every field, as one tuple: cheap to compare after every step
_LIVE = (OrderStatus.NEW, OrderStatus.PARTIALLY_FILLED, OrderStatus.PENDING)


class _Mismatch(Exception):
    def __init__(self, what: str, reference: Any, tested: Any) -> None:
        super().__init__(what)
        self.what, self.reference, self.tested = what, reference, tested


def _call(book: Book, op: dict[str, Any]) -> tuple[Any, Order | None]:
    """Apply ``op``; return (what it returned, as comparable data; the order copy it built, if any)."""
    kind = op["op"]
    now_ns = op.get("now_ns", 0)
    if kind == "cancel":
        return ("cancel", book.cancel(op["id"], now_ns=now_ns)), None
    if kind == "cancel_owner":
        return ("cancel_owner", book.cancel_owner(op["owner"], now_ns=now_ns)), None
    if kind == "maintain":
        return ("maintain", book.maintain(now_ns=now_ns)), None
    try:
        order = Order.from_dict(op["order"])
    except OrderRejected as exc:  # never reached the book
        return ("refused by Order.from_dict", exc.code.value), None
    try:
        trades = book.submit(order, now_ns=op["now_ns"])
    except OrderRejected as exc:
        return ("rejected", exc.code.value), order
    return ("trades", [t.to_dict() for t in trades]), order


def _same(what: str, reference: Any, tested: Any) -> None:
    if reference != tested:
        raise _Mismatch(what, reference, tested)


@dataclass
class _Copies:
    """Both books' copies of every order built so far, and the pairs that may still be live."""

    ref: list[Order] = field(default_factory=list)
    test: list[Order] = field(default_factory=list)
    live: list[tuple[Order, Order]] = field(default_factory=list)

    def add(self, ref_order: Order, test_order: Order, accepted: bool) -> None:
        self.ref.append(ref_order)
        self.test.append(test_order)
        if accepted:
            self.live.append((ref_order, test_order))


def _compare_books(ref: Book, test: Book, copies: _Copies) -> None:
    _same("events", [(k, p.to_dict()) for k, p in ref.events], [(k, p.to_dict()) for k, p in test.events])
    unexplained = [p.id for k, p in test.events if k == "cancelled" and p.cancel_reason is None]
    _same("cancels without a reason (rules.py: every cancel says why)", [], unexplained)
    ref_bids, ref_asks = ref.depth()
    test_bids, test_asks = test.depth()
    _same("depth (bids)", [tuple(level) for level in ref_bids], [tuple(level) for level in test_bids])
    _same("depth (asks)", [tuple(level) for level in ref_asks], [tuple(level) for level in test_asks])
    _same("best_bid()", ref.best_bid(), test.best_bid())
    _same("best_ask()", ref.best_ask(), test.best_ask())
    _same("last_price", ref.last_price, test.last_price)
    _same("len(book)", len(ref), len(test))
    _same("has_outstanding_work()", ref.has_outstanding_work(), test.has_outstanding_work())
    # Every field of every order ever built, rejected ones included (a refusal changes nothing).
    # One C-level list comparison first; the slow search for the culprit only on a difference.
    if list(map(_ORDER_STATE, copies.ref)) != list(map(_ORDER_STATE, copies.test)):
        for mine, theirs in zip(copies.ref, copies.test, strict=True):
            _same(f"state of order {mine.id!r}", mine.to_dict(), theirs.to_dict())
    # The reference's live orders are its accepted copies with a live status (len is compared
    # above); the tested book must answer get(id) with the very same copies. An order that has
    # ended never comes back, so it is dropped from the list (its fields are still compared).
    copies.live = [(mine, theirs) for mine, theirs in copies.live if mine.status in _LIVE]
    for _, theirs in copies.live:
        if test.get(theirs.id) is not theirs:
            _same(f"get({theirs.id!r}) is the live order", True, False)


def compare_case(case: Case, make_book: BookFactory, make_reference: BookFactory) -> Divergence | None:
    """Replay ``case`` on both books, comparing after every operation; return the first divergence. O(ops * n)."""
    test = make_book(case.symbol, case.last_price)
    ref = make_reference(case.symbol, case.last_price)
    copies = _Copies()
    for i, op in enumerate(case.ops):
        try:
            ref_out, ref_order = _call(ref, op)
            try:
                test_out, test_order = _call(test, op)
            except Exception as exc:  # a crash is a divergence too, reported with where it happened
                raise _Mismatch("outcome", ref_out, f"raised {traceback.format_exception_only(exc)[-1].strip()}") from exc
            _same("outcome", ref_out, test_out)
            if ref_order is not None and test_order is not None:
                copies.add(ref_order, test_order, accepted=ref_out[0] == "trades")
            _compare_books(ref, test, copies)
            for who, book in (("tested book", test), ("reference", ref)):
                try:
                    book.check_invariants()
                except AssertionError as exc:
                    raise _Mismatch(f"check_invariants() of the {who}", "passes", str(exc)) from exc
        except _Mismatch as m:
            return Divergence(case.seed, i, op, m.what, m.reference, m.tested, case)
    return None


def run_differential(
    make_book: BookFactory,
    make_reference: BookFactory,
    *,
    seeds: Iterable[int],
    ops_per_seed: int,
    prices: str | PriceDistribution = "ladder",
    stop_at_first: bool = True,
    maintain: float = 0.0,
) -> DifferentialResult:
    """Run one generated ``Case`` per seed through both books; collect the divergences.

    ``make_book`` and ``make_reference`` build a book from ``(symbol, last_price)`` (the
    classes themselves do). ``prices`` names a ``PRICE_DISTRIBUTIONS`` entry or is a
    ``PriceDistribution``. With ``stop_at_first`` (the default) the run ends at the first
    divergent seed; otherwise every seed runs and each reports its first divergence,
    which is how chapter 03 counts how often a distribution catches a bug. ``maintain``
    is passed to ``generate_case``.
    O(seeds * ops_per_seed * n) for books of n live orders.
    """
    name = prices if isinstance(prices, str) else prices.name
    result = DifferentialResult(prices=name)
    for seed in seeds:
        case = generate_case(seed, ops_per_seed, prices, maintain=maintain)
        divergence = compare_case(case, make_book, make_reference)
        result.seeds_run += 1
        if divergence is None:
            result.ops_run += len(case.ops)
            continue
        result.ops_run += divergence.op_index + 1
        result.divergences.append(divergence)
        if stop_at_first:
            break
    return result


def shrink_case(case: Case, make_book: BookFactory, make_reference: BookFactory) -> Case:
    """Return a smaller ``Case`` that still diverges (any difference counts): a minimal repro.

    Drops everything after the first divergence, then tries removing runs of
    operations, halving the run length down to single operations, and keeps each
    removal that still diverges. Raises ``ValueError`` if ``case`` does not diverge.
    O(ops^2) replays in the worst case; a few seconds for 300 operations.
    """
    first = compare_case(case, make_book, make_reference)
    if first is None:
        raise ValueError(f"case of seed {case.seed} does not diverge")
    ops = case.ops[: first.op_index + 1]

    def diverges(candidate: list[dict[str, Any]]) -> bool:
        return compare_case(Case(case.seed, case.last_price, candidate, case.symbol), make_book, make_reference) is not None

    size = max(len(ops) // 2, 1)
    while True:
        start = 0
        while start < len(ops):
            candidate = ops[:start] + ops[start + size:]
            if candidate and diverges(candidate):
                ops = candidate
            else:
                start += size
        if size == 1:
            break
        size = max(size // 2, 1)
    return Case(case.seed, case.last_price, ops, case.symbol)


# ----------------------------------------------------------------- planted bug


class LifoTieBook(OrderBook):
    """``OrderBook`` with a planted time-priority bug: at equal prices the NEWEST order fills first.

    The bug is one term of the heap key (``SEQ_SPAN - arrival_seq`` instead of ``arrival_seq``),
    the kind of slip the C++ engine README describes (taking the back of a price level's queue
    instead of its front). Prices still sort correctly, so any test whose orders
    rarely share a price passes.

    ``OrderBook.check_invariants`` recomputes every heap key and would flag this at
    the first push. A real bug's author would have written the check with the same
    misunderstanding, so here ``check_invariants`` keeps only the checks that do not
    look at the key: the comparison with ``NaiveBook`` has to catch the bug alone.
    """

    def _resting_key(self, order: Order) -> int:
        k0 = -order.price if order.side is Side.BUY else order.price
        return heap_key(k0, SEQ_SPAN - order.arrival_seq)  # the bug: newest first among equal prices

    def check_invariants(self) -> None:
        """Only the key-blind checks: an uncrossed book, and ``len`` matching the live heap entries."""
        bid, ask = self.best_bid(), self.best_ask()
        assert bid is None or ask is None or bid < ask, f"book is crossed: bid {bid} >= ask {ask}"
        valid = sum(key in self._live for heap in (self._bids, self._asks, self._buy_stops, self._sell_stops)
                    for key in heap)
        assert valid == len(self), f"{valid} live heap keys for {len(self)} live orders"
