"""Hand-worked scenarios for ``NaiveBook``, one group per section of ``rules.py``.

Every expected value here was worked out by hand from the spec, not read back
from the code; where a rule has two sides, both are tested.
"""

from __future__ import annotations

from typing import Any

import pytest

from edumatcher.model import Order, OrderRejected, OrderStatus, RejectReason
from edumatcher.reference import NaiveBook
from edumatcher.rules import MAX_PRICE, MAX_QTY

SYM = "XYZ"
OPPOSITE = {"BUY": "SELL", "SELL": "BUY"}
# A price that is better for the side: a higher bid, a lower ask.
BETTER = {"BUY": 1, "SELL": -1}


def make(oid: str, side: str, qty: int, price: int | None = None, **extra: Any) -> Order:
    """A LIMIT GTC order by default; MARKET when ``price`` is None and no type is given."""
    d: dict[str, Any] = {
        "id": oid,
        "symbol": SYM,
        "side": side,
        "order_type": "LIMIT" if price is not None else "MARKET",
        "qty": qty,
        "owner": extra.pop("owner", "o-" + oid),
    }
    if price is not None:
        d["price"] = price
    d.update(extra)
    return Order.from_dict(d)


def trades_of(book: NaiveBook, order: Order, now_ns: int = 0) -> list[tuple[str, str, int, int]]:
    """Submit and return each trade as (aggressor, resting, price, qty)."""
    return [(t.aggressor_order_id, t.resting_order_id, t.price, t.qty) for t in book.submit(order, now_ns=now_ns)]


def event_summary(book: NaiveBook) -> list[tuple[str, str]]:
    """The last call's events as (kind, order id or 'resting id' for trades)."""
    return [(kind, p.resting_order_id if kind == "trade" else p.id) for kind, p in book.events]


# ------------------------------------------------------------------ acceptance

BAD_ORDERS = [
    ({"qty": 0}, RejectReason.BAD_QTY),
    ({"qty": -3}, RejectReason.BAD_QTY),
    ({"qty": True}, RejectReason.BAD_QTY),
    ({"qty": 2.0}, RejectReason.BAD_QTY),
    ({"qty": MAX_QTY + 1}, RejectReason.BAD_QTY),
    ({"price": None}, RejectReason.MISSING_PRICE),
    ({"price": 0}, RejectReason.BAD_PRICE),
    ({"price": MAX_PRICE + 1}, RejectReason.BAD_PRICE),
    ({"price": 100.0}, RejectReason.BAD_PRICE),
    ({"order_type": "MARKET"}, RejectReason.UNEXPECTED_PRICE),
    ({"stop_price": 99}, RejectReason.UNEXPECTED_STOP_PRICE),
    ({"order_type": "STOP_LIMIT"}, RejectReason.MISSING_STOP_PRICE),
    ({"order_type": "STOP_LIMIT", "stop_price": 0}, RejectReason.BAD_PRICE),
    ({"display_qty": 11}, RejectReason.BAD_DISPLAY_QTY),
    ({"display_qty": 0}, RejectReason.BAD_DISPLAY_QTY),
    ({"order_type": "MARKET", "price": None, "display_qty": 1}, RejectReason.BAD_DISPLAY_QTY),
    ({"symbol": "ABC"}, RejectReason.WRONG_SYMBOL),
    ({"id": ""}, RejectReason.BAD_FIELD),
    ({"owner": ""}, RejectReason.BAD_FIELD),
]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
@pytest.mark.parametrize(("change", "code"), BAD_ORDERS)
def test_bad_order_is_rejected_and_changes_nothing(side: str, change: dict[str, Any], code: RejectReason) -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("r1", "BUY", 5, 99))
    book.submit(make("r2", "SELL", 5, 101))
    bad = Order.from_dict({"id": "x", "symbol": SYM, "side": side, "order_type": "LIMIT", "qty": 10,
                           "price": 100, "owner": "me", **change})
    before_order = bad.to_dict()
    before_book = (book.depth(), len(book), book.last_price)
    with pytest.raises(OrderRejected) as info:
        book.submit(bad, now_ns=77)
    assert info.value.code is code
    assert bad.to_dict() == before_order  # the refused order itself is untouched too
    assert (book.depth(), len(book), book.last_price) == before_book
    assert book.events == []  # the previous call (r2 resting) had no events, and a refusal keeps them
    # A rejection takes no arrival_seq: the next accepted order gets 3.
    ok = make("r3", "BUY", 1, 90)
    book.submit(ok)
    assert ok.arrival_seq == 3


