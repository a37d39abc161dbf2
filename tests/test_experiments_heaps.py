"""Chapter 07's experiments: deletion strategies, compaction, bare vs full book."""

from __future__ import annotations

from heapq import heappop, heappush

import pytest

from edumatcher.chapters.heaps_and_indexes.heaps import (
    ENTRY_LAYOUTS,
    CompactionRow,
    DeletionCosts,
    _book_batches,
    _cancel_eagerly,
    _cancel_lazily,
    bare_vs_full,
    compaction_sweep,
    compaction_times_line,
    compaction_trace,
    compaction_verdict,
    deletion_costs,
    entry_layouts,
    full_vs_bare,
    growth_verdict,
    resting_heap,
    tracked_per_resting_order,
)
from edumatcher.kit import Measurement


def test_eager_and_lazy_cancels_leave_the_same_live_orders_in_priority_order() -> None:
    heap, index = resting_heap(300, seed=4)
    doomed = ["o5", "o77", "o150", "o299"]
    eager = list(heap)
    _cancel_eagerly((eager, [index[i] for i in doomed]))
    _cancel_lazily((index, doomed))
    lazy = list(heap)
    live_eager = [heappop(eager)[2].order_id for _ in range(len(eager))]
    live_lazy = [item[2].order_id for item in (heappop(lazy) for _ in range(len(lazy))) if item[2].valid]
    assert live_eager == live_lazy
    assert len(live_eager) == 296 and not set(doomed) & set(live_eager)


def test_deletion_costs_measures_three_strategies_per_size() -> None:
    costs = deletion_costs((200, 800), cancels=5, budget=0.05)
    assert [c.size for c in costs] == [200, 800]
    for c in costs:
        assert c.eager.ops_per_call == c.lazy.ops_per_call == c.book.ops_per_call == 5
        assert str(c.size) in c.eager.label.replace(",", "")
        # eager and the book's cancel are one interleaved comparison; the flag flip is timed on its own
        assert c.comparison is not None and (c.comparison.a, c.comparison.b) == (c.eager, c.book)
        assert c.comparison.paired and c.comparison.rounds >= 12 and c.eager.repeat == c.book.repeat
    assert growth_verdict(costs).startswith("verdict: from 200 to 800 entries (4x)")


def test_book_batches_keep_the_book_full_and_hand_out_live_orders() -> None:
    prepare = _book_batches(60, 1, 7)  # 8 batches of 7 ids; 4 ids never handed out
    seen: set[str] = set()
    for turn in range(20):  # more than two laps
        book, ids = prepare()
        assert len(book) == 60, f"turn {turn}: the last batch is rested again before the next is handed out"
        assert len(ids) == 7 and all(book.get(i) is not None for i in ids), f"turn {turn}: a batch of live orders"
        seen.update(ids)
        for i in ids:
            book.cancel(i)
        assert len(book) == 53
        book.check_invariants()
    assert len(seen) == 56, "every batch comes round"


def _costs(eager_small: float, eager_large: float, book_small: float, book_large: float) -> list[DeletionCosts]:
    def m(x: float) -> Measurement:
        return Measurement.from_samples([x * f for f in (0.98, 1.0, 1.02, 0.99, 1.01, 1.0)], ops_per_call=12)

    return [DeletionCosts(1_000, m(eager_small), m(1e-7), m(book_small)),
            DeletionCosts(16_000, m(eager_large), m(1e-7), m(book_large))]


def test_growth_verdict_follows_the_intervals() -> None:
    clear = growth_verdict(_costs(1e-4, 1.6e-3, 1e-6, 1.2e-6))
    assert clear.startswith("verdict: from 1,000 to 16,000 entries (16x)")
    first, detail = clear.split("\n")
    assert first.endswith("eager removal grows with depth, the lazy cancel far less") and len(first) <= 160
    assert detail.startswith("    eager removal per cancel grew")
    assert growth_verdict(_costs(1e-4, 1.6e-3, 1e-6, 1.5e-5)).splitlines()[0].endswith("this run cannot separate how eager removal and the lazy cancel grow")
    with pytest.raises(ValueError):
        growth_verdict(_costs(1, 1, 1, 1)[:1])


def test_compaction_rows_follow_the_factor() -> None:
    rows = compaction_sweep((1, 8), n=1_500)
    low, high = rows
    assert low.rebuilds >= high.rebuilds
    assert low.peak_entries <= high.peak_entries
    assert low.peak_live == high.peak_live, "compaction never changes which orders are live"
    for r in rows:
        assert r.peak_entries <= r.factor * r.peak_live + 64


