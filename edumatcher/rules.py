"""The matching rules, written once: what an order must satisfy and what the book does.

Both books follow this text: ``OrderBook`` (``book.py``, fast) and ``NaiveBook``
(``reference.py``, obvious). The differential test holds them to the same answers,
so any behaviour not written here is a bug in one of them.

Acceptance (``validate_new_order``; a refusal raises ``OrderRejected`` and changes nothing)
-----------------------------------------------------------------------------------------
* ``id`` and ``owner`` are non-empty ``str``; ``id`` is not live in the book
  (resting or a pending stop): DUPLICATE_ID. Ids of ended orders may be reused.
* ``symbol`` equals the book's: WRONG_SYMBOL.
* ``qty`` is an ``int`` (not ``bool``) with ``1 <= qty <= MAX_QTY``: BAD_QTY.
* LIMIT and STOP_LIMIT need ``price`` (MISSING_PRICE); MARKET and STOP must not
  have one (UNEXPECTED_PRICE). STOP and STOP_LIMIT need ``stop_price``
  (MISSING_STOP_PRICE); LIMIT and MARKET must not have one (UNEXPECTED_STOP_PRICE).
  Prices are ``int`` ticks with ``1 <= p <= MAX_PRICE``: BAD_PRICE.
* ``display_qty`` (an iceberg) is None or an ``int`` with ``1 <= display_qty <= qty``,
  and only on LIMIT or STOP_LIMIT orders, which can rest: BAD_DISPLAY_QTY.
* Enum fields are members of their enum (``Order.from_dict`` rejects unknown
  strings with UNKNOWN_ENUM; ``validate_new_order`` rejects non-members too).

Sequencing
----------
* The book keeps one counter. An accepted order takes ``arrival_seq = next``;
  so does a triggered stop (when it triggers) and an iceberg whose peak is
  refreshed (at the refresh). Rejections take nothing.
* Trades are numbered per book from 1 (``Trade.seq``).
* ``last_price`` is the price of the latest trade (or the constructor's value).

Matching
--------
* Price-time priority: better price first, then lower ``arrival_seq``.
  A trade prints at the **resting** order's price, for
  ``min(aggressor.remaining_qty, resting.visible_qty)``.
* A buy crosses an ask at price ``a`` when it is MARKET (or a triggered STOP) or
  ``a <= limit``; a sell crosses a bid ``b`` when MARKET or ``b >= limit``.
* After matching: LIMIT with DAY or GTC rests its remainder; MARKET, IOC and
  FOK never rest: the remainder is cancelled (status CANCELLED).
* FOK: before any matching, the quantity it could trade with (all resting
  quantity, hidden iceberg quantity included, at prices it crosses, excluding
  orders of its own owner when its ``smp`` is not NONE) must be at least its
  ``qty``; otherwise it is cancelled untouched. Self-match actions still apply
  during its matching (with CANCEL_NEWEST or CANCEL_BOTH a FOK can therefore end
  CANCELLED after partial fills: self-match prevention wins).
* Status: NEW when accepted (PENDING for a stop), PARTIALLY_FILLED after a fill
  that leaves quantity open, FILLED when ``remaining_qty`` reaches 0 by fills,
  CANCELLED when cancelled for any reason (``remaining_qty`` then keeps the
  cancelled quantity). ``filled_qty + remaining_qty == qty`` except after a
  DECREMENT (see below), which lowers ``remaining_qty`` without filling.

Icebergs
--------
* ``visible_qty`` starts at ``min(display_qty, qty)`` (for ordinary orders it is
  ``remaining_qty`` while resting). Depth shows only ``visible_qty``.
* Every fill of an iceberg, resting or aggressing, does
  ``visible_qty = max(visible_qty - fill, 0)``. When that leaves 0 visible and
  ``remaining_qty > 0``, the peak refreshes once:
  ``visible_qty = min(display_qty, remaining_qty)`` with a new ``arrival_seq``
  (for a resting order: the back of its price level). An aggressor keeps
  matching its whole remaining quantity; the peak limits only what rests.

Stops
-----
* A pending buy stop triggers when ``last_price >= stop_price``, a sell stop when
  ``last_price <= stop_price``. With no ``last_price`` nothing triggers.
* A stop submitted when already triggerable triggers at once (status PENDING
  is skipped: it goes straight to triggered).
* Triggering: status becomes NEW, a new ``arrival_seq`` is taken, a
  ("triggered", order) event is recorded, then a STOP matches as a MARKET order
  and a STOP_LIMIT as a LIMIT order with its own TIF (it may rest).
* Stops are checked after the submitted order has finished (matched and rested
  or cancelled). Then, repeatedly: if the best pending buy stop (lowest
  ``stop_price``, then lowest ``arrival_seq``) is triggerable, trigger and run it
  to completion; else if the best pending sell stop (highest ``stop_price``, then
  lowest ``arrival_seq``) is triggerable, do the same; else stop. Buy stops are
  looked at first on every round. Trades made by triggered stops move
  ``last_price`` and can trigger more (a cascade).

Self-match prevention (aggressor and resting order have the same ``owner``, and
the aggressor's ``smp`` is not NONE; no trade is printed)
------------------------------------------------------------------------------------
* CANCEL_NEWEST: cancel the aggressor's remainder; matching stops.
* CANCEL_OLDEST: cancel the resting order (all of it, hidden part included); go on.
* CANCEL_BOTH: cancel both; matching stops.
* DECREMENT: with ``a`` and ``r`` the two ``remaining_qty``: if ``a > r`` the resting
  order is cancelled and the aggressor's ``remaining_qty`` drops by ``r`` (matching
  goes on); if ``r > a`` the aggressor is cancelled and the resting order's
  ``remaining_qty`` drops by ``a`` (its ``visible_qty`` becomes
  ``min(visible_qty, remaining_qty)``, its place is kept); if equal, both are cancelled.

Cancels
-------
* ``cancel(id)`` removes a resting order or a pending stop: status CANCELLED,
  returns True; any other id returns False and changes nothing.
* ``cancel_owner(owner)`` cancels all of that owner's live orders (resting and
  pending stops) in ``arrival_seq`` order and returns their ids in that order.

Events
------
Each mutating call (``submit``, ``cancel``, ``cancel_owner``) first clears
``book.events`` and then appends, in the order they happen:
``("trade", Trade)``, ``("cancelled", Order)`` for every order cancelled during
the call (the aggressor's unfilled remainder, a FOK kill, self-match cancels, and
the orders removed by ``cancel``/``cancel_owner``) and ``("triggered", Order)``.
``submit`` returns the trades alone, in execution order.

Reading the book
----------------
* ``depth(levels=None)`` -> ``(bids, asks)``: lists of
  ``(price, order_count, displayed_qty)``, best first; ``levels`` keeps the first N.
* ``get(id)`` -> the live ``Order`` (resting or pending stop) or None.
* ``len(book)``: live orders, resting plus pending stops.
"""

