"""The wire: codecs agree byte for byte, builders agree, every spec rule bites, shortcuts stay pinned."""

from __future__ import annotations

import inspect
import json
import sys
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edumatcher import messages
from edumatcher.messages import (
    CODEC,
    INBOUND,
    MAX_LEVELS,
    ORJSON_CODEC,
    OUTBOUND,
    SPEC,
    STDLIB_CODEC,
    TOPIC_ORDER_REJECT,
    TOPIC_TRADE_EXECUTED,
    Field,
    NonFiniteNumber,
    TopicCache,
    build_builders,
    builder_name,
    builder_source,
    overallocates,
    static_topic,
    traced_size,
)
from edumatcher.model import CancelReason, OrderRejected, RejectReason, Side

needs_orjson = pytest.mark.skipif(ORJSON_CODEC is None, reason="orjson is not installed")

# One valid sample per message type, with the awkward cases on purpose: non-ASCII text,
# quotes, backslashes and control characters in the one free-text field, every optional
# field given, and enum members (str subclasses) where a caller would naturally pass them.
SAMPLES: dict[str, dict[str, Any]] = {
    "order.new": dict(id="o-1", symbol="XYZ", side=Side.BUY, order_type="LIMIT", qty=10, owner="zoë",
                      tif="IOC", price="100.25", stop_price=None, display_qty=5, smp="CANCEL_OLDEST"),
    "order.cancel": dict(id="o-1", symbol="XYZ", owner="zoë"),
    "order.cancel_owner": dict(owner="zoë", symbol="XYZ"),
    "book.snapshot.request": dict(symbol="XYZ", owner="ana", levels=3),
    "order.ack": dict(id="o-1", symbol="XYZ", owner="ana", status="PARTIALLY_FILLED", filled_qty=3, remaining_qty=7,
                      ts=1_700_000_000_123_456_789),
    "order.reject": dict(reason=RejectReason.BAD_QTY, text='qty "x"\n\\ é \u2028 \x1f end', ts=5, id="o-1", owner="ana"),
    "order.cancelled": dict(id="o-1", symbol="XYZ", owner="ana", cancelled_qty=7, filled_qty=3,
                            reason=CancelReason.IOC_REMAINDER, ts=5),
    "trade.executed": dict(symbol="XYZ", seq=1, price="100.25", qty=3, buy_order_id="b", sell_order_id="s",
                           buy_owner="ana", sell_owner="ben", aggressor_side="SELL", ts=5),
    "order.triggered": dict(id="o-1", symbol="XYZ", owner="ana", order_type="STOP", arrival_seq=4, ts=5),
    "book.snapshot": dict(symbol="XYZ", bids=[["100.24", 2, 30], ["100.23", 1, 5]], asks=[["100.26", 1, 1]],
                          orders=4, ts=5, last_price="100.25"),
    "book.depth": dict(symbol="XYZ", bid_qty=30, ask_qty=1, imbalance=0.9355, ts=5, best_bid="100.24", best_ask="100.26"),
}


def build(message: str, *, unchecked: bool = False, builders: Any = messages.builders, **fields: Any) -> bytes:
    fn = getattr(builders, builder_name(message, "_unchecked" if unchecked else ""))
    return fn(**fields)


def explain(message: str, d: dict[str, Any]) -> None:
    getattr(messages.builders, "explain_" + message.replace(".", "_"))(d)


def check(message: str, d: dict[str, Any]) -> None:
    getattr(messages.builders, "check_" + message.replace(".", "_"))(d)


def reason_of(fn: Any, *args: Any, **kwargs: Any) -> RejectReason | None:
    try:
        fn(*args, **kwargs)
    except OrderRejected as exc:
        return exc.code
    return None


def test_samples_cover_every_message_type() -> None:
    assert set(SAMPLES) == set(SPEC)
    assert set(INBOUND) | set(OUTBOUND) == set(SPEC)
    assert {"order.new", "order.cancel", "order.cancel_owner", "book.snapshot.request"} <= set(INBOUND)
    assert {"order.ack", "order.reject", "order.cancelled", "trade.executed", "order.triggered",
            "book.snapshot", "book.depth"} <= set(OUTBOUND)


# --------------------------------------------------------------------------- codecs