def test_duplicate_live_id_is_rejected_for_resting_orders_and_pending_stops() -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("a", "BUY", 5, 99))
    book.submit(make("s", "SELL", 5, None, order_type="STOP", stop_price=90))
    for oid in ("a", "s"):
        with pytest.raises(OrderRejected) as info:
            book.submit(make(oid, "SELL", 1, 120))
        assert info.value.code is RejectReason.DUPLICATE_ID
    assert len(book) == 2


def test_id_of_an_ended_order_can_be_reused() -> None:
    book = NaiveBook(SYM)
    book.submit(make("a", "BUY", 5, 99))
    book.submit(make("b", "SELL", 5, 99))  # fills a
    book.submit(make("c", "SELL", 2, 105))
    assert book.cancel("c")
    again_a, again_c = make("a", "BUY", 1, 90), make("c", "BUY", 1, 91)
    book.submit(again_a)
    book.submit(again_c)
    assert book.get("a") is again_a and book.get("c") is again_c


# ------------------------------------------------------------------ sequencing


def test_arrival_seq_counts_from_one_and_trades_from_one() -> None:
    book = NaiveBook(SYM, last_price=50)
    assert book.last_price == 50
    orders = [make("a", "SELL", 2, 101), make("b", "SELL", 2, 102), make("c", "BUY", 3, 102)]
    trades = []
    for o in orders:
        trades += book.submit(o, now_ns=1000)
    assert [o.arrival_seq for o in orders] == [1, 2, 3]
    assert [(t.seq, t.price, t.qty) for t in trades] == [(1, 101, 2), (2, 102, 1)]
    assert book.last_price == 102
    assert all(t.timestamp_ns == 1000 for t in trades)
    assert orders[2].timestamp_ns == 1000


