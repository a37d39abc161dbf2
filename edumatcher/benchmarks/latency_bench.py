"""``bench latency``: response time as clients see it, against offered load, to past saturation.

Method
------
* **Workload**: ``workloads.steady_state(N, seed)``, N = ``FULL_MESSAGES`` per run
  (``QUICK_MESSAGES`` with ``--quick``), every operation encoded once, before
  timing, into the payload a client sends (as ``bench engine`` does).
* **Capacity first, several times**: the same driver with every intended send time
  at 0 (a closed loop: the next message goes as soon as the last is done), on a
  fresh ``Engine`` per pass; ``repeat`` passes (at least 5) after one warm-up pass.
  Each pass is timed on the thread's CPU clock (what the engine costs) and on the
  wall clock (what this machine delivered meanwhile). Capacity is the median CPU
  rate, printed with its range: the rate one whole CPU sustains. The wall rate is
  printed beside it, not used: on a shared machine it measures the neighbours
  (measured here at load 4 on 2 CPUs: 16,093-77,850 msg/s on the wall clock in one
  run, against 137,330-153,310 on the CPU clock). Both are measured again after
  the sweep, so a machine that got busier shows.
* **A sweep of offered load to 150 %** (``LOADS``: 10 % to 150 % of that capacity),
  each load run ``REPEATS`` times (``QUICK_REPEATS`` with ``--quick``) on a fresh
  engine: ``open_loop.drive`` fixes every message's intended send time in advance
  (Poisson arrivals by default, seeded differently per repeat) and plays them into
  the engine in one thread, running its maintenance (``Engine.maintain``: snapshot
  flushes) once per idle gap and after every message, as ``Engine.run`` does. The
  collector is left as the interpreter set it.
* **Two times per message**: response time = completion - intended start (what
  a client waits, queueing included) and service time = completion - actual
  start (one call timed). Both go into HDR histograms (ns, 3 significant digits).
  The table prints, per load, the median over repeats of each figure, and the
  range of the response p99 over the repeats.
* **The knee, from the data**: the lightest load from which the engine no longer
  keeps up (the median repeat achieved under 95 % of the offered rate, so the
  queue grew for the whole run, at this load and every heavier one), and the
  lightest load from which response p99 stays over ``KNEE_FACTOR`` times the
  light-load p99 (the lowest median p99 at loads up to 50 %). Nothing is assumed
  about where 100 % is: on a busy machine the engine gets less than a whole CPU,
  the knee comes before 100 %, and the data say so.
* Figures are printed, never checked against a target.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from edumatcher import CliError

from .. import workloads
from ..kit import interpreter, machine
from ..kit.open_loop import ARRIVALS, LatencyReport, arrival_offsets, drive
from ..sinks import DiscardingSink
from . import resolve_repeat, say

__all__ = [
    "run", "sweep", "capacity", "CapacityPass", "LoadRow", "Knee", "Sweep", "LOADS", "REPEATS", "QUICK_REPEATS",
    "KNEE_FACTOR", "FULL_MESSAGES", "QUICK_MESSAGES", "QUOTED_SEED_002",
]

LOADS = (0.1, 0.3, 0.5, 0.7, 0.9, 1.1, 1.3, 1.5)
"""Offered load as fractions of the measured capacity: past 100 %, so the knee is inside the sweep."""
REPEATS = 3
"""Runs per load (each on a fresh engine, with its own arrival seed)."""
QUICK_REPEATS = 2
KNEE_FACTOR = 10.0
"""A load's response p99 this many times the lightest load's marks the p99 knee."""
FULL_MESSAGES = 100_000
QUICK_MESSAGES = 10_000
DECIMALS = 2

QUOTED_SEED_002 = (
    '"p50 matching latency stays around 0.3 µs across the whole range, from 1,000 to 281,000 orders/sec." '
    '... "The p99 tail is the other half. It\'s about 10 µs at light load and rises to a few milliseconds under '
    'heavy load." (quoted: Open Exchange write-up: an array-backed book, a Java engine in a 3-node Raft cluster '
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


@dataclass(frozen=True)
class CapacityPass:
    """One closed-loop pass: messages per wall-clock second and per second of this thread's CPU time."""

    wall_rate: float
    cpu_rate: float


