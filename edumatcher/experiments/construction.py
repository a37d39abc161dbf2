"""The cost of turning data into objects and back: ``from_dict``, enums, builders, ids.

Everything here is paid once per message, at the full message rate, so chapter 03
measures each pair side by side:

* ``cls(**d)`` (the generated ``__init__``, keyword dispatch) against
  ``object.__new__`` plus direct slot writes, on the real ``Order`` and on a
  synthetic class of any field count;
* ``Enum(value)`` against a prebuilt value -> member dict, and ``member.value``
  against the member itself;
* the validating builder ``make_order_new`` against ``make_order_new_unchecked``;
* ``str(uuid.uuid4())`` against ``os.urandom(16).hex()``;
* the one coercion an unchecked builder keeps, against a copy without it.

>>> d = sample_order_dict()
>>> order_via_init(d).to_dict() == Order.from_dict(d).to_dict()
True
"""

from __future__ import annotations

import functools
import os
import uuid
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from ..measure import Measurement, measure
from ..messages import dumps, make_book_depth_unchecked, make_order_new, make_order_new_unchecked
from ..model import (
    ORDER_TYPE_BY_VALUE,
    SELF_MATCH_BY_VALUE,
    SIDE_BY_VALUE,
    STATUS_BY_VALUE,
    TIF_BY_VALUE,
    Order,
    OrderType,
    Side,
)
from .slots import field_classes

__all__ = [
    "sample_order_dict", "order_via_init", "direct_writer", "measure_from_dict", "measure_synthetic_from_dict",
    "measure_enum_lookup", "measure_member_value", "BUILDER_ARGS", "measure_builders", "measure_ids",
    "depth_payload_without_coercion", "measure_coercion",
]


def sample_order_dict() -> dict[str, Any]:
    """A client's new LIMIT order in dict form, as ``Order.from_dict`` receives it (prices in ticks)."""
    return {
        "id": "o-7f3a9c", "symbol": "EDU", "side": "BUY", "order_type": "LIMIT", "tif": "GTC",
        "qty": 250, "price": 10_012, "owner": "ana",
    }


def order_via_init(d: dict[str, Any]) -> Order:
    """What ``Order.from_dict`` would be if it called the generated ``__init__``: same result, keyword dispatch.

    Same lookup tables and defaults as ``from_dict``, so the two differ only in how
    the fields reach the object.
    """
    qty = d["qty"]
    return Order(
        id=d["id"], symbol=d["symbol"], side=SIDE_BY_VALUE[d["side"]],
        order_type=ORDER_TYPE_BY_VALUE[d["order_type"]], tif=TIF_BY_VALUE[d.get("tif", "GTC")], qty=qty,
        price=d.get("price"), stop_price=d.get("stop_price"), display_qty=d.get("display_qty"),
        owner=d.get("owner", ""), smp=SELF_MATCH_BY_VALUE[d.get("smp", "NONE")],
        status=STATUS_BY_VALUE[d.get("status", "NEW")], filled_qty=d.get("filled_qty", 0),
        remaining_qty=d.get("remaining_qty", qty), visible_qty=d.get("visible_qty", 0),
        arrival_seq=d.get("arrival_seq", 0), timestamp_ns=d.get("timestamp_ns", 0),
    )


@functools.lru_cache(maxsize=32)
def direct_writer(cls: type) -> Callable[[dict[str, Any]], Any]:
    """A generated ``from_dict`` for dataclass ``cls``: ``object.__new__`` then one line per field.

    The lines are written out (not a ``setattr`` loop) because that is what a
    hand-written ``from_dict`` looks like; the source is on ``__source__``.

    >>> Plain, Slotted = field_classes(2)
    >>> print(direct_writer(Slotted).__source__)
    def from_dict(d):
        o = _new(cls)
        o.f0 = d['f0']
        o.f1 = d['f1']
        return o
    """
    lines = ["def from_dict(d):", "    o = _new(cls)"]
    lines += [f"    o.{f.name} = d[{f.name!r}]" for f in fields(cls)]
    lines.append("    return o")
    source = "\n".join(lines)
    namespace: dict[str, Any] = {"_new": object.__new__, "cls": cls}
    exec(compile(source, f"<direct_writer {cls.__name__}>", "exec"), namespace)
    fn = namespace["from_dict"]
    fn.__source__ = source
    return fn


