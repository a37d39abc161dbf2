"""Chapter 05's experiments: deletion strategies, compaction, bare vs full book."""

from __future__ import annotations

from heapq import heappop

from edumatcher.experiments.heaps import (
    _cancel_eagerly,
    _cancel_lazily,
    bare_vs_full,
    compaction_sweep,
    compaction_trace,
    deletion_costs,
    resting_heap,
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
