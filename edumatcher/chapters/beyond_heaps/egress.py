"""An egress queue under overload: bounded by entries against bounded by bytes.

Open Exchange's write-up (quoted, a Java engine) ran out of heap on an egress queue capped at
262,144 *entries* whose entries were copied batches of up to about 150 KB: a cap
on entries, with entries of variable size, is not a cap on memory. ``simulate``
plays a producer that outruns its consumer (``drive_overload``) into two queues,
one after the other, each given the same payloads:

* ``EntryBoundedQueue``: holds at most ``max_entries`` items, sheds (and counts)
  when full;
* ``ByteBoundedQueue`` (``edumatcher.bounded_queue``): holds at most ``max_bytes``.

Payload sizes are drawn from a seeded skewed distribution: most small, a few up
to ``max_payload`` bytes. The queues hold real ``bytes`` objects and both
count them as real memory (``held_bytes`` plus their own per-entry bookkeeping,
``ByteBoundedQueue``'s default), so the bytes they report are bytes held;
``simulate(traced=True)`` also measures each
queue's peak allocation with ``tracemalloc``, and ``frame_scaling`` repeats that
for growing frames, which is where the entry cap shows that it bounds nothing.

>>> trace = simulate(ticks=20, max_payload=2_000, max_entries=50, max_bytes=20_000)
>>> max(trace.byte_bounded) <= 20_000, trace.byte_queue.shed_items > 0
(True, True)
"""

from __future__ import annotations

import gc
import random
import struct
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edumatcher.bounded_queue import ByteBoundedQueue, held_bytes
from edumatcher.kit import bytes_kept, peak_bytes

SLOT_BYTES: int = struct.calcsize("P")
"""What a deque keeps per entry: one pointer (its blocks' links add a fraction of a byte, not counted)."""

__all__ = [
    "SLOT_BYTES", "EntryBoundedQueue", "payload_sizes", "EgressTrace", "drive_overload", "simulate", "frame_scaling",
    "frame_scaling_rows", "frame_scaling_isolated", "scaling_verdict", "engine_frame_queue",
]


