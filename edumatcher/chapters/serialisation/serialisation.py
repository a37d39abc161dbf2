"""Serialisation costs of the message path: the JSON codec, topics, and macro against micro savings.

Every order crosses the process boundary as JSON and causes one or more
published frames, so the codec is paid several times per message. This module
compares the two codecs of ``edumatcher.messages`` on a realistic payload, the
topic cache against building a topic each time, and puts the codec's saving per
order beside the micro-optimisations of chapters 04 and 05. Every pair is timed
interleaved (``edumatcher.kit._compare.compare_interleaved``) and judged from the
confidence interval of its ratio.

>>> payload = realistic_order_payload()
>>> len(payload)
12
>>> STDLIB_CODEC.dumps(payload) == ORJSON_CODEC.dumps(payload)
True
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from edumatcher.chapters.construction_and_conversion.construction import order_via_init, sample_order_dict
from edumatcher.chapters.data_representation.slots import SEED_FIELDS, field_classes
from edumatcher.kit import (
    CONFIDENCE,
    MIN_ROUNDS,
    RESAMPLES,
    SAMPLE_TARGET,
    TIMER_NAME,
    Comparison,
    Measurement,
    calibrated_sampler,
    compare,
    compare_interleaved,
)
from edumatcher.kit._compare import _bootstrap
from edumatcher.kit._runner import _interleave_ids
from edumatcher.kit.message_path import fresh_engine
from edumatcher.messages import ORJSON_CODEC, STDLIB_CODEC, TOPIC_ORDER_REJECT, TOPIC_TRADE_EXECUTED, TopicCache, loads
from edumatcher.model import ORDER_TYPE_BY_VALUE, Order, OrderType

__all__ = [
    "ORJSON_CODEC", "STDLIB_CODEC", "realistic_order_payload", "payload_with_keys", "CodecFigures", "measure_codecs",
    "gain_order", "frames_per_message", "EngineUses", "engine_uses", "TOPIC_STATEMENTS", "measure_topics", "Saving",
    "macro_and_micro_savings", "orjson_dumps",
    "macro_micro_verdict", "totals_line",
]

if ORJSON_CODEC is None:  # pragma: no cover - orjson is a hard dependency
    raise ImportError("orjson is required for the serialisation experiments")

orjson_dumps = ORJSON_CODEC.dumps_without_floats or ORJSON_CODEC.dumps
"""``orjson.dumps`` itself: what the engine's builders call for every message without a float field.

``ORJSON_CODEC.dumps`` adds a scan that refuses NaN and ±Infinity (which orjson
would write as ``null``); only the one message with a float field pays for it.
The codec comparisons time this one, the encoder the engine's frames really use.
"""


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
    """Both codecs compared both ways on one payload: json against orjson, encode and decode."""

    encode: Comparison  # a: json dumps -> bytes, b: orjson dumps -> bytes
    decode: Comparison  # a: json loads, b: orjson loads

    @property
    def json_dumps(self) -> Measurement:
        """json's encode timing."""
        return self.encode.a

    @property
    def orjson_dumps(self) -> Measurement:
        """orjson's encode timing."""
        return self.encode.b

    @property
    def json_loads(self) -> Measurement:
        """json's decode timing."""
        return self.decode.a

    @property
    def orjson_loads(self) -> Measurement:
        """orjson's decode timing."""
        return self.decode.b

    @property
    def dumps_ratio(self) -> float:
        """json / orjson median encode time."""
        return self.encode.ratio

    @property
    def loads_ratio(self) -> float:
        """json / orjson median decode time."""
        return self.decode.ratio

    def all(self) -> list[Measurement]:
        """The four measurements, encode pair first."""
        return [self.json_dumps, self.orjson_dumps, self.json_loads, self.orjson_loads]


def measure_codecs(payload: dict[str, Any] | None = None, *, budget: float = 1.5,
                   target: float = SAMPLE_TARGET) -> CodecFigures:
    """Compare ``dumps`` (to bytes) and ``loads`` (from bytes) of both codecs on ``payload``, interleaved.

    Two ``compare_interleaved`` calls of ``budget`` seconds each; ``target`` is the
    length of one sample.
    """
    payload = payload if payload is not None else realistic_order_payload()
    std, fast = STDLIB_CODEC, ORJSON_CODEC
    data = orjson_dumps(payload)
    if std.dumps(payload) != data:  # pragma: no cover - the codecs are built to agree
        raise AssertionError("the codecs encode this payload differently")
    return CodecFigures(
        compare_interleaved(lambda: std.dumps(payload), lambda: orjson_dumps(payload), budget=budget, target=target,
                            labels=("json dumps -> bytes", "orjson dumps -> bytes")),
        compare_interleaved(lambda: std.loads(data), lambda: fast.loads(data), budget=budget, target=target,
                            labels=("json loads", "orjson loads")),
    )


