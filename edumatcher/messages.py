"""The wire: one message spec, the JSON codec, generated builders and cached topics.

Every message is a JSON object with a ``type`` field. Its other fields, their
types and their rules are written once, in ``SPEC``. At import this module reads
the table and generates, for every message type ``x.y``:

* ``make_x_y(...)``: checks every rule of every field, then encodes;
* ``make_x_y_unchecked(...)``: trusts its caller and only encodes;
* ``check_x_y(d)``: checks a decoded dict against the same rules (the engine's
  gate for inbound messages): a fast pass over the common case, which hands any
  doubtful dict to ``explain_x_y(d)``, the rule-by-rule check that names the
  first broken rule.

Both builders take the fields as arguments (required ones first, in spec order,
then optional ones defaulting to None) and return the encoded payload ``bytes``;
an optional field left at None is not written. For valid input they return
identical bytes: the unchecked one is only allowed to skip checks, never to
write something different (``tests/test_messages.py`` pins it).

Prices cross the wire as decimal strings (``"100.25"``) or, inbound, as ints of
currency (``100`` means 100.00); never as JSON floats, whose binary value is not
the number the sender typed. The engine converts them to ticks at its edge.

JSON has no NaN or Infinity, and the two codecs would not agree about them (orjson
writes ``null``, json writes ``NaN``); both codecs here refuse them both ways with
``NonFiniteNumber``, so a refused payload is a ``BAD_JSON`` reject whichever is in use.

A failed rule raises ``OrderRejected`` whose ``code`` is the wire reason code.

>>> make_order_cancel("o-1", "XYZ", "alice")
b'{"type":"order.cancel","id":"o-1","symbol":"XYZ","owner":"alice"}'
>>> make_book_depth("XYZ", 0, 0, 1, 1_000)      # an int where a float belongs...
b'{"type":"book.depth","symbol":"XYZ","bid_qty":0,"ask_qty":0,"imbalance":1.0,"ts":1000}'
>>> make_book_depth_unchecked("XYZ", 0, 0, 1, 1_000)   # ...is coerced by both builders
b'{"type":"book.depth","symbol":"XYZ","bid_qty":0,"ask_qty":0,"imbalance":1.0,"ts":1000}'
"""

from __future__ import annotations

import json
import linecache
import math
import re
import sys
import tracemalloc
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple

from .model import TIF, CancelReason, OrderRejected, OrderStatus, OrderType, RejectReason, SelfMatch, Side
from .rules import MAX_QTY

__all__ = [
    "Codec", "NonFiniteNumber", "ORJSON_CODEC", "STDLIB_CODEC", "CODEC", "dumps", "loads",
    "Field", "Rule", "MessageSpec", "SPEC", "INBOUND", "OUTBOUND",
    "MAX_ID_LEN", "MAX_OWNER_LEN", "MAX_SYMBOL_LEN", "MAX_TEXT_LEN", "MAX_PRICE_LEN", "MAX_LEVELS", "MAX_TS",
    "DECIMAL_RE",
    "Builders", "build_builders", "builder_name", "builder_source", "builders",
    "traced_size", "overallocates", "RIGHT_SIZED",
    "static_topic", "TopicCache", "TOPIC_TRADE_EXECUTED", "TOPIC_ORDER_REJECT",
    "show_value",
]


# --------------------------------------------------------------------------- codec

class Codec(NamedTuple):
    """A JSON codec: ``dumps(obj) -> bytes`` and ``loads(bytes) -> obj``, plus its name.

    Both refuse NaN and ±Infinity (``NonFiniteNumber``). ``dumps_without_floats`` is
    ``dumps`` minus that check, for values that hold no float at all: the builders of
    messages whose spec has no float field use it (their rules admit no float, so
    the check could never fire there); None when ``dumps`` has no separate check.
    """

    name: str
    dumps: Callable[[Any], bytes]
    loads: Callable[[bytes | str], Any]
    dumps_without_floats: Callable[[Any], bytes] | None = None


class NonFiniteNumber(ValueError):
    """NaN, Infinity or -Infinity met by a codec. JSON has no such numbers, and both codecs refuse them.

    Left alone, the two codecs would not agree: ``json.dumps`` writes ``NaN`` (not
    JSON) and ``json.loads`` reads it back, and reads ``1e400`` as ``inf``;
    ``orjson.dumps`` writes ``null`` in their place, silently, while ``orjson.loads``
    refuses all of them. Here both refuse both ways: encoding raises this error, and
    decoding raises this error (stdlib) or ``orjson.JSONDecodeError`` (a ``ValueError``
    too, so the engine answers either with one ``BAD_JSON`` reject).
    """


