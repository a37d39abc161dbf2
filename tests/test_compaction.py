"""Lazy deletion and compaction: the heaps stay bounded, and compacting never changes an answer.

The randomized stress test shrinks the compaction constants so rebuilds happen all the
time, calls ``check_invariants()`` after every step, and replays the same operations on
a book that never compacts: the two must agree on every trade, event and level.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from edumatcher.book import COMPACT_FACTOR, COMPACT_SLACK, OrderBook
from edumatcher.model import Order, OrderRejected

SYM = "XYZ"


class CountingBook(OrderBook):
    """Counts its compactions, to prove they happen (or do not)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.compactions = 0

    def _compact(self) -> None:
        self.compactions += 1
        super()._compact()


def limit(oid: str, side: str, qty: int, price: int, owner: str = "ann", **extra: Any) -> Order:
    return Order.from_dict({"id": oid, "symbol": SYM, "side": side, "order_type": "LIMIT", "qty": qty,
                            "price": price, "owner": owner, **extra})


def test_the_default_constants() -> None:
    assert (COMPACT_FACTOR, COMPACT_SLACK) == (2, 64)
    book = OrderBook(SYM)
    assert (book._compact_factor, book._compact_slack) == (2, 64)


@pytest.mark.parametrize(("factor", "slack"), [(0.5, 64), (2, -1), (float("nan"), 0)])
def test_constants_that_cannot_bound_the_heaps_are_refused(factor: float, slack: int) -> None:
    with pytest.raises(ValueError, match="compact_factor"):
        OrderBook(SYM, compact_factor=factor, compact_slack=slack)


def test_after_any_cancel_sequence_the_heaps_stay_within_the_bound() -> None:
    rng = random.Random(11)
    book = CountingBook(SYM)
    ids = []
    for i in range(600):  # bids 1..300 ticks deep, asks above: nothing crosses
        side, price = ("BUY", 1000 - i % 300) if i % 2 else ("SELL", 2000 + i % 300)
        book.submit(limit(f"o{i}", side, 1 + i % 9, price, owner=f"u{i % 5}"))
        book.check_invariants()
        ids.append(f"o{i}")
    # Worst case for lazy deletion: cancel the deepest orders first, so no dead entry reaches a top.
    ids.sort(key=lambda oid: -abs(book.get(oid).price - 1500))  # type: ignore[union-attr]
    half, rest = ids[:400], ids[400:]
    rng.shuffle(rest)
    for oid in half + rest:
        assert book.cancel(oid)
        assert book.heap_entries() <= COMPACT_FACTOR * len(book) + COMPACT_SLACK
        book.check_invariants()
    assert book.compactions > 0 and len(book) == 0 and book.heap_entries() <= COMPACT_SLACK
    book.check_invariants()


def test_cancel_owner_keeps_the_bound_too() -> None:
    book = OrderBook(SYM)
    for i in range(300):
        book.submit(limit(f"o{i}", "BUY", 1, 100 + i % 50, owner="big" if i % 10 else "small"))
        book.check_invariants()
    assert len(book.cancel_owner("big")) == 270
    assert book.heap_entries() <= COMPACT_FACTOR * len(book) + COMPACT_SLACK
    book.check_invariants()


def test_stop_heaps_are_compacted_too() -> None:
    book = CountingBook(SYM, last_price=100, compact_factor=1, compact_slack=0)
    for i in range(50):
        book.submit(Order.from_dict({"id": f"s{i}", "symbol": SYM, "side": "BUY", "order_type": "STOP", "qty": 1,
                                     "stop_price": 200 + i, "owner": "ann"}))
        book.submit(Order.from_dict({"id": f"t{i}", "symbol": SYM, "side": "SELL", "order_type": "STOP", "qty": 1,
                                     "stop_price": 50 - i, "owner": "ann"}))
        book.check_invariants()
    for i in range(49, -1, -1):  # the worst stops first: never the top of their heap
        book.cancel(f"s{i}")
        book.cancel(f"t{i}")
        assert book.heap_entries() == len(book)  # factor 1, slack 0: no dead entry may stay
        book.check_invariants()
    assert book.compactions == 100 and len(book._buy_stops) == len(book._sell_stops) == 0


def test_a_nearly_empty_book_does_not_rebuild_on_every_cancel() -> None:
    book = CountingBook(SYM)
    for i in range(20):
        book.submit(limit(f"o{i}", "BUY", 1, 100 + i))
        book.check_invariants()
    for i in range(10):
        book.cancel(f"o{i}")  # the worst bids: they stay as dead entries
        assert book.heap_entries() == 20 and book._dead == i + 1
    assert book.compactions == 0 and book.heap_entries() == 20 and len(book) == 10
    book.check_invariants()


