"""What a piece of code allocates, as ``tracemalloc`` sees it: kept afterwards, or at its peak.

Both helpers start ``tracemalloc`` only when it is not already tracing (and then
stop it again), so a caller that traces a whole run can nest them. Tracing slows
every allocation several times: time nothing while it runs.

>>> kept, data = bytes_kept(lambda: bytearray(100_000))
>>> kept >= 100_000, len(data)
(True, 100000)
>>> peak, _ = peak_bytes(lambda: len(bytearray(100_000)))
>>> peak >= 100_000
True
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

__all__ = ["bytes_kept", "peak_bytes"]

T = TypeVar("T")


@contextmanager
def _tracing() -> Iterator[None]:
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        yield
    finally:
        if started_here:
            tracemalloc.stop()


def bytes_kept(build: Callable[[], T]) -> tuple[int, T]:
    """Bytes still allocated once ``build()`` has returned (its result alive), and that result.

    A full collection runs first, so garbage from before is not counted as freed.
    """
    gc.collect()
    with _tracing():
        before = tracemalloc.get_traced_memory()[0]
        result = build()
        return tracemalloc.get_traced_memory()[0] - before, result


def peak_bytes(run: Callable[[], T]) -> tuple[int, T]:
    """The most bytes allocated above the start at any moment while ``run()`` ran, and its result."""
    with _tracing():
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = run()
        return tracemalloc.get_traced_memory()[1] - before, result
