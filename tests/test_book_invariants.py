"""``OrderBook.check_invariants`` catches every corruption of the book's state it is meant to.

Each case deep-copies a book with real content (both sides, a partly filled iceberg, a
pending stop, trades, a dead heap key), corrupts one field or index the way a bug would,
and expects an ``AssertionError``. Issue 15 found seven corruptions the check missed
(``remaining_qty`` above ``qty`` with the level index adjusted, negative and excessive
``filled_qty``, ``qty`` 0, two live orders sharing an ``arrival_seq``, negative counters);
they are marked ``issue 15`` below, next to the ones it already caught. Issue 26 found
six more (a pending stop's peak rule, a raised ``qty``, TIF and type edits, the price of
a pending STOP_LIMIT, the price heaps' size bound, one ``Order`` in two books): marked
``issue 26``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from heapq import heapify

import pytest

from edumatcher.book import COMPACT_SLACK, SEQ_SPAN, OrderBook
from edumatcher.model import (
    TIF,
    CancelReason,
    Order,
    OrderRejected,
    OrderStatus,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
)

SYM = "XYZ"


def _limit(oid: str, side: Side, qty: int, price: int, **kw: object) -> Order:
    return Order(oid, SYM, side, OrderType.LIMIT, TIF.GTC, qty, price, owner=str(kw.pop("owner", "ann")), **kw)  # type: ignore[arg-type]


def busy_book() -> OrderBook:
    book = OrderBook(SYM, last_price=100)
    book.submit(_limit("b1", Side.BUY, 5, 98))
    book.submit(_limit("b2", Side.BUY, 3, 98, owner="bob"))
    book.submit(_limit("b3", Side.BUY, 7, 97))
    book.submit(_limit("a1", Side.SELL, 4, 102, owner="bob"))
    book.submit(_limit("ice", Side.SELL, 40, 103, display_qty=10, owner="cat"))
    book.submit(_limit("gone", Side.SELL, 2, 104))
    book.submit(Order("stop", SYM, Side.BUY, OrderType.STOP, TIF.GTC, 2, None, stop_price=110, owner="dan"))
    book.submit(Order("slim", SYM, Side.BUY, OrderType.STOP_LIMIT, TIF.GTC, 1000, 115, stop_price=112,
                      display_qty=10, owner="dan"))
    book.submit(_limit("hit", Side.BUY, 7, 103, owner="eve"))  # fills a1, takes 3 of the iceberg's peak
    book.cancel("gone")  # a dead key
    book.check_invariants()
    return book


def _order(book: OrderBook, oid: str) -> Order:
    order = book.get(oid)
    assert order is not None
    return order


def _rekey(book: OrderBook, oid: str, arrival_seq: int) -> None:
    """Give a resting order another arrival_seq with its heap key moved to match (a consistent-looking bug)."""
    o = _order(book, oid)
    old = book._entries[oid]
    heap = book._bids if o.side is Side.BUY else book._asks
    del book._live[old]
    heap.remove(old)
    o.arrival_seq = arrival_seq
    key = (-o.price if o.side is Side.BUY else o.price) * SEQ_SPAN + arrival_seq  # type: ignore[operator]
    heap.append(key)
    heapify(heap)
    book._live[key] = o
    book._entries[oid] = key


def _more_remaining(book: OrderBook) -> None:
    o = _order(book, "b1")  # a plain order: visible follows remaining, and the level follows both
    o.remaining_qty += 5
    o.visible_qty += 5
    book._bid_levels[98][1] += 5


def _set(oid: str, **fields: object) -> Callable[[OrderBook], None]:
    def corrupt(book: OrderBook) -> None:
        o = _order(book, oid)
        for name, value in fields.items():
            setattr(o, name, value)
    return corrupt


def _attr(name: str, value: object) -> Callable[[OrderBook], None]:
    return lambda book: setattr(book, name, value)


def _swap_heap_top(book: OrderBook) -> None:
    book._asks[0], book._asks[-1] = book._asks[-1], book._asks[0]


def _drop_owner(book: OrderBook) -> None:
    del book._owners["ann"]["b1"]


def _extra_entry(book: OrderBook) -> None:
    book._entries["ghost"] = book._entries["b1"]


def _extra_live(book: OrderBook) -> None:
    book._live[12345] = _order(book, "b1")


def _level(side: str, price: int, slot: int, delta: int) -> Callable[[OrderBook], None]:
    def corrupt(book: OrderBook) -> None:
        getattr(book, side)[price][slot] += delta
    return corrupt


def _crossed(book: OrderBook) -> None:
    # a bid above the best ask, filed by hand (submit would have matched it)
    o = _limit("x", Side.BUY, 1, 120)
    o.arrival_seq = book._seq = book._seq + 1
    o.remaining_qty = o.visible_qty = 1
    key = -120 * SEQ_SPAN + o.arrival_seq
    book._bids.append(key)
    heapify(book._bids)
    book._live[key] = o
    book._entries["x"] = key
    book._owners["ann"]["x"] = o
    book._bid_levels[120] = [1, 1, 0]


def _triggerable_stop(book: OrderBook) -> None:
    book.last_price = 111


def _price_heap_too_big(book: OrderBook) -> None:
    # one entry past the bound: twice the levels there were when a price was last pushed, plus the slack
    extra = 2 * book._price_marks[False] + COMPACT_SLACK - len(book._ask_prices) + 1
    stale = range(10**6, 10**6 + extra)  # prices with no level
    book._ask_prices.extend(stale)
    book._ask_in_heap.update(stale)


def _in_two_books(book: OrderBook) -> None:
    # What submitting one Order object to a second book did before issue 26: that book
    # restamped it, and the first one's key no longer matched.
    o = _order(book, "b3")
    o.arrival_seq = book._seq + 1


def _too_many_dead(book: OrderBook) -> None:
    book._asks.extend(range(10**20, 10**20 + 200))  # dead keys past the compaction bound
    book._dead += 200


CORRUPTIONS: list[tuple[str, Callable[[OrderBook], None]] | tuple[str, Callable[[OrderBook], None], str]] = [
    # issue 26: missed before
    ("a pending STOP_LIMIT whose peak breaks the 1/100 rule", _set("slim", display_qty=5), "BAD_DISPLAY_QTY"),
    ("a raised qty", _set("b3", qty=9), r"\+ decremented 0 != qty 9"),
    ("a lowered qty", _set("b3", qty=6), r"!= qty 6"),
    ("a resting order's TIF edited to IOC", _set("b1", tif=TIF.IOC), "has TIF IOC"),
    ("a resting order's type edited to MARKET", _set("b1", order_type=OrderType.MARKET), "UNEXPECTED_PRICE"),
    ("a resting order's type edited to STOP_LIMIT", _set("b1", order_type=OrderType.STOP_LIMIT), "MISSING_STOP_PRICE"),
    ("a pending stop's TIF edited", _set("stop", tif=TIF.DAY), "was filed as"),
    ("a pending stop's type edited", _set("stop", order_type=OrderType.MARKET), "UNEXPECTED_STOP_PRICE"),
    ("a changed price on a pending STOP_LIMIT", _set("slim", price=116), "was filed as"),
    ("a changed smp on a pending stop", _set("slim", smp=SelfMatch.CANCEL_BOTH), "was filed as"),
    ("the price heap over its bound", _price_heap_too_big, "ask price heap holds"),
    ("a live order with a cancel_reason", _set("b1", cancel_reason=CancelReason.OWNER_CANCEL), "has a cancel_reason"),
    ("an order restamped by a second book", _in_two_books, "does not match price"),
    ("an owner index entry under another owner", lambda book: book._owners["bob"].__setitem__("b1", _order(book, "b1")),
     "is indexed under 'bob'"),
    ("a buy election price below the last price", _attr("_buy_elect", 99), "on the wrong side of the last price"),
    ("a mass-cancel count with no mass cancel", _attr("_job_live", {"ann": 1}), "mass-cancel live counts"),
    # issue 15: missed before
    ("remaining above qty, level adjusted", _more_remaining, "!= qty 5"),
    ("negative filled_qty", _set("b1", filled_qty=-1), "has filled_qty -1"),
    ("excessive filled_qty", _set("ice", filled_qty=40), r"filled 40 \+ remaining"),
    ("qty 0", _set("b3", qty=0), "BAD_QTY"),
    ("qty negative", _set("b3", qty=-7), "BAD_QTY"),
    ("two live orders share an arrival_seq", lambda book: _rekey(book, "b3", _order(book, "b1").arrival_seq), "shares arrival_seq"),
    ("negative _trade_seq", _attr("_trade_seq", -1), "_trade_seq is -1"),
    ("negative _seq", _attr("_seq", -5), "_seq is -5"),
    ("resting PARTIALLY_FILLED with nothing filled", _set("b1", status=OrderStatus.PARTIALLY_FILLED), "is PARTIALLY_FILLED with filled_qty 0"),
    ("resting NEW after a fill", _set("ice", status=OrderStatus.NEW), "is NEW with filled_qty 3"),
    ("trades but no last_price", lambda book: setattr(book, "last_price", None), "no last_price"),
    # issue 15 follow-up: the price heaps depth(k) walks
    ("a bid level missing from the price heap", lambda book: (book._bid_prices.remove(-98), book._bid_in_heap.discard(98)),
     r"bid levels \[98\] are not"),
    ("ask price heap out of order", lambda book: book._ask_prices.insert(0, 10**9), "ask price heap breaks heap order"),
    # caught before
    ("heap order broken", _swap_heap_top),
    ("a key that is not an int", lambda book: book._asks.append(1.5)),
    ("a key mapping to a non-Order", lambda book: book._live.__setitem__(book._entries["b1"], "b1")),
    ("arrival_seq 0", _set("b3", arrival_seq=0)),
    ("arrival_seq from the future", lambda book: _rekey(book, "b3", book._seq + 10)),
    ("wrong symbol", _set("b1", symbol="ABC")),
    ("resting order cancelled", _set("b1", status=OrderStatus.CANCELLED)),
    ("resting order without price", _set("b1", price=None)),
    ("key does not match price", _set("b1", price=99)),
    ("visible above remaining", _set("b3", visible_qty=8)),
    ("nothing visible", _set("b3", visible_qty=0)),
    ("plain order hides quantity", lambda book: (_set("b3", visible_qty=6)(book), _level("_bid_levels", 97, 1, -1)(book),
                                                 _level("_bid_levels", 97, 2, 1)(book))),
    ("iceberg shows more than its peak", _set("ice", display_qty=5)),
    ("level count off", _level("_bid_levels", 98, 0, 1)),
    ("level displayed off", _level("_bid_levels", 98, 1, -1)),
    ("level hidden off", _level("_ask_levels", 103, 2, 3)),
    ("pending stop with fills", _set("stop", filled_qty=1, remaining_qty=1)),
    ("pending stop not PENDING", _set("stop", status=OrderStatus.NEW)),
    ("live order with nothing left", _set("b1", remaining_qty=0, visible_qty=0)),
    ("owner index missing an id", _drop_owner),
    ("an id with no live key", _extra_entry),
    ("a live key in no heap", _extra_live),
    ("dead count off", _attr("_dead", 0)),
    ("compaction bound broken", _too_many_dead),
    ("crossed book", _crossed),
    ("a pending stop that should have fired", _triggerable_stop),
]


def test_the_uncorrupted_book_passes() -> None:
    busy_book().check_invariants()


@pytest.mark.parametrize(("corrupt", "message"), [(c[1], c[2] if len(c) == 3 else None) for c in CORRUPTIONS],
                         ids=[c[0] for c in CORRUPTIONS])
def test_each_corruption_is_caught(corrupt: Callable[[OrderBook], None], message: str | None) -> None:
    """Caught, and for issue 15's cases by the new check itself (its message), not by a side effect."""
    book = copy.deepcopy(busy_book())
    corrupt(book)
    with pytest.raises(AssertionError, match=message):
        book.check_invariants()


