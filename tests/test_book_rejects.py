"""Bad input gets a clear refusal and loses nothing.

Every refusal is tried against a book with real content (resting orders on both sides,
an iceberg with hidden quantity, a pending stop, a last price, dead heap entries) and
must leave depth, every index, the heaps, the counters, ``last_price``, ``events`` and
the refused order itself exactly as they were.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest

from edumatcher.book import OrderBook
from edumatcher.model import TIF, Order, OrderRejected, OrderType, RejectReason, SelfMatch, Side
from edumatcher.rules import MAX_PRICE, MAX_QTY

SYM = "XYZ"
R = RejectReason


def good(**changes: Any) -> Order:
    """A valid resting buy unless ``changes`` say otherwise (fields by name, as in Order)."""
    fields: dict[str, Any] = {
        "id": "new", "symbol": SYM, "side": Side.BUY, "order_type": OrderType.LIMIT, "tif": TIF.GTC,
        "qty": 5, "price": 90, "stop_price": None, "display_qty": None, "owner": "zed", "smp": SelfMatch.NONE,
    }
    fields.update(changes)
    return Order(**fields)


def busy_book() -> OrderBook:
    book = OrderBook(SYM, last_price=100)
    for oid, side, qty, price, extra in (
        ("b1", Side.BUY, 5, 98, {}),
        ("b2", Side.BUY, 3, 98, {"owner": "ann"}),
        ("b3", Side.BUY, 7, 97, {}),
        ("a1", Side.SELL, 4, 102, {}),
        ("ice", Side.SELL, 40, 103, {"display_qty": 10}),
        ("gone", Side.SELL, 2, 104, {}),
    ):
        book.submit(good(id=oid, side=side, qty=qty, price=price, **extra))
    book.submit(good(id="stop", side=Side.BUY, order_type=OrderType.STOP, price=None, stop_price=110, qty=2))
    book.submit(good(id="hit", side=Side.BUY, qty=6, price=102))  # trades: last_price 102, a1 filled
    book.cancel("gone")  # leaves a dead heap key
    book.check_invariants()
    return book


def snapshot(book: OrderBook) -> dict[str, Any]:
    """Everything a refusal must leave alone, copied deeply (each heap key with its order, if live)."""
    heaps = {}
    for name in ("_bids", "_asks", "_buy_stops", "_sell_stops"):
        heaps[name] = [(key, None if (o := book._live.get(key)) is None else (id(o), o.to_dict()))
                       for key in getattr(book, name)]
    return {
        "depth": book.depth(),
        "best": (book.best_bid(), book.best_ask()),
        "len": len(book),
        "last_price": book.last_price,
        "events": list(book.events),
        "events_list": id(book.events),
        "heaps": heaps,
        "entries": dict(book._entries),
        "live": {key: id(o) for key, o in book._live.items()},
        "levels": copy.deepcopy((book._bid_levels, book._ask_levels)),
        "owners": {owner: [(oid, id(o)) for oid, o in orders.items()] for owner, orders in book._owners.items()},
        "counters": (book._seq, book._trade_seq, book._dead),
    }


BAD_INPUTS: list[tuple[str, dict[str, Any], RejectReason]] = [
    ("qty zero", {"qty": 0}, R.BAD_QTY),
    ("qty negative", {"qty": -4}, R.BAD_QTY),
    ("qty float", {"qty": 5.0}, R.BAD_QTY),
    ("qty str", {"qty": "5"}, R.BAD_QTY),
    ("qty bool", {"qty": True}, R.BAD_QTY),
    ("qty too large", {"qty": MAX_QTY + 1}, R.BAD_QTY),
    ("limit without price", {"price": None}, R.MISSING_PRICE),
    ("stop limit without price", {"order_type": OrderType.STOP_LIMIT, "stop_price": 95, "price": None}, R.MISSING_PRICE),
    ("market with price", {"order_type": OrderType.MARKET}, R.UNEXPECTED_PRICE),
    ("stop with price", {"order_type": OrderType.STOP, "stop_price": 120}, R.UNEXPECTED_PRICE),
    ("stop without stop price", {"order_type": OrderType.STOP, "price": None}, R.MISSING_STOP_PRICE),
    ("stop limit without stop price", {"order_type": OrderType.STOP_LIMIT}, R.MISSING_STOP_PRICE),
    ("limit with stop price", {"stop_price": 95}, R.UNEXPECTED_STOP_PRICE),
    ("market with stop price", {"order_type": OrderType.MARKET, "price": None, "stop_price": 95}, R.UNEXPECTED_STOP_PRICE),
    ("price zero", {"price": 0}, R.BAD_PRICE),
    ("price negative", {"price": -1}, R.BAD_PRICE),
    ("price float", {"price": 90.0}, R.BAD_PRICE),
    ("price bool", {"price": True}, R.BAD_PRICE),
    ("price too large", {"price": MAX_PRICE + 1}, R.BAD_PRICE),
    ("stop price zero", {"order_type": OrderType.STOP, "price": None, "stop_price": 0}, R.BAD_PRICE),
    ("stop price str", {"order_type": OrderType.STOP_LIMIT, "stop_price": "95"}, R.BAD_PRICE),
    ("display above qty", {"display_qty": 6}, R.BAD_DISPLAY_QTY),
    ("display zero", {"display_qty": 0}, R.BAD_DISPLAY_QTY),
    ("display bool", {"display_qty": True}, R.BAD_DISPLAY_QTY),
    ("display float", {"display_qty": 2.0}, R.BAD_DISPLAY_QTY),
    ("iceberg market", {"order_type": OrderType.MARKET, "price": None, "display_qty": 2}, R.BAD_DISPLAY_QTY),
    # Issue 15: a peak below qty / ICEBERG_MAX_PEAKS (one MARKET could print MAX_QTY trades)
    ("iceberg peak of 1 in 10**6", {"qty": 10**6, "display_qty": 1}, R.BAD_DISPLAY_QTY),
    ("iceberg peak one short", {"qty": 10_001, "display_qty": 100}, R.BAD_DISPLAY_QTY),
    ("iceberg peak of 1 in MAX_QTY", {"qty": MAX_QTY, "display_qty": 1}, R.BAD_DISPLAY_QTY),
    ("iceberg stop", {"order_type": OrderType.STOP, "price": None, "stop_price": 120, "display_qty": 2}, R.BAD_DISPLAY_QTY),
    ("duplicate resting id", {"id": "b1"}, R.DUPLICATE_ID),
    ("duplicate iceberg id", {"id": "ice"}, R.DUPLICATE_ID),
    ("duplicate pending stop id", {"id": "stop"}, R.DUPLICATE_ID),
    ("wrong symbol", {"symbol": "ABC"}, R.WRONG_SYMBOL),
    ("empty id", {"id": ""}, R.BAD_FIELD),
    ("id not a str", {"id": 17}, R.BAD_FIELD),
    ("empty owner", {"owner": ""}, R.BAD_FIELD),
    ("owner not a str", {"owner": None}, R.BAD_FIELD),
    ("side a plain string", {"side": "BUY"}, R.UNKNOWN_ENUM),
    ("order type not a member", {"order_type": "LIMIT"}, R.UNKNOWN_ENUM),
    ("tif not a member", {"tif": None}, R.UNKNOWN_ENUM),
    ("smp not a member", {"smp": "NONE"}, R.UNKNOWN_ENUM),
    # A crossing order that would trade must be refused before it touches anything.
    ("crossing but bad display", {"price": 105, "qty": 30, "display_qty": 31}, R.BAD_DISPLAY_QTY),
    ("crossing market but duplicate", {"id": "b3", "side": Side.SELL, "order_type": OrderType.MARKET, "price": None}, R.DUPLICATE_ID),
]


@pytest.mark.parametrize(("changes", "code"), [(c, code) for _, c, code in BAD_INPUTS], ids=[n for n, _, _ in BAD_INPUTS])
def test_a_refused_order_changes_nothing(changes: dict[str, Any], code: RejectReason) -> None:
    book = busy_book()
    before = snapshot(book)
    bad = good(**changes)
    bad_before = [getattr(bad, f.name) for f in dataclasses.fields(Order)]
    with pytest.raises(OrderRejected) as caught:
        book.submit(bad, now_ns=123)
    assert caught.value.code is code
    assert caught.value.message and code.value in str(caught.value)
    assert snapshot(book) == before
    assert [getattr(bad, f.name) for f in dataclasses.fields(Order)] == bad_before  # not stamped either
    book.check_invariants()
    # And the book still works normally afterwards: the next accepted order takes the next seq.
    seq = before["counters"][0]
    ok = good(id="after")
    book.submit(ok)
    assert ok.arrival_seq == seq + 1


def test_every_reject_code_for_order_content_is_exercised() -> None:
    content_codes = {R.BAD_QTY, R.BAD_PRICE, R.MISSING_PRICE, R.UNEXPECTED_PRICE, R.MISSING_STOP_PRICE,
                     R.UNEXPECTED_STOP_PRICE, R.BAD_DISPLAY_QTY, R.DUPLICATE_ID, R.WRONG_SYMBOL, R.UNKNOWN_ENUM,
                     R.BAD_FIELD}
    assert content_codes <= {code for _, _, code in BAD_INPUTS}


def test_the_messages_name_the_bad_value() -> None:
    book = OrderBook(SYM)
    for changes, fragment in (({"qty": -4}, "-4"), ({"price": 90.5}, "90.5"), ({"symbol": "ABC"}, "'ABC'"),
                              ({"display_qty": 9}, "9")):
        with pytest.raises(OrderRejected, match=fragment):
            book.submit(good(**changes))


def test_an_ended_id_may_be_reused_but_a_live_one_may_not() -> None:
    book = busy_book()
    assert book.get("a1") is None  # filled by "hit"
    book.submit(good(id="a1", price=91))
    assert book.get("a1") is not None
    with pytest.raises(OrderRejected) as caught:
        book.submit(good(id="a1", price=92))
    assert caught.value.code is R.DUPLICATE_ID


@pytest.mark.parametrize(
    ("field", "value"),
    [("side", "UP"), ("order_type", "ICEBERG"), ("tif", "GTD"), ("smp", "ALWAYS"), ("status", "DONE"), ("side", 1),
     ("side", None), ("side", ["BUY"])],
)
def test_from_dict_refuses_unknown_enum_strings(field: str, value: Any) -> None:
    d = {"id": "x", "symbol": SYM, "side": "BUY", "order_type": "LIMIT", "qty": 1, "price": 5, "owner": "o", field: value}
    with pytest.raises(OrderRejected) as caught:
        Order.from_dict(d)
    assert caught.value.code is R.UNKNOWN_ENUM and field in caught.value.message


@pytest.mark.parametrize("missing", ["id", "symbol", "side", "order_type", "qty"])
def test_from_dict_refuses_a_missing_required_field(missing: str) -> None:
    d = {"id": "x", "symbol": SYM, "side": "BUY", "order_type": "LIMIT", "qty": 1, "price": 5, "owner": "o"}
    del d[missing]
    with pytest.raises(OrderRejected) as caught:
        Order.from_dict(d)
    assert caught.value.code is R.MISSING_FIELD and missing in caught.value.message


def test_a_refusal_after_a_failed_cancel_keeps_the_empty_events() -> None:
    book = busy_book()
    assert book.cancel("nope") is False and book.events == []
    with pytest.raises(OrderRejected):
        book.submit(good(qty=0))
    assert book.events == []
