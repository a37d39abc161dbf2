"""Chapter 07's experiments: lazy against eager deletion, compaction factors, and what features cost.

* ``deletion_costs``: cancelling orders from a heap of ``n`` entries, three ways:
  the eager way (``list.remove`` then ``heapify``: O(n) per cancel), the lazy way
  on the same heap (find the entry by id, flip its ``valid`` flag: O(1)), and the
  real ``OrderBook.cancel``; eager and ``OrderBook.cancel`` are compared
  interleaved (``compare_passes``), and ``growth_verdict`` says how each grows with size.
* ``compaction_sweep``: one ``cancel_heavy`` workload through books with different
  ``compact_factor`` values: the peak number of heap entries, how many rebuilds,
  and the time taken; ``compaction_verdict`` states the memory side (exact) and
  ``compaction_times_line`` the time side (informational: the differences sit
  near the negligible band, so no verdict is drawn from them).
* ``deep_flow``, ``compaction_counts``, ``factor_pass`` and ``time_each_operation``:
  the same question on a book deep enough for the factors to differ: an opening
  ramp of resting orders (built untimed) and then a steady, cancel-heavy stream
  that holds the book near that depth. ``compaction_counts`` counts peaks and
  rebuilds exactly, ``factor_pass`` is the stream as one timed ``Pass`` for
  ``compare_passes``, ``factor_growth_verdict`` says how factor 1's extra cost grows
  with depth, and ``time_each_operation`` times every operation on its own, marking
  the ones that rebuilt the heaps or grew a dict's table (the slow operations).
* ``full_vs_bare``: ``OrderBook`` against ``BareBook`` on the same ``standard``
  workload, interleaved (``bare_vs_full`` gives the same two measurements the other way round).
* ``entry_layouts``: five ways to write a heap entry, and what each costs: a push
  and a pop, tracked objects per resting order, and a young collection over the
  entries filed since the last one (why ``book.py`` chose one int key per order,
  with the order in a dict).

>>> rows = compaction_sweep([2], n=300, repeat=5)
>>> rows[0].factor, rows[0].peak_entries >= rows[0].peak_live
(2, True)
"""

from __future__ import annotations

import dataclasses
import gc
import itertools
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from heapq import heapify, heappop, heappush
from typing import Any

from edumatcher.bare_book import BareBook
from edumatcher.book import COMPACT_SLACK, OrderBook, heap_key
from edumatcher.kit import (
    Comparison,
    Measurement,
    Pass,
    calibrated_sampler,
    collector,
    compare,
    compare_passes,
    format_interval,
    format_ratio,
    interleave,
    measure_passes,
)
from edumatcher.model import TIF, Order, OrderType, Side
from edumatcher.workloads import CANCEL, NEW, SYMBOL, Op, apply_prepared, cancel_heavy, opening_ramp, prepare, standard

