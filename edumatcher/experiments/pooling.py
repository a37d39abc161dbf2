"""The Java question, measured: pooling ``Order`` objects against allocating them, and what pooling risks.

* ``OrderPool`` is the pool a Java habit would write: a free list of ``Order``
  objects, ``acquire`` and ``release``.
* ``allocation_costs`` times three ways to get a filled ``Order``: the generated
  ``__init__``, ``object.__new__`` plus one write per slot (``Order.from_dict``'s
  way), and a pool's acquire, the same slot writes, and release.
* ``stale_reference`` shows the hazard: a pool hands out an object that someone
  still holds, and the holder sees another order's data.
* ``address_reuse`` shows CPython's allocator doing the pooling already: objects
  freed one after another come back at the same few addresses.
* ``tracked_added`` counts how many objects the cyclic collector tracks for
  each of a few ways to hold n values, and ``structure_pause`` times a full
  collection with one of them alive.

>>> rows, same = stale_reference()
>>> same, rows[-1][1]
(True, 'o2 SELL 7 @ 10010 by ben (NEW)')
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..measure import Measurement, measure
from ..metrics import LatencyRing
from ..model import TIF, Order, OrderStatus, OrderType, SelfMatch, Side

__all__ = [
    "OrderPool", "fill", "describe", "allocation_costs", "stale_reference", "address_reuse",
    "STRUCTURES", "TrackedRow", "tracked_added", "structure_pause",
]


class OrderPool:
    """A free list of ``Order`` objects: ``acquire`` reuses a released one if it can, else allocates. O(1) each.

    ``created`` and ``reused`` count what ``acquire`` did. The pool does not reset
    anything: the caller overwrites every field, which is the whole cost of reuse.

    >>> pool = OrderPool()
    >>> a = pool.acquire(); pool.release(a)
    >>> pool.acquire() is a, pool.created, pool.reused
    (True, 1, 1)
    """

    __slots__ = ("_free", "created", "reused")

    def __init__(self) -> None:
        self._free: list[Order] = []
        self.created = 0
        self.reused = 0

    def acquire(self) -> Order:
        """An ``Order`` whose fields the caller must all set: a released one if any, else a new one."""
        if self._free:
            self.reused += 1
            return self._free.pop()
        self.created += 1
        return object.__new__(Order)

    def release(self, order: Order) -> None:
        """Give ``order`` back. Anyone still holding it will see whatever the next ``acquire`` writes into it."""
        self._free.append(order)

    def __len__(self) -> int:
        return len(self._free)


def fill(order: Order, order_id: str, side: Side, qty: int, price: int, owner: str) -> Order:
    """Write every field of ``order`` for a new GTC limit order; return it. O(fields)."""
    order.id, order.symbol, order.side = order_id, "EDU", side
    order.order_type, order.tif, order.qty, order.price = OrderType.LIMIT, TIF.GTC, qty, price
    order.stop_price = order.display_qty = None
    order.owner, order.smp, order.status = owner, SelfMatch.NONE, OrderStatus.NEW
    order.filled_qty, order.remaining_qty, order.visible_qty = 0, qty, qty
    order.arrival_seq = order.timestamp_ns = 0
    return order


def describe(order: Order) -> str:
    """``"o1 BUY 100 @ 10000 by ana (NEW)"``: what a holder of the reference would read."""
    return f"{order.id} {order.side.value} {order.qty} @ {order.price} by {order.owner} ({order.status.value})"


_VALUES: dict[str, Any] = {
    "id": "o1", "symbol": "EDU", "side": Side.BUY, "order_type": OrderType.LIMIT, "tif": TIF.GTC, "qty": 5,
    "price": 10_000, "stop_price": None, "display_qty": None, "owner": "ana", "smp": SelfMatch.NONE,
    "status": OrderStatus.NEW, "filled_qty": 0, "remaining_qty": 5, "visible_qty": 5, "arrival_seq": 1,
    "timestamp_ns": 0,
}


def _writes() -> str:
    # One statement per slot, in slot order, each reading a prepared value: no dict lookups timed.
    return "\n".join(f"o.{name} = v_{name}" for name in Order.__slots__)


def allocation_costs(*, repeat: int = 5, target: float = 0.02) -> list[Measurement]:
    """Time one filled ``Order`` three ways; returns ``[__init__, __new__ + slots, pool]`` (seconds per order).

    In the first two the previous order is freed (reference counting) when ``o``
    is rebound, inside the timed loop; the pool's release is timed too, so each
    contender pays for the whole life of one order.
    """
    if set(_VALUES) != set(Order.__slots__):
        raise RuntimeError("Order's fields changed: update pooling._VALUES")
    names: dict[str, Any] = {f"v_{k}": v for k, v in _VALUES.items()}
    names.update(Order=Order, new=object.__new__)
    args = ", ".join(f"v_{name}" for name in Order.__slots__)
    return [
        measure(f"o = Order({args})", globals=names, repeat=repeat, target=target, label="Order(...) (generated __init__)"),
        measure("o = new(Order)\n" + _writes(), globals=names, repeat=repeat, target=target,
                label="object.__new__ + 17 slot writes"),
        measure("o = acquire()\n" + _writes() + "\nrelease(o)", globals=names, repeat=repeat, target=target,
                setup="pool = [new(Order) for _ in range(8)]\nacquire, release = pool.pop, pool.append",
                label="pool: acquire + 17 slot writes + release"),
    ]


def stale_reference() -> tuple[list[tuple[str, str]], bool]:
    """Play the hazard: return ``(moment, what the dashboard's reference shows)`` rows, and whether it is the new order."""
    pool = OrderPool()
    rows: list[tuple[str, str]] = []
    first = fill(pool.acquire(), "o1", Side.BUY, 100, 10_000, "ana")
    recent = [first]  # a dashboard's list of recent orders: it keeps a reference
    rows.append(("o1 accepted; the dashboard keeps a reference", describe(recent[0])))
    first.status, first.filled_qty, first.remaining_qty = OrderStatus.FILLED, 100, 0
    rows.append(("o1 filled", describe(recent[0])))
    pool.release(first)
    rows.append(("o1 released to the pool", describe(recent[0])))
    second = fill(pool.acquire(), "o2", Side.SELL, 7, 10_010, "ben")
    rows.append(("o2 accepted: the pool hands out o1's object", describe(recent[0])))
    return rows, recent[0] is second


class _Small:
    __slots__ = ("a", "b")

    def __init__(self, a: int, b: int) -> None:
        self.a, self.b = a, b


def address_reuse(n: int = 1_000) -> dict[str, tuple[int, int]]:
    """For each kind of object: distinct addresses among ``n`` made and dropped at once, and among ``n`` kept.

    CPython's ``id()`` is the object's address. Objects freed one after another
    go back to the allocator (pymalloc's pools, or a type's own free list) and the
    next one of the same size usually lands in the same place. Kept objects need
    ``n`` distinct addresses, of course; they are the comparison.
    """
    makers: dict[str, Callable[[int], object]] = {
        "slotted object (2 fields)": lambda i: _Small(i, i),
        "tuple of two ints": lambda i: (i, -i),
        "float": lambda i: i + 0.5,
        "list of one int": lambda i: [i],
    }
    out: dict[str, tuple[int, int]] = {}
    for kind, make in makers.items():
        dropped: set[int] = set()
        for i in range(n):
            x = make(i)
            dropped.add(id(x))
            del x
        kept = [make(i) for i in range(n)]
        out[kind] = (len(dropped), len({id(x) for x in kept}))
        del kept
    return out


STRUCTURES: dict[str, Callable[[int], object]] = {
    "ints in a preallocated list (a ring)": lambda n: LatencyRing(1 << max(0, (n - 1).bit_length())).duration_ns,
    "deque(maxlen=64) after n appends": lambda n: deque(range(n), maxlen=64),
    "dicts of ints, one per item": lambda n: [{"qty": i, "price": i} for i in range(n)],
    "tuples of two ints, one per item": lambda n: [(i, -i) for i in range(n)],
    "Order objects, one per item": lambda n: [fill(object.__new__(Order), f"o{i}", Side.BUY, 1, i, "ana") for i in range(n)],
}
"""Ways to hold ``n`` values, by name: each builder returns the structure."""


@dataclass(frozen=True)
class TrackedRow:
    """How many tracked objects one structure of ``n`` items adds, right after building and after a collection."""

    structure: str
    n: int
    after_build: int
    after_collection: int


def _tracked() -> int:
    return len(gc.get_objects())


def tracked_added(n: int = 10_000) -> list[TrackedRow]:
    """Build each of ``STRUCTURES`` with ``n`` items; count the tracked objects it adds, before and after ``gc.collect()``.

    The second count matters for tuples: CPython tracks a new tuple, and a
    collection stops tracking the ones that hold only untracked values. Automatic
    collection is off while each structure is built (and restored), so the first
    count is the state at creation, before any collection had a chance to look.
    O(structures x objects in the process).
    """
    rows: list[TrackedRow] = []
    was = gc.isenabled()
    gc.collect()  # settle: the first collection also untracks whatever earlier code left behind
    for name, build in STRUCTURES.items():
        gc.collect()
        base = _tracked()
        gc.disable()
        try:
            structure = build(n)
            built = _tracked() - base
        finally:
            if was:
                gc.enable()
        gc.collect()
        collected = _tracked() - base
        rows.append(TrackedRow(name, n, built, collected))
        del structure
    gc.collect()
    return rows


def structure_pause(name: str, n: int, *, repeat: int = 5) -> tuple[Measurement, int]:
    """A full collection's pause with ``STRUCTURES[name]`` of ``n`` items alive, and the tracked objects it adds."""
    if name not in STRUCTURES:
        raise ValueError(f"unknown structure {name!r}; choose one of {list(STRUCTURES)}")
    gc.collect()
    base = _tracked()
    structure = STRUCTURES[name](n)
    gc.collect()
    added = _tracked() - base
    pause = measure(gc.collect, number=1, repeat=repeat, label=f"with {n:,} {name}")
    del structure
    return pause, added
