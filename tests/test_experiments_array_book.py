"""TickColumns against a dict model, the access-cost and memory experiments of chapter 12."""

from __future__ import annotations

import random

import pytest

from edumatcher.book import OrderBook
from edumatcher.chapters.beyond_heaps.array_book import (
    READ_LOOP,
    TickColumns,
    dict_levels,
    level_memory,
    level_memory_isolated,
    scalar_access_costs,
)
from edumatcher.workloads import MID, apply, opening_ramp


def _model_depth(levels: dict[int, list[int]], side: str, n: int) -> list[tuple[int, int, int]]:
    prices = sorted(levels, reverse=side == "bid")[:n]
    return [(p, levels[p][0], levels[p][1]) for p in prices]


@pytest.mark.parametrize("side", ["bid", "ask"])
def test_random_adds_match_a_dict_model(side: str) -> None:
    rnd = random.Random(5 if side == "bid" else 6)
    store = TickColumns(100, 160, side)
    model: dict[int, list[int]] = {}
    for _ in range(1_000):
        price, qty = rnd.randint(100, 160), rnd.randint(1, 50)
        store.add(price, qty)
        model.setdefault(price, [0, 0])
        model[price][0] += 1
        model[price][1] += qty
        assert len(store) == len(model)
        assert store.depth(5) == _model_depth(model, side, 5)
        assert (store.count_at(price), store.qty_at(price)) == tuple(model[price])
    assert store.depth(100) == _model_depth(model, side, 100)


def test_agrees_with_the_order_book_on_a_ramp() -> None:
    ops = opening_ramp(500, seed=3, levels=20)
    book = OrderBook("EDU")
    apply(book, ops)
    asks = TickColumns(MID, MID + 50, "ask")
    for op in ops:
        if op[2] == "SELL":
            asks.add(op[5], op[6])
    assert asks.depth(10) == book.depth(10)[1]


def test_bad_input_raises_and_changes_nothing() -> None:
    store = TickColumns(10, 20, "ask")
    store.add(12, 5)
    before = (list(store.count), list(store.qty), len(store))
    for price, qty in ((9, 1), (21, 1), (12, 0), (12, -3)):
        with pytest.raises(ValueError):
            store.add(price, qty)
    with pytest.raises(ValueError):
        store.qty_at(21)
    assert (list(store.count), list(store.qty), len(store)) == before
    with pytest.raises(ValueError):
        TickColumns(5, 4, "bid")
    with pytest.raises(ValueError):
        TickColumns(1, 4, "both")


def test_the_layout_is_not_the_exercise_answer() -> None:
    """Chapter 12 prints this class; the graded exercise's level store (remove, best prices) must not be in it."""
    for name in ("remove", "best", "best_bid", "best_ask"):
        assert not hasattr(TickColumns, name), f"TickColumns.{name} would hand students exercise 10's answer"


def test_empty_store_has_no_depth() -> None:
    assert TickColumns(0, 1_000, "bid").depth(3) == [] and len(TickColumns(0, 9, "ask")) == 0


def test_nbytes_follows_the_range_not_the_orders() -> None:
    assert TickColumns(1, 1_000, "bid").nbytes == 2 * 8 * 1_000


def test_dict_levels_counts_orders_and_quantity() -> None:
    assert dict_levels([(5, 2), (5, 3), (7, 1)]) == {5: [2, 5], 7: [1, 1]}


def test_scalar_access_costs_compares_each_typed_array_with_the_list_interleaved() -> None:
    costs = scalar_access_costs(500, budget=0.05, target=0.0005)
    for c in (costs.array_vs_list, costs.numpy_vs_list, costs.loop_vs_c):
        assert c.paired and c.rounds >= 12 and c.a.repeat == c.b.repeat == c.rounds
        assert c.a.ops_per_call == c.b.ops_per_call == 500
    assert costs.array_vs_list.b.label == costs.numpy_vs_list.b.label == costs.loop_vs_c.a.label == "list, read from Python"
    rows = costs.measurements
    assert [m.ops_per_call for m in rows] == [500] * 4
    assert "array" in rows[1].label and "numpy" in rows[2].label and "C" in rows[3].label
    assert READ_LOOP.format(xs="xs_list").endswith("total += xs_list[i]")


def test_level_memory_array_grows_with_range_dict_with_occupied_levels() -> None:
    small, wide = level_memory(1_000, 2_000), level_memory(100_000, 2_000)
    assert wide.array_bytes > 50 * small.array_bytes  # 100x the ticks
    assert abs(wide.dict_bytes - small.dict_bytes) < small.dict_bytes / 2  # same 200 occupied levels
    sparse, dense = level_memory(50_000, 100, spread=50_000), level_memory(50_000, 5_000, spread=50_000)
    assert dense.occupied_levels > 10 * sparse.occupied_levels and dense.dict_bytes > 10 * sparse.dict_bytes
    assert dense.array_bytes == pytest.approx(sparse.array_bytes, rel=0.05)
    assert 0 < dense.break_even_occupancy < 1
    with pytest.raises(ValueError):
        level_memory(0, 10)


def test_level_memory_in_a_fresh_process_matches_the_same_measurement_here() -> None:
    specs = [{"price_range": 2_000, "orders": 500}, {"price_range": 50_000, "orders": 300, "spread": 50_000}]
    isolated = level_memory_isolated(specs)
    here = [level_memory(**spec) for spec in specs]  # type: ignore[arg-type]
    assert [(r.price_range, r.orders, r.occupied_levels) for r in isolated] == [
        (r.price_range, r.orders, r.occupied_levels) for r in here]
    for a, b in zip(isolated, here, strict=True):
        # the array's buffer is exact; the dict's bytes may differ by allocator slack between processes
        assert a.array_bytes == pytest.approx(b.array_bytes, rel=0.05)
        assert a.dict_bytes == pytest.approx(b.dict_bytes, rel=0.2)
