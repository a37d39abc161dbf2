"""``OrderBook``, rule by rule: every paragraph of ``rules.py``, on both sides where there are two.

Expected values are worked out by hand from the spec. Every multi-step test goes through
``Step``, which calls ``check_invariants()`` after each call, so an index that drifts from
the heaps fails at the step that broke it.
"""

from __future__ import annotations

import doctest
import random
from typing import Any

import pytest

import edumatcher.bare_book
import edumatcher.book
import edumatcher.rules
from edumatcher.bare_book import BareBook
from edumatcher.book import OrderBook
from edumatcher.model import TIF, CancelReason, Order, OrderStatus, OrderType, SelfMatch, Side

SYM = "XYZ"
BUY, SELL = Side.BUY, Side.SELL
OPPOSITE = {BUY: SELL, SELL: BUY}
BETTER = {BUY: 1, SELL: -1}  # a better price for this side: a higher bid, a lower ask
NEW, PENDING, PARTIAL = OrderStatus.NEW, OrderStatus.PENDING, OrderStatus.PARTIALLY_FILLED
FILLED, CANCELLED = OrderStatus.FILLED, OrderStatus.CANCELLED
BOTH_SIDES = pytest.mark.parametrize("side", [BUY, SELL], ids=["buy", "sell"])


def order(
    oid: str,
    side: Side,
    qty: int,
    price: int | None = None,
    *,
    kind: OrderType | None = None,
    tif: TIF = TIF.GTC,
    owner: str | None = None,
    stop: int | None = None,
    display: int | None = None,
    smp: SelfMatch = SelfMatch.NONE,
) -> Order:
    """A LIMIT order when ``price`` is given, else MARKET; STOP/STOP_LIMIT when ``stop`` is."""
    if kind is None:
        if stop is not None:
            kind = OrderType.STOP_LIMIT if price is not None else OrderType.STOP
        else:
            kind = OrderType.LIMIT if price is not None else OrderType.MARKET
    return Order(oid, SYM, side, kind, tif, qty, price, stop, display, owner or f"own-{oid}", smp)


class Step:
    """Drives one book and checks its invariants after every call."""

    def __init__(self, last_price: int | None = None, **kwargs: Any) -> None:
        self.book = OrderBook(SYM, last_price, **kwargs)
        self.book.check_invariants()

    def submit(self, o: Order, now_ns: int = 0) -> list[tuple[str, str, int, int]]:
        """Submit; return the trades as (aggressor, resting, price, qty)."""
        trades = self.book.submit(o, now_ns=now_ns)
        self.book.check_invariants()
        assert trades == [p for kind, p in self.book.events if kind == "trade"], "submit must return the event trades"
        return [(t.aggressor_order_id, t.resting_order_id, t.price, t.qty) for t in trades]

    def cancel(self, oid: str) -> bool:
        result = self.book.cancel(oid)
        self.book.check_invariants()
        return result

    def cancel_owner(self, owner: str) -> list[str]:
        result = self.book.cancel_owner(owner)
        self.book.check_invariants()
        return result

    def events(self) -> list[tuple[str, str]]:
        """The last call's events as (kind, order id); a trade shows its resting order's id."""
        return [(kind, p.resting_order_id if kind == "trade" else p.id) for kind, p in self.book.events]

    def depth(self) -> tuple[list[tuple[int, int, int]], list[tuple[int, int, int]]]:
        return self.book.depth()


def state(o: Order) -> tuple[OrderStatus, int, int, int]:
    """(status, filled_qty, remaining_qty, visible_qty)."""
    return (o.status, o.filled_qty, o.remaining_qty, o.visible_qty)


def own_side(side: Side, bids: Any, asks: Any) -> Any:
    return bids if side is BUY else asks


# --------------------------------------------------------------- docs and tour


def test_doctests_of_book_and_bare_book_pass() -> None:
    for module in (edumatcher.book, edumatcher.bare_book):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__


def test_two_orders_make_a_trade_the_tour_of_the_package() -> None:
    book = OrderBook(SYM)
    assert book.submit(order("s1", SELL, 5, 101)) == []
    book.check_invariants()
    (trade,) = book.submit(order("b1", BUY, 3, 102), now_ns=42)
    book.check_invariants()
    assert (trade.price, trade.qty, trade.buy_order_id, trade.sell_order_id, trade.seq) == (101, 3, "b1", "s1", 1)
    assert (trade.aggressor_order_id, trade.resting_order_id, trade.aggressor_side) == ("b1", "s1", BUY)
    assert (trade.buy_owner, trade.sell_owner, trade.symbol, trade.timestamp_ns) == ("own-b1", "own-s1", SYM, 42)
    assert book.last_price == 101 and book.depth() == ([], [(101, 1, 2)]) and len(book) == 1


# ------------------------------------------------------------------ sequencing


def test_arrival_seq_counts_accepted_orders_and_trades_count_from_one() -> None:
    s = Step()
    a, b, c = order("a", SELL, 5, 100), order("b", SELL, 5, 101), order("c", BUY, 7, 101)
    s.submit(a)
    s.submit(b)
    trades = s.book.submit(c)
    s.book.check_invariants()
    assert (a.arrival_seq, b.arrival_seq, c.arrival_seq) == (1, 2, 3)
    assert [t.seq for t in trades] == [1, 2]
    (t3,) = s.book.submit(order("d", BUY, 1, 101))
    s.book.check_invariants()
    assert t3.seq == 3


def test_last_price_starts_at_the_constructor_value_and_follows_trades() -> None:
    s = Step(last_price=77)
    assert s.book.last_price == 77
    s.submit(order("a", SELL, 5, 100))
    assert s.book.last_price == 77  # resting moves nothing
    s.submit(order("b", SELL, 5, 101))
    s.submit(order("c", BUY, 7, 101))
    assert s.book.last_price == 101  # the latest trade's price