def test_codec_in_use_is_orjson_when_importable() -> None:
    assert CODEC is (ORJSON_CODEC or STDLIB_CODEC)
    assert messages.dumps is CODEC.dumps and messages.loads is CODEC.loads


@needs_orjson
@pytest.mark.parametrize("message", sorted(SPEC))
def test_both_codecs_write_identical_bytes(message: str) -> None:
    fast, slow = build_builders(ORJSON_CODEC), build_builders(STDLIB_CODEC)  # type: ignore[arg-type]
    for unchecked in (False, True):
        a = build(message, unchecked=unchecked, builders=fast, **SAMPLES[message])
        b = build(message, unchecked=unchecked, builders=slow, **SAMPLES[message])
        assert a == b
        assert ORJSON_CODEC.loads(a) == STDLIB_CODEC.loads(b)  # type: ignore[union-attr]
    assert b'"type":"' + message.encode() + b'"' in a


def test_stdlib_codec_is_compact_utf8_and_refuses_nan() -> None:
    assert STDLIB_CODEC.dumps({"a": "é", "b": [1, 2.5]}) == '{"a":"é","b":[1,2.5]}'.encode()
    for bad in (b"NaN", b"[Infinity]", b"-Infinity", b"\xff", b"{"):
        with pytest.raises(ValueError):
            STDLIB_CODEC.loads(bad)
        if ORJSON_CODEC is not None:
            with pytest.raises(ValueError):
                ORJSON_CODEC.loads(bad)


CODECS = [c for c in (ORJSON_CODEC, STDLIB_CODEC) if c is not None]
NON_FINITE = [float("nan"), float("inf"), -float("inf")]


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name.split()[0])
@pytest.mark.parametrize("value", NON_FINITE, ids=repr)
def test_both_codecs_refuse_to_encode_nan_and_infinity(codec: Any, value: float) -> None:
    # orjson alone would write null here, silently; json alone would write NaN, which is not JSON.
    for obj in (value, [1, value], {"a": {"b": [0.5, value]}}, ("x", value)):
        with pytest.raises(NonFiniteNumber, match="JSON has no NaN or Infinity"):
            codec.dumps(obj)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name.split()[0])
def test_a_real_null_is_not_mistaken_for_a_refused_number(codec: Any) -> None:
    value = {"a": None, "b": "null", "c": [None, 1.5], "d": "nan"}
    assert codec.dumps(value) == b'{"a":null,"b":"null","c":[null,1.5],"d":"nan"}'


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name.split()[0])
@pytest.mark.parametrize("text", [b"NaN", b"[Infinity]", b"-Infinity", b"1e400", b"-1e400", b'{"qty":1E999}', b"[1.5e309]"])
def test_both_codecs_refuse_to_decode_nan_and_infinity(codec: Any, text: bytes) -> None:
    # json alone would read NaN and Infinity, and read 1e400 as inf; orjson refuses them all.
    with pytest.raises(ValueError):
        codec.loads(text)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name.split()[0])
def test_finite_edge_numbers_still_decode_alike(codec: Any) -> None:
    assert codec.loads(b"[1e308,-1e-400,0.5]") == [1e308, -0.0, 0.5]


@pytest.mark.parametrize("unchecked", [False, True])
def test_builders_refuse_nan_before_or_at_the_codec(unchecked: bool) -> None:
    # The checked builder's range rule refuses NaN first; the unchecked one trusts its caller, and
    # the codec underneath it still refuses to write the number rather than write null.
    fields = dict(SAMPLES["book.depth"], imbalance=float("nan"))
    with pytest.raises(NonFiniteNumber if unchecked else OrderRejected):
        build("book.depth", unchecked=unchecked, **fields)


@pytest.mark.parametrize("message", sorted(m for m in SPEC if not any(f.kind == "float" for f in SPEC[m].fields)))
def test_messages_without_a_float_field_admit_no_nan_so_may_skip_the_codecs_check(message: str) -> None:
    # Their builders encode with Codec.dumps_without_floats: sound only if no rule of theirs admits a float.
    for f in SPEC[message].fields:
        for value in NON_FINITE + [1.5]:
            fields = dict(SAMPLES[message], **{f.name: value})
            assert reason_of(build, message, **fields) is not None, (message, f.name, value)
    assert "_dumps" in builder_source(message)


