"""The engine's vocabulary: enums, ``Order``, ``Trade`` and ``OrderRejected``.

Enums are ``str, Enum`` so that a member *is* its wire string: ``Side.BUY == "BUY"``
and both JSON encoders write it as ``"BUY"``. Turning a wire string back into a
member goes through a plain dict built once at import (``SIDE_BY_VALUE["BUY"]``),
which is a hash lookup, instead of ``Side("BUY")``, which runs the enum machinery
(chapter 05 measures the difference).

``Order`` and ``Trade`` are slotted dataclasses: less memory per instance, cheaper
construction, and a typo such as ``order.remaning_qty = 0`` raises instead of
silently adding an attribute (chapter 04).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from enum import Enum
from typing import Any

__all__ = [
    "Side", "OrderType", "TIF", "OrderStatus", "SelfMatch", "RejectReason", "CancelReason",
    "SIDE_BY_VALUE", "ORDER_TYPE_BY_VALUE", "TIF_BY_VALUE", "STATUS_BY_VALUE",
    "SELF_MATCH_BY_VALUE", "CANCEL_REASON_BY_VALUE", "Order", "Trade", "OrderRejected", "new_order_id",
]


class Side(str, Enum):
    """Which side of the book an order is on."""

    BUY = "BUY"
    SELL = "SELL"


class OrderType(str, Enum):
    """How an order is priced. Once triggered, a STOP matches as MARKET and a STOP_LIMIT as LIMIT."""

    LIMIT = "LIMIT"
    MARKET = "MARKET"
    STOP = "STOP"
    STOP_LIMIT = "STOP_LIMIT"


class TIF(str, Enum):
    """Time in force. DAY and GTC both rest until cancelled (this engine has no sessions)."""

    DAY = "DAY"
    GTC = "GTC"
    IOC = "IOC"
    FOK = "FOK"


class OrderStatus(str, Enum):
    """Life cycle of an order. PENDING is a stop that has not triggered yet."""

    PENDING = "PENDING"
    NEW = "NEW"
    PARTIALLY_FILLED = "PARTIALLY_FILLED"
    FILLED = "FILLED"
    CANCELLED = "CANCELLED"
    REJECTED = "REJECTED"


class SelfMatch(str, Enum):
    """Self-match prevention mode, chosen by the aggressing order."""

    NONE = "NONE"
    CANCEL_NEWEST = "CANCEL_NEWEST"
    CANCEL_OLDEST = "CANCEL_OLDEST"
    CANCEL_BOTH = "CANCEL_BOTH"
    DECREMENT = "DECREMENT"


class RejectReason(str, Enum):
    """Why an order or message was refused. The value is the wire reason code."""

    BAD_QTY = "BAD_QTY"
    BAD_PRICE = "BAD_PRICE"
    MISSING_PRICE = "MISSING_PRICE"
    UNEXPECTED_PRICE = "UNEXPECTED_PRICE"
    MISSING_STOP_PRICE = "MISSING_STOP_PRICE"
    UNEXPECTED_STOP_PRICE = "UNEXPECTED_STOP_PRICE"
    BAD_DISPLAY_QTY = "BAD_DISPLAY_QTY"
    DUPLICATE_ID = "DUPLICATE_ID"
    WRONG_SYMBOL = "WRONG_SYMBOL"
    UNKNOWN_ENUM = "UNKNOWN_ENUM"
    BAD_FIELD = "BAD_FIELD"
    MISSING_FIELD = "MISSING_FIELD"
    # Message-level reasons, used by the engine (issue 3).
    BAD_JSON = "BAD_JSON"
    NOT_OBJECT = "NOT_OBJECT"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    UNKNOWN_SYMBOL = "UNKNOWN_SYMBOL"
    OFF_TICK = "OFF_TICK"
    TOO_LARGE = "TOO_LARGE"
    UNKNOWN_ORDER = "UNKNOWN_ORDER"
    # Issue 26: an Order object already live in a book, and a snapshot asked for too soon.
    ORDER_IN_USE = "ORDER_IN_USE"
    THROTTLED = "THROTTLED"


class CancelReason(str, Enum):
    """Why an order was cancelled: set on the order (``Order.cancel_reason``) and sent in ``order.cancelled``.

    The rules that give each one are in ``edumatcher.rules`` ("Cancels").
    """

    OWNER_CANCEL = "OWNER_CANCEL"          # order.cancel: its owner asked
    MASS_CANCEL = "MASS_CANCEL"            # order.cancel_owner: its owner asked for all of its orders
    IOC_REMAINDER = "IOC_REMAINDER"        # the unfilled rest of an order that never rests (IOC, MARKET, a fired STOP)
    PRICE_PROTECTION = "PRICE_PROTECTION"  # that rest, left because its sweep reached its protection price
    FOK_KILLED = "FOK_KILLED"              # a FOK that could not fill completely: cancelled untouched
    SELF_MATCH = "SELF_MATCH"              # self-match prevention (the aggressor, the resting order, or both)


# Value -> member tables, built once at import: a dict lookup instead of Enum.__call__.
SIDE_BY_VALUE: dict[str, Side] = {m.value: m for m in Side}
ORDER_TYPE_BY_VALUE: dict[str, OrderType] = {m.value: m for m in OrderType}
TIF_BY_VALUE: dict[str, TIF] = {m.value: m for m in TIF}
STATUS_BY_VALUE: dict[str, OrderStatus] = {m.value: m for m in OrderStatus}
SELF_MATCH_BY_VALUE: dict[str, SelfMatch] = {m.value: m for m in SelfMatch}
CANCEL_REASON_BY_VALUE: dict[str, CancelReason] = {m.value: m for m in CancelReason}
_NEW = OrderStatus.NEW


class OrderRejected(Exception):
    """An order (or message) was refused; nothing was changed.

    ``code`` is a ``RejectReason``; ``message`` says what was wrong in plain words.
    """

    def __init__(self, code: RejectReason, message: str) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message


def new_order_id() -> str:
    """Return a fresh 128-bit random order id as 32 hex characters.

    Same entropy as ``str(uuid.uuid4())`` without building a UUID object (chapter 05).
    """
    return os.urandom(16).hex()


def _enum(table: dict[str, Any], value: Any, field: str) -> Any:
    try:
        return table[value]
    except (KeyError, TypeError):
        raise OrderRejected(
            RejectReason.UNKNOWN_ENUM, f"{field} {value!r} is not one of {', '.join(table)}"
        ) from None


def _explain_from_dict_error(d: dict[str, Any]) -> None:
    """Raise the ``OrderRejected`` that says which field of ``d`` stopped ``Order.from_dict``."""
    for field in ("id", "symbol", "side", "order_type", "qty"):
        if field not in d:
            raise OrderRejected(RejectReason.MISSING_FIELD, f"field {field!r} is required")
    _enum(SIDE_BY_VALUE, d["side"], "side")
    _enum(ORDER_TYPE_BY_VALUE, d["order_type"], "order_type")
    for table, field, default in ((TIF_BY_VALUE, "tif", "GTC"), (SELF_MATCH_BY_VALUE, "smp", "NONE"),
                                  (STATUS_BY_VALUE, "status", "NEW"), (CANCEL_REASON_BY_VALUE, "cancel_reason", None)):
        if default is None and d.get(field) is None:
            continue
        value = d.get(field)
        _enum(table, default if value is None else value, field)
    raise AssertionError(f"Order.from_dict failed on {d!r} for no reason it knows")  # pragma: no cover


@dataclass(slots=True, eq=False)
class Order:
    """One order. Client fields first, then the fields the book sets.

    Prices are integer ticks (``price`` is None for MARKET and STOP orders).
    ``display_qty`` makes an iceberg: only ``visible_qty`` (at most ``display_qty``)
    shows in the book at a time. ``remaining_qty`` is the open quantity; once an
    order is CANCELLED it keeps the quantity that was cancelled, and
    ``cancel_reason`` says why (None until then).
    """

    id: str
    symbol: str
    side: Side
    order_type: OrderType
    tif: TIF
    qty: int
    price: int | None
    stop_price: int | None = None
    display_qty: int | None = None
    owner: str = ""
    smp: SelfMatch = SelfMatch.NONE
    # Set by the book:
    status: OrderStatus = OrderStatus.NEW
    filled_qty: int = 0
    remaining_qty: int = 0
    visible_qty: int = 0
    arrival_seq: int = 0
    timestamp_ns: int = 0
    cancel_reason: CancelReason | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Order:
        """Build an Order from its dict form (wire strings for enums). O(fields).

        Writes the slots directly on ``object.__new__(cls)`` instead of calling the
        generated ``__init__``. ``cls(**d)`` matches each key against the parameter
        names by identity first and falls back to comparing strings when the key is
        not the interned name itself, which is the case for every key a JSON decoder
        makes; that matching is most of its cost on wire data (chapter 05). Engine-set fields may be absent (a client's new order);
        ``remaining_qty`` then starts at ``qty``. Raises ``OrderRejected`` with
        ``MISSING_FIELD`` or ``UNKNOWN_ENUM``; other rules are checked by the book.
        """
        o = object.__new__(cls)
        get = d.get
        try:
            # The common case in one try: direct table lookups, no helper calls.
            o.id = d["id"]
            o.symbol = d["symbol"]
            o.side = SIDE_BY_VALUE[d["side"]]
            o.order_type = ORDER_TYPE_BY_VALUE[d["order_type"]]
            # An optional field sent as None means "absent", as it does for price.
            tif = get("tif")
            o.tif = TIF_BY_VALUE["GTC" if tif is None else tif]
            o.qty = d["qty"]
            smp = get("smp")
            o.smp = SELF_MATCH_BY_VALUE["NONE" if smp is None else smp]
            status = get("status")
            if status is None:  # a client's new order: no book-set field, so no reason either
                o.status = _NEW
                o.cancel_reason = None
            else:
                o.status = STATUS_BY_VALUE[status]
                reason = get("cancel_reason")
                o.cancel_reason = None if reason is None else CANCEL_REASON_BY_VALUE[reason]
        except (KeyError, TypeError):
            _explain_from_dict_error(d)  # raises OrderRejected naming the field
        o.price = get("price")
        o.stop_price = get("stop_price")
        o.display_qty = get("display_qty")
        o.owner = get("owner", "")
        o.filled_qty = get("filled_qty", 0)
        o.remaining_qty = get("remaining_qty", o.qty)
        o.visible_qty = get("visible_qty", 0)
        o.arrival_seq = get("arrival_seq", 0)
        o.timestamp_ns = get("timestamp_ns", 0)
        return o

    def to_dict(self) -> dict[str, Any]:
        """Return the dict form; ``Order.from_dict(o.to_dict())`` rebuilds ``o``. O(fields)."""
        return {
            "id": self.id,
            "symbol": self.symbol,
            "side": self.side.value,
            "order_type": self.order_type.value,
            "tif": self.tif.value,
            "qty": self.qty,
            "price": self.price,
            "stop_price": self.stop_price,
            "display_qty": self.display_qty,
            "owner": self.owner,
            "smp": self.smp.value,
            "status": self.status.value,
            "filled_qty": self.filled_qty,
            "remaining_qty": self.remaining_qty,
            "visible_qty": self.visible_qty,
            "arrival_seq": self.arrival_seq,
            "timestamp_ns": self.timestamp_ns,
            "cancel_reason": None if self.cancel_reason is None else self.cancel_reason.value,
        }


@dataclass(slots=True, eq=False)
class Trade:
    """One execution. ``price`` is the resting order's price, in ticks; ``seq`` counts trades per book from 1."""

    symbol: str
    price: int
    qty: int
    buy_order_id: str
    sell_order_id: str
    aggressor_order_id: str
    resting_order_id: str
    buy_owner: str
    sell_owner: str
    aggressor_side: Side
    seq: int
    timestamp_ns: int = 0

    def to_dict(self) -> dict[str, Any]:
        """Return the dict form (enums as wire strings). O(fields)."""
        return {
            "symbol": self.symbol,
            "price": self.price,
            "qty": self.qty,
            "buy_order_id": self.buy_order_id,
            "sell_order_id": self.sell_order_id,
            "aggressor_order_id": self.aggressor_order_id,
            "resting_order_id": self.resting_order_id,
            "buy_owner": self.buy_owner,
            "sell_owner": self.sell_owner,
            "aggressor_side": self.aggressor_side.value,
            "seq": self.seq,
            "timestamp_ns": self.timestamp_ns,
        }
