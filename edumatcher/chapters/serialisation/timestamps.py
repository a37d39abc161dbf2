"""Timestamps that never repeat or go backwards, and what they cost per read.

``time.monotonic_ns()`` never goes backwards, but two reads in quick succession
can return the same value (the clock's resolution is coarser than the code is
fast), so it cannot order two events by itself. ``StrictClock`` adds the missing
guarantee: every ``now()`` is strictly greater than the one before, across
threads, which needs a lock. That is why the engine reads a clock once per
message and threads the stamp through everything the message causes.

>>> clock = StrictClock(lambda: 5)
>>> clock.now(), clock.now(), clock.now()
(5, 6, 7)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from edumatcher.kit import SAMPLE_TARGET, Comparison, compare_interleaved

__all__ = ["StrictClock", "measure_clocks", "repeats_in"]


class StrictClock:
    """A nanosecond clock whose readings strictly increase, even when the source repeats. Thread-safe.

    ``now()`` returns ``max(source(), previous + 1)`` under a lock: each caller
    gets a distinct stamp, in the order they were served. O(1).
    """

    __slots__ = ("_source", "_last", "_lock")

    def __init__(self, source: Callable[[], int] = time.monotonic_ns) -> None:
        self._source = source
        self._last = -1
        self._lock = threading.Lock()

    def now(self) -> int:
        """The next stamp: the source's reading, or one more than the last stamp if that is larger."""
        with self._lock:
            t = self._source()
            if t <= self._last:
                t = self._last + 1
            self._last = t
            return t


def repeats_in(reads: int, source: Callable[[], int] = time.monotonic_ns) -> int:
    """How many of ``reads`` back-to-back readings of ``source`` equal the reading before. O(reads).

    >>> repeats_in(10, lambda: 42)
    9
    """
    previous = source()
    repeats = 0
    for _ in range(reads - 1):
        t = source()
        if t == previous:
            repeats += 1
        previous = t
    return repeats


def measure_clocks(*, budget: float = 1.5, target: float = SAMPLE_TARGET) -> Comparison:
    """Compare ``time.monotonic_ns()`` against ``StrictClock().now()``, interleaved: a plain read against a strict one.

    The result unpacks as ``(plain, strict)``; its ratio is plain / strict (below 1:
    the strict read costs more). ``budget`` seconds.
    """
    clock = StrictClock()
    return compare_interleaved(time.monotonic_ns, clock.now, budget=budget, target=target,
                               labels=("time.monotonic_ns()", "StrictClock.now() (lock + compare)"))