@pytest.mark.parametrize("codec", CODECS, ids=lambda c: c.name.split()[0])
@pytest.mark.parametrize("field, text", [
    ("qty", b"1e400"), ("price", b"-1e999"), ("display_qty", b"NaN"), ("qty", b"Infinity"), ("price", b"1.0e400"),
])
def test_a_non_finite_number_is_one_bad_json_reject_and_leaves_the_book_as_it_was(
        codec: Any, field: str, text: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    from edumatcher import engine as engine_module
    from edumatcher.engine import Engine

    monkeypatch.setattr(engine_module, "_loads", codec.loads)
    engine = Engine(["XYZ"], clock=lambda: 7)
    for order_id, side, price in (("s1", "SELL", "10.50"), ("b1", "BUY", "10.40")):
        engine.handle(messages.make_order_new(order_id, "XYZ", side, "LIMIT", 5, "bob", price=price))
    book = engine.books["XYZ"]
    before = book.dump()
    good = messages.make_order_new("b2", "XYZ", "BUY", "LIMIT", 3, "amy", price="10.50", display_qty=1)
    field_value = {"qty": b"3", "price": b'"10.50"', "display_qty": b"1"}[field]
    bad = good.replace(b'"' + field.encode() + b'":' + field_value, b'"' + field.encode() + b'":' + text, 1)
    assert bad != good, "the test must have replaced the field"
    frames = engine.handle(bad)
    assert len(frames) == 1 and frames[0][0] == TOPIC_ORDER_REJECT, frames
    reply = json.loads(frames[0][1])
    assert reply["reason"] == RejectReason.BAD_JSON.value, reply
    assert book.dump() == before
    book.check_invariants()
    assert engine.handle(good)[0][0] == b"order.ack.amy"  # the same order, finite, is taken and trades


@needs_orjson
@given(st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False).map(lambda x: round(x, 4)).filter(lambda x: abs(x) < 1e15),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
))
@settings(max_examples=300, deadline=None)
def test_codecs_agree_on_values_like_ours(value: Any) -> None:
    # Strings of any kind, ints and the 4-place floats our one float field carries:
    # both encoders print them alike, and both decoders read each other's output.
    try:
        fast = ORJSON_CODEC.dumps(value)  # type: ignore[union-attr]
    except TypeError:  # orjson refuses lone surrogates; the engine never produces them
        return
    assert fast == STDLIB_CODEC.dumps(value)
    assert STDLIB_CODEC.loads(fast) == ORJSON_CODEC.loads(fast) == value  # type: ignore[union-attr]


# --------------------------------------------------------------------------- checked vs unchecked

@pytest.mark.parametrize("message", sorted(SPEC))
def test_checked_and_unchecked_builders_write_the_same_bytes(message: str) -> None:
    fields = SAMPLES[message]
    payload = build(message, **fields)
    assert payload == build(message, unchecked=True, **fields)
    decoded = messages.loads(payload)
    assert decoded["type"] == message
    explain(message, decoded)
    check(message, decoded)
    # Optional fields left at None are not written at all.
    assert all(name in decoded for name, value in fields.items() if value is not None)
    assert all(name not in decoded for name, value in fields.items() if value is None)


def test_int_where_a_float_belongs_gives_the_same_bytes() -> None:
    # The Python engine notes calls the coercion in its unchecked trade builder "a deliberate
    # pessimisation" (quoted): a cost accepted on purpose so that an int passed where a
    # float belongs prints the same bytes from both builders. Our float field is
    # book.depth's imbalance; without the coercion the unchecked builder would write 1, not 1.0.
    args = ("XYZ", 5, 0, 1, 7)
    checked, unchecked = messages.make_book_depth(*args), messages.make_book_depth_unchecked(*args)
    assert checked == unchecked
    assert b'"imbalance":1.0,' in unchecked
    assert messages.make_book_depth_unchecked("XYZ", 5, 0, 1.0, 7) == unchecked
    # And the rounding that keeps both codecs printing alike is done by both builders too.
    assert messages.make_book_depth("XYZ", 1, 99_999, -0.99998, 7) == messages.make_book_depth_unchecked("XYZ", 1, 99_999, -0.99998, 7)
    assert b'"imbalance":-1.0,' in messages.make_book_depth_unchecked("XYZ", 1, 99_999, -0.99998, 7)


