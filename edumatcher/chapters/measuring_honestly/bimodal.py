"""The bimodal benchmark, reproduced: a big long-lived heap, a benchmark that keeps what it makes, the collector.

The Python engine notes (quoted) tell of a throughput figure that swung between 12,361
and 35,377 orders/s over three runs of one workload: the benchmark's mock socket
kept every published frame, and the cyclic collector had to walk that heap.

``bimodal_trap`` reproduces the mechanism in a fresh worker process
(``edumatcher.kit._worker``), so it happens the same way every time:

1. The process holds a large long-lived heap: ``retained`` small lists, the
   frames a session-long mock socket (``MultipartKeepingSink``) already kept.
2. The benchmark times ``samples`` runs; one run publishes ``frames`` frames to
   a fresh ``MultipartKeepingSink`` (a list per frame, kept until the run ends,
   as a benchmark keeps its results). Each run is timed on the CPU clock
   (``time.thread_time``) and wall clock, and a ``GcMonitor`` on
   ``gc.callbacks`` counts the collections of each generation inside it and
   times them on the same CPU clock.
3. CPython 3.10-3.13 starts a full (generation 2) collection once generation 1
   has been collected 10 times (the third threshold) *and* the objects promoted
   since the last full one exceed a quarter of those already there. Each run
   promotes most of its ``frames`` lists before it ends, so every third or
   fourth run crosses that line and pays for walking the whole retained heap:
   the runs fall into two groups, and the slow group is exactly the runs with a
   full collection inside.

With ``collector=False`` (the control) the same runs are timed with the
collector off: no collection, one group. Which runs get a full collection is
decided by allocation counts, not by the clock, so the pattern repeats from one
fresh process to the next (on one interpreter version). In a notebook kernel
the same trap may never spring within a few runs: the kernel's heap is large,
so a full collection waits for a quarter of *it* to be promoted first.

``throughput_runs`` is the older replay inside the calling process (``Engine.run``
over payloads, four sink and collector configurations, interleaved); inside a
notebook kernel it seldom sees a full collection, for the reason above.

>>> result = throughput_runs(_tiny_payloads(), runs=5)
>>> sorted(len(v) for v in result.runs.values())
[5, 5, 5, 5]
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from edumatcher.engine import Engine
from edumatcher.kit import Measurement, Pass, PassRecord, bimodal_split, format_seconds, interleave, run_isolated
from edumatcher.metrics import GcMonitor
from edumatcher.sinks import DiscardingSink, IterableSource, KeepingSink
from edumatcher.workloads import SYMBOL

__all__ = [
    "MultipartKeepingSink", "TrapSample", "TrapRun", "trap_worker", "bimodal_trap", "trap_verdicts", "split_summary",
    "RunConfig", "CONFIGS", "RunRecord", "BimodalResult", "throughput_runs",
]


class MultipartKeepingSink:
    """Keeps every frame as a ``[topic, payload]`` list, as a mock socket's ``send_multipart`` would."""

    __slots__ = ("frames",)

    def __init__(self) -> None:
        self.frames: list[list[bytes]] = []

    def send(self, topic: bytes, payload: bytes) -> None:
        """Keep one frame. Amortised O(1)."""
        self.frames.append([topic, payload])

    def send_many(self, frames: list[tuple[bytes, bytes]]) -> None:
        """Keep a list of frames, each as a new list. O(len(frames))."""
        keep = self.frames.append
        for topic, payload in frames:
            keep([topic, payload])

    def clear(self) -> None:
        """Forget every kept frame."""
        self.frames.clear()

    def __len__(self) -> int:
        return len(self.frames)


# --------------------------------------------------------------------------- the trap, in a fresh process


@dataclass(frozen=True)
class TrapSample:
    """One timed run of the trap's benchmark: CPU and wall seconds, and the collections inside it."""

    index: int
    cpu: float
    wall: float
    collections: tuple[int, int, int]  # young (0), middle (1), full (2)
    gc_seconds: float  # CPU time the collections inside the run took (thread CPU clock, from gc.callbacks)

    @property
    def cpu_outside_gc(self) -> float:
        """The run's CPU seconds minus its collections' CPU seconds: what the benchmark itself took."""
        return self.cpu - self.gc_seconds

    @property
    def full(self) -> bool:
        """True when a full collection ran inside this run."""
        return self.collections[2] > 0


