"""What measuring the engine costs the engine: sampled timing, mask against modulo, counters against events.

Chapter 06 asks three questions about instrumentation on the message path:

* **Timing every message, or one in sixteen?** ``timing_overhead`` runs the same
  payloads through loops shaped like ``Engine.run``'s: no timing, one message in
  ``every`` timed into a ``LatencyRing``, every message timed. ``instrumentation_cost``
  runs the same loops around a handler that does nothing, which isolates the
  cost of the instrumentation itself.
* **Do percentiles from the sample agree with the full set?** ``sampled_percentiles``
  computes both from one list of per-message latencies.
* **Mask or modulo?** ``ring_index_costs`` times ``LatencyRing.add`` (``pos & mask``)
  against ``ModuloRing.add`` (``pos % size``), and the two operators alone.
* **A counter or an event record?** ``counter_vs_event`` times incrementing a
  per-owner counter against appending an event dict that something would
  interpret later.

>>> rows = sampled_percentiles(list(range(1, 1601)), every=16)
>>> rows[0]
(50.0, 800, 800)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engine import Engine
from ..measure import Measurement, Pass, interleave, measure
from ..metrics import SAMPLE_EVERY, LatencyRing, nearest_rank

__all__ = [
    "PERCENTILES", "ModuloRing", "timed_loop", "timing_overhead", "instrumentation_cost",
    "InstrumentationShare", "instrumentation_share",
    "sampled", "sampled_percentiles", "ring_index_costs", "counter_vs_event",
]

PERCENTILES: tuple[float, ...] = (50.0, 90.0, 99.0, 99.9)
"""The percentiles the chapter compares between the full set and the sample."""


class ModuloRing(LatencyRing):
    """``LatencyRing`` with its write index computed by ``pos % size`` instead of ``pos & mask``: the comparison case.

    >>> ring = ModuloRing(4)
    >>> for d in (1, 2, 3, 4, 5):
    ...     ring.add(0, d, 0)
    >>> ring.durations()
    [2, 3, 4, 5]
    """

    __slots__ = ()

    def add(self, started_ns: int, duration_ns: int, gc_ns: int = 0) -> None:
        """Record one sample; the index is a modulo. O(1)."""
        i = self.pos % self.size
        self.started_ns[i] = started_ns
        self.duration_ns[i] = duration_ns
        self.gc_ns[i] = gc_ns
        self.pos += 1


def timed_loop(handle: Callable[[bytes], object], payloads: Sequence[bytes], every: int, ring: LatencyRing) -> int:
    """Handle every payload, timing one in ``every`` into ``ring`` (``every`` a power of two; 0: time none). O(n).

    The shape is ``Engine.run``'s: an exact message count, and the test
    ``not count & mask`` choosing the messages to time. Returns the count.
    """
    if every and every & (every - 1):
        raise ValueError(f"every must be 0 or a power of two, not {every!r}")
    count = 0
    if not every:
        for payload in payloads:
            count += 1
            handle(payload)
        return count
    mask = every - 1
    clock = time.perf_counter_ns
    add = ring.add
    for payload in payloads:
        count += 1
        if count & mask:
            handle(payload)
        else:
            t0 = clock()
            handle(payload)
            add(t0, clock() - t0, 0)
    return count


def _contenders(make_handler: Callable[[], Callable[[bytes], object]], payloads: Sequence[bytes],
                every: int, what: str) -> list[Pass]:
    n = len(payloads)

    def run_with(k: int) -> Callable[[Callable[[bytes], object]], int]:
        return lambda handle: timed_loop(handle, payloads, k, LatencyRing())

    return [
        Pass(f"{what}, no timing", run_with(0), make_handler, n),
        Pass(f"{what}, 1 in {every} timed", run_with(every), make_handler, n),
        Pass(f"{what}, every message timed", run_with(1), make_handler, n),
    ]


def timing_overhead(payloads: Sequence[bytes], *, every: int = SAMPLE_EVERY, repeat: int = 5) -> list[Measurement]:
    """Time the real message path three ways: untimed, 1 in ``every`` timed, all timed (interleaved passes).

    Each pass uses a fresh one-book ``Engine`` with a constant clock; the
    measurements' ``per_op`` is seconds per message. Returns them in that order.
    """
    def fresh() -> Callable[[bytes], object]:
        return Engine(["EDU"], clock=lambda: 1).handle

    return interleave(_contenders(fresh, payloads, every, "Engine.handle"), repeat=repeat)


def _nothing(payload: bytes) -> None:
    """A handler that does no work: what is left in the loop is the loop and the instrumentation."""


def instrumentation_cost(messages: int = 20_000, *, every: int = SAMPLE_EVERY, repeat: int = 5) -> list[Measurement]:
    """The same three loops around a handler that does nothing: the instrumentation's own cost per message."""
    payloads = [b"x"] * messages
    return interleave(_contenders(lambda: _nothing, payloads, every, "empty handler"), repeat=repeat)