# -------------------------------------------------------------------- matching


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_simple_cross_prints_at_resting_price(side: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    resting_price = 100
    limit = resting_price + 5 * BETTER[side]  # willing to pay more (buy) or take less (sell)
    book.submit(make("r", other, 4, resting_price))
    agg = make("a", side, 4, limit)
    assert trades_of(book, agg) == [("a", "r", 100, 4)]
    trade = book.events[0][1]
    assert (trade.buy_order_id, trade.sell_order_id) == (("a", "r") if side == "BUY" else ("r", "a"))
    assert (trade.buy_owner, trade.sell_owner) == (("o-a", "o-r") if side == "BUY" else ("o-r", "o-a"))
    assert trade.aggressor_side.value == side
    assert agg.status is OrderStatus.FILLED and agg.remaining_qty == 0 and agg.filled_qty == 4
    assert len(book) == 0 and book.depth() == ([], [])


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_no_cross_when_limit_does_not_reach(side: str) -> None:
    book = NaiveBook(SYM)
    book.submit(make("r", OPPOSITE[side], 4, 100))
    agg = make("a", side, 4, 100 - BETTER[side])  # one tick short
    assert trades_of(book, agg) == []
    assert agg.status is OrderStatus.NEW and book.get("a") is agg and len(book) == 2


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_partial_fill_rests_remainder(side: str) -> None:
    book = NaiveBook(SYM)
    resting = make("r", OPPOSITE[side], 3, 100)
    book.submit(resting)
    agg = make("a", side, 10, 100)
    assert trades_of(book, agg) == [("a", "r", 100, 3)]
    assert (agg.status, agg.filled_qty, agg.remaining_qty, agg.visible_qty) == (OrderStatus.PARTIALLY_FILLED, 3, 7, 7)
    assert resting.status is OrderStatus.FILLED and book.get("r") is None
    bids, asks = book.depth()
    assert (bids if side == "BUY" else asks) == [(100, 1, 7)]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_resting_order_partly_filled_keeps_its_place(side: str) -> None:
    book = NaiveBook(SYM)
    first, second = make("r1", OPPOSITE[side], 5, 100), make("r2", OPPOSITE[side], 5, 100)
    book.submit(first)
    book.submit(second)
    assert trades_of(book, make("a1", side, 2, 100)) == [("a1", "r1", 100, 2)]
    assert first.status is OrderStatus.PARTIALLY_FILLED and (first.remaining_qty, first.visible_qty) == (3, 3)
    assert trades_of(book, make("a2", side, 4, 100)) == [("a2", "r1", 100, 3), ("a2", "r2", 100, 1)]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_price_time_priority(side: str) -> None:
    """Better price first; at one price, lower arrival_seq first."""
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    worse = 100 - 2 * BETTER[side]  # for the resting (other) side, "better" is the other direction
    best = 100 - 4 * BETTER[side]
    book.submit(make("w", other, 1, worse))
    book.submit(make("t1", other, 1, best))
    book.submit(make("t2", other, 1, best))
    book.submit(make("t3", other, 1, best))
    assert trades_of(book, make("a", side, 4, 100)) == [
        ("a", "t1", best, 1), ("a", "t2", best, 1), ("a", "t3", best, 1), ("a", "w", worse, 1),
    ]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_multi_level_sweep_stops_at_the_limit(side: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    step = BETTER[side]  # away from the aggressor: asks rise, bids fall
    for i in range(4):
        book.submit(make(f"r{i}", other, 2, 100 + i * step))
    agg = make("a", side, 10, 100 + 2 * step)
    assert trades_of(book, agg) == [("a", "r0", 100, 2), ("a", "r1", 100 + step, 2), ("a", "r2", 100 + 2 * step, 2)]
    assert book.last_price == 100 + 2 * step
    assert agg.remaining_qty == 4 and agg.status is OrderStatus.PARTIALLY_FILLED
    bids, asks = book.depth()
    own, opposite = (bids, asks) if side == "BUY" else (asks, bids)
    assert (own, opposite) == ([(100 + 2 * step, 1, 4)], [(100 + 3 * step, 1, 2)])


@pytest.mark.parametrize("side", ["BUY", "SELL"])
@pytest.mark.parametrize("tif", ["DAY", "GTC"])
def test_market_order_remainder_is_cancelled_whatever_its_tif(side: str, tif: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    book.submit(make("r1", other, 2, 100))
    book.submit(make("r2", other, 2, 100 + 50 * BETTER[side]))  # far away: a market order still takes it
    agg = make("m", side, 7, tif=tif)
    assert [q for *_, q in trades_of(book, agg)] == [2, 2]
    assert agg.status is OrderStatus.CANCELLED and agg.remaining_qty == 3 and agg.filled_qty == 4
    assert event_summary(book) == [("trade", "r1"), ("trade", "r2"), ("cancelled", "m")]
    assert len(book) == 0


def test_market_order_on_an_empty_side_is_cancelled_whole() -> None:
    book = NaiveBook(SYM)
    book.submit(make("b", "BUY", 5, 100))
    agg = make("m", "BUY", 3)
    assert book.submit(agg) == []
    assert (agg.status, agg.remaining_qty, agg.filled_qty) == (OrderStatus.CANCELLED, 3, 0)
    assert event_summary(book) == [("cancelled", "m")]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_ioc_trades_what_it_can_and_cancels_the_rest(side: str) -> None:
    book = NaiveBook(SYM)
    book.submit(make("r", OPPOSITE[side], 2, 100))
    agg = make("i", side, 5, 100, tif="IOC")
    assert trades_of(book, agg) == [("i", "r", 100, 2)]
    assert agg.status is OrderStatus.CANCELLED and agg.remaining_qty == 3
    assert book.get("i") is None and len(book) == 0


# ------------------------------------------------------------------------- FOK


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_fok_killed_untouched_when_not_enough_crosses(side: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    book.submit(make("r1", other, 3, 100))
    book.submit(make("r2", other, 3, 100 + BETTER[side]))  # beyond the FOK's limit: does not count
    agg = make("f", side, 4, 100, tif="FOK")
    assert book.submit(agg) == []
    assert (agg.status, agg.remaining_qty, agg.filled_qty) == (OrderStatus.CANCELLED, 4, 0)
    assert event_summary(book) == [("cancelled", "f")]
    assert len(book) == 2 and book.last_price is None


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_fok_fills_across_levels_when_enough(side: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    book.submit(make("r1", other, 3, 100))
    book.submit(make("r2", other, 3, 100 + BETTER[side]))
    agg = make("f", side, 5, 100 + BETTER[side], tif="FOK")
    assert [q for *_, q in trades_of(book, agg)] == [3, 2]
    assert agg.status is OrderStatus.FILLED


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_fok_counts_hidden_iceberg_quantity(side: str) -> None:
    book = NaiveBook(SYM)
    berg = make("ice", OPPOSITE[side], 10, 100, display_qty=2)
    book.submit(berg)
    agg = make("f", side, 9, 100, tif="FOK")
    # 9 <= 10 including the hidden 8; it then fills 2+2+2+2+1 as the peak refreshes.
    assert [q for *_, q in trades_of(book, agg)] == [2, 2, 2, 2, 1]
    assert agg.status is OrderStatus.FILLED and berg.remaining_qty == 1 and berg.visible_qty == 1


@pytest.mark.parametrize("smp", ["NONE", "CANCEL_OLDEST"])
def test_fok_excludes_own_orders_only_when_smp_is_on(smp: str) -> None:
    book = NaiveBook(SYM)
    book.submit(make("mine", "SELL", 3, 100, owner="me"))
    book.submit(make("theirs", "SELL", 2, 100, owner="them"))
    agg = make("f", "BUY", 4, 100, tif="FOK", owner="me", smp=smp)
    trades = trades_of(book, agg)
    if smp == "NONE":  # own 3 counts: 5 >= 4, and it trades with itself
        assert trades == [("f", "mine", 100, 3), ("f", "theirs", 100, 1)]
        assert agg.status is OrderStatus.FILLED
    else:  # only 2 counts: killed untouched, and "mine" is not cancelled
        assert trades == [] and agg.status is OrderStatus.CANCELLED and agg.remaining_qty == 4
        assert book.get("mine") is not None


@pytest.mark.parametrize("smp", ["CANCEL_NEWEST", "CANCEL_BOTH", "DECREMENT"])
def test_fok_is_killed_untouched_when_it_would_meet_its_own_order(smp: str) -> None:
    # Issue 15: it used to trade 2 with t1, meet "mine" and end CANCELLED after a partial fill.
    book = NaiveBook(SYM)
    book.submit(make("t1", "BUY", 2, 100, owner="them"))
    book.submit(make("mine", "BUY", 5, 100, owner="me"))
    book.submit(make("t2", "BUY", 3, 100, owner="them"))
    agg = make("f", "SELL", 5, 100, tif="FOK", owner="me", smp=smp)
    assert trades_of(book, agg) == []  # only 2 lots ahead of "mine"
    assert agg.status is OrderStatus.CANCELLED and (agg.filled_qty, agg.remaining_qty) == (0, 5)
    assert event_summary(book) == [("cancelled", "f")]
    assert [book.get(i).remaining_qty for i in ("t1", "mine", "t2")] == [2, 5, 3]
    fits = make("f2", "SELL", 2, 100, tif="FOK", owner="me", smp=smp)
    assert trades_of(book, fits) == [("f2", "t1", 100, 2)] and fits.status is OrderStatus.FILLED


# -------------------------------------------------------------------- icebergs


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_iceberg_shows_its_peak_and_refreshes_at_the_back_of_its_level(side: str) -> None:
    book = NaiveBook(SYM)
    berg = make("ice", side, 10, 100, display_qty=4)
    plain = make("p", side, 3, 100)
    book.submit(berg)
    book.submit(plain)
    assert (berg.visible_qty, berg.arrival_seq) == (4, 1)
    bids, asks = book.depth()
    assert (bids if side == "BUY" else asks) == [(100, 2, 7)]
    # The aggressor takes the whole peak (4), the refresh sends the iceberg behind "p".
    agg = make("a", OPPOSITE[side], 6, 100)
    assert trades_of(book, agg) == [("a", "ice", 100, 4), ("a", "p", 100, 2)]
    assert (berg.remaining_qty, berg.visible_qty, berg.arrival_seq) == (6, 4, 4)  # seq 3 went to "a"
    assert berg.status is OrderStatus.PARTIALLY_FILLED
    bids, asks = book.depth()
    assert (bids if side == "BUY" else asks) == [(100, 2, 5)]
    assert trades_of(book, make("b", OPPOSITE[side], 3, 100)) == [("b", "p", 100, 1), ("b", "ice", 100, 2)]
    assert (berg.remaining_qty, berg.visible_qty, berg.arrival_seq) == (4, 2, 4)


def test_iceberg_last_peak_is_the_remainder() -> None:
    book = NaiveBook(SYM)
    berg = make("ice", "SELL", 5, 100, display_qty=3)
    book.submit(berg)
    book.submit(make("a", "BUY", 3, 100))
    assert (berg.remaining_qty, berg.visible_qty) == (2, 2)
    assert book.depth()[1] == [(100, 1, 2)]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_aggressing_iceberg_matches_its_whole_quantity_and_rests_a_peak(side: str) -> None:
    book = NaiveBook(SYM)
    other = OPPOSITE[side]
    book.submit(make("r1", other, 5, 100))
    book.submit(make("r2", other, 3, 100))
    berg = make("ice", side, 12, 100, display_qty=2)
    # Fill 5: visible max(2-5, 0) = 0 -> refresh to 2 (seq 4); fill 3: 0 -> refresh to 2 (seq 5).
    assert [q for *_, q in trades_of(book, berg)] == [5, 3]
    assert (berg.remaining_qty, berg.visible_qty, berg.arrival_seq) == (4, 2, 5)
    bids, asks = book.depth()
    assert (bids if side == "BUY" else asks) == [(100, 1, 2)]
    nxt = make("n", side, 1, 90)
    book.submit(nxt)
    assert nxt.arrival_seq == 6


# ----------------------------------------------------------------------- stops


def stop(oid: str, side: str, qty: int, stop_price: int, price: int | None = None, **extra: Any) -> Order:
    kind = "STOP" if price is None else "STOP_LIMIT"
    return make(oid, side, qty, price, order_type=kind, stop_price=stop_price, **extra)


def test_stops_wait_without_a_last_price() -> None:
    book = NaiveBook(SYM)
    s1, s2 = stop("sb", "BUY", 1, 1), stop("ss", "SELL", 1, 10**9)
    book.submit(s1)
    book.submit(s2)
    assert s1.status is OrderStatus.PENDING and s2.status is OrderStatus.PENDING
    assert len(book) == 2 and book.depth() == ([], [])


@pytest.mark.parametrize(("side", "stop_price", "fires"), [
    ("BUY", 100, True), ("BUY", 101, False), ("SELL", 100, True), ("SELL", 99, False),
])
def test_stop_submitted_when_triggerable_triggers_at_once(side: str, stop_price: int, fires: bool) -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("r", OPPOSITE[side], 5, 100))
    s = stop("s", side, 2, stop_price)
    trades = trades_of(book, s)
    if fires:
        assert trades == [("s", "r", 100, 2)]
        assert event_summary(book) == [("triggered", "s"), ("trade", "r")]
        assert s.status is OrderStatus.FILLED
        assert s.arrival_seq == 3  # 2 at acceptance, 3 when it triggered
    else:
        assert trades == [] and s.status is OrderStatus.PENDING and s.arrival_seq == 2


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_stop_triggers_after_the_order_that_moves_the_price(side: str) -> None:
    book = NaiveBook(SYM, last_price=100)
    other = OPPOSITE[side]
    away = BETTER[side]  # the direction a stop of this side waits for: up for a buy stop
    s = stop("s", side, 2, 100 + away)
    book.submit(s)
    book.submit(make("r1", other, 1, 100 + away))
    book.submit(make("r2", other, 5, 100 + 3 * away))
    assert s.status is OrderStatus.PENDING
    # "a" lifts r1 at 100+away: last_price reaches the stop, which then takes r2 as a market order.
    trades = trades_of(book, make("a", side, 1, 100 + away))
    assert trades == [("a", "r1", 100 + away, 1), ("s", "r2", 100 + 3 * away, 2)]
    assert event_summary(book) == [("trade", "r1"), ("triggered", "s"), ("trade", "r2")]
    assert s.status is OrderStatus.FILLED and s.arrival_seq == 5
    assert book.last_price == 100 + 3 * away


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_stop_limit_rests_its_remainder_with_its_trigger_seq(side: str) -> None:
    book = NaiveBook(SYM, last_price=100)
    other = OPPOSITE[side]
    s = stop("s", side, 5, 100, price=100)
    book.submit(make("r", other, 2, 100))  # seq 1
    assert trades_of(book, s) == [("s", "r", 100, 2)]  # accepted at seq 2, triggered at seq 3
    assert s.status is OrderStatus.PARTIALLY_FILLED and s.arrival_seq == 3 and book.get("s") is s
    bids, asks = book.depth()
    assert (bids if side == "BUY" else asks) == [(100, 1, 3)]


def test_stop_cascade_chains_buy_stops() -> None:
    """Asks 101 and 103 (1 lot each), last 100; pending buy STOPs at 103 and 101, sell STOP at 99.

    Buying 1 at 101 prints 101: the 101 stop (the lowest) fires and buys the 103 ask;
    the print at 103 fires the 103 stop, which finds no ask and is cancelled; the
    sell stop (103 <= 99? no) keeps waiting.
    """
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("a101", "SELL", 1, 101))
    book.submit(make("a103", "SELL", 1, 103))
    book.submit(make("b90", "BUY", 1, 90))
    for s in (stop("sb2", "BUY", 1, 103), stop("sb1", "BUY", 1, 101), stop("ss", "SELL", 1, 99)):
        book.submit(s)
        assert s.status is OrderStatus.PENDING
    trades = trades_of(book, make("x", "BUY", 1, 101))
    assert trades == [("x", "a101", 101, 1), ("sb1", "a103", 103, 1)]
    assert event_summary(book) == [
        ("trade", "a101"), ("triggered", "sb1"), ("trade", "a103"), ("triggered", "sb2"), ("cancelled", "sb2"),
    ]
    assert book.get("ss").status is OrderStatus.PENDING and book.last_price == 103


def test_stop_cascade_chains_sell_stops() -> None:
    """Bids 98 and 97 (1 lot each), last 100; pending sell STOPs at 98 and 97.

    Selling 1 at 98 prints 98: the 98 stop (the highest) fires and sells into the
    97 bid; the print at 97 fires the 97 stop, which finds no bid and is cancelled.
    """
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("b98", "BUY", 1, 98))
    book.submit(make("b97", "BUY", 1, 97))
    book.submit(make("a105", "SELL", 5, 105))
    book.submit(stop("s1", "SELL", 1, 98))
    book.submit(stop("s2", "SELL", 1, 97))
    trades = trades_of(book, make("x", "SELL", 1, 98))
    assert trades == [("x", "b98", 98, 1), ("s1", "b97", 97, 1)]
    assert event_summary(book) == [
        ("trade", "b98"), ("triggered", "s1"), ("trade", "b97"), ("triggered", "s2"), ("cancelled", "s2"),
    ]


def test_buy_stops_are_looked_at_first_when_both_sides_can_trigger() -> None:
    """Without a last price both stops wait; the first print (102) elects both.

    Buy first: the buy STOP (100 <= 102) lifts the 110 ask, last 110. The sell STOP was
    elected by the 102 print (102 <= 105) and stays elected though the price rose since
    (issue 26: before, it was looked at again at 110 and left pending, as if 102 had never
    printed): it fires next and hits the 90 bid. Sell-first would have hit the 90 bid first.
    """
    book = NaiveBook(SYM)
    book.submit(stop("sb", "BUY", 1, 100))
    book.submit(stop("ss", "SELL", 1, 105))
    book.submit(make("b90", "BUY", 1, 90))
    book.submit(make("a110", "SELL", 1, 110))
    book.submit(make("a102", "SELL", 1, 102))
    trades = trades_of(book, make("x", "BUY", 1, 102))
    assert trades == [("x", "a102", 102, 1), ("sb", "a110", 110, 1), ("ss", "b90", 90, 1)]
    assert book.get("ss") is None and book.last_price == 90


def test_best_buy_stop_is_lowest_stop_price_then_earliest() -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("ask", "SELL", 10, 102))
    for s in (stop("low1", "BUY", 1, 101, price=102), stop("high", "BUY", 1, 102, price=102),
              stop("low2", "BUY", 1, 101, price=102)):
        book.submit(s)
    book.submit(make("x", "BUY", 1, 102))  # trade at 102: all three can trigger
    assert [p.id for kind, p in book.events if kind == "triggered"] == ["low1", "low2", "high"]


def test_best_sell_stop_is_highest_stop_price() -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("bid", "BUY", 10, 98))
    book.submit(stop("low", "SELL", 1, 97, price=98))
    book.submit(stop("high", "SELL", 1, 99, price=98))
    book.submit(make("x", "SELL", 1, 98))  # last 98: "high" (99) fires; its trade at 98 does not fire 97
    assert [p.id for kind, p in book.events if kind == "triggered"] == ["high"]
    assert book.get("low").status is OrderStatus.PENDING


