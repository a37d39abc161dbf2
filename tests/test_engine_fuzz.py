"""Fuzz ``Engine.handle``: no payload escapes as an exception, and a refusal changes nothing.

Three kinds of input, a few thousand in all: random bytes, random JSON values,
and valid messages mutated a little (a field dropped, set to a random JSON value,
set to null, or a stray field added), which are the ones that reach deep into
the checks and the book. For each payload the answer must be either one
well-formed ``order.reject`` with a known reason code, and then every book is
exactly as before (depth, size, last price, the live orders), or the normal
answer of an accepted message, every frame of it passing the full spec checks.
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edumatcher import engine as engine_module
from edumatcher import messages
from edumatcher.engine import _CACHE_LIMIT, Engine
from edumatcher.messages import (
    STDLIB_CODEC,
    make_book_snapshot_request,
    make_order_cancel,
    make_order_cancel_owner,
    make_order_new,
)
from edumatcher.metrics import OWNER_ENTRY_BYTES, OwnerCounts
from edumatcher.model import Order, RejectReason
from edumatcher.rules import ICEBERG_MAX_PEAKS, PROTECTION_TICKS, WORK_BUDGET, min_display_qty

REASONS = {r.value for r in RejectReason}
IDS = ("s1", "s2", "b1", "st", "c1", "x1")

_SETUP = (
    make_order_new("s1", "XYZ", "SELL", "LIMIT", 10, "bob", price="10.50"),
    make_order_new("s2", "XYZ", "SELL", "LIMIT", 10, "bob", price="10.60", display_qty=2),
    make_order_new("b0", "XYZ", "BUY", "LIMIT", 1, "amy", price="10.50"),  # a trade: last_price set
    make_order_new("b1", "XYZ", "BUY", "LIMIT", 10, "ana", price="10.00", smp="CANCEL_OLDEST"),
    make_order_new("st", "XYZ", "BUY", "STOP", 2, "cy", stop_price="11.00"),
    make_order_new("c1", "ABC", "BUY", "LIMIT", 3, "ana", price="1.00"),
)


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        self.now += 1
        return self.now


def _fresh_engine() -> Engine:
    engine = Engine(["XYZ", "ABC"], clock=_Clock())
    for payload in _SETUP:
        engine.handle(payload)
    return engine


def _state(engine: Engine) -> list[Any]:
    out = []
    for symbol, book in engine.books.items():
        orders = {i: (o.status, o.remaining_qty, o.visible_qty, o.arrival_seq) if (o := book.get(i)) else None for i in IDS}
        out.append((symbol, book.depth(), len(book), book.last_price, orders))
    return out


_ENGINE = _fresh_engine()
_BEFORE = _state(_ENGINE)


def _check_answer(payload: bytes) -> None:
    """Handle ``payload`` on the shared engine; check the answer; start afresh if it was accepted."""
    global _ENGINE, _BEFORE
    frames = _ENGINE.handle(payload)
    assert isinstance(frames, list)
    for topic, body in frames:
        assert type(topic) is bytes and type(body) is bytes
        msg = messages.loads(body)
        messages.builders.check(msg)
        getattr(messages.builders, "explain_" + msg["type"].replace(".", "_"))(msg)
    answers = [messages.loads(body) for _, body in frames]
    if len(answers) == 1 and answers[0]["type"] == "order.reject":
        assert answers[0]["reason"] in REASONS
        assert _state(_ENGINE) == _BEFORE, f"a refused payload changed a book: {payload[:200]!r}"
        return
    # Accepted: no reject anywhere in the answer, and the next example starts from the known state.
    assert all(a["type"] != "order.reject" for a in answers), answers
    _ENGINE = _fresh_engine()
    _BEFORE = _state(_ENGINE)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=10,
)

VALID = st.sampled_from([
    make_order_new("n1", "XYZ", "BUY", "LIMIT", 5, "ana", price="10.50"),
    make_order_new("n2", "XYZ", "SELL", "MARKET", 5, "bob", tif="IOC"),
    make_order_new("n3", "XYZ", "SELL", "STOP_LIMIT", 5, "ana", price="9.00", stop_price="9.50", display_qty=2),
    make_order_new("n4", "ABC", "BUY", "LIMIT", 5, "ana", price=1, tif="FOK", smp="DECREMENT"),
    make_order_cancel("s1", "XYZ", "bob"),
    make_order_cancel_owner("ana", symbol="XYZ"),
    make_book_snapshot_request("XYZ", "ana", levels=2),
]).map(lambda p: json.loads(p))

FIELDS = ("type", "id", "symbol", "side", "order_type", "tif", "qty", "price", "stop_price", "display_qty",
          "owner", "smp", "levels", "status", "arrival_seq", "filled_qty", "remaining_qty")


@st.composite
def mutated(draw: Any) -> bytes:
    d = dict(draw(VALID))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["drop", "set", "null", "add", "dup-id"]))
        if action == "drop" and d:
            d.pop(draw(st.sampled_from(sorted(d))))
        elif action in ("set", "null") and d:
            d[draw(st.sampled_from(sorted(d)))] = None if action == "null" else draw(JSON)
        elif action == "dup-id":
            d["id"] = draw(st.sampled_from(IDS))
        else:
            d[draw(st.sampled_from(FIELDS) | st.text(max_size=8))] = draw(JSON)
    # The stdlib encoder writes what orjson cannot (big ints) and also NaN/Infinity, which must be refused.
    return json.dumps(d).encode()


PAYLOADS = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda v: json.dumps(v).encode()),
    mutated(),
    mutated().map(lambda p: p + b" " * 4096),  # valid-looking but oversized
)

_SETTINGS = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@given(PAYLOADS)
@_SETTINGS
def test_no_payload_escapes_and_refusals_change_nothing(payload: bytes) -> None:
    _check_answer(payload)


@given(st.one_of(JSON.map(lambda v: json.dumps(v).encode()), mutated()))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_same_holds_with_the_stdlib_codec(payload: bytes) -> None:
    original = engine_module._loads
    engine_module._loads = STDLIB_CODEC.loads
    try:
        _check_answer(payload)
    finally:
        engine_module._loads = original


@pytest.mark.parametrize("payload", [
    b"[" * 100_000 + b"]" * 100_000,             # far past the size limit
    b"[" * 2000 + b"]" * 2000,                  # deep nesting within it
    b'{"type":"order.new","id":' + b"[" * 1500 + b"]" * 1500 + b"}",
    b'{"type":"order.new","qty":1' + b"0" * 4000 + b"}",
])
def test_pathological_payloads_are_refused(payload: bytes) -> None:
    for loads in (engine_module._loads, STDLIB_CODEC.loads):
        original = engine_module._loads
        engine_module._loads = loads
        try:
            _check_answer(payload)
        finally:
            engine_module._loads = original


# --------------------------------------------------------------------------- hostile patterns (issue 15)
#
# One message from a hostile client must cause bounded work and memory. Work is
# counted, never timed: Python line events executed while the engine handles the
# message (sys.settrace, so a loop over every level or every order shows up as
# that many events), and the peak of memory allocated meanwhile (tracemalloc, so a
# sorted copy of every level shows up as its size). Each pattern is run on a small
# and a large case; the large one may not cost much more than the small one.


def _rest(engine: Engine, n: int, **fields: Any) -> None:
    """Rest ``n`` orders straight into the book (the engine's path is covered elsewhere; this is setup)."""
    book = engine.books["XYZ"]
    for i in range(n):
        d = {"symbol": "XYZ", "tif": "GTC", **{k: (v(i) if callable(v) else v) for k, v in fields.items()}}
        d["id"] = f"{d.pop('prefix', 'r')}{i}"
        book.submit(Order.from_dict(d), now_ns=1)
        book.events.clear()


def _work(engine: Engine, payload: bytes) -> tuple[list[tuple[bytes, bytes]], int, int]:
    """Handle ``payload``; return its frames, the line events executed, and the peak bytes allocated meanwhile."""
    lines = 0

    def tracer(frame: Any, event: str, arg: Any) -> Any:
        nonlocal lines
        if event == "line":
            lines += 1
        return tracer

    tracemalloc.start()
    sys.settrace(tracer)
    try:
        frames = engine.handle(payload)
    finally:
        sys.settrace(None)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return frames, lines, peak


def _grows(small: tuple[int, int], large: tuple[int, int], what: str) -> None:
    (lines_s, peak_s), (lines_l, peak_l) = small, large
    print(f"\n{what}: small case {lines_s:,} line events, peak {peak_s:,} B; large case {lines_l:,}, peak {peak_l:,} B")
    # The large case is 100x the small one; bounded work may differ by a log factor, not 100x.
    assert lines_l <= 2 * lines_s + 200, what
    assert peak_l <= 2 * peak_s + 64_000, what


def test_an_iceberg_hit_by_a_big_market_order_prints_a_bounded_number_of_trades() -> None:
    # The case, display_qty=1 under a 1e5 iceberg, is refused at entry now (rules.py's
    # minimum peak), and the thinnest iceberg allowed prints at most ICEBERG_MAX_PEAKS trades.
    engine = _fresh_engine()
    refused = engine.handle(make_order_new("ice1", "XYZ", "SELL", "LIMIT", 100_000, "ivy", price="11.00", display_qty=1))
    assert len(refused) == 1 and b'"reason":"BAD_DISPLAY_QTY"' in refused[0][1], refused
    thinnest = min_display_qty(100_000)
    engine.handle(make_order_new("ice2", "XYZ", "SELL", "LIMIT", 100_000, "ivy", price="11.00", display_qty=thinnest))
    frames = engine.handle(make_order_new("mkt", "XYZ", "BUY", "MARKET", 100_000, "max", tif="IOC"))
    trades = [p for topic, p in frames if topic == messages.TOPIC_TRADE_EXECUTED]
    print(f"\nMARKET 1e5 into an iceberg of 1e5 showing {thinnest:,}: {len(frames):,} frames, {len(trades):,} trades")
    # rules.py: one incoming order prints at most ICEBERG_MAX_PEAKS trades per resting order it meets.
    from_iceberg = [p for p in trades if b'"buy_order_id":"mkt","sell_order_id":"ice2"' in p]
    assert 0 < len(from_iceberg) <= ICEBERG_MAX_PEAKS
    assert len(trades) <= ICEBERG_MAX_PEAKS + 20  # plus the setup's few resting orders and peaks
    assert sum(json.loads(p)["qty"] for p in trades) >= 100_000  # the MARKET filled (a triggered stop may add a trade)


def test_fok_with_smp_against_an_owner_holding_many_pending_stops_is_bounded() -> None:
    costs = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        _rest(engine, n, prefix="stp", side="SELL", order_type="STOP", qty=1, stop_price=lambda i: 500 + i % 50, owner="eve")
        engine.handle(make_order_new("lot", "XYZ", "SELL", "LIMIT", 1, "eve", price="10.55"))
        fok = make_order_new("fok", "XYZ", "BUY", "LIMIT", 1, "eve", tif="FOK", price="10.55", smp="CANCEL_NEWEST")
        frames, lines, peak = _work(engine, fok)
        assert frames[0][0] == b"order.ack.eve"
        costs.append((lines, peak))
    _grows(costs[0], costs[1], "FOK + SMP, owner with 1e3 vs 1e5 pending stops")


def test_a_market_order_into_a_deep_book_pays_for_its_own_fills_only() -> None:
    # Issue 26: no fill cap (it cost whoever it capped quantity); a sweep stops at its protection price,
    # and what it costs per trade does not grow with the book.
    costs = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        # n lots a little above the setup's asks, then as many far beyond any protection price
        _rest(engine, n, prefix="a", side="SELL", order_type="LIMIT", qty=1, price=lambda i: 1_070 + i % 20, owner="ann")
        _rest(engine, n, prefix="far", side="SELL", order_type="LIMIT", qty=1, price=lambda i: 5_000 + i % 100, owner="ann")
        frames, lines, peak = _work(engine, make_order_new("mkt", "XYZ", "BUY", "MARKET", 10**8, "max", tif="IOC"))
        trades = [p for topic, p in frames if topic == messages.TOPIC_TRADE_EXECUTED and b'"buy_order_id":"mkt"' in p]
        assert len(trades) == n + 1 + 5  # the n lots, s1's 9 left, s2's 10 in peaks of 2: all within protection
        assert all(float(json.loads(p)["price"]) <= (1_050 + PROTECTION_TICKS) / 100 for p in trades)
        assert b'"reason":"PRICE_PROTECTION"' in frames[-1][1] or any(b"PRICE_PROTECTION" in p for _, p in frames)
        costs.append((lines // len(trades), peak // len(trades)))
    _grows(costs[0], costs[1], "MARKET into 1e3 vs 1e5 resting lots, per trade")


@pytest.mark.parametrize("smp", ["CANCEL_NEWEST", "CANCEL_OLDEST"])
def test_a_fok_behind_many_crossing_orders_is_killed_in_bounded_work(smp: str) -> None:
    costs = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        whose = "eve" if smp == "CANCEL_OLDEST" else "ann"  # CANCEL_OLDEST: the crossing lots are its own
        _rest(engine, n, prefix="a", side="SELL", order_type="LIMIT", qty=1, price=lambda i: 1_100 + i % 100, owner=whose)
        _rest(engine, 1, prefix="own", side="SELL", order_type="LIMIT", qty=1, price=1_200, owner="eve")
        # more than all the crossing quantity, the setup's included: it cannot fill
        fok = make_order_new("fok", "XYZ", "BUY", "LIMIT", n + 10_000, "eve", tif="FOK", price="12.00", smp=smp)
        before = engine.books["XYZ"].depth(), len(engine.books["XYZ"])
        frames, lines, peak = _work(engine, fok)
        assert not [p for topic, p in frames if topic == messages.TOPIC_TRADE_EXECUTED]
        assert (engine.books["XYZ"].depth(), len(engine.books["XYZ"])) == before, "a killed FOK leaves the book as it was"
        costs.append((lines, peak))
    _grows(costs[0], costs[1], f"FOK {smp} behind 1e3 vs 1e5 crossing lots")


@pytest.fixture(scope="module")
def wide_books() -> list[Engine]:
    """Two engines whose ask side has 1,000 and 100,000 one-lot levels above 20.00 (and the usual setup below)."""
    engines = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        _rest(engine, n, prefix="lvl", side="SELL", order_type="LIMIT", qty=1, price=lambda i: 2_000 + i, owner="wes")
        engines.append(engine)
    return engines


def test_fok_for_one_lot_against_100k_levels_is_bounded(wide_books: list[Engine]) -> None:
    costs = []
    for engine in wide_books:
        before = engine.books["XYZ"].depth(5)
        # Crosses the two setup levels, which hold too little: cancelled without walking the 1e5 levels above.
        frames, lines, peak = _work(engine, make_order_new("f1", "XYZ", "BUY", "LIMIT", 100, "fay", tif="FOK", price="10.60"))
        assert b'"status":"CANCELLED"' in frames[0][1] and engine.books["XYZ"].depth(5) == before
        costs.append((lines, peak))
    _grows(costs[0], costs[1], "FOK for 1 lot, 1e3 vs 1e5 ask levels")


def test_a_snapshot_of_a_100k_level_book_is_bounded(wide_books: list[Engine]) -> None:
    costs = []
    for engine in wide_books:
        frames, lines, peak = _work(engine, make_book_snapshot_request("XYZ", "sam"))
        snap = json.loads(frames[0][1])
        assert len(snap["asks"]) == engine.snapshot_levels
        costs.append((lines, peak))
    _grows(costs[0], costs[1], "book.snapshot.request, 1e3 vs 1e5 levels")


def test_a_stop_cascade_costs_the_message_that_starts_it_a_budget_not_the_whole_cascade() -> None:
    # Issue 26: one 1-lot IOC fired every pending stop, whoever owned them (226 ms at 50,000 stops).
    costs = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        _rest(engine, 1, prefix="liq", side="SELL", order_type="LIMIT", qty=n + 1, price=1_070, owner="liz")
        _rest(engine, n, prefix="st", side="BUY", order_type="STOP", qty=1, stop_price=1_060, owner=lambda i: f"o{i % 97}")
        # Takes s1's 9 lots at 10.50 and one at 10.60: that print elects every stop.
        frames, lines, peak = _work(engine, make_order_new("ioc", "XYZ", "BUY", "LIMIT", 10, "ian", tif="IOC", price="10.60"))
        fired = sum(topic.startswith(b"order.triggered") for topic, _ in frames)
        assert 0 < fired <= WORK_BUDGET and engine.books["XYZ"].has_outstanding_work()
        costs.append((lines, peak))
    _grows(costs[0], costs[1], "stop cascade, 1e3 vs 1e5 stops elected by one IOC")


def test_a_mass_cancel_costs_the_message_a_budget() -> None:
    # Issue 26: order.cancel_owner cancelled everything at once (139 ms for 50,000 orders).
    costs = []
    for n in (1_000, 100_000):
        engine = _fresh_engine()
        _rest(engine, n, prefix="m", side="BUY", order_type="LIMIT", qty=1, price=lambda i: 900 - i % 50, owner="mo")
        frames, lines, peak = _work(engine, make_order_cancel_owner("mo"))
        assert 0 < len(frames) <= WORK_BUDGET and all(b'"reason":"MASS_CANCEL"' in p for _, p in frames)
        costs.append((lines, peak))
    _grows(costs[0], costs[1], "order.cancel_owner, 1e3 vs 1e5 orders")


def test_deep_snapshots_are_throttled_per_client(wide_books: list[Engine]) -> None:
    # Issue 26: 73 bytes in, 31 KB out, as often as a client liked.
    engine = wide_books[1]
    deep = make_book_snapshot_request("XYZ", "dee", levels=1_000)
    first, second = engine.handle(deep), engine.handle(deep)
    assert len(first[0][1]) > 10_000 and b'"reason":"THROTTLED"' in second[0][1] and len(second[0][1]) < 400
    assert engine.handle(make_book_snapshot_request("XYZ", "other", levels=1_000))[0][0] == b"book.snapshot.XYZ"
    assert engine.handle(make_book_snapshot_request("XYZ", "dee"))[0][0] == b"book.snapshot.XYZ"  # 20 levels: always


def _flood(limit: int, owners: int) -> Engine:
    """One big resting seller, then ``owners`` distinct buyers taking 1 lot each: two counters grow per owner."""
    engine = Engine(["XYZ"], clock=lambda: 1, owner_limit=limit)
    engine.handle(make_order_new("s0", "XYZ", "SELL", "LIMIT", 10**9, "seller", price="10.00"))
    for i in range(owners):
        engine.handle(make_order_new(f"b{i}", "XYZ", "BUY", "LIMIT", 1, f"o{i}", price="10.00"))
    return engine


def test_per_owner_counters_name_at_most_the_limit_and_lose_no_count() -> None:
    limit = 1_000
    engine = _flood(limit, 100_000)
    orders, fills = engine.metrics.per_owner, engine.fills
    assert isinstance(orders, OwnerCounts) and isinstance(fills, OwnerCounts)
    assert len(orders) == len(fills) == limit  # structural: never more than the limit
    assert sum(orders.values()) + orders.other == 100_000 + 1  # every accepted order counted
    assert sum(fills.values()) + fills.other == 2 * 100_000  # one fill per side of each trade
    assert orders["seller"] == 1 and fills["seller"] == 100_000  # the first owners keep their names
    summary = engine.summary()
    assert len(summary["per_owner"]) == limit and summary["per_owner_other"] == 100_000 + 1 - limit
    assert summary["fills_other_owners"] == fills.other
    # What the two counters hold, object by object, stays under the documented bound.
    held = sum(sys.getsizeof(c) + sum(map(sys.getsizeof, c.values())) for c in (orders, fills))
    # The engine's other per-owner structures are capped too (names, topics).
    assert len(engine._owner_names) <= _CACHE_LIMIT and len(engine._ack_topics) <= engine._ack_topics.limit
    print(f"\n{100_000:,} owners, limit {limit:,}: the two counters hold {held:,} B (sys.getsizeof)")
    assert held <= 2 * limit * OWNER_ENTRY_BYTES