def gain_order(encode: Comparison, decode: Comparison) -> str:
    """A ``verdict:`` line: does orjson gain less when decoding than when encoding? Worded from both intervals.

    "Less" when the encode gain's interval lies wholly above the decode gain's,
    "more" when wholly below, otherwise the two cannot be told apart at this noise.

    >>> from edumatcher.kit import compare
    >>> slow = Measurement.from_samples([4.0, 4.1, 3.9, 4.0, 4.0, 4.05])
    >>> half = Measurement.from_samples([2.0, 2.05, 1.95, 2.0, 2.0, 2.02])
    >>> one = Measurement.from_samples([1.0, 1.1, 0.9, 1.0, 1.0, 1.05])
    >>> gain_order(compare(slow, one), compare(half, one)).split(" (")[0]
    'verdict: decoding gains less than encoding here'
    """
    (enc_low, enc_high), (dec_low, dec_high) = encode.ci, decode.ci
    numbers = (f"(encode {encode.ratio:.1f}x, {encode.ci_text}; decode {decode.ratio:.1f}x, {decode.ci_text})")
    if dec_high < enc_low:
        return f"verdict: decoding gains less than encoding here {numbers}"
    if enc_high < dec_low:
        return f"verdict: decoding gains more than encoding here {numbers}"
    return f"verdict: the two gains cannot be told apart at this noise {numbers}"


def frames_per_message(payloads: Sequence[bytes]) -> float:
    """Frames the engine publishes per handled message (each one an encode) over ``payloads``. O(n)."""
    uses = engine_uses(payloads)
    return uses.per_message(uses.frames)


@dataclass(frozen=True)
class EngineUses:
    """What ``Engine.handle`` did over a workload, counted while it ran.

    ``frames``: frames published, one encode each. ``owner_topic_frames``: frames whose
    topic came from a ``TopicCache`` (acks, cancels, triggers and rejects to an owner;
    trades and owner-less rejects use a topic encoded once at import).
    ``orders_built``: ``order.new`` messages the engine acknowledged, each built once by
    ``Order.from_dict`` (five enum-table lookups, one slotted object).
    """

    messages: int
    frames: int
    owner_topic_frames: int
    orders_built: int

    def per_message(self, count: int) -> float:
        """``count`` spread over the messages handled."""
        return count / self.messages if self.messages else 0.0


def engine_uses(payloads: Sequence[bytes]) -> EngineUses:
    """Handle ``payloads`` in a fresh engine and count what ``EngineUses`` lists. O(n).

    An order the book refused would be built and not acknowledged; then an ack
    would undercount the builds, so such a workload is refused here.
    """
    engine = fresh_engine()
    static = (TOPIC_TRADE_EXECUTED, TOPIC_ORDER_REJECT)
    frames = owner_topics = acks = news = 0
    for payload in payloads:
        out = engine.handle(payload)
        frames += len(out)
        owner_topics += sum(topic not in static for topic, _ in out)
        if loads(payload).get("type") == "order.new":
            news += 1
            acks += out[0][0].startswith(b"order.ack.")
    if acks != news:
        raise ValueError(f"{news - acks} of {news} new orders were refused: builds would not equal acks")
    return EngineUses(len(payloads), frames, owner_topics, acks)


TOPIC_STATEMENTS = ('f"order.ack.{owner}".encode()', "cache[owner]")
"""What ``measure_topics`` times: building an owner's ack topic, and looking it up in a ``TopicCache``."""


def measure_topics(owner: str = "ana", *, budget: float = 1.5, target: float = SAMPLE_TARGET) -> Comparison:
    """Compare (f-string + encode) against a ``TopicCache`` lookup for an owner's ack topic, interleaved.

    Both give the same bytes. The statements are inlined in the timing loop, so no
    function call is timed around them. The result unpacks as ``(built, cached)``.
    """
    cache = TopicCache(b"order.ack.")
    if cache[owner] != f"order.ack.{owner}".encode():  # pragma: no cover
        raise AssertionError("the cache and the f-string disagree")
    built, cached = TOPIC_STATEMENTS
    return compare_interleaved(built, cached, globals={"owner": owner, "cache": cache}, budget=budget, target=target,
                               labels=(built, "TopicCache lookup"))