def test_now_ns_is_stamped_on_the_order_and_every_trade_of_the_call() -> None:
    s = Step()
    s.submit(order("a", SELL, 1, 100), now_ns=5)
    s.submit(order("b", SELL, 1, 101), now_ns=6)
    c = order("c", BUY, 2, 101)
    trades = s.book.submit(c, now_ns=99)
    s.book.check_invariants()
    assert c.timestamp_ns == 99 and [t.timestamp_ns for t in trades] == [99, 99]
    assert s.book.get("a") is None  # filled
    assert OrderBook(SYM).submit(order("x", BUY, 1, 1)) == []  # now_ns defaults to 0


# --------------------------------------------------------------------- matching


@BOTH_SIDES
def test_better_price_trades_first(side: Side) -> None:
    s = Step()
    other = OPPOSITE[side]
    s.submit(order("worse", side, 5, 100))
    s.submit(order("better", side, 5, 100 + BETTER[side]))
    fills = s.submit(order("agg", other, 6, None))
    assert fills == [("agg", "better", 100 + BETTER[side], 5), ("agg", "worse", 100, 1)]


@BOTH_SIDES
def test_equal_price_goes_by_arrival(side: Side) -> None:
    s = Step()
    for oid in ("first", "second", "third"):
        s.submit(order(oid, side, 2, 100))
    fills = s.submit(order("agg", OPPOSITE[side], 5, 100))
    assert fills == [("agg", "first", 100, 2), ("agg", "second", 100, 2), ("agg", "third", 100, 1)]


@BOTH_SIDES
def test_a_trade_prints_at_the_resting_price(side: Side) -> None:
    s = Step()
    s.submit(order("rest", side, 5, 100))
    through = 100 - 7 * BETTER[side]  # an aggressor willing to pay far more than it needs
    assert s.submit(order("agg", OPPOSITE[side], 5, through)) == [("agg", "rest", 100, 5)]
    assert s.book.last_price == 100


@BOTH_SIDES
def test_a_limit_that_does_not_cross_rests_and_trades_nothing(side: Side) -> None:
    s = Step()
    s.submit(order("rest", side, 5, 100))
    no_cross = 100 + BETTER[side]  # the other side must pay less than the resting price
    agg = order("agg", OPPOSITE[side], 4, no_cross)
    assert s.submit(agg) == []
    assert agg.status is NEW and agg.remaining_qty == 4
    bids, asks = s.depth()
    assert own_side(side, bids, asks) == [(100, 1, 5)]
    assert own_side(OPPOSITE[side], bids, asks) == [(no_cross, 1, 4)]
    assert s.book.last_price is None


@BOTH_SIDES
def test_partial_fills_and_status_conventions(side: Side) -> None:
    s = Step()
    rest = order("rest", side, 10, 100)
    s.submit(rest)
    assert state(rest) == (NEW, 0, 10, 10)
    small = order("small", OPPOSITE[side], 4, 100)
    s.submit(small)
    assert state(rest) == (PARTIAL, 4, 6, 6) and state(small) == (FILLED, 4, 0, 0)
    big = order("big", OPPOSITE[side], 9, 100)
    assert s.submit(big) == [("big", "rest", 100, 6)]
    assert state(rest) == (FILLED, 10, 0, 0)
    assert state(big) == (PARTIAL, 6, 3, 3)  # it rests with what is left
    bids, asks = s.depth()
    assert own_side(side, bids, asks) == [] and own_side(OPPOSITE[side], bids, asks) == [(100, 1, 3)]
    assert s.book.get("rest") is None and s.book.get("big") is big and len(s.book) == 1


@BOTH_SIDES
def test_aggressor_walks_the_levels_in_priority_order(side: Side) -> None:
    s = Step()
    b = BETTER[side]
    s.submit(order("p0", side, 1, 100))
    s.submit(order("p1", side, 2, 100 - b))
    s.submit(order("p0b", side, 3, 100))
    s.submit(order("p2", side, 4, 100 - 2 * b))
    fills = s.submit(order("agg", OPPOSITE[side], 100, 100 - b))  # reaches two levels, not the third
    assert fills == [("agg", "p0", 100, 1), ("agg", "p0b", 100, 3), ("agg", "p1", 100 - b, 2)]
    assert s.book.last_price == 100 - b
    bids, asks = s.depth()
    assert own_side(side, bids, asks) == [(100 - 2 * b, 1, 4)]
    assert own_side(OPPOSITE[side], bids, asks) == [(100 - b, 1, 94)]


@BOTH_SIDES
def test_market_never_rests(side: Side) -> None:
    s = Step()
    s.submit(order("rest", side, 3, 100))
    m = order("m", OPPOSITE[side], 5, None)
    assert s.submit(m) == [("m", "rest", 100, 3)]
    assert state(m) == (CANCELLED, 3, 2, 2)  # remaining_qty keeps the cancelled quantity
    assert s.events() == [("trade", "rest"), ("cancelled", "m")]
    assert s.depth() == ([], []) and len(s.book) == 0
    empty = order("m2", side, 4, None, tif=TIF.DAY)  # a MARKET with a resting TIF still never rests
    assert s.submit(empty) == []
    assert state(empty) == (CANCELLED, 0, 4, 4) and s.events() == [("cancelled", "m2")]


