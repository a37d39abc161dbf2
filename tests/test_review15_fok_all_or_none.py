"""Issue 15 review: a FOK is all-or-none in every self-match mode, checked against matching itself.

The rule in ``rules.py`` predicts from the book what matching would do; ``NaiveBook`` and
``OrderBook`` both implement that prediction, so agreeing with each other does not prove it
right. Here the oracle is matching: the same order sent as an IOC (same ``smp``) to a deep
copy of the book. A FOK must fill exactly when that IOC fills its whole ``qty``, print the
same trades when it does, and leave every resting order and pending stop as it was when it
does not. Books are random: both sides, several owners and the FOK's own, icebergs at the
smallest legal peak and above, cancels (dead keys), pending stops (some of them FOKs with
self-match prevention themselves, which a fill can trigger).
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from edumatcher.book import OrderBook
from edumatcher.model import TIF, Order, OrderRejected, OrderStatus, OrderType, RejectReason, SelfMatch, Side
from edumatcher.reference import NaiveBook
from edumatcher.rules import min_display_qty

SYM = "XYZ"
FIELDS = ("id", "symbol", "side", "order_type", "tif", "qty", "price", "stop_price", "display_qty", "owner", "smp")
CASES = 150


def fresh(order: Order, **changes: Any) -> Order:
    """A new, unsubmitted copy of ``order`` with ``changes``."""
    return Order(**{**{f: getattr(order, f) for f in FIELDS}, **changes})


def state(book: Any) -> list[tuple[Any, ...]]:
    """Every live order (resting and pending) with everything matching can change, sorted by id."""
    ids = list(book._entries) if isinstance(book, OrderBook) else [o.id for o in book._live_orders()]
    out = []
    for oid in sorted(ids):
        o = book.get(oid)
        out.append((o.id, o.side, o.price, o.stop_price, o.remaining_qty, o.visible_qty, o.filled_qty, o.status, o.arrival_seq))
    return out


def random_ops(rng: random.Random) -> list[Order | str]:
    ops: list[Order | str] = []
    for i in range(rng.randint(1, 60)):
        side = rng.choice((Side.BUY, Side.SELL))
        qty = rng.randint(1, 40)
        owner = "me" if rng.random() < 0.2 else f"o{rng.randint(1, 4)}"
        # Prices keep the two sides apart (bids 90-99, asks 101-110) so the book rests what it gets.
        price = rng.randint(90, 99) if side is Side.BUY else rng.randint(101, 110)
        display = None
        if rng.random() < 0.35:
            display = min_display_qty(qty) if rng.random() < 0.5 else rng.randint(min_display_qty(qty), qty)
        ops.append(Order(f"r{i}", SYM, side, OrderType.LIMIT, TIF.GTC, qty, price, owner=owner, display_qty=display))
        if rng.random() < 0.15:
            ops.append(f"r{rng.randint(0, i)}")
        if rng.random() < 0.15:  # a pending stop: a buy above 100, a sell below (last_price is 100)
            stop_side = rng.choice((Side.BUY, Side.SELL))
            stop = rng.randint(101, 108) if stop_side is Side.BUY else rng.randint(92, 99)
            tif = rng.choice((TIF.FOK, TIF.IOC, TIF.GTC))
            smp = rng.choice(list(SelfMatch))
            stop_owner = "me" if rng.random() < 0.4 else "o1"
            if rng.random() < 0.5:
                ops.append(Order(f"s{i}", SYM, stop_side, OrderType.STOP, tif if tif is not TIF.GTC else TIF.IOC,
                                 rng.randint(1, 30), None, stop_price=stop, owner=stop_owner, smp=smp))
            else:
                lim = stop + (5 if stop_side is Side.BUY else -5)
                ops.append(Order(f"s{i}", SYM, stop_side, OrderType.STOP_LIMIT, tif, rng.randint(1, 30), lim,
                                 stop_price=stop, owner=stop_owner, smp=smp))
    return ops


def build(cls: type, ops: list[Order | str]) -> Any:
    book = cls(SYM, last_price=100)
    for op in ops:
        if isinstance(op, str):
            book.cancel(op)
        else:
            book.submit(fresh(op))
    return book


def own_trades(book: Any, oid: str) -> list[tuple[str, str, int, int]]:
    return [(t.buy_order_id, t.sell_order_id, t.price, t.qty) for kind, t in book.events
            if kind == "trade" and oid in (t.buy_order_id, t.sell_order_id)]


@pytest.mark.parametrize("book_cls", [OrderBook, NaiveBook], ids=lambda c: c.__name__)
def test_a_fok_fills_exactly_when_the_same_ioc_would_fill_in_full(book_cls: type) -> None:
    rng = random.Random(15)
    seen: dict[tuple[SelfMatch, bool], int] = {}
    for case in range(CASES):
        ops = random_ops(rng)
        side = rng.choice((Side.BUY, Side.SELL))
        smp = list(SelfMatch)[case % len(SelfMatch)]
        if rng.random() < 0.2:
            kind, price = OrderType.MARKET, None
        else:
            kind, price = OrderType.LIMIT, (rng.randint(101, 111) if side is Side.BUY else rng.randint(89, 99))
        fok = Order("fok", SYM, side, kind, TIF.FOK, rng.randint(1, 120), price, owner="me", smp=smp)

        book = build(book_cls, ops)
        oracle = copy.deepcopy(book)
        before = state(book)
        ioc = fresh(fok, tif=TIF.IOC)
        oracle.submit(ioc)
        would_fill = ioc.filled_qty == ioc.qty

        sent = fresh(fok)
        book.submit(sent)
        book.check_invariants()
        seen[(smp, would_fill)] = seen.get((smp, would_fill), 0) + 1
        where = f"case {case}: {sent.side.value} {kind.value} FOK {sent.qty} @ {price} smp {smp.value}"
        if would_fill:
            assert sent.status is OrderStatus.FILLED and sent.filled_qty == sent.qty, where
            assert own_trades(book, "fok") == own_trades(oracle, ioc.id), where
            assert state(book) == state(oracle), f"{where}: the FOK's fill left the book unlike the IOC's"
        else:
            assert sent.status is OrderStatus.CANCELLED and sent.filled_qty == 0, where
            assert book.events == [("cancelled", sent)], f"{where}: a killed FOK causes nothing but its cancel"
            assert state(book) == before, f"{where}: a killed FOK changed the book"
        # every FOK the message ran (stops it triggered included) is all-or-none too
        for kind_, obj in book.events:
            if kind_ == "triggered" and obj.tif is TIF.FOK:
                assert obj.filled_qty in (0, obj.qty), f"{where}: triggered FOK stop {obj.id} filled {obj.filled_qty}/{obj.qty}"
    # the random books must exercise both outcomes for every smp mode
    for smp in SelfMatch:
        assert seen.get((smp, True)) and seen.get((smp, False)), f"{smp.value}: {seen}"


def test_a_fok_blocked_by_its_own_order_behind_an_iceberg_peak_is_killed_untouched() -> None:
    # Matching takes the iceberg's peak (5), the iceberg refreshes behind "mine", then meets
    # "mine": with CANCEL_NEWEST the FOK would end after 5 of 8. Hidden quantity ahead at the
    # same level does not count.
    for cls in (OrderBook, NaiveBook):
        for smp in (SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_BOTH, SelfMatch.DECREMENT):
            book = cls(SYM)
            book.submit(Order("ice", SYM, Side.SELL, OrderType.LIMIT, TIF.GTC, 100, 101, owner="mm", display_qty=5))
            book.submit(Order("mine", SYM, Side.SELL, OrderType.LIMIT, TIF.GTC, 3, 101, owner="me"))
            before = state(book)
            fok = Order("fok", SYM, Side.BUY, OrderType.LIMIT, TIF.FOK, 8, 101, owner="me", smp=smp)
            assert book.submit(fok) == [] and fok.status is OrderStatus.CANCELLED, (cls.__name__, smp)
            assert state(book) == before
            ok = Order("ok", SYM, Side.BUY, OrderType.LIMIT, TIF.FOK, 5, 101, owner="me", smp=smp)
            assert sum(t.qty for t in book.submit(ok)) == 5, (cls.__name__, smp)


@pytest.mark.parametrize("book_cls", [OrderBook, NaiveBook], ids=lambda c: c.__name__)
@pytest.mark.parametrize("order_type", [OrderType.LIMIT, OrderType.STOP_LIMIT])
def test_an_iceberg_below_the_minimum_peak_is_refused_with_the_book_unchanged(book_cls: type, order_type: OrderType) -> None:
    # Issue 15's "nothing half-done": the refusal happens before anything moves, on a busy book
    # where the iceberg would cross (a LIMIT) or trigger at once (a STOP_LIMIT at last_price).
    book = build(book_cls, random_ops(random.Random(7)))
    before = (state(book), book.depth(), book.last_price, getattr(book, "_seq", None), getattr(book, "_trade_seq", None))
    stop = 100 if order_type is OrderType.STOP_LIMIT else None
    thin = Order("thin", SYM, Side.BUY, order_type, TIF.GTC, 10**6, 110, stop_price=stop, owner="me", display_qty=9_999)
    with pytest.raises(OrderRejected) as caught:
        book.submit(thin)
    assert caught.value.code is RejectReason.BAD_DISPLAY_QTY
    assert (state(book), book.depth(), book.last_price, getattr(book, "_seq", None), getattr(book, "_trade_seq", None)) == before
    book.check_invariants()
    ok = fresh(thin, id="ok", display_qty=min_display_qty(10**6))
    book.submit(ok)  # the smallest legal peak is accepted (no OrderRejected)
    book.check_invariants()