@dataclass(frozen=True)
class Saving:
    """Time one technique saves per message: ``(slow - fast) * uses_per_message``."""

    label: str
    slow: Measurement
    fast: Measurement
    uses_per_message: float
    comparison: Comparison | None = None  # slow against fast, when they were compared interleaved

    @property
    def seconds(self) -> float:
        """Median saving per message, seconds (negative if the "fast" side was slower)."""
        return (self.slow.median - self.fast.median) * self.uses_per_message

    @property
    def bounds(self) -> tuple[float, float]:
        """The saving per message at the ends of the ratio's confidence interval: ``fast * (ratio - 1) * uses``.

        Without a comparison, both ends are the median saving.
        """
        if self.comparison is None:
            return self.seconds, self.seconds
        low, high = self.comparison.ci
        per_use = self.fast.median * self.uses_per_message
        return per_use * (low - 1), per_use * (high - 1)


def _technique_pairs(uses: EngineUses) -> list[tuple[str, Any, Any, dict[str, Any], float]]:
    """``(label, slow, fast, globals, uses per message)`` for every technique ``macro_and_micro_savings`` weighs.

    Only what ``Engine.handle`` really does per message, counted by ``engine_uses``:
    one decode; an encode and, for most frames, a topic lookup per frame; and per new
    order one ``from_dict``, its five enum-table lookups and one slotted ``Order``. The
    engine takes order ids from the client, so minting ids is not on the list.
    """
    payload = realistic_order_payload()
    data = orjson_dumps(payload)
    d = sample_order_dict()
    plain, slotted = field_classes(SEED_FIELDS)
    new = uses.per_message(uses.orders_built)
    return [
        ("orjson instead of json: encodes", "std_dumps(payload)", "fast_dumps(payload)",
         {"std_dumps": STDLIB_CODEC.dumps, "fast_dumps": orjson_dumps, "payload": payload}, uses.per_message(uses.frames)),
        ("orjson instead of json: decode", "std_loads(data)", "fast_loads(data)",
         {"std_loads": STDLIB_CODEC.loads, "fast_loads": ORJSON_CODEC.loads, "data": data}, 1),
        ("from_dict via __new__", "via_init(d)", "from_dict(d)",
         {"via_init": order_via_init, "from_dict": Order.from_dict, "d": d}, new),
        ("enum lookup tables (5 fields)", 'OrderType("LIMIT")', 'table["LIMIT"]',
         {"OrderType": OrderType, "table": ORDER_TYPE_BY_VALUE}, 5 * new),
        ("slots: construction", "Plain()", "Slotted()", {"Plain": plain, "Slotted": slotted}, new),
        ("cached topics", *TOPIC_STATEMENTS, {"owner": "ana", "cache": TopicCache(b"order.ack.")},
         uses.per_message(uses.owner_topic_frames)),
    ]


def macro_and_micro_savings(payloads: Sequence[bytes], *, budget: float = 3.0, target: float = SAMPLE_TARGET,
                            min_rounds: int = MIN_ROUNDS) -> list[Saving]:
    """Measure every technique's slow and fast form in the same rounds, and scale each saving to one order.

    Each saving is scaled by how often ``Engine.handle`` used the technique per message
    on ``payloads`` (``engine_uses``, counted, not assumed): the codec's encode once per
    frame and its decode once per message; from_dict, the enum tables (five fields) and
    a slotted class (the 18-field stand-in of chapter 04) once per new order; a topic
    lookup once per frame with an owner's topic.

    One round samples all twelve statements once each (each pair in an order
    drawn at random), so a busy spell of the machine lands on every technique alike and the
    savings can be compared with one another round by round (``macro_micro_verdict``).
    Rounds are taken until ``budget`` seconds have passed (at least ``min_rounds``).
    Each ``Saving`` carries its pair as a paired ``Comparison``.
    """
    pairs = _technique_pairs(engine_uses(payloads))
    started = time.perf_counter()
    samplers = []
    for _, slow, fast, namespace, _ in pairs:
        (sample_slow, number_slow), (sample_fast, number_fast) = (
            calibrated_sampler(stmt, namespace=namespace, target=target) for stmt in (slow, fast))
        samplers.append((sample_slow, sample_fast, number_slow, number_fast))
    xs: list[list[float]] = [[] for _ in pairs]
    ys: list[list[float]] = [[] for _ in pairs]
    rounds = 0
    order = random.Random(1)  # each pair's order drawn per round, as compare_sampled does: no period to lock onto
    while rounds < min_rounds or time.perf_counter() - started < budget:
        for i, (sample_slow, sample_fast, _, _) in enumerate(samplers):
            if order.random() < 0.5:
                x = sample_slow()
                y = sample_fast()
            else:
                y = sample_fast()
                x = sample_slow()
            xs[i].append(x)
            ys[i].append(y)
        rounds += 1
    out = []
    for (label, slow, fast, _, uses), (_, _, number_slow, number_fast), x, y in zip(pairs, samplers, xs, ys, strict=True):
        shared = next(_interleave_ids)
        a = Measurement(samples=tuple(x), number=number_slow, label=slow, warmup=1, interleave_id=shared,
                        clock=TIMER_NAME)
        b = Measurement(samples=tuple(y), number=number_fast, label=fast, warmup=1, interleave_id=shared,
                        clock=TIMER_NAME)
        out.append(Saving(label, a, b, uses, compare(a, b)))
    return out


