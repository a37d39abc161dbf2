"""What published frames really occupy: ``len``, ``sys.getsizeof`` and ``tracemalloc`` compared (chapter 12).

orjson (3.11 and later) returns a ``bytes`` that keeps its whole write buffer:
4 KB and up from 3.13, whatever the payload's length. ``len`` and even
``sys.getsizeof`` report only the payload, so a queue "bounded by bytes" that
counts either holds many times its bound. ``tracemalloc`` counts what the
allocator handed out, which is the honest figure.

``frame_memory`` builds ``frames`` trade frames three ways (as the codec returns
them, right-sized by ``b"".join``, and with the stdlib ``json``) and fills a
``ByteBoundedQueue(max_bytes)`` counted by ``len`` with each, tracing every
variant with ``tracemalloc``. Run it in a fresh interpreter
(``frame_memory_isolated``): a kernel's heap is not a clean one.

    python -m edumatcher.chapters.beyond_heaps.frame_memory            # the issue's inputs: 200,000 frames, a 10 MB queue
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from collections.abc import Callable
from typing import Any

from edumatcher.bounded_queue import ByteBoundedQueue
from edumatcher.kit import run_isolated
from edumatcher.messages import CODEC, ORJSON_CODEC, STDLIB_CODEC, build_builders

__all__ = ["VARIANTS", "frame_memory", "frame_memory_isolated", "queue_verdict", "copy_cost"]

VARIANTS = ("as the codec returns them", "right-sized copy", "stdlib json")
"""The three ways of building the same frames, in the order ``frame_memory`` reports them."""


def _builder(variant: str) -> Callable[..., bytes]:
    if variant == "stdlib json":
        return build_builders(STDLIB_CODEC).make_trade_executed_unchecked  # type: ignore[no-any-return]
    codec = ORJSON_CODEC or CODEC
    return build_builders(codec, right_size=variant == "right-sized copy").make_trade_executed_unchecked  # type: ignore[no-any-return]


def _make(build: Callable[..., bytes], i: int) -> bytes:
    # A ~180-byte trade frame, different in every frame (its sequence number and order ids).
    return build("XYZ", i + 1, "100.25", 3, f"buy-{i:012d}", f"sell-{i:012d}", "buyer-01", "seller-01", "BUY", 1_700_000_000_000_000_000 + i)


def _traced(run: Callable[[], Any]) -> tuple[Any, int]:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        kept = run()
        return kept, tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()


def frame_memory(frames: int = 200_000, max_bytes: int = 10_000_000) -> dict[str, Any]:
    """Per variant: ``len``, ``sys.getsizeof`` and traced bytes of ``frames`` kept frames, and a ``len``-counted queue.

    Returns ``{"codec", "python", "frames", "max_bytes", "rows": [...]}``; each row has
    ``variant``, ``len_bytes``, ``getsizeof_bytes``, ``traced_bytes`` (the list of
    frames kept), ``queue_counted`` (what a ``ByteBoundedQueue(max_bytes)`` counted
    by ``len`` says it holds once full), ``queue_traced`` (what tracemalloc saw it
    hold) and ``queue_items``. Only one variant's frames are alive at a time.
    """
    rows = []
    for variant in VARIANTS:
        build = _builder(variant)
        kept, traced = _traced(lambda build=build: [_make(build, i) for i in range(frames)])  # type: ignore[misc]
        row = {
            "variant": variant,
            "len_bytes": sum(map(len, kept)),
            "getsizeof_bytes": sum(map(sys.getsizeof, kept)),
            "traced_bytes": traced - sys.getsizeof(kept),  # the frames, not the list holding them
        }
        del kept

        def fill(build: Callable[..., bytes] = build) -> ByteBoundedQueue[bytes]:
            queue: ByteBoundedQueue[bytes] = ByteBoundedQueue(max_bytes, size_of=len, entry_overhead=0)  # the len count, on purpose
            for i in range(frames):
                if not queue.put(_make(build, i)):
                    break  # full: from here on every frame would be shed
            return queue

        queue, queue_traced = _traced(fill)
        row.update(queue_counted=queue.bytes, queue_traced=queue_traced, queue_items=len(queue))
        del queue
        rows.append(row)
    return {"codec": (ORJSON_CODEC or CODEC).name, "python": sys.version.split()[0],
            "frames": frames, "max_bytes": max_bytes, "rows": rows}


def frame_memory_isolated(frames: int = 200_000, max_bytes: int = 10_000_000, *, timeout: float = 120.0) -> dict[str, Any]:
    """``frame_memory`` run in a fresh interpreter (``edumatcher.kit._worker.run_isolated``)."""
    result: dict[str, Any] = run_isolated("edumatcher.chapters.beyond_heaps.frame_memory:frame_memory",
                                          {"frames": frames, "max_bytes": max_bytes}, timeout=timeout)
    return result


def queue_verdict(result: dict[str, Any]) -> str:
    """One line on the ``len``-counted queue per variant: about its bound (within 2x), over 5x, or "unclear" between.

    The lines are joined by ``"\\nverdict: "``, so ``print("verdict:", queue_verdict(r))`` shows
    one ``verdict:`` line per variant (each well under 160 characters).

    The thresholds are far apart on purpose. A right-sized frame costs its header
    and the deque's bookkeeping on top of ``len`` (well under 2x for a ~180-byte
    frame); a frame that keeps orjson's buffer costs it many times over. Run-to-run
    noise cannot move a variant from one category to the other.
    """
    parts = []
    for row in result["rows"]:
        ratio = row["queue_traced"] / row["queue_counted"] if row["queue_counted"] else 0.0
        if ratio <= 2:
            category = "holds about its bound"
        elif ratio >= 5:
            category = "holds far more than its bound (over 5x)"
        else:
            category = "unclear (between 2x and 5x)"
        parts.append(f"a queue bounded by len(), {row['variant']}: {category}")
    return "\nverdict: ".join(parts)


def copy_cost(*, budget: float = 1.0) -> Any:
    """Time building one trade frame as the codec returns it against building it right-sized, interleaved.

    Returns the ``edumatcher.kit._compare.Comparison`` (a: right-sized, b: as
    returned): its ratio is what the copy costs on each frame the engine builds.
    """
    from edumatcher.kit import compare_interleaved

    raw, trimmed = _builder(VARIANTS[0]), _builder(VARIANTS[1])
    return compare_interleaved(lambda: _make(trimmed, 1), lambda: _make(raw, 1),
                               labels=("right-sized copy", "as the codec returns them"), budget=budget)


def _main() -> None:  # pragma: no cover - exercised by hand: python -m edumatcher.chapters.beyond_heaps.frame_memory
    result = frame_memory()
    print(f"{result['frames']:,} trade frames, {result['codec']}, Python {result['python']}")
    for row in result["rows"]:
        print(f"  {row['variant']:<26} len {row['len_bytes'] / 1e6:7.1f} MB   getsizeof {row['getsizeof_bytes'] / 1e6:7.1f} MB"
              f"   tracemalloc {row['traced_bytes'] / 1e6:7.1f} MB   | ByteBoundedQueue(max_bytes={result['max_bytes']:,}, size_of=len)"
              f" counts {row['queue_counted'] / 1e6:.1f} MB, holds {row['queue_traced'] / 1e6:.1f} MB")
    print("verdict:", queue_verdict(result))


if __name__ == "__main__":  # pragma: no cover
    _main()
