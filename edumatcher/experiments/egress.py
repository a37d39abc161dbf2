"""An egress queue under overload: bounded by entries against bounded by bytes.

Seed 002 (quoted, a Java engine) ran out of heap on an egress queue capped at
262,144 *entries* whose entries were copied batches of up to about 150 KB: a cap
on entries, with entries of variable size, is not a cap on memory. ``simulate``
plays a producer that outruns its consumer into two queues side by side, each
given the same payloads:

* ``EntryBoundedQueue``: holds at most ``max_entries`` items, sheds (and counts)
  when full;
* ``ByteBoundedQueue`` (``edumatcher.bounded_queue``): holds at most ``max_bytes``.

Payload sizes are drawn from a seeded skewed distribution: most small, a few up
to ``max_payload`` bytes. The queues hold real ``bytes`` objects, so the
bytes they report are bytes held.

>>> trace = simulate(ticks=20, max_payload=2_000, max_entries=50, max_bytes=20_000)
>>> max(trace.byte_bounded) <= 20_000, trace.byte_queue.shed_items > 0
(True, True)
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from ..bounded_queue import ByteBoundedQueue

__all__ = ["EntryBoundedQueue", "payload_sizes", "EgressTrace", "simulate"]


class EntryBoundedQueue:
    """A FIFO of at most ``max_entries`` items that sheds new items when full, counting them; tracks bytes held."""

    __slots__ = ("max_entries", "_items", "bytes", "shed_items", "shed_bytes")

    def __init__(self, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, not {max_entries!r}")
        self.max_entries = max_entries
        self._items: deque[bytes] = deque()
        self.bytes = 0
        self.shed_items = 0
        self.shed_bytes = 0

    def put(self, item: bytes) -> bool:
        """Queue ``item`` unless ``max_entries`` are already queued (then shed and count it). O(1)."""
        if len(self._items) >= self.max_entries:
            self.shed_items += 1
            self.shed_bytes += len(item)
            return False
        self._items.append(item)
        self.bytes += len(item)
        return True

    def get(self) -> bytes:
        """Remove and return the oldest item. O(1). ``IndexError`` when empty."""
        item = self._items.popleft()
        self.bytes -= len(item)
        return item

    def __len__(self) -> int:
        return len(self._items)


def payload_sizes(count: int, max_payload: int, *, seed: int = 1) -> list[int]:
    """``count`` sizes from 64 bytes up to ``max_payload``: mostly small, a few large (``64 + (max - 64) * u**3``).

    The mean is about a quarter of ``max_payload``, so raising the largest payload
    raises the typical one too, as batches grow when a consumer falls behind.

    >>> sizes = payload_sizes(1000, 10_000)
    >>> min(sizes) >= 64 and max(sizes) <= 10_000
    True
    """
    if max_payload < 64:
        raise ValueError(f"max_payload must be at least 64 bytes, not {max_payload!r}")
    rnd = random.Random(seed)
    return [64 + int((max_payload - 64) * rnd.random() ** 3) for _ in range(count)]


@dataclass
class EgressTrace:
    """Bytes held by each queue after every tick, and the queues themselves (for their counters)."""

    entry_bounded: list[int] = field(default_factory=list)
    byte_bounded: list[int] = field(default_factory=list)
    entry_queue: EntryBoundedQueue = field(default_factory=lambda: EntryBoundedQueue(1))
    byte_queue: ByteBoundedQueue[bytes] = field(default_factory=lambda: ByteBoundedQueue(1))
    offered: int = 0
    offered_bytes: int = 0


def simulate(*, ticks: int = 200, produce: int = 60, consume: int = 40, max_payload: int = 16_384,
             max_entries: int = 2_000, max_bytes: int = 4 << 20, seed: int = 1) -> EgressTrace:
    """Each tick the producer offers ``produce`` payloads to both queues and the consumer takes ``consume`` from each.

    The consumer is slower than the producer, so both queues fill; what differs is
    what "full" means. Returns the bytes each held after every tick. Memory is at
    most about ``max_entries * max_payload + max_bytes`` bytes of payloads.
    """
    sizes = payload_sizes(ticks * produce, max_payload, seed=seed)
    trace = EgressTrace(entry_queue=EntryBoundedQueue(max_entries), byte_queue=ByteBoundedQueue(max_bytes))
    entries, by_bytes = trace.entry_queue, trace.byte_queue
    k = 0
    for _ in range(ticks):
        for _ in range(produce):
            payload = bytes(sizes[k])
            k += 1
            trace.offered += 1
            trace.offered_bytes += len(payload)
            entries.put(payload)
            by_bytes.put(payload)
        for _ in range(min(consume, len(entries))):
            entries.get()
        by_bytes.drain(consume)
        trace.entry_bounded.append(entries.bytes)
        trace.byte_bounded.append(by_bytes.bytes)
    return trace
