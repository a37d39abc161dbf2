"""The Java question, measured: pooling ``Order`` objects against allocating them, and what pooling risks.

* ``OrderPool`` is the pool a Java habit would write: a free list of ``Order``
  objects, ``acquire`` and ``release``.
* ``allocation_costs`` compares three ways to get a filled ``Order`` in a fresh
  worker process: the generated ``__init__``, ``object.__new__`` plus one write
  per slot (``Order.from_dict``'s way), and a pool's acquire, the same slot
  writes, and release (``allocation_code`` holds the timed statements).
* ``stale_reference`` shows the hazard: a pool hands out an object that someone
  still holds, and the holder sees another order's data.
* ``address_reuse`` shows CPython's allocator doing the pooling already: objects
  freed one after another come back at the same few addresses.
* ``tracked_added`` counts how many objects the cyclic collector tracks for
  each way of holding n values in ``held_values.HOLDINGS`` (``held_values``
  times what each adds to a full collection, in a fresh process).

>>> rows, same = stale_reference()
>>> same, rows[-1][1]
(True, 'o2 SELL 7 @ 10010 by ben (NEW)')
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from edumatcher.kit import Comparison, Measurement, compare_interleaved, run_isolated
from edumatcher.kit._runner import _interleave_ids
from edumatcher.model import TIF, Order, OrderStatus, OrderType, SelfMatch, Side

from .held_values import HOLDINGS

__all__ = [
    "OrderPool", "fill", "describe", "INIT_LABEL", "NEW_LABEL", "POOL_LABEL", "POOL_SETUP", "allocation_code",
    "allocation_worker", "AllocationCosts", "allocation_costs", "stale_reference", "address_reuse",
    "TrackedRow", "tracked_counts", "tracked_added",
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
    order.cancel_reason = None
    return order


def describe(order: Order) -> str:
    """``"o1 BUY 100 @ 10000 by ana (NEW)"``: what a holder of the reference would read."""
    return f"{order.id} {order.side.value} {order.qty} @ {order.price} by {order.owner} ({order.status.value})"


_VALUES: dict[str, Any] = {
    "id": "o1", "symbol": "EDU", "side": Side.BUY, "order_type": OrderType.LIMIT, "tif": TIF.GTC, "qty": 5,
    "price": 10_000, "stop_price": None, "display_qty": None, "owner": "ana", "smp": SelfMatch.NONE,
    "status": OrderStatus.NEW, "filled_qty": 0, "remaining_qty": 5, "visible_qty": 5, "arrival_seq": 1,
    "timestamp_ns": 0, "cancel_reason": None,
}


def _writes() -> str:
    # One statement per slot, in slot order, each reading a prepared value: no dict lookups timed.
    return "\n".join(f"o.{name} = v_{name}" for name in Order.__slots__)


INIT_LABEL = "Order(...) (generated __init__)"
NEW_LABEL = f"object.__new__ + {len(Order.__slots__)} slot writes"
POOL_LABEL = f"pool: acquire + {len(Order.__slots__)} slot writes + release"

POOL_SETUP = "pool = [new(Order) for _ in range(8)]\nacquire, release = pool.pop, pool.append"
"""Run before every sample, untimed: a small free list, and its two methods bound to local names."""


def allocation_code(*, abbreviate: bool = False) -> dict[str, str]:
    """The three timed statements, by label: each gives ``o`` a filled ``Order`` and pays for the whole life of one.

    They run in a namespace holding ``Order``, ``new = object.__new__`` and a
    prepared value ``v_<slot>`` per slot, after ``POOL_SETUP``. In the first two
    the previous order is freed (reference counting) when ``o`` is rebound, inside
    the timed loop; the pool's release is timed too. ``abbreviate`` shows the
    slot writes as one line, for printing.

    >>> allocation_code(abbreviate=True)[POOL_LABEL].splitlines()[0]
    'o = acquire()'
    """
    writes = _writes()
    if abbreviate:
        first = writes.splitlines()[:2]
        writes = "; ".join(first) + f"; ...  ({len(Order.__slots__)} slot writes)"
    args = ", ".join(f"v_{name}" for name in Order.__slots__)
    if abbreviate:
        args = f"v_{Order.__slots__[0]}, v_{Order.__slots__[1]}, ..."
    return {
        INIT_LABEL: f"o = Order({args})",
        NEW_LABEL: "o = new(Order)\n" + writes,
        POOL_LABEL: "o = acquire()\n" + writes + "\nrelease(o)",
    }


def _namespace() -> dict[str, Any]:
    if set(_VALUES) != set(Order.__slots__):
        raise RuntimeError("Order's fields changed: update pooling._VALUES")
    names: dict[str, Any] = {f"v_{k}": v for k, v in _VALUES.items()}
    names.update(Order=Order, new=object.__new__)
    return names


def _as_data(c: Comparison) -> dict[str, Any]:
    """What the parent needs to rebuild ``c``: plain lists and numbers (JSON)."""
    return {"labels": list(c.names), "a": list(c.a.samples), "b": list(c.b.samples), "number_a": c.a.number,
            "number_b": c.b.number, "rounds": c.rounds, "stop_reason": c.stop_reason, "gc_enabled": c.a.gc_enabled,
            "clock": c.a.clock}


def _from_data(data: dict[str, Any], where: str) -> Comparison:
    """Rebuild a paired ``Comparison`` from ``_as_data``; ``where`` is appended to both labels."""
    shared = {"warmup": 1, "gc_enabled": data["gc_enabled"], "interleave_id": next(_interleave_ids),
              "clock": data.get("clock", "wall time")}
    a = Measurement.from_samples(data["a"], number=data["number_a"], label=data["labels"][0] + where, **shared)
    b = Measurement.from_samples(data["b"], number=data["number_b"], label=data["labels"][1] + where, **shared)
    return Comparison(a, b, paired=True, rounds=data["rounds"], stop_reason=data["stop_reason"])


def allocation_worker(budget: float = 1.2, target: float = 0.01) -> dict[str, Any]:
    """The worker side of ``allocation_costs``: both comparisons, as plain data. Runs in any process."""
    from scipy import stats  # noqa: F401  (imported before timing, so the heap does not change mid-comparison)

    code, names = allocation_code(), _namespace()
    pool = compare_interleaved(code[POOL_LABEL], code[NEW_LABEL], labels=(POOL_LABEL, NEW_LABEL), setup=POOL_SETUP,
                               globals=names, budget=budget, target=target)
    init = compare_interleaved(code[INIT_LABEL], code[NEW_LABEL], labels=(INIT_LABEL, NEW_LABEL), globals=names,
                               budget=budget, target=target)
    return {"pool_vs_new": _as_data(pool), "init_vs_new": _as_data(init), "pid": os.getpid()}


@dataclass(frozen=True)
class AllocationCosts:
    """Two interleaved comparisons of ways to get a filled ``Order`` (seconds per order).

    ``pool_vs_new``: the pool (a) against ``object.__new__`` plus slot writes (b);
    ``init_vs_new``: the generated ``__init__`` (a) against the same (b).
    ``isolated`` says whether they ran in a fresh worker process; ``gc_enabled``
    whether the collector was on while timing.
    """

    pool_vs_new: Comparison
    init_vs_new: Comparison
    isolated: bool

    @property
    def gc_enabled(self) -> bool:
        """Whether the collector was on while the samples were taken."""
        return self.pool_vs_new.a.gc_enabled

    @property
    def measurements(self) -> list[Measurement]:
        """``[__init__, __new__ + slots, pool]``, for a table or a chart (``__new__`` from the pool comparison)."""
        return [self.init_vs_new.a, self.pool_vs_new.b, self.pool_vs_new.a]

    @property
    def where(self) -> str:
        """One line: where and how the samples were taken."""
        place = "in a fresh worker process" if self.isolated else "in this process"
        return f"measured {place}, collector {'on' if self.gc_enabled else 'off'} while timing"


def allocation_costs(*, budget: float = 1.2, target: float = 0.01, isolated: bool = True,
                     timeout: float = 120.0) -> AllocationCosts:
    """Compare the pool and ``__init__`` each against ``object.__new__`` plus slot writes (``allocation_code``).

    Interleaved, adaptive rounds (``comparison.compare_interleaved``, about
    ``budget`` seconds each). With ``isolated`` (the default) both run in a fresh
    worker process (``edumatcher.kit._worker.run_isolated``): what allocating costs
    depends on the heap it allocates from, and a notebook kernel's heap holds
    whatever earlier cells left. The collector stays on, as in the engine.
    """
    kwargs = {"budget": budget, "target": target}
    if isolated:
        got = run_isolated("edumatcher.chapters.the_java_question.pooling:allocation_worker", kwargs, timeout=timeout)
    else:
        got = allocation_worker(**kwargs)
    where = " (fresh process)" if isolated else ""
    return AllocationCosts(_from_data(got["pool_vs_new"], where), _from_data(got["init_vs_new"], where), isolated)


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


@dataclass(frozen=True)
class TrackedRow:
    """How many tracked objects one structure of ``n`` items adds, right after building and after a collection."""

    structure: str
    n: int
    after_build: int
    after_collection: int


def _tracked() -> int:
    return len(gc.get_objects())


def tracked_counts(n: int = 10_000) -> list[list[Any]]:
    """Build each of ``held_values.HOLDINGS`` with ``n`` items; count the tracked objects it adds, before and after ``gc.collect()``.

    Returns ``[name, n, after_build, after_collection]`` rows (JSON-able, for a
    worker). The second count matters for tuples: CPython tracks a new tuple, and
    a collection stops tracking the ones that hold only untracked values.
    Automatic collection is off while each structure is built (and restored), so
    the first count is the state at creation, before any collection had a chance
    to look. O(structures x objects in the process).
    """
    rows: list[list[Any]] = []
    was = gc.isenabled()
    gc.collect()  # settle: the first collection also untracks whatever earlier code left behind
    for name, build in HOLDINGS.items():
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
        rows.append([name, n, built, collected])
        del structure
    gc.collect()
    return rows


def tracked_added(n: int = 10_000, *, isolated: bool = True, timeout: float = 60.0) -> list[TrackedRow]:
    """``tracked_counts(n)`` as ``TrackedRow`` objects, counted in a fresh worker process by default.

    Counting is ``len(gc.get_objects())`` around full collections: in a notebook
    kernel that tracks hundreds of thousands of objects each of those takes a
    good part of a second on a busy machine, in a fresh process a few milliseconds.
    The counts are the same wherever they are taken.
    """
    if isolated:
        got = run_isolated("edumatcher.chapters.the_java_question.pooling:tracked_counts", {"n": n}, timeout=timeout)
    else:
        got = tracked_counts(n)
    return [TrackedRow(name, int(size), int(built), int(collected)) for name, size, built, collected in got]