def measure_from_dict(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """The real ``Order``: ``(Order(**kw) route, Order.from_dict)`` on ``sample_order_dict()``."""
    d = sample_order_dict()
    from_dict = Order.from_dict
    return (
        measure(lambda: order_via_init(d), target=target, label="Order(**fields) via __init__"),
        measure(lambda: from_dict(d), target=target, label="Order.from_dict (__new__ + slot writes)"),
    )


def measure_synthetic_from_dict(n_fields: int = 18, *, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """A slotted dataclass of ``n_fields`` ints: ``(S(**d), __new__ + direct writes)``."""
    _, Slotted = field_classes(n_fields)
    d = {f"f{i}": i for i in range(n_fields)}
    write = direct_writer(Slotted)
    return (
        measure(lambda: Slotted(**d), target=target, label=f"S(**d), {n_fields} fields"),
        measure(lambda: write(d), target=target, label=f"__new__ + {n_fields} slot writes"),
    )


def measure_enum_lookup(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(OrderType("LIMIT"), ORDER_TYPE_BY_VALUE["LIMIT"])``, as statements inlined in the timing loop."""
    g = {"OrderType": OrderType, "table": ORDER_TYPE_BY_VALUE}
    return (
        measure('OrderType("LIMIT")', globals=g, target=target, label='OrderType("LIMIT")'),
        measure('table["LIMIT"]', globals=g, target=target, label='ORDER_TYPE_BY_VALUE["LIMIT"]'),
    )


def measure_member_value(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(Side.BUY.value, Side.BUY)``: the ``.value`` descriptor against the member itself."""
    g = {"Side": Side}
    return (
        measure("Side.BUY.value", globals=g, target=target, label="Side.BUY.value"),
        measure("Side.BUY", globals=g, target=target, label="Side.BUY"),
    )


BUILDER_ARGS: tuple[Any, ...] = ("o-7f3a9c", "EDU", "BUY", "LIMIT", 250, "ana", "GTC", "100.12")
"""Arguments of a realistic ``order.new`` for both builders (id, symbol, side, type, qty, owner, tif, price)."""


def measure_builders(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(make_order_new, make_order_new_unchecked)`` on ``BUILDER_ARGS``; they return identical bytes."""
    args = BUILDER_ARGS
    if make_order_new(*args) != make_order_new_unchecked(*args):  # pragma: no cover - pinned by the tests
        raise AssertionError("the two builders disagree; the comparison would be meaningless")
    return (
        measure(lambda: make_order_new(*args), target=target, label="make_order_new (checks every rule)"),
        measure(lambda: make_order_new_unchecked(*args), target=target, label="make_order_new_unchecked"),
    )


def measure_ids(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(str(uuid.uuid4()), os.urandom(16).hex())``: 128 random bits each, formatted differently."""
    uuid4, urandom = uuid.uuid4, os.urandom
    return (
        measure(lambda: str(uuid4()), target=target, label="str(uuid.uuid4())"),
        measure(lambda: urandom(16).hex(), target=target, label="os.urandom(16).hex()"),
    )


def depth_payload_without_coercion(
    symbol: str, bid_qty: int, ask_qty: int, imbalance: float, ts: int,
    best_bid: str | None = None, best_ask: str | None = None,
) -> bytes:
    """``make_book_depth_unchecked`` minus its one coercion (``round(float(x), 4)``): the shortcut we refuse.

    Otherwise line for line the generated builder, so timing the two isolates the
    coercion. With an ``int`` imbalance it writes ``1`` where the validating
    builder writes ``1.0``: different bytes for the same message.
    """
    d = {"type": "book.depth", "symbol": symbol, "bid_qty": bid_qty, "ask_qty": ask_qty,
         "imbalance": imbalance, "ts": ts}
    if best_bid is not None:
        d["best_bid"] = best_bid
    if best_ask is not None:
        d["best_ask"] = best_ask
    return dumps(d)


def measure_coercion(*, target: float = 0.02) -> tuple[Measurement, Measurement]:
    """``(make_book_depth_unchecked, the same without the coercion)``: what byte-identity costs per call."""
    args = ("EDU", 300, 100, 0.5, 1_000)
    return (
        measure(lambda: make_book_depth_unchecked(*args), target=target, label="make_book_depth_unchecked (coerces)"),
        measure(lambda: depth_payload_without_coercion(*args), target=target, label="same, without the coercion"),
    )