def _row(factor: float, peak: int, rebuilds: int, seconds: float) -> CompactionRow:
    return CompactionRow(factor, peak, 100, rebuilds, peak, Measurement.from_samples([seconds * f for f in (0.99, 1, 1.01, 1, 1)]))


def test_compaction_verdict_states_the_memory_side_from_exact_counts() -> None:
    rows = [_row(8, 800, 2, 1.0), _row(1, 160, 40, 1.0), _row(2, 260, 20, 1.0)]
    line = compaction_verdict(rows)
    first, detail = line.split("\n")
    assert first == "verdict: as compact_factor grows, peak heap entries rise and rebuilds fall"
    assert detail.startswith("    1: 160 entries")
    odd = compaction_verdict([_row(1, 300, 4, 1.0), _row(2, 260, 20, 1.0)])
    assert "do not rise steadily" in odd and "do not fall steadily" in odd
    with pytest.raises(ValueError):
        compaction_verdict(rows[:1])


def test_compaction_times_line_is_informational() -> None:
    line = compaction_times_line([_row(1, 160, 40, 1.1), _row(2, 260, 20, 1.0), _row(8, 800, 2, 1.0)])
    assert not line.startswith("verdict:")
    assert "1: 1.10x (95 % CI" in line and "8: 1.00x" in line
    with pytest.raises(ValueError, match="compact_factor=4"):
        compaction_times_line([_row(1, 160, 40, 1.0)], against=4)


def test_compaction_trace_records_every_operation() -> None:
    trace, row = compaction_trace(2, n=500)
    assert len(trace) == 500
    assert all(entries >= live for entries, live in trace)
    assert row.peak_entries == max(e for e, _ in trace) and row.peak_live == max(n for _, n in trace)


def test_full_vs_bare_runs_the_same_workload_interleaved() -> None:
    comparison = full_vs_bare(500, budget=0.05)
    full, bare = comparison
    assert (full.label, bare.label) == ("OrderBook", "BareBook")
    assert bare.ops_per_call == full.ops_per_call == 500
    assert comparison.paired and comparison.rounds >= 12 and not full.gc_enabled
    bare, full = bare_vs_full(300, budget=0.05)
    assert (bare.label, full.label) == ("BareBook", "OrderBook")


def test_entry_layouts_count_tracked_objects_and_time_every_layout() -> None:
    rows = entry_layouts(heap_size=200, fresh=100, target=0.002)
    assert [r.label for r in rows] == list(ENTRY_LAYOUTS)
    counts = {r.label: r.tracked_per_order for r in rows}
    # The payload plus: nothing (an int is never tracked); the list itself; a tuple and an entry;
    # a tuple, an entry and its key tuple; an entry and its key tuple.
    assert list(counts.values()) == [1.0, 2.0, 3.0, 4.0, 3.0]
    for r in rows:
        assert r.push_pop.repeat >= 5 and r.young_collection.repeat >= 5
        assert r.push_pop.median > 0 and r.young_collection.median > 0
    # Every other layout's push + pop is set against the int key's on the same interleaved rounds.
    assert rows[0].push_pop_vs_int is None
    for r in rows[1:]:
        c = r.push_pop_vs_int
        assert c is not None and c.paired and c.b is rows[0].push_pop and c.a is r.push_pop
        assert c.ci[0] <= c.ratio <= c.ci[1]


def test_every_layout_orders_by_price_then_arrival_and_gives_back_its_order() -> None:
    for layout in ENTRY_LAYOUTS.values():
        orders = [object() for _ in range(4)]
        table: dict = {}
        items = [layout.make(k0, k1, o, table) for (k0, k1), o in zip(((5, 2), (4, 9), (5, 1), (4, 3)), orders, strict=True)]
        heap: list = []
        for item in items:
            heappush(heap, item)
        taken = [layout.take(heappop(heap), table) for _ in range(len(items))]
        assert [orders.index(o) for o in taken] == [3, 1, 2, 0]
        assert not table  # taking lets go


def test_a_resting_order_costs_the_collector_one_tracked_object() -> None:
    # the Order (its heap key is an int); a little over 1 for the shared level and owner records
    assert 1.0 <= tracked_per_resting_order(500) < 1.2
