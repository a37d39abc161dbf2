"""Serialisation costs of the message path: the JSON codec, topics, and macro against micro savings.

Every order crosses the process boundary as JSON and causes one or more
published frames, so the codec is paid several times per order. This module
measures the two codecs of ``edumatcher.messages`` on a realistic payload, the
topic cache against building a topic each time, and puts the codec's saving per
order beside the micro-optimisations of chapters 02 and 03.

>>> payload = realistic_order_payload()
>>> len(payload)
12
>>> STDLIB_CODEC.dumps(payload) == ORJSON_CODEC.dumps(payload)
True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..measure import Measurement, measure
from ..messages import ORJSON_CODEC, STDLIB_CODEC, TopicCache
from .construction import measure_enum_lookup, measure_from_dict, measure_ids
from .message_path import fresh_engine
from .slots import measure_slots

__all__ = [
    "ORJSON_CODEC", "STDLIB_CODEC", "realistic_order_payload", "payload_with_keys", "CodecFigures", "measure_codecs",
    "frames_per_message", "measure_topics", "Saving", "macro_and_micro_savings",
]

if ORJSON_CODEC is None:  # pragma: no cover - orjson is a hard dependency
    raise ImportError("orjson is required for the serialisation experiments")


def realistic_order_payload() -> dict[str, Any]:
    """A 12-key order message as the engine sees it: strings, ints and a decimal-string price."""
    return {
        "type": "order.new", "id": "o-7f3a9c12", "symbol": "EDU", "side": "BUY", "order_type": "LIMIT",
        "tif": "GTC", "qty": 250, "price": "100.12", "owner": "ana", "smp": "NONE", "display_qty": 50,
        "ts": 1_764_000_000_123_456_789,
    }


def payload_with_keys(keys: int) -> dict[str, Any]:
    """A flat payload of ``keys`` keys cycling through the value kinds of an order (str, int, price string).

    >>> sorted(payload_with_keys(3).items())
    [('k0', 'ana'), ('k1', 250), ('k2', '100.12')]
    """
    if keys < 1:
        raise ValueError(f"keys must be at least 1, not {keys!r}")
    values = ("ana", 250, "100.12")
    return {f"k{i}": values[i % 3] for i in range(keys)}


@dataclass(frozen=True)
class CodecFigures:
    """Encode and decode timings of both codecs on one payload."""

    json_dumps: Measurement
    orjson_dumps: Measurement
    json_loads: Measurement
    orjson_loads: Measurement

    @property
    def dumps_ratio(self) -> float:
        """json / orjson median encode time."""
        return self.json_dumps.median / self.orjson_dumps.median

    @property
    def loads_ratio(self) -> float:
        """json / orjson median decode time."""
        return self.json_loads.median / self.orjson_loads.median

    def all(self) -> list[Measurement]:
        """The four measurements, encode pair first."""
        return [self.json_dumps, self.orjson_dumps, self.json_loads, self.orjson_loads]


def measure_codecs(payload: dict[str, Any] | None = None, *, target: float = 0.02) -> CodecFigures:
    """Time ``dumps`` (to bytes) and ``loads`` (from bytes) of both codecs on ``payload``."""
    payload = payload if payload is not None else realistic_order_payload()
    std, fast = STDLIB_CODEC, ORJSON_CODEC
    data = fast.dumps(payload)
    if std.dumps(payload) != data:  # pragma: no cover - the codecs are built to agree
        raise AssertionError("the codecs encode this payload differently")
    return CodecFigures(
        measure(lambda: std.dumps(payload), target=target, label="json dumps -> bytes"),
        measure(lambda: fast.dumps(payload), target=target, label="orjson dumps -> bytes"),
        measure(lambda: std.loads(data), target=target, label="json loads"),
        measure(lambda: fast.loads(data), target=target, label="orjson loads"),
    )


def frames_per_message(payloads: Sequence[bytes]) -> float:
    """Frames the engine publishes per handled message (each one an encode) over ``payloads``. O(n)."""
    engine = fresh_engine()
    frames = sum(len(engine.handle(p)) for p in payloads)
    return frames / len(payloads) if payloads else 0.0


def measure_topics(owner: str = "ana", *, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(f-string + encode, TopicCache lookup)`` for an owner's ack topic; both give the same bytes."""
    cache = TopicCache(b"order.ack.")
    if cache[owner] != f"order.ack.{owner}".encode():  # pragma: no cover
        raise AssertionError("the cache and the f-string disagree")
    g = {"owner": owner, "cache": cache}
    return (
        measure('f"order.ack.{owner}".encode()', globals=g, target=target, label='f"order.ack.{owner}".encode()'),
        measure("cache[owner]", globals=g, target=target, label="TopicCache lookup"),
    )


@dataclass(frozen=True)
class Saving:
    """Time one technique saves per order: ``(slow - fast) * times_per_order``."""

    label: str
    slow: Measurement
    fast: Measurement
    times_per_order: float

    @property
    def seconds(self) -> float:
        """Median saving per order, seconds (negative if the "fast" side was slower)."""
        return (self.slow.median - self.fast.median) * self.times_per_order


def macro_and_micro_savings(payloads: Sequence[bytes], *, target: float = 0.01) -> list[Saving]:
    """Re-measure each technique quickly and scale it to one order. About 4 s with the default target.

    The codec is used ``frames_per_message(payloads)`` times for encoding plus
    once for decoding per message; from_dict once; the enum table five times
    (the five enum fields of an order); a slotted ``Order`` once (measured on the
    18-field stand-in); a topic lookup once per frame; an id once, where one is
    minted.
    """
    frames = frames_per_message(payloads)
    codecs = measure_codecs(target=target)
    via_init, from_dict = measure_from_dict(target=target)
    enum_call, enum_table = measure_enum_lookup(target=target)
    slots = measure_slots(instances=2_000, target=target)
    topic_build, topic_cache = measure_topics(target=target)
    uuid_id, hex_id = measure_ids(target=target)
    return [
        Saving("orjson instead of json: encodes", codecs.json_dumps, codecs.orjson_dumps, frames),
        Saving("orjson instead of json: decode", codecs.json_loads, codecs.orjson_loads, 1),
        Saving("from_dict via __new__", via_init, from_dict, 1),
        Saving("enum lookup tables (5 fields)", enum_call, enum_table, 5),
        Saving("slots: construction", slots.construct_plain, slots.construct_slotted, 1),
        Saving("cached topics", topic_build, topic_cache, frames),
        Saving("os.urandom ids (if minted)", uuid_id, hex_id, 1),
    ]