# ------------------------------------------------------- self-match prevention


def smp_book(side: str) -> tuple[NaiveBook, Order, Order]:
    """A book where ``me`` rests 4 at 100 ahead of ``them`` with 4 at 100, on the side opposite ``side``."""
    book = NaiveBook(SYM)
    mine, theirs = make("mine", OPPOSITE[side], 4, 100, owner="me"), make("theirs", OPPOSITE[side], 4, 100, owner="them")
    book.submit(mine)
    book.submit(theirs)
    return book, mine, theirs


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_none_lets_an_owner_trade_with_itself(side: str) -> None:
    book, mine, _ = smp_book(side)
    assert trades_of(book, make("a", side, 2, 100, owner="me")) == [("a", "mine", 100, 2)]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_cancel_newest(side: str) -> None:
    book, mine, _ = smp_book(side)
    agg = make("a", side, 6, 100, owner="me", smp="CANCEL_NEWEST")
    assert book.submit(agg) == []
    assert agg.status is OrderStatus.CANCELLED and agg.remaining_qty == 6
    assert mine.status is OrderStatus.NEW and len(book) == 2
    assert event_summary(book) == [("cancelled", "a")]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_cancel_oldest_goes_on_matching(side: str) -> None:
    book, mine, _ = smp_book(side)
    agg = make("a", side, 6, 100, owner="me", smp="CANCEL_OLDEST")
    assert trades_of(book, agg) == [("a", "theirs", 100, 4)]
    assert mine.status is OrderStatus.CANCELLED and mine.remaining_qty == 4
    assert event_summary(book) == [("cancelled", "mine"), ("trade", "theirs")]
    assert agg.remaining_qty == 2 and book.get("a") is agg  # a GTC remainder rests