@BOTH_SIDES
def test_ioc_trades_what_it_can_and_cancels_the_rest(side: Side) -> None:
    s = Step()
    s.submit(order("rest", side, 3, 100))
    s.submit(order("far", side, 3, 100 - 5 * BETTER[side]))
    ioc = order("ioc", OPPOSITE[side], 5, 100, tif=TIF.IOC)
    assert s.submit(ioc) == [("ioc", "rest", 100, 3)]
    assert state(ioc) == (CANCELLED, 3, 2, 2)
    assert s.events() == [("trade", "rest"), ("cancelled", "ioc")]
    miss = order("miss", OPPOSITE[side], 5, 100, tif=TIF.IOC)
    assert s.submit(miss) == [] and state(miss) == (CANCELLED, 0, 5, 5)
    assert len(s.book) == 1


@BOTH_SIDES
def test_day_rests_like_gtc(side: Side) -> None:
    s = Step()
    day = order("day", side, 5, 100, tif=TIF.DAY)
    s.submit(day)
    assert day.status is NEW and s.book.get("day") is day


# --------------------------------------------------------------------------- FOK


@BOTH_SIDES
def test_fok_fills_across_levels_when_there_is_enough(side: Side) -> None:
    s = Step()
    b = BETTER[side]
    s.submit(order("r1", side, 4, 100))
    s.submit(order("r2", side, 4, 100 - b))
    fok = order("fok", OPPOSITE[side], 7, 100 - b, tif=TIF.FOK)
    assert s.submit(fok) == [("fok", "r1", 100, 4), ("fok", "r2", 100 - b, 3)]
    assert state(fok) == (FILLED, 7, 0, 0)


@BOTH_SIDES
def test_fok_is_killed_untouched_when_short(side: Side) -> None:
    s = Step()
    b = BETTER[side]
    s.submit(order("r1", side, 4, 100))
    s.submit(order("r2", side, 4, 100 - b))
    s.submit(order("beyond", side, 50, 100 - 2 * b))  # past its limit: does not count
    before = s.depth()
    fok = order("fok", OPPOSITE[side], 9, 100 - b, tif=TIF.FOK)
    assert s.submit(fok) == []
    assert state(fok) == (CANCELLED, 0, 9, 9)
    assert s.events() == [("cancelled", "fok")]
    assert s.depth() == before and s.book.last_price is None


@BOTH_SIDES
def test_fok_counts_hidden_iceberg_quantity(side: Side) -> None:
    s = Step()
    s.submit(order("ice", side, 50, 100, display=10))
    assert own_side(side, *s.depth()) == [(100, 1, 10)]
    fok = order("fok", OPPOSITE[side], 40, 100, tif=TIF.FOK)
    fills = s.submit(fok)
    assert sum(q for *_, q in fills) == 40 and fok.status is FILLED
    assert [q for *_, q in fills] == [10, 10, 10, 10]  # one peak at a time
    too_big = order("fok2", OPPOSITE[side], 11, 100, tif=TIF.FOK)
    assert s.submit(too_big) == [] and too_big.status is CANCELLED  # 10 left in all


@BOTH_SIDES
def test_fok_leaves_out_its_own_owner_when_smp_is_on(side: Side) -> None:
    s = Step()
    s.submit(order("mine", side, 10, 100, owner="ann"))
    s.submit(order("theirs", side, 5, 100, owner="bob"))
    killed = order("fok1", OPPOSITE[side], 12, 100, tif=TIF.FOK, owner="ann", smp=SelfMatch.CANCEL_OLDEST)
    assert s.submit(killed) == [] and killed.status is CANCELLED
    assert s.events() == [("cancelled", "fok1")] and len(s.book) == 2  # nothing else touched
    # With smp NONE its own orders count (and it trades with itself).
    fok = order("fok2", OPPOSITE[side], 12, 100, tif=TIF.FOK, owner="ann")
    assert s.submit(fok) == [("fok2", "mine", 100, 10), ("fok2", "theirs", 100, 2)]


@BOTH_SIDES
def test_fok_with_cancel_oldest_removes_own_orders_then_fills(side: Side) -> None:
    s = Step()
    s.submit(order("mine", side, 10, 100, owner="ann"))
    s.submit(order("theirs", side, 5, 100, owner="bob"))
    fok = order("fok", OPPOSITE[side], 5, 100, tif=TIF.FOK, owner="ann", smp=SelfMatch.CANCEL_OLDEST)
    assert s.submit(fok) == [("fok", "theirs", 100, 5)]
    assert s.events() == [("cancelled", "mine"), ("trade", "theirs")] and fok.status is FILLED


STOPPING_MODES = pytest.mark.parametrize(
    "smp", [SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_BOTH, SelfMatch.DECREMENT], ids=["newest", "both", "decrement"]
)


