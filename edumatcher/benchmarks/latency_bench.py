"""``bench latency``: response time as clients see it, against offered load.

Method
------
* **Workload**: ``workloads.steady_state(N, seed)``, N = ``FULL_MESSAGES`` per load
  (``QUICK_MESSAGES`` with ``--quick``), every operation encoded once, before
  timing, into the payload a client sends (as ``bench engine`` does).
* **Capacity first**: the same driver with every intended send time at 0 (a closed
  loop: the next message goes as soon as the last is done), on a fresh ``Engine``
  per pass; capacity is the median messages/s over ``repeat`` passes (after one
  warm-up pass), printed with its range.
* **Then a sweep of offered load** (``LOADS``: 10 % to 90 % of that capacity):
  ``open_loop.drive`` fixes every message's intended send time in advance (Poisson
  arrivals by default, seeded) and plays them into a fresh ``Engine`` in one
  thread, running the engine's own maintenance (``Engine.maintain``: snapshot
  flushes) between messages, once per idle gap and after every message, as
  ``Engine.run`` does. The collector is left as the interpreter set it.
* **Two times per message**: response time = completion - intended start (what
  a client waits, queueing included) and service time = completion - actual
  start (one call timed). Both go into HDR histograms (ns, 3 significant digits);
  the table prints p50 ... max of each.
* Figures are printed, never checked against a target: the lesson is the shape
  (p50 nearly flat, p99 rising as the queue builds), measured here.
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass

from .. import workloads
from ..cli import CliError
from ..measure import interpreter, machine
from ..open_loop import ARRIVALS, LatencyReport, arrival_offsets, drive
from ..sinks import DiscardingSink
from . import resolve_repeat, say

__all__ = [
    "run", "sweep", "capacity", "LoadRow", "Sweep", "LOADS", "FULL_MESSAGES", "QUICK_MESSAGES", "QUOTED_SEED_002",
]

LOADS = (0.1, 0.3, 0.5, 0.7, 0.9)
"""Offered load as fractions of the measured capacity."""
FULL_MESSAGES = 100_000
QUICK_MESSAGES = 10_000
DECIMALS = 2

QUOTED_SEED_002 = (
    '"p50 matching latency stays around 0.3 µs across the whole range, from 1,000 to 281,000 orders/sec." '
    '... "The p99 tail is the other half. It\'s about 10 µs at light load and rises to a few milliseconds under '
    'heavy load." (quoted, seed 002: Open Exchange\'s array-backed book, a Java engine in a 3-node Raft cluster '
    'on an Intel 13700K; their tail came from the pipeline around the engine, ours from the queue in front of it)'
)


def _engine() -> tuple[object, object]:
    try:
        from ..engine import Engine
    except ImportError as exc:
        raise CliError(f"bench latency needs Engine: {exc}") from None
    engine = Engine([workloads.SYMBOL], decimals=DECIMALS)
    sink = DiscardingSink()

    def maintain(idle: bool) -> None:
        engine.maintain(sink, idle)

    return engine.handle, maintain


def capacity(payloads: list[bytes], passes: int) -> list[float]:
    """Closed-loop messages/s of ``passes`` passes (after one warm-up), each on a fresh engine. O(passes x n)."""
    rates = []
    zeros = [0] * len(payloads)
    for i in range(passes + 1):
        handle, maintain = _engine()
        started = time.perf_counter_ns()
        drive(handle, payloads, zeros, maintain=maintain)
        seconds = (time.perf_counter_ns() - started) / 1e9
        if i:  # the first pass warms the caches and the interpreter's specialisation
            rates.append(len(payloads) / seconds)
    return rates


@dataclass
class LoadRow:
    """One point of the sweep: the offered load as a fraction of capacity, and what it measured."""

    load: float
    report: LatencyReport

    def cells(self) -> list[str]:
        """The row as text: load, offered, achieved, response p50..max, service p50/p99/max (µs), worst queueing."""
        r = self.report
        resp, serv = r.response, r.service
        return ([f"{self.load:.0%}", f"{r.offered_rate:,.0f}", f"{r.achieved_rate:,.0f}"]
                + [f"{v / 1e3:,.1f}" for v in resp.as_tuple()]
                + [f"{v / 1e3:,.1f}" for v in (serv.p50, serv.p99, serv.max)]
                + [f"{r.worst_queueing_ns / 1e3:,.1f}"])


HEADER = ["load", "offered/s", "achieved/s", "resp p50", "p90", "p99", "p99.9", "p99.99", "max",
          "serv p50", "p99", "max", "worst queue"]


@dataclass
class Sweep:
    """Capacity (closed-loop msg/s per pass) and one ``LoadRow`` per offered load."""

    capacity_rates: list[float]
    rows: list[LoadRow]
    messages: int
    arrivals: str

    @property
    def capacity(self) -> float:
        """Median closed-loop messages/s."""
        return statistics.median(self.capacity_rates)

    def table(self) -> str:
        """The sweep as an aligned text table (times in µs)."""
        widths = [5, 10, 10, 9, 9, 9, 9, 9, 9, 9, 9, 9, 11]
        lines = ["  ".join(f"{h:>{w}}" for h, w in zip(HEADER, widths, strict=True)),
                 f"{'':>29}{'response time (µs), completion - intended start':^59}  {'service time (µs)':^31}"]
        lines.insert(0, lines.pop())  # the group labels above the column names
        lines += ["  ".join(f"{c:>{w}}" for c, w in zip(row.cells(), widths, strict=True)) for row in self.rows]
        return "\n".join(lines)

    def shape(self) -> str:
        """How p50 and p99 of response time moved from the lightest to the heaviest load (computed, not judged)."""
        lo, hi = self.rows[0].report.response, self.rows[-1].report.response
        return (f"from {self.rows[0].load:.0%} to {self.rows[-1].load:.0%} load, response p50 went {lo.p50 / 1e3:,.1f} -> "
                f"{hi.p50 / 1e3:,.1f} µs (x{hi.p50 / lo.p50:,.1f}) and p99 {lo.p99 / 1e3:,.1f} -> {hi.p99 / 1e3:,.1f} µs "
                f"(x{hi.p99 / lo.p99:,.1f})")

    def overloaded(self) -> list[LoadRow]:
        """Rows whose achieved rate fell 5 % or more below the offered one: the queue grew for the whole run."""
        return [row for row in self.rows if row.report.achieved_rate < 0.95 * row.report.offered_rate]

    def __str__(self) -> str:
        return self.table()


def load_average() -> str:
    """The machine's 1-minute load average beside its CPU count, or a note where the OS does not report it."""
    try:
        one, _, _ = os.getloadavg()
    except (AttributeError, OSError):
        return "not reported on this platform"
    cpus = os.cpu_count() or 1
    busy = ("above the CPU count: processes wait for a CPU, this one included" if one > cpus
            else "at or below the CPU count")
    return f"{one:.2f} on {cpus} CPUs ({busy})"


