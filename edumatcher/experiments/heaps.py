"""Chapter 05's experiments: lazy against eager deletion, compaction factors, and what features cost.

* ``deletion_costs``: cancelling orders from a heap of ``n`` entries, three ways:
  the eager way (``list.remove`` then ``heapify``: O(n) per cancel), the lazy way
  on the same heap (find the entry by id, flip its ``valid`` flag: O(1)), and the
  real ``OrderBook.cancel``.
* ``compaction_sweep``: one ``cancel_heavy`` workload through books with different
  ``compact_factor`` values: the peak number of heap entries, how many rebuilds,
  and the time taken.
* ``bare_vs_full``: ``BareBook`` and ``OrderBook`` on the same ``standard`` workload.
* ``entry_layouts``: five ways to write a heap entry, and what each costs: a push
  and a pop, tracked objects per resting order, and a young collection over the
  entries filed since the last one (why ``book.py`` chose one int key per order,
  with the order in a dict).

>>> rows = compaction_sweep([2], n=300, repeat=5)
>>> rows[0].factor, rows[0].peak_entries >= rows[0].peak_live
(2, True)
"""

from __future__ import annotations

import gc
import itertools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush
from typing import Any

from ..bare_book import BareBook
from ..book import COMPACT_SLACK, OrderBook, heap_key
from ..measure import Measurement, Pass, collector, interleave, measure, measure_passes
from ..model import TIF, Order, OrderType, Side
from ..workloads import CANCEL, NEW, apply_prepared, cancel_heavy, opening_ramp, prepare, standard

__all__ = [
    "HeapEntry", "resting_heap", "DeletionCosts", "deletion_costs", "CompactionRow", "compaction_sweep",
    "compaction_trace",
    "bare_vs_full", "EntryLayout", "EntryLayoutRow", "ENTRY_LAYOUTS", "entry_layouts", "tracked_per_resting_order",
]


class HeapEntry:
    """A heap entry cut down to what the deletion experiment needs: an order id and a lazy-delete flag.

    (``OrderBook`` marks an entry dead by deleting its int key from a key -> order
    dictionary instead: see ``entry_layouts`` for why.)
    """

    __slots__ = ("order_id", "valid")

    def __init__(self, order_id: str) -> None:
        self.order_id = order_id
        self.valid = True


def resting_heap(n: int, seed: int = 1) -> tuple[list[tuple[int, int, HeapEntry]], dict[str, tuple[int, int, HeapEntry]]]:
    """A bid heap of ``n`` ``(-price, seq, entry)`` items over 50 price levels, and an id -> item index. O(n)."""
    rnd = random.Random(seed).random
    items = [(-(10_000 - int(rnd() * 50)), seq, HeapEntry(f"o{seq}")) for seq in range(1, n + 1)]
    heapify(items)
    return items, {item[2].order_id: item for item in items}


def _cancel_eagerly(state: tuple[list[Any], list[Any]]) -> int:
    heap, doomed = state
    for item in doomed:
        heap.remove(item)  # O(n): find it and close the gap...
        heapify(heap)  # ...O(n): and restore the heap property
    return len(doomed)


def _cancel_lazily(state: tuple[dict[str, Any], list[str]]) -> int:
    index, ids = state
    for order_id in ids:
        index[order_id][2].valid = False  # O(1): the entry stays where it is, marked dead
    return len(ids)


def _cancel_in_book(state: tuple[OrderBook, list[str]]) -> int:
    book, ids = state
    cancel = book.cancel
    for order_id in ids:
        cancel(order_id)
    return len(ids)


def _book_with(n: int, seed: int) -> tuple[OrderBook, list[str]]:
    book = OrderBook("EDU")
    ops = opening_ramp(n, seed=seed)
    apply_prepared(book, prepare(ops))
    ids = [op[1] for op in ops]
    random.Random(seed).shuffle(ids)  # batches from all over the book, not the oldest orders first
    return book, ids


@dataclass(frozen=True)
class DeletionCosts:
    """Per-cancel timings at one heap size (``ops_per_call`` is the number of cancels per pass)."""

    size: int
    eager: Measurement
    lazy: Measurement
    book: Measurement