def _split(savings: Sequence[Saving], macro_prefix: str) -> tuple[list[Saving], list[Saving]]:
    macro = [s for s in savings if s.label.startswith(macro_prefix)]
    micro = [s for s in savings if not s.label.startswith(macro_prefix)]
    if not macro or not micro:
        raise ValueError("the savings need at least one codec saving and one other")
    rounds = {s.slow.repeat for s in savings} | {s.fast.repeat for s in savings}
    if len(rounds) != 1:
        raise ValueError("the savings must come from one macro_and_micro_savings call (the same rounds)")
    return macro, micro


def _difference_interval(savings: Sequence[Saving], macro_prefix: str, *, largest_only: bool,
                         ) -> tuple[float, float, float, float]:
    """(codec saving, the others' saving, and the CI of their difference), seconds per message.

    "The others' saving" is the largest single one (``largest_only``) or their sum.
    Bootstrap over rounds (``scipy.stats.bootstrap``, paired: round i of every
    statement goes together), percentile method, fixed seed.
    """
    macro, micro = _split(savings, macro_prefix)
    ordered = macro + micro
    uses = np.array([s.uses_per_message for s in ordered])
    is_macro = np.array([i < len(macro) for i in range(len(ordered))])

    def per_order(*samples: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
        saved = np.stack([(np.median(samples[2 * i], axis=axis) - np.median(samples[2 * i + 1], axis=axis)) * uses[i]
                          for i in range(len(ordered))])
        other = saved[~is_macro].max(axis=0) if largest_only else saved[~is_macro].sum(axis=0)
        return saved[is_macro].sum(axis=0), other

    def difference(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
        codec, other = per_order(*samples, axis=axis)
        return codec - other

    data = tuple(np.asarray(m.samples) for s in ordered for m in (s.slow, s.fast))
    codec, other = (float(v) for v in per_order(*data))
    bootstrap, seed_arg = _bootstrap()  # SciPy, imported once, with its generator argument's name
    result = bootstrap(data, difference, paired=True, vectorized=True, n_resamples=RESAMPLES, batch=200,
                       confidence_level=CONFIDENCE, method="percentile", **{seed_arg: np.random.default_rng(1)})
    low, high = result.confidence_interval
    return codec, other, float(low), float(high)


def macro_micro_verdict(savings: Sequence[Saving], *, macro_prefix: str = "orjson") -> str:
    """A ``verdict:`` line: does the codec (labels starting ``macro_prefix``) save more per message than any one other technique?

    Worded from the 95 % bootstrap interval (over rounds) of "the codec's saving
    minus the largest other saving": "more" when it lies above 0, "less" when
    below, otherwise the run cannot tell. The savings must come from one
    ``macro_and_micro_savings`` call, so round i of every technique was taken at
    the same moment.
    """
    codec, other, low, high = _difference_interval(savings, macro_prefix, largest_only=True)
    numbers = (f"\n    codec {codec * 1e9:,.0f} ns per message, the largest other {other * 1e9:,.0f} ns; "
               f"95 % CI of the difference {low * 1e9:,.0f} to {high * 1e9:,.0f} ns")
    if low > 0:
        return f"verdict: the codec alone saves more per message than any one micro-optimisation{numbers}"
    if high < 0:
        return f"verdict: one micro-optimisation saves more per message than the codec{numbers}"
    return f"verdict: the codec and the largest micro-optimisation cannot be told apart at this noise{numbers}"


def totals_line(savings: Sequence[Saving], *, macro_prefix: str = "orjson") -> str:
    """An informational line (deliberately not a verdict): the codec's saving against all the others' together.

    The two totals can be close, so which is larger may change from run to run;
    the line gives both and the interval of their difference, and draws no conclusion.
    """
    codec, others, low, high = _difference_interval(savings, macro_prefix, largest_only=False)
    micro = _split(savings, macro_prefix)[1]
    return (f"per message: the codec saves {codec * 1e9:,.0f} ns; the {len(micro)} micro-optimisations together "
            f"{others * 1e9:,.0f} ns (95 % CI of codec minus the rest: {low * 1e9:,.0f} to {high * 1e9:,.0f} ns)")
