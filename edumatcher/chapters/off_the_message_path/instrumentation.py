"""What measuring the engine costs the engine: sampled timing, and whether a sample can be trusted.

Chapter 08 asks two questions about instrumentation on the message path:

* **Timing every message, or one in sixteen?** ``timing_costs`` runs the same
  payloads through loops shaped like ``Engine.run``'s (``timed_loop``) and compares,
  in interleaved passes (``comparison.compare_passes``), one message in ``every``
  timed into a ``LatencyRing`` against no timing, and every message timed against
  no timing. ``instrumentation_cost`` does it around a handler that does nothing,
  which isolates the instrumentation's own cost; ``timing_overhead`` around the
  real ``Engine.handle``, where that cost is a small part of each message.
* **Do percentiles from the sample agree with the full set?** ``sampled_percentiles``
  computes both from one list of per-message latencies.

``ModuloRing`` is the comparison case for the ring's index (``pos % size``
against ``LatencyRing``'s ``pos & mask``); the chapter times both in its own cells.

>>> rows = sampled_percentiles(list(range(1, 1601)), every=16)
>>> rows[0]
(50.0, 800, 800)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from edumatcher.engine import Engine
from edumatcher.kit import Comparison, Pass, compare_passes
from edumatcher.metrics import SAMPLE_EVERY, LatencyRing, nearest_rank

__all__ = [
    "PERCENTILES", "ModuloRing", "timed_loop", "TimingCost", "timing_costs", "timing_overhead",
    "instrumentation_cost", "InstrumentationShare", "instrumentation_share", "ratio_line",
    "sampled", "sampled_percentiles",
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


@dataclass(frozen=True)
class TimingCost:
    """Two comparisons against the same untimed loop: one message in ``every`` timed, and every message timed.

    In both, ``a`` is the timed loop and ``b`` the untimed one; samples are
    seconds per pass and ``per_op`` seconds per message.
    """

    sampled: Comparison
    every_message: Comparison
    every: int

    @property
    def sampled_ns(self) -> float:
        """Extra ns per message when one in ``every`` is timed (difference of the medians)."""
        return (self.sampled.a.per_op - self.sampled.b.per_op) * 1e9

    @property
    def every_ns(self) -> float:
        """Extra ns per message when every message is timed (difference of the medians)."""
        return (self.every_message.a.per_op - self.every_message.b.per_op) * 1e9

    @property
    def untimed_ns(self) -> float:
        """ns per message with no timing at all (the median of the untimed loop's passes in ``every_message``)."""
        return self.every_message.b.per_op * 1e9


def _contender(label: str, make_handler: Callable[[], Callable[[bytes], object]], payloads: Sequence[bytes],
               every: int) -> Pass:
    def prepare() -> tuple[Callable[[bytes], object], LatencyRing]:
        return make_handler(), LatencyRing()  # built off the clock: a pass times the loop only

    def run(data: Any) -> int:
        handle, ring = data
        return timed_loop(handle, payloads, every, ring)

    return Pass(label, run, prepare, len(payloads))


def timing_costs(make_handler: Callable[[], Callable[[bytes], object]], payloads: Sequence[bytes], *,
                 every: int = SAMPLE_EVERY, what: str = "loop", budget: float = 1.0) -> TimingCost:
    """Compare ``timed_loop`` timing 1 in ``every`` and timing every message against no timing, interleaved.

    Each sample is one pass of ``timed_loop`` over ``payloads`` with a fresh
    handler from ``make_handler`` and a fresh ring, both built off the clock
    (``compare_passes``). ``what`` starts every label. Cost: about ``2 * budget`` seconds.
    """
    untimed = _contender(f"{what}, no timing", make_handler, payloads, 0)
    sampled = compare_passes(_contender(f"{what}, 1 in {every} timed", make_handler, payloads, every), untimed,
                             budget=budget)
    everything = compare_passes(_contender(f"{what}, every message timed", make_handler, payloads, 1), untimed,
                                budget=budget)
    return TimingCost(sampled, everything, every)


def timing_overhead(payloads: Sequence[bytes], *, every: int = SAMPLE_EVERY, budget: float = 1.5) -> TimingCost:
    """``timing_costs`` on the real message path: a fresh one-book ``Engine`` (constant clock) per pass."""
    def fresh() -> Callable[[bytes], object]:
        return Engine(["EDU"], clock=lambda: 1).handle

    return timing_costs(fresh, payloads, every=every, what="Engine.handle", budget=budget)


def _nothing(payload: bytes) -> None:
    """A handler that does no work: what is left in the loop is the loop and the instrumentation."""


def instrumentation_cost(messages: int = 20_000, *, every: int = SAMPLE_EVERY, budget: float = 1.0) -> TimingCost:
    """``timing_costs`` around a handler that does nothing: the instrumentation's own cost per message."""
    return timing_costs(lambda: _nothing, [b"x"] * messages, every=every, what="empty handler", budget=budget)


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


def instrumentation_share(empty: TimingCost, engine: TimingCost) -> InstrumentationShare:
    """Per-message costs of timing (from the empty-handler loops) and their share of handling a message.

    The instrumentation's cost comes from ``empty`` (timed minus untimed, per
    message), where nothing else hides it; the handling cost from ``engine``'s
    untimed loop. Both are medians measured in this run.
    """
    return InstrumentationShare(empty.sampled_ns, empty.every_ns, engine.untimed_ns, empty.every)


def ratio_line(comparison: Comparison) -> str:
    """The measured ratio and its interval, with no verdict: for effects too close to the negligible band to word.

    A comparison whose true ratio sits near the edge of the ±5 % band lands
    inside it in one run and outside in the next; its ``verdict`` would flip
    between runs, so the chapter prints this line instead.

    >>> from edumatcher.kit import compare
    >>> from edumatcher.kit import Measurement
    >>> a = Measurement.from_samples([1.05, 1.04, 1.06, 1.05, 1.05], label="timed")
    >>> b = Measurement.from_samples([1.0, 1.01, 0.99, 1.0, 1.0], label="untimed")
    >>> ratio_line(compare(a, b)).split(" (")[0]
    'measured, no verdict drawn: timed / untimed = 1.05'
    """
    name_a, name_b = comparison.names
    return (f"measured, no verdict drawn: {name_a} / {name_b} = {comparison.ratio:.2f} ({comparison.ci_text}); "
            f"an effect this size can land inside or outside the ±{comparison.negligible * 100:.0f} % band from run "
            "to run")


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
