"""Chapter 05's experiments: deletion strategies, compaction, bare vs full book."""

from __future__ import annotations

from heapq import heappop, heappush

from edumatcher.experiments.heaps import (
    ENTRY_LAYOUTS,
    _cancel_eagerly,
    _cancel_lazily,
    bare_vs_full,
    compaction_sweep,
    compaction_trace,
    deletion_costs,
    entry_layouts,
    resting_heap,
    tracked_per_resting_order,
)


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
    costs = deletion_costs((200, 800), cancels=5)
    assert [c.size for c in costs] == [200, 800]
    for c in costs:
        assert c.eager.ops_per_call == c.lazy.ops_per_call == c.book.ops_per_call == 5
        assert str(c.size) in c.eager.label.replace(",", "")


def test_compaction_rows_follow_the_factor() -> None:
    rows = compaction_sweep((1, 8), n=1_500)
    low, high = rows
    assert low.rebuilds >= high.rebuilds
    assert low.peak_entries <= high.peak_entries
    assert low.peak_live == high.peak_live, "compaction never changes which orders are live"
    for r in rows:
        assert r.peak_entries <= r.factor * r.peak_live + 64


def test_compaction_trace_records_every_operation() -> None:
    trace, row = compaction_trace(2, n=500)
    assert len(trace) == 500
    assert all(entries >= live for entries, live in trace)
    assert row.peak_entries == max(e for e, _ in trace) and row.peak_live == max(n for _, n in trace)


def test_bare_vs_full_runs_the_same_workload() -> None:
    bare, full = bare_vs_full(500)
    assert (bare.label, full.label) == ("BareBook", "OrderBook")
    assert bare.ops_per_call == full.ops_per_call == 500


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
