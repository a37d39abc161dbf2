"""``bench bounds``: what one message and one client can cost, measured on this interpreter (issues 15 and 26).

Four parts, each printing its own method line:

* issue 26's patterns (``book_bounds.run_issue_26``): a stop cascade, ``order.cancel_owner``,
  compaction, killed FOKs and deep snapshot requests, one message's time at 2,000 and
  50,000 (compaction also at 1,000,000) with the verdict "within 4x" or not, beside the
  same message on a book without a work budget; then the fills of the issue's section 2
  (the griefing case, a FOK of 5,000 against 5,000 one-lot orders, a sweep's cost per trade);
* issue 15's book rows (``book_bounds.run_issue_15``): a MARKET order into a large
  iceberg, a FOK with self-match prevention whose owner holds many stops, a FOK against
  many levels, ``depth(20)`` over many levels, the memory of one resting order;
* published frames (``edumatcher.chapters.beyond_heaps.frame_memory``, in a fresh interpreter): ``len``,
  ``sys.getsizeof`` and ``tracemalloc`` for the same trade frames built as the codec
  returns them, right-sized, and by the stdlib ``json``, each filling a queue
  counted by ``len`` (the trap);
* the queue as the engine would use it (``edumatcher.chapters.beyond_heaps.egress.engine_frame_queue``,
  in a fresh interpreter): a default ``ByteBoundedQueue`` (real-memory count)
  filled with the engine's own frames: what it counts against what
  ``tracemalloc`` sees it hold.

Figures only: nothing here is asserted (tests check the bounds).
"""

from __future__ import annotations

from edumatcher import CliError

from ..kit import run_isolated
from . import book_bounds, say

__all__ = ["run", "FULL_FRAMES", "QUICK_FRAMES"]

FULL_FRAMES = (200_000, 10_000_000)
"""Frames offered and queue cap in bytes: the issue's inputs."""
QUICK_FRAMES = (20_000, 1_000_000)


def run(*, quick: bool, seed: int, repeat: int | None) -> int:
    """Print the four parts; return 0. ``seed`` is unused (the inputs are fixed); ``--repeat`` is refused."""
    if repeat is not None:
        raise CliError("bench bounds takes no --repeat: each row has its own fixed count (book_bounds.REPEAT)")
    from ..chapters.beyond_heaps.frame_memory import frame_memory_isolated, queue_verdict

    say("bench bounds: issues 15 and 26, measured here" + (" [--quick]" if quick else ""))
    say("[1/4] issue 26: one message's time, at two sizes")
    book_bounds.run_issue_26(quick=quick, say=say)
    say("[2/4] issue 15: the book's rows, work and memory")
    book_bounds.run_issue_15(quick=quick, say=say)
    frames, cap = QUICK_FRAMES if quick else FULL_FRAMES
    say(f"[3/4] published frames: {frames:,} trade frames three ways, then a queue of {cap:,} bytes counted by len "
        "(fresh interpreter, tracemalloc)")
    result = frame_memory_isolated(frames=frames, max_bytes=cap, timeout=600.0)
    say(f"      codec {result['codec']}, Python {result['python']}")
    for row in result["rows"]:
        say(f"      {row['variant']:<26} len {row['len_bytes'] / 1e6:7.1f} MB   getsizeof {row['getsizeof_bytes'] / 1e6:7.1f} MB"
            f"   tracemalloc {row['traced_bytes'] / 1e6:7.1f} MB   | queue counted by len: counts "
            f"{row['queue_counted'] / 1e6:.1f} MB, holds {row['queue_traced'] / 1e6:.1f} MB")
    say("      verdict: " + queue_verdict(result).replace("\n", "\n      "))
    say(f"[4/4] the engine's frames in a default ByteBoundedQueue(max_bytes={cap:,}) (real-memory count; fresh interpreter)")
    q = run_isolated("edumatcher.chapters.beyond_heaps.egress:engine_frame_queue", {"frames": frames, "max_bytes": cap}, timeout=600.0)
    say(f"      {q['items']:,} of {q['frames_offered']:,} frames queued (builders right-sized: {q['right_sized']}): "
        f"the queue counts {q['counted'] / 1e6:.2f} MB, tracemalloc sees {q['traced'] / 1e6:.2f} MB held; "
        f"their payloads' len is {q['len_bytes'] / 1e6:.2f} MB")
    held = q["traced"] <= 1.05 * q["max_bytes"]
    say("      verdict: the default count " + ("bounds what the queue holds (within 5 % of its cap)" if held else
                                              f"does NOT bound it: {q['traced'] / q['max_bytes']:.1f}x its cap held"))
    return 0