from __future__ import annotations

from typing import Any

from .model import (
    TIF,
    Order,
    OrderRejected,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
)

__all__ = ["MAX_QTY", "MAX_PRICE", "validate_new_order"]

MAX_QTY = 1_000_000_000
"""Largest accepted order quantity: bounded so arithmetic stays small and a typo fails loudly."""

MAX_PRICE = 10**15
"""Largest accepted price in ticks."""

_PRICED = (OrderType.LIMIT, OrderType.STOP_LIMIT)
_STOPS = (OrderType.STOP, OrderType.STOP_LIMIT)


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is an int subclass; it is not a quantity


def validate_new_order(order: Order, symbol: str) -> None:
    """Raise ``OrderRejected`` unless ``order`` may enter the book of ``symbol``. O(1).

    Does not look at the book's contents; the caller checks duplicate ids.
    """
    if type(order.id) is not str or not order.id:
        raise OrderRejected(RejectReason.BAD_FIELD, f"id must be a non-empty string, not {order.id!r}")
    if type(order.owner) is not str or not order.owner:
        raise OrderRejected(RejectReason.BAD_FIELD, f"owner must be a non-empty string, not {order.owner!r}")
    if order.symbol != symbol:
        raise OrderRejected(RejectReason.WRONG_SYMBOL, f"order for {order.symbol!r} sent to the {symbol!r} book")
    for value, enum, field in (
        (order.side, Side, "side"),
        (order.order_type, OrderType, "order_type"),
        (order.tif, TIF, "tif"),
        (order.smp, SelfMatch, "smp"),
    ):
        if not isinstance(value, enum):
            raise OrderRejected(RejectReason.UNKNOWN_ENUM, f"{field} {value!r} is not a {enum.__name__}")
    qty = order.qty
    if not _is_int(qty) or not 1 <= qty <= MAX_QTY:
        raise OrderRejected(RejectReason.BAD_QTY, f"qty must be an int from 1 to {MAX_QTY}, not {qty!r}")
    kind = order.order_type
    if kind in _PRICED:
        if order.price is None:
            raise OrderRejected(RejectReason.MISSING_PRICE, f"a {kind.value} order needs a price")
        _check_price(order.price, "price")
    elif order.price is not None:
        raise OrderRejected(RejectReason.UNEXPECTED_PRICE, f"a {kind.value} order takes no price")
    if kind in _STOPS:
        if order.stop_price is None:
            raise OrderRejected(RejectReason.MISSING_STOP_PRICE, f"a {kind.value} order needs a stop_price")
        _check_price(order.stop_price, "stop_price")
    elif order.stop_price is not None:
        raise OrderRejected(RejectReason.UNEXPECTED_STOP_PRICE, f"a {kind.value} order takes no stop_price")
    display = order.display_qty
    if display is not None:
        if kind not in _PRICED:
            raise OrderRejected(RejectReason.BAD_DISPLAY_QTY, f"a {kind.value} order cannot rest, so it cannot be an iceberg")
        if not _is_int(display) or not 1 <= display <= qty:
            raise OrderRejected(RejectReason.BAD_DISPLAY_QTY, f"display_qty must be an int from 1 to qty ({qty}), not {display!r}")


def _check_price(price: Any, field: str) -> None:
    if not _is_int(price) or not 1 <= price <= MAX_PRICE:
        raise OrderRejected(RejectReason.BAD_PRICE, f"{field} must be an int number of ticks from 1 to {MAX_PRICE}, not {price!r}")