def sweep(n: int, *, seed: int = 1, loads: tuple[float, ...] = LOADS, passes: int = 3, arrivals: str = "poisson") -> Sweep:
    """Measure capacity, then drive ``n`` messages at each offered load (a fraction of it). O(len(loads) x n).

    The small entry point of ``run`` (tests call it with a small ``n``).
    """
    if arrivals not in ARRIVALS:
        raise CliError(f"--arrivals must be one of {', '.join(ARRIVALS)}, not {arrivals!r}")
    payloads = workloads.encode_workload(workloads.steady_state(n, seed))
    rates = capacity(payloads, passes)
    cap = statistics.median(rates)
    rows = []
    for load in loads:
        offered = load * cap
        handle, maintain = _engine()
        result = drive(handle, payloads, arrival_offsets(n, offered, kind=arrivals, seed=seed),
                       maintain=maintain, offered_rate=offered, label=f"{load:.0%}")
        rows.append(LoadRow(load, result.report()))
    return Sweep(rates, rows, n, arrivals)


def run(*, quick: bool, seed: int, repeat: int | None, arrivals: str = "poisson") -> int:
    """Run the benchmark and print its figures; return 0. Under a minute in full, a few seconds with ``quick``."""
    passes = resolve_repeat(repeat)
    n = QUICK_MESSAGES if quick else FULL_MESSAGES
    say("bench latency: response time (what a client waits) against offered load" + (" [--quick]" if quick else ""))
    say("method:")
    say(f"  workload   steady_state({n:,}, seed={seed}) per load, pre-encoded into client payloads before timing")
    say(f"  capacity   closed loop (next message as soon as the last is done), fresh Engine per pass, 1 warm-up + {passes} passes")
    say(f"  load       open loop: {arrivals} arrivals at {', '.join(f'{x:.0%}' for x in LOADS)} of capacity, intended send")
    say("             times fixed in advance (seed); one thread handles each message when due, or at once if late,")
    say("             and runs Engine.maintain (snapshot flushes) once per idle gap and after every message")
    say("  response   completion - intended start (queueing included); service = completion - actual start")
    say("  recording  every message, into HDR histograms (ns, 3 significant digits); the collector as the interpreter set it")
    say(f"interpreter: {interpreter()}")
    say(f"machine:     {machine()}")
    say(f"load before: {load_average()}")
    say()
    started = time.perf_counter()
    result = sweep(n, seed=seed, passes=passes, arrivals=arrivals)
    rates = result.capacity_rates
    say(f"capacity: {result.capacity:,.0f} msg/s closed-loop (median of {len(rates)} passes, min-max "
        f"{min(rates):,.0f}-{max(rates):,.0f})")
    say()
    say(result.table())
    say()
    for row in result.overloaded():
        say(f"overloaded at {row.load:.0%}: achieved {row.report.achieved_rate:,.0f} of {row.report.offered_rate:,.0f} msg/s "
            "offered, so the queue grew for the whole run and its response times grow with the run's length")
    say(f"load after:  {load_average()}")
    say(f"shape: {result.shape()}")
    say(f"for comparison: {QUOTED_SEED_002}")
    say("Service time is what the engine's own sampled ring (metrics.LatencyRing) sees; response time is what a")
    say("client waits. The gap between them is time spent queued behind earlier messages and maintenance.")
    say(f"done in {time.perf_counter() - started:.1f} s")
    return 0
