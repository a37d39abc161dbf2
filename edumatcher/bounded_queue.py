"""``ByteBoundedQueue``: a FIFO capped by the bytes it holds, which sheds instead of growing.

A queue capped by its *number of entries* is not capped in memory when its
entries vary in size: ten thousand 100-byte frames and ten thousand 1-MB batches
are the same "ten thousand". Open Exchange's write-up (quoted, an array-backed Java engine) ran
out of heap twice on exactly that: an egress queue capped at 262,144 entries whose
entries were copied batches of up to about 150 KB each.

This queue counts bytes. ``put(item)`` either queues the item or, when the item
would take the total over ``max_bytes``, drops it and counts the drop
(``shed_items``, ``shed_bytes``). It never blocks and never raises for a full
queue, because the producer it is written for (a single-threaded engine) must
not wait on its own consumer; a caller that must not lose anything should read
the counters and reconcile, or use a queue that blocks.

What an item costs is counted as real memory by default:
``held_bytes(item)`` (``sys.getsizeof``: the object's header and payload, and
a ``(topic, payload)`` tuple with its parts) plus ``ENTRY_OVERHEAD``, what the
queue itself keeps per entry (its ``(item, size)`` record, the size ``int``
and the deque's slot). So ``bytes`` is what ``tracemalloc`` sees the queue hold,
within a few per cent, and a cap of 10 MB holds about 10 MB. ``len`` would
under-count every entry by its object header and the queue's record, which
for a small frame is more than the frame's own payload. Pass
``size_of=len, entry_overhead=0`` to bound payload bytes instead (a wire
budget, not a memory one). The size is computed once, on ``put``, and
remembered, so ``get`` does not call it again and a mutable item cannot change
the accounting behind its back.

No count can see memory an object keeps but does not report: a ``bytes`` from
orjson 3.11+ keeps its whole write buffer (4 KB and more from 3.13) while
``sys.getsizeof`` reports only its length, so a queue of such frames
"bounded" at 10 MB can hold twenty times that. The engine's builders copy their
output to its own size when the codec over-allocates
(``edumatcher.messages.RIGHT_SIZED``), which makes the default count true again;
chapter 12 measures both with ``tracemalloc``.

Not thread-safe: one producer and one consumer in the same thread, as in the
engine's run loop.

>>> q = ByteBoundedQueue(max_bytes=1_000)  # counts real memory
>>> q.put(b"x" * 100), q.bytes == held_bytes(b"x" * 100) + ENTRY_OVERHEAD > 100
(True, True)
>>> wire = ByteBoundedQueue(max_bytes=10, size_of=len, entry_overhead=0)  # counts payload bytes
>>> wire.put(b"12345"), wire.put(b"1234"), wire.put(b"12")
(True, True, False)
>>> len(wire), wire.bytes, wire.shed_items, wire.shed_bytes
(2, 9, 1, 2)
>>> wire.get(), wire.bytes
(b'12345', 4)
"""

from __future__ import annotations

import struct
import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["ByteBoundedQueue", "held_bytes", "ENTRY_OVERHEAD"]

T = TypeVar("T")

ENTRY_OVERHEAD: int = sys.getsizeof((None, None)) + sys.getsizeof(1 << 20) + struct.calcsize("P")
"""Bytes the queue keeps per entry besides the item: its ``(item, size)`` tuple, the size ``int``, the deque's pointer.

92 on a 64-bit CPython 3.10-3.13 (computed here, not assumed). Sizes up to 256
are cached small ints and cost nothing, so this over-counts such entries by 28
bytes; the deque's block links add a fraction of a byte per entry, not counted.
"""


def held_bytes(item: Any) -> int:
    """What ``item`` occupies by ``sys.getsizeof``: a tuple (a ``(topic, payload)`` frame) counts itself and its parts.

    An over-count for parts shared with other frames (topics are cached and
    shared), never an under-count of what the object reports. O(len(tuple)).

    >>> held_bytes(b"x" * 100) == sys.getsizeof(b"x" * 100) > 100
    True
    >>> held_bytes((b"t", b"p")) == sys.getsizeof((b"t", b"p")) + 2 * sys.getsizeof(b"t")
    True
    """
    if type(item) is tuple:
        return sys.getsizeof(item) + sum(map(sys.getsizeof, item))
    return sys.getsizeof(item)