def _refuse_constant(name: str) -> Any:
    # json's decoder accepts NaN, Infinity and -Infinity, which are not JSON; orjson refuses them.
    raise NonFiniteNumber(f"{name} is not valid JSON: JSON has no NaN or Infinity")


def _finite_float(text: str) -> float:
    # json reads a number too large for a double (1e400) as inf; orjson refuses it, and so do we.
    value = float(text)
    if not math.isfinite(value):
        raise NonFiniteNumber(f"the number {text[:40]} is out of a double's range (it would read as {value})")
    return value


def _non_finite_in(obj: Any) -> float | None:
    """The first NaN or infinite float inside ``obj`` (a JSON-like tree), or None. O(size of obj)."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else obj
    if isinstance(obj, dict):
        obj = obj.values()
    elif not isinstance(obj, (list, tuple)):
        return None
    for item in obj:
        found = _non_finite_in(item)
        if found is not None:
            return found
    return None


def _refuse_non_finite(found: float) -> NonFiniteNumber:
    return NonFiniteNumber(f"{found!r} cannot be written as JSON: JSON has no NaN or Infinity")


_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what orjson reads as an int: i64 and u64


def _int_as_orjson_reads_it(text: str) -> int | float:
    # orjson reads an integer outside [-2**63, 2**64 - 1] as a double, and refuses one too large
    # even for that; json made any length of digits an int (3,900 of them: BAD_QTY here,
    # BAD_JSON with orjson, issue 26). Reading it as orjson does makes the codecs agree.
    if len(text) <= 21:  # longer is out of range anyway: no int() of thousands of digits
        value = int(text)
        if _INT_MIN <= value <= _INT_MAX:
            return value
    return _finite_float(text)


_std_encoder = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)
_std_decoder = json.JSONDecoder(parse_constant=_refuse_constant, parse_float=_finite_float,
                                parse_int=_int_as_orjson_reads_it)


def _std_dumps(obj: Any) -> bytes:
    try:
        return _std_encoder.encode(obj).encode("utf-8")
    except ValueError:  # allow_nan=False refused a float; name it as the orjson side does
        found = _non_finite_in(obj)
        if found is None:
            raise  # another ValueError (a circular reference): not ours to rename
        raise _refuse_non_finite(found) from None


def _std_loads(data: bytes | str) -> Any:
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data).decode("utf-8")  # UnicodeDecodeError is a ValueError, like a JSON error
    return _std_decoder.decode(data)


STDLIB_CODEC = Codec("json (stdlib)", _std_dumps, _std_loads)
"""The fallback: compact separators, UTF-8 output, NaN and ±Infinity refused both ways (``NonFiniteNumber``),
integers read as orjson reads them (beyond 64 bits as a double, or refused if that is infinite)."""

try:
    import orjson as _orjson
except ImportError:  # pragma: no cover - orjson is a dependency; this keeps minimal installs working
    ORJSON_CODEC: Codec | None = None
else:
    _orjson_dumps_raw = _orjson.dumps

    def _orjson_dumps(obj: Any) -> bytes:
        data = _orjson_dumps_raw(obj)
        # orjson writes NaN and ±Infinity as null instead of refusing them. A null in the
        # output is rare on our wire (the builders never write one), so only then is the
        # object walked to tell a real None from a number that was not finite. The scan is
        # not free next to orjson's own speed (chapter 06 times it), which is why builders
        # of messages without a float field skip it (Codec.dumps_without_floats).
        if b"null" in data:
            found = _non_finite_in(obj)
            if found is not None:
                raise _refuse_non_finite(found)
        return data

    ORJSON_CODEC = Codec(f"orjson {_orjson.__version__}", _orjson_dumps, _orjson.loads, _orjson_dumps_raw)
    """orjson: returns bytes directly, several times faster than the stdlib both ways; NaN and ±Infinity refused."""

CODEC: Codec = ORJSON_CODEC or STDLIB_CODEC
"""The codec this process uses: orjson when importable, else the stdlib."""
dumps = CODEC.dumps
loads = CODEC.loads


def traced_size(make: Callable[[], object]) -> tuple[object, int]:
    """Call ``make()`` and return its result with the bytes ``tracemalloc`` saw it keep allocated.

    Unlike ``sys.getsizeof``, which reports what an object says it uses, this is
    what the allocator handed out and has not had back: for a ``bytes`` from
    orjson 3.13 it includes the unused tail of the write buffer. Starts and stops
    ``tracemalloc`` itself unless it is already tracing. Single-threaded use only:
    another thread's allocations meanwhile would be counted.

    >>> data, size = traced_size(lambda: bytes(200))
    >>> size >= sys.getsizeof(data) - 8
    True
    """
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = make()
        size = tracemalloc.get_traced_memory()[0] - before
    finally:
        if not was_tracing:
            tracemalloc.stop()
    return result, size


def overallocates(dumps: Callable[[Any], bytes]) -> bool:
    """True if ``dumps`` returns ``bytes`` keeping more than twice their own size allocated (measured once).

    The probe is one ~180-byte object, about a trade frame's size; the answer
    decides whether the builders right-size what they return (``Builders``).
    """
    probe = {"probe": "x" * 150, "n": 1}
    data, size = traced_size(lambda: dumps(probe))
    return size > 2 * sys.getsizeof(data)


# --------------------------------------------------------------------------- the spec

MAX_ID_LEN = 64
"""Longest order id: a hex uuid is 32, so there is room for a client's own prefix."""
MAX_OWNER_LEN = 32
"""Longest owner name; an owner also becomes part of a topic (``order.ack.<owner>``)."""
MAX_SYMBOL_LEN = 16
"""Longest symbol."""
MAX_TEXT_LEN = 200
"""Longest reject text: enough to say what was wrong, short enough to log."""
MAX_PRICE_LEN = 32
"""Longest accepted decimal-string price; bounds the cost of parsing one."""
MAX_LEVELS = 1000
"""Most price levels a snapshot may carry per side."""
MAX_TS = 2**63 - 1
"""Timestamps are non-negative nanoseconds that fit a signed 64-bit int (orjson's limit too)."""

