"""Beyond heaps: price levels in parallel arrays, what that costs from Python, and what it costs in memory.

Seed 002 (quoted, a Java engine) describes a book that mapped a price straight to
an array slot, ``slot = (price - base) / tick``: O(1) lookups and no pointers, but
memory fixed by the configured price range rather than by the orders resting.

``ArrayLevels`` is a small version for one side of a book: the order count and
the displayed quantity of every tick between ``low`` and ``high`` live in two
parallel ``array.array('q')`` columns indexed by ``price - low``. The best price
is remembered and, when its level empties, found again by scanning towards worse
prices (O(range) in the worst case, O(1) when the next level is close).

``scalar_access_costs`` compares, in interleaved rounds, reading single elements
from Python out of a ``list``, an ``array.array`` and a NumPy array, and the
list loop against NumPy's own vectorised sum:
every read from a typed array must build ("box") a Python object for the value,
which is why arrays of machine numbers are not faster from Python code.
``level_memory`` measures, with ``tracemalloc``, the bytes held by an
``ArrayLevels`` and by a dict-of-levels index like ``OrderBook``'s.

>>> bids = ArrayLevels(100, 120, "bid")
>>> bids.add(105, 30); bids.add(110, 5); bids.add(110, 7)
>>> bids.best, bids.depth(2)
(110, [(110, 2, 12), (105, 1, 30)])
>>> bids.remove(110, 5); bids.remove(110, 7); bids.best
105
"""

from __future__ import annotations

import gc
import tracemalloc
from array import array
from collections.abc import Sequence
from dataclasses import dataclass

from ..comparison import Comparison, compare_interleaved
from ..measure import Measurement

__all__ = [
    "ArrayLevels", "dict_levels", "READ_LOOP", "AccessCosts", "scalar_access_costs", "LevelMemory", "level_memory",
]


