"""Issue 15's memory bounds on the engine side: per-owner counters, and frames that hold only their own bytes.

Sizes are asserted (structure, and ``tracemalloc`` against a documented bound);
figures are printed (run with ``-s``); no time is asserted.
"""

from __future__ import annotations

import sys
import tracemalloc

import pytest

from edumatcher import messages
from edumatcher.bounded_queue import ByteBoundedQueue, held_bytes
from edumatcher.engine import Engine
from edumatcher.messages import make_order_new
from edumatcher.metrics import OWNER_ENTRY_BYTES, OwnerCounts

OWNERS = 100_000

# The flood of 1e5 distinct owners through the engine is in tests/test_engine_fuzz.py.


def test_owner_counts_memory_is_bounded_under_tracemalloc() -> None:
    limit = 2_000
    names = [f"owner-{i}" for i in range(OWNERS)]  # made before tracing: the engine shares names, not copies
    tracemalloc.start()
    try:
        bounded = OwnerCounts(limit)
        base = tracemalloc.get_traced_memory()[0]
        for name in names:
            n = bounded.get(name)  # the engine's inline increment
            if n is not None:
                bounded[name] = n + 1
            else:
                bounded.add(name)
        bounded_growth = tracemalloc.get_traced_memory()[0] - base
        plain: dict[str, int] = {}
        base = tracemalloc.get_traced_memory()[0]
        for name in names:
            plain[name] = plain.get(name, 0) + 1
        plain_growth = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    print(f"\n{OWNERS:,} distinct owners (tracemalloc): unbounded dict +{plain_growth:,} B, "
          f"OwnerCounts(limit={limit:,}) +{bounded_growth:,} B")
    assert bounded_growth <= limit * OWNER_ENTRY_BYTES
    assert plain_growth > bounded_growth  # the bound is what makes the difference


def test_owner_counts_add_and_validation() -> None:
    counts = OwnerCounts(limit=1)
    counts.add("amy", 2)
    counts.add("bob")
    counts.add("amy")
    assert counts == {"amy": 3} and counts.other == 1
    with pytest.raises(ValueError, match="limit must be an int >= 0"):
        OwnerCounts(-1)


def _engine_and_buys(n: int) -> tuple[Engine, list[bytes]]:
    """An engine with one big resting seller, and ``n`` one-lot buys that each print one ~180-byte trade frame."""
    engine = Engine(["XYZ"], clock=lambda: 1)
    engine.handle(make_order_new("s0", "XYZ", "SELL", "LIMIT", 10**9, "seller-000001", price="100.25"))
    buys = [make_order_new(f"buy-{i:08d}", "XYZ", "BUY", "LIMIT", 1, "buyer-000001", price="100.25") for i in range(n)]
    return engine, buys


def test_published_frames_hold_only_their_own_bytes() -> None:
    n = 5_000
    engine, buys = _engine_and_buys(n)
    kept: list[bytes] = []
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for payload in buys:
            kept.extend(p for topic, p in engine.handle(payload) if topic == messages.TOPIC_TRADE_EXECUTED)
        traced = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    reported = sum(map(sys.getsizeof, kept)) + sys.getsizeof(kept)
    length = sum(map(len, kept))
    print(f"\n{len(kept):,} trade frames ({messages.CODEC.name}, right-sized: {messages.RIGHT_SIZED}): "
          f"{length / len(kept):.0f} B each by len, traced growth {traced / len(kept):.0f} B a frame")
    assert len(kept) == n
    # Everything the run kept allocated (frames, the list, the engine's bounded caches)
    # is within 1.5x of what the frames and the list report: no 4 KB buffer behind each.
    assert traced <= 1.5 * reported, (traced, reported)


def test_a_queue_bounded_by_held_bytes_holds_what_it_says() -> None:
    cap = 1 << 19
    engine, buys = _engine_and_buys(4_000)
    queue: ByteBoundedQueue[tuple[bytes, bytes]] = ByteBoundedQueue(cap, size_of=held_bytes)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for payload in buys:
            for frame in engine.handle(payload):
                if frame[0] == messages.TOPIC_TRADE_EXECUTED:
                    queue.put(frame)  # the engine's own frame object, as a publisher would queue it
        traced = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    print(f"\nByteBoundedQueue(max_bytes={cap:,}, size_of=held_bytes): counts {queue.bytes:,} B, "
          f"tracemalloc sees {traced:,} B for {len(queue):,} frames (shed {queue.shed_items:,})")
    assert queue.shed_items > 0 and queue.bytes <= cap
    # held_bytes counts the tuple and the shared topic too (an over-count); not seen:
    # the deque's blocks and the engine's own bounded caches, a few % here. With
    # frames that kept orjson's buffer the queue would hold over 10x its count.
    assert traced <= 1.25 * queue.bytes, (traced, queue.bytes)