@dataclass(frozen=True)
class TrapRun:
    """Every run of the trap's benchmark in one worker process, and what that process held."""

    collector: bool
    retained: int
    frames: int
    tracked: int  # objects the collector tracked before the first run
    python: str
    samples: list[TrapSample]

    @property
    def label(self) -> str:
        """A short description: the collector setting and the heap size."""
        return f"collector {'on' if self.collector else 'off'}, {self.retained:,} retained frames"

    def measurement(self, clock: str = "cpu") -> Measurement:
        """All runs as one ``Measurement`` (seconds per run; ``clock`` "cpu" or "wall")."""
        return Measurement.from_samples([getattr(s, clock) for s in self.samples], label=self.label,
                                        gc_enabled=self.collector, ops_per_call=self.frames,
                                        clock="thread CPU time" if clock == "cpu" else "wall time")

    def _group(self, full: bool, label: str) -> Measurement | None:
        xs = [s.cpu for s in self.samples if s.full == full]
        return (Measurement.from_samples(xs, label=label, ops_per_call=self.frames, clock="thread CPU time")
                if xs else None)

    @property
    def with_full(self) -> Measurement | None:
        """CPU seconds of the runs that had a full collection inside (None if there were none)."""
        return self._group(True, "a run with a full collection")

    @property
    def without_full(self) -> Measurement | None:
        """CPU seconds of the runs without one (None if every run had one)."""
        return self._group(False, "a run without one")

    @property
    def split(self) -> tuple[list[float], list[float]] | None:
        """``measure.bimodal_split`` of the runs' CPU times: the two clusters, or None."""
        return bimodal_split([s.cpu for s in self.samples])

    @property
    def split_is_the_collector(self) -> bool:
        """True when ``split`` found two clusters and the slow one is exactly the runs with a full collection."""
        found = self.split
        if found is None:
            return False
        slow = set(found[1])
        return all((s.cpu in slow) == s.full for s in self.samples)

    @property
    def separated(self) -> bool:
        """True when every run with a full collection took more CPU time than every run without."""
        fast = [s.cpu for s in self.samples if not s.full]
        slow = [s.cpu for s in self.samples if s.full]
        return bool(fast and slow) and min(slow) > max(fast)


def trap_worker(retained: int = 800_000, frames: int = 70_000, samples: int = 20, warmup: int = 3,
                collector: bool = True) -> dict[str, Any]:
    """The trap's benchmark, meant for a fresh process (``bimodal_trap`` runs it in one); returns plain data.

    Builds the retained heap, collects once, then times ``warmup`` untimed and
    ``samples`` timed runs, each publishing ``frames`` frames to a fresh
    ``MultipartKeepingSink``. With ``collector=False`` the collector is off for
    the runs (and on again afterwards).
    """
    import sys

    if frames < 1 or samples < 1:
        raise ValueError(f"need frames >= 1 and samples >= 1, not {frames} and {samples}")
    batch = [(b"trade.executed", b"%d" % i) for i in range(frames)]  # what one run publishes
    session = MultipartKeepingSink()  # the session-long mock socket: every frame of earlier runs
    while len(session) < retained:
        session.send_many(batch[:retained - len(session)])
    gc.collect()
    tracked = len(gc.get_objects())
    out: list[list[Any]] = []
    was = gc.isenabled()
    if not collector:
        gc.disable()
    try:
        # The monitor times each collection on this thread's CPU clock, the clock the runs are timed on,
        # so a run's time minus its collections' time is what the benchmark itself took.
        with GcMonitor(clock_ns=time.thread_time_ns) as monitor:
            for i in range(warmup + samples):
                sink = MultipartKeepingSink()
                before, gc_ns = list(monitor.count_by_generation), monitor.total_ns
                w0, c0 = time.perf_counter(), time.thread_time()
                sink.send_many(batch)
                c1, w1 = time.thread_time(), time.perf_counter()
                del sink  # the run's frames go at once (reference counting), after the timed region
                if i >= warmup:
                    counts = [a - b for a, b in zip(monitor.count_by_generation, before, strict=True)]
                    out.append([i - warmup, c1 - c0, w1 - w0, counts, (monitor.total_ns - gc_ns) / 1e9])
    finally:
        if was:
            gc.enable()
    return {"tracked": tracked, "python": sys.version.split()[0], "samples": out}


