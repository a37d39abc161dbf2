"""Seeded order flows shared by the benchmarks, the tests and the notebooks.

A workload is a ``list`` of operations, each a compact tuple whose first item
says what it is:

=================================================================  ===========================
``("new", id, side, order_type, tif, price, qty, owner)``          submit a new order
``("cancel", id)``                                                 cancel one order by id
``("cancel_owner", owner)``                                        cancel all of one owner's orders
=================================================================  ===========================

``side``, ``order_type`` and ``tif`` are wire strings (``"BUY"``, ``"LIMIT"``,
``"GTC"``); ``price`` is in integer ticks, or None for a MARKET order; ``qty`` is
an int. Ids are ``"o1"``, ``"o2"``, ... in submission order, unique within a
workload. Owners come from the small set ``OWNERS``.

Tuples rather than dicts or ``Order`` objects, because the bench's workload has
a million operations: an 8-tuple sharing its strings and its (cached) price ints
costs about 180 bytes with its id, a dict about four times that. Orders are built
from operations (``to_order``, ``prepare``) just before a book needs them, and
fresh every time, because a book mutates the orders it is given.

A ``"cancel"`` always names an order the generator submitted earlier and has not
cancelled yet, i.e. *live as far as the generator knows*: the book may have
filled it meanwhile, and then the cancel finds nothing (``Tally.cancel_misses``).
Market and IOC orders never rest, so they are never cancelled.

Every generator takes a ``seed`` and uses its own ``random.Random(seed)``, never
the global one: the same arguments give the same list, on every run and every
Python version (only ``Random.random()`` is drawn from; its sequence for an int
seed is part of CPython's compatibility promise, unlike ``randrange``'s).

>>> ops = standard(5, seed=7)
>>> ops[0][0], ops[0][1]
('new', 'o1')
>>> ops == standard(5, seed=7)
True
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .model import Order, OrderRejected, Trade

__all__ = [
    "NEW", "CANCEL", "CANCEL_OWNER", "SYMBOL", "MID", "OWNERS", "Op",
    "standard", "steady_state", "cancel_heavy", "opening_ramp",
    "order_dict", "to_order", "prepare", "apply", "apply_prepared", "Tally", "composition", "BookLike",
    "encode_workload",
]

NEW = "new"
CANCEL = "cancel"
CANCEL_OWNER = "cancel_owner"

SYMBOL = "EDU"
"""The symbol every generated order is for."""

MID = 10_000
"""The price (ticks) the generated flows are centred on."""

OWNERS: tuple[str, ...] = ("ana", "ben", "cai", "dee", "eli", "fay", "gus", "hal")
"""The small set owners are drawn from (so self-match prevention has work to do)."""

Op = tuple[Any, ...]


class BookLike(Protocol):
    """What ``apply`` needs from a book: OrderBook, NaiveBook and BareBook all fit."""

    def submit(self, order: Order) -> list[Trade]: ...  # pragma: no cover - protocol

    def cancel(self, order_id: str) -> bool: ...  # pragma: no cover - protocol


# ---------------------------------------------------------------- the generator


class _Flow:
    """Shared state of a generator: the RNG, the id counter and the live orders.

    ``live_ids`` and ``live_owners`` are parallel lists, so a random live order is
    picked and removed in O(1) (swap with the last, pop).
    """

    def __init__(self, seed: int, mid: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"seed must be an int, not {seed!r}")
        self.random = random.Random(seed).random
        self.mid = mid
        self.next_id = 1
        self.live_ids: list[str] = []
        self.live_owners: list[str] = []
        # One int object per price near the mid, shared by every operation at that price.
        self.prices = {p: p for p in range(max(1, mid - 100), mid + 101)}

    def pick(self, items: Sequence[Any]) -> Any:
        return items[int(self.random() * len(items))]

    def between(self, low: int, high: int) -> int:
        """A uniform int in [low, high]."""
        return low + int(self.random() * (high - low + 1))

    def new(self, side: str, order_type: str, tif: str, price: int | None, qty: int, *, rests: bool) -> Op:
        order_id = f"o{self.next_id}"
        self.next_id += 1
        owner = self.pick(OWNERS)
        if rests:
            self.live_ids.append(order_id)
            self.live_owners.append(owner)
        if price is not None:
            price = self.prices.get(price, price)
        return (NEW, order_id, side, order_type, tif, price, qty, owner)

    def cancel_random(self) -> Op:
        ids, owners = self.live_ids, self.live_owners
        i = int(self.random() * len(ids))
        order_id = ids[i]
        ids[i], owners[i] = ids[-1], owners[-1]
        ids.pop()
        owners.pop()
        return (CANCEL, order_id)

    def cancel_owner(self) -> Op:
        owner = self.pick(OWNERS)
        keep = [(i, o) for i, o in zip(self.live_ids, self.live_owners, strict=True) if o != owner]
        self.live_ids = [i for i, _ in keep]
        self.live_owners = [o for _, o in keep]
        return (CANCEL_OWNER, owner)

    def steady(self, n: int, depth: int, out: list[Op], *, mass_cancels: bool = True) -> None:
        """Append ``n`` operations of the steady-state mix (see ``steady_state``).

        ``mass_cancels=False`` leaves out ``cancel_owner``: after an opening ramp, one
        mass cancel would remove a fifth of the book the ramp just built.
        """
        rnd, mid = self.random, self.mid
        for _ in range(n):
            r = rnd()
            side = "BUY" if rnd() < 0.5 else "SELL"
            sign = -1 if side == "BUY" else 1
            if r < 0.05:
                out.append(self.new(side, "MARKET", "IOC", None, self.between(1, 50), rests=False))
            elif r < 0.10:
                # An IOC limit a few ticks through the mid: takes what is there, never rests.
                out.append(self.new(side, "LIMIT", "IOC", mid - sign * self.between(0, 5), self.between(1, 100), rests=False))
            elif r < 0.1005 and mass_cancels and self.live_ids:
                out.append(self.cancel_owner())
            else:
                # Cancel more often as the live set grows past ``depth``: at ``depth``
                # new orders and cancels balance, which keeps the book's size steady.
                cancel_p = min(0.9, len(self.live_ids) / (2 * depth))
                if self.live_ids and rnd() < cancel_p:
                    out.append(self.cancel_random())
                else:
                    # Mostly passive (up to 20 ticks behind the mid), sometimes 3 ticks through it.
                    price = mid + sign * self.between(-3, 20)
                    tif = "GTC" if rnd() < 0.8 else "DAY"
                    out.append(self.new(side, "LIMIT", tif, price, self.between(1, 100), rests=True))


def _check_n(n: int, name: str = "n") -> None:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"{name} must be a non-negative int, not {n!r}")


# ---------------------------------------------------------------- the workloads


def standard(n: int, seed: int = 1, *, mid: int = MID) -> list[Op]:
    """The ``bench book`` workload: ``n`` operations, GTC limit orders and cancels only. O(n).

    Each step is a cancel of a uniformly chosen live order with probability 0.3
    (when one exists), otherwise a new GTC LIMIT order: side BUY or SELL with equal
    odds, price uniform within ``mid`` ± 20 ticks (both sides, so about half of the
    new orders cross and trade), qty uniform in 1..100, owner from ``OWNERS``.

    >>> ops = standard(1000, seed=3)
    >>> 0.25 < sum(op[0] == CANCEL for op in ops) / len(ops) < 0.35
    True
    """
    _check_n(n)
    flow = _Flow(seed, mid)
    rnd = flow.random
    prices = [flow.prices[p] for p in range(mid - 20, mid + 21)]
    live_ids, live_owners = flow.live_ids, flow.live_owners
    out: list[Op] = []
    append = out.append
    number = 0
    for _ in range(n):
        # Inlined rather than calling _Flow.new: this loop makes a million operations.
        if live_ids and rnd() < 0.3:
            i = int(rnd() * len(live_ids))
            order_id = live_ids[i]
            live_ids[i] = live_ids[-1]
            live_ids.pop()
            append((CANCEL, order_id))
            continue
        number += 1
        order_id = f"o{number}"
        side = "BUY" if rnd() < 0.5 else "SELL"
        price = prices[int(rnd() * 41)]
        qty = 1 + int(rnd() * 100)
        owner = OWNERS[int(rnd() * len(OWNERS))]
        live_ids.append(order_id)
        append((NEW, order_id, side, "LIMIT", "GTC", price, qty, owner))
    live_owners.clear()  # not tracked here: the standard flow has no cancel_owner
    return out


def steady_state(n: int, seed: int = 1, *, depth: int = 1000, mid: int = MID) -> list[Op]:
    """A mixed flow around ``mid`` whose live book stays near ``depth`` orders. O(n).

    Per step: 5 % MARKET IOC (qty 1..50); 5 % LIMIT IOC up to 5 ticks through the
    mid; 0.05 % ``cancel_owner`` of a random owner; the rest are cancels of a random
    live order, with probability ``live / (2 * depth)`` (at most 0.9), or new LIMIT
    orders (80 % GTC, 20 % DAY) priced from 3 ticks through the mid to 20 ticks
    behind it, qty 1..100. The cancel rate rises with the live count, so near
    ``depth`` live orders arrivals and cancels balance (the book proper is somewhat
    smaller, since some live orders were filled).
    """
    _check_n(n)
    _check_n(depth, "depth")
    flow = _Flow(seed, mid)
    out: list[Op] = []
    flow.steady(n, max(depth, 1), out)
    return out


def cancel_heavy(n: int, seed: int = 1, *, mid: int = MID) -> list[Op]:
    """A flow where nearly every resting order is cancelled: work for lazy deletion. O(n).

    Per step: 3 % an IOC LIMIT 25 ticks through the mid, qty 1..100, which takes
    from the top of the other side (and so meets cancelled entries in a lazily
    deleted heap); 48 % a cancel of a random live order (when one exists); the
    rest a new passive GTC LIMIT 1 to 20 ticks behind the mid (it never crosses),
    qty 1..100. About 90 % of the orders that rest end cancelled, most of them
    away from the top of the book.
    """
    _check_n(n)
    flow = _Flow(seed, mid)
    rnd = flow.random
    out: list[Op] = []
    for _ in range(n):
        r = rnd()
        side = "BUY" if rnd() < 0.5 else "SELL"
        sign = -1 if side == "BUY" else 1
        if r < 0.03:
            out.append(flow.new(side, "LIMIT", "IOC", mid - sign * 25, flow.between(1, 100), rests=False))
        elif r < 0.51 and flow.live_ids:
            out.append(flow.cancel_random())
        else:
            out.append(flow.new(side, "LIMIT", "GTC", mid + sign * flow.between(1, 20), flow.between(1, 100), rests=True))
    return out


def opening_ramp(n_resting: int, seed: int = 1, *, then: int = 0, levels: int = 50, mid: int = MID) -> list[Op]:
    """A large resting book built from non-crossing orders, then an optional steady stream. O(n).

    First ``n_resting`` new GTC LIMIT orders that never cross: bids at ``mid - 1 - k``
    and asks at ``mid + 1 + k``, ``k`` uniform in ``0..levels-1``, sides at even
    odds, qty 1..100. Then ``then`` operations of the ``steady_state`` mix without its
    mass cancels (each would wipe one owner's share of the ramp), with the live book
    held near ``n_resting``. The chapter on the garbage collector uses it:
    the ramp leaves many long-lived objects for every collection to walk.

    >>> ops = opening_ramp(100, seed=2, then=50)
    >>> len(ops), all(op[0] == NEW and op[4] == "GTC" for op in ops[:100])
    (150, True)
    """
    _check_n(n_resting, "n_resting")
    _check_n(then, "then")
    if isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels < mid:
        raise ValueError(f"levels must be an int from 1 to {mid - 1}, not {levels!r}")
    flow = _Flow(seed, mid)
    out: list[Op] = []
    for _ in range(n_resting):
        k = flow.between(0, levels - 1)
        if flow.random() < 0.5:
            out.append(flow.new("BUY", "LIMIT", "GTC", mid - 1 - k, flow.between(1, 100), rests=True))
        else:
            out.append(flow.new("SELL", "LIMIT", "GTC", mid + 1 + k, flow.between(1, 100), rests=True))
    flow.steady(then, max(n_resting, 1), out, mass_cancels=False)
    return out


# ---------------------------------------------------------------- using them


def order_dict(op: Op, symbol: str = SYMBOL) -> dict[str, Any]:
    """The dict form (``Order.from_dict``'s input) of a ``"new"`` operation. O(1).

    >>> order_dict(("new", "o1", "BUY", "LIMIT", "GTC", 101, 5, "ana"))["price"]
    101
    """
    if op[0] != NEW:
        raise ValueError(f"only a {NEW!r} operation describes an order, not {op!r}")
    _, order_id, side, order_type, tif, price, qty, owner = op
    return {
        "id": order_id, "symbol": symbol, "side": side, "order_type": order_type,
        "tif": tif, "price": price, "qty": qty, "owner": owner,
    }


def to_order(op: Op, symbol: str = SYMBOL) -> Order:
    """A fresh ``Order`` for a ``"new"`` operation, built by ``Order.from_dict``. O(1).

    >>> to_order(("new", "o1", "SELL", "MARKET", "IOC", None, 7, "ben")).qty
    7
    """
    return Order.from_dict(order_dict(op, symbol))


def prepare(ops: Iterable[Op], symbol: str = SYMBOL) -> list[tuple[str, Any]]:
    """Turn operations into ``(kind, argument)`` pairs with fresh ``Order`` objects. O(n).

    The argument is the ``Order`` for ``"new"``, the id for ``"cancel"`` and the
    owner for ``"cancel_owner"``. Call it outside a timed region: building the
    orders is not the book's work.
    """
    from_dict = Order.from_dict
    out: list[tuple[str, Any]] = []
    append = out.append
    for op in ops:
        kind = op[0]
        if kind == NEW:
            _, order_id, side, order_type, tif, price, qty, owner = op
            append((NEW, from_dict({
                "id": order_id, "symbol": symbol, "side": side, "order_type": order_type,
                "tif": tif, "price": price, "qty": qty, "owner": owner,
            })))
        elif kind == CANCEL or kind == CANCEL_OWNER:
            append((kind, op[1]))
        else:
            raise ValueError(f"unknown operation {op!r}; expected {NEW!r}, {CANCEL!r} or {CANCEL_OWNER!r}")
    return out


@dataclass
class Tally:
    """What applying a workload did: trades printed, orders refused, cancels that found their order."""

    trades: int = 0
    rejects: int = 0
    cancelled: int = 0
    cancel_misses: int = 0
    owner_cancelled: int = 0


def apply_prepared(book: BookLike, prepared: Iterable[tuple[str, Any]]) -> Tally:
    """Feed ``prepare``'s pairs to ``book`` in order and count what happened. O(n) calls.

    This loop is what ``bench book`` times, so it does as little as it can besides
    calling the book: identical overhead for every book compared. A refused order
    (``OrderRejected``) is counted and the flow goes on. ``"cancel_owner"`` needs
    a book with ``cancel_owner`` (OrderBook, NaiveBook).
    """
    submit, cancel = book.submit, book.cancel
    trades = rejects = cancelled = misses = by_owner = 0
    for kind, arg in prepared:
        if kind == NEW:
            try:
                trades += len(submit(arg))
            except OrderRejected:
                rejects += 1
        elif kind == CANCEL:
            if cancel(arg):
                cancelled += 1
            else:
                misses += 1
        else:
            by_owner += len(book.cancel_owner(arg))  # type: ignore[attr-defined]
    return Tally(trades, rejects, cancelled, misses, by_owner)


def apply(book: BookLike, ops: Iterable[Op], symbol: str = SYMBOL) -> Tally:
    """Apply a workload to ``book`` with fresh orders: ``apply_prepared(book, prepare(ops))``. O(n).

    >>> class Sink:  # a stand-in book that trades nothing
    ...     def submit(self, order): return []
    ...     def cancel(self, order_id): return True
    >>> apply(Sink(), standard(10, seed=1)).rejects
    0
    """
    return apply_prepared(book, prepare(ops, symbol))


def encode_workload(ops: Iterable[Op], symbol: str = SYMBOL, decimals: int = 2) -> list[bytes]:
    """Return the wire payload of every operation, in order: what a client would send. O(n).

    Prices (ticks) become decimal strings with ``decimals`` places; a cancel names
    the owner that submitted the order, as the engine requires. Each payload is
    copied to its exact length: some orjson versions keep their whole output buffer
    behind every small ``bytes`` they return (about 4 KiB each with orjson 3.13 when
    this was written, about 1 KiB with 3.8), which makes a stored workload of 200,000
    payloads cost hundreds of MB; the test of this function measures the copies.

    >>> encode_workload([("new", "o1", "BUY", "LIMIT", "GTC", 10_001, 5, "ana"), ("cancel", "o1")])[1]
    b'{"type":"order.cancel","id":"o1","symbol":"EDU","owner":"ana"}'
    """
    # Imported here: the message layer is not needed to generate or apply workloads.
    from .messages import make_order_cancel_owner_unchecked, make_order_cancel_unchecked, make_order_new_unchecked
    from .ticks import from_ticks

    owner_of: dict[str, str] = {}
    wire: dict[int, str] = {}
    out: list[bytes] = []
    for op in ops:
        kind = op[0]
        if kind == NEW:
            _, order_id, side, order_type, tif, price, qty, owner = op
            owner_of[order_id] = owner
            text = None
            if price is not None:
                text = wire.get(price)
                if text is None:
                    text = wire[price] = str(from_ticks(price, decimals))
            payload = make_order_new_unchecked(order_id, symbol, side, order_type, qty, owner, tif, text)
        elif kind == CANCEL:
            payload = make_order_cancel_unchecked(op[1], symbol, owner_of[op[1]])
        elif kind == CANCEL_OWNER:
            payload = make_order_cancel_owner_unchecked(op[1], symbol)
        else:
            raise ValueError(f"unknown operation {op!r}")
        out.append(bytes(memoryview(payload)))
    return out


def composition(ops: Iterable[Op]) -> Counter[str]:
    """Count operations by kind, and new orders by ``order_type`` and ``tif`` too. O(n).

    >>> sorted(composition([("new", "o1", "BUY", "LIMIT", "GTC", 1, 1, "ana"), ("cancel", "o1")]).items())
    [('cancel', 1), ('new', 1), ('new LIMIT GTC', 1)]
    """
    counts: Counter[str] = Counter()
    for op in ops:
        counts[op[0]] += 1
        if op[0] == NEW:
            counts[f"new {op[3]} {op[4]}"] += 1
    return counts