def test_dead_entries_are_popped_when_they_reach_the_top() -> None:
    book = CountingBook(SYM)
    for i in range(5):
        book.submit(limit(f"b{i}", "BUY", 1, 100 + i))
    book.cancel("b4")
    book.cancel("b3")
    assert book.heap_entries() == 5 and book._dead == 2
    assert book.best_bid() == 102  # pops both dead tops on the way
    assert book.heap_entries() == 3 and book._dead == 0 and book.compactions == 0
    book.check_invariants()
    book.cancel("b1")  # now buried under b2: stays until it surfaces
    trades = book.submit(limit("s", "SELL", 5, 1, owner="bob", tif="IOC"))
    assert [t.buy_order_id for t in trades] == ["b2", "b0"] and book.heap_entries() == 0
    book.check_invariants()


# ------------------------------------------------------------------ stress

OWNERS = ("ann", "bob", "cat")
SMPS = ("NONE", "NONE", "NONE", "CANCEL_NEWEST", "CANCEL_OLDEST", "CANCEL_BOTH", "DECREMENT")


def random_ops(seed: int, n: int) -> list[dict[str, Any]]:
    """Every kind of operation on an 11-tick ladder, so queues, icebergs, stops and self-matches are common."""
    rng = random.Random(seed)
    ops: list[dict[str, Any]] = []
    ids: list[str] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.18 and ids:
            ops.append({"op": "cancel", "id": rng.choice(ids) if rng.random() < 0.9 else "unknown"})
            continue
        if roll < 0.19:
            ops.append({"op": "cancel_owner", "owner": rng.choice(OWNERS)})
            continue
        qty = rng.randint(1, 12)
        d: dict[str, Any] = {"id": f"o{i}", "symbol": SYM, "side": rng.choice(("BUY", "SELL")), "qty": qty,
                             "owner": rng.choice(OWNERS), "smp": rng.choice(SMPS)}
        kind = rng.random()
        price = rng.randint(95, 105)
        if kind < 0.65:
            if rng.random() < 0.7:  # mostly passive, so the book grows deep enough to bury dead entries
                price = rng.randint(95, 101) if d["side"] == "BUY" else rng.randint(99, 105)
            d.update(order_type="LIMIT", price=price, tif=rng.choice(("GTC", "GTC", "GTC", "GTC", "DAY", "IOC", "FOK")))
            if rng.random() < 0.2:
                d["display_qty"] = rng.randint(1, qty)
        elif kind < 0.71:
            d.update(order_type="MARKET", tif=rng.choice(("IOC", "GTC", "FOK")))
        elif kind < 0.84:  # stop prices on the same ladder: many fire, some at once
            d.update(order_type="STOP", stop_price=price, tif=rng.choice(("GTC", "IOC", "FOK")))
        else:
            d.update(order_type="STOP_LIMIT", stop_price=price, price=rng.randint(95, 105),
                     tif=rng.choice(("GTC", "DAY", "IOC", "FOK")))
            if rng.random() < 0.2:
                d["display_qty"] = rng.randint(1, qty)
        if rng.random() < 0.03:
            d["qty"] = 0  # a refusal in the middle of the flow
        if rng.random() < 0.03 and ids:
            d["id"] = rng.choice(ids)  # a duplicate if still live, a reuse if not
        ids.append(d["id"])
        ops.append({"op": "submit", "order": d, "now_ns": i})
    return ops


def apply(book: OrderBook, op: dict[str, Any]) -> Any:
    if op["op"] == "cancel":
        return book.cancel(op["id"])
    if op["op"] == "cancel_owner":
        return book.cancel_owner(op["owner"])
    try:
        return [t.to_dict() for t in book.submit(Order.from_dict(op["order"]), now_ns=op["now_ns"])]
    except OrderRejected as exc:
        return exc.code


def view(book: OrderBook) -> tuple[Any, ...]:
    events = [(kind, payload.to_dict()) for kind, payload in book.events]
    return (events, book.depth(), book.best_bid(), book.best_ask(), book.last_price, len(book))


@pytest.mark.parametrize("seed", range(6))
def test_stress_with_tiny_compaction_constants(seed: int) -> None:
    ops = random_ops(seed, 1500)
    tiny = CountingBook(SYM, last_price=100, compact_factor=1, compact_slack=2)
    never = CountingBook(SYM, last_price=100, compact_factor=10**9, compact_slack=10**9)
    for i, op in enumerate(ops):
        got, want = apply(tiny, op), apply(never, op)
        assert got == want, f"seed {seed} op {i} {op}"
        assert view(tiny) == view(never), f"seed {seed} op {i} {op}"
        tiny.check_invariants()
        never.check_invariants()
        assert tiny.heap_entries() <= len(tiny) + 2
    assert tiny.compactions >= 5 and never.compactions == 0
    assert never.heap_entries() > tiny.heap_entries() or len(never) == never.heap_entries()