__all__ = [
    "HeapEntry", "resting_heap", "DeletionCosts", "deletion_costs", "per_operation", "growth_verdict", "CompactionRow",
    "compaction_sweep", "compaction_trace", "compaction_verdict", "compaction_times_line",
    "deep_flow", "CompactionCount", "compaction_counts", "book_at_depth", "factor_pass", "factor_growth_verdict",
    "OperationTimes", "time_each_operation", "counting_book", "slow_operations_verdict", "rebuild_spacing_verdict",
    "full_vs_bare", "bare_vs_full", "EntryLayout", "EntryLayoutRow", "ENTRY_LAYOUTS", "entry_layouts", "tracked_per_resting_order",
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


def _book_batches(n: int, seed: int, batch: int) -> Callable[[], tuple[OrderBook, list[str]]]:
    """A book of ``n`` resting orders, and a ``prepare`` that hands out a batch of ``batch`` of its ids per call.

    Batches come from all over the book (ids shuffled), in turn. Before handing out
    the next batch, ``prepare`` rests again (untimed) the orders of the batch it
    handed out last, which the pass has cancelled since: so every pass cancels live
    orders from a book of ``n - batch`` to ``n`` orders, however many passes run.
    (Dead keys pile up meanwhile; the book's own compaction clears them, inside a
    timed cancel, as it would in service.)
    """
    book = OrderBook("EDU")
    ops = opening_ramp(n, seed=seed)
    apply_prepared(book, prepare(ops))
    by_id = {op[1]: op for op in ops}
    ids = list(by_id)
    random.Random(seed).shuffle(ids)
    batches = [ids[i:i + batch] for i in range(0, len(ids) - batch + 1, batch)]
    if not batches:
        raise ValueError(f"a book of {len(ids):,} orders holds no batch of {batch:,} cancels")
    turn = itertools.count()
    handed: list[str] = []

    def next_batch() -> tuple[OrderBook, list[str]]:
        back = [by_id[i] for i in handed if book.get(i) is None]
        if back:
            apply_prepared(book, prepare(back))
        handed[:] = batches[next(turn) % len(batches)]
        return book, list(handed)

    return next_batch


@dataclass(frozen=True)
class DeletionCosts:
    """Per-cancel timings at one heap size (``ops_per_call`` is the number of cancels per pass).

    ``comparison`` is eager removal against ``OrderBook.cancel``, interleaved (its
    ``a`` and ``b`` are ``eager`` and ``book``); None when built by hand.
    """

    size: int
    eager: Measurement
    lazy: Measurement
    book: Measurement
    comparison: Comparison | None = None


def deletion_costs(sizes: Sequence[int] = (1_000, 4_000, 16_000), *, cancels: int = 12, repeat: int = 5,
                   seed: int = 1, budget: float = 1.0) -> list[DeletionCosts]:
    """Time ``cancels`` random cancels at each heap size, eager against lazy against ``OrderBook.cancel``.

    Eager removal and ``OrderBook.cancel`` are compared with ``compare_passes``
    (interleaved, adaptive, ``budget`` seconds per size); the bare flag flip is
    timed on its own (``repeat`` passes), for the picture. Every eager pass starts
    from a fresh copy of the heap, every flag pass from fresh flags, and every
    book pass from a batch of live orders (see ``_book_batches``), built untimed.
    The collector is off while timing (young objects collected between passes).
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

        comparison = compare_passes(
            Pass(f"eager: list.remove + heapify ({size:,})", _cancel_eagerly,
                 lambda heap=heap, items=items: (list(heap), items), len(items)),
            Pass(f"OrderBook.cancel ({size:,})", _cancel_in_book, _book_batches(size, seed, len(picked)), len(picked)),
            budget=budget, gc=False,
        )
        lazy = measure_passes(_cancel_lazily, fresh_flags, label=f"lazy: flip the flag ({size:,})",
                              ops_per_call=len(picked), repeat=repeat, gc=False)
        out.append(DeletionCosts(size, comparison.a, lazy, comparison.b, comparison))
    return out


def per_operation(m: Measurement) -> Measurement:
    """The same samples divided by ``ops_per_call``: seconds per operation (here, per cancel), labelled so.

    >>> per_operation(Measurement.from_samples([12e-6] * 5, ops_per_call=12, label="x")).median
    1e-06
    """
    return dataclasses.replace(m, samples=tuple(s / m.ops_per_call for s in m.samples), ops_per_call=1,
                               label=f"{m.label}, per cancel" if m.label else "per cancel")


def growth_verdict(costs: Sequence[DeletionCosts]) -> str:
    """A ``verdict:`` line: from the smallest heap to the largest, how eager removal and ``OrderBook.cancel`` grew.

    Each growth is a ratio of medians (largest size over smallest) with its
    bootstrap interval (``measure.compare``, unpaired: the sizes were timed apart).
    The line says "eager grows with depth, the lazy cancel far less" only when the
    eager growth's interval lies wholly above twice the book's; otherwise that this
    run cannot separate them.
    """
    if len(costs) < 2:
        raise ValueError("growth_verdict needs at least two sizes")
    first, last = costs[0], costs[-1]
    eager, book = compare(last.eager, first.eager), compare(last.book, first.book)
    span = f"from {first.size:,} to {last.size:,} entries ({last.size / first.size:g}x)"
    numbers = (f"eager removal per cancel grew {eager.ratio:.1f}x ({eager.ci_text}) "
               f"and OrderBook.cancel {book.ratio:.1f}x ({book.ci_text})")
    if eager.ci[0] > 2 * book.ci[1]:
        return f"verdict: {span}, eager removal grows with depth, the lazy cancel far less\n    {numbers}"
    return f"verdict: {span}, this run cannot separate how eager removal and the lazy cancel grow\n    {numbers}"


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
    loop, so watching costs nothing in the times. Factors are timed in
    interleaved rounds (one ``interleave`` call, so any two rows' times compare
    paired), with the collector off (young objects collected between passes).
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
        repeat=repeat, gc=False,
    )
    return [CompactionRow(f, peak, live, rebuilds, final, t)
            for (f, peak, live, rebuilds, final), t in zip(rows, times, strict=True)]


def compaction_verdict(rows: Sequence[CompactionRow]) -> str:
    """A ``verdict:`` line on the memory side of the sweep: exact counts, so it is the same on every run.

    Says whether peak heap entries rise and rebuilds fall as the factor grows
    (rows in increasing factor order), with the counts.

    >>> rows = compaction_sweep([1, 8], n=400, repeat=5)
    >>> compaction_verdict(rows).splitlines()[0]
    'verdict: as compact_factor grows, peak heap entries rise and rebuilds fall'
    """
    if len(rows) < 2:
        raise ValueError("compaction_verdict needs at least two rows")
    rows = sorted(rows, key=lambda r: r.factor)
    peaks = [r.peak_entries for r in rows]
    rebuilds = [r.rebuilds for r in rows]
    rise = all(a <= b for a, b in itertools.pairwise(peaks)) and peaks[0] < peaks[-1]
    fall = all(a >= b for a, b in itertools.pairwise(rebuilds)) and rebuilds[0] > rebuilds[-1]
    counts = "; ".join(f"{r.factor:g}: {r.peak_entries:,} entries, {r.rebuilds} rebuild(s)" for r in rows)
    memory = "peak heap entries rise" if rise else "peak heap entries do not rise steadily"
    work = "rebuilds fall" if fall else "rebuilds do not fall steadily"
    return f"verdict: as compact_factor grows, {memory} and {work}\n    {counts}; peak live orders {rows[0].peak_live:,}"


def compaction_times_line(rows: Sequence[CompactionRow], *, against: float = 2) -> str:
    """An informational line (deliberately not a verdict): each factor's time per run over factor ``against``'s.

    Ratios of medians with their bootstrap intervals (paired when the rows came
    from one ``compaction_sweep``). The differences between factors are a few per
    cent, near the ±5 % band inside which two times count as the same, so a run
    can land on either side: the line reports, it does not conclude.
    """
    base = next((r for r in rows if r.factor == against), None)
    if base is None:
        raise ValueError(f"no row for compact_factor={against:g}")
    parts = []
    for r in rows:
        if r is base:
            continue
        c = compare(r.time, base.time)
        parts.append(f"{r.factor:g}: {c.ratio:.2f}x ({c.ci_text})")
    return f"time per run against compact_factor={against:g} (ratio of medians): " + "; ".join(parts)


# ---------------------------------------------------------------- compaction on a deep book


def deep_flow(depth: int, steady: int, seed: int = 1) -> tuple[list[Op], list[Op]]:
    """``(ramp, stream)``: ``depth`` resting orders that never cross, then ``steady`` operations held near that depth.

    ``opening_ramp(depth, seed, then=steady)`` cut in two. The stream is the
    ``steady_state`` mix without mass cancels: about 45 % cancels of random live
    orders, 10 % IOC and market orders that take from the top (and pop the dead keys
    they meet there), the rest new passive limit orders; it keeps the live book near
    ``depth``, so every cancel lands in a book of that size.

    >>> ramp, stream = deep_flow(100, 50)
    >>> len(ramp), len(stream)
    (100, 50)
    """
    ops = opening_ramp(depth, seed=seed, then=steady)
    return ops[:depth], ops[depth:]


@dataclass(frozen=True)
class CompactionCount:
    """One ``compact_factor`` on one stream, counted exactly: peaks, rebuilds and cancels.

    Peaks are read after every operation of the stream (the ramp before it holds
    no dead keys). ``cancels_per_rebuild`` is the stream's cancels over its rebuilds
    (None without a rebuild): with factor 1 it is about the slack, whatever the
    depth; with a larger factor it grows with the book.
    """

    factor: float
    peak_entries: int
    peak_live: int
    rebuilds: int
    cancels: int

    @property
    def cancels_per_rebuild(self) -> float | None:
        """Cancels in the stream per rebuild of the heaps (None if none happened)."""
        return self.cancels / self.rebuilds if self.rebuilds else None


def book_at_depth(ramp: Sequence[Op], factor: float, *, slack: int = COMPACT_SLACK) -> OrderBook:
    """A fresh ``OrderBook`` with this ``compact_factor`` and the ramp resting in it. O(len(ramp) log n)."""
    book = OrderBook(SYMBOL, compact_factor=factor, compact_slack=slack)
    apply_prepared(book, prepare(ramp))
    return book


def compaction_counts(factors: Sequence[float], ramp: Sequence[Op], stream: Sequence[Op], *,
                      slack: int = COMPACT_SLACK) -> list[CompactionCount]:
    """Rest the ramp, then watch the stream on a book per factor: exact counts, the same on every run. O(factors x n)."""
    out = []
    for factor in factors:
        book = _CountingBook(SYMBOL, compact_factor=factor, compact_slack=slack)
        apply_prepared(book, prepare(ramp))  # fresh orders per book: a resting order belongs to one book
        book.rebuilds = 0
        peak, live, rebuilds = _track(book, prepare(stream))
        out.append(CompactionCount(factor, peak, live, rebuilds, sum(op[0] == CANCEL for op in stream)))
    return out


def factor_pass(factor: float, ramp: Sequence[Op], stream: Sequence[Op], *, slack: int = COMPACT_SLACK) -> Pass:
    """The stream on a book at depth, as one ``Pass``: the book and the orders are built untimed, the stream is timed."""
    return Pass(f"compact_factor={factor:g}", lambda state: apply_prepared(*state),
                lambda: (book_at_depth(ramp, factor, slack=slack), prepare(stream)), len(stream))


def factor_growth_verdict(shallow: Comparison, deep: Comparison, depths: tuple[int, int]) -> str:
    """A ``verdict:`` line: does factor 1's cost, over factor 2's, grow from the shallow book to the deep one?

    Each argument compares factor 1 with factor 2 on the same stream at one depth.
    "Grows" only when the deep interval lies wholly above the shallow one.
    """
    numbers = (f"factor 1 / factor 2 at {depths[0]:,} resting orders {shallow.ratio:.2f}x ({shallow.ci_text}), "
               f"at {depths[1]:,} {deep.ratio:.2f}x ({deep.ci_text})")
    if deep.ci[0] > shallow.ci[1]:
        return f"verdict: factor 1's extra cost grows with the depth of the book\n    {numbers}"
    if deep.ci[1] < shallow.ci[0]:
        return f"verdict: factor 1's extra cost shrinks with the depth of the book\n    {numbers}"
    return f"verdict: this run cannot tell how factor 1's extra cost changes with depth\n    {numbers}"


@dataclass(frozen=True)
class OperationTimes:
    """Every operation of a stream timed on its own (``ns``), and which ones did extra O(n) work.

    ``rebuilds``: indexes of operations during which the heaps were compacted.
    ``resizes``: ``(index, dict name, entries after)`` for every operation during which
    ``_live`` or ``_entries`` grew its table (``sys.getsizeof`` changed).
    """

    factor: float
    ns: list[int]
    rebuilds: list[int]
    resizes: list[tuple[int, str, int]]


def time_each_operation(book: OrderBook, prepared: Sequence[tuple[str, Any]], factor: float = 0.0) -> OperationTimes:
    """Time each ``(kind, arg)`` of ``prepared`` on ``book`` alone (``perf_counter_ns``), collector off. O(n).

    The bookkeeping that finds rebuilds and dict growth runs after the clock
    stopped. A ``book`` that is not a ``_CountingBook`` reports no rebuilds.
    """
    clock = time.perf_counter_ns
    submit, cancel = book.submit, book.cancel
    watched = {"_live": book._live, "_entries": book._entries}
    sizes = {name: sys.getsizeof(d) for name, d in watched.items()}
    counted = getattr(book, "rebuilds", 0)
    ns: list[int] = []
    rebuilds: list[int] = []
    resizes: list[tuple[int, str, int]] = []
    with collector(False):  # a collection inside an operation would be a spike of its own
        for i, (kind, arg) in enumerate(prepared):
            start = clock()
            if kind == NEW:
                submit(arg)
            else:
                cancel(arg)
            ns.append(clock() - start)
            if getattr(book, "rebuilds", 0) != counted:
                counted = book.rebuilds  # type: ignore[attr-defined]
                rebuilds.append(i)
            for name, d in watched.items():
                if sys.getsizeof(d) != sizes[name]:
                    sizes[name] = sys.getsizeof(d)
                    resizes.append((i, name, len(d)))
    return OperationTimes(factor, ns, rebuilds, resizes)


def counting_book(factor: float, *, slack: int = COMPACT_SLACK) -> OrderBook:
    """An ``OrderBook`` that counts its rebuilds in ``.rebuilds`` (for ``time_each_operation``)."""
    return _CountingBook(SYMBOL, compact_factor=factor, compact_slack=slack)


def slow_operations_verdict(times: OperationTimes, *, min_entries: int = 1_000, factor: float = 5.0) -> str:
    """A ``verdict:`` line: did the operations that rebuilt the heaps, or grew a dict of ``min_entries`` or more, take longer?

    "Longer" when the median of those operations is at least ``factor`` times the
    median of all the others: each does O(n) work where an ordinary operation does
    O(log n), so on a book of thousands the margin is wide.
    """
    import statistics

    grew = sorted({i for i, _, entries in times.resizes if entries >= min_entries})
    special = set(grew) | set(times.rebuilds)
    ordinary = statistics.median(t for i, t in enumerate(times.ns) if i not in special)
    parts, slow = [], []
    for name, indexes in (("rebuilt the heaps", times.rebuilds), (f"grew a dict of {min_entries:,}+ entries", grew)):
        if not indexes:
            continue
        ratio = statistics.median(times.ns[i] for i in indexes) / ordinary
        parts.append(f"{len(indexes)} that {name}: median {ratio:,.0f}x")
        slow.append(ratio >= factor)
    numbers = f"(ordinary operation: median {ordinary / 1e3:,.1f} µs; " + "; ".join(parts) + ")"
    who = f"compact_factor={times.factor:g}"
    if not parts:
        return f"verdict: {who}: no operation rebuilt the heaps or grew a large dict\n    {numbers}"
    if all(slow):
        return f"verdict: {who}: the operations that did O(n) work took far longer than ordinary ones\n    {numbers}"
    return f"verdict: {who}: not every kind of O(n) operation stood out at this noise\n    {numbers}"


def rebuild_spacing_verdict(counts: dict[int, Sequence[CompactionCount]]) -> str:
    """A ``verdict:`` line from exact counts at two or more depths: do rebuilds thin out as the book grows?

    Compares cancels per rebuild at the shallowest and the deepest book, for
    factor 1 and factor 2, one ``verdict:`` line each: "thin out" when the spacing at least doubles from a book
    at least four times smaller, "keep their spacing" when it changes by less than
    half. Exact counts, so the line is the same on every run.
    """
    shallow, deep = min(counts), max(counts)

    def spacing(depth: int, factor: float) -> float | None:
        row = next((c for c in counts[depth] if c.factor == factor), None)
        return None if row is None else row.cancels_per_rebuild

    words = []
    for factor in (1, 2):
        a, b = spacing(shallow, factor), spacing(deep, factor)
        if a is None or b is None:
            return "verdict: too few rebuilds at these depths to compare their spacing"
        if deep >= 4 * shallow and b >= 2 * a:
            trend = "thin out as the book grows"
        elif 0.5 * a < b < 1.5 * a:
            trend = "keep their spacing however deep the book"
        else:
            trend = "change their spacing"
        words.append(f"verdict: with factor {factor} the rebuilds {trend} ({a:,.0f} cancels per rebuild at {shallow:,} resting orders, "
                     f"{b:,.0f} at {deep:,})")
    return "\n".join(words)


def full_vs_bare(n: int = 10_000, *, seed: int = 1, budget: float = 2.0) -> Comparison:
    """``OrderBook`` against ``BareBook`` on ``standard(n, seed)``, interleaved, fresh orders per pass.

    ``compare_passes`` with the collector off (young objects collected between
    passes, off the clock), as ``bench book`` does: a full collection would
    otherwise walk the whole kernel's heap and bill it to whichever book was
    running. Unpacks as ``(full, bare)``; ``ratio`` is full over bare.
    """
    ops = standard(n, seed=seed)
    return compare_passes(
        Pass("OrderBook", lambda state: apply_prepared(*state), lambda: (OrderBook("EDU"), prepare(ops)), n),
        Pass("BareBook", lambda state: apply_prepared(*state), lambda: (BareBook("EDU"), prepare(ops)), n),
        budget=budget, gc=False,
    )


def bare_vs_full(n: int = 20_000, *, seed: int = 1, budget: float = 2.0) -> tuple[Measurement, Measurement]:
    """``(BareBook, OrderBook)``: the two measurements of ``full_vs_bare``, bare first."""
    full, bare = full_vs_bare(n, seed=seed, budget=budget)
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
    push_pop_vs_int: Comparison | None = None  # this layout's push + pop against the int key's, paired rounds; None for the int key

    @property
    def push_pop_vs_int_text(self) -> str:
        """``push_pop_vs_int`` for a table cell: "1.29x (1.12–1.44)", or "1x (the base)" for the int key. O(1).

        A no-break space and a word joiner hold the ratio and its interval together, so a
        narrow page wraps the row, not the figure.
        """
        c = self.push_pop_vs_int
        if c is None:
            return "1x (the base)"
        interval = format_interval(c.ci).replace("–", "–\u2060")
        return f"{format_ratio(c.ratio, c.ci)}x\u00a0({interval})"


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
                  rounds: int = 9) -> list[EntryLayoutRow]:
    """Measure every layout of ``ENTRY_LAYOUTS``; one row each, in the table's order.

    * ``tracked_per_order``: objects the cyclic collector tracks per item, payload
      included, counted in generation 0 right after building ``fresh`` items.
    * ``push_pop``: one step builds an item with a new key, pushes it on a heap of
      ``heap_size`` items, pops the top and takes its order (so the heap keeps its size). Timed with
      the collector off: this column is the heap's work, the next one the collector's. All layouts
      are timed in one ``interleave`` of ``rounds`` rounds (each in random order), so
      ``push_pop_vs_int`` compares each with the int key on paired rounds: a ratio with its
      interval, not two separate runs.
    * ``young_collection``: ``gc.collect(1)`` right after ``fresh`` items were built,
      the work ``GcPolicy`` does at an idle tick. Each sample builds its items
      first, untimed, after a full collection.

    Cost: about ``len(ENTRY_LAYOUTS) * (rounds + repeat + 3) * target`` seconds.
    """
    steps = {label: _push_pop_step(layout, heap_size) for label, layout in ENTRY_LAYOUTS.items()}
    _, number = calibrated_sampler(next(iter(steps.values())), target=target)  # the int key's step, the cheapest
    timed = interleave([_steps_pass(f"push + pop: {label}", step, number) for label, step in steps.items()],
                       repeat=rounds, gc=False)
    base = timed[0]
    rows = []
    for (label, layout), push_pop in zip(ENTRY_LAYOUTS.items(), timed, strict=True):
        count = _young_objects_added_by(lambda layout=layout: _fresh_items(layout, fresh, 1))

        def prepare(layout: EntryLayout = layout) -> object:
            gc.collect()  # older garbage out of the way: the young generations hold only the new items
            return _fresh_items(layout, fresh, 1)

        young = measure_passes(lambda items: gc.collect(1), prepare, label=f"gc.collect(1) over {fresh:,}: {label}",
                               repeat=repeat, gc=False)
        versus = None if push_pop is base else compare(push_pop, base)
        rows.append(EntryLayoutRow(label, count / fresh, push_pop, young, versus))
    return rows


def _push_pop_step(layout: EntryLayout, heap_size: int) -> Callable[[], None]:
    """One step of ``entry_layouts``' push + pop on a heap of ``heap_size`` items of ``layout``. O(log heap_size)."""
    heap, table = _fresh_items(layout, heap_size, 1)
    heapify(heap)
    seqs = itertools.count(heap_size + 1)
    make, take = layout.make, layout.take

    def step() -> None:
        seq = next(seqs)
        heappush(heap, make(-(10_000 - (seq * 7919) % 50), seq, _Payload(seq), table))
        take(heappop(heap), table)

    return step


def _steps_pass(label: str, step: Callable[[], None], number: int) -> Pass:
    """A ``Pass`` whose one sample is ``number`` calls of ``step`` (per_op is one step)."""
    def run(_: object) -> None:
        for _ in range(number):
            step()

    return Pass(label, run, ops_per_call=number)


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