class ArrayLevels:
    """One side's price levels in two parallel arrays indexed by ``price - low``.

    Contract: prices are int ticks within ``[low, high]`` (``ValueError``
    otherwise); ``side`` is ``"bid"`` (best = highest) or ``"ask"`` (best = lowest).
    ``remove`` must name quantity that is there. Memory is ``2 * 8 * (high - low + 1)``
    bytes whatever the number of orders.

    Methods: ``add``, ``remove`` (O(1), plus a scan for the next best level when
    the best empties); ``count_at``, ``qty_at``, ``best``, ``len`` (O(1));
    ``depth(n)`` (O(distance scanned)); ``nbytes``; ``check_invariants`` (O(range)).
    """

    __slots__ = ("low", "high", "side", "count", "qty", "best", "_levels")

    def __init__(self, low: int, high: int, side: str) -> None:
        if side not in ("bid", "ask"):
            raise ValueError(f"side must be 'bid' or 'ask', not {side!r}")
        if not isinstance(low, int) or not isinstance(high, int) or high < low:
            raise ValueError(f"need int ticks with low <= high, got {low!r}, {high!r}")
        self.low, self.high, self.side = low, high, side
        size = high - low + 1
        self.count = array("q", bytes(8 * size))  # zero-filled in one allocation
        self.qty = array("q", bytes(8 * size))
        self.best: int | None = None
        self._levels = 0

    def _index(self, price: int) -> int:
        if not self.low <= price <= self.high:
            raise ValueError(f"price {price} is outside the store's range [{self.low}, {self.high}]")
        return price - self.low

    def _better(self, a: int, b: int) -> bool:
        return a > b if self.side == "bid" else a < b

    def add(self, price: int, qty: int) -> None:
        """Add one order of ``qty`` at ``price``. O(1)."""
        if qty <= 0:
            raise ValueError(f"qty must be positive, not {qty!r}")
        i = self._index(price)
        if not self.count[i]:
            self._levels += 1
        self.count[i] += 1
        self.qty[i] += qty
        if self.best is None or self._better(price, self.best):
            self.best = price

    def remove(self, price: int, qty: int) -> None:
        """Remove one order of ``qty`` at ``price``; if that empties the best level, find the next. O(1) + scan.

        ``ValueError``, with nothing changed, if no such order can be there: the
        level is empty, or the removal would leave less quantity than orders
        (every resting order holds at least 1), which includes leaving quantity
        with no order to hold it.
        """
        i = self._index(price)
        count, left = self.count[i], self.qty[i]
        if not count or qty <= 0 or left - qty < count - 1 or (count == 1 and qty != left):
            raise ValueError(f"no order of {qty} to remove at {price} (count {count}, qty {left})")
        self.count[i] = count - 1
        self.qty[i] = left - qty
        if count > 1:
            return
        self._levels -= 1
        if price == self.best:
            self.best = self._next_from(i)

    def _next_from(self, i: int) -> int | None:
        """The first non-empty level from index ``i`` towards worse prices, or None."""
        count = self.count
        step, stop = (-1, -1) if self.side == "bid" else (1, len(count))
        for j in range(i, stop, step):
            if count[j]:
                return self.low + j
        return None

    def count_at(self, price: int) -> int:
        """Orders resting at ``price``. O(1)."""
        return self.count[self._index(price)]

    def qty_at(self, price: int) -> int:
        """Quantity resting at ``price``. O(1)."""
        return self.qty[self._index(price)]

    def depth(self, levels: int) -> list[tuple[int, int, int]]:
        """``(price, count, qty)`` of the best ``levels`` non-empty levels, best first. O(ticks scanned)."""
        out: list[tuple[int, int, int]] = []
        if self.best is None:
            return out
        count, qty = self.count, self.qty
        step, stop = (-1, -1) if self.side == "bid" else (1, len(count))
        for j in range(self.best - self.low, stop, step):
            if count[j]:
                out.append((self.low + j, count[j], qty[j]))
                if len(out) == levels:
                    break
        return out

    def __len__(self) -> int:
        """Non-empty levels. O(1)."""
        return self._levels

    @property
    def nbytes(self) -> int:
        """Bytes of the two columns' buffers (not counting the small array headers)."""
        return (len(self.count) + len(self.qty)) * self.count.itemsize

    def check_invariants(self) -> None:
        """Recompute the level count and the best price from the arrays; ``AssertionError`` with the state if wrong."""
        occupied = [self.low + j for j, c in enumerate(self.count) if c]
        best = (max(occupied) if self.side == "bid" else min(occupied)) if occupied else None
        state = f"{self!r}: occupied {occupied[:10]}{'...' if len(occupied) > 10 else ''}"
        assert len(occupied) == self._levels, f"level count {self._levels} != {len(occupied)}; {state}"
        assert best == self.best, f"best {self.best} != {best}; {state}"
        for j, c in enumerate(self.count):
            assert c >= 0 and self.qty[j] >= 0 and (c > 0 or self.qty[j] == 0), f"bad level {self.low + j}; {state}"

    def __repr__(self) -> str:
        return f"ArrayLevels({self.low}, {self.high}, {self.side!r}, levels={self._levels}, best={self.best})"


def dict_levels(orders: Sequence[tuple[int, int]]) -> dict[int, list[int]]:
    """A dict-of-levels index like ``OrderBook._bid_levels``: price -> ``[count, qty]``, only for occupied prices.

    >>> dict_levels([(101, 5), (101, 2), (99, 1)])
    {101: [2, 7], 99: [1, 1]}
    """
    levels: dict[int, list[int]] = {}
    for price, qty in orders:
        level = levels.get(price)
        if level is None:
            levels[price] = [1, qty]
        else:
            level[0] += 1
            level[1] += qty
    return levels


READ_LOOP = "total = 0\nfor i in positions:\n    total += {xs}[i]"
"""The timed loop of ``scalar_access_costs``: read every element of ``{xs}`` once, by index, from Python."""


@dataclass(frozen=True)
class AccessCosts:
    """Three interleaved comparisons of reading ``n`` ints; samples are seconds per pass, ``per_op`` per element.

    ``array_vs_list`` and ``numpy_vs_list``: ``READ_LOOP`` over a typed array (a)
    against the same loop over a list (b). ``loop_vs_c``: ``READ_LOOP`` over the
    list (a) against ``xs_numpy.sum()`` (b), the loop in C.
    """

    array_vs_list: Comparison
    numpy_vs_list: Comparison
    loop_vs_c: Comparison

    @property
    def measurements(self) -> list[Measurement]:
        """``[list, array.array, numpy, numpy sum()]``, for a table or a chart (the list from ``array_vs_list``)."""
        return [self.array_vs_list.b, self.array_vs_list.a, self.numpy_vs_list.a, self.loop_vs_c.b]