def deletion_costs(sizes: Sequence[int] = (1_000, 4_000, 16_000), *, cancels: int = 12, repeat: int = 5,
                   seed: int = 1) -> list[DeletionCosts]:
    """Time ``cancels`` random cancels at each heap size, eager against lazy against ``OrderBook.cancel``.

    Every pass starts from a fresh copy (eager, book) or fresh flags (lazy), built
    untimed. The eager pass dominates the cost: about ``cancels * sizes`` steps.
    """
    out = []
    for size in sizes:
        heap, index = resting_heap(size, seed)
        rnd = random.Random(seed + size)
        picked = rnd.sample(sorted(index), min(cancels, size))
        items = [index[i] for i in picked]

        def fresh_flags(index: dict[str, Any] = index, picked: list[str] = picked) -> tuple[dict[str, Any], list[str]]:
            for order_id in picked:
                index[order_id][2].valid = True
            return index, picked

        # One book per size; each pass cancels a fresh batch of its orders (the book
        # shrinks by a few dozen orders in all, which does not change its depth).
        book, ids = _book_with(size, seed)
        batches = iter([ids[i:i + len(picked)] for i in range(0, len(ids), len(picked))][: repeat + 2])
        eager, lazy = interleave(
            [
                Pass(f"eager: list.remove + heapify ({size:,})", _cancel_eagerly,
                     lambda heap=heap, items=items: (list(heap), items), len(items)),
                Pass(f"lazy: flip the flag ({size:,})", _cancel_lazily, fresh_flags, len(picked)),
            ],
            repeat=repeat,
        )
        in_book = measure_passes(_cancel_in_book, lambda book=book, batches=batches: (book, next(batches)),
                                 label=f"OrderBook.cancel ({size:,})", ops_per_call=len(picked), repeat=repeat)
        out.append(DeletionCosts(size, eager, lazy, in_book))
    return out


@dataclass(frozen=True)
class CompactionRow:
    """One ``compact_factor`` on one workload: peak heap entries and live orders, rebuilds, time."""

    factor: float
    peak_entries: int
    peak_live: int
    rebuilds: int
    final_entries: int
    time: Measurement