def test_smp_cancel_oldest_cancels_the_hidden_part_too() -> None:
    book = NaiveBook(SYM)
    berg = make("ice", "SELL", 9, 100, display_qty=2, owner="me")
    book.submit(berg)
    book.submit(make("a", "BUY", 1, 100, owner="me", smp="CANCEL_OLDEST"))
    assert berg.status is OrderStatus.CANCELLED and berg.remaining_qty == 9 and len(book) == 1


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_cancel_both(side: str) -> None:
    book, mine, theirs = smp_book(side)
    agg = make("a", side, 6, 100, owner="me", smp="CANCEL_BOTH")
    assert book.submit(agg) == []
    assert mine.status is OrderStatus.CANCELLED and agg.status is OrderStatus.CANCELLED
    assert event_summary(book) == [("cancelled", "mine"), ("cancelled", "a")]
    assert len(book) == 1 and book.get("theirs") is theirs


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_decrement_larger_aggressor_goes_on(side: str) -> None:
    book, mine, _ = smp_book(side)
    agg = make("a", side, 6, 100, owner="me", smp="DECREMENT")
    # a=6 > r=4: "mine" cancelled, a drops to 2 without a fill, then trades 2 with "theirs".
    assert trades_of(book, agg) == [("a", "theirs", 100, 2)]
    assert mine.status is OrderStatus.CANCELLED and mine.remaining_qty == 4
    assert (agg.status, agg.filled_qty, agg.remaining_qty) == (OrderStatus.FILLED, 2, 0)
    assert event_summary(book) == [("cancelled", "mine"), ("trade", "theirs")]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_decrement_larger_resting_keeps_its_place(side: str) -> None:
    book = NaiveBook(SYM)
    berg = make("mine", OPPOSITE[side], 10, 100, display_qty=6, owner="me")
    book.submit(berg)
    book.submit(make("theirs", OPPOSITE[side], 4, 100, owner="them"))
    agg = make("a", side, 7, 100, owner="me", smp="DECREMENT")
    assert book.submit(agg) == []
    # r=10 > a=7: aggressor cancelled with its 7; resting drops to 3, visible min(6, 3) = 3, seq kept.
    assert agg.status is OrderStatus.CANCELLED and agg.remaining_qty == 7
    assert (berg.status, berg.remaining_qty, berg.visible_qty, berg.arrival_seq) == (OrderStatus.NEW, 3, 3, 1)
    assert berg.filled_qty == 0  # a DECREMENT is not a fill
    bids, asks = book.depth()
    assert (asks if side == "BUY" else bids) == [(100, 2, 7)]
    assert trades_of(book, make("b", side, 1, 100)) == [("b", "mine", 100, 1)]


