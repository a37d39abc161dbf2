"""The engine's own instrumentation: sampled latency, collector pauses, counters.

Measuring must not slow down what it measures, so everything on the message path
here is a few integer operations on storage allocated once:

* ``LatencyRing`` keeps the latest handling samples in fixed-length lists of
  plain ints, indexed with a mask. Ints are not tracked by the cyclic collector,
  so the ring is three tracked lists whatever it holds, and it never grows. Not
  zero work: a full collection visits each of their ``3 x size`` slots, a few
  nanoseconds apiece (chapter 11 measures it), a fixed cost set by ``size``.
* ``GcMonitor`` hangs a callback on ``gc.callbacks`` and records every
  collection (generation, duration) in a ring of the same kind, plus running
  totals. A message's share of collection time is the difference of
  ``GcMonitor.total_ns`` read before and after handling it.
* ``EngineMetrics`` bundles both with the message count and per-owner counters,
  and turns them into figures only when ``summary()`` is asked for.

The engine times one message in ``SAMPLE_EVERY`` (chapter 08): the test is
``not count & SAMPLE_MASK``, a mask instead of a modulo. The message count stays
exact; only the timing is sampled.

>>> ring = LatencyRing(4)
>>> for d in (10, 20, 30, 40, 50):
...     ring.add(0, d, 0)
>>> ring.count, ring.durations()
(4, [20, 30, 40, 50])
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "SAMPLE_EVERY", "SAMPLE_MASK", "LATENCY_RING_SIZE", "GC_RING_SIZE", "OWNER_LIMIT", "OWNER_ENTRY_BYTES",
    "nearest_rank", "LatencyRing", "GcMonitor", "OwnerCounts", "EngineMetrics",
]

SAMPLE_EVERY = 16
"""The engine times one message in this many: a power of two, so the test is a mask."""
SAMPLE_MASK = SAMPLE_EVERY - 1
"""``not count & SAMPLE_MASK`` is true once every ``SAMPLE_EVERY`` messages."""

LATENCY_RING_SIZE = 1024
"""Default ring length: the latest 1024 samples, i.e. ~16 000 messages at 1 in 16."""
GC_RING_SIZE = 1024
"""Default length of ``GcMonitor``'s ring of collections."""


OWNER_LIMIT = 65_536
"""Most owners an ``OwnerCounts`` names (the size of the engine's other per-owner caches)."""

OWNER_ENTRY_BYTES = 200
"""The documented bound on what one named owner costs an ``OwnerCounts``: its dict slot
(hash, key and value pointers, plus the index, over-allocated up to 3x as the table
grows) and a small ``int``; the key ``str`` is the owner name the engine already
shares. So a counter holds at most ``limit * OWNER_ENTRY_BYTES`` bytes (tests measure it)."""


class OwnerCounts(dict):  # type: ignore[type-arg]
    """``{owner: count}`` for at most ``limit`` owners; the counts of any further owner go to ``other``.

    Clients choose owner names, so a counter keyed by them grows with every new
    name unless it is capped. The first ``limit`` owners seen are counted by
    name; after that, a name not yet counted adds to ``other`` (increments, not
    names: telling names apart would mean remembering them). Nothing is lost:
    ``sum(values()) + other`` is every increment. Memory: at most ``limit``
    entries, each a dict slot and an ``int`` (the key is the owner name the
    engine already shares): at most ``limit * OWNER_ENTRY_BYTES`` bytes, which
    ``tests/test_engine_bounds.py`` checks with ``tracemalloc`` for 1e5 owners.

    The engine increments a named owner inline and calls ``add`` only for an
    owner it has not counted yet (no method call in the common case)::

        n = counts.get(owner)
        if n is not None: counts[owner] = n + 1
        else: counts.add(owner)

    It is a ``dict``, so it compares equal to a plain dict of the same counts.

    >>> c = OwnerCounts(limit=2)
    >>> for owner in ("amy", "bob", "amy", "cal", "dan"):
    ...     c.add(owner)
    >>> c, c.other
    ({'amy': 2, 'bob': 1}, 2)
    """

    __slots__ = ("limit", "other")

    def __init__(self, limit: int = OWNER_LIMIT) -> None:
        if type(limit) is not int or limit < 0:
            raise ValueError(f"limit must be an int >= 0, not {limit!r}")
        super().__init__()
        self.limit = limit
        self.other = 0

    def add(self, owner: str, n: int = 1) -> None:
        """Count ``n`` for ``owner``, or into ``other`` if ``owner`` is new and ``limit`` owners are named. O(1)."""
        count = self.get(owner)
        if count is not None:
            self[owner] = count + n
        elif len(self) < self.limit:
            self[owner] = n
        else:
            self.other += n