def _strategy(f: Field) -> st.SearchStrategy[Any]:
    """Valid values of one field, read off the spec (so a new field is fuzzed without edits here)."""
    if f.kind == "str":
        chars = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Cf", "Co", "Cn", "Zs")) if f.printable else st.characters(blacklist_categories=("Cs",))
        return st.text(chars, min_size=1, max_size=f.max_len)
    if f.kind == "int":
        return st.integers(f.lo, f.hi)
    if f.kind == "float":
        return st.integers(int(f.lo), int(f.hi)) | st.floats(f.lo, f.hi)  # type: ignore[arg-type]
    if f.kind == "enum":
        return st.sampled_from(f.values)
    if f.kind == "price":
        return _price()
    if f.kind == "levels":
        return st.lists(st.tuples(_price(), st.integers(1, 10**6), st.integers(1, 10**9)).map(list), max_size=5)
    raise AssertionError(f"no strategy for field kind {f.kind!r}: add one")


def _price() -> st.SearchStrategy[Any]:
    return st.integers(0, 10**12) | st.decimals(0, 10**9, places=2, allow_nan=False, allow_infinity=False).map(str)


@st.composite
def _message(draw: Any) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from(sorted(SPEC)))
    fields = {}
    for f in SPEC[name].fields:
        if f.required or draw(st.booleans()):
            fields[f.name] = draw(_strategy(f))
    return name, fields


@given(_message())
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_builders_agree_on_every_valid_message(sample: tuple[str, dict[str, Any]]) -> None:
    name, fields = sample
    payload = build(name, **fields)
    assert payload == build(name, unchecked=True, **fields)
    decoded = messages.loads(payload)
    explain(name, decoded)
    check(name, decoded)


# --------------------------------------------------------------------------- every rule bites
#
# One test per *kind* of rule. RULE_KIND_TESTS classifies every kind the spec uses;
# test_every_rule_kind_has_a_rejection_test reads the kinds out of SPEC and fails when
# a new kind appears that nobody has written a test for.

def _refused(message: str, code: RejectReason, **changes: Any) -> None:
    """The checked builder and both dict checkers refuse the sample with ``changes``, naming ``code``."""
    fields = {**SAMPLES[message], **changes}
    assert reason_of(build, message, **fields) is code
    d = {"type": message, **{k: v for k, v in fields.items() if v is not None}}
    for k, v in changes.items():
        if v is None:
            d.pop(k, None)
    assert reason_of(explain, message, d) is code
    assert reason_of(check, message, d) is code


def test_rule_required() -> None:
    _refused("order.new", RejectReason.MISSING_FIELD, qty=None)
    _refused("order.cancel", RejectReason.MISSING_FIELD, owner=None)
    assert reason_of(explain, "order.new", {**messages.loads(build("order.new", **SAMPLES["order.new"])), "id": None}) is RejectReason.MISSING_FIELD


def test_rule_type() -> None:
    _refused("order.new", RejectReason.BAD_QTY, qty="10")
    _refused("order.new", RejectReason.BAD_QTY, qty=True)  # bool is an int subclass, not a quantity
    _refused("order.new", RejectReason.BAD_QTY, qty=10.0)
    _refused("order.new", RejectReason.BAD_FIELD, id=17)
    _refused("order.new", RejectReason.BAD_FIELD, owner=["ana"])
    _refused("order.new", RejectReason.BAD_PRICE, price=100.25)  # floats are not prices on this wire
    _refused("book.depth", RejectReason.BAD_FIELD, imbalance="0.5")
    _refused("order.ack", RejectReason.BAD_FIELD, ts=1.5)


def test_rule_non_empty() -> None:
    _refused("order.new", RejectReason.BAD_FIELD, id="")
    _refused("order.cancel_owner", RejectReason.BAD_FIELD, owner="")


def test_rule_printable() -> None:
    _refused("order.new", RejectReason.BAD_FIELD, owner="ana\n")
    _refused("order.new", RejectReason.BAD_FIELD, id="a\x00b")
    _refused("order.cancel", RejectReason.BAD_FIELD, symbol="X\u2028Y")