@BOTH_SIDES
@STOPPING_MODES
def test_fok_is_all_or_none_when_self_match_prevention_would_stop_it(side: Side, smp: SelfMatch) -> None:
    # Issue 15: with CANCEL_NEWEST this FOK used to trade 3 with bob, meet ann's own order
    # and end CANCELLED after a partial fill. Matching would meet ann's order before 8 lots:
    # the FOK is killed untouched, and nothing else in the book moves.
    s = Step()
    s.submit(order("theirs", side, 3, 100, owner="bob"))
    s.submit(order("mine", side, 10, 100, owner="ann"))
    s.submit(order("theirs2", side, 5, 100, owner="cat"))
    fok = order("fok", OPPOSITE[side], 8, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(fok) == []
    assert state(fok) == (CANCELLED, 0, 8, 8)
    assert s.events() == [("cancelled", "fok")] and len(s.book) == 3
    assert own_side(side, *s.depth()) == [(100, 3, 18)]


@BOTH_SIDES
@STOPPING_MODES
def test_fok_fills_when_it_completes_before_its_own_order(side: Side, smp: SelfMatch) -> None:
    s = Step()
    s.submit(order("theirs", side, 8, 100, owner="bob"))
    s.submit(order("mine", side, 10, 100, owner="ann"))
    fok = order("fok", OPPOSITE[side], 8, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(fok) == [("fok", "theirs", 100, 8)] and fok.status is FILLED
    assert s.book.get("mine").remaining_qty == 10  # never reached


@BOTH_SIDES
@STOPPING_MODES
def test_fok_counts_only_the_peaks_ahead_of_its_own_order_at_its_level(side: Side, smp: SelfMatch) -> None:
    # An iceberg whose peak is taken refreshes behind ann's order: only its peak is ahead.
    s = Step()
    s.submit(order("ice", side, 20, 100, display=5, owner="bob"))
    s.submit(order("mine", side, 10, 100, owner="ann"))
    killed = order("fok1", OPPOSITE[side], 6, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(killed) == [] and killed.status is CANCELLED and len(s.book) == 2
    fok = order("fok2", OPPOSITE[side], 5, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(fok) == [("fok2", "ice", 100, 5)] and fok.status is FILLED


@BOTH_SIDES
@STOPPING_MODES
def test_fok_counts_better_levels_in_full_before_its_own_order(side: Side, smp: SelfMatch) -> None:
    s = Step()
    better = 100 + BETTER[side]
    s.submit(order("ice", side, 20, better, display=5, owner="bob"))
    s.submit(order("mine", side, 10, 100, owner="ann"))
    fok = order("fok", OPPOSITE[side], 20, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(fok) == [("fok", "ice", better, 5)] * 4 and fok.status is FILLED
    too_far = order("fok2", OPPOSITE[side], 1, 100, tif=TIF.FOK, owner="ann", smp=smp)
    assert s.submit(too_far) == [] and too_far.status is CANCELLED  # only its own order is left


# ------------------------------------------------------------------------ stops


@BOTH_SIDES
def test_a_stop_waits_pending_and_does_not_show_in_depth(side: Side) -> None:
    s = Step(last_price=100)
    away = 100 + 5 * BETTER[side]  # a buy stop above the market, a sell stop below
    st = order("st", side, 5, None, stop=away)
    assert s.submit(st) == [] and s.events() == []
    assert st.status is PENDING and st.arrival_seq == 1 and s.book.get("st") is st and len(s.book) == 1
    assert s.depth() == ([], []) and s.book.best_bid() is None and s.book.best_ask() is None


@BOTH_SIDES
def test_with_no_last_price_nothing_triggers(side: Side) -> None:
    s = Step()
    st = order("st", side, 5, None, stop=1 if side is BUY else 10**9)  # triggerable at any price
    s.submit(st)
    assert st.status is PENDING


@pytest.mark.parametrize(
    ("side", "stop", "fires"),
    [(BUY, 100, True), (BUY, 101, False), (SELL, 100, True), (SELL, 99, False)],
)
def test_trigger_condition_against_last_price(side: Side, stop: int, fires: bool) -> None:
    s = Step()
    s.submit(order("liq_a", SELL, 10, 105))
    s.submit(order("liq_b", BUY, 10, 95))
    st = order("st", side, 1, None, stop=stop)
    s.submit(st)
    assert st.status is PENDING
    s.submit(order("m1", SELL, 1, 100))
    s.submit(order("m2", BUY, 1, 100))  # a trade at exactly 100
    assert s.book.last_price == (105 if fires and side is BUY else 95 if fires else 100)
    assert (st.status is FILLED) == fires and (st.status is PENDING) == (not fires)


@BOTH_SIDES
def test_a_stop_submitted_when_already_triggerable_fires_at_once(side: Side) -> None:
    s = Step(last_price=100)
    s.submit(order("liq", OPPOSITE[side], 10, 100))
    st = order("st", side, 4, None, stop=100)
    assert s.submit(st) == [("st", "liq", 100, 4)]
    assert s.events() == [("triggered", "st"), ("trade", "liq")]
    assert st.status is FILLED
    # Accepted (seq 2), then triggered (seq 3): two arrival_seqs, PENDING skipped.
    assert st.arrival_seq == 3
    nxt = order("next", side, 1, 1 if side is SELL else 1000)
    s.submit(nxt)
    assert nxt.arrival_seq == 4


@BOTH_SIDES
def test_a_triggered_stop_runs_as_market_and_never_rests(side: Side) -> None:
    s = Step(last_price=100)
    s.submit(order("liq", OPPOSITE[side], 2, 100))
    st = order("st", side, 5, None, stop=100)
    assert s.submit(st) == [("st", "liq", 100, 2)]
    assert state(st) == (CANCELLED, 2, 3, 3) and s.events()[-1] == ("cancelled", "st")
    assert len(s.book) == 0


@BOTH_SIDES
def test_a_triggered_stop_limit_matches_as_limit_and_rests(side: Side) -> None:
    s = Step(last_price=100)
    s.submit(order("liq", OPPOSITE[side], 2, 100))
    s.submit(order("far", OPPOSITE[side], 2, 100 + 3 * BETTER[side]))  # beyond its limit
    sl = order("sl", side, 5, 100, stop=100)
    assert s.submit(sl) == [("sl", "liq", 100, 2)]
    assert state(sl) == (PARTIAL, 2, 3, 3) and sl.arrival_seq == 4  # accept took 3, the trigger 4
    assert own_side(side, *s.depth()) == [(100, 1, 3)]
    assert s.book.get("sl") is sl and sl.order_type is OrderType.STOP_LIMIT


def test_a_stop_with_fok_is_checked_when_it_fires() -> None:
    s = Step(last_price=100)
    s.submit(order("liq", SELL, 2, 100))
    fok = order("st", BUY, 5, None, stop=100, tif=TIF.FOK)
    assert s.submit(fok) == []
    assert s.events() == [("triggered", "st"), ("cancelled", "st")] and fok.remaining_qty == 5


def test_stop_cascade_runs_each_stop_to_completion_in_order() -> None:
    s = Step(last_price=100)
    for oid, price in (("b99", 99), ("b98", 98), ("b97", 97), ("b96", 96)):
        s.submit(order(oid, BUY, 1, price))
    st97 = order("st97", SELL, 1, None, stop=97)
    st99 = order("st99", SELL, 1, None, stop=99)
    st98 = order("st98", SELL, 1, None, stop=98)
    st99b = order("st99b", SELL, 1, None, stop=99)  # same stop price, later: after st99
    for st in (st97, st99, st98, st99b):
        s.submit(st)
        assert st.status is PENDING
    fills = s.submit(order("agg", SELL, 1, 99))
    assert fills == [
        ("agg", "b99", 99, 1),
        ("st99", "b98", 98, 1),
        ("st99b", "b97", 97, 1),
        ("st98", "b96", 96, 1),
    ]
    assert s.events() == [
        ("trade", "b99"),
        ("triggered", "st99"), ("trade", "b98"),
        ("triggered", "st99b"), ("trade", "b97"),
        ("triggered", "st98"), ("trade", "b96"),
        ("triggered", "st97"), ("cancelled", "st97"),  # nothing left to sell into
    ]
    assert s.book.last_price == 96 and len(s.book) == 0


def test_buy_stops_are_looked_at_before_sell_stops_on_every_round() -> None:
    s = Step()  # no last price: both stops wait, though each would fire at 105
    s.submit(order("sell_stop", SELL, 1, None, stop=110))
    s.submit(order("buy_stop", BUY, 1, None, stop=100))
    s.submit(order("a1", SELL, 5, 105))
    s.submit(order("b1", BUY, 5, 104))
    s.submit(order("x", BUY, 1, 105))  # the first trade: 105 fires both
    assert s.events() == [
        ("trade", "a1"),
        ("triggered", "buy_stop"), ("trade", "a1"),
        ("triggered", "sell_stop"), ("trade", "b1"),
    ]
    assert s.book.last_price == 104


@BOTH_SIDES
def test_a_cancelled_stop_never_fires(side: Side) -> None:
    s = Step(last_price=100)
    s.submit(order("liq", OPPOSITE[side], 5, 100))
    s.submit(order("liq2", OPPOSITE[side], 5, 100 + 2 * BETTER[side]))
    st = order("st", side, 1, None, stop=100 + 2 * BETTER[side])
    s.submit(st)
    assert s.cancel("st") and st.status is CANCELLED and s.events() == [("cancelled", "st")]
    s.submit(order("push", side, 5, 100))
    s.submit(order("push2", side, 5, 100 + 2 * BETTER[side]))
    assert s.book.last_price == 100 + 2 * BETTER[side]  # a live stop would have fired here
    assert st.status is CANCELLED and s.events() == [("trade", "liq2")]


# --------------------------------------------------------------------- icebergs


@BOTH_SIDES
def test_an_iceberg_shows_its_peak_only(side: Side) -> None:
    s = Step()
    ice = order("ice", side, 50, 100, display=10)
    s.submit(ice)
    s.submit(order("plain", side, 7, 100))
    assert state(ice) == (NEW, 0, 50, 10)
    assert own_side(side, *s.depth()) == [(100, 2, 17)]


@BOTH_SIDES
def test_an_iceberg_refreshes_at_the_back_of_its_level(side: Side) -> None:
    s = Step()
    ice = order("ice", side, 25, 100, display=10)
    s.submit(ice)
    s.submit(order("plain", side, 5, 100))
    assert s.submit(order("a1", OPPOSITE[side], 10, 100)) == [("a1", "ice", 100, 10)]
    assert state(ice) == (PARTIAL, 10, 15, 10) and ice.arrival_seq == 4  # seqs: ice 1, plain 2, a1 3, refresh 4
    assert own_side(side, *s.depth()) == [(100, 2, 15)]
    # The plain order is now first at the level.
    assert s.submit(order("a2", OPPOSITE[side], 8, 100)) == [("a2", "plain", 100, 5), ("a2", "ice", 100, 3)]
    assert state(ice) == (PARTIAL, 13, 12, 7)


@BOTH_SIDES
def test_a_big_aggressor_eats_one_peak_at_a_time(side: Side) -> None:
    s = Step()
    ice = order("ice", side, 25, 100, display=10)
    s.submit(ice)
    s.submit(order("plain", side, 5, 100))
    fills = s.submit(order("big", OPPOSITE[side], 100, 100))
    assert fills == [("big", "ice", 100, 10), ("big", "plain", 100, 5), ("big", "ice", 100, 10), ("big", "ice", 100, 5)]
    assert state(ice) == (FILLED, 25, 0, 0)


@BOTH_SIDES
def test_an_aggressing_iceberg_matches_its_whole_quantity_and_rests_a_peak(side: Side) -> None:
    s = Step()
    s.submit(order("r1", OPPOSITE[side], 15, 100))
    ice = order("ice", side, 30, 100, display=10)
    assert s.submit(ice) == [("ice", "r1", 100, 15)]  # not limited to its peak
    # visible 10 - 15 -> 0, then the peak refreshes: min(10, 15) with a new arrival_seq.
    assert state(ice) == (PARTIAL, 15, 15, 10) and ice.arrival_seq == 3
    assert own_side(side, *s.depth()) == [(100, 1, 10)]
    s.submit(order("r2", side, 1, 100))
    # The peak is eaten, so the iceberg refreshes behind r2.
    assert s.submit(order("hit", OPPOSITE[side], 11, 100)) == [("hit", "ice", 100, 10), ("hit", "r2", 100, 1)]


def test_when_both_peaks_empty_on_one_trade_the_resting_refreshes_first() -> None:
    s = Step()
    rest = order("rest", SELL, 20, 100, display=5)
    s.submit(rest)  # seq 1
    agg = order("agg", BUY, 20, 99, display=5)
    s.submit(agg)  # seq 2, does not cross
    s.cancel("agg")
    agg2 = order("agg2", BUY, 12, 100, display=5)  # seq 3
    fills = s.submit(agg2)
    # Trade 1: 5 empties both peaks: rest -> 4, agg2 -> 5. Trade 2: 5 again: rest -> 6, agg2 -> 7.
    # Trade 3: 2 (agg2 has 2 left): rest shows 3, agg2 is done.
    assert fills == [("agg2", "rest", 100, 5), ("agg2", "rest", 100, 5), ("agg2", "rest", 100, 2)]
    assert rest.arrival_seq == 6 and agg2.arrival_seq == 7
    assert state(rest) == (PARTIAL, 12, 8, 3) and state(agg2) == (FILLED, 12, 0, 0)


# ------------------------------------------------------- self-match prevention


def smp_book(side: Side) -> Step:
    """ann rests 4 (an iceberg showing 2) at 100, then bob rests 5 at 100, on ``side``."""
    s = Step()
    s.submit(order("ann_rest", side, 4, 100, owner="ann", display=2))
    s.submit(order("bob_rest", side, 5, 100, owner="bob"))
    return s


@BOTH_SIDES
def test_smp_none_lets_an_owner_trade_with_itself(side: Side) -> None:
    s = smp_book(side)
    agg = order("agg", OPPOSITE[side], 2, 100, owner="ann")
    assert s.submit(agg) == [("agg", "ann_rest", 100, 2)]


@BOTH_SIDES
def test_cancel_newest_cancels_the_aggressor_and_stops(side: Side) -> None:
    s = smp_book(side)
    agg = order("agg", OPPOSITE[side], 3, 100, owner="ann", smp=SelfMatch.CANCEL_NEWEST)
    assert s.submit(agg) == []
    assert state(agg) == (CANCELLED, 0, 3, 3) and s.events() == [("cancelled", "agg")]
    assert own_side(side, *s.depth()) == [(100, 2, 7)]  # both resting orders untouched


@BOTH_SIDES
def test_cancel_oldest_cancels_the_resting_order_whole_and_goes_on(side: Side) -> None:
    s = smp_book(side)
    ann_rest = s.book.get("ann_rest")
    agg = order("agg", OPPOSITE[side], 3, 100, owner="ann", smp=SelfMatch.CANCEL_OLDEST)
    assert s.submit(agg) == [("agg", "bob_rest", 100, 3)]
    assert ann_rest is not None and state(ann_rest) == (CANCELLED, 0, 4, 2)  # hidden part cancelled too
    assert s.events() == [("cancelled", "ann_rest"), ("trade", "bob_rest")]
    assert own_side(side, *s.depth()) == [(100, 1, 2)]


@BOTH_SIDES
def test_cancel_both_cancels_both_and_stops(side: Side) -> None:
    s = smp_book(side)
    agg = order("agg", OPPOSITE[side], 3, 100, owner="ann", smp=SelfMatch.CANCEL_BOTH)
    assert s.submit(agg) == []
    assert s.events() == [("cancelled", "ann_rest"), ("cancelled", "agg")]
    assert agg.status is CANCELLED and own_side(side, *s.depth()) == [(100, 1, 5)]


@BOTH_SIDES
def test_decrement_when_the_aggressor_is_bigger(side: Side) -> None:
    s = smp_book(side)
    agg = order("agg", OPPOSITE[side], 7, 100, owner="ann", smp=SelfMatch.DECREMENT)
    assert s.submit(agg) == [("agg", "bob_rest", 100, 3)]  # 7 - 4 = 3 left to trade
    assert s.events() == [("cancelled", "ann_rest"), ("trade", "bob_rest")]
    assert state(agg) == (FILLED, 3, 0, 0)  # filled + remaining < qty after a DECREMENT
    assert own_side(side, *s.depth()) == [(100, 1, 2)]


@BOTH_SIDES
def test_decrement_when_the_aggressor_is_bigger_and_rests(side: Side) -> None:
    s = Step()
    s.submit(order("ann_rest", side, 4, 100, owner="ann"))
    agg = order("agg", OPPOSITE[side], 7, 100, owner="ann", smp=SelfMatch.DECREMENT, display=5)
    assert s.submit(agg) == []
    assert state(agg) == (NEW, 0, 3, 3)  # visible_qty = min(visible, remaining)
    assert own_side(OPPOSITE[side], *s.depth()) == [(100, 1, 3)]


@BOTH_SIDES
def test_decrement_when_the_resting_order_is_bigger_keeps_its_place(side: Side) -> None:
    s = smp_book(side)
    ann_rest = s.book.get("ann_rest")
    assert ann_rest is not None
    agg = order("agg", OPPOSITE[side], 3, 100, owner="ann", smp=SelfMatch.DECREMENT)
    assert s.submit(agg) == []
    assert s.events() == [("cancelled", "agg")] and state(agg) == (CANCELLED, 0, 3, 3)
    assert state(ann_rest) == (NEW, 0, 1, 1) and ann_rest.arrival_seq == 1  # min(2, 1) shows; place kept
    assert own_side(side, *s.depth()) == [(100, 2, 6)]
    assert s.submit(order("bob_agg", OPPOSITE[side], 2, 100, owner="bob")) == [
        ("bob_agg", "ann_rest", 100, 1), ("bob_agg", "bob_rest", 100, 1)]


@BOTH_SIDES
def test_decrement_when_equal_cancels_both(side: Side) -> None:
    s = smp_book(side)
    agg = order("agg", OPPOSITE[side], 4, 100, owner="ann", smp=SelfMatch.DECREMENT)
    assert s.submit(agg) == []
    assert s.events() == [("cancelled", "ann_rest"), ("cancelled", "agg")]
    assert state(agg) == (CANCELLED, 0, 4, 4) and own_side(side, *s.depth()) == [(100, 1, 5)]


@BOTH_SIDES
def test_self_match_after_trading_with_others(side: Side) -> None:
    s = Step()
    s.submit(order("bob_rest", side, 2, 100, owner="bob"))
    s.submit(order("ann_rest", side, 5, 100, owner="ann"))
    agg = order("agg", OPPOSITE[side], 6, 100, owner="ann", smp=SelfMatch.CANCEL_NEWEST)
    assert s.submit(agg) == [("agg", "bob_rest", 100, 2)]
    assert state(agg) == (CANCELLED, 2, 4, 4)
    assert s.events() == [("trade", "bob_rest"), ("cancelled", "agg")]


# ---------------------------------------------------------------------- cancels


@BOTH_SIDES
def test_cancel_removes_a_resting_order(side: Side) -> None:
    s = Step()
    o = order("o", side, 5, 100)
    s.submit(o)
    s.submit(order("p", side, 3, 100))
    assert s.cancel("o") is True
    assert state(o) == (CANCELLED, 0, 5, 5) and s.events() == [("cancelled", "o")]
    assert own_side(side, *s.depth()) == [(100, 1, 3)] and s.book.get("o") is None and len(s.book) == 1
    assert s.cancel("o") is False and s.events() == []  # a failed cancel clears the events too
    assert s.cancel("never") is False
    assert s.book.cancel(["unhashable"]) is False  # type: ignore[arg-type]


def test_best_prices_skip_cancelled_orders() -> None:
    s = Step()
    for oid, side, price in (("b1", BUY, 99), ("b2", BUY, 98), ("a1", SELL, 101), ("a2", SELL, 102)):
        s.submit(order(oid, side, 1, price))
    assert (s.book.best_bid(), s.book.best_ask()) == (99, 101)
    s.cancel("b1")
    s.cancel("a1")
    assert (s.book.best_bid(), s.book.best_ask()) == (98, 102)
    s.cancel("b2")
    s.cancel("a2")
    assert (s.book.best_bid(), s.book.best_ask()) == (None, None)


def test_cancel_owner_cancels_live_orders_in_the_order_they_entered_the_book() -> None:
    """Issue 26: the order they entered the book, so an iceberg keeps its place however often it refreshes
    (it was arrival_seq order, which the refresh changes: the mass cancel can now walk the owner's
    index as it is, a step at a time, instead of sorting it all first)."""
    s = Step(last_price=100)
    s.submit(order("a", BUY, 5, 90, owner="ann"))  # seq 1
    s.submit(order("ice", SELL, 20, 110, owner="ann", display=5))  # seq 2
    s.submit(order("stop", BUY, 1, None, stop=120, owner="ann"))  # seq 3, pending
    s.submit(order("bob", BUY, 5, 95, owner="bob"))  # seq 4
    s.submit(order("hit", BUY, 5, 110, owner="cat"))  # seq 5; ice refreshes: seq 6, same place
    s.submit(order("b", BUY, 1, 80, owner="ann"))  # seq 7
    assert s.cancel_owner("ann") == ["a", "ice", "stop", "b"]
    assert s.events() == [("cancelled", "a"), ("cancelled", "ice"), ("cancelled", "stop"), ("cancelled", "b")]
    assert {p.cancel_reason for _, p in s.book.events} == {CancelReason.MASS_CANCEL}
    assert len(s.book) == 1 and s.book.get("bob") is not None
    assert s.cancel_owner("ann") == [] and s.events() == []
    assert s.cancel_owner("nobody") == []


def test_an_ended_id_may_be_reused() -> None:
    s = Step()
    first = order("x", BUY, 5, 100)
    s.submit(first)
    s.cancel("x")
    again = order("x", BUY, 2, 101)
    s.submit(again)
    assert s.book.get("x") is again and first.status is CANCELLED


# ----------------------------------------------------------------------- events


def test_each_call_replaces_the_events_and_a_refusal_keeps_them() -> None:
    s = Step()
    s.submit(order("a", SELL, 5, 100))
    assert s.book.events == []
    s.submit(order("b", BUY, 2, 100))
    kept = s.book.events
    assert s.events() == [("trade", "a")]
    with pytest.raises(Exception):  # noqa: B017 - any refusal; codes are tested in test_book_rejects
        s.book.submit(order("a", SELL, 1, 100))  # duplicate live id
    assert s.book.events is kept and s.events() == [("trade", "a")]
    s.submit(order("c", BUY, 1, 90))
    assert s.book.events == [] and kept != []  # a new list: the caller may keep the old one


def test_events_hold_the_objects_themselves() -> None:
    s = Step()
    a = order("a", SELL, 5, 100)
    s.submit(a)
    b = order("b", BUY, 7, 100, tif=TIF.IOC)
    trades = s.book.submit(b)
    s.book.check_invariants()
    assert s.book.events == [("trade", trades[0]), ("cancelled", b)]


# -------------------------------------------------------------------- reading


def test_depth_levels_and_order_counts() -> None:
    s = Step()
    for i, price in enumerate((99, 99, 98, 97)):
        s.submit(order(f"b{i}", BUY, i + 1, price))
    for i, price in enumerate((101, 102, 102, 103)):
        s.submit(order(f"a{i}", SELL, 10 + i, price))
    bids, asks = s.depth()
    assert bids == [(99, 2, 3), (98, 1, 3), (97, 1, 4)]
    assert asks == [(101, 1, 10), (102, 2, 23), (103, 1, 13)]
    assert s.book.depth(levels=2) == (bids[:2], asks[:2])
    assert s.book.depth(levels=0) == ([], [])
    for bad in (-1, 1.5, "2"):
        with pytest.raises(ValueError, match="levels"):
            s.book.depth(levels=bad)  # type: ignore[arg-type]


def test_get_and_len_cover_resting_orders_and_pending_stops() -> None:
    s = Step(last_price=100)
    r = order("r", BUY, 1, 90)
    st = order("st", BUY, 1, None, stop=110)
    s.submit(r)
    s.submit(st)
    assert s.book.get("r") is r and s.book.get("st") is st and len(s.book) == 2
    assert s.book.get("missing") is None and s.book.get(["x"]) is None  # type: ignore[arg-type]


# -------------------------------------------------------------- proving it


class LifoAtEqualPrice(OrderBook):
    """The planted bug of the course: newest first among equal prices."""

    def _resting_key(self, o: Order) -> int:
        k0 = -o.price if o.side is BUY else o.price
        return edumatcher.book.heap_key(k0, edumatcher.book.SEQ_SPAN - o.arrival_seq)


def test_resting_key_is_the_one_place_a_subclass_can_plant_a_priority_bug() -> None:
    book = LifoAtEqualPrice(SYM)
    book.submit(order("first", SELL, 1, 100))
    book.submit(order("second", SELL, 1, 100))
    (trade,) = book.submit(order("agg", BUY, 1, 100))
    assert trade.resting_order_id == "second"  # the bug shows in the trades ...
    with pytest.raises(AssertionError) as caught:  # ... and check_invariants sees the key
        book.check_invariants()
    assert "does not match price" in str(caught.value) and "OrderBook 'XYZ'" in str(caught.value)


def test_heap_keys_order_as_their_tuples_and_come_apart_again() -> None:
    rng = random.Random(3)
    span, top = edumatcher.book.SEQ_SPAN, edumatcher.rules.MAX_PRICE
    pairs = [(rng.choice((-1, 1)) * rng.randrange(1, top + 1), rng.randrange(1, span)) for _ in range(2000)]
    pairs += [(-top, 1), (-top, span - 1), (-1, span - 1), (1, 1), (top, span - 1), (5, 2), (5, 1)]
    assert sorted(pairs) == sorted(pairs, key=lambda p: edumatcher.book.heap_key(*p))
    assert all(edumatcher.book.split_key(edumatcher.book.heap_key(*p)) == p for p in pairs)


def test_a_book_near_the_end_of_its_arrival_numbers_renumbers_them_and_keeps_priority() -> None:
    book = OrderBook(SYM, last_price=100)
    for oid, price in (("s1", 101), ("s2", 101), ("s3", 101), ("s4", 102), ("s0", 100)):
        book.submit(order(oid, SELL, 1, price))
    book.submit(order("up", BUY, 2, kind=OrderType.STOP, stop=150))  # a pending stop is renumbered too
    book.cancel("s2")  # a dead key, dropped by the renumbering
    book._seq = edumatcher.book._SEQ_LIMIT  # as if the book had taken 2**48 - 2**40 arrivals
    trades = book.submit(order("b1", BUY, 3, 101))
    assert [t.resting_order_id for t in trades] == ["s0", "s1", "s3"]
    book.check_invariants()
    # Renumbered in arrival order: s1 1, s3 2, s4 3, s0 4, the stop 5; then b1 took 6.
    assert book._seq == 6 and book.heap_entries() == 2  # s4's key and the stop's: the rest were popped
    assert [book.get("s4").arrival_seq, book.get("up").arrival_seq] == [3, 5]


def test_check_invariants_reports_a_corrupted_index_with_the_whole_book() -> None:
    book = OrderBook(SYM)
    book.submit(order("a", BUY, 5, 100))
    book.submit(order("b", SELL, 5, 101))
    book.check_invariants()
    book._bid_levels[100][1] += 1  # an index drifting from the heaps
    with pytest.raises(AssertionError) as caught:
        book.check_invariants()
    message = str(caught.value)
    assert "bid levels" in message and "id='a'" in message and "id='b'" in message


def test_bare_book_prints_the_same_trades_as_the_order_book() -> None:
    rng = random.Random(7)
    full, bare = OrderBook(SYM), BareBook(SYM)
    live: list[str] = []
    for n in range(3000):
        if live and rng.random() < 0.3:
            oid = live.pop(rng.randrange(len(live)))
            assert full.cancel(oid) == bare.cancel(oid)
            full.check_invariants()
            continue
        side = BUY if rng.random() < 0.5 else SELL
        price, qty, owner = 100 + rng.randint(-5, 5), rng.randint(1, 20), f"u{rng.randrange(3)}"
        a, b = order(f"o{n}", side, qty, price, owner=owner), order(f"o{n}", side, qty, price, owner=owner)
        got, want = full.submit(a), bare.submit(b)
        full.check_invariants()
        assert [t.to_dict() for t in got] == [t.to_dict() for t in want]
        assert state(a) == (b.status, b.filled_qty, b.remaining_qty, a.visible_qty) and a.arrival_seq == b.arrival_seq
        live.append(f"o{n}")
    assert len(full) == len(bare) and full.last_price == bare.last_price
    full.check_invariants()
