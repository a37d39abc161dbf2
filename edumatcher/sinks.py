"""Where the engine's run loop reads payloads from and writes frames to.

A *source* has ``poll()``: it returns the next payload (``bytes``), ``None`` when
nothing is waiting (an idle tick: the loop does its maintenance, and the
collector policy may collect), or ``END`` when the stream is over.

A *sink* has ``send(topic, payload)`` for one frame and ``send_many(frames)``
for a list of ``(topic, payload)`` frames: the engine hands over everything one
message caused in one call.

The two sinks differ in one way that matters for benchmarks. ``DiscardingSink``
counts frames and keeps nothing, so memory stays flat. ``KeepingSink`` keeps
every frame: the heap grows for the whole run and each full collection has more
to walk. The Python engine notes (quoted) traces a throughput figure that swung between
12 361 and 35 377 orders/s on one machine to exactly that: a mock socket that
kept every published frame, scanned by the collector. Benchmarks use the
discarding sink; the keeping one is for tests and for showing that trap.

>>> source = IterableSource([b"a", None, b"b"])
>>> [source.poll() for _ in range(4)] == [b"a", None, b"b", END]
True
>>> sink = KeepingSink()
>>> sink.send_many([(b"t", b"1"), (b"t", b"2")]); sink.send(b"u", b"3")
>>> len(sink), sink.frames[-1]
(3, (b'u', b'3'))
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

__all__ = ["END", "IterableSource", "DiscardingSink", "KeepingSink"]


class _EndOfStream:
    """The type of ``END``; one instance only."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "END"


END: Any = _EndOfStream()
"""What ``poll()`` returns once a source has nothing more, ever (compare with ``is``)."""


class IterableSource:
    """A source over any iterable of payloads; ``None`` items are idle ticks, then ``END`` forever.

    ``poll()`` returns the next payload, ``None`` for an idle tick, or ``END``. O(1).
    It is ``next(iterator, END)`` bound once with ``functools.partial``: a call
    with no Python frame, because it sits on the message path of every benchmark.
    """

    __slots__ = ("poll",)

    def __init__(self, items: Iterable[bytes | None]) -> None:
        self.poll = functools.partial(next, iter(items), END)


class DiscardingSink:
    """Counts what it is sent and keeps nothing: memory stays flat however long the run."""

    __slots__ = ("frames",)

    def __init__(self) -> None:
        self.frames = 0

    def send(self, topic: bytes, payload: bytes) -> None:
        """Count one frame. O(1)."""
        self.frames += 1

    def send_many(self, frames: list[tuple[bytes, bytes]]) -> None:
        """Count a list of frames. O(1)."""
        self.frames += len(frames)

    def __len__(self) -> int:
        return self.frames


class KeepingSink:
    """Keeps every ``(topic, payload)`` frame in ``frames``, in order: for tests, and to show the growing-heap trap."""

    __slots__ = ("frames",)

    def __init__(self) -> None:
        self.frames: list[tuple[bytes, bytes]] = []

    def send(self, topic: bytes, payload: bytes) -> None:
        """Keep one frame. Amortised O(1)."""
        self.frames.append((topic, payload))

    def send_many(self, frames: list[tuple[bytes, bytes]]) -> None:
        """Keep a list of frames. O(len(frames))."""
        self.frames.extend(frames)

    def topics(self) -> list[bytes]:
        """The topics of the kept frames, in order. O(n)."""
        return [topic for topic, _ in self.frames]

    def clear(self) -> None:
        """Forget every kept frame."""
        self.frames.clear()

    def __len__(self) -> int:
        return len(self.frames)