DECIMAL_RE = re.compile(r"[0-9]{1,20}(?:\.[0-9]{1,12})?")
"""A price string: digits, optionally a point and more digits. No sign, exponent or spaces."""


class Rule(NamedTuple):
    """One rule of one field, as read out of the spec: ``kind`` and its parameter."""

    kind: str
    param: Any = None


@dataclass(frozen=True)
class Field:
    """One field of a message and its rules.

    ``kind`` is one of ``str``, ``int``, ``float``, ``enum``, ``price``, ``levels``.
    ``reason`` is the reject code when a type, length or range rule fails
    (missing -> MISSING_FIELD and enum -> UNKNOWN_ENUM are fixed).
    ``recurs`` is a hint, not a rule: the field's values recur from message to
    message (a few symbols, a few hundred owners), so the engine's fast check
    remembers the valid ones and tests membership instead of re-checking them.
    """

    name: str
    kind: str
    required: bool = True
    max_len: int | None = None
    printable: bool = True
    lo: int | float | None = None
    hi: int | float | None = None
    values: tuple[str, ...] = ()
    ndigits: int | None = None
    reason: RejectReason = RejectReason.BAD_FIELD
    recurs: bool = False

    def rules(self) -> tuple[Rule, ...]:
        """Return this field's rules in the order they are checked."""
        out = [Rule("required")] if self.required else []
        out.append(Rule("type", self.kind))
        if self.kind == "float":
            out.append(Rule("coerce_float", self.ndigits))
        if self.kind == "str":
            out.append(Rule("non_empty"))
            if self.printable:
                out.append(Rule("printable"))
        if self.max_len is not None:
            out.append(Rule("max_len", self.max_len))
        if self.kind == "price":
            out.append(Rule("decimal", DECIMAL_RE.pattern))
        if self.lo is not None:
            out.append(Rule("range", (self.lo, self.hi)))
        if self.kind == "enum":
            out.append(Rule("enum", self.values))
        if self.kind == "levels":
            out.append(Rule("levels", MAX_LEVELS))
        return tuple(out)


@dataclass(frozen=True)
class MessageSpec:
    """One message type: its direction (``in`` to the engine, ``out`` from it), topic scheme and fields.

    ``topic`` is ``static`` (the type name itself), ``owner`` (``<type>.<owner>``,
    private to one owner) or ``symbol`` (``<type>.<symbol>``).
    """

    name: str
    direction: str
    topic: str
    fields: tuple[Field, ...]

    def rules(self) -> Iterator[tuple[str, Rule]]:
        """Yield ``(field name, rule)`` for every rule, message-level ones under field ``*``."""
        yield "*", Rule("known_fields", tuple(f.name for f in self.fields))
        for f in self.fields:
            for rule in f.rules():
                yield f.name, rule


def _str(name: str, max_len: int, *, required: bool = True, printable: bool = True, recurs: bool = False) -> Field:
    return Field(name, "str", required, max_len=max_len, printable=printable, recurs=recurs)


def _int(name: str, lo: int, hi: int, *, required: bool = True, reason: RejectReason = RejectReason.BAD_FIELD) -> Field:
    return Field(name, "int", required, lo=lo, hi=hi, reason=reason)


