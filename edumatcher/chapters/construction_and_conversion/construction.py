"""The cost of turning data into objects and back: ``from_dict``, enums, builders, ids.

Everything here is paid once per message, at the full message rate. Chapter 05
times each pair in its own cells, in one interleaved comparison per pair
(``compare_interleaved``: rounds of A and B alternated, the ratio of medians with
a 95 % confidence interval; see ``edumatcher.kit._compare``), "without the
technique" as ``a`` and "with it" as ``b``. This module holds what those cells
need besides the timed statements:

* ``order_via_init``: what ``Order.from_dict`` would be through the generated
  ``__init__`` (keyword dispatch), so the two differ only in that;
* ``direct_writer``: a hand-written-style ``from_dict`` for any dataclass, and
  ``measure_synthetic_from_dict``, the comparison on a class of any field count
  (chapter 05's slider), with keys as they come off the wire or interned;
* ``wire_dict``, ``interned_dict`` and ``keys_interned``: the same dictionary
  with decoded (not interned) or interned keys, and the test between them. The
  interpreter matches a keyword to a parameter name by identity first and falls
  back to comparing the strings only when no name is the very same object; the
  parameter names are interned, decoded keys are not;
* ``BUILDER_ARGS`` for the validating and unchecked builders;
* ``depth_payload_without_coercion``: an unchecked builder minus its one coercion;
* ``hooked_and_plain``: two classes holding ``Side.BUY``, one of them under a
  metaclass with ``__getattr__`` (what ``EnumType`` had up to 3.11);
* ``QUOTED_RATIOS``: the Python engine notes' ratios for the same pairs.

>>> d = sample_order_dict()
>>> order_via_init(d).to_dict() == Order.from_dict(d).to_dict()
True
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from dataclasses import fields
from typing import Any

from edumatcher.chapters.data_representation.slots import field_classes
from edumatcher.kit import SAMPLE_TARGET, Comparison, compare_interleaved
from edumatcher.messages import dumps, loads
from edumatcher.model import (
    ORDER_TYPE_BY_VALUE,
    SELF_MATCH_BY_VALUE,
    SIDE_BY_VALUE,
    STATUS_BY_VALUE,
    TIF_BY_VALUE,
    Order,
    Side,
)

__all__ = [
    "sample_order_dict", "order_via_init", "direct_writer", "measure_synthetic_from_dict", "BUILDER_ARGS",
    "depth_payload_without_coercion", "QUOTED_RATIOS", "wire_dict", "interned_dict", "keys_interned", "KEY_KINDS",
    "hooked_and_plain",
]

QUOTED_RATIOS: dict[str, float] = {
    "S(**d) / direct writes": 2505 / 501,
    "Enum(value) / table": 203 / 22,
    "member.value / member": 107 / 23,
    "checked / unchecked builder": 7.3 / 2.4,
    "uuid4 / urandom.hex": 1218 / 170,
}
"""The Python engine notes' ratios "without / with the technique", from the times it printed (quoted, CPython 3.14.10)."""


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


def wire_dict(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` as it arrives from a client: encoded and decoded again by the engine's codec (orjson).

    The keys are new string objects, equal to ``d``'s but not interned.

    >>> keys_interned(wire_dict({"qty": 1}))
    False
    """
    return loads(dumps(d))


def interned_dict(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with every key replaced by its interned copy (``sys.intern``), values unchanged.

    >>> keys_interned(interned_dict(wire_dict({"qty": 1})))
    True
    """
    return {sys.intern(k): v for k, v in d.items()}


def keys_interned(d: dict[str, Any]) -> bool:
    """True when every key of ``d`` is the interned string itself, the object a parameter name is.

    >>> keys_interned({"qty": 1}), keys_interned({"".join(["q", "ty"]): 1})
    (True, False)
    """
    return all(k is sys.intern(k) for k in d)


KEY_KINDS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {"wire": wire_dict, "interned": interned_dict}
"""How ``measure_synthetic_from_dict`` can prepare its keys: decoded from the wire, or interned."""


def measure_synthetic_from_dict(n_fields: int = 18, *, budget: float = 1.5,
                                target: float = SAMPLE_TARGET, keys: str = "wire") -> Comparison:
    """A slotted dataclass of ``n_fields`` ints: ``S(**d)`` (a) against ``__new__`` + direct writes (b).

    ``keys`` is ``"wire"`` (the dict decoded by the engine's codec, keys not interned:
    what ``from_dict`` receives) or ``"interned"``. Interleaved, adaptive; unpacks as
    ``(a, b)``. Cost: about ``budget`` seconds.
    """
    if keys not in KEY_KINDS:
        raise ValueError(f"keys must be one of {sorted(KEY_KINDS)}, not {keys!r}")
    _, Slotted = field_classes(n_fields)
    d = KEY_KINDS[keys]({f"f{i}": i for i in range(n_fields)})
    write = direct_writer(Slotted)
    return compare_interleaved(lambda: Slotted(**d), lambda: write(d), budget=budget, target=target,
                               labels=(f"S(**d), {n_fields} fields, {keys} keys",
                                       f"__new__ + {n_fields} slot writes, {keys} keys"))


BUILDER_ARGS: tuple[Any, ...] = ("o-7f3a9c", "EDU", "BUY", "LIMIT", 250, "ana", "GTC", "100.12")
"""Arguments of a realistic ``order.new`` for both builders (id, symbol, side, type, qty, owner, tif, price)."""


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


class _GetattrHook(type):
    """A metaclass with ``__getattr__``, like ``enum.EnumType`` up to CPython 3.11 (removed in 3.12)."""

    def __getattr__(cls, name: str) -> Any:
        raise AttributeError(name)


@functools.lru_cache(maxsize=1)
def hooked_and_plain() -> tuple[type, type]:
    """``(Hooked, Plain)``: classes holding ``BUY = Side.BUY``; only ``Hooked``'s metaclass has ``__getattr__``.

    The hook is never called for ``BUY`` (the attribute exists), but its presence
    makes every class-attribute read take the slower route.

    >>> Hooked, Plain = hooked_and_plain()
    >>> Hooked.BUY is Plain.BUY is Side.BUY
    True
    """
    class Hooked(metaclass=_GetattrHook):
        BUY = Side.BUY

    class Plain:
        BUY = Side.BUY

    return Hooked, Plain