def test_one_order_object_cannot_be_live_in_two_books() -> None:
    """Issue 26: the second book refuses it (ORDER_IN_USE) and neither book is touched; once it has ended it may go again."""
    first, second = OrderBook(SYM), OrderBook(SYM)
    o = _limit("o1", Side.BUY, 5, 98)
    first.submit(o)
    with pytest.raises(OrderRejected) as caught:
        second.submit(o)
    assert caught.value.code is RejectReason.ORDER_IN_USE
    assert len(second) == 0 and first.get("o1") is o and o.arrival_seq == 1
    first.check_invariants()
    second.check_invariants()
    first.cancel("o1")
    assert second.submit(o) == [] and second.get("o1") is o  # ended: a book may take it again


@pytest.mark.parametrize("bad", ["100", 100.0, True, 0, -5, 10**16])
def test_a_bad_last_price_is_refused_when_the_book_is_made(bad: object) -> None:
    """Issue 26: ``OrderBook(last_price="100")`` used to be accepted, and a later stop raised TypeError after ``_seq`` moved."""
    from edumatcher.reference import NaiveBook

    for make in (OrderBook, NaiveBook):
        with pytest.raises(ValueError, match="last_price must be None or an int"):
            make(SYM, last_price=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(("settings", "message"), [({"protection": -1}, "protection must be"), ({"protection": 1.5}, "protection must be"),
                                                   ({"budget": 0}, "budget must be"), ({"budget": 2.0}, "budget must be")])
def test_bad_settings_are_refused(settings: dict[str, object], message: str) -> None:
    from edumatcher.reference import NaiveBook

    for make in (OrderBook, NaiveBook):
        with pytest.raises(ValueError, match=message):
            make(SYM, **settings)  # type: ignore[arg-type]