def _check_ring_size(size: int) -> int:
    # A power of two lets ``pos & mask`` replace ``pos % size`` (no division, no branch).
    if not isinstance(size, int) or isinstance(size, bool) or size < 1 or size & (size - 1):
        raise ValueError(f"ring size must be a power of two (1, 2, 4, ... 1024, ...), got {size!r}")
    return size


def _oldest_first(column: list[int], pos: int, mask: int) -> list[int]:
    # The valid entries of a ring column, oldest first. Once the ring has wrapped,
    # the oldest entry sits at the next write index.
    if pos <= mask + 1:
        return column[:pos]
    i = pos & mask
    return column[i:] + column[:i]


def nearest_rank(sorted_values: Sequence[int] | Sequence[float], p: float) -> int | float:
    """Return the ``p``-th percentile of ``sorted_values`` by the nearest-rank rule. O(1).

    Nearest rank: the smallest value such that at least ``p`` percent of the
    values are less than or equal to it, i.e. the value at 1-based rank
    ``ceil(p / 100 * n)`` (rank 1 for ``p == 0``). The answer is always one of
    the samples, never an interpolation. So a p99.9 over 1,000 samples is the
    999th smallest, the second largest (rank ``ceil(999.0) = 999``: exactly one
    sample lies above it). It is the maximum whenever there are fewer than 1,000
    samples (then ``ceil(0.999 * n) == n``). In general ``n - rank`` samples lie
    above a p99.9: ``n / 1000`` of them when n is a multiple of 1,000.

    >>> nearest_rank([10, 20, 30, 40], 50)
    20
    >>> nearest_rank([10, 20, 30, 40], 51)
    30
    >>> nearest_rank(list(range(1, 1001)), 99.9)
    999
    >>> nearest_rank(list(range(1, 1000)), 99.9)  # 999 samples: rank ceil(998.001) = 999, the maximum
    999

    Raises ``ValueError`` when there are no values or ``p`` is outside [0, 100].
    """
    n = len(sorted_values)
    if n == 0:
        raise ValueError("no samples: a percentile of nothing is undefined")
    if not 0 <= p <= 100:
        raise ValueError(f"percentile must be within [0, 100], got {p!r}")
    # Round p*n/100 to 9 decimal places first so that 99.9 * 1000 / 100 counts as
    # 999, not 999.0000000000001 (which would bump the rank to 1000).
    rank = max(1, math.ceil(round(p * n / 100, 9)))
    return sorted_values[rank - 1]


class LatencyRing:
    """The latest ``size`` handling samples, in fixed lists of ints that never grow.

    Each sample is ``(started_ns, duration_ns, gc_ns)``: when handling started,
    how long it took, and how much of that the cyclic collector took.
    ``size`` must be a power of two (``ValueError`` otherwise) so the write index
    is ``pos & mask``. ``pos`` counts every sample ever added and is never reset;
    the number of valid samples is ``min(pos, size)``.

    Methods: ``add`` (hot path, O(1), allocates no container); ``count``,
    ``durations``, ``durations_ex_gc``, ``started``, ``percentile`` (read side,
    O(size) or O(size log size)).

    >>> ring = LatencyRing(8)
    >>> ring.add(started_ns=100, duration_ns=5_000, gc_ns=4_000)
    >>> ring.durations(), ring.durations_ex_gc()
    ([5000], [1000])
    """

    __slots__ = ("size", "mask", "started_ns", "duration_ns", "gc_ns", "pos")

    def __init__(self, size: int = LATENCY_RING_SIZE) -> None:
        self.size = _check_ring_size(size)
        self.mask = size - 1
        # Allocated once, never appended to or resized: the ring's memory is fixed.
        self.started_ns: list[int] = [0] * size
        self.duration_ns: list[int] = [0] * size
        self.gc_ns: list[int] = [0] * size
        self.pos = 0

    def add(self, started_ns: int, duration_ns: int, gc_ns: int = 0) -> None:
        """Record one sample, overwriting the oldest once the ring is full. O(1)."""
        i = self.pos & self.mask
        self.started_ns[i] = started_ns
        self.duration_ns[i] = duration_ns
        self.gc_ns[i] = gc_ns
        self.pos += 1

    @property
    def count(self) -> int:
        """How many samples are valid: ``min(pos, size)``. O(1)."""
        return self.pos if self.pos < self.size else self.size

    def _valid(self, column: list[int]) -> list[int]:
        return _oldest_first(column, self.pos, self.mask)

    def durations(self) -> list[int]:
        """Return the valid durations in ns, oldest first. O(size)."""
        return self._valid(self.duration_ns)

    def durations_ex_gc(self) -> list[int]:
        """Return the valid durations with each sample's collection time subtracted (floored at 0). O(size)."""
        return [d - g if d > g else 0 for d, g in zip(self._valid(self.duration_ns), self._valid(self.gc_ns), strict=True)]

    def started(self) -> list[int]:
        """Return the valid start times in ns, oldest first. O(size)."""
        return self._valid(self.started_ns)

    def percentile(self, p: float, ex_gc: bool = False) -> int:
        """Return the nearest-rank ``p``-th percentile of the durations in ns. O(size log size).

        With ``ex_gc=True`` each sample's collection time is subtracted first.
        See ``nearest_rank`` for the definition; ``ValueError`` if the ring is empty.

        >>> ring = LatencyRing(4)
        >>> for d in (400, 100, 300, 200):
        ...     ring.add(0, d, 0)
        >>> ring.percentile(50), ring.percentile(100)
        (200, 400)
        """
        values = self.durations_ex_gc() if ex_gc else self.durations()
        values.sort()
        return int(nearest_rank(values, p))


