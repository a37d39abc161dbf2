"""Latency as clients see it: an open-loop load generator and its response-time report.

A *closed-loop* benchmark sends the next message when the previous one is done.
When the engine stalls (a collection, a freeze, a slow message), the benchmark
stalls with it and simply sends nothing meanwhile, so the messages that real
clients would have sent during the stall are never timed. That is *coordinated
omission*: the measurement co-operates with the system it measures, and the
stall costs one slow sample instead of the hundreds of waiting clients it really
costs.

An *open-loop* generator fixes every message's **intended send time** in advance
(constant spacing or Poisson arrivals at a chosen offered rate, from a seeded
RNG) and never moves it. ``drive`` plays the messages in one thread, like the
engine's own run loop:

* if the next message's intended time has not come yet, the engine is idle:
  run the idle maintenance once (``maintain(True)``: snapshot flushes, the
  collector policy's idle tick, which may be the freeze), then wait until it;
* otherwise handle it at once, then run the busy maintenance (``maintain(False)``).

One idle maintenance per gap is what ``Engine.run`` does for one empty poll; a
source that returned ``None`` many times during a gap would tick more often.

Two times are recorded per message:

* **response time** = completion - intended start: what the client waits,
  including any time queued behind a freeze or a slow message;
* **service time** = completion - actual start: one call timed, what an engine's
  own instrumentation (``metrics.LatencyRing``) sees.

Response >= service for every message, and the gap is the queueing delay.
``LatencyReport`` puts both into HDR histograms (``hdrh``, ns, 3 significant
digits) and reports the spectrum to the max: p50, p90, p99, p99.9, p99.99, max.

>>> from edumatcher.kit.open_loop import arrival_offsets, drive
>>> clock = [0]
>>> def handle(payload):  # a fake engine: each message takes 100 µs of fake time
...     clock[0] += 100_000
>>> def wait_until(t):
...     clock[0] = max(clock[0], t)
>>> run = drive(handle, [b"m"] * 4, arrival_offsets(4, 10_000.0, kind="constant"),
...             clock=lambda: clock[0], wait_until=wait_until)
>>> run.response_ns, run.service_ns  # 100 µs apart, 100 µs each: nobody waits
([100000, 100000, 100000, 100000], [100000, 100000, 100000, 100000])
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy and hdrh are imported where used: a worker process that imports the kit needs neither
    from hdrh.histogram import HdrHistogram

__all__ = [
    "ARRIVALS", "HIGHEST_NS", "SIGNIFICANT_DIGITS", "PERCENTILES", "SLEEP_ABOVE_NS", "NOTE_MAINTENANCE_NS",
    "arrival_offsets", "spin_until", "OpenLoopRun", "Percentiles", "LatencyReport", "drive", "histogram",
]

ARRIVALS = ("constant", "poisson")
"""Arrival processes: ``constant`` spacing 1/rate, or ``poisson`` (exponential gaps of mean 1/rate)."""
HIGHEST_NS = 3_600_000_000_000
"""Largest value the histograms hold: one hour in ns (larger values are clamped to it)."""
SIGNIFICANT_DIGITS = 3
"""HDR histogram precision: every recorded value is kept to 3 significant digits (0.1 %)."""
PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99, 100.0)
"""The spectrum reported, to the max (100)."""
SLEEP_ABOVE_NS = 2_000_000
"""Waits longer than this sleep for all but this much, then spin: ``time.sleep`` can
overshoot by tens of µs, which would delay the next message, while spinning for
long gaps would burn a CPU the rest of a shared machine needs."""
NOTE_MAINTENANCE_NS = 10_000
"""Maintenance calls at least this long are recorded (start, end) in ``OpenLoopRun``."""


def arrival_offsets(n: int, rate: float, *, kind: str = "poisson", seed: int = 1) -> list[int]:
    """Intended send times of ``n`` messages at ``rate`` per second, in ns from the start, fixed in advance.

    ``constant``: ``i / rate``. ``poisson``: cumulative exponential gaps of mean
    ``1 / rate`` drawn from ``numpy.random.default_rng(seed)``, so the same seed
    gives the same schedule. The first message is due at 0 in both. O(n).

    >>> arrival_offsets(3, 1_000.0, kind="constant")
    [0, 1000000, 2000000]
    >>> arrival_offsets(3, 1_000.0, seed=5) == arrival_offsets(3, 1_000.0, seed=5)
    True
    """
    import numpy as np

    if n < 0:
        raise ValueError(f"n must be >= 0, not {n!r}")
    if not rate > 0 or rate == float("inf"):
        raise ValueError(f"rate must be a positive, finite number of messages per second, not {rate!r}")
    if kind == "constant":
        offsets = np.arange(n, dtype=np.float64) * (1e9 / rate)
    elif kind == "poisson":
        gaps = np.random.default_rng(seed).exponential(1e9 / rate, n)
        gaps[:1] = 0.0
        offsets = np.cumsum(gaps)
    else:
        raise ValueError(f"kind must be one of {ARRIVALS}, not {kind!r}")
    return [int(x) for x in np.rint(offsets)]


def spin_until(due_ns: int, clock: Callable[[], int] = time.perf_counter_ns) -> None:
    """Wait until ``clock() >= due_ns``: sleep through all but the last ``SLEEP_ABOVE_NS``, then busy-wait."""
    remaining = due_ns - clock()
    if remaining > SLEEP_ABOVE_NS:
        time.sleep((remaining - SLEEP_ABOVE_NS) / 1e9)
    while clock() < due_ns:
        pass


def histogram(values_ns: Sequence[int]) -> HdrHistogram:
    """An HDR histogram (1 ns .. ``HIGHEST_NS``, ``SIGNIFICANT_DIGITS``) holding ``values_ns``. O(n).

    Values below 1 ns count as 1 ns and values above the range as ``HIGHEST_NS``.
    """
    from hdrh.histogram import HdrHistogram

    h = HdrHistogram(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
    record = h.record_value
    for v in values_ns:
        record(1 if v < 1 else HIGHEST_NS if v > HIGHEST_NS else v)
    return h


@dataclass(frozen=True)
class Percentiles:
    """p50, p90, p99, p99.9, p99.99 and max of one histogram, in ns (each to 3 significant digits)."""

    p50: int
    p90: int
    p99: int
    p99_9: int
    p99_99: int
    max: int

    @classmethod
    def of(cls, h: HdrHistogram) -> Percentiles:
        """Read ``PERCENTILES`` from ``h`` (HDR's value at each percentile: the top of its bucket)."""
        if h.get_total_count() == 0:
            raise ValueError("no values recorded: percentiles of nothing are undefined")
        values = [int(h.get_value_at_percentile(p)) for p in PERCENTILES[:-1]]
        return cls(*values, int(h.get_max_value()))

    def as_tuple(self) -> tuple[int, int, int, int, int, int]:
        """``(p50, p90, p99, p99.9, p99.99, max)`` in ns."""
        return (self.p50, self.p90, self.p99, self.p99_9, self.p99_99, self.max)


@dataclass
class OpenLoopRun:
    """What ``drive`` recorded, per message and in ns from the start of the run.

    ``intended_ns``, ``started_ns``, ``completed_ns``: when each message was due,
    when handling began, when it returned. ``gc_ns``: collection time inside each
    message (with a ``gc_monitor``; zeros without). ``maintenance``: ``(start, end,
    idle)`` of every maintenance call that took at least ``NOTE_MAINTENANCE_NS``.
    ``origin_ns``: the clock's reading at the start, to place other events on the same axis.
    """

    label: str
    offered_rate: float
    intended_ns: list[int]
    started_ns: list[int]
    completed_ns: list[int]
    gc_ns: list[int]
    maintenance: list[tuple[int, int, bool]] = field(default_factory=list)
    origin_ns: int = 0  # the clock's reading at the start: times above are relative to it

    @property
    def response_ns(self) -> list[int]:
        """Completion - intended start, per message: what the client waited. O(n)."""
        return [c - i for c, i in zip(self.completed_ns, self.intended_ns, strict=True)]

    @property
    def service_ns(self) -> list[int]:
        """Completion - actual start, per message: the call alone. O(n)."""
        return [c - s for c, s in zip(self.completed_ns, self.started_ns, strict=True)]

    @property
    def queued_ns(self) -> list[int]:
        """Actual start - intended start, per message: time spent waiting its turn. O(n)."""
        return [s - i for s, i in zip(self.started_ns, self.intended_ns, strict=True)]

    def report(self) -> LatencyReport:
        """Summarise into a ``LatencyReport`` (HDR histograms of response and service time). O(n)."""
        return LatencyReport.of(self)

    def as_dict(self) -> dict[str, Any]:
        """Plain data (lists of ints), so a run made in a worker process can travel back as JSON. O(n).

        >>> run = OpenLoopRun("x", 10.0, [0, 5], [0, 6], [3, 9], [0, 0], [(1, 2, True)], 7)
        >>> OpenLoopRun.from_dict(run.as_dict()) == run
        True
        """
        return {"label": self.label, "offered_rate": self.offered_rate, "intended_ns": self.intended_ns,
                "started_ns": self.started_ns, "completed_ns": self.completed_ns, "gc_ns": self.gc_ns,
                "maintenance": [list(m) for m in self.maintenance], "origin_ns": self.origin_ns}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> OpenLoopRun:
        """Rebuild a run from ``as_dict``'s output (for example ``run_isolated``'s result). O(n)."""
        return cls(data["label"], float(data["offered_rate"]), list(data["intended_ns"]), list(data["started_ns"]),
                   list(data["completed_ns"]), list(data["gc_ns"]),
                   [(int(a), int(b), bool(idle)) for a, b, idle in data.get("maintenance", [])],
                   int(data.get("origin_ns", 0)))


@dataclass
class LatencyReport:
    """Response time beside service time for one open-loop run, plus rates and the worst queueing delay.

    ``offered_rate``: the schedule's messages per second. ``achieved_rate``:
    messages / (last completion - first intended start). ``response`` and
    ``service``: ``Percentiles`` in ns; ``response_histogram`` and
    ``service_histogram`` are the HDR histograms themselves.
    """

    label: str
    count: int
    offered_rate: float
    achieved_rate: float
    response: Percentiles
    service: Percentiles
    worst_queueing_ns: int
    seconds: float
    response_histogram: HdrHistogram = field(repr=False, compare=False)
    service_histogram: HdrHistogram = field(repr=False, compare=False)

    @classmethod
    def of(cls, run: OpenLoopRun) -> LatencyReport:
        """Build the report of ``run``. O(n)."""
        if not run.completed_ns:
            raise ValueError("the run handled no messages")
        response, service = histogram(run.response_ns), histogram(run.service_ns)
        span = run.completed_ns[-1] - run.intended_ns[0]
        return cls(
            run.label, len(run.completed_ns), run.offered_rate,
            len(run.completed_ns) / (span / 1e9) if span > 0 else float("inf"),
            Percentiles.of(response), Percentiles.of(service), max(run.queued_ns), span / 1e9,
            response, service,
        )

    def rows(self) -> list[list[str]]:
        """The table as text cells: one row each for response and service time, µs."""
        return [[name] + [f"{v / 1e3:,.1f}" for v in p.as_tuple()] for name, p in (("response", self.response), ("service", self.service))]

    def headline(self) -> str:
        """One line: label, count, offered and achieved rate, worst queueing delay."""
        return (f"{self.label + ': ' if self.label else ''}{self.count:,} messages, offered {self.offered_rate:,.0f} msg/s, "
                f"achieved {self.achieved_rate:,.0f} msg/s, worst queueing delay {self.worst_queueing_ns / 1e3:,.1f} µs")

    def __str__(self) -> str:
        head = ["", "p50", "p90", "p99", "p99.9", "p99.99", "max"]
        lines = [self.headline(), "  ".join(f"{h:>10}" for h in head) + "   (µs)"]
        lines += ["  ".join(f"{c:>10}" for c in row) for row in self.rows()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        head = "".join(f"<th>{h}</th>" for h in ("time (µs)", "p50", "p90", "p99", "p99.9", "p99.99", "max"))
        body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in self.rows())
        return f"<p>{self.headline()}</p><table><tr>{head}</tr>{body}</table>"


def drive(
    handle: Callable[[bytes], Any],
    payloads: Sequence[bytes],
    offsets_ns: Sequence[int],
    *,
    maintain: Callable[[bool], Any] | None = None,
    clock: Callable[[], int] = time.perf_counter_ns,
    wait_until: Callable[[int], None] | None = None,
    gc_monitor: Any = None,
    offered_rate: float = 0.0,
    label: str = "",
) -> OpenLoopRun:
    """Play ``payloads`` at their intended times ``offsets_ns`` (ns from the start) through ``handle``; one thread. O(n).

    Each step: if the next message is not due yet, call ``maintain(True)`` once
    (idle), then ``wait_until`` its intended time; otherwise handle it at once
    and call ``maintain(False)`` (busy). Intended times never move, so a message
    due during a stall starts late and its response time says so.

    ``clock``: ns (``time.perf_counter_ns``; tests pass a fake). ``wait_until(t)``
    must return once ``clock() >= t`` (default: ``spin_until`` on ``clock``).
    ``gc_monitor``: a ``metrics.GcMonitor`` already installed, read around each
    message for the collection time inside it. ``offered_rate``: for the report.
    """
    n = len(payloads)
    if len(offsets_ns) != n:
        raise ValueError(f"{n} payloads but {len(offsets_ns)} intended times")
    if any(b < a for a, b in zip(offsets_ns, offsets_ns[1:], strict=False)):
        raise ValueError("intended times must not decrease")
    if wait_until is None:
        def wait_until(due: int) -> None:
            spin_until(due, clock)
    # Preallocated lists of ints (which the collector never tracks): the loop allocates no container.
    intended, started, completed, inside = [0] * n, [0] * n, [0] * n, [0] * n
    maintenance: list[tuple[int, int, bool]] = []
    note = NOTE_MAINTENANCE_NS
    t0 = clock()
    i = 0
    idle_done = False
    while i < n:
        due = t0 + offsets_ns[i]
        now = clock()
        if now < due:
            if maintain is not None and not idle_done:
                idle_done = True  # one idle maintenance per gap, as one empty poll of the run loop
                maintain(True)
                end = clock()
                if end - now >= note:
                    maintenance.append((now - t0, end - t0, True))
                continue  # the maintenance may have run past the due time
            wait_until(due)
            now = clock()
        g0 = gc_monitor.total_ns if gc_monitor is not None else 0
        handle(payloads[i])
        done = clock()
        if gc_monitor is not None:
            inside[i] = gc_monitor.total_ns - g0
        intended[i], started[i], completed[i] = due - t0, now - t0, done - t0
        i += 1
        idle_done = False
        if maintain is not None:
            maintain(False)
            end = clock()
            if end - done >= note:
                maintenance.append((done - t0, end - t0, False))
    return OpenLoopRun(label, offered_rate, intended, started, completed, inside, maintenance, t0)