def scalar_access_costs(n: int = 10_000, *, budget: float = 1.0, target: float = 0.01) -> AccessCosts:
    """Per-element cost of summing ``n`` ints by index from Python: list, ``array.array``, NumPy; and NumPy's ``sum()``.

    Each sample runs ``READ_LOOP`` over ``xs_list``, ``xs_array`` or ``xs_numpy``
    (``ops_per_call = n``; the three names are globals of one namespace, so every
    loop pays the same lookups); the comparisons are interleaved and adaptive
    (``comparison.compare_interleaved``, about ``budget`` seconds each).
    """
    import numpy as np  # a course dependency; imported here so the engine never needs it

    values = list(range(n))
    names = {"xs_list": values, "xs_array": array("q", values), "xs_numpy": np.array(values, dtype=np.int64),
             "positions": range(n)}
    labels = {"xs_list": "list, read from Python", "xs_array": "array.array('q'), read from Python",
              "xs_numpy": "numpy int64 array, read from Python"}

    def against(stmt_a: str, stmt_b: str, label_a: str, label_b: str) -> Comparison:
        return compare_interleaved(stmt_a, stmt_b, globals=names, labels=(label_a, label_b), budget=budget,
                                   target=target, ops_per_call=n)

    def loop(name: str) -> str:
        return READ_LOOP.format(xs=name)

    return AccessCosts(
        against(loop("xs_array"), loop("xs_list"), labels["xs_array"], labels["xs_list"]),
        against(loop("xs_numpy"), loop("xs_list"), labels["xs_numpy"], labels["xs_list"]),
        against(loop("xs_list"), "xs_numpy.sum()", labels["xs_list"], "numpy sum(), the loop in C"),
    )


@dataclass(frozen=True)
class LevelMemory:
    """Bytes held by each structure for one price range and one set of resting orders."""

    price_range: int
    orders: int
    occupied_levels: int
    array_bytes: int
    dict_bytes: int

    @property
    def array_bytes_per_tick(self) -> float:
        """What the array store pays for each tick of the range, occupied or not."""
        return self.array_bytes / self.price_range

    @property
    def dict_bytes_per_level(self) -> float:
        """What the dict pays for each occupied level (0 when none is)."""
        return self.dict_bytes / self.occupied_levels if self.occupied_levels else 0.0

    @property
    def break_even_occupancy(self) -> float:
        """Share of ticks that must be occupied before the dict holds more than the arrays.

        >>> LevelMemory(100, 10, 10, 1_600, 1_500).break_even_occupancy
        0.1066...
        """
        per_level = self.dict_bytes_per_level
        return self.array_bytes_per_tick / per_level if per_level else float("inf")


def _held(build: object) -> int:
    """Bytes still allocated after calling ``build()`` (tracemalloc), keeping its result alive while counting."""
    gc.collect()
    started_here = not tracemalloc.is_tracing()
    if started_here:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = build()  # type: ignore[operator]
        held = tracemalloc.get_traced_memory()[0] - before
        del kept
    finally:
        if started_here:
            tracemalloc.stop()
    return held


def level_memory(price_range: int, orders: int, *, spread: int | None = None, seed: int = 1) -> LevelMemory:
    """Measure both level stores for ``orders`` orders on one side, prices within ``spread`` ticks of the best.

    The array store always spans ``price_range`` ticks; the dict holds only the
    occupied levels (at most ``min(spread, orders)``). ``spread`` defaults to
    ``min(price_range, 200)``: resting orders gather near the touch however wide
    the range allowed is. Prices are drawn with a seeded ``random.Random``.
    """
    import random

    if price_range < 1 or orders < 0:
        raise ValueError(f"need price_range >= 1 and orders >= 0, got {price_range}, {orders}")
    spread = min(price_range, 200) if spread is None else min(spread, price_range)
    rnd = random.Random(seed)
    low, high = 1, price_range
    book = [(high - int(rnd.random() * spread), 1 + int(rnd.random() * 100)) for _ in range(orders)]

    def build_array() -> ArrayLevels:
        store = ArrayLevels(low, high, "bid")
        for price, qty in book:
            store.add(price, qty)
        return store

    occupied = len({p for p, _ in book})
    return LevelMemory(price_range, orders, occupied, _held(build_array), _held(lambda: dict_levels(book)))
