"""Fuzz ``Engine.handle``: no payload escapes as an exception, and a refusal changes nothing.

Three kinds of input, a few thousand in all: random bytes, random JSON values,
and valid messages mutated a little (a field dropped, set to a random JSON value,
set to null, or a stray field added), which are the ones that reach deep into
the checks and the book. For each payload the answer must be either one
well-formed ``order.reject`` with a known reason code, and then every book is
exactly as before (depth, size, last price, the live orders), or the normal
answer of an accepted message, every frame of it passing the full spec checks.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edumatcher import engine as engine_module
from edumatcher import messages
from edumatcher.engine import Engine
from edumatcher.messages import (
    STDLIB_CODEC,
    make_book_snapshot_request,
    make_order_cancel,
    make_order_cancel_owner,
    make_order_new,
)
from edumatcher.model import RejectReason

REASONS = {r.value for r in RejectReason}
IDS = ("s1", "s2", "b1", "st", "c1", "x1")

_SETUP = (
    make_order_new("s1", "XYZ", "SELL", "LIMIT", 10, "bob", price="10.50"),
    make_order_new("s2", "XYZ", "SELL", "LIMIT", 10, "bob", price="10.60", display_qty=2),
    make_order_new("b0", "XYZ", "BUY", "LIMIT", 1, "amy", price="10.50"),  # a trade: last_price set
    make_order_new("b1", "XYZ", "BUY", "LIMIT", 10, "ana", price="10.00", smp="CANCEL_OLDEST"),
    make_order_new("st", "XYZ", "BUY", "STOP", 2, "cy", stop_price="11.00"),
    make_order_new("c1", "ABC", "BUY", "LIMIT", 3, "ana", price="1.00"),
)


class _Clock:
    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        self.now += 1
        return self.now


def _fresh_engine() -> Engine:
    engine = Engine(["XYZ", "ABC"], clock=_Clock())
    for payload in _SETUP:
        engine.handle(payload)
    return engine


def _state(engine: Engine) -> list[Any]:
    out = []
    for symbol, book in engine.books.items():
        orders = {i: (o.status, o.remaining_qty, o.visible_qty, o.arrival_seq) if (o := book.get(i)) else None for i in IDS}
        out.append((symbol, book.depth(), len(book), book.last_price, orders))
    return out


_ENGINE = _fresh_engine()
_BEFORE = _state(_ENGINE)


def _check_answer(payload: bytes) -> None:
    """Handle ``payload`` on the shared engine; check the answer; start afresh if it was accepted."""
    global _ENGINE, _BEFORE
    frames = _ENGINE.handle(payload)
    assert isinstance(frames, list)
    for topic, body in frames:
        assert type(topic) is bytes and type(body) is bytes
        msg = messages.loads(body)
        messages.builders.check(msg)
        getattr(messages.builders, "explain_" + msg["type"].replace(".", "_"))(msg)
    answers = [messages.loads(body) for _, body in frames]
    if len(answers) == 1 and answers[0]["type"] == "order.reject":
        assert answers[0]["reason"] in REASONS
        assert _state(_ENGINE) == _BEFORE, f"a refused payload changed a book: {payload[:200]!r}"
        return
    # Accepted: no reject anywhere in the answer, and the next example starts from the known state.
    assert all(a["type"] != "order.reject" for a in answers), answers
    _ENGINE = _fresh_engine()
    _BEFORE = _state(_ENGINE)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=10,
)

VALID = st.sampled_from([
    make_order_new("n1", "XYZ", "BUY", "LIMIT", 5, "ana", price="10.50"),
    make_order_new("n2", "XYZ", "SELL", "MARKET", 5, "bob", tif="IOC"),
    make_order_new("n3", "XYZ", "SELL", "STOP_LIMIT", 5, "ana", price="9.00", stop_price="9.50", display_qty=2),
    make_order_new("n4", "ABC", "BUY", "LIMIT", 5, "ana", price=1, tif="FOK", smp="DECREMENT"),
    make_order_cancel("s1", "XYZ", "bob"),
    make_order_cancel_owner("ana", symbol="XYZ"),
    make_book_snapshot_request("XYZ", "ana", levels=2),
]).map(lambda p: json.loads(p))

FIELDS = ("type", "id", "symbol", "side", "order_type", "tif", "qty", "price", "stop_price", "display_qty",
          "owner", "smp", "levels", "status", "arrival_seq", "filled_qty", "remaining_qty")


@st.composite
def mutated(draw: Any) -> bytes:
    d = dict(draw(VALID))
    for _ in range(draw(st.integers(1, 3))):
        action = draw(st.sampled_from(["drop", "set", "null", "add", "dup-id"]))
        if action == "drop" and d:
            d.pop(draw(st.sampled_from(sorted(d))))
        elif action in ("set", "null") and d:
            d[draw(st.sampled_from(sorted(d)))] = None if action == "null" else draw(JSON)
        elif action == "dup-id":
            d["id"] = draw(st.sampled_from(IDS))
        else:
            d[draw(st.sampled_from(FIELDS) | st.text(max_size=8))] = draw(JSON)
    # The stdlib encoder writes what orjson cannot (big ints) and also NaN/Infinity, which must be refused.
    return json.dumps(d).encode()


PAYLOADS = st.one_of(
    st.binary(max_size=300),
    JSON.map(lambda v: json.dumps(v).encode()),
    mutated(),
    mutated().map(lambda p: p + b" " * 4096),  # valid-looking but oversized
)

_SETTINGS = settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@given(PAYLOADS)
@_SETTINGS
def test_no_payload_escapes_and_refusals_change_nothing(payload: bytes) -> None:
    _check_answer(payload)


@given(st.one_of(JSON.map(lambda v: json.dumps(v).encode()), mutated()))
@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_same_holds_with_the_stdlib_codec(payload: bytes) -> None:
    original = engine_module._loads
    engine_module._loads = STDLIB_CODEC.loads
    try:
        _check_answer(payload)
    finally:
        engine_module._loads = original


@pytest.mark.parametrize("payload", [
    b"[" * 100_000 + b"]" * 100_000,             # far past the size limit
    b"[" * 2000 + b"]" * 2000,                  # deep nesting within it
    b'{"type":"order.new","id":' + b"[" * 1500 + b"]" * 1500 + b"}",
    b'{"type":"order.new","qty":1' + b"0" * 4000 + b"}",
])
def test_pathological_payloads_are_refused(payload: bytes) -> None:
    for loads in (engine_module._loads, STDLIB_CODEC.loads):
        original = engine_module._loads
        engine_module._loads = loads
        try:
            _check_answer(payload)
        finally:
            engine_module._loads = original
