"""The engine's message path as an experiment: workloads as payloads, per-message latency, decode vs handle.

Chapter 01 asks where the time of one message goes. These helpers turn a seeded
workload into the bytes a client would send, time ``Engine.handle`` on every one
of them, and time the decode leg alone beside the whole handler, so the chapter
can show what timing only one leg would have hidden (``decode_and_handle``: a fixed
number of interleaved passes; ``compare_decode_and_handle``: the same passes,
adaptive, as a ``Comparison`` with a confidence interval).

>>> from edumatcher.workloads import standard
>>> payloads = encode_workload(standard(5, seed=1))
>>> payloads[0][:24]
b'{"type":"order.new","id"'
>>> len(handling_latencies(payloads)) == len(payloads)
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..engine import Engine
from ..messages import loads
from ..metrics import nearest_rank
from ..workloads import SYMBOL, encode_workload
from ._compare import Comparison, compare_passes
from ._measurement import Measurement
from ._runner import Pass, interleave

__all__ = [
    "encode_workload", "fresh_engine", "handling_latencies", "LatencySummary", "summarise_latencies",
    "decode_and_handle", "compare_decode_and_handle",
]


def fresh_engine(symbol: str = SYMBOL) -> Engine:
    """A new one-book engine with a constant clock: nothing in it depends on when it runs."""
    return Engine([symbol], clock=lambda: 1)


def handling_latencies(
    payloads: Sequence[bytes], *, engine: Engine | None = None, clock: Callable[[], int] = time.perf_counter_ns,
) -> list[int]:
    """Time ``engine.handle`` on each payload in turn; return the nanoseconds of each, in order. O(n).

    Every message is timed (the engine's own loop samples one in sixteen; here we
    want the whole distribution). The collector stays on: its pauses are part of
    what a message really waits for, and they are the tail.
    """
    engine = engine if engine is not None else fresh_engine()
    handle = engine.handle
    out = [0] * len(payloads)
    for i, payload in enumerate(payloads):
        t0 = clock()
        handle(payload)
        out[i] = clock() - t0
    return out


@dataclass(frozen=True)
class LatencySummary:
    """Typical and tail figures of a list of latencies (ns), by the nearest-rank rule."""

    count: int
    p50: int
    p99: int
    p999: int
    max: int
    total: int

    @property
    def throughput(self) -> float:
        """Messages per second if the messages ran back to back: ``count / total``."""
        return self.count / (self.total / 1e9) if self.total else float("inf")


def summarise_latencies(latencies_ns: Sequence[int]) -> LatencySummary:
    """p50, p99, p99.9, max and total of ``latencies_ns``. O(n log n).

    >>> summarise_latencies([5, 1, 3, 2, 4]).p50, summarise_latencies([5, 1, 3, 2, 4]).max
    (3, 5)
    """
    xs = sorted(latencies_ns)
    return LatencySummary(
        count=len(xs), p50=int(nearest_rank(xs, 50)), p99=int(nearest_rank(xs, 99)),
        p999=int(nearest_rank(xs, 99.9)), max=xs[-1], total=sum(xs),
    )


def _decode_all(payloads: Sequence[bytes]) -> int:
    decode = loads
    for payload in payloads:
        decode(payload)
    return len(payloads)


def _handle_all(pair: tuple[Engine, Sequence[bytes]]) -> int:
    engine, payloads = pair
    handle = engine.handle
    for payload in payloads:
        handle(payload)
    return len(payloads)


def decode_and_handle(payloads: Sequence[bytes], *, repeat: int = 5) -> tuple[Measurement, Measurement]:
    """Time decoding every payload, and handling every payload, alternately in one run.

    Returns ``(decode, handle)``; each sample is one pass over all payloads
    (``ops_per_call = len(payloads)``), a fresh engine per handle pass. The decode
    leg is part of the handle leg, so ``decode.median / handle.median`` is the
    share of the message path that a decode-only benchmark would have seen.
    """
    decode, handle = interleave(list(_leg_passes(payloads)), repeat=repeat)
    return decode, handle


def _leg_passes(payloads: Sequence[bytes]) -> tuple[Pass, Pass]:
    n = len(payloads)
    return (
        Pass("decode only (loads)", lambda _: _decode_all(payloads), None, n),
        Pass("whole message path (Engine.handle)", _handle_all, lambda: (fresh_engine(), payloads), n),
    )


def compare_decode_and_handle(payloads: Sequence[bytes], *, budget: float = 2.0) -> Comparison:
    """Handling every payload against decoding every payload, in adaptive interleaved rounds.

    The passes of ``decode_and_handle``, run by ``compare_passes`` for about
    ``budget`` seconds: ``a`` is the whole handler, ``b`` the decode leg, so
    ``1 / ratio`` is the share of the message path a decode-only benchmark sees.
    """
    decode, handle = _leg_passes(payloads)
    return compare_passes(handle, decode, budget=budget)