def _enum(name: str, enum: type[Enum], *, required: bool = True) -> Field:
    return Field(name, "enum", required, values=tuple(m.value for m in enum), reason=RejectReason.UNKNOWN_ENUM)


def _price(name: str, *, required: bool = True) -> Field:
    return Field(name, "price", required, max_len=MAX_PRICE_LEN, reason=RejectReason.BAD_PRICE)


def _ts() -> Field:
    return _int("ts", 0, MAX_TS)


_ID = _str("id", MAX_ID_LEN)
_SYMBOL = _str("symbol", MAX_SYMBOL_LEN, recurs=True)
_OWNER = _str("owner", MAX_OWNER_LEN, recurs=True)
_QTY_OUT = _int("qty", 1, MAX_QTY)
_COUNT = _int("filled_qty", 0, MAX_QTY)

# THE spec: message type -> fields and rules. Everything else in this module is generated from it.
SPEC: dict[str, MessageSpec] = {m.name: m for m in (
    # ---- inbound: what clients send to the engine
    MessageSpec("order.new", "in", "static", (
        _ID, _SYMBOL,
        _enum("side", Side),
        _enum("order_type", OrderType),
        _int("qty", 1, MAX_QTY, reason=RejectReason.BAD_QTY),
        _OWNER,
        _enum("tif", TIF, required=False),
        _price("price", required=False),
        _price("stop_price", required=False),
        _int("display_qty", 1, MAX_QTY, required=False, reason=RejectReason.BAD_DISPLAY_QTY),
        _enum("smp", SelfMatch, required=False),
    )),
    MessageSpec("order.cancel", "in", "static", (_ID, _SYMBOL, _OWNER)),
    MessageSpec("order.cancel_owner", "in", "static", (_OWNER, _str("symbol", MAX_SYMBOL_LEN, required=False, recurs=True))),
    MessageSpec("book.snapshot.request", "in", "static", (
        _SYMBOL, _OWNER, _int("levels", 1, MAX_LEVELS, required=False),
    )),
    # ---- outbound: what the engine publishes
    MessageSpec("order.ack", "out", "owner", (
        _ID, _SYMBOL, _OWNER,
        _enum("status", OrderStatus),
        _int("filled_qty", 0, MAX_QTY),
        _int("remaining_qty", 0, MAX_QTY),
        _ts(),
    )),
    MessageSpec("order.reject", "out", "owner", (
        _enum("reason", RejectReason),
        _str("text", MAX_TEXT_LEN, printable=False),
        _ts(),
        _str("id", MAX_ID_LEN, required=False),
        _str("owner", MAX_OWNER_LEN, required=False),
    )),
    MessageSpec("order.cancelled", "out", "owner", (
        _ID, _SYMBOL, _OWNER,
        _int("cancelled_qty", 0, MAX_QTY),
        _COUNT,
        # Why (issue 26): a client tells an IOC remainder from a self-match cancel, a killed
        # FOK, its own cancel or a mass cancel (``model.CancelReason``, rules.py "Cancels").
        _enum("reason", CancelReason),
        _ts(),
    )),
    MessageSpec("trade.executed", "out", "static", (
        _SYMBOL,
        _int("seq", 1, MAX_TS),
        _price("price"),
        _QTY_OUT,
        _str("buy_order_id", MAX_ID_LEN),
        _str("sell_order_id", MAX_ID_LEN),
        _str("buy_owner", MAX_OWNER_LEN),
        _str("sell_owner", MAX_OWNER_LEN),
        _enum("aggressor_side", Side),
        _ts(),
    )),
    MessageSpec("order.triggered", "out", "owner", (
        _ID, _SYMBOL, _OWNER,
        _enum("order_type", OrderType),
        _int("arrival_seq", 1, MAX_TS),
        _ts(),
    )),
    MessageSpec("book.snapshot", "out", "symbol", (
        _SYMBOL,
        Field("bids", "levels"),
        Field("asks", "levels"),
        _int("orders", 0, MAX_TS),
        _ts(),
        _price("last_price", required=False),
    )),
    MessageSpec("book.depth", "out", "symbol", (
        _SYMBOL,
        _int("bid_qty", 0, MAX_TS),
        _int("ask_qty", 0, MAX_TS),
        # The one float on the wire: a display figure, not money. Rounded to 4 places by
        # both builders so the two codecs print it alike (they differ on 1e-05 vs 0.00001).
        Field("imbalance", "float", lo=-1.0, hi=1.0, ndigits=4),
        _ts(),
        _price("best_bid", required=False),
        _price("best_ask", required=False),
    )),
)}

INBOUND = tuple(name for name, m in SPEC.items() if m.direction == "in")
"""Message types the engine accepts."""
OUTBOUND = tuple(name for name, m in SPEC.items() if m.direction == "out")
"""Message types the engine publishes."""


