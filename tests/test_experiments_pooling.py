"""Chapter 11's experiments: the pool, the hazard, address reuse and what the collector tracks."""

from __future__ import annotations

import gc
import sys

import pytest

from edumatcher.chapters.the_java_question.held_values import INTS, ORDERS
from edumatcher.chapters.the_java_question.pooling import (
    INIT_LABEL,
    NEW_LABEL,
    POOL_LABEL,
    POOL_SETUP,
    OrderPool,
    address_reuse,
    allocation_code,
    allocation_costs,
    describe,
    fill,
    stale_reference,
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


def test_allocation_code_builds_a_filled_order_three_ways() -> None:
    code = allocation_code()
    assert list(code) == [INIT_LABEL, NEW_LABEL, POOL_LABEL]
    from edumatcher.chapters.the_java_question.pooling import _namespace

    for label, statement in code.items():
        names = _namespace()
        exec(POOL_SETUP + "\n" + statement, names)  # our own statements, run as measure would
        order = names["o"]
        assert isinstance(order, Order) and all(hasattr(order, slot) for slot in Order.__slots__), label
        assert describe(order) == "o1 BUY 5 @ 10000 by ana (NEW)", label
    short = allocation_code(abbreviate=True)
    assert all(len(s.splitlines()) <= 3 for s in short.values())


@pytest.mark.parametrize("isolated", [True, False])
def test_allocation_costs_compares_interleaved_in_a_fresh_process_or_here(isolated: bool) -> None:
    costs = allocation_costs(budget=0.05, target=0.0005, isolated=isolated)
    for c, label_a in ((costs.pool_vs_new, POOL_LABEL), (costs.init_vs_new, INIT_LABEL)):
        assert c.paired and c.rounds >= 12 and c.a.repeat == c.b.repeat == c.rounds
        assert c.a.label.startswith(label_a) and c.b.label.startswith(NEW_LABEL)
        assert c.a.interleave_id is not None and c.a.interleave_id == c.b.interleave_id
    assert [m.label.split()[0] for m in costs.measurements] == ["Order(...)", "object.__new__", "pool:"]
    assert costs.isolated is isolated and costs.gc_enabled
    assert ("fresh worker process" in costs.where) is isolated and "collector on" in costs.where
    assert gc.isenabled()


def test_freed_objects_come_back_at_few_addresses_kept_ones_do_not() -> None:
    reuse = address_reuse(300)
    for dropped, kept in reuse.values():
        assert kept == 300
        assert dropped < 30  # the allocator recycles; the exact number is an implementation detail


@pytest.mark.parametrize("isolated", [True, False])
def test_tracked_counts_show_what_the_collector_must_walk(isolated: bool) -> None:
    rows = {r.structure: r for r in tracked_added(2_000, isolated=isolated)}
    assert rows[ORDERS].after_collection >= 2_000
    tuples = rows["tuples of two ints, one per item, in a list"]
    assert tuples.after_build >= 2_000 and tuples.after_collection <= 5, "a collection untracks tuples of ints"
    for name in (INTS, "deque(maxlen=64) after n appends"):
        assert rows[name].after_collection <= 5, name
    dicts = rows["dicts of ints, one per item, in a list"].after_collection
    if sys.version_info < (3, 14):  # gh-127010: 3.14 stopped untracking dicts of atomic values
        assert dicts <= 5, "dicts of ints are untracked before 3.14"
    else:
        assert dicts >= 2_000, "3.14 tracks every dict, empty ones included"
    assert gc.isenabled()
