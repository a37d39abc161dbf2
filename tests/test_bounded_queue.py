"""ByteBoundedQueue: never holds more than its cap, sheds and counts instead, and keeps FIFO order.

By default it counts real memory (``held_bytes`` + ``ENTRY_OVERHEAD``, checked
against ``tracemalloc``); the arithmetic tests count payload bytes
(``size_of=len, entry_overhead=0``) so their figures are exact on any build.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from edumatcher.bounded_queue import ENTRY_OVERHEAD, ByteBoundedQueue, held_bytes


def _payload_queue(cap: int) -> ByteBoundedQueue[bytes]:
    """A queue bounded by payload bytes: the arithmetic of the cap, free of object headers."""
    return ByteBoundedQueue(cap, size_of=len, entry_overhead=0)


def test_put_sheds_and_counts_what_does_not_fit() -> None:
    q = _payload_queue(10)
    assert q.put(b"x" * 6) is True
    assert q.put(b"y" * 5) is False  # 11 > 10: shed, not queued
    assert q.put(b"z" * 4) is True  # exactly 10 fits
    assert (len(q), q.bytes, q.peak_bytes) == (2, 10, 10)
    assert (q.shed_items, q.shed_bytes, q.put_items, q.put_bytes) == (1, 5, 2, 10)
    assert list(q) == [b"x" * 6, b"z" * 4]


def test_an_item_larger_than_the_cap_never_fits_even_when_empty() -> None:
    q = _payload_queue(3)
    assert q.put(b"abcd") is False
    assert len(q) == 0 and q.bytes == 0 and q.shed_items == 1 and q.shed_bytes == 4


def test_get_frees_exactly_what_put_counted_and_keeps_fifo_order() -> None:
    q = _payload_queue(100)
    for payload in (b"a", b"bb", b"ccc"):
        assert q.put(payload)
    assert q.get() == b"a" and q.bytes == 5
    assert q.drain(1) == [b"bb"] and q.bytes == 3
    assert q.drain() == [b"ccc"] and q.bytes == 0 and not q
    with pytest.raises(IndexError, match="empty ByteBoundedQueue"):
        q.get()
    assert q.drain() == []


def test_size_is_taken_once_at_put_so_a_mutated_item_cannot_corrupt_the_accounting() -> None:
    q: ByteBoundedQueue[bytearray] = ByteBoundedQueue(100, size_of=len, entry_overhead=0)
    item = bytearray(10)
    q.put(item)
    item.extend(bytes(50))  # the caller changes the item after queueing it
    assert q.bytes == 10
    q.get()
    assert q.bytes == 0


def test_custom_size_of_and_its_validation() -> None:
    q: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: len(s.encode()), entry_overhead=0)
    assert q.put("é" * 4) is True and q.bytes == 8
    bad: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: -1)
    with pytest.raises(ValueError, match="non-negative int"):
        bad.put("x")
    assert len(bad) == 0 and bad.shed_items == 0, "a refused size changes nothing"
    weird: ByteBoundedQueue[str] = ByteBoundedQueue(8, size_of=lambda s: True)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError):
        weird.put("x")


@pytest.mark.parametrize("cap", [0, -1, 2.5, True, "10"])
def test_max_bytes_must_be_a_positive_int(cap: object) -> None:
    with pytest.raises(ValueError, match="positive int"):
        ByteBoundedQueue(cap)  # type: ignore[arg-type]


def test_drain_refuses_a_bad_count() -> None:
    with pytest.raises(ValueError):
        ByteBoundedQueue(5).drain(-1)


def test_stats_add_up() -> None:
    q = _payload_queue(5)
    for payload in (b"123", b"45", b"6", b"78"):
        q.put(payload)
    s = q.stats()
    assert s["put_items"] + s["shed_items"] == 4
    assert s["bytes"] == 5 and s["items"] == 2 and s["shed_fraction"] == 0.5
    assert "shed_items=2" in repr(q)


@settings(max_examples=150, deadline=None)
@given(cap=st.integers(1, 64),
       steps=st.lists(st.one_of(st.integers(0, 40).map(lambda n: ("put", n)), st.just(("get", 0))), max_size=80))
def test_random_steps_match_a_plain_model(cap: int, steps: list[tuple[str, int]]) -> None:
    q = _payload_queue(cap)
    model: deque[bytes] = deque()
    shed = 0
    for kind, n in steps:
        if kind == "put":
            payload = bytes(n)
            fits = sum(map(len, model)) + n <= cap
            assert q.put(payload) is fits
            if fits:
                model.append(payload)
            else:
                shed += 1
        elif model:
            assert q.get() == model.popleft()
        assert q.bytes == sum(map(len, model)) <= cap
        assert len(q) == len(model) and list(q) == list(model)
        assert q.shed_items == shed
        assert q.peak_bytes <= cap


def test_the_default_counts_each_item_as_held_bytes_plus_the_queues_own_record() -> None:
    q: ByteBoundedQueue[object] = ByteBoundedQueue(10_000)
    frame = (b"trade.executed", b"x" * 180)
    assert q.put(frame) and q.put(b"")
    assert q.bytes == held_bytes(frame) + held_bytes(b"") + 2 * ENTRY_OVERHEAD
    assert q.bytes > len(frame[1]) + 2 * ENTRY_OVERHEAD, "headers and the tuple count too, not only the payload"
    q.get()
    assert q.bytes == held_bytes(b"") + ENTRY_OVERHEAD


@pytest.mark.parametrize("overhead", [-1, 1.5, True])
def test_entry_overhead_must_be_a_non_negative_int(overhead: object) -> None:
    with pytest.raises(ValueError, match="entry_overhead"):
        ByteBoundedQueue(10, entry_overhead=overhead)  # type: ignore[arg-type]


def _traced_fill(queue: ByteBoundedQueue[bytes], payload: int, offered: int) -> int:
    """Offer ``offered`` fresh payloads; return what tracemalloc saw the queue keep."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for _ in range(offered):
            queue.put(bytes(payload))
        return tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("payload", "floor"), [(16, 0.75), (180, 0.95), (4_000, 0.95)])
def test_the_default_count_is_what_tracemalloc_sees_held(payload: int, floor: float) -> None:
    cap = 1 << 20
    queue: ByteBoundedQueue[bytes] = ByteBoundedQueue(cap)
    traced = _traced_fill(queue, payload, 2 * cap // (payload + ENTRY_OVERHEAD))
    assert queue.shed_items > 0 and queue.bytes <= cap
    # Never more than 5 % above the count (the deque's block links are all it misses);
    # below it only where a size <= 256 is a cached small int (the 16-byte frames).
    assert floor * queue.bytes <= traced <= 1.05 * queue.bytes, (payload, traced, queue.bytes)


def test_a_queue_counted_by_len_holds_several_times_its_cap_in_small_frames() -> None:
    # The trap the default avoids: 16-byte frames cost about 150 bytes each once queued.
    cap = 1 << 18
    queue = _payload_queue(cap)
    traced = _traced_fill(queue, 16, cap // 16 + 1)
    assert queue.bytes <= cap and traced > 5 * cap, (traced, cap)