def capacity(payloads: list[bytes], passes: int) -> list[CapacityPass]:
    """``passes`` closed-loop passes (after one warm-up), each on a fresh engine; their rates. O(passes x n)."""
    out = []
    zeros = [0] * len(payloads)
    for i in range(passes + 1):
        handle, maintain = _engine()
        started, cpu_started = time.perf_counter_ns(), time.thread_time_ns()
        drive(handle, payloads, zeros, maintain=maintain)
        wall, cpu = time.perf_counter_ns() - started, time.thread_time_ns() - cpu_started
        if i:  # the first pass warms the caches and the interpreter's specialisation
            out.append(CapacityPass(len(payloads) / (wall / 1e9), len(payloads) / (max(cpu, 1) / 1e9)))
    return out


def _median_report(reports: list[LatencyReport]) -> LatencyReport:
    """The repeat whose response p99 is the median one (the lower middle for an even count)."""
    ordered = sorted(reports, key=lambda r: r.response.p99)
    return ordered[(len(ordered) - 1) // 2]


@dataclass
class LoadRow:
    """One load of the sweep: the offered load as a fraction of capacity, and each repeat's report."""

    load: float
    reports: list[LatencyReport]

    @property
    def report(self) -> LatencyReport:
        """The repeat with the median response p99 (a real run, not a blend of runs)."""
        return _median_report(self.reports)

    def median(self, figure: Callable[[LatencyReport], float]) -> float:
        """The median over repeats of ``figure(report)``."""
        return statistics.median(figure(r) for r in self.reports)

    @property
    def keeps_up(self) -> bool:
        """True when the median repeat achieved at least 95 % of the offered rate."""
        return self.median(lambda r: r.achieved_rate / r.offered_rate) >= 0.95

    def cells(self) -> list[str]:
        """The row as text: load, offered, achieved, response p50..max and p99's range, service, worst queueing (µs)."""
        m = self.median
        p99s = [r.response.p99 for r in self.reports]
        return ([f"{self.load:.0%}", f"{m(lambda r: r.offered_rate):,.0f}", f"{m(lambda r: r.achieved_rate):,.0f}"]
                + [f"{m(lambda r, k=k: r.response.as_tuple()[k]) / 1e3:,.1f}" for k in (0, 1, 2)]
                + [f"{min(p99s) / 1e3:,.0f}-{max(p99s) / 1e3:,.0f}"]
                + [f"{m(lambda r, k=k: r.response.as_tuple()[k]) / 1e3:,.1f}" for k in (3, 4, 5)]
                + [f"{m(lambda r, k=k: (r.service.p50, r.service.p99, r.service.max)[k]) / 1e3:,.1f}" for k in (0, 1, 2)]
                + [f"{m(lambda r: r.worst_queueing_ns) / 1e3:,.1f}"])


HEADER = ["load", "offered/s", "achieved/s", "resp p50", "p90", "p99", "p99 range", "p99.9", "p99.99", "max",
          "serv p50", "p99", "max", "worst queue"]


@dataclass(frozen=True)
class Knee:
    """Where the sweep bends, read from the data: the first load that does not keep up, and the first p99 knee."""

    saturation: LoadRow | None
    p99: LoadRow | None
    light_p99_ns: float

    def text(self) -> list[str]:
        """Two lines for the output."""
        if self.saturation is None:
            first = "the engine kept up with the heaviest loads of the sweep (achieved >= 95 % of offered)"
        else:
            s = self.saturation
            first = (f"the engine stops keeping up at {s.load:.0%} ({s.median(lambda r: r.offered_rate):,.0f} msg/s "
                     f"offered, {s.median(lambda r: r.achieved_rate):,.0f} achieved): from there the queue grows "
                     "for the whole run")
        if self.p99 is None:
            second = (f"response p99 did not stay above {KNEE_FACTOR:g}x its light-load value "
                      f"({self.light_p99_ns / 1e3:,.1f} µs) at the heaviest loads")
        else:
            p = self.p99
            second = (f"response p99 stays above {KNEE_FACTOR:g}x its light-load value ({self.light_p99_ns / 1e3:,.1f} µs) "
                      f"from {p.load:.0%} on: {p.median(lambda r: r.response.p99) / 1e3:,.1f} µs there")
        return [first, second]


@dataclass
class Sweep:
    """Capacity (closed-loop passes before and after the sweep) and one ``LoadRow`` per offered load."""

    capacity_passes: list[CapacityPass]
    rows: list[LoadRow]
    messages: int
    arrivals: str
    after_passes: list[CapacityPass] = field(default_factory=list)

    @property
    def capacity_rates(self) -> list[float]:
        """Closed-loop messages per wall-clock second, one per pass before the sweep."""
        return [p.wall_rate for p in self.capacity_passes]

    @property
    def capacity(self) -> float:
        """Median closed-loop messages per second of the thread's CPU time: what the offered loads are fractions of."""
        return statistics.median(p.cpu_rate for p in self.capacity_passes)

    @property
    def wall_capacity(self) -> float:
        """Median closed-loop messages per wall-clock second: what the machine delivered (context, not used)."""
        return statistics.median(self.capacity_rates)

    def knee(self) -> Knee:
        """The knee of the sweep, from its rows (see ``Knee``)."""
        p99 = [row.median(lambda r: r.response.p99) for row in self.rows]
        light = min((v for row, v in zip(self.rows, p99, strict=True) if row.load <= 0.5), default=p99[0])

        def first_from(bad: list[bool]) -> LoadRow | None:
            # the lightest row from which this row and every heavier one are bad
            for i in range(len(bad)):
                if all(bad[i:]):
                    return self.rows[i]
            return None

        return Knee(first_from([not row.keeps_up for row in self.rows]), first_from([v > KNEE_FACTOR * light for v in p99]),
                    light)

    def table(self) -> str:
        """The sweep as an aligned text table (times in µs, medians over repeats)."""
        widths = [5, 10, 10, 9, 9, 9, 13, 9, 9, 9, 9, 9, 9, 11]
        lines = [f"{'':>29}{'response time (µs), completion - intended start':^85}  {'service time (µs)':^31}",
                 "  ".join(f"{h:>{w}}" for h, w in zip(HEADER, widths, strict=True))]
        lines += ["  ".join(f"{c:>{w}}" for c, w in zip(row.cells(), widths, strict=True)) for row in self.rows]
        return "\n".join(lines)

    def shape(self) -> str:
        """How p50 and p99 of response time moved from the lightest to the heaviest load (computed, not judged)."""
        lo, hi = self.rows[0], self.rows[-1]

        def p(row: LoadRow, k: int) -> float:
            return row.median(lambda r: r.response.as_tuple()[k])

        return (f"from {lo.load:.0%} to {hi.load:.0%} load, response p50 went {p(lo, 0) / 1e3:,.1f} -> "
                f"{p(hi, 0) / 1e3:,.1f} µs (x{p(hi, 0) / p(lo, 0):,.1f}) and p99 {p(lo, 2) / 1e3:,.1f} -> "
                f"{p(hi, 2) / 1e3:,.1f} µs (x{p(hi, 2) / p(lo, 2):,.1f})")

    def overloaded(self) -> list[LoadRow]:
        """Rows whose median repeat achieved under 95 % of the offered rate: the queue grew for the whole run."""
        return [row for row in self.rows if not row.keeps_up]

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


def sweep(n: int, *, seed: int = 1, loads: tuple[float, ...] = LOADS, passes: int = 5, repeats: int = REPEATS,
          arrivals: str = "poisson") -> Sweep:
    """Measure capacity, drive ``n`` messages ``repeats`` times at each offered load, measure capacity again.

    O((passes + len(loads) x repeats) x n). The small entry point of ``run`` (tests call it with a small ``n``).
    """
    if arrivals not in ARRIVALS:
        raise CliError(f"--arrivals must be one of {', '.join(ARRIVALS)}, not {arrivals!r}")
    payloads = workloads.encode_workload(workloads.steady_state(n, seed))
    before = capacity(payloads, passes)
    cap = statistics.median(p.cpu_rate for p in before)
    rows = []
    for load in loads:
        offered = load * cap
        reports = []
        for k in range(repeats):
            handle, maintain = _engine()
            result = drive(handle, payloads, arrival_offsets(n, offered, kind=arrivals, seed=seed + 1000 * k),
                           maintain=maintain, offered_rate=offered, label=f"{load:.0%}")
            reports.append(result.report())
        rows.append(LoadRow(load, reports))
    after = capacity(payloads, max(1, passes // 2))
    return Sweep(before, rows, n, arrivals, after)


def _rates(passes: list[CapacityPass], which: str) -> str:
    rates = [getattr(p, which) for p in passes]
    return f"{statistics.median(rates):,.0f} msg/s (median of {len(rates)}, {min(rates):,.0f}-{max(rates):,.0f})"


def run(*, quick: bool, seed: int, repeat: int | None, arrivals: str = "poisson") -> int:
    """Run the benchmark and print its figures; return 0. About a minute in full, a few seconds with ``quick``."""
    passes = resolve_repeat(repeat)
    n = QUICK_MESSAGES if quick else FULL_MESSAGES
    repeats = QUICK_REPEATS if quick else REPEATS
    say("bench latency: response time (what a client waits) against offered load" + (" [--quick]" if quick else ""))
    say("method:")
    say(f"  workload   steady_state({n:,}, seed={seed}) per run, pre-encoded into client payloads before timing")
    say(f"  capacity   closed loop (next message as soon as the last is done), fresh Engine per pass, 1 warm-up + {passes} passes,")
    say("             timed on the thread CPU clock (the offered loads are fractions of its median: one whole CPU's rate)")
    say("             and on the wall clock (what this machine delivered, for context); measured again after the sweep")
    say(f"  load       open loop: {arrivals} arrivals at {', '.join(f'{x:.0%}' for x in LOADS)} of capacity, {repeats} runs each")
    say("             (own arrival seed, fresh Engine); intended send times fixed in advance; one thread handles each")
    say("             message when due, or at once if late, and runs Engine.maintain once per idle gap and after every message")
    say("  response   completion - intended start (queueing included); service = completion - actual start")
    say("  recording  every message, into HDR histograms (ns, 3 significant digits); the collector as the interpreter set it;")
    say("             the table shows medians over the runs of each load, and the range of the response p99")
    say(f"  knee       read from the data: the first load not kept up with, the first p99 over {KNEE_FACTOR:g}x the lightest's")
    say(f"interpreter: {interpreter()}")
    say(f"machine:     {machine()}")
    say(f"load before: {load_average()}")
    say()
    started = time.perf_counter()
    result = sweep(n, seed=seed, passes=passes, repeats=repeats, arrivals=arrivals)
    say(f"capacity: {_rates(result.capacity_passes, 'cpu_rate')} of CPU time (the 100 % of the sweep); the wall clock "
        f"saw {_rates(result.capacity_passes, 'wall_rate')}")
    say()
    say(result.table())
    say()
    for line in result.knee().text():
        say(f"knee: {line}")
    for row in result.overloaded():
        say(f"overloaded at {row.load:.0%}: achieved {row.median(lambda r: r.achieved_rate):,.0f} of "
            f"{row.median(lambda r: r.offered_rate):,.0f} msg/s offered, so its response times grow with the run's length")
    say(f"capacity after the sweep: {_rates(result.after_passes, 'cpu_rate')} of CPU time; the wall clock saw "
        f"{_rates(result.after_passes, 'wall_rate')}")
    say(f"load after:  {load_average()}")
    say(f"shape: {result.shape()}")
    say(f"for comparison: {QUOTED_SEED_002}")
    say("Service time is what the engine's own sampled ring (metrics.LatencyRing) sees; response time is what a")
    say("client waits. The gap between them is time spent queued behind earlier messages and maintenance.")
    say(f"done in {time.perf_counter() - started:.1f} s")
    return 0