def bimodal_trap(*, retained: int = 800_000, frames: int = 70_000, samples: int = 20, warmup: int = 3,
                 timeout: float = 120.0) -> tuple[TrapRun, TrapRun]:
    """Run ``trap_worker`` in two fresh processes, collector on (the trap) then off (the control).

    About a second and 100 MB per process at the defaults.
    """
    runs = []
    for on in (True, False):
        got = run_isolated("edumatcher.chapters.measuring_honestly.bimodal:trap_worker",
                           {"retained": retained, "frames": frames, "samples": samples, "warmup": warmup,
                            "collector": on}, timeout=timeout)
        runs.append(TrapRun(on, retained, frames, got["tracked"], got["python"], [
            TrapSample(i, cpu, wall, tuple(counts), gc_s) for i, cpu, wall, counts, gc_s in got["samples"]
        ]))
    return runs[0], runs[1]


def trap_verdicts(trap: TrapRun, control: TrapRun) -> list[str]:
    """The ``verdict:`` lines chapter 03 prints, each worded from the data of the two runs.

    They rest on the collections counted inside each run, not on the shape of
    the timings alone, so one disturbed run cannot change their wording.
    """
    from edumatcher.kit import compare

    lines = []
    n_full = sum(s.full for s in trap.samples)
    with_full, without = trap.with_full, trap.without_full
    if with_full is None or without is None or with_full.repeat < 2 or without.repeat < 2:
        lines.append(f"verdict: the trap did not spring: {n_full} of {len(trap.samples)} runs had a full collection, "
                     "too few (or too many) to compare the two kinds of run")
    else:
        lines.append("verdict: " + compare(with_full, without).verdict)
        lines.append("verdict: " + (
            "the two kinds of run do not overlap: every run with a full collection took longer than every run without"
            if trap.separated else
            "the two kinds of run overlap: some run without a full collection took as long as one with"))
    collections = sum(sum(s.collections) for s in control.samples)
    off, on = control.measurement(), trap.measurement()
    lines.append(
        "verdict: with the collector off, " + ("no run had a collection inside" if not collections else
                                                f"{collections} collections still ran")
        + f"; its slowest run took {off.max / off.median:.1f}x its median (collector on: {on.max / on.median:.1f}x)")
    return lines


def split_summary(run: TrapRun) -> str:
    """What ``measure.bimodal_split`` makes of a run's CPU times, in one sentence (not a verdict: see below).

    The detector is conservative on purpose: it needs the gap between the two
    clusters to be at least three times the wider cluster's range, so one
    disturbed run inside the slow cluster can hide a real split. Counting the
    collections inside each run does not depend on that noise.
    """
    found = run.split
    if found is None:
        if run.separated:
            return ("bimodal_split finds no two clusters this time, although the runs with a full collection form a "
                    "group of their own: its rule (a gap at least three times the wider cluster's range) is "
                    "conservative on purpose, and one disturbed slow run widens that range")
        return "bimodal_split finds no two clusters in these runs"
    low, high = found
    where = ("the slow cluster is exactly the runs with a full collection" if run.split_is_the_collector
             else "the clusters are not the runs with and without a full collection")
    return (f"bimodal_split finds two clusters: {len(low)} runs near {format_seconds(statistics.median(low))} "
            f"and {len(high)} near {format_seconds(statistics.median(high))}; {where}")


# --------------------------------------------------------------------------- the older in-process replay


