"""Engine: each message type end to end, one timestamp per message, the reject matrix, the run loop, sinks."""

from __future__ import annotations

import gc
import json
from typing import Any

import pytest

from edumatcher import messages, workloads
from edumatcher.book import OrderBook
from edumatcher.engine import MAX_PAYLOAD, Engine
from edumatcher.messages import (
    make_book_snapshot_request,
    make_order_cancel,
    make_order_cancel_owner,
    make_order_new,
)
from edumatcher.metrics import SAMPLE_EVERY, EngineMetrics
from edumatcher.model import OrderStatus, RejectReason
from edumatcher.reference import NaiveBook
from edumatcher.sinks import END, DiscardingSink, IterableSource, KeepingSink
from edumatcher.workloads import encode_workload


class Clock:
    """A fake ``clock``: counts its calls; returns ``now`` and then steps it by ``step``."""

    def __init__(self, now: int = 1_000, step: int = 1) -> None:
        self.now, self.step, self.calls = now, step, 0

    def __call__(self) -> int:
        self.calls += 1
        value = self.now
        self.now += self.step
        return value


def new(order_id: str, side: str, qty: int, price: Any = None, *, owner: str = "ana", order_type: str = "LIMIT",
        symbol: str = "XYZ", **extra: Any) -> bytes:
    return make_order_new(order_id, symbol, side, order_type, qty, owner, price=price, **extra)


def decoded(frames: list[tuple[bytes, bytes]]) -> list[tuple[str, dict[str, Any]]]:
    return [(topic.decode(), messages.loads(payload)) for topic, payload in frames]


def kinds(frames: list[tuple[bytes, bytes]]) -> list[str]:
    return [messages.loads(payload)["type"] for _, payload in frames]


def state(engine: Engine, ids: tuple[str, ...] = ()) -> list[Any]:
    """Everything a refusal must leave alone: each book's depth, size, last price, and named orders."""
    out = []
    for symbol, book in engine.books.items():
        orders = {i: (o.status, o.remaining_qty, o.visible_qty, o.arrival_seq) if (o := book.get(i)) else None for i in ids}
        out.append((symbol, book.depth(), len(book), book.last_price, orders))
    return out


def assert_spec_valid(frames: list[tuple[bytes, bytes]]) -> None:
    """Every frame passes the full spec checks and sits on the topic its type and owner call for."""
    for topic, payload in frames:
        msg = messages.loads(payload)
        messages.builders.check(msg)
        getattr(messages.builders, "explain_" + msg["type"].replace(".", "_"))(msg)
        scheme = messages.SPEC[msg["type"]].topic
        if scheme == "static":
            assert topic == msg["type"].encode()
        elif scheme == "owner":
            expected = msg["type"] + ("." + msg["owner"] if "owner" in msg else "")
            assert topic == expected.encode()
        else:
            assert topic == f"{msg['type']}.{msg['symbol']}".encode()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def engine(clock: Clock) -> Engine:
    return Engine(["XYZ", "ABC"], clock=clock)


# --------------------------------------------------------------------------- each message type

def test_new_order_is_acked_with_its_state(engine: Engine) -> None:
    frames = engine.handle(new("b1", "BUY", 10, "10.00"))
    assert decoded(frames) == [("order.ack.ana", {
        "type": "order.ack", "id": "b1", "symbol": "XYZ", "owner": "ana", "status": "NEW",
        "filled_qty": 0, "remaining_qty": 10, "ts": 1000,
    })]
    order = engine.books["XYZ"].get("b1")
    assert order.price == 1000 and order.timestamp_ns == 1000 and order.status is OrderStatus.NEW


def test_resting_orders_share_their_symbol_and_owner_strings(engine: Engine) -> None:
    # Each payload decodes to fresh strings; the engine keeps one object per name instead.
    engine.handle(new("b1", "BUY", 10, "10.00", owner="ana-" + "x" * 20))
    engine.handle(new("b2", "BUY", 10, "9.00", owner="ana-" + "x" * 20))
    book = engine.books["XYZ"]
    first, second = book.get("b1"), book.get("b2")
    assert first.owner == "ana-" + "x" * 20 and first.owner is second.owner
    assert first.symbol is second.symbol is book.symbol