@pytest.mark.parametrize("side", ["BUY", "SELL"])
def test_smp_decrement_equal_cancels_both(side: str) -> None:
    book, mine, theirs = smp_book(side)
    agg = make("a", side, 4, 100, owner="me", smp="DECREMENT")
    assert book.submit(agg) == []
    assert mine.status is OrderStatus.CANCELLED and agg.status is OrderStatus.CANCELLED
    assert (mine.remaining_qty, agg.remaining_qty) == (4, 4)
    assert event_summary(book) == [("cancelled", "mine"), ("cancelled", "a")]
    assert len(book) == 1


def test_smp_applies_only_to_crossing_orders() -> None:
    book = NaiveBook(SYM)
    book.submit(make("mine", "SELL", 4, 105, owner="me"))
    agg = make("a", "BUY", 4, 100, owner="me", smp="CANCEL_BOTH")
    book.submit(agg)
    assert agg.status is OrderStatus.NEW and len(book) == 2


# --------------------------------------------------------------------- cancels


def test_cancel_resting_and_pending_stop_and_unknown() -> None:
    book = NaiveBook(SYM, last_price=100)
    r, s = make("r", "BUY", 5, 99), stop("s", "BUY", 5, 110)
    book.submit(r)
    book.submit(s)
    assert book.cancel("r") is True
    assert r.status is OrderStatus.CANCELLED and r.remaining_qty == 5
    assert event_summary(book) == [("cancelled", "r")]
    assert book.cancel("s") is True and s.status is OrderStatus.CANCELLED
    assert book.cancel("s") is False and book.cancel("nope") is False
    assert book.events == [] and len(book) == 0