# --------------------------------------------------------------------------- checks used by generated code

def show_value(value: Any) -> str:
    """Describe a bad value briefly and safely for a reject text.

    Scalars are shown by ``repr`` (long ones cut); containers only by type and
    size, because ``repr`` of a deeply nested list can exceed the recursion limit.

    >>> show_value("abc"), show_value([[1]]), show_value("x" * 50)
    ("'abc'", 'a list of 1', "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...")
    """
    if value is None or isinstance(value, (str, int, float)):
        text = repr(value)
        return text if len(text) <= 40 else text[:37] + "..."
    try:
        return f"a {type(value).__name__} of {len(value)}"
    except TypeError:
        return f"a {type(value).__name__}"


def _fail(code: RejectReason, field: str, want: str, value: Any) -> OrderRejected:
    return OrderRejected(code, f"{field} must be {want}, not {show_value(value)}")


def _missing(field: str) -> OrderRejected:
    return OrderRejected(RejectReason.MISSING_FIELD, f"field {field!r} is required")


def _unknown_fields(d: dict[str, Any], known: frozenset[str]) -> OrderRejected:
    extra = sorted(k for k in d if k not in known)
    return OrderRejected(RejectReason.BAD_FIELD, f"unknown field(s) {', '.join(map(show_value, extra[:5]))}")


_REMEMBER_LIMIT = 65_536
"""Most values a remembered-valid set keeps before it is emptied (a flood of new values costs re-checks, not memory)."""

_GOOD_PRICES: set[str] = set()
"""Price strings already found valid: the fast checks test membership instead of the pattern."""


def _price_ok(value: Any) -> bool:
    # A wire price: a decimal string of bounded length, or an int (bool excluded).
    tp = type(value)
    if tp is str:
        if value in _GOOD_PRICES:
            return True
        if len(value) <= MAX_PRICE_LEN and DECIMAL_RE.fullmatch(value) is not None:
            if len(_GOOD_PRICES) >= _REMEMBER_LIMIT:
                _GOOD_PRICES.clear()
            _GOOD_PRICES.add(value)
            return True
        return False
    return tp is int


def _levels_ok(value: Any) -> bool:
    # Depth levels: a list of at most MAX_LEVELS [price, order_count >= 1, qty >= 1] triples.
    if type(value) not in (list, tuple) or len(value) > MAX_LEVELS:
        return False
    for level in value:
        if type(level) not in (list, tuple) or len(level) != 3:
            return False
        price, count, qty = level
        if not _price_ok(price) or type(count) is not int or type(qty) is not int:
            return False
        if not (1 <= count <= MAX_TS and 1 <= qty <= MAX_TS):
            return False
    return True


# --------------------------------------------------------------------------- code generation

def builder_name(message: str, suffix: str = "") -> str:
    """``"order.new"`` -> ``"make_order_new"`` (``suffix="_unchecked"`` for the trusting one)."""
    return "make_" + message.replace(".", "_") + suffix


def _check_lines(f: Field, var: str, idx: int) -> list[str]:
    """Source lines checking ``var`` against field ``f``'s rules (value known to be not None).

    Field metadata is referenced as ``F{idx}`` in the generated namespace.
    """
    name, reason = f.name, f"F{idx}.reason"
    fail = f"raise _fail({reason}, {name!r}, {{want!r}}, {var})"
    lines: list[str] = []
    if f.kind == "str":
        want = f"a non-empty string of at most {f.max_len} characters" + (" (printable)" if f.printable else "")
        cond = f"not isinstance({var}, str) or not {var} or len({var}) > {f.max_len}"
        if f.printable:
            cond += f" or not {var}.isprintable()"
        lines.append(f"if {cond}: " + fail.format(want=want))
    elif f.kind == "int":
        want = f"an int from {f.lo} to {f.hi}"
        lines.append(f"if type({var}) is not int or not {f.lo!r} <= {var} <= {f.hi!r}: " + fail.format(want=want))
    elif f.kind == "float":
        want = f"a number from {f.lo} to {f.hi}"
        lines.append(f"if type({var}) is not float and type({var}) is not int: " + fail.format(want=want))
        lines.append(f"{var} = round(float({var}), {f.ndigits})")
        lines.append(f"if not {f.lo!r} <= {var} <= {f.hi!r}: " + fail.format(want=want))  # NaN fails too
    elif f.kind == "enum":
        want = "one of " + ", ".join(f.values)
        lines.append(f"if not isinstance({var}, str) or {var} not in V{idx}: " + fail.format(want=want))
    elif f.kind == "price":
        want = f"a decimal string (at most {f.max_len} characters) or an int"
        lines.append(f"if not _price_ok({var}): " + fail.format(want=want))
    elif f.kind == "levels":
        want = f"a list of at most {MAX_LEVELS} [price, order_count, qty] levels"
        lines.append(f"if not _levels_ok({var}): " + fail.format(want=want))
    else:  # pragma: no cover - guarded by the spec tests
        raise ValueError(f"unknown field kind {f.kind!r}")
    return lines