def test_rule_max_len() -> None:
    _refused("order.new", RejectReason.BAD_FIELD, id="x" * (messages.MAX_ID_LEN + 1))
    _refused("order.new", RejectReason.BAD_FIELD, owner="x" * (messages.MAX_OWNER_LEN + 1))
    _refused("order.new", RejectReason.BAD_PRICE, price="1" * (messages.MAX_PRICE_LEN + 1))
    _refused("order.reject", RejectReason.BAD_FIELD, text="x" * (messages.MAX_TEXT_LEN + 1))
    build("order.new", **{**SAMPLES["order.new"], "id": "x" * messages.MAX_ID_LEN})  # the bound itself is fine


def test_rule_range() -> None:
    _refused("order.new", RejectReason.BAD_QTY, qty=0)
    _refused("order.new", RejectReason.BAD_QTY, qty=-5)
    _refused("order.new", RejectReason.BAD_QTY, qty=10**9 + 1)
    _refused("order.new", RejectReason.BAD_DISPLAY_QTY, display_qty=0)
    _refused("book.snapshot.request", RejectReason.BAD_FIELD, levels=MAX_LEVELS + 1)
    _refused("book.depth", RejectReason.BAD_FIELD, imbalance=1.5)
    _refused("book.depth", RejectReason.BAD_FIELD, imbalance=float("nan"))
    _refused("order.ack", RejectReason.BAD_FIELD, ts=-1)


def test_rule_enum() -> None:
    _refused("order.new", RejectReason.UNKNOWN_ENUM, side="HOLD")
    _refused("order.new", RejectReason.UNKNOWN_ENUM, side="buy")
    _refused("order.new", RejectReason.UNKNOWN_ENUM, tif=["GTC"])
    _refused("order.new", RejectReason.UNKNOWN_ENUM, smp=1)
    _refused("order.reject", RejectReason.UNKNOWN_ENUM, reason="NOPE")


def test_rule_decimal() -> None:
    for bad in ("-1.00", "1e3", " 100", "100.", ".5", "1,5", "0x10", "１００"):
        _refused("order.new", RejectReason.BAD_PRICE, price=bad)
    for good in ("100", "100.25", "0.5", "007"):
        build("order.new", **{**SAMPLES["order.new"], "price": good})


def test_rule_levels() -> None:
    for bad in ([["1.00", 0, 5]], [["1.00", 1]], [[1.5, 1, 1]], ["1.00"], [["1.00", 1, 1]] * (MAX_LEVELS + 1), "[]"):
        _refused("book.snapshot", RejectReason.BAD_FIELD, bids=bad)


def test_rule_known_fields() -> None:
    d = messages.loads(build("order.new", **SAMPLES["order.new"]))
    d["dispaly_qty"] = 5  # a typo must not silently turn an iceberg into a fully visible order
    assert reason_of(explain, "order.new", d) is RejectReason.BAD_FIELD
    assert reason_of(check, "order.new", d) is RejectReason.BAD_FIELD


def test_rule_coerce_float() -> None:
    # Not a refusal: a coercion both builders apply (see the int-where-a-float-belongs test).
    assert messages.loads(messages.make_book_depth("XYZ", 1, 1, 0, 1))["imbalance"] == 0.0
    assert type(messages.loads(messages.make_book_depth_unchecked("XYZ", 1, 1, 0, 1))["imbalance"]) is float
    assert messages.make_book_depth("XYZ", 1, 2, 1 / 3, 1) == messages.make_book_depth_unchecked("XYZ", 1, 2, 0.33333333, 1)


RULE_KIND_TESTS = {
    "required": test_rule_required,
    "type": test_rule_type,
    "non_empty": test_rule_non_empty,
    "printable": test_rule_printable,
    "max_len": test_rule_max_len,
    "range": test_rule_range,
    "enum": test_rule_enum,
    "decimal": test_rule_decimal,
    "levels": test_rule_levels,
    "known_fields": test_rule_known_fields,
    "coerce_float": test_rule_coerce_float,
}


def test_every_rule_kind_has_a_rejection_test() -> None:
    kinds = {rule.kind for m in SPEC.values() for _, rule in m.rules()}
    unclassified = kinds - set(RULE_KIND_TESTS)
    assert not unclassified, f"new kind(s) of rule {sorted(unclassified)}: write a test that shows each refusing bad input"
    assert not set(RULE_KIND_TESTS) - kinds, "a rule kind left the spec: drop its entry here"