class EntryBoundedQueue:
    """A FIFO of at most ``max_entries`` items that sheds new items when full, counting them; tracks bytes held.

    ``bytes`` is counted as ``ByteBoundedQueue`` counts by default, real memory:
    ``held_bytes(item)`` plus what this queue keeps per entry (one deque slot,
    ``SLOT_BYTES``), so the two queues' figures compare like for like.
    """

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
        size = held_bytes(item) + SLOT_BYTES
        if len(self._items) >= self.max_entries:
            self.shed_items += 1
            self.shed_bytes += size
            return False
        self._items.append(item)
        self.bytes += size
        return True

    def get(self) -> bytes:
        """Remove and return the oldest item. O(1). ``IndexError`` when empty."""
        item = self._items.popleft()
        self.bytes -= held_bytes(item) + SLOT_BYTES  # bytes are immutable: the same size put() counted
        return item

    def drain(self, max_items: int | None = None) -> list[bytes]:
        """Remove and return up to ``max_items`` oldest items (all when None), oldest first. O(k)."""
        count = len(self._items) if max_items is None else min(max_items, len(self._items))
        return [self.get() for _ in range(count)]

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
    """Bytes held by each queue after every tick, and the queues themselves (for their counters).

    ``entry_traced_peak`` and ``byte_traced_peak`` are the peaks of memory
    allocated while each queue ran alone, measured by ``tracemalloc`` (bytes
    objects, their headers, the deque's blocks): 0 unless ``simulate(traced=True)``.
    """

    entry_bounded: list[int] = field(default_factory=list)
    byte_bounded: list[int] = field(default_factory=list)
    entry_queue: EntryBoundedQueue = field(default_factory=lambda: EntryBoundedQueue(1))
    byte_queue: ByteBoundedQueue[bytes] = field(default_factory=lambda: ByteBoundedQueue(1))
    offered: int = 0
    offered_bytes: int = 0
    max_payload: int = 0
    entry_traced_peak: int = 0
    byte_traced_peak: int = 0

    @property
    def mean_payload(self) -> float:
        """Mean size of the payloads offered (bytes)."""
        return self.offered_bytes / self.offered if self.offered else 0.0

    def as_dict(self) -> dict[str, Any]:
        """Everything as JSON-able values: the per-tick lists, the totals, and each queue's cap and counters.

        >>> t = simulate(ticks=3, max_payload=100, max_entries=5, max_bytes=300)
        >>> EgressTrace.from_dict(t.as_dict()).as_dict() == t.as_dict()
        True
        """
        entry, byte = self.entry_queue, self.byte_queue
        return {
            "entry_bounded": self.entry_bounded, "byte_bounded": self.byte_bounded,
            "offered": self.offered, "offered_bytes": self.offered_bytes, "max_payload": self.max_payload,
            "entry_traced_peak": self.entry_traced_peak, "byte_traced_peak": self.byte_traced_peak,
            "entry_queue": {name: getattr(entry, name) for name in _ENTRY_FIELDS},
            "byte_queue": {name: getattr(byte, name) for name in _BYTE_FIELDS},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EgressTrace:
        """Rebuild a trace from ``as_dict()``; its queues come back empty (as ``simulate`` leaves them), counters kept."""
        fields = dict(data)
        entry_data, byte_data = fields.pop("entry_queue"), fields.pop("byte_queue")
        entry, byte = EntryBoundedQueue(entry_data["max_entries"]), ByteBoundedQueue[bytes](byte_data["max_bytes"])
        for queue, values in ((entry, entry_data), (byte, byte_data)):
            for name, value in values.items():
                setattr(queue, name, value)
        return cls(entry_queue=entry, byte_queue=byte, **fields)


_ENTRY_FIELDS = ("max_entries", "shed_items", "shed_bytes")
_BYTE_FIELDS = ("max_bytes", "peak_bytes", "put_items", "put_bytes", "shed_items", "shed_bytes")


def drive_overload(queue: EntryBoundedQueue | ByteBoundedQueue[bytes], sizes: list[int], ticks: int, produce: int,
                   consume: int, held: list[int]) -> None:
    """Each tick, offer ``produce`` new payloads (sizes from ``sizes``) to ``queue``, take ``consume`` out, record bytes held.

    >>> held = []
    >>> drive_overload(EntryBoundedQueue(2), [10, 20, 30, 40], 2, 2, 1, held)
    >>> cost = {n: held_bytes(bytes(n)) + SLOT_BYTES for n in (20, 30)}  # what a queued n-byte payload holds
    >>> held == [cost[20], cost[30]]  # tick 1: 10 and 20 in, 10 out; tick 2: 30 in, 40 shed (full), 20 out
    True
    """
    k = 0
    for _ in range(ticks):
        for _ in range(produce):
            queue.put(bytes(sizes[k]))  # a fresh object per payload: the queue holds real bytes
            k += 1
        queue.drain(consume)
        held.append(queue.bytes)


def _traced_peak(run: Callable[[], None]) -> int:
    """Peak bytes allocated (tracemalloc) while ``run()`` ran, counted from its start."""
    return peak_bytes(run)[0]


def simulate(*, ticks: int = 200, produce: int = 60, consume: int = 40, max_payload: int = 16_384,
             max_entries: int = 2_000, max_bytes: int = 4 << 20, seed: int = 1, traced: bool = False) -> EgressTrace:
    """Each tick the producer offers ``produce`` payloads to each queue and the consumer takes ``consume`` from each.

    The consumer is slower than the producer, so both queues fill; what differs is
    what "full" means. Returns the bytes each held after every tick. The queues
    run one after the other on the same payload sizes (they do not interact), so
    with ``traced=True`` each one's memory is measured alone with ``tracemalloc``.
    Memory is at most about ``max_entries * max_payload`` bytes of payloads.
    """
    sizes = payload_sizes(ticks * produce, max_payload, seed=seed)
    trace = EgressTrace(entry_queue=EntryBoundedQueue(max_entries), byte_queue=ByteBoundedQueue(max_bytes),
                        offered=len(sizes), offered_bytes=sum(sizes), max_payload=max_payload)
    for queue, held, field_name in ((trace.entry_queue, trace.entry_bounded, "entry_traced_peak"),
                                    (trace.byte_queue, trace.byte_bounded, "byte_traced_peak")):
        def run(queue: EntryBoundedQueue | ByteBoundedQueue[bytes] = queue, held: list[int] = held) -> None:
            drive_overload(queue, sizes, ticks, produce, consume, held)
            queue.drain()  # let the payloads go: the next queue's run starts from nothing held

        if traced:
            gc.collect()
            setattr(trace, field_name, _traced_peak(run))
        else:
            run()
    return trace


def frame_scaling(max_payloads: Sequence[int] = (1_024, 16_384, 150_000), **kwargs: Any) -> list[EgressTrace]:
    """``simulate(traced=True, max_payload=m, **kwargs)`` for each largest payload ``m``, in order."""
    return [simulate(max_payload=m, traced=True, **kwargs) for m in max_payloads]


def frame_scaling_rows(max_payloads: Sequence[int], **kwargs: Any) -> list[dict[str, Any]]:
    """``frame_scaling`` as plain dicts: the target ``frame_scaling_isolated`` runs in a fresh process."""
    return [trace.as_dict() for trace in frame_scaling(max_payloads, **kwargs)]


def frame_scaling_isolated(max_payloads: Sequence[int] = (1_024, 16_384, 150_000), **kwargs: Any) -> list[EgressTrace]:
    """``frame_scaling`` run in one fresh interpreter (``edumatcher.kit._worker``), its traces brought back.

    The tens of MiB an entry-capped queue holds are allocated, traced and freed
    there, not in the notebook kernel, where other threads would allocate while
    ``tracemalloc`` runs and the freed memory would stay with the kernel.
    """
    from edumatcher.kit import run_isolated

    rows = run_isolated(f"{__name__}:frame_scaling_rows", {"max_payloads": list(max_payloads), **kwargs})
    return [EgressTrace.from_dict(row) for row in rows]


def scaling_verdict(traces: Sequence[EgressTrace], *, overhead: float = 0.05) -> str:
    """Two ``verdict:`` lines computed from ``frame_scaling`` traces, one per cap, each with a detail line: does each cap hold?

    The entry cap "follows the frames" when its traced peak rises at every larger
    frame size; the byte cap "holds" when every traced peak is within its cap plus
    the one frame being offered (allocated before ``put`` decides), plus
    ``overhead`` for what its count leaves out. The queue's default count
    includes each frame's header, its ``(item, size)`` record and deque slot, so
    what is left is the deque's block links: a small fraction. (Counted by
    ``len``, the same check needed 50 % for headers and records.)
    """
    if len(traces) < 2:
        raise ValueError("need traces for at least two frame sizes")
    entry = [t.entry_traced_peak for t in traces]
    cap = traces[0].byte_queue.max_bytes
    rising = all(b > a for a, b in zip(entry[:-1], entry[1:], strict=True))
    held = all(t.byte_traced_peak <= (cap + t.max_payload) * (1 + overhead) for t in traces)
    sizes = " -> ".join(f"{t.max_payload:,}" for t in traces)
    peaks = " -> ".join(f"{p / 2**20:.1f}" for p in entry)
    entry_part = ("the entry-capped queue's peak rose with the frames" if rising
                  else "the entry-capped queue's peak did not rise at every step")
    entry_part += f"\n    {peaks} MiB as the largest frame went {sizes} bytes"
    byte_part = (f"the byte-capped queue stayed within its {cap / 2**20:g} MiB cap at every size" if held
                 else f"the byte-capped queue went over its {cap / 2**20:g} MiB cap")
    byte_part += f"\n    the cap plus the frame on offer and {overhead:.0%} for what its count leaves out"
    return f"verdict: {entry_part}\nverdict: {byte_part}"


def engine_frame_queue(frames: int = 200_000, max_bytes: int = 10_000_000) -> dict[str, Any]:
    """Fill a default ``ByteBoundedQueue(max_bytes)`` with the engine's own trade frames; what it counts against what it holds.

    The frames come from ``edumatcher.messages.builders`` (right-sized when the
    codec over-allocates), each a ``(topic, payload)`` tuple as the engine
    publishes it. Returns ``frames_offered``, ``items``, ``counted`` (the queue's
    ``bytes``), ``traced`` (what ``tracemalloc`` saw the filled queue keep),
    ``len_bytes`` (the payloads' ``len``) and ``right_sized``. Run it in a fresh
    interpreter for a clean trace (``bench bounds`` does).

    >>> r = engine_frame_queue(frames=2_000, max_bytes=50_000)
    >>> r["counted"] <= 50_000 < r["frames_offered"] * 100, r["items"] < 2_000
    (True, True)
    """
    from edumatcher.messages import RIGHT_SIZED, TOPIC_TRADE_EXECUTED, builders

    build = builders.make_trade_executed_unchecked
    queue: ByteBoundedQueue[tuple[bytes, bytes]] = ByteBoundedQueue(max_bytes)

    def fill() -> None:
        for i in range(frames):
            queue.put((TOPIC_TRADE_EXECUTED, build("XYZ", i + 1, "100.25", 3, f"buy-{i:012d}", f"sell-{i:012d}",
                                                   "buyer-01", "seller-01", "BUY", 1_700_000_000_000_000_000 + i)))

    traced, _ = bytes_kept(fill)
    return {"frames_offered": frames, "items": len(queue), "counted": queue.bytes, "traced": traced,
            "len_bytes": sum(len(payload) for _, payload in queue), "right_sized": RIGHT_SIZED,
            "max_bytes": max_bytes}