def _coerce_lines(f: Field, var: str) -> list[str]:
    # What even the unchecked builder must do so its bytes equal the checked one's: an
    # int passed where a float belongs would otherwise print as 1, not 1.0. The Python engine notes
    # (§4.3) calls the same coercion in its builders "a deliberate pessimisation"
    # (quoted): a cost paid on purpose, pinned by a test so nobody optimises it away.
    if f.kind == "float":
        return [f"{var} = round(float({var}), {f.ndigits})"]
    return []


def _indent(lines: list[str], n: int = 1) -> list[str]:
    return ["    " * n + line for line in lines]


def _param_names(m: MessageSpec) -> list[str]:
    return [f.name for f in m.fields if f.required] + [f.name for f in m.fields if not f.required]


def _signature(m: MessageSpec) -> str:
    return ", ".join([f.name for f in m.fields if f.required] + [f"{f.name}=None" for f in m.fields if not f.required])


def _encode_lines(m: MessageSpec, *, coerce_optional: bool, right_size: bool = False) -> list[str]:
    # Required fields go in one dict literal (the fast shape); optional ones only when given.
    # right_size: the codec's bytes keep a buffer larger than themselves (``overallocates``);
    # joining them with b"" is one C call that copies them into an object of their own size.
    def encode(obj: str) -> str:
        return f"return _join((_dumps({obj}), _EMPTY))" if right_size else f"return _dumps({obj})"

    items = [f'"type": {m.name!r}'] + [f'"{f.name}": {f.name}' for f in m.fields if f.required]
    optional = [f for f in m.fields if not f.required]
    if not optional:
        return [encode("{" + ", ".join(items) + "}")]
    lines = ["d = {" + ", ".join(items) + "}"]
    for f in optional:
        lines.append(f"if {f.name} is not None:")
        if coerce_optional:
            lines += _indent(_coerce_lines(f, f.name))
        lines.append(f'    d["{f.name}"] = {f.name}')
    lines.append(encode("d"))
    return lines


def _source_for(m: MessageSpec, *, right_size: bool = False) -> str:
    """The generated source of the functions of message ``m`` (``right_size``: see ``Builders``)."""
    fields = list(m.fields)
    base = m.name.replace(".", "_")
    out: list[str] = []

    # make_x(...): check every rule, then encode.
    out.append(f"def make_{base}({_signature(m)}):")
    out.append(f'    """Build a {m.name} payload, checking every rule of the spec; return bytes."""')
    for i, f in enumerate(fields):
        checks = _check_lines(f, f.name, i)
        if f.required:
            out.append(f"    if {f.name} is None: raise _missing({f.name!r})")
            out += _indent(checks)
        else:
            out.append(f"    if {f.name} is not None:")
            out += _indent(checks, 2)
    # The checks above already coerced (a float field's check rounds it), so encode as is.
    out += _indent(_encode_lines(m, coerce_optional=False, right_size=right_size))
    out.append("")

    # make_x_unchecked(...): only the coercions that keep the bytes identical, then encode.
    out.append(f"def make_{base}_unchecked({_signature(m)}):")
    out.append(f'    """Build a {m.name} payload trusting the caller (no checks); same bytes as make_{base}."""')
    for f in fields:
        if f.required:
            out += _indent(_coerce_lines(f, f.name))
    out += _indent(_encode_lines(m, coerce_optional=True, right_size=right_size))
    out.append("")

    # explain_x(d): the same rules over a decoded dict, one by one, naming the first broken one.
    out.append(f"def explain_{base}(d):")
    out.append(f'    """Raise OrderRejected naming the first broken rule unless the dict d is a valid {m.name}."""')
    out.append("    if not KNOWN.issuperset(d): raise _unknown_fields(d, KNOWN)")
    for i, f in enumerate(fields):
        var = "v"
        out.append(f'    {var} = d.get("{f.name}")')
        checks = _check_lines(f, var, i)
        if f.kind == "float":  # the dict form is checked, not rewritten: coerce a copy
            checks = [line for line in checks if not line.startswith(f"{var} = round")]
        if f.required:
            out.append(f"    if {var} is None: raise _missing({f.name!r})")
            out += _indent(checks)
        else:
            out.append(f"    if {var} is not None:")
            out += _indent(checks, 2)
    out.append("")
    out += _fast_check_lines(m)
    return "\n".join(out)


