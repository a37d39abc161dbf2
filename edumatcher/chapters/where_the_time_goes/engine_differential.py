"""Differential testing one level up: a changed ``Engine`` against the naive reference, message by message.

``edumatcher.differential`` holds two *books* to the same answers. An exercise that changes
the engine's own code (a subclass of ``Engine`` overriding a method) needs the same proof
for the whole message path: the bytes it publishes. ``case_payloads`` turns a generated
differential ``Case`` (every order type, TIF, icebergs, stops, self-match modes, defective
orders, unknown and reused ids) into the wire payloads a client would send;
``compare_engines`` replays them on the engine under test and on a reference engine whose
books are ``NaiveBook``, and after **every** message compares the frames (byte for byte, except
the free-text ``text`` of a reject: the two books word a refusal differently, and its reason
code is the contract),
each book's depth, best prices, last price and size, and runs the tested book's
``check_invariants()`` when it has one. The first difference is returned, with the message
that caused it.

``count_calls`` is the countable side of a change: it runs an engine over payloads under
``cProfile`` and returns how many times functions whose pstats label contains a given
name were called. Call counts do not depend on the machine's speed or load, so a check
can require "fewer calls" where it could never require "faster".

>>> from edumatcher.differential import generate_case
>>> from edumatcher.engine import Engine
>>> payloads = case_payloads(generate_case(1, 40))
>>> compare_engines(lambda symbols: Engine(symbols, clock=lambda: 1), payloads) is None
True
"""

from __future__ import annotations

import cProfile
import pstats
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from edumatcher.differential import Case
from edumatcher.engine import Engine
from edumatcher.messages import make_order_cancel_owner_unchecked, make_order_cancel_unchecked
from edumatcher.reference import NaiveBook
from edumatcher.ticks import from_ticks

from .profiling import function_label

__all__ = ["EngineFactory", "EngineDivergence", "case_payloads", "reference_engine", "compare_engines", "count_calls"]

EngineFactory = Callable[[list[str]], Any]
"""Builds an engine for a list of symbols, e.g. ``lambda symbols: Engine(symbols, clock=lambda: 1)``."""

_CLOCK_NS = 1
"""The reference engine's constant clock: frames carry timestamps, so both engines must read the same."""


def case_payloads(case: Case, decimals: int = 2) -> list[bytes]:
    """The operations of a differential ``Case`` as ``order.new`` / ``order.cancel`` / ``order.cancel_owner`` payloads. O(ops).

    Prices in ticks become decimal strings with ``decimals`` places; a price that is not a
    whole number of ticks (a defective order's float) is sent as it is, so the engine must
    refuse it. Orders are encoded field by field without checks, defects included. A cancel
    names the owner of the last order submitted with that id ("ann" for an id never seen).
    """
    owner_of: dict[Any, str] = {}
    out: list[bytes] = []
    for op in case.ops:
        kind = op["op"]
        if kind == "submit":
            msg: dict[str, Any] = {"type": "order.new"}
            for field, value in op["order"].items():
                if field in ("price", "stop_price") and type(value) is int and value > 0:
                    value = str(from_ticks(value, decimals))
                msg[field] = value
            owner = op["order"].get("owner")
            if isinstance(owner, str) and owner and isinstance(op["order"].get("id"), str):
                owner_of[op["order"]["id"]] = owner
            out.append(orjson.dumps(msg))
        elif kind == "cancel":
            out.append(make_order_cancel_unchecked(op["id"], case.symbol, owner_of.get(op["id"], "ann")))
        elif kind == "cancel_owner":
            out.append(make_order_cancel_owner_unchecked(op["owner"], case.symbol))
        else:
            raise ValueError(f"unknown operation {op!r}")
    return out


def reference_engine(symbols: list[str]) -> Engine:
    """An ``Engine`` whose books are ``NaiveBook`` (the rules written the obvious way), with a constant clock."""
    return Engine(symbols, clock=lambda: _CLOCK_NS, book_factory=NaiveBook)


@dataclass(frozen=True)
class EngineDivergence:
    """The first message after which the tested engine and the reference disagreed."""

    index: int
    payload: bytes
    what: str
    reference: Any
    tested: Any

    def describe(self) -> str:
        """Where, the message, what differed, both values."""
        return (f"message {self.index}: {self.payload.decode(errors='replace')}\n"
                f"  {self.what} differs\n  reference: {self.reference!r}\n  tested:    {self.tested!r}")

    __str__ = describe


def _comparable(frames: list[tuple[bytes, bytes]]) -> list[tuple[bytes, Any]]:
    """Frames as compared: a reject's payload without its free text, every other payload as its bytes."""
    out: list[tuple[bytes, Any]] = []
    for topic, payload in frames:
        if topic.startswith(b"order.reject"):
            msg = orjson.loads(payload)
            msg.pop("text", None)
            out.append((topic, msg))
        else:
            out.append((topic, payload))
    return out


def _book_state(book: Any) -> tuple[Any, ...]:
    bids, asks = book.depth()
    return ([tuple(level) for level in bids], [tuple(level) for level in asks],
            book.best_bid(), book.best_ask(), book.last_price, len(book))


def compare_engines(
    make_engine: EngineFactory, payloads: Sequence[bytes], *, symbols: Sequence[str] = ("XYZ",),
) -> EngineDivergence | None:
    """Replay ``payloads`` on ``make_engine(symbols)`` and on ``reference_engine``; compare after every message. O(n²) worst case.

    The engine under test must read the same clock as the reference (a constant 1 ns:
    ``Engine(symbols, clock=lambda: 1)``), since every frame carries a timestamp. A
    message that raises in the tested engine is a divergence too.
    """
    tested, reference = make_engine(list(symbols)), reference_engine(list(symbols))
    for i, payload in enumerate(payloads):
        expected = reference.handle(payload)
        try:
            got = tested.handle(payload)
        except Exception as exc:  # a crash is reported where it happened, like any other difference
            return EngineDivergence(i, payload, "outcome", expected, f"raised {type(exc).__name__}: {exc}")
        if got != expected and _comparable(got) != _comparable(expected):
            return EngineDivergence(i, payload, "frames", expected, got)
        for symbol in symbols:
            want, have = _book_state(reference.books[symbol]), _book_state(tested.books[symbol])
            if want != have:
                return EngineDivergence(i, payload, f"book {symbol} (depth, best bid/ask, last price, size)", want, have)
            check = getattr(tested.books[symbol], "check_invariants", None)
            if check is not None:
                try:
                    check()
                except AssertionError as exc:
                    return EngineDivergence(i, payload, f"check_invariants() of book {symbol}", "passes", str(exc))
    return None


def count_calls(make_engine: EngineFactory, payloads: Sequence[bytes], name: str, *,
                symbols: Sequence[str] = ("XYZ",)) -> int:
    """Primitive calls of every function whose pstats label contains ``name``, over ``payloads`` on a fresh engine. O(n).

    Labels are ``function_label``'s: ``"model.py:179 from_dict"``, or a built-in's own
    name such as ``"<method 'get' of 'dict' objects>"``. The engine is built before the
    profiler starts, so only handling is counted.

    >>> from edumatcher.engine import Engine
    >>> count_calls(lambda s: Engine(s, clock=lambda: 1), [b'{"type":"nonsense"}'], " handle")
    1
    """
    engine = make_engine(list(symbols))
    handle = engine.handle
    profiler = cProfile.Profile()
    profiler.enable()
    for payload in payloads:
        handle(payload)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    return sum(value[0] for key, value in stats.items() if name in function_label(key))