class ByteBoundedQueue(Generic[T]):
    """A first-in first-out queue holding at most ``max_bytes`` bytes of items; over that it sheds.

    Contract: ``size_of(item)`` returns a non-negative int (``ValueError``
    otherwise, and the item is not queued); ``max_bytes`` is a positive int;
    ``entry_overhead`` a non-negative int. An item counts ``size_of(item) +
    entry_overhead`` bytes; the defaults (``held_bytes``, ``ENTRY_OVERHEAD``)
    make that its real memory (see the module docstring).

    Methods, by purpose:

    * move items: ``put`` (O(1)), ``get`` (O(1)), ``drain`` (O(k) for k items)
    * look: ``len(q)``, ``bool(q)``, ``bytes``, ``peak_bytes``, ``max_bytes``, iteration (oldest first)
    * count what was refused: ``shed_items``, ``shed_bytes``; what was accepted: ``put_items``, ``put_bytes``
    * ``stats()``: all the counters as a dict (for a health beacon or a log line)

    >>> q = ByteBoundedQueue(max_bytes=8, size_of=lambda s: len(s.encode()), entry_overhead=0)
    >>> q.put("héllo"), q.bytes  # 6 bytes in UTF-8
    (True, 6)
    """

    __slots__ = (
        "max_bytes", "entry_overhead", "_size_of", "_items", "_bytes", "peak_bytes",
        "put_items", "put_bytes", "shed_items", "shed_bytes",
    )

    def __init__(self, max_bytes: int, *, size_of: Callable[[T], int] = held_bytes,
                 entry_overhead: int = ENTRY_OVERHEAD) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive int, not {max_bytes!r}")
        if isinstance(entry_overhead, bool) or not isinstance(entry_overhead, int) or entry_overhead < 0:
            raise ValueError(f"entry_overhead must be an int >= 0, not {entry_overhead!r}")
        self.max_bytes = max_bytes
        self.entry_overhead = entry_overhead
        self._size_of = size_of
        # Each entry keeps its size beside it: get() must subtract exactly what put() added.
        self._items: deque[tuple[T, int]] = deque()
        self._bytes = 0
        self.peak_bytes = 0
        self.put_items = 0
        self.put_bytes = 0
        self.shed_items = 0
        self.shed_bytes = 0

    def put(self, item: T) -> bool:
        """Queue ``item`` and return True, or drop it, count it and return False if it would not fit. O(1).

        "Would not fit" means ``bytes + size_of(item) + entry_overhead > max_bytes``;
        an item larger than that never fits and is always shed. Raises ``ValueError``
        (and queues nothing) if ``size_of(item)`` is not a non-negative int.

        >>> q = ByteBoundedQueue(4, size_of=len, entry_overhead=0)
        >>> q.put(b"abcde"), q.shed_bytes, len(q)
        (False, 5, 0)
        """
        size = self._size_of(item)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"size_of(item) must be a non-negative int, got {size!r}")
        size += self.entry_overhead
        total = self._bytes + size
        if total > self.max_bytes:
            self.shed_items += 1
            self.shed_bytes += size
            return False
        self._items.append((item, size))
        self._bytes = total
        if total > self.peak_bytes:
            self.peak_bytes = total
        self.put_items += 1
        self.put_bytes += size
        return True

    def get(self) -> T:
        """Remove and return the oldest item. O(1). Raises ``IndexError`` when the queue is empty.

        >>> ByteBoundedQueue(4).get()
        Traceback (most recent call last):
        ...
        IndexError: get from an empty ByteBoundedQueue
        """
        try:
            item, size = self._items.popleft()
        except IndexError:
            raise IndexError("get from an empty ByteBoundedQueue") from None
        self._bytes -= size
        return item

    def drain(self, max_items: int | None = None) -> list[T]:
        """Remove and return up to ``max_items`` oldest items (all of them when None), oldest first. O(k).

        >>> q = ByteBoundedQueue(1_000)
        >>> for p in (b"a", b"bb", b"ccc"):
        ...     _ = q.put(p)
        >>> q.drain(2), q.drain()
        ([b'a', b'bb'], [b'ccc'])
        """
        if max_items is not None and (isinstance(max_items, bool) or not isinstance(max_items, int) or max_items < 0):
            raise ValueError(f"max_items must be None or an int >= 0, not {max_items!r}")
        count = len(self._items) if max_items is None else min(max_items, len(self._items))
        popleft = self._items.popleft
        out: list[T] = []
        freed = 0
        for _ in range(count):
            item, size = popleft()
            out.append(item)
            freed += size
        self._bytes -= freed
        return out

    @property
    def bytes(self) -> int:
        """Bytes held now: the sum of ``size_of(item) + entry_overhead`` over the queued items. O(1)."""
        return self._bytes

    def __len__(self) -> int:
        """Number of queued items. O(1)."""
        return len(self._items)

    def __bool__(self) -> bool:
        return bool(self._items)

    def __iter__(self) -> Iterator[T]:
        """The queued items, oldest first, without removing them."""
        return (item for item, _ in self._items)

    def stats(self) -> dict[str, Any]:
        """Every counter as a plain dict: current and peak bytes, items accepted and shed. O(1).

        >>> q = ByteBoundedQueue(3, size_of=len, entry_overhead=0)
        >>> _ = q.put(b"ab"), q.put(b"cd")
        >>> q.stats()["shed_items"], q.stats()["shed_fraction"]
        (1, 0.5)
        """
        offered = self.put_items + self.shed_items
        return {
            "max_bytes": self.max_bytes,
            "bytes": self._bytes,
            "items": len(self._items),
            "peak_bytes": self.peak_bytes,
            "put_items": self.put_items,
            "put_bytes": self.put_bytes,
            "shed_items": self.shed_items,
            "shed_bytes": self.shed_bytes,
            "shed_fraction": self.shed_items / offered if offered else 0.0,
        }

    def __repr__(self) -> str:
        return (f"ByteBoundedQueue(max_bytes={self.max_bytes}, items={len(self._items)}, bytes={self._bytes}, "
                f"shed_items={self.shed_items})")