def _fast_condition(f: Field, var: str, idx: int) -> str:
    """A condition true when ``var`` (not None) might break a rule of ``f``: never false when one is broken."""
    if f.kind == "str":
        if f.printable:
            # Of the types JSON decodes to, only str has isprintable(): any other value
            # is falsy (sent to explain_x) or raises TypeError or AttributeError (caught:
            # sent to explain_x too).
            return f"not {var} or len({var}) > {f.max_len} or not {var}.isprintable()"
        return f"type({var}) is not str or not 0 < len({var}) <= {f.max_len}"
    if f.kind == "int":
        return f"type({var}) is not int or not {f.lo!r} <= {var} <= {f.hi!r}"
    if f.kind == "float":
        return f"(type({var}) is not float and type({var}) is not int) or not {f.lo!r} <= {var} <= {f.hi!r}"
    if f.kind == "enum":
        # Decoded JSON holds only str, int, float, bool, None, list and dict, so
        # membership in a set of strings implies being one of those strings.
        return f"{var} not in V{idx}"
    if f.kind == "price":
        # Prices seen valid before are remembered by _price_ok; a new one takes the slow path once.
        return f"type({var}) is not int and {var} not in GOOD_PRICES"
    if f.kind == "levels":
        return f"not _levels_ok({var})"
    raise ValueError(f"unknown field kind {f.kind!r}")  # pragma: no cover - guarded by the spec tests


def _fast_check_lines(m: MessageSpec) -> list[str]:
    """check_x(d): the engine's gate. A fast pass over the common case; any doubt goes to explain_x.

    It never accepts what explain_x refuses (tests/test_messages.py holds them to
    the same verdicts); it may hand a valid dict to explain_x, which then accepts it
    (an optional field sent as null, a price not seen before).
    """
    base = m.name.replace(".", "_")
    required = [f for f in m.fields if f.required]
    out = [f"def check_{base}(d):"]
    out.append(f'    """Raise OrderRejected unless the decoded dict d is a valid {m.name} (fast path, then explain_{base})."""')
    out.append("    try:")
    # Every key is counted as it is looked at; a count that differs from len(d)
    # means a key that is not in the spec (or an optional one sent as null).
    out.append('        d["type"]')
    for i, f in enumerate(m.fields):
        if not f.required:
            continue
        if f.kind == "enum":
            out.append(f'        if d["{f.name}"] not in V{i}: return explain_{base}(d)')
        elif f.recurs:
            # A value seen valid before is one set lookup; a new one is checked, then remembered.
            out.append(f'        v = d["{f.name}"]')
            out.append(f"        if v not in G{i}:")
            out.append(f"            if {_fast_condition(f, 'v', i)}: return explain_{base}(d)")
            out.append(f"            if len(G{i}) >= {_REMEMBER_LIMIT}: G{i}.clear()")
            out.append(f"            G{i}.add(v)")
        else:
            out.append(f'        v = d["{f.name}"]')
            out.append(f"        if {_fast_condition(f, 'v', i)}: return explain_{base}(d)")
    optional = [(i, f) for i, f in enumerate(m.fields) if not f.required]
    out.append(f"        n = {1 + len(required)}")
    if optional:
        out.append("        if len(d) > n:")
        for i, f in optional:
            out.append(f'            v = d.get("{f.name}")')
            out.append("            if v is not None:")
            out.append("                n += 1")
            out.append(f"                if {_fast_condition(f, 'v', i)}: return explain_{base}(d)")
    out.append("        if len(d) != n: return explain_{base}(d)".replace("{base}", base))
    out.append("    except Exception:  # a missing key, an unhashable value...: let the precise check say what")
    out.append(f"        return explain_{base}(d)")
    out.append("")
    return out