class GcMonitor:
    """Records every cyclic-collector run through ``gc.callbacks``.

    The interpreter calls the callback with ``"start"`` and ``"stop"`` around each
    collection; the monitor times the pair with ``clock_ns`` and keeps, in fixed
    rings of ``size`` ints (a power of two), each collection's generation,
    duration and end time. Running figures since construction: ``count``
    (collections seen), ``count_by_generation`` (``[gen 0, gen 1, gen 2]``),
    ``total_ns`` (their summed duration), ``max_ns`` (the longest).

    ``install()`` and ``uninstall()`` are idempotent; used as a context manager
    the monitor is always removed again, even on error. The callback only
    stores ints, so it adds almost nothing to the pause it measures.

    >>> with GcMonitor() as monitor:
    ...     _ = gc.collect()
    >>> monitor.count >= 1, monitor.generations()[-1]
    (True, 2)
    """

    __slots__ = (
        "size", "mask", "generation", "duration_ns", "ended_ns", "pos",
        "count", "count_by_generation", "total_ns", "max_ns", "_clock_ns", "_started_ns", "_callback",
    )

    def __init__(self, size: int = GC_RING_SIZE, *, clock_ns: Callable[[], int] = time.perf_counter_ns) -> None:
        self.size = _check_ring_size(size)
        self.mask = size - 1
        self.generation: list[int] = [0] * size
        self.duration_ns: list[int] = [0] * size
        self.ended_ns: list[int] = [0] * size
        self.pos = 0
        self.count = 0
        self.count_by_generation: list[int] = [0, 0, 0]
        self.total_ns = 0
        self.max_ns = 0
        self._clock_ns = clock_ns
        self._started_ns = 0
        # One bound method, kept, so uninstall() removes exactly what install() added.
        self._callback = self._on_gc

    def _on_gc(self, phase: str, info: dict[str, Any]) -> None:
        now = self._clock_ns()
        if phase == "start":
            self._started_ns = now
            return
        if not self._started_ns:
            return  # installed in the middle of a collection: no start time to pair with
        duration = now - self._started_ns
        self._started_ns = 0
        generation = info.get("generation", -1)
        i = self.pos & self.mask
        self.generation[i] = generation
        self.duration_ns[i] = duration
        self.ended_ns[i] = now
        self.pos += 1
        self.count += 1
        if 0 <= generation <= 2:
            self.count_by_generation[generation] += 1
        self.total_ns += duration
        if duration > self.max_ns:
            self.max_ns = duration

    @property
    def installed(self) -> bool:
        """True while the callback is on ``gc.callbacks``. O(len(gc.callbacks))."""
        return any(cb is self._callback for cb in gc.callbacks)

    def install(self) -> GcMonitor:
        """Put the callback on ``gc.callbacks`` unless it is already there; return self."""
        if not self.installed:
            gc.callbacks.append(self._callback)
        return self

    def uninstall(self) -> None:
        """Remove the callback from ``gc.callbacks`` (every copy; no error if absent)."""
        gc.callbacks[:] = [cb for cb in gc.callbacks if cb is not self._callback]
        self._started_ns = 0

    def __enter__(self) -> GcMonitor:
        return self.install()

    def __exit__(self, *exc: object) -> None:
        self.uninstall()

    def _valid(self, column: list[int]) -> list[int]:
        return _oldest_first(column, self.pos, self.mask)

    def generations(self) -> list[int]:
        """Generation of each recorded collection, oldest first (the latest ``size``). O(size)."""
        return self._valid(self.generation)

    def durations(self) -> list[int]:
        """Duration in ns of each recorded collection, oldest first. O(size)."""
        return self._valid(self.duration_ns)

    def records(self) -> list[tuple[int, int, int]]:
        """``(generation, duration_ns, ended_ns)`` of each recorded collection, oldest first. O(size)."""
        return list(zip(self._valid(self.generation), self._valid(self.duration_ns), self._valid(self.ended_ns), strict=True))


