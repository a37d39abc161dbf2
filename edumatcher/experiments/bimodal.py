"""The bimodal benchmark, reproduced: a sink that keeps every frame, the collector, and run-to-run throughput.

Seed 000 (§11.1, quoted) tells of a throughput figure that swung between 12,361
and 35,377 orders/s over three runs of one workload, because the benchmark's mock
socket kept every published frame (a heap growing for the whole session) and the
collector scanned that heap. ``throughput_runs`` replays that setting on this
engine: several short runs of ``Engine.run`` over the same payloads, interleaved
across configurations, each configuration with its own sink and collector setting:

* a mock socket that keeps each frame as a ``[topic, payload]`` list, as a mock
  of ``send_multipart`` would (lists are always tracked by the collector);
* ``sinks.KeepingSink``, which keeps ``(topic, payload)`` tuples (CPython stops
  tracking a tuple of bytes once a collection has looked at it);
* ``sinks.DiscardingSink`` with the collector on, then off.

A keeping sink is shared by all the runs of its configuration, as the mock socket
lived for the whole benchmark session. Each run records its throughput and what
the engine's ``GcMonitor`` saw (full collections, total collection time).

>>> result = throughput_runs(_tiny_payloads(), runs=5)
>>> sorted(len(v) for v in result.runs.values())
[5, 5, 5, 5]
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine import Engine
from ..measure import Measurement, Pass, PassRecord, interleave
from ..sinks import DiscardingSink, IterableSource, KeepingSink
from ..workloads import SYMBOL

__all__ = ["MultipartKeepingSink", "RunConfig", "CONFIGS", "RunRecord", "BimodalResult", "throughput_runs"]


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
"""The configurations chapter 09 compares, the trap first."""


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
    from ..messages import make_order_new

    return [make_order_new(f"d{i}", SYMBOL, "BUY" if i % 2 else "SELL", "LIMIT", 1, "ana", price="100.00") for i in range(6)]