def test_the_shared_owner_names_are_bounded(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("edumatcher.engine._CACHE_LIMIT", 3)
    for i in range(10):
        engine.handle(new(f"b{i}", "BUY", 1, "9.00", owner=f"owner{i}"))
    assert len(engine._owner_names) <= 3 and len(engine.books["XYZ"]) == 10


def test_a_cross_trades_at_the_resting_price_written_as_a_decimal_string(engine: Engine) -> None:
    engine.handle(new("s1", "SELL", 5, "10.5", owner="bob"))  # "10.5" and "10.50" are the same price
    frames = engine.handle(new("b1", "BUY", 8, 11, owner="amy"))  # an int is whole currency units: 11.00
    (ack_topic, ack), (trade_topic, trade) = decoded(frames)
    assert ack_topic == "order.ack.amy" and ack["status"] == "PARTIALLY_FILLED"
    assert (ack["filled_qty"], ack["remaining_qty"]) == (5, 3)
    assert trade_topic == "trade.executed"
    assert trade == {
        "type": "trade.executed", "symbol": "XYZ", "seq": 1, "price": "10.50", "qty": 5,
        "buy_order_id": "b1", "sell_order_id": "s1", "buy_owner": "amy", "sell_owner": "bob",
        "aggressor_side": "BUY", "ts": 1001,
    }
    assert engine.books["XYZ"].last_price == 1050
    assert engine.fills == {"amy": 1, "bob": 1}
    assert engine.metrics.per_owner == {"bob": 1, "amy": 1}


@pytest.mark.parametrize(("decimals", "wire_in", "ticks", "wire_out"), [
    (0, "100", 100, "100"),
    (2, "0.07", 7, "0.07"),
    (3, "1.005", 1005, "1.005"),
    (3, 2, 2000, "2.000"),
])
def test_prices_convert_at_the_engines_decimals(decimals: int, wire_in: Any, ticks: int, wire_out: str) -> None:
    engine = Engine(["XYZ"], decimals=decimals, clock=Clock())
    engine.handle(new("s1", "SELL", 1, wire_in, owner="bob"))
    assert engine.books["XYZ"].get("s1").price == ticks
    (_, trade), = [f for f in decoded(engine.handle(new("b1", "BUY", 1, wire_in))) if f[0] == "trade.executed"]
    assert trade["price"] == wire_out
    assert engine.wire_price(ticks) == wire_out


def test_ioc_remainder_is_acked_then_traded_then_cancelled(engine: Engine) -> None:
    engine.handle(new("s1", "SELL", 2, "10.00", owner="bob"))
    frames = engine.handle(new("b1", "BUY", 5, "10.00", tif="IOC"))
    assert [t for t, _ in decoded(frames)] == ["order.ack.ana", "trade.executed", "order.cancelled.ana"]
    _, ack = decoded(frames)[0]
    assert (ack["status"], ack["filled_qty"], ack["remaining_qty"]) == ("CANCELLED", 2, 3)
    _, cancelled = decoded(frames)[2]
    assert cancelled == {"type": "order.cancelled", "id": "b1", "symbol": "XYZ", "owner": "ana",
                         "cancelled_qty": 3, "filled_qty": 2, "reason": "IOC_REMAINDER", "ts": 1001}
    assert_spec_valid(frames)


def test_cancel_by_its_owner_and_not_by_anyone_else(engine: Engine) -> None:
    engine.handle(new("s1", "SELL", 5, "10.00", owner="bob"))
    before = state(engine, ("s1",))
    (topic, reject), = decoded(engine.handle(make_order_cancel("s1", "XYZ", "eve")))
    assert topic == "order.reject.eve" and reject["reason"] == "UNKNOWN_ORDER" and reject["id"] == "s1"
    assert state(engine, ("s1",)) == before
    frames = engine.handle(make_order_cancel("s1", "XYZ", "bob"))
    assert decoded(frames) == [("order.cancelled.bob", {
        "type": "order.cancelled", "id": "s1", "symbol": "XYZ", "owner": "bob",
        "cancelled_qty": 5, "filled_qty": 0, "reason": "OWNER_CANCEL", "ts": 1002,
    })]
    assert len(engine.books["XYZ"]) == 0
    (_, again), = decoded(engine.handle(make_order_cancel("s1", "XYZ", "bob")))
    assert again["reason"] == "UNKNOWN_ORDER"
    assert engine.rejects == {RejectReason.UNKNOWN_ORDER: 2}


def test_cancel_owner_cancels_in_arrival_order_book_by_book(engine: Engine) -> None:
    engine.handle(new("a2", "BUY", 1, "9.00", owner="bob", symbol="ABC"))
    engine.handle(new("x1", "BUY", 1, "9.00", owner="bob"))
    engine.handle(new("x2", "SELL", 1, "11.00", owner="bob"))
    engine.handle(new("keep", "SELL", 1, "12.00", owner="ana"))
    frames = engine.handle(make_order_cancel_owner("bob"))
    assert [(t, m["id"]) for t, m in decoded(frames)] == [
        ("order.cancelled.bob", "x1"), ("order.cancelled.bob", "x2"), ("order.cancelled.bob", "a2"),
    ]
    assert len(engine.books["XYZ"]) == 1 and len(engine.books["ABC"]) == 0
    assert engine.handle(make_order_cancel_owner("bob")) == []  # nothing live: nothing to say
    engine.handle(new("a3", "BUY", 1, "9.00", owner="ana", symbol="ABC"))
    frames = engine.handle(make_order_cancel_owner("ana", symbol="ABC"))
    assert [m["id"] for _, m in decoded(frames)] == ["a3"]
    assert engine.books["XYZ"].get("keep") is not None


def test_a_stop_triggers_after_the_trade_that_moves_the_price(engine: Engine) -> None:
    engine.handle(new("s1", "SELL", 1, "10.00", owner="bob"))
    engine.handle(new("s2", "SELL", 5, "10.10", owner="bob"))
    frames = engine.handle(new("st", "BUY", 2, None, order_type="STOP", stop_price="10.00", owner="cy"))
    assert kinds(frames) == ["order.ack"] and decoded(frames)[0][1]["status"] == "PENDING"
    frames = engine.handle(new("b1", "BUY", 1, "10.00", owner="amy"))
    assert kinds(frames) == ["order.ack", "trade.executed", "order.triggered", "trade.executed"]
    _, triggered = decoded(frames)[2]
    assert triggered["id"] == "st" and triggered["order_type"] == "STOP" and triggered["ts"] == 1003
    assert decoded(frames)[2][0] == "order.triggered.cy"
    _, stop_trade = decoded(frames)[3]
    assert (stop_trade["price"], stop_trade["buy_owner"], stop_trade["ts"]) == ("10.10", "cy", 1003)
    assert_spec_valid(frames)


def test_snapshot_request_answers_on_the_symbols_topic_and_changes_nothing(engine: Engine) -> None:
    for i, price in enumerate(("9.98", "9.99", "9.99", "10.00")):
        engine.handle(new(f"b{i}", "BUY", 10 + i, price))
    engine.handle(new("s1", "SELL", 4, "10.00", owner="bob"))
    before = state(engine, ("b0", "b3"))
    frames = engine.handle(make_book_snapshot_request("XYZ", "amy", levels=2))
    (topic, snap), = decoded(frames)
    assert topic == "book.snapshot.XYZ"
    assert snap == {"type": "book.snapshot", "symbol": "XYZ", "bids": [["10.00", 1, 9], ["9.99", 2, 23]], "asks": [],
                    "orders": 4, "ts": 1005, "last_price": "10.00"}
    assert state(engine, ("b0", "b3")) == before
    (_, full), = decoded(engine.handle(make_book_snapshot_request("ABC", "amy")))
    assert full["bids"] == full["asks"] == [] and "last_price" not in full


# --------------------------------------------------------------------------- one timestamp per message

def test_exactly_one_clock_read_per_message_threaded_through_everything() -> None:
    clock = Clock(now=500, step=7)
    engine = Engine(["XYZ"], clock=clock)
    payloads = [
        new("s1", "SELL", 3, "10.00", owner="bob"),
        new("s2", "SELL", 3, "10.05", owner="bob"),
        new("st", "BUY", 1, None, order_type="STOP", stop_price="10.05", owner="cy"),
        new("b1", "BUY", 9, "10.05", tif="IOC"),  # trades twice, triggers the stop, cancels its remainder
        b"not json",
        make_order_cancel("nope", "XYZ", "ana"),
        make_book_snapshot_request("XYZ", "ana"),
        make_order_cancel_owner("bob"),
        b"x" * (MAX_PAYLOAD + 1),
    ]
    for i, payload in enumerate(payloads):
        frames = engine.handle(payload)
        assert clock.calls == i + 1, "handle must read the clock exactly once per message"
        stamp = 500 + 7 * i
        assert {m["ts"] for _, m in decoded(frames)} <= {stamp}, f"message {i}: every frame carries its message's stamp"
        if i == 3:
            # Stops are looked at once the order is done, so b1's cancel comes before the trigger.
            assert kinds(frames) == ["order.ack", "trade.executed", "trade.executed", "order.cancelled",
                                     "order.triggered", "order.cancelled"]
    assert engine.books["XYZ"].last_price == 1005


# --------------------------------------------------------------------------- the reject matrix

def _order(**changes: Any) -> bytes:
    d: dict[str, Any] = {"type": "order.new", "id": "n1", "symbol": "XYZ", "side": "BUY", "order_type": "LIMIT",
                         "qty": 5, "owner": "ana", "price": "10.00"}
    for key, value in changes.items():
        if value is _DROP:
            d.pop(key)
        else:
            d[key] = value
    return json.dumps(d).encode()


_DROP = object()

REJECTS: list[tuple[str, bytes, str]] = [
    ("invalid JSON", b"not json", "BAD_JSON"),
    ("truncated JSON", b'{"type":"order.new"', "BAD_JSON"),
    ("empty payload", b"", "BAD_JSON"),
    ("invalid UTF-8", b'{"type":"\xff"}', "BAD_JSON"),
    ("NaN", b'{"type":"order.new","qty":NaN}', "BAD_JSON"),
    ("a list", b"[1, 2]", "NOT_OBJECT"),
    ("a number", b"42", "NOT_OBJECT"),
    ("a string", b'"order.new"', "NOT_OBJECT"),
    ("null", b"null", "NOT_OBJECT"),
    ("no type", b'{"id":"n1"}', "MISSING_FIELD"),
    ("unknown type", b'{"type":"order.amend"}', "UNKNOWN_TYPE"),
    ("type not a string", b'{"type":["order.new"]}', "UNKNOWN_TYPE"),
    ("missing qty", _order(qty=_DROP), "MISSING_FIELD"),
    ("missing owner", _order(owner=_DROP), "MISSING_FIELD"),
    ("qty as text", _order(qty="5"), "BAD_QTY"),
    ("qty as float", _order(qty=5.0), "BAD_QTY"),
    ("qty as bool", _order(qty=True), "BAD_QTY"),
    ("negative qty", _order(qty=-5), "BAD_QTY"),
    ("zero qty", _order(qty=0), "BAD_QTY"),
    ("huge qty", _order(qty=10**9 + 1), "BAD_QTY"),
    ("enormous qty", _order(qty=10**30), "BAD_QTY"),
    ("unknown side", _order(side="HOLD"), "UNKNOWN_ENUM"),
    ("lower-case type", _order(order_type="limit"), "UNKNOWN_ENUM"),
    ("unknown tif", _order(tif="GTD"), "UNKNOWN_ENUM"),
    ("side as object", _order(side={"v": "BUY"}), "UNKNOWN_ENUM"),
    ("unknown symbol", _order(symbol="ZZZ"), "UNKNOWN_SYMBOL"),
    ("empty id", _order(id=""), "BAD_FIELD"),
    ("id as number", _order(id=7), "BAD_FIELD"),
    ("id too long", _order(id="x" * 65), "BAD_FIELD"),
    ("owner with newline", _order(owner="ana\n"), "BAD_FIELD"),
    ("unknown field", _order(dispaly_qty=1), "BAD_FIELD"),
    ("symbol as list", _order(symbol=["XYZ"]), "BAD_FIELD"),
    ("off-tick price", _order(price="10.001"), "OFF_TICK"),
    ("off-tick stop price", _order(order_type="STOP_LIMIT", stop_price="10.005"), "OFF_TICK"),
    ("float price", _order(price=10.5), "BAD_PRICE"),
    ("signed price", _order(price="-1.00"), "BAD_PRICE"),
    ("price in exponent form", _order(price="1e3"), "BAD_PRICE"),
    ("zero price", _order(price="0.00"), "BAD_PRICE"),
    ("negative int price", _order(price=-3), "BAD_PRICE"),
    ("price past MAX_PRICE", _order(price=10**14), "BAD_PRICE"),
    ("limit without price", _order(price=_DROP), "MISSING_PRICE"),
    ("limit with null price", _order(price=None), "MISSING_PRICE"),
    ("market with price", _order(order_type="MARKET"), "UNEXPECTED_PRICE"),
    ("stop without stop price", _order(order_type="STOP", price=_DROP), "MISSING_STOP_PRICE"),
    ("limit with stop price", _order(stop_price="9.00"), "UNEXPECTED_STOP_PRICE"),
    ("iceberg peak over qty", _order(display_qty=6), "BAD_DISPLAY_QTY"),
    ("market iceberg", _order(order_type="MARKET", price=_DROP, display_qty=1), "BAD_DISPLAY_QTY"),
    ("duplicate id", _order(id="s1"), "DUPLICATE_ID"),
    ("oversized", _order() + b" " * MAX_PAYLOAD, "TOO_LARGE"),
    ("cancel unknown order", make_order_cancel("zzz", "XYZ", "ana"), "UNKNOWN_ORDER"),
    ("cancel someone else's order", make_order_cancel("s1", "XYZ", "ana"), "UNKNOWN_ORDER"),
    ("cancel on unknown symbol", make_order_cancel("s1", "ZZZ", "bob"), "UNKNOWN_SYMBOL"),
    ("cancel without owner", b'{"type":"order.cancel","id":"s1","symbol":"XYZ"}', "MISSING_FIELD"),
    ("cancel_owner on unknown symbol", make_order_cancel_owner("bob", symbol="ZZZ"), "UNKNOWN_SYMBOL"),
    ("snapshot of unknown symbol", make_book_snapshot_request("ZZZ", "ana"), "UNKNOWN_SYMBOL"),
    ("snapshot with 0 levels", b'{"type":"book.snapshot.request","symbol":"XYZ","owner":"a","levels":0}', "BAD_FIELD"),
]


@pytest.fixture
def busy_engine(clock: Clock) -> Engine:
    engine = Engine(["XYZ", "ABC"], clock=clock)
    for payload in (
        new("s0", "SELL", 1, "10.40", owner="bob"),
        new("b0", "BUY", 1, "10.40", owner="amy"),  # a trade: last_price is set
        new("s1", "SELL", 10, "10.50", owner="bob"),
        new("i1", "SELL", 10, "10.60", owner="bob", display_qty=3),
        new("b1", "BUY", 10, "10.00", owner="ana"),
        new("st", "BUY", 2, None, order_type="STOP", stop_price="11.00", owner="cy"),
        new("c1", "BUY", 3, "1.00", owner="ana", symbol="ABC"),
    ):
        assert kinds(engine.handle(payload))[0] == "order.ack"
    return engine


@pytest.mark.parametrize(("label", "payload", "code"), REJECTS, ids=[r[0] for r in REJECTS])
def test_bad_input_gets_one_reject_and_changes_nothing(busy_engine: Engine, label: str, payload: bytes, code: str) -> None:
    ids = ("s0", "b0", "s1", "i1", "b1", "st", "c1", "n1")
    before = state(busy_engine, ids)
    calls = busy_engine.clock.calls  # type: ignore[attr-defined]
    frames = busy_engine.handle(payload)
    assert busy_engine.clock.calls == calls + 1  # type: ignore[attr-defined]
    assert len(frames) == 1, f"{label}: expected exactly one frame, got {decoded(frames)}"
    (topic, reject), = decoded(frames)
    assert reject["type"] == "order.reject" and reject["reason"] == code, f"{label}: {reject}"
    assert reject["text"]
    assert_spec_valid(frames)
    assert topic == ("order.reject." + reject["owner"] if "owner" in reject else "order.reject")
    assert state(busy_engine, ids) == before, f"{label}: a refused message changed the book"
    # The book still works and its sequence did not move: the next order gets the next number.
    seq_before = max(o.arrival_seq for b in busy_engine.books.values() for i in ids if (o := b.get(i)))
    busy_engine.handle(new("probe", "BUY", 1, "1.00"))
    assert busy_engine.books["XYZ"].get("probe").arrival_seq == seq_before + 1


def test_rejects_echo_only_valid_ids_and_owners(busy_engine: Engine) -> None:
    (topic, reject), = decoded(busy_engine.handle(_order(qty=0, id="n\n1")))
    assert "id" not in reject and reject["owner"] == "ana" and topic == "order.reject.ana"
    (topic, reject), = decoded(busy_engine.handle(_order(qty=0, owner=["x"])))
    assert "owner" not in reject and reject["id"] == "n1" and topic == "order.reject"
    long_text = busy_engine.handle(_order(side="S" * 3000))
    assert len(messages.loads(long_text[0][1])["text"]) <= messages.MAX_TEXT_LEN


def test_reject_counts_by_reason_in_the_summary(busy_engine: Engine) -> None:
    for payload, _ in ((b"[]", 0), (b"{", 0), (b"{", 0)):
        busy_engine.handle(payload)
    summary = busy_engine.summary()
    assert summary["rejects"] == {"BAD_JSON": 2, "NOT_OBJECT": 1}
    assert summary["live_orders"] == {"XYZ": 4, "ABC": 1}
    assert summary["fills_per_owner"] == {"amy": 1, "bob": 1}


# --------------------------------------------------------------------------- the unchecked builders, pinned

@pytest.mark.parametrize("book_factory", [OrderBook, NaiveBook], ids=["OrderBook", "NaiveBook"])
def test_every_frame_the_engine_writes_passes_the_full_checks(book_factory: Any) -> None:
    # The engine builds its output with unchecked builders (it is the authority); this
    # decodes everything it wrote over a mixed workload and puts it through every rule.
    ops = workloads.steady_state(1500, seed=4, depth=100)
    engine = Engine([workloads.SYMBOL], clock=Clock(), snapshot_interval_ns=0, book_factory=book_factory)
    sink = KeepingSink()
    engine.run(IterableSource(encode_workload(ops) + [make_book_snapshot_request(workloads.SYMBOL, "ana", levels=1000)]), sink)
    assert_spec_valid(sink.frames)
    seen = {messages.loads(p)["type"] for _, p in sink.frames}
    assert seen >= {"order.ack", "order.reject", "order.cancelled", "trade.executed", "book.snapshot", "book.depth"}


def test_the_engine_writes_the_same_bytes_over_either_book() -> None:
    payloads = encode_workload(workloads.steady_state(2000, seed=9, depth=150))
    outputs = []
    for factory in (OrderBook, NaiveBook):
        engine = Engine([workloads.SYMBOL], clock=Clock(), book_factory=factory)
        sink = KeepingSink()
        engine.run(IterableSource(payloads), sink)
        outputs.append(sink.frames)
    assert outputs[0] == outputs[1]


# --------------------------------------------------------------------------- the run loop

class FakePolicy:
    """Records what the run loop asks of a collector policy."""

    def __init__(self) -> None:
        self.started = False
        self.ticks: list[bool] = []
        self.log: list[str] = []

    def start(self) -> None:
        self.started = True
        self.log.append("start")

    def stop(self) -> None:
        self.started = False
        self.log.append("stop")

    def arm_freeze(self) -> None:
        assert self.started
        self.log.append("arm")

    def tick(self, idle: bool) -> None:
        assert self.started
        self.ticks.append(idle)


def test_run_handles_until_end_and_counts_exactly() -> None:
    engine = Engine(["XYZ"], clock=Clock(), snapshot_interval_ns=10**12)
    sink = DiscardingSink()
    payloads = [new(f"b{i}", "BUY", 1, "9.00") for i in range(50)]
    summary = engine.run(IterableSource(payloads), sink)
    assert summary["messages"] == 50 == engine.metrics.messages
    assert sink.frames == 50 + 2  # 50 acks, and one snapshot + depth after the first message
    assert summary["samples"] == 50 // SAMPLE_EVERY
    assert summary["per_owner"] == {"ana": 50}


def test_run_stops_after_max_messages_and_resumes() -> None:
    engine = Engine(["XYZ"], clock=Clock(), snapshot_interval_ns=10**12)
    source = IterableSource([None] + [new(f"b{i}", "BUY", 1, "9.00") for i in range(10)])
    engine.run(source, DiscardingSink(), max_messages=4)
    assert engine.metrics.messages == 4 and len(engine.books["XYZ"]) == 4
    engine.run(source, DiscardingSink(), max_messages=0)
    assert engine.metrics.messages == 4
    engine.run(source, DiscardingSink())
    assert engine.metrics.messages == 10 and len(engine.books["XYZ"]) == 10
    with pytest.raises(ValueError):
        engine.run(source, DiscardingSink(), max_messages=-1)


def test_run_drives_the_collector_policy_idle_and_busy() -> None:
    policy = FakePolicy()
    engine = Engine(["XYZ"], clock=Clock(), gc_policy=policy)
    source = IterableSource([new("b1", "BUY", 1, "9.00"), None, None, new("b2", "BUY", 1, "9.00"), None])
    engine.run(source, DiscardingSink())
    assert policy.ticks == [False, True, True, False, True]
    assert policy.log == ["start", "arm", "stop"]  # started (and armed: trading starts) by run, so stopped by run
    already = FakePolicy()
    already.start()
    Engine(["XYZ"], clock=Clock(), gc_policy=already).run(IterableSource([None]), DiscardingSink())
    assert already.started and already.log == ["start"]  # someone else's start: left running


def test_run_installs_the_gc_monitor_only_for_the_run() -> None:
    engine = Engine(["XYZ"], clock=Clock())
    monitor = engine.metrics.gc_monitor
    assert not monitor.installed

    class CollectingSource:
        def __init__(self) -> None:
            self.n = 0

        def poll(self) -> Any:
            self.n += 1
            if self.n > 3:
                return END
            gc.collect()  # a collection during the run is seen by the monitor
            return new(f"b{self.n}", "BUY", 1, "9.00")

    engine.run(CollectingSource(), DiscardingSink())
    assert not monitor.installed and monitor.count >= 3


def test_sampled_timing_times_one_message_in_sample_every() -> None:
    engine = Engine(["XYZ"], clock=Clock(), metrics=EngineMetrics(ring_size=64))
    engine.run(IterableSource([b"{}"] * (SAMPLE_EVERY * 5 + 3)), DiscardingSink())
    ring = engine.metrics.ring
    assert ring.count == 5 and all(d > 0 for d in ring.durations())
    assert engine.metrics.messages == SAMPLE_EVERY * 5 + 3


class TimedSource:
    """A source that sets the fake clock before handing out each item: ``(time, payload or None)``."""

    def __init__(self, clock: Clock, items: list[tuple[int, bytes | None]]) -> None:
        self.clock, self.items = clock, iter(items)

    def poll(self) -> Any:
        try:
            at, payload = next(self.items)
        except StopIteration:
            return END
        self.clock.now = at
        return payload


def _published(sink: KeepingSink, kind: str) -> list[tuple[str, int]]:
    return [(messages.loads(p)["symbol"], messages.loads(p)["ts"]) for t, p in sink.frames if t.startswith(kind.encode())]


def test_snapshots_are_throttled_per_symbol() -> None:
    clock = Clock(step=0)
    engine = Engine(["XYZ", "ABC"], clock=clock, snapshot_interval_ns=100)
    sink = KeepingSink()
    engine.run(TimedSource(clock, [
        (0, new("b1", "BUY", 1, "9.00")),        # first change of XYZ: published at once
        (10, new("a1", "BUY", 1, "9.00", symbol="ABC")),  # ABC never published: at once too
        (50, new("b2", "BUY", 1, "9.00")),       # XYZ dirty again, due at 100
        (99, None),                              # idle, not yet due
        (100, None),                             # idle and due: XYZ published
        (150, None),                             # clean: nothing
        (160, make_book_snapshot_request("XYZ", "ana")),  # a request is answered, not a change
        (170, make_order_cancel("b1", "XYZ", "ana")),      # dirty, due at 200
        (180, b"garbage"),                       # a reject changes nothing
        (250, None),                             # due: XYZ published
    ]), sink)
    assert _published(sink, "book.depth") == [("XYZ", 0), ("ABC", 10), ("XYZ", 100), ("XYZ", 250)]
    assert _published(sink, "book.snapshot") == [("XYZ", 0), ("ABC", 10), ("XYZ", 100), ("XYZ", 160), ("XYZ", 250)]
    (_, depth), = [(t, messages.loads(p)) for t, p in sink.frames if t == b"book.depth.XYZ"][-1:]
    assert depth == {"type": "book.depth", "symbol": "XYZ", "bid_qty": 1, "ask_qty": 0, "imbalance": 1.0, "ts": 250,
                     "best_bid": "9.00"}


def test_snapshot_interval_zero_publishes_after_every_change() -> None:
    engine = Engine(["XYZ"], clock=Clock(), snapshot_interval_ns=0)
    sink = KeepingSink()
    engine.run(IterableSource([new(f"b{i}", "BUY", 1, "9.00") for i in range(3)]), sink)
    assert [t for t, _ in sink.frames] == [b"order.ack.ana", b"book.snapshot.XYZ", b"book.depth.XYZ"] * 3


def test_flush_snapshots_is_callable_between_messages(engine: Engine) -> None:
    assert engine.flush_snapshots(0) == []
    engine.handle(new("b1", "BUY", 1, "9.00"))
    frames = engine.flush_snapshots(5)
    assert [t for t, _ in frames] == [b"book.snapshot.XYZ", b"book.depth.XYZ"]
    assert engine.flush_snapshots(10**15) == []  # clean until the next change


# --------------------------------------------------------------------------- construction

@pytest.mark.parametrize(("args", "kwargs"), [
    ([], {}),
    (["XYZ", "XYZ"], {}),
    (["bad\nsym"], {}),
    (["X" * 17], {}),
    (["XYZ"], {"decimals": -1}),
    (["XYZ"], {"decimals": 13}),
    (["XYZ"], {"decimals": 2.0}),
    (["XYZ"], {"snapshot_interval_ns": -1}),
    (["XYZ"], {"snapshot_levels": 0}),
])
def test_constructor_refuses_bad_settings(args: list[str], kwargs: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Engine(args, **kwargs)


def test_default_engine_uses_orderbook_and_the_monotonic_clock() -> None:
    engine = Engine(["XYZ"])
    assert isinstance(engine.books["XYZ"], OrderBook)
    (_, ack), = decoded(engine.handle(new("b1", "BUY", 1, "9.00")))
    assert ack["ts"] > 0


# --------------------------------------------------------------------------- sinks

def test_iterable_source_yields_payloads_idle_ticks_then_end_forever() -> None:
    source = IterableSource(iter([b"a", None, b"b"]))
    assert [source.poll() for _ in range(5)] == [b"a", None, b"b", END, END]
    assert repr(END) == "END"


def test_discarding_sink_counts_and_keeps_nothing() -> None:
    sink = DiscardingSink()
    sink.send(b"t", b"p")
    sink.send_many([(b"t", b"p")] * 3)
    sink.send_many([])
    assert sink.frames == 4 == len(sink)
    assert not hasattr(sink, "__dict__")  # slotted: nowhere to keep a frame


def test_keeping_sink_keeps_every_frame_in_order() -> None:
    sink = KeepingSink()
    sink.send_many([(b"a", b"1"), (b"b", b"2")])
    sink.send(b"c", b"3")
    assert sink.frames == [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")] and sink.topics() == [b"a", b"b", b"c"]
    sink.clear()
    assert len(sink) == 0


# --------------------------------------------------------------------------- issue 26: reasons, budgets, maintenance

def test_every_cancel_on_the_wire_says_why(engine: Engine) -> None:
    """One of each CancelReason, as a client sees it in order.cancelled."""
    reasons: dict[str, str] = {}

    def collect(frames: list[tuple[bytes, bytes]]) -> None:
        for _, msg in decoded(frames):
            if msg["type"] == "order.cancelled":
                reasons[msg["id"]] = msg["reason"]

    engine.handle(new("s1", "SELL", 2, "10.00", owner="bob"))
    collect(engine.handle(new("ioc", "BUY", 5, "10.00", tif="IOC")))  # 2 filled, 3 left: IOC_REMAINDER
    collect(engine.handle(new("fok", "BUY", 5, "10.00", tif="FOK")))  # nothing crosses: FOK_KILLED
    engine.handle(new("own", "SELL", 1, "10.00", owner="ana"))
    collect(engine.handle(new("smp", "BUY", 1, "10.00", smp="CANCEL_NEWEST")))  # meets its own: SELF_MATCH
    collect(engine.handle(make_order_cancel("own", "XYZ", "ana")))  # OWNER_CANCEL
    engine.handle(new("m1", "BUY", 1, "9.00", owner="mo"))
    collect(engine.handle(make_order_cancel_owner("mo")))  # MASS_CANCEL
    engine.handle(new("a1", "SELL", 1, "10.00", owner="ann"))
    engine.handle(new("a2", "SELL", 1, "12.00", owner="ann"))  # 200 ticks above: beyond the protection price
    collect(engine.handle(new("mkt", "BUY", 5, None, order_type="MARKET", tif="IOC")))  # PRICE_PROTECTION
    assert reasons == {"ioc": "IOC_REMAINDER", "fok": "FOK_KILLED", "smp": "SELF_MATCH", "own": "OWNER_CANCEL",
                       "m1": "MASS_CANCEL", "mkt": "PRICE_PROTECTION"}


def test_work_left_by_a_message_goes_on_in_maintenance() -> None:
    clock = Clock(now=1_000, step=10)
    engine = Engine(["XYZ"], clock=clock, book_factory=lambda s: OrderBook(s, budget=4))
    engine.handle(new("liq", "SELL", 100, "10.00", owner="liz"))
    for i in range(10):  # no last price yet: they wait
        engine.handle(new(f"st{i}", "BUY", 1, None, order_type="STOP", stop_price="10.00", owner=f"o{i}"))
    frames = engine.handle(new("go", "BUY", 1, "10.00", owner="ian"))  # prints 10.00: elects all ten stops
    triggered = [m["id"] for _, m in decoded(frames) if m["type"] == "order.triggered"]
    assert 0 < len(triggered) < 10 and engine.books["XYZ"].has_outstanding_work()
    sink = KeepingSink()
    calls = 0
    while engine.books["XYZ"].needs_maintenance():
        before = clock.now
        engine.maintain(sink, idle=True)
        calls += 1
        assert clock.now > before  # idle: stamped with a fresh clock read
    triggered += [m["id"] for _, m in decoded(sink.frames) if m["type"] == "order.triggered"]
    assert triggered == [f"st{i}" for i in range(10)] and calls > 1  # in order, over several calls
    assert_spec_valid(sink.frames)


def _case_payloads(seed: int, ops: int) -> list[bytes | None]:
    """A differential case (every order type, stops, mass cancels) as wire payloads at 0 decimals, with idle ticks."""
    from edumatcher.differential import generate_case

    owners: dict[str, str] = {}
    out: list[bytes | None] = []
    for op in generate_case(seed, ops, maintain=0.1).ops:
        if op["op"] == "maintain":
            out.append(None)
        elif op["op"] == "cancel":
            out.append(make_order_cancel(op["id"], "XYZ", owners.get(op["id"], "ann")))
        elif op["op"] == "cancel_owner":
            out.append(make_order_cancel_owner(op["owner"]))
        else:
            d = op["order"]
            try:
                out.append(make_order_new(d["id"], d["symbol"], d["side"], d["order_type"], d["qty"], d["owner"],
                                          tif=d.get("tif"), price=d.get("price"), stop_price=d.get("stop_price"),
                                          display_qty=d.get("display_qty"), smp=d.get("smp")))
                owners[d["id"]] = d["owner"]
            except Exception:  # a defective order the builder refuses: send the raw JSON, for a reject
                out.append(json.dumps({"type": "order.new", **d}).encode())
    return out


@pytest.mark.parametrize("budget", [1, 3])
def test_the_same_payloads_and_idle_ticks_give_the_same_frames_over_either_book(budget: int) -> None:
    """Deterministic: frames depend on the calls, never on time; and NaiveBook with the same budget agrees byte for byte."""
    payloads = [p for seed in range(4) for p in _case_payloads(seed, 150)]
    outputs = []
    for factory in (OrderBook, OrderBook, NaiveBook):
        engine = Engine(["XYZ"], decimals=0, clock=Clock(), book_factory=lambda s, f=factory: f(s, budget=budget))
        sink = KeepingSink()
        engine.run(IterableSource(payloads), sink)
        outputs.append(sink.frames)
        assert_spec_valid(sink.frames)
    assert outputs[0] == outputs[1] == outputs[2]
    assert any(b'"reason":"MASS_CANCEL"' in p for _, p in outputs[0])


def test_deep_snapshots_are_served_once_per_interval_per_client_and_symbol() -> None:
    clock = Clock(now=1_000, step=0)
    engine = Engine(["XYZ", "ABC"], clock=clock, snapshot_request_interval_ns=1_000)
    deep = make_book_snapshot_request("XYZ", "sam", levels=50)
    assert kinds(engine.handle(deep)) == ["book.snapshot"]
    (_, refused), = decoded(engine.handle(deep))
    assert refused["reason"] == "THROTTLED" and refused["owner"] == "sam"
    assert kinds(engine.handle(make_book_snapshot_request("ABC", "sam", levels=50))) == ["book.snapshot"]  # other symbol
    assert kinds(engine.handle(make_book_snapshot_request("XYZ", "sue", levels=50))) == ["book.snapshot"]  # other client
    assert kinds(engine.handle(make_book_snapshot_request("XYZ", "sam"))) == ["book.snapshot"]  # 20 levels: always
    clock.now += 1_000
    assert kinds(engine.handle(deep)) == ["book.snapshot"]  # the interval has passed
    with pytest.raises(ValueError, match="snapshot_request_interval_ns"):
        Engine(["XYZ"], snapshot_request_interval_ns=-1)


def test_the_default_engine_books_have_the_work_budget() -> None:
    from edumatcher.rules import WORK_BUDGET

    assert Engine(["XYZ"]).books["XYZ"].budget == WORK_BUDGET