class EngineMetrics:
    """Everything the engine counts about itself, read as figures by ``summary()``.

    Hot-path fields (the engine updates them directly, no method calls):

    * ``ring``: a ``LatencyRing`` of sampled handling times;
    * ``gc_monitor``: a ``GcMonitor`` (the engine installs it for the run);
    * ``messages``: the exact number of messages handled;
    * ``per_owner``: an ``OwnerCounts`` of accepted orders (a dict naming at most
      ``owner_limit`` owners, the rest counted together in ``per_owner.other``),
      incremented inline and sorted only here.

    ``started_ns`` is when the metrics began (``clock_ns``), the base of
    ``gc_time_pct``.

    >>> m = EngineMetrics(ring_size=16)
    >>> m.ring.add(0, 2_000, 0); m.messages = 1
    >>> m.summary()["handle_us_p50"]
    2.0
    """

    __slots__ = ("ring", "gc_monitor", "messages", "per_owner", "started_ns", "_clock_ns")

    def __init__(
        self,
        ring_size: int = LATENCY_RING_SIZE,
        *,
        gc_ring_size: int = GC_RING_SIZE,
        clock_ns: Callable[[], int] = time.perf_counter_ns,
        owner_limit: int = OWNER_LIMIT,
    ) -> None:
        self.ring = LatencyRing(ring_size)
        self.gc_monitor = GcMonitor(gc_ring_size, clock_ns=clock_ns)
        self.messages = 0
        self.per_owner = OwnerCounts(owner_limit)
        self._clock_ns = clock_ns
        self.started_ns = clock_ns()

    def wall_ns(self) -> int:
        """Nanoseconds since the metrics started. O(1)."""
        return self._clock_ns() - self.started_ns

    def summary(self) -> dict[str, Any]:
        """Return the figures as a JSON-ready dict. O(ring size log ring size).

        Latencies are in microseconds over the samples in the ring (the latest
        ``ring.size``), nearest-rank percentiles; they are None when there are
        no samples yet. ``handle_us_p99_ex_gc`` subtracts from each sample the
        collection time that fell inside it: if it is close to ``handle_us_p99``
        the collector does not set the p99, which says nothing about the rest of
        the tail: pauses rarer than one sample in a hundred never move a p99, so
        read ``handle_us_p999``, ``handle_us_max`` and ``gc_pause_us_max`` for
        them. ``gc_time_pct`` is collection time as a share of wall time since
        ``started_ns``.

        The percentiles are **service time** (one ``handle`` call), sampled, so
        the summary states their window beside them: ``sample_every`` (the engine
        times one message in ``SAMPLE_EVERY``), ``window_messages`` (about how many
        messages the samples in the ring span: samples x ``SAMPLE_EVERY``),
        ``window_s`` (from the first sample's start to the last's) and ``window``,
        the same in one sentence. Time a message spent queued before it was
        handled is in none of them: ``edumatcher.kit.open_loop`` measures that.
        """
        ring = self.ring
        durations = sorted(ring.durations())
        ex_gc = sorted(ring.durations_ex_gc())
        monitor = self.gc_monitor
        wall = self.wall_ns()
        started = ring.started()
        window_s = round((started[-1] - started[0]) / 1e9, 3) if len(started) > 1 else 0.0
        window_messages = ring.count * SAMPLE_EVERY

        def us(values: list[int], p: float) -> float | None:
            return round(nearest_rank(values, p) / 1000, 3) if values else None

        return {
            "messages": self.messages,
            "samples": ring.count,
            "sample_every": SAMPLE_EVERY,
            "window_messages": window_messages,
            "window_s": window_s,
            "window": (f"service time of 1 message in {SAMPLE_EVERY}: the latest {ring.count:,} samples, "
                       f"about {window_messages:,} messages over {window_s:g} s"),
            "handle_us_p50": us(durations, 50),
            "handle_us_p99": us(durations, 99),
            "handle_us_p99_ex_gc": us(ex_gc, 99),
            "handle_us_p999": us(durations, 99.9),
            "handle_us_max": round(durations[-1] / 1000, 3) if durations else None,
            "gc_pause_us_max": round(monitor.max_ns / 1000, 3),
            "gc_time_pct": round(100 * monitor.total_ns / wall, 3) if wall > 0 else 0.0,
            "gc_collections": monitor.count,
            "gc_collections_by_generation": list(monitor.count_by_generation),
            "wall_s": round(wall / 1e9, 3),
            "per_owner": dict(sorted(self.per_owner.items())),
            "per_owner_other": self.per_owner.other,
        }