class _CountingBook(OrderBook):
    """An ``OrderBook`` that counts its compactions (the rebuilds of its heaps)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rebuilds = 0

    def _compact(self) -> None:
        self.rebuilds += 1
        super()._compact()


def _track(book: _CountingBook, prepared: list[tuple[str, Any]], trace: list[tuple[int, int]] | None = None,
           ) -> tuple[int, int, int]:
    """Apply ``prepared`` watching the heaps: (peak entries, peak live orders, rebuilds seen).

    With ``trace``, appends ``(heap entries, live orders)`` after every operation.
    """
    peak = peak_live = 0
    for kind, arg in prepared:
        if kind == NEW:
            book.submit(arg)
        elif kind == CANCEL:
            book.cancel(arg)
        else:
            book.cancel_owner(arg)
        entries, live = book.heap_entries(), len(book)
        peak = max(peak, entries)
        peak_live = max(peak_live, live)
        if trace is not None:
            trace.append((entries, live))
    return peak, peak_live, book.rebuilds


def compaction_trace(factor: float, *, n: int = 3_000, seed: int = 1, slack: int = COMPACT_SLACK,
                     ) -> tuple[list[tuple[int, int]], CompactionRow]:
    """Heap entries and live orders after every operation of ``cancel_heavy(n, seed)``, and the summary row.

    The row's time is a quick measurement (5 passes) of the same workload unwatched.
    """
    ops = cancel_heavy(n, seed=seed)
    book = _CountingBook("EDU", compact_factor=factor, compact_slack=slack)
    trace: list[tuple[int, int]] = []
    peak, live, rebuilds = _track(book, prepare(ops), trace)
    time = measure_passes(lambda state: apply_prepared(*state),
                          lambda: (OrderBook("EDU", compact_factor=factor, compact_slack=slack), prepare(ops)),
                          label=f"compact_factor={factor:g}", ops_per_call=len(ops))
    return trace, CompactionRow(factor, peak, live, rebuilds, book.heap_entries(), time)


def compaction_sweep(factors: Sequence[float] = (1, 2, 4, 8), *, n: int = 6_000, seed: int = 1, repeat: int = 5,
                     slack: int = COMPACT_SLACK) -> list[CompactionRow]:
    """Run ``cancel_heavy(n, seed)`` through an ``OrderBook`` per factor: one watched pass, ``repeat`` timed ones.

    The watched pass counts; the timed passes run the plain ``apply_prepared``
    loop, so watching costs nothing in the times. Factors are timed alternately.
    """
    ops = cancel_heavy(n, seed=seed)
    rows = []
    for factor in factors:
        book = _CountingBook("EDU", compact_factor=factor, compact_slack=slack)
        rows.append((factor, *_track(book, prepare(ops)), book.heap_entries()))
    times = interleave(
        [Pass(f"compact_factor={f:g}", lambda state: apply_prepared(*state),
              lambda f=f: (OrderBook("EDU", compact_factor=f, compact_slack=slack), prepare(ops)), len(ops))
         for f in factors],
        repeat=repeat,
    )
    return [CompactionRow(f, peak, live, rebuilds, final, t)
            for (f, peak, live, rebuilds, final), t in zip(rows, times, strict=True)]


def bare_vs_full(n: int = 20_000, *, seed: int = 1, repeat: int = 5) -> tuple[Measurement, Measurement]:
    """``(BareBook, OrderBook)`` on ``standard(n, seed)``, alternately, fresh orders per pass."""
    ops = standard(n, seed=seed)
    bare, full = interleave(
        [
            Pass("BareBook", lambda state: apply_prepared(*state), lambda: (BareBook("EDU"), prepare(ops)), n),
            Pass("OrderBook", lambda state: apply_prepared(*state), lambda: (OrderBook("EDU"), prepare(ops)), n),
        ],
        repeat=repeat,
    )
    return bare, full


# ---------------------------------------------------------------- entry layouts


class _Payload:
    """Stands in for an ``Order``: one small tracked object per resting order, as in the book."""

    __slots__ = ("id",)

    def __init__(self, order_id: int) -> None:
        self.id = order_id


class _FlagEntry:
    """An entry object inside a key tuple: the order and a lazy-delete flag."""

    __slots__ = ("order", "valid")

    def __init__(self, order: object) -> None:
        self.order, self.valid = order, True


class _KeyedEntry:
    """As ``_FlagEntry``, also keeping its key tuple (``OrderBook``'s first layout)."""

    __slots__ = ("key", "order", "valid")

    def __init__(self, key: tuple[int, int], order: object) -> None:
        self.key, self.order, self.valid = key, order, True


class _OrderedEntry:
    """An entry that is its own heap item, ordered by ``__lt__`` in Python."""

    __slots__ = ("key", "order", "valid")

    def __init__(self, key: tuple[int, int], order: object) -> None:
        self.key, self.order, self.valid = key, order, True

    def __lt__(self, other: _OrderedEntry) -> bool:
        return self.key < other.key


Table = dict[int, object]
"""A layout's side table: key -> order, for the layout that keeps the order outside the heap item."""


@dataclass(frozen=True)
class EntryLayout:
    """One way to write a heap item that can be marked dead in place.

    ``make(k0, k1, order, table)`` builds the item for ``order`` (``table`` is used only
    by a layout that keeps the order outside the item); ``take(item, table)`` returns
    the order of an item just popped, and lets go of it.
    """

    make: Callable[[int, int, object, Table], object]
    take: Callable[[object, Table], object]


def _int_key(k0: int, k1: int, order: object, table: Table) -> int:
    key = heap_key(k0, k1)
    table[key] = order  # dead = not in the table
    return key


ENTRY_LAYOUTS: dict[str, EntryLayout] = {
    "int key, order in a dict (the book's)": EntryLayout(_int_key, lambda key, table: table.pop(key)),  # type: ignore[arg-type]
    "[k0, k1, order] list": EntryLayout(lambda k0, k1, order, table: [k0, k1, order], lambda item, table: item[2]),  # type: ignore[index]
    "(k0, k1, entry) tuple, entry with a flag": EntryLayout(
        lambda k0, k1, order, table: (k0, k1, _FlagEntry(order)), lambda item, table: item[2].order),  # type: ignore[index]
    "(k0, k1, entry) tuple, entry keeps its key too": EntryLayout(
        lambda k0, k1, order, table: (k0, k1, _KeyedEntry((k0, k1), order)), lambda item, table: item[2].order),  # type: ignore[index]
    "entry with __lt__ comparing its key": EntryLayout(
        lambda k0, k1, order, table: _OrderedEntry((k0, k1), order), lambda item, table: item.order),  # type: ignore[attr-defined]
}
"""Label -> how that layout builds a heap item from ``(k0, k1, order)`` and gets the order back."""


@dataclass(frozen=True)
class EntryLayoutRow:
    """What one layout costs: tracked objects per resting order (its ``Order`` included), two timings."""

    label: str
    tracked_per_order: float
    push_pop: Measurement  # per step: build an item, push it, pop the top, take its order; heap of ``heap_size``
    young_collection: Measurement  # per call: gc.collect(1) over ``fresh`` orders filed since the last


def _fresh_items(layout: EntryLayout, n: int, start: int) -> tuple[list[object], Table]:
    """``n`` items with their payloads, and their side table, built with the collector off (all in generation 0)."""
    make = layout.make
    table: Table = {}
    with collector(False):
        return [make(-(10_000 - (seq % 50)), seq, _Payload(seq), table) for seq in range(start, start + n)], table


def _young_objects_added_by(build: Callable[[], Sequence[object]]) -> int:
    """Run ``build`` after a full collection, collector off; return how many objects it added to generation 0.

    ``build`` returns the containers that hold what it built; the tracked ones among
    them (and the sequence itself) are not counted: they are the experiment's, one each.
    """
    gc.collect()
    with collector(False):
        before = len(gc.get_objects(generation=0))
        built = build()  # kept alive until counted
        added = len(gc.get_objects(generation=0)) - before
        added -= gc.is_tracked(built) + sum(gc.is_tracked(c) for c in built)
        del built
        return added


def entry_layouts(*, heap_size: int = 5_000, fresh: int = 1_000, repeat: int = 5, target: float = 0.05,
                  ) -> list[EntryLayoutRow]:
    """Measure every layout of ``ENTRY_LAYOUTS``; one row each, in the table's order.

    * ``tracked_per_order``: objects the cyclic collector tracks per item, payload
      included, counted in generation 0 right after building ``fresh`` items.
    * ``push_pop``: one step builds an item with a new key, pushes it on a heap of
      ``heap_size`` items, pops the top and takes its order (so the heap keeps its size). Timed with
      the collector off: this column is the heap's work, the next one the collector's.
    * ``young_collection``: ``gc.collect(1)`` right after ``fresh`` items were built,
      the work ``GcPolicy`` does at an idle tick. Each sample builds its items
      first, untimed, after a full collection.

    Cost: about ``len(ENTRY_LAYOUTS) * 2 * (repeat + 2) * target`` seconds.
    """
    rows = []
    for label, layout in ENTRY_LAYOUTS.items():
        count = _young_objects_added_by(lambda layout=layout: _fresh_items(layout, fresh, 1))
        heap, table = _fresh_items(layout, heap_size, 1)
        heapify(heap)
        seqs = itertools.count(heap_size + 1)

        def step(heap: list[object] = heap, table: Table = table, layout: EntryLayout = layout,
                 seqs: Any = seqs) -> None:
            seq = next(seqs)
            heappush(heap, layout.make(-(10_000 - (seq * 7919) % 50), seq, _Payload(seq), table))
            layout.take(heappop(heap), table)

        push_pop = measure(step, repeat=repeat, target=target, gc=False, label=f"push + pop: {label}")

        def prepare(layout: EntryLayout = layout) -> object:
            gc.collect()  # older garbage out of the way: the young generations hold only the new items
            return _fresh_items(layout, fresh, 1)

        young = measure_passes(lambda items: gc.collect(1), prepare, label=f"gc.collect(1) over {fresh:,}: {label}",
                               repeat=repeat, gc=False)
        rows.append(EntryLayoutRow(label, count / fresh, push_pop, young))
    return rows


def tracked_per_resting_order(n: int = 2_000) -> float:
    """Objects the collector tracks per resting order in a real ``OrderBook`` (the ``Order`` included). O(n).

    >>> 1 <= tracked_per_resting_order(200) < 2
    True
    """
    book = OrderBook("EDU")

    def rest_all() -> tuple[()]:
        # Each order is made inside the counted window, as a client's message would make it.
        for i in range(n):
            book.submit(Order(f"r{i}", "EDU", Side.BUY, OrderType.LIMIT, TIF.GTC, 1, 10_000 - i % 50, owner="ann"))
        return ()  # the book holds them all

    count = _young_objects_added_by(rest_all)
    return count / n