def test_cancel_after_partial_fill_keeps_the_cancelled_quantity() -> None:
    book = NaiveBook(SYM)
    r = make("r", "SELL", 5, 100)
    book.submit(r)
    book.submit(make("a", "BUY", 2, 100))
    assert book.cancel("r")
    assert (r.status, r.filled_qty, r.remaining_qty) == (OrderStatus.CANCELLED, 2, 3)


def test_cancel_owner_in_arrival_seq_order() -> None:
    book = NaiveBook(SYM, last_price=100)
    book.submit(make("m1", "SELL", 5, 105, owner="me"))
    book.submit(make("t1", "SELL", 5, 105, owner="them"))
    book.submit(stop("m2", "BUY", 1, 110, owner="me"))
    book.submit(make("m3", "BUY", 5, 95, owner="me", display_qty=1))
    book.submit(make("m4", "BUY", 1, 96, owner="me"))
    book.submit(make("x", "SELL", 1, 95, owner="them"))  # m4 filled; m3 untouched
    book.submit(make("y", "SELL", 1, 95, owner="them"))  # m3's peak refreshes: seq 8 -> behind nothing
    assert book.get("m3").arrival_seq == 8
    assert book.cancel_owner("me") == ["m1", "m2", "m3"]
    assert event_summary(book) == [("cancelled", "m1"), ("cancelled", "m2"), ("cancelled", "m3")]
    assert len(book) == 1 and book.cancel_owner("me") == [] and book.cancel_owner("nobody") == []


