"""Chapter 08's experiments: the pool, the hazard, address reuse and what the collector tracks."""

from __future__ import annotations

import gc

import pytest

from edumatcher.experiments.pooling import (
    STRUCTURES,
    OrderPool,
    address_reuse,
    allocation_costs,
    describe,
    fill,
    stale_reference,
    structure_pause,
    tracked_added,
)
from edumatcher.model import Order, OrderStatus, Side


def test_pool_reuses_released_objects_and_counts() -> None:
    pool = OrderPool()
    a, b = pool.acquire(), pool.acquire()
    pool.release(a)
    assert pool.acquire() is a and b is not a
    assert (pool.created, pool.reused, len(pool)) == (2, 1, 0)


def test_fill_writes_every_field() -> None:
    order = fill(object.__new__(Order), "x1", Side.SELL, 9, 10_005, "cai")
    assert all(hasattr(order, name) for name in Order.__slots__)
    assert describe(order) == "x1 SELL 9 @ 10005 by cai (NEW)"
    assert order.remaining_qty == 9 and order.status is OrderStatus.NEW


def test_stale_reference_shows_another_orders_data() -> None:
    rows, same = stale_reference()
    assert same is True
    assert rows[0][1].startswith("o1 BUY 100") and rows[-1][1].startswith("o2 SELL 7")


def test_allocation_costs_measures_three_ways() -> None:
    rows = allocation_costs(target=0.001)
    assert [r.label.split()[0] for r in rows] == ["Order(...)", "object.__new__", "pool:"]
    assert all(r.median > 0 for r in rows)


def test_freed_objects_come_back_at_few_addresses_kept_ones_do_not() -> None:
    reuse = address_reuse(300)
    for dropped, kept in reuse.values():
        assert kept == 300
        assert dropped < 30  # the allocator recycles; the exact number is an implementation detail


def test_tracked_counts_show_what_the_collector_must_walk() -> None:
    rows = {r.structure: r for r in tracked_added(2_000)}
    assert rows["Order objects, one per item"].after_collection >= 2_000
    tuples = rows["tuples of two ints, one per item"]
    assert tuples.after_build >= 2_000 and tuples.after_collection <= 5, "a collection untracks tuples of ints"
    for name in ("ints in a preallocated list (a ring)", "deque(maxlen=64) after n appends", "dicts of ints, one per item"):
        assert rows[name].after_collection <= 5, name
    assert gc.isenabled()


def test_structure_pause_and_its_validation() -> None:
    pause, added = structure_pause("Order objects, one per item", 1_000)
    assert added >= 1_000 and pause.number == 1
    with pytest.raises(ValueError):
        structure_pause("nonsense", 10)
    assert set(STRUCTURES) >= {"Order objects, one per item"}