@dataclass(frozen=True)
class InstrumentationShare:
    """What timing costs per message, alone and as a share of handling one message (medians)."""

    sampled_ns: float  # extra ns per message when one in N is timed
    every_ns: float  # extra ns per message when every message is timed
    handle_ns: float  # ns to handle one message, untimed
    every: int

    @property
    def sampled_share(self) -> float:
        """``sampled_ns / handle_ns``: the fraction of the message path that sampled timing adds."""
        return self.sampled_ns / self.handle_ns

    @property
    def every_share(self) -> float:
        """``every_ns / handle_ns``: the fraction of the message path that timing every message adds."""
        return self.every_ns / self.handle_ns


def instrumentation_share(empty: Sequence[Measurement], engine: Sequence[Measurement], every: int = SAMPLE_EVERY) -> InstrumentationShare:
    """Combine ``instrumentation_cost`` and ``timing_overhead`` results into per-message costs and shares.

    The instrumentation's cost comes from the empty-handler loops (timed minus
    untimed, per message), where nothing else hides it; the handling cost from
    the untimed engine loop. Both are medians, so the share is a ratio of two
    figures measured in this run.

    >>> fake = [Measurement.from_samples([s] * 5, ops_per_call=1) for s in (1e-9, 3e-9, 33e-9)]
    >>> real = [Measurement.from_samples([10e-6] * 5, ops_per_call=1)] * 3
    >>> share = instrumentation_share(fake, real)
    >>> round(share.sampled_ns), round(share.every_ns), f"{share.every_share:.2%}"
    (2, 32, '0.32%')
    """
    none, one_in, every_msg = (m.per_op * 1e9 for m in empty)
    return InstrumentationShare(one_in - none, every_msg - none, engine[0].per_op * 1e9, every)


def sampled(values: Sequence[int], every: int = SAMPLE_EVERY) -> list[int]:
    """The values the run loop would have timed: messages number ``every``, ``2*every``, ... (1-based). O(n).

    >>> sampled(list(range(1, 33)), every=16)
    [16, 32]
    """
    if every < 1:
        raise ValueError(f"every must be >= 1, not {every!r}")
    return list(values[every - 1::every])


def sampled_percentiles(
    latencies: Sequence[int], *, every: int = SAMPLE_EVERY, percentiles: Sequence[float] = PERCENTILES,
) -> list[tuple[float, int, int]]:
    """``(p, from all messages, from the 1-in-every sample)`` for each percentile, nearest rank. O(n log n).

    Raises ``ValueError`` if the sample is empty (fewer than ``every`` latencies).
    """
    everything = sorted(latencies)
    sample = sorted(sampled(latencies, every))
    if not sample:
        raise ValueError(f"{len(latencies)} latencies give no sample at 1 in {every}")
    return [(float(p), int(nearest_rank(everything, p)), int(nearest_rank(sample, p))) for p in percentiles]


def ring_index_costs(*, repeat: int = 7, target: float = 0.02) -> list[Measurement]:
    """Time the write index both ways: the operators alone, then a whole ``add`` on each ring class.

    Returns ``[pos & mask, pos % size, LatencyRing.add, ModuloRing.add]``. The
    position is a large int that moves every iteration, as the ring's ``pos`` does.
    """
    setup = "pos = 1_000_003"
    return [
        measure("i = pos & 1023; pos += 1", setup=setup, repeat=repeat, target=target, label="index: pos & mask"),
        measure("i = pos % 1024; pos += 1", setup=setup, repeat=repeat, target=target, label="index: pos % size"),
        measure("add(1, 2, 0)", setup="add = ring.add", globals={"ring": LatencyRing()}, repeat=repeat,
                target=target, label="LatencyRing.add (mask)"),
        measure("add(1, 2, 0)", setup="add = ring.add", globals={"ring": ModuloRing()}, repeat=repeat,
                target=target, label="ModuloRing.add (modulo)"),
    ]


def counter_vs_event(*, repeat: int = 5, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """Time counting a fill (``fills[owner] = fills.get(owner, 0) + 1``) against recording it as an event dict.

    The event version appends a new dict per fill to a list that someone would
    read and interpret later; the list is emptied before each sample so it stays
    the same size from sample to sample.
    """
    names: dict[str, object] = {"owner": "ana", "qty": 5, "ts": 123_456_789, "fills": {}, "events": []}
    counter = measure("fills[owner] = fills.get(owner, 0) + 1", globals=names, repeat=repeat, target=target,
                      label="counter: fills[owner] += 1")
    event = measure(
        'events.append({"kind": "fill", "owner": owner, "qty": qty, "ts": ts})',
        setup=lambda: names["events"].clear(),  # type: ignore[attr-defined]
        globals=names, repeat=repeat, target=target, label="event: append a dict per fill",
    )
    names["events"].clear()  # type: ignore[attr-defined]
    return counter, event