# ---------------------------------------------------------------------- events


def test_each_call_clears_events_first_but_a_refusal_changes_nothing() -> None:
    book = NaiveBook(SYM)
    book.submit(make("r", "SELL", 1, 100))
    book.submit(make("a", "BUY", 1, 100))
    assert len(book.events) == 1
    book.submit(make("b", "BUY", 1, 90))
    assert book.events == []
    book.submit(make("m", "SELL", 1))
    assert event_summary(book) == [("trade", "b")]
    with pytest.raises(OrderRejected):
        book.submit(make("m2", "SELL", 0))
    assert event_summary(book) == [("trade", "b")]  # still the previous call's
    assert book.cancel("unknown") is False and book.events == []


# --------------------------------------------------------------------- reading


def test_depth_best_and_levels() -> None:
    book = NaiveBook(SYM)
    for i, (side, qty, price) in enumerate([("BUY", 1, 98), ("BUY", 2, 99), ("BUY", 3, 99), ("SELL", 4, 101),
                                            ("SELL", 5, 103), ("SELL", 6, 101)]):
        book.submit(make(f"o{i}", side, qty, price))
    assert book.depth() == ([(99, 2, 5), (98, 1, 1)], [(101, 2, 10), (103, 1, 5)])
    assert book.depth(1) == ([(99, 2, 5)], [(101, 2, 10)])
    assert (book.best_bid(), book.best_ask(), len(book)) == (99, 101, 6)
    assert book.get("o2").qty == 3 and book.get("missing") is None
    assert book.depth(0) == ([], [])
    with pytest.raises(ValueError):
        book.depth(-1)
    book.check_invariants()


def test_check_invariants_reports_a_broken_state() -> None:
    book = NaiveBook(SYM)
    r = make("r", "SELL", 5, 100)
    book.submit(r)
    r.visible_qty = 9  # corrupt it from outside
    with pytest.raises(AssertionError, match="visible/remaining"):
        book.check_invariants()