@dataclass(frozen=True)
class RunConfig:
    """One configuration: its label, how to make its sink, whether the sink lives across runs, the collector."""

    label: str
    make_sink: Callable[[], Any]
    shared_sink: bool
    collector: bool


CONFIGS: tuple[RunConfig, ...] = (
    RunConfig("mock socket keeping lists, collector on", MultipartKeepingSink, True, True),
    RunConfig("KeepingSink (tuples), collector on", KeepingSink, True, True),
    RunConfig("DiscardingSink, collector on", DiscardingSink, False, True),
    RunConfig("DiscardingSink, collector off", DiscardingSink, False, False),
)
"""The configurations chapter 03 compares, the trap first."""


@dataclass(frozen=True)
class RunRecord:
    """One timed run: how long it took, and the collections the engine saw during it."""

    label: str
    index: int
    seconds: float
    messages: int
    full_collections: int
    collections: int
    gc_seconds: float
    kept_frames: int  # frames held by a shared sink after this run (0 for a sink that keeps nothing)

    @property
    def rate(self) -> float:
        """Messages per second."""
        return self.messages / self.seconds


@dataclass
class BimodalResult:
    """Per configuration: the runs' ``Measurement`` (seconds per run, ``ops_per_call`` = messages) and each run's record."""

    measurements: list[Measurement]
    runs: dict[str, list[RunRecord]] = field(default_factory=dict)


def _runner(config: RunConfig, payloads: Sequence[bytes]) -> tuple[Callable[[], Any], Callable[[Any], Any]]:
    shared = config.make_sink() if config.shared_sink else None

    def prepare() -> tuple[Engine, Any]:
        return Engine([SYMBOL]), shared if shared is not None else config.make_sink()

    def run(data: tuple[Engine, Any]) -> tuple[Engine, int]:
        engine, sink = data
        was = gc.isenabled()
        if not config.collector:
            gc.disable()
        try:
            engine.run(IterableSource(payloads), sink)
        finally:
            if was:
                gc.enable()
        return engine, len(sink) if config.shared_sink else 0

    run.shared = shared  # type: ignore[attr-defined]  # kept so the caller can empty it afterwards
    return prepare, run


def throughput_runs(payloads: Sequence[bytes], *, runs: int = 8, configs: Sequence[RunConfig] = CONFIGS) -> BimodalResult:
    """Time ``runs`` passes of ``Engine.run`` over ``payloads`` per configuration, interleaved A B C D A B ...

    One untimed warm-up pass each comes first (its frames stay in a shared sink,
    as a real session's would). The shared sinks are emptied before returning.
    """
    contenders: list[Pass] = []
    shared_sinks: list[Any] = []
    for config in configs:
        prepare, run = _runner(config, payloads)
        if run.shared is not None:  # type: ignore[attr-defined]
            shared_sinks.append(run.shared)  # type: ignore[attr-defined]
        contenders.append(Pass(config.label, run, prepare, len(payloads)))
    records: dict[str, list[RunRecord]] = {c.label: [] for c in configs}

    def on_pass(record: PassRecord) -> None:
        if record.warmup:
            return
        engine, kept = record.result  # type: ignore[misc]
        monitor = engine.metrics.gc_monitor
        records[record.label].append(RunRecord(
            record.label, record.round + 1, record.seconds, len(payloads), monitor.count_by_generation[2],
            monitor.count, monitor.total_ns / 1e9, kept,
        ))

    try:
        measurements = interleave(contenders, repeat=runs, warmup=1, gc=True, on_pass=on_pass)
    finally:
        for sink in shared_sinks:
            sink.clear()
        gc.collect()
    for m, config in zip(measurements, configs, strict=True):
        m.gc_enabled = config.collector
    return BimodalResult(measurements, records)


def _tiny_payloads() -> list[bytes]:
    """A few payloads for the doctest."""
    from edumatcher.messages import make_order_new

    return [make_order_new(f"d{i}", SYMBOL, "BUY" if i % 2 else "SELL", "LIMIT", 1, "ana", price="100.00") for i in range(6)]
