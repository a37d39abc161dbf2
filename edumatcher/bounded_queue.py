"""``ByteBoundedQueue``: a FIFO capped by the bytes it holds, which sheds instead of growing.

A queue capped by its *number of entries* is not capped in memory when its
entries vary in size: ten thousand 100-byte frames and ten thousand 1-MB batches
are the same "ten thousand". Seed 002 (quoted, an array-backed Java engine) ran
out of heap twice on exactly that: an egress queue capped at 262,144 entries whose
entries were copied batches of up to about 150 KB each.

This queue counts bytes. ``put(item)`` either queues the item or, when the item
would take the total over ``max_bytes``, drops it and counts the drop
(``shed_items``, ``shed_bytes``). It never blocks and never raises for a full
queue, because the producer it is written for (a single-threaded engine) must
not wait on its own consumer; a caller that must not lose anything should read
the counters and reconcile, or use a queue that blocks.

The size of an item is ``size_of(item)``, computed once, on ``put``, and
remembered, so ``get`` does not call it again and a mutable item cannot change
the accounting behind its back. The default, ``len``, counts payload bytes only.
For frames, pass ``size_of=held_bytes``: it counts what the objects really
occupy (``sys.getsizeof``: headers included, and a ``(topic, payload)`` tuple
with its parts). Neither can see memory an object keeps but does not report:
a ``bytes`` from orjson 3.11+ keeps its whole write buffer (4 KB and more from
3.13) while ``sys.getsizeof`` reports only its length, so a queue of such frames
"bounded" at 10 MB can hold twenty times that. The engine's builders copy their
output to its own size when the codec over-allocates
(``edumatcher.messages.RIGHT_SIZED``), which makes ``held_bytes`` true again;
chapter 10 measures both with ``tracemalloc``.

Not thread-safe: one producer and one consumer in the same thread, as in the
engine's run loop.

>>> q = ByteBoundedQueue(max_bytes=10)
>>> q.put(b"12345"), q.put(b"1234"), q.put(b"12")
(True, True, False)
>>> len(q), q.bytes, q.shed_items, q.shed_bytes
(2, 9, 1, 2)
>>> q.get(), q.bytes
(b'12345', 4)
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

__all__ = ["ByteBoundedQueue", "held_bytes"]

T = TypeVar("T")


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
    otherwise, and the item is not queued); ``max_bytes`` is a positive int.

    Methods, by purpose:

    * move items: ``put`` (O(1)), ``get`` (O(1)), ``drain`` (O(k) for k items)
    * look: ``len(q)``, ``bool(q)``, ``bytes``, ``peak_bytes``, ``max_bytes``, iteration (oldest first)
    * count what was refused: ``shed_items``, ``shed_bytes``; what was accepted: ``put_items``, ``put_bytes``
    * ``stats()``: all the counters as a dict (for a health beacon or a log line)

    >>> q = ByteBoundedQueue(max_bytes=8, size_of=lambda s: len(s.encode()))
    >>> q.put("héllo"), q.bytes  # 6 bytes in UTF-8
    (True, 6)
    """

    __slots__ = (
        "max_bytes", "_size_of", "_items", "_bytes", "peak_bytes",
        "put_items", "put_bytes", "shed_items", "shed_bytes",
    )

    def __init__(self, max_bytes: int, *, size_of: Callable[[T], int] = len) -> None:  # type: ignore[assignment]
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise ValueError(f"max_bytes must be a positive int, not {max_bytes!r}")
        self.max_bytes = max_bytes
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

        "Would not fit" means ``bytes + size_of(item) > max_bytes``; an item larger
        than ``max_bytes`` never fits and is always shed. Raises ``ValueError``
        (and queues nothing) if ``size_of(item)`` is not a non-negative int.

        >>> q = ByteBoundedQueue(4)
        >>> q.put(b"abcde"), q.shed_bytes, len(q)
        (False, 5, 0)
        """
        size = self._size_of(item)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"size_of(item) must be a non-negative int, got {size!r}")
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

        >>> q = ByteBoundedQueue(100)
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
        """Bytes held now: the sum of ``size_of`` over the queued items. O(1)."""
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

        >>> q = ByteBoundedQueue(3)
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