# --------------------------------------------------------------------------- the shortcut, pinned
#
# The engine builds every outbound message with the *unchecked* builder: it is the
# authority on its own output. The Python engine notes' advice (§4.3, in our words): when a shortcut
# rests on "something else already guarantees this", a test must say what that something
# is, rule by rule, and must fail the day a rule appears that nobody has accounted for.
# ENGINE_GUARANTEES is that account; test_engine.py also decodes every frame the engine
# writes in its scenarios and fuzz runs and puts it through the full checks.

_BOOK = "the book's own value, and the book refuses orders that break it (rules.validate_new_order)"
_IDS = "copied from an order the spec check accepted on the way in"
_TS = "the engine clock's int nanoseconds (time.monotonic_ns: non-negative, far below 2**63)"
_QTY = "a quantity kept by the book: between 0 and the order's qty <= MAX_QTY"
_WIRE = "Engine.wire_price: an int tick count >= 1 formatted as digits, a point and `decimals` digits"
_ENUM = "a member of the model enum the spec lists, set by the book or the engine"
_KNOWN = "the builder writes exactly the spec's fields"
_PRESENT = "the builder's positional parameters: the engine passes every required one"

ENGINE_GUARANTEES: dict[tuple[str, str, str], str] = {}


def _account(message: str, field: str, kinds: tuple[str, ...], why: str) -> None:
    for kind in kinds:
        ENGINE_GUARANTEES[(message, field, kind)] = why


for _m in OUTBOUND:
    _account(_m, "*", ("known_fields",), _KNOWN)
for _m in ("order.ack", "order.cancelled", "order.triggered"):
    _account(_m, "id", ("required", "type", "non_empty", "printable", "max_len"), _IDS)
    _account(_m, "symbol", ("required", "type", "non_empty", "printable", "max_len"), "a key of Engine.books, checked when the engine was built")
    _account(_m, "owner", ("required", "type", "non_empty", "printable", "max_len"), _IDS)
    _account(_m, "ts", ("required", "type", "range"), _TS)
_account("order.ack", "status", ("required", "type", "enum"), _ENUM)
_account("order.ack", "filled_qty", ("required", "type", "range"), _QTY)
_account("order.ack", "remaining_qty", ("required", "type", "range"), _QTY)
_account("order.cancelled", "cancelled_qty", ("required", "type", "range"), _QTY)
_account("order.cancelled", "filled_qty", ("required", "type", "range"), _QTY)
_account("order.cancelled", "reason", ("required", "type", "enum"), "the book sets a CancelReason member on every order it cancels")
_account("order.triggered", "order_type", ("required", "type", "enum"), _ENUM)
_account("order.triggered", "arrival_seq", ("required", "type", "range"), "the book's sequence counter: starts at 1, counts up")
_account("order.reject", "reason", ("required", "type", "enum"), "always a RejectReason member")
_account("order.reject", "text", ("required", "type", "non_empty", "max_len"),
         "a non-empty message cut to MAX_TEXT_LEN (Engine._reject falls back to the code's name)")
_account("order.reject", "ts", ("required", "type", "range"), _TS)
_account("order.reject", "id", ("type", "non_empty", "printable", "max_len"),
         "echoed only after passing the same rules (engine._echo), else left out")
_account("order.reject", "owner", ("type", "non_empty", "printable", "max_len"),
         "echoed only after passing the same rules (engine._echo), else left out")
_account("trade.executed", "symbol", ("required", "type", "non_empty", "printable", "max_len"), "the book's symbol, a key of Engine.books")
_account("trade.executed", "seq", ("required", "type", "range"), "the book's trade counter, from 1")
_account("trade.executed", "price", ("required", "type", "max_len", "decimal"), _WIRE)
_account("trade.executed", "qty", ("required", "type", "range"), "a fill: at least 1, at most the smaller order's qty <= MAX_QTY")
for _f in ("buy_order_id", "sell_order_id", "buy_owner", "sell_owner"):
    _account("trade.executed", _f, ("required", "type", "non_empty", "printable", "max_len"), _IDS)
_account("trade.executed", "aggressor_side", ("required", "type", "enum"), _ENUM)
_account("trade.executed", "ts", ("required", "type", "range"), _TS)
for _m in ("book.snapshot", "book.depth"):
    _account(_m, "symbol", ("required", "type", "non_empty", "printable", "max_len"), "a key of Engine.books")
    _account(_m, "ts", ("required", "type", "range"), _TS)
