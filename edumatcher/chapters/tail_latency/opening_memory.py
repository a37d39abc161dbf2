"""Memory over an opening: why the freeze waits until the book has filled.

``ramp_profile`` feeds ``workloads.opening_ramp`` (a burst of resting orders,
then a steady stream that holds the book's size) to an ``OrderBook`` one
operation at a time, and samples ``tracemalloc``'s count of bytes allocated since
the start and still held. It also asks, at three moments, how many objects a
``gc.freeze()`` would take out of the collector's reach: before the first order
(start-up), when the ramp ends (where ``GcPolicy`` freezes, after its delay) and
at the end. Each freeze is done as ``GcPolicy`` does it (a full collection,
then ``gc.freeze()``) and undone at once; the number is what matters.

>>> profile = ramp_profile(200, then=100, every=50)
>>> profile.ramp_end, profile.ops[-1], len(profile.freeze_counts)
(200, 300, 3)
"""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import dataclass

from edumatcher.book import OrderBook
from edumatcher.chapters.garbage_collection.gc_pauses import frozen
from edumatcher.model import OrderRejected
from edumatcher.workloads import CANCEL, CANCEL_OWNER, NEW, SYMBOL, opening_ramp, to_order

__all__ = ["RampProfile", "ramp_profile"]


@dataclass(frozen=True)
class RampProfile:
    """Bytes held after each sampled operation, the index where the ramp ends, and the freeze counts."""

    ops: list[int]
    traced_bytes: list[int]
    ramp_end: int
    freeze_counts: dict[str, int]
    resting_at_end: int


def _freeze_count() -> int:
    """Objects a freeze would take now, done as ``GcPolicy`` does it: a full collection first, so no garbage counts."""
    gc.collect()
    with frozen() as count:
        return count


def ramp_profile(resting: int = 20_000, *, then: int = 10_000, every: int = 250, seed: int = 1) -> RampProfile:
    """Feed an opening ramp of ``resting`` orders, then ``then`` steady operations; sample memory every ``every``.

    Orders are built one at a time as they are submitted, so what ``tracemalloc``
    sees growing is the book (and its orders), not a prepared list. Refuses to
    run while objects are frozen (see ``gc_pauses.frozen``). O(n) operations.
    """
    if every < 1:
        raise ValueError(f"every must be >= 1, not {every!r}")
    ops = opening_ramp(resting, seed, then=then)
    book = OrderBook(SYMBOL)
    counts = {"start-up": _freeze_count()}
    xs: list[int] = [0]
    ys: list[int] = [0]
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        ys[0] = 0
        for i, op in enumerate(ops, 1):
            kind = op[0]
            if kind == NEW:
                try:
                    book.submit(to_order(op))
                except OrderRejected:
                    pass
            elif kind == CANCEL:
                book.cancel(op[1])
            elif kind == CANCEL_OWNER:
                book.cancel_owner(op[1])
            if i == resting:
                counts["end of the ramp"] = _freeze_count()
            if i % every == 0 or i == len(ops):
                xs.append(i)
                ys.append(tracemalloc.get_traced_memory()[0] - base)
    finally:
        if started_here:
            tracemalloc.stop()
    counts["end of the run"] = _freeze_count()
    resting_at_end = len(book)
    del book
    gc.collect()
    return RampProfile(xs, ys, resting, counts, resting_at_end)