class Builders:
    """The generated functions for one codec, as attributes (``make_order_new`` etc.).

    ``right_size``: whether every builder copies the codec's output into a ``bytes``
    of its own size before returning it. None (the default) decides by measuring:
    ``overallocates(codec.dumps)``. orjson 3.11 and later return ``bytes`` that keep
    their whole write buffer (4 KB and up from orjson 3.13, whatever the payload's
    length, and ``sys.getsizeof`` does not show it), so a queue of published frames
    would hold many times their size; the copy costs one ``b"".join`` per message
    (``bench engine`` and chapter 12 measure both sides). ``self.right_size`` says
    what was decided.
    """

    def __init__(self, codec: Codec, *, right_size: bool | None = None) -> None:
        self.codec = codec
        self.right_size = overallocates(codec.dumps) if right_size is None else bool(right_size)
        self.sources: dict[str, str] = {}
        for name, m in SPEC.items():
            source = _source_for(m, right_size=self.right_size)
            has_float = any(f.kind == "float" for f in m.fields)
            namespace: dict[str, Any] = {
                # A message with no float field cannot carry NaN (the checked builder's rules
                # admit no float; the unchecked one's caller promises the same), so it may skip
                # the codec's NaN check; tests/test_messages.py pins both halves of that.
                "_dumps": codec.dumps if has_float else (codec.dumps_without_floats or codec.dumps),
                "_fail": _fail, "_missing": _missing,
                "_unknown_fields": _unknown_fields, "_price_ok": _price_ok, "_levels_ok": _levels_ok,
                "GOOD_PRICES": _GOOD_PRICES,
                "_join": b"".join, "_EMPTY": b"",
                "KNOWN": frozenset(["type", *(f.name for f in m.fields)]),
            }
            for i, f in enumerate(m.fields):
                namespace[f"F{i}"] = f
                namespace[f"V{i}"] = frozenset(f.values)
                namespace[f"G{i}"] = set()  # valid values of a recurring field, remembered by check_x
            filename = f"<edumatcher.messages {name} {codec.name}>"
            # Registered with linecache so tracebacks and inspect.getsource show the generated lines.
            linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
            exec(compile(source, filename, "exec"), namespace)
            self.sources[name] = source
            base = name.replace(".", "_")
            for fn_name in (f"make_{base}", f"make_{base}_unchecked", f"check_{base}", f"explain_{base}"):
                fn = namespace[fn_name]
                fn.__module__ = __name__
                setattr(self, fn_name, fn)

    def check(self, d: dict[str, Any]) -> None:
        """Check a decoded message of any type; raise ``OrderRejected`` (UNKNOWN_TYPE for an unknown type)."""
        kind = d.get("type")
        if type(kind) is not str or kind not in SPEC:
            raise OrderRejected(RejectReason.UNKNOWN_TYPE, f"unknown message type {show_value(kind)}")
        getattr(self, "check_" + kind.replace(".", "_"))(d)


def build_builders(codec: Codec, *, right_size: bool | None = None) -> Builders:
    """Generate every message's builders and checker for ``codec`` (the module's own use ``CODEC``)."""
    return Builders(codec, right_size=right_size)


builders = build_builders(CODEC)
"""The functions generated for this process's codec; also exported as module globals below."""

RIGHT_SIZED: bool = builders.right_size
"""Whether this process's builders copy each payload to its own size (``overallocates(CODEC.dumps)``)."""


def builder_source(message: str) -> str:
    """Return the generated Python source of ``message``'s builders and checker (for reading)."""
    return builders.sources[message]


# Export make_x, make_x_unchecked and check_x as module globals (``from edumatcher.messages import make_order_new``).
for _name in SPEC:
    _base = _name.replace(".", "_")
    for _fn in (f"make_{_base}", f"make_{_base}_unchecked", f"check_{_base}", f"explain_{_base}"):
        globals()[_fn] = getattr(builders, _fn)
        __all__.append(_fn)
del _name, _base, _fn


# --------------------------------------------------------------------------- topics

def static_topic(message: str) -> bytes:
    """The topic of a ``static``-topic message, encoded once. ``KeyError`` for an unknown type."""
    return _STATIC_TOPICS[message]


_STATIC_TOPICS: dict[str, bytes] = {name: name.encode() for name in SPEC}
TOPIC_TRADE_EXECUTED: bytes = _STATIC_TOPICS["trade.executed"]
"""Public trade feed."""
TOPIC_ORDER_REJECT: bytes = _STATIC_TOPICS["order.reject"]
"""Rejects of messages whose owner could not be read (bad JSON, oversized, ...)."""


class TopicCache(dict):  # type: ignore[type-arg]
    """``cache[key]`` -> ``prefix + key.encode()``, built on first use and kept. O(1) after the first.

    The per-owner and per-symbol topics are looked up on every message; building
    them with an f-string and ``encode()`` each time costs more than this dict
    lookup (chapter 06). At most ``limit`` keys are kept so a flood of distinct
    owners cannot grow it without bound; beyond that topics are built, not kept.

    >>> acks = TopicCache(b"order.ack.")
    >>> acks["alice"], len(acks)
    (b'order.ack.alice', 1)
    """

    __slots__ = ("prefix", "limit")

    def __init__(self, prefix: bytes, limit: int = 65_536) -> None:
        super().__init__()
        self.prefix = prefix
        self.limit = limit

    def __missing__(self, key: str) -> bytes:
        topic = self.prefix + key.encode("utf-8")
        if len(self) < self.limit:
            self[key] = topic
        return topic