_account("book.snapshot", "bids", ("required", "type", "levels"), "book.depth(levels) with levels <= MAX_LEVELS, prices via Engine.wire_price; a level holds >= 1 order and qty")
_account("book.snapshot", "asks", ("required", "type", "levels"), "as bids")
_account("book.snapshot", "orders", ("required", "type", "range"), "len(book)")
_account("book.snapshot", "last_price", ("type", "max_len", "decimal"), _WIRE)
_account("book.depth", "bid_qty", ("required", "type", "range"), "displayed quantity at the best level, or 0")
_account("book.depth", "ask_qty", ("required", "type", "range"), "displayed quantity at the best level, or 0")
_account("book.depth", "imbalance", ("required", "type", "coerce_float", "range"),
         "(b - a) / (b + a) of two non-negative ints, or 0.0: within [-1, 1]; coerced by the builder itself")
_account("book.depth", "best_bid", ("type", "max_len", "decimal"), _WIRE)
_account("book.depth", "best_ask", ("type", "max_len", "decimal"), _WIRE)


def test_every_rule_the_engine_skips_is_accounted_for() -> None:
    rules = {(name, field, rule.kind) for name in OUTBOUND for field, rule in SPEC[name].rules()}
    missing = sorted(rules - set(ENGINE_GUARANTEES))
    assert not missing, (
        "the spec gained rule(s) the engine's unchecked builders skip; say in ENGINE_GUARANTEES why the "
        f"engine already satisfies each, or make it check them: {missing}"
    )
    stale = sorted(set(ENGINE_GUARANTEES) - rules)
    assert not stale, f"ENGINE_GUARANTEES accounts for rules that are no longer in the spec: {stale}"


# --------------------------------------------------------------------------- check_x and explain_x agree

@st.composite
def _mutated_dict(draw: Any) -> tuple[str, dict[str, Any]]:
    name, fields = draw(_message())
    d: dict[str, Any] = {"type": name, **messages.loads(build(name, **fields))}
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=False) | st.text(max_size=70),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
        max_leaves=5,
    )
    for _ in range(draw(st.integers(0, 3))):
        action = draw(st.sampled_from(["drop", "set", "add", "null"]))
        keys = sorted(d)
        if not keys:
            action = "add"
        if action == "drop":
            d.pop(draw(st.sampled_from(keys)))
        elif action == "set":
            d[draw(st.sampled_from(keys))] = draw(json_values)
        elif action == "null":
            d[draw(st.sampled_from(keys))] = None
        else:
            d[draw(st.text(max_size=12))] = draw(json_values)
    return name, d


@given(_mutated_dict())
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_fast_check_and_explain_give_the_same_verdict(sample: tuple[str, dict[str, Any]]) -> None:
    name, d = sample
    assert reason_of(check, name, d) is reason_of(explain, name, d)


def test_fast_check_falls_back_for_a_price_seen_for_the_first_time() -> None:
    fresh = "123456.789"
    messages._GOOD_PRICES.discard(fresh)
    d = {"type": "order.cancel_owner", "owner": "ana"}
    check("order.cancel_owner", d)
    order = messages.loads(build("order.new", **{**SAMPLES["order.new"], "price": fresh}))
    messages._GOOD_PRICES.discard(fresh)
    check("order.new", order)  # slow path accepts it and remembers it
    assert fresh in messages._GOOD_PRICES
    check("order.new", order)


def test_any_type_is_checked_by_builders_check() -> None:
    messages.builders.check({"type": "order.cancel_owner", "owner": "ana"})
    assert reason_of(messages.builders.check, {"type": "order.nope"}) is RejectReason.UNKNOWN_TYPE
    assert reason_of(messages.builders.check, {"type": ["order.new"]}) is RejectReason.UNKNOWN_TYPE


# --------------------------------------------------------------------------- reading the generated code

def test_generated_source_is_readable_and_matches_the_functions() -> None:
    source = builder_source("trade.executed")
    for fn in ("def make_trade_executed(", "def make_trade_executed_unchecked(", "def check_trade_executed(", "def explain_trade_executed("):
        assert fn in source
    # Registered with linecache, so inspect (and tracebacks) can show the generated lines.
    assert inspect.getsource(messages.make_trade_executed_unchecked).startswith("def make_trade_executed_unchecked(")
    # The unchecked builder of a message with no float field is one dict literal and an encode.
    body = inspect.getsource(messages.make_trade_executed_unchecked).splitlines()
    encode = "return _join((_dumps({" if messages.RIGHT_SIZED else "return _dumps({"
    assert len(body) == 3 and body[2].strip().startswith(encode)


