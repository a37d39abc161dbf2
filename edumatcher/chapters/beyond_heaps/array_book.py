"""Beyond heaps: price levels in parallel arrays, what that costs from Python, and what it costs in memory.

Open Exchange's write-up (quoted, a Java engine) describes a book that mapped a price straight to
an array slot, ``slot = (price - base) / tick``: O(1) lookups and no pointers, but
memory fixed by the configured price range rather than by the orders resting.

``TickColumns`` is that layout for one side of a book: the order count and
the displayed quantity of every tick between ``low`` and ``high`` live in two
parallel ``array.array('q')`` columns indexed by ``price - low``. It is the
layout only (add a level, read the best levels by a scan): the level store built
on it, best prices kept and removals checked, is chapter 12's graded exercise
(``exercises/12_array_level_store.ipynb``) and is not written here.

``scalar_access_costs`` compares, in interleaved rounds, reading single elements
from Python out of a ``list``, an ``array.array`` and a NumPy array, and the
list loop against NumPy's own vectorised sum:
every read from a typed array must build ("box") a Python object for the value,
which is why arrays of machine numbers are not faster from Python code.
``level_memory`` measures, with ``tracemalloc``, the bytes held by a
``TickColumns`` and by a dict-of-levels index like ``OrderBook``'s.

>>> bids = TickColumns(100, 120, "bid")
>>> bids.add(105, 30); bids.add(110, 5); bids.add(110, 7)
>>> bids.depth(2)
[(110, 2, 12), (105, 1, 30)]
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from edumatcher.kit import Comparison, Measurement, bytes_kept, compare_interleaved

__all__ = [
    "TickColumns", "dict_levels", "READ_LOOP", "AccessCosts", "scalar_access_costs", "LevelMemory", "level_memory",
    "level_memory_rows", "level_memory_isolated",
]


class TickColumns:
    """One side's order count and quantity per tick, in two parallel arrays indexed by ``price - low``.

    The layout only: ``add`` writes a level, ``depth`` reads the best levels by
    scanning from the best end of the range (the highest tick for bids, the
    lowest for asks), so it costs O(range) however few levels are occupied.
    What a book needs on top of it (both sides, the best price kept in O(1) as
    levels empty, removals checked) is chapter 12's graded exercise, and is
    deliberately not here.

    Contract: prices are int ticks within ``[low, high]`` and ``qty`` is positive
    (``ValueError`` otherwise, nothing changed); ``side`` is ``"bid"`` (best =
    highest) or ``"ask"`` (best = lowest). Memory is ``2 * 8 * (high - low + 1)``
    bytes whatever the number of orders.

    >>> asks = TickColumns(100, 104, "ask")
    >>> asks.add(103, 4); asks.add(101, 2); asks.add(103, 1)
    >>> asks.depth(5), len(asks), asks.nbytes
    ([(101, 1, 2), (103, 2, 5)], 2, 80)
    """

    __slots__ = ("low", "high", "side", "count", "qty", "_levels")

    def __init__(self, low: int, high: int, side: str) -> None:
        if side not in ("bid", "ask"):
            raise ValueError(f"side must be 'bid' or 'ask', not {side!r}")
        if not isinstance(low, int) or not isinstance(high, int) or high < low:
            raise ValueError(f"need int ticks with low <= high, got {low!r}, {high!r}")
        self.low, self.high, self.side = low, high, side
        size = high - low + 1
        # Zero-filled in one exact allocation: filling from bytes(8 * size) would
        # over-allocate by 1/16 (array_resize's growth rule), 17 bytes a tick, not 16.
        self.count = array("q", [0]) * size
        self.qty = array("q", [0]) * size
        self._levels = 0

    def _index(self, price: int) -> int:
        if not self.low <= price <= self.high:
            raise ValueError(f"price {price} is outside the range [{self.low}, {self.high}]")
        return price - self.low

    def add(self, price: int, qty: int) -> None:
        """Add one order of ``qty`` at ``price``: one subtraction to find the slot, two writes. O(1)."""
        if qty <= 0:
            raise ValueError(f"qty must be positive, not {qty!r}")
        i = self._index(price)
        if not self.count[i]:
            self._levels += 1
        self.count[i] += 1
        self.qty[i] += qty

    def count_at(self, price: int) -> int:
        """Orders resting at ``price``. O(1)."""
        return self.count[self._index(price)]

    def qty_at(self, price: int) -> int:
        """Quantity resting at ``price``. O(1)."""
        return self.qty[self._index(price)]

    def depth(self, levels: int) -> list[tuple[int, int, int]]:
        """``(price, count, qty)`` of the best ``levels`` occupied levels, best first. O(range) in the worst case."""
        out: list[tuple[int, int, int]] = []
        count, qty = self.count, self.qty
        indexes = range(len(count) - 1, -1, -1) if self.side == "bid" else range(len(count))
        for j in indexes:
            if len(out) >= levels:
                break
            if count[j]:
                out.append((self.low + j, count[j], qty[j]))
        return out

    def __len__(self) -> int:
        """Occupied levels. O(1)."""
        return self._levels

    @property
    def nbytes(self) -> int:
        """Bytes of the two columns' buffers (not counting the small array headers)."""
        return (len(self.count) + len(self.qty)) * self.count.itemsize

    def __repr__(self) -> str:
        return f"TickColumns({self.low}, {self.high}, {self.side!r}, levels={self._levels})"


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


def _held(build: Callable[[], object]) -> int:
    """Bytes still allocated after calling ``build()`` (tracemalloc), keeping its result alive while counting."""
    return bytes_kept(build)[0]


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

    def build_array() -> TickColumns:
        store = TickColumns(low, high, "bid")
        for price, qty in book:
            store.add(price, qty)
        return store

    occupied = len({p for p, _ in book})
    return LevelMemory(price_range, orders, occupied, _held(build_array), _held(lambda: dict_levels(book)))


def level_memory_rows(specs: Sequence[dict[str, int]]) -> list[dict[str, int]]:
    """``level_memory(**spec)`` for each spec, as plain dicts: the target ``level_memory_isolated`` runs in a fresh process.

    >>> level_memory_rows([{"price_range": 10, "orders": 3}])[0]["occupied_levels"] <= 3
    True
    """
    return [asdict(level_memory(**spec)) for spec in specs]


def level_memory_isolated(specs: Sequence[dict[str, int]]) -> list[LevelMemory]:
    """``level_memory`` for each spec, measured in one fresh interpreter (``edumatcher.kit._worker``).

    A notebook kernel is a poor place to trace memory: every ``gc.collect()`` that
    ``_held`` makes walks the kernel's whole heap (IPython, matplotlib, earlier
    cells), and its other threads allocate while tracing runs. A fresh process has
    neither, and its heap goes away with it.
    """
    from edumatcher.kit import run_isolated

    return [LevelMemory(**row) for row in run_isolated(f"{__name__}:level_memory_rows", {"specs": list(specs)})]
