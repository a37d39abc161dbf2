"""The egress overload: the byte cap holds, the entry cap's memory follows the payloads."""

from __future__ import annotations

import pytest

from edumatcher.experiments.egress import EntryBoundedQueue, payload_sizes, simulate


def test_entry_bounded_queue_sheds_when_full_and_tracks_bytes() -> None:
    q = EntryBoundedQueue(2)
    assert q.put(b"aa") and q.put(b"bbb") and not q.put(b"c")
    assert (len(q), q.bytes, q.shed_items, q.shed_bytes) == (2, 5, 1, 1)
    assert q.get() == b"aa" and q.bytes == 3
    with pytest.raises(ValueError):
        EntryBoundedQueue(0)


def test_payload_sizes_are_seeded_and_within_bounds() -> None:
    sizes = payload_sizes(2_000, 5_000, seed=3)
    assert sizes == payload_sizes(2_000, 5_000, seed=3)
    assert 64 <= min(sizes) and max(sizes) <= 5_000
    with pytest.raises(ValueError):
        payload_sizes(1, 10)


def test_byte_cap_holds_and_the_entry_cap_follows_payload_size() -> None:
    small = simulate(ticks=80, max_payload=1_024, max_entries=500, max_bytes=1 << 20)
    large = simulate(ticks=80, max_payload=32_768, max_entries=500, max_bytes=1 << 20)
    for trace in (small, large):
        assert max(trace.byte_bounded) <= 1 << 20
        assert trace.byte_queue.put_items + trace.byte_queue.shed_items == trace.offered
        assert trace.entry_queue.shed_items > 0  # the producer outruns the consumer
    assert max(large.entry_bounded) > 4 * max(small.entry_bounded)
    assert max(large.entry_bounded) > 1 << 20, "an entry cap with large payloads exceeds the byte budget"
    assert large.byte_queue.shed_items > 0