# --------------------------------------------------------------------------- payloads hold only their own bytes

def _trade(b: Any) -> bytes:
    return b.make_trade_executed_unchecked("XYZ", 1, "100.25", 3, "b" * 20, "s" * 20, "amy", "bob", "BUY", 7)


def test_right_sizing_is_decided_by_measuring_the_codec() -> None:
    # The stdlib's bytes come from str.encode at their own size: no copy needed, none made.
    assert overallocates(STDLIB_CODEC.dumps) is False
    assert build_builders(STDLIB_CODEC).right_size is False
    assert "_join" not in build_builders(STDLIB_CODEC).sources["trade.executed"]
    if ORJSON_CODEC is not None:
        # Measured, not assumed from a version: whatever this orjson does, the builders follow it.
        assert build_builders(ORJSON_CODEC).right_size is overallocates(ORJSON_CODEC.dumps)


@pytest.mark.skipif(ORJSON_CODEC is None, reason="orjson is not installed")
def test_right_sized_payloads_keep_only_their_own_bytes_and_are_the_same_bytes() -> None:
    raw, trimmed = build_builders(ORJSON_CODEC, right_size=False), build_builders(ORJSON_CODEC, right_size=True)  # type: ignore[arg-type]
    payload, traced = traced_size(lambda: _trade(trimmed))
    assert payload == _trade(raw) == _trade(build_builders(STDLIB_CODEC))
    # tracemalloc sees exactly what sys.getsizeof reports (pymalloc rounds to 8 bytes at most).
    assert traced <= sys.getsizeof(payload) + 8, (traced, sys.getsizeof(payload))
    raw_payload, raw_traced = traced_size(lambda: _trade(raw))
    print(f"\n{ORJSON_CODEC.name}: a {len(payload)}-byte trade frame holds {raw_traced:,} B as orjson returns it, "  # type: ignore[union-attr]
          f"{traced:,} B right-sized (sys.getsizeof says {sys.getsizeof(raw_payload)} for both)")
    if overallocates(ORJSON_CODEC.dumps):  # type: ignore[union-attr]
        assert raw_traced > 2 * sys.getsizeof(raw_payload)


def test_builder_names() -> None:
    assert builder_name("book.snapshot.request") == "make_book_snapshot_request"
    assert builder_name("order.new", "_unchecked") == "make_order_new_unchecked"
    assert callable(messages.make_book_snapshot_request_unchecked)


def test_show_value_is_short_and_safe_for_deep_nesting() -> None:
    deep: Any = []
    for _ in range(5000):
        deep = [deep]
    assert messages.show_value(deep) == "a list of 1"
    assert len(messages.show_value("y" * 10_000)) <= 40
    assert messages.show_value(Decimal("1.5")) == "a Decimal"


# --------------------------------------------------------------------------- topics

def test_static_topics_are_bytes_built_once() -> None:
    assert TOPIC_TRADE_EXECUTED == b"trade.executed" and static_topic("trade.executed") is TOPIC_TRADE_EXECUTED
    assert TOPIC_ORDER_REJECT == b"order.reject"
    with pytest.raises(KeyError):
        static_topic("nope")


def test_topic_cache_builds_each_topic_once_and_stays_bounded() -> None:
    acks = TopicCache(b"order.ack.", limit=2)
    first = acks["zoë"]
    assert first == "order.ack.zoë".encode() and acks["zoë"] is first
    acks["b"]
    assert len(acks) == 2
    assert acks["c"] == b"order.ack.c" and len(acks) == 2  # past the limit: built, not kept


def test_spec_is_one_table_with_a_type_per_message() -> None:
    for name, m in SPEC.items():
        assert m.name == name and m.direction in ("in", "out") and m.topic in ("static", "owner", "symbol")
        names = [f.name for f in m.fields]
        assert len(names) == len(set(names)) and "type" not in names
        payload = build(name, **SAMPLES[name])
        assert json.loads(payload)["type"] == name
