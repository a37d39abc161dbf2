"""Issue 15: the work one message can make ``OrderBook`` do is bounded, and reads cost what they return.

Work is counted, never timed: trades printed, heap entries a FOK pre-check or ``depth(k)``
examines (by wrapping ``edumatcher.book._popped_up_to``), and whether a whole index
(every price level, everything an owner holds) is iterated. The times and memory of the
issue's inputs are printed by ``python -m edumatcher.benchmarks.book_bounds`` (run here
once, quickly, with ``-s`` to see them).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest

import edumatcher.book as book_module
from edumatcher.benchmarks import book_bounds
from edumatcher.book import OrderBook, _popped_up_to
from edumatcher.model import (
    TIF,
    CancelReason,
    Order,
    OrderRejected,
    OrderStatus,
    OrderType,
    RejectReason,
    SelfMatch,
    Side,
)
from edumatcher.reference import NaiveBook
from edumatcher.rules import ICEBERG_MAX_PEAKS, MAX_QTY, PROTECTION_TICKS, WORK_BUDGET, min_display_qty

SYM = "XYZ"
MID = 100_000


def limit(oid: str, side: Side, qty: int, price: int, owner: str = "mm", **kw: Any) -> Order:
    return Order(oid, SYM, side, OrderType.LIMIT, kw.pop("tif", TIF.GTC), qty, price, owner=owner, **kw)


def market(oid: str, side: Side, qty: int, owner: str = "bob") -> Order:
    return Order(oid, SYM, side, OrderType.MARKET, TIF.IOC, qty, None, owner=owner)


class CountingDict(dict):  # type: ignore[type-arg]
    """A level index that counts full passes over it (``items``, iteration)."""

    passes = 0

    def items(self) -> Any:
        self.passes += 1
        return super().items()

    def __iter__(self) -> Iterator[Any]:
        self.passes += 1
        return super().__iter__()


@pytest.fixture
def examined(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every heap key the book's priority-order walks yield, recorded."""
    seen: list[int] = []

    def counting(heap: list[int], limit_key: int) -> Iterator[int]:
        for key in _popped_up_to(heap, limit_key):
            seen.append(key)
            yield key

    monkeypatch.setattr(book_module, "_popped_up_to", counting)
    return seen


def ladder(levels: int, *, first_qty: int = 1) -> OrderBook:
    """Asks at MID, MID+1, ... (the first with ``first_qty``), bids below MID, one lot each otherwise."""
    book = OrderBook(SYM)
    book.submit(limit("a0", Side.SELL, first_qty, MID))
    for i in range(1, levels):
        book.submit(limit(f"a{i}", Side.SELL, 1, MID + i))
    for i in range(levels):
        book.submit(limit(f"b{i}", Side.BUY, 1, MID - 1 - i))
    return book


# ------------------------------------------------------------------ icebergs


@pytest.mark.parametrize("qty", [1, 2, 99, 100, 101, 12_345, 10**6, MAX_QTY])
def test_the_smallest_peak_the_rules_accept_is_the_boundary(qty: int) -> None:
    least = min_display_qty(qty)
    assert least * ICEBERG_MAX_PEAKS >= qty > (least - 1) * ICEBERG_MAX_PEAKS
    for make in (OrderBook, NaiveBook):
        book = make(SYM)
        book.submit(limit("ok", Side.SELL, qty, 100, display_qty=least))
        if least > 1:
            with pytest.raises(OrderRejected) as caught:
                book.submit(limit("low", Side.SELL, qty, 100, display_qty=least - 1))
            assert caught.value.code is RejectReason.BAD_DISPLAY_QTY
            assert f"at most {ICEBERG_MAX_PEAKS} peaks" in caught.value.message
            assert len(book) == 1


def test_a_market_order_into_the_thinnest_legal_iceberg_prints_at_most_max_peaks_trades() -> None:
    # Issue 15: display_qty=1 on 10**6 let one MARKET order print 10**6 trades (13.6 s, 4.2 GB of frames).
    book = OrderBook(SYM)
    with pytest.raises(OrderRejected):
        book.submit(limit("thin", Side.SELL, 10**6, 100, display_qty=1))
    book.submit(limit("ice", Side.SELL, 10**6, 100, display_qty=min_display_qty(10**6)))
    trades = book.submit(market("m", Side.BUY, 10**6))
    assert len(trades) == ICEBERG_MAX_PEAKS and sum(t.qty for t in trades) == 10**6
    book.check_invariants()


def test_trades_per_message_stay_within_peaks_per_resting_order() -> None:
    rng = random.Random(15)
    for _ in range(30):
        book = OrderBook(SYM)
        total = 0
        n = rng.randint(1, 6)
        for i in range(n):
            qty = rng.randint(1, 5_000)
            display = rng.randint(min_display_qty(qty), qty) if rng.random() < 0.7 else None
            book.submit(limit(f"r{i}", Side.SELL, qty, 100 + rng.randint(0, 3), display_qty=display))
            total += qty
        trades = book.submit(market("m", Side.BUY, total + 1))
        assert len(trades) <= ICEBERG_MAX_PEAKS * n


# ------------------------------------------------------------------ FOK pre-check


class CountingGets(dict):  # type: ignore[type-arg]
    """A level index that counts ``get`` calls and full passes."""

    gets = 0
    passes = 0

    def get(self, key: Any, default: Any = None) -> Any:
        self.gets += 1
        return super().get(key, default)

    def items(self) -> Any:
        self.passes += 1
        return super().items()

    def __iter__(self) -> Iterator[Any]:
        self.passes += 1
        return super().__iter__()


def test_a_one_lot_fok_reads_the_best_level_and_walks_no_order(examined: list[int]) -> None:
    # Issue 15: it summed all 100k ask levels (2.8 ms) to fill 1 lot at the best.
    book = ladder(5_000, first_qty=1_000)
    book._ask_levels = CountingGets(book._ask_levels)
    fok = limit("f", Side.BUY, 1, MID + 4_000, owner="bob", tif=TIF.FOK)
    assert [t.qty for t in book.submit(fok)] == [1] and fok.status is OrderStatus.FILLED
    assert examined == [] and book._ask_levels.gets == 1 and book._ask_levels.passes == 0


@pytest.mark.parametrize("levels", [2_000, 50_000])
def test_a_fok_that_cannot_fill_reads_at_most_protection_levels(examined: list[int], levels: int) -> None:
    # Issue 26: a killed FOK walked up to the match limit (1,000 heap pops and pushes that change
    # nothing, ~40x a normal order, repeatable); now it reads the level index, within its protection price.
    book = ladder(levels)
    book._ask_levels = CountingGets(book._ask_levels)
    fok = limit("f", Side.BUY, 10**6, MID + 10**6, owner="bob", tif=TIF.FOK)
    assert book.submit(fok) == [] and fok.status is OrderStatus.CANCELLED
    assert fok.cancel_reason is CancelReason.FOK_KILLED
    assert examined == [] and book._ask_levels.gets == PROTECTION_TICKS + 1 and book._ask_levels.passes == 0
    assert len(book) == 2 * levels


def test_a_fok_with_smp_never_walks_what_its_owner_holds(examined: list[int]) -> None:
    # Issue 15: 100k pending stops of the FOK's owner made each such FOK cost 87-165 ms, forever.
    book = OrderBook(SYM, last_price=MID, budget=WORK_BUDGET)
    for i in range(3_000):
        book.submit(Order(f"st{i}", SYM, Side.SELL, OrderType.STOP, TIF.GTC, 1, None, stop_price=MID // 2, owner="x"))
    book.submit(limit("theirs", Side.SELL, 1, MID))
    book.submit(limit("own", Side.SELL, 1, MID, owner="x"))
    book._owners["x"] = CountingGets(book._owners["x"])
    for smp in (SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_OLDEST, SelfMatch.DECREMENT):
        examined.clear()
        fok = limit(f"f{smp.value}", Side.BUY, 2, MID, owner="x", tif=TIF.FOK, smp=smp)
        assert book.submit(fok) == [] and fok.status is OrderStatus.CANCELLED  # 1 lot of others' only
        assert book._owners["x"].passes == 0 and len(examined) <= 2
    assert len(book) == 3_002
    book.check_invariants()


@pytest.mark.parametrize("smp", [SelfMatch.CANCEL_NEWEST, SelfMatch.CANCEL_BOTH, SelfMatch.DECREMENT,
                                 SelfMatch.CANCEL_OLDEST])
def test_a_fok_behind_many_crossing_orders_is_decided_within_the_budget(examined: list[int], smp: SelfMatch) -> None:
    # Issue 15 follow-up: a FOK that must pass 20k crossing orders (then one of its own) walked them all
    # before being killed (268 ms per message behind 100k), again and again. With a budget it looks at
    # no more than `budget` of them (rules.py, "Fill or kill"); the reference agrees on the outcome.
    budget = 300
    books = [OrderBook(SYM, budget=budget), NaiveBook(SYM, budget=budget)]
    for book in books:
        for i in range(2_000 if isinstance(book, NaiveBook) else 20_000):
            book.submit(limit(f"a{i}", Side.SELL, 1, MID + i % 50))
        book.submit(limit("own", Side.SELL, 1, MID + 50, owner="x"))
    n = 20_000
    for _ in range(3):
        examined.clear()
        fok = limit("f", Side.BUY, n + 1, MID + 50, owner="x", tif=TIF.FOK, smp=smp)
        assert books[0].submit(fok) == [] and fok.status is OrderStatus.CANCELLED
        assert len(examined) <= budget + 1
    assert len(books[0]) == n + 1
    books[0].check_invariants()
    # The same rule on a book small enough for the reference: undecided within the budget, killed.
    for book in books:
        fok = limit("g", Side.BUY, 1_500, MID + 50, owner="x", tif=TIF.FOK, smp=smp)
        assert book.submit(fok) == [] and fok.cancel_reason is CancelReason.FOK_KILLED


def test_a_fok_with_smp_is_exact_when_its_owner_has_nothing_live(examined: list[int]) -> None:
    """Self-match prevention cannot act for an owner with no live order: the level index decides, no walk."""
    book = OrderBook(SYM, budget=10)
    for i in range(5_000):
        book.submit(limit(f"a{i}", Side.SELL, 1, MID))
    fok = limit("f", Side.BUY, 5_000, MID, owner="x", tif=TIF.FOK, smp=SelfMatch.CANCEL_NEWEST)
    assert len(book.submit(fok)) == 5_000 and fok.status is OrderStatus.FILLED and examined == []


def test_a_fok_walk_drops_the_dead_keys_it_meets_so_the_next_one_does_not_meet_them(
        examined: list[int]) -> None:
    book = OrderBook(SYM, budget=10)
    book.submit(limit("top", Side.SELL, 1, MID))
    for i in range(3_000):
        book.submit(limit(f"d{i}", Side.SELL, 1, MID + 1))
    for i in range(5_000):
        book.submit(limit(f"keep{i}", Side.BUY, 1, MID - 1 - i))  # live orders elsewhere keep compaction away
    for i in range(3_000):
        book.cancel(f"d{i}")
    book.submit(limit("far", Side.SELL, 5, MID + 2))
    book.submit(limit("mine", Side.SELL, 1, MID + 2, owner="bob"))  # bob's own, behind far: his smp FOK walks
    assert book.heap_entries() - len(book) >= 3_000
    for _ in range(3):
        examined.clear()
        fok = limit("f", Side.BUY, 7, MID + 2, owner="bob", tif=TIF.FOK, smp=SelfMatch.CANCEL_NEWEST)
        assert book.submit(fok) == [] and fok.status is OrderStatus.CANCELLED  # 7 cross, but the 7th is bob's
        book.check_invariants()
    assert len(examined) == 3, "the first FOK dropped the 3,000 dead keys; later ones meet only the live three"
    assert book.depth(3)[1] == [(MID, 1, 1), (MID + 2, 2, 6)]


def test_the_hostile_pattern_of_cancels_then_a_fok_costs_no_full_compaction(monkeypatch: pytest.MonkeyPatch) -> None:
    # Review of the first version: it compacted all heaps (O(n)) after max_matches + 64 dead keys.
    compactions = []
    real = OrderBook._compact
    monkeypatch.setattr(OrderBook, "_compact", lambda self: (compactions.append(1), real(self)))
    book = OrderBook(SYM, budget=50)
    for i in range(20_000):
        book.submit(limit(f"k{i}", Side.SELL, 1, MID + 1_000 + i))
    for r in range(5):
        for j in range(120):
            book.submit(limit(f"d{r}_{j}", Side.SELL, 1, MID + j))
        for j in range(120):
            book.cancel(f"d{r}_{j}")
        book.submit(limit(f"F{r}", Side.BUY, 5_000, MID + 3_000, owner="bob", tif=TIF.FOK))
    assert compactions == []
    book.check_invariants()


@pytest.mark.parametrize("smp", list(SelfMatch))
def test_fok_pre_check_agrees_with_the_reference_on_crowded_levels(smp: SelfMatch) -> None:
    # Many orders per level, icebergs, own orders, dead keys: the level sums, the walk's early exits
    # and the budget (drawn per case) are exercised; NaiveBook plays the rule out on a copy of itself.
    rng = random.Random(list(SelfMatch).index(smp))
    outcomes = set()
    for case in range(60):
        budget = rng.choice((2, 5, 30, None))  # the budget reached, or not
        protection = rng.choice((1, 3, PROTECTION_TICKS))
        books = [OrderBook(SYM, budget=budget, protection=protection), NaiveBook(SYM, budget=budget, protection=protection)]
        ops: list[Order | str] = []
        for i in range(rng.randint(1, 120)):
            qty = rng.randint(1, 30)
            display = rng.randint(min_display_qty(qty), qty) if rng.random() < 0.3 else None
            owner = "me" if rng.random() < 0.15 else f"o{rng.randint(1, 5)}"
            ops.append(limit(f"r{i}", Side.SELL, qty, 100 + rng.randint(0, 6), owner=owner, display_qty=display))
            if rng.random() < 0.2:
                ops.append(f"r{rng.randint(0, i)}")
        need = rng.randint(1, 400)
        ops.append(limit("fok", Side.BUY, need, 100 + rng.randint(0, 6), owner="me", tif=TIF.FOK, smp=smp))
        results = []
        for book in books:
            for op in ops:
                if isinstance(op, str):
                    book.cancel(op)
                else:
                    book.submit(Order(**{f: getattr(op, f) for f in ("id", "symbol", "side", "order_type", "tif", "qty",
                                                                      "price", "stop_price", "display_qty", "owner", "smp")}))
            fok = book.get("fok")
            results.append(([(t.resting_order_id, t.qty) for kind, t in book.events if kind == "trade"],
                            [kind for kind, _ in book.events], book.depth(), fok))
            book.check_invariants()
        assert results[0] == results[1], f"case {case}"
        trades = results[0][0]
        assert sum(q for _, q in trades) in (0, need), "a FOK fills all of its qty or nothing"
        outcomes.add(bool(trades))
    assert outcomes == {True, False}, "the cases must include FOKs that fill and FOKs that are killed"


# ------------------------------------------------------------------ no match limit; price protection


def test_the_griefing_case_fills_what_the_book_holds() -> None:
    # Issue 26: ten icebergs of 100 showing 1 at a better price capped any order at 1,000 lots: a GTC buy
    # for 1,000,000 filled 1,000 and had 999,000 cancelled while 1,000,000 lots rested one tick behind.
    for budget in (None, WORK_BUDGET):
        for behind in ([1_000_000], [1_000] * 1_000):  # one order, or a thousand
            book = OrderBook(SYM, budget=budget)
            for i in range(10):
                book.submit(limit(f"ice{i}", Side.SELL, 100, MID, owner=f"g{i}", display_qty=1))
            for i, qty in enumerate(behind):
                book.submit(limit(f"big{i}", Side.SELL, qty, MID + 1))
            buy = limit("b", Side.BUY, 1_000_000, MID + 1, owner="bob")
            trades = book.submit(buy)
            assert buy.status is OrderStatus.FILLED and buy.filled_qty == 1_000_000
            assert len(trades) == 1_000 + len(behind) - (len(behind) > 1)  # 1,000 peaks, then what it needs behind
            assert sum(t.qty for t in trades if t.price == MID) == 1_000 and book.get("b") is None
            book.check_invariants()


def test_a_fillable_fok_for_5000_against_5000_one_lot_orders_fills() -> None:
    # Issue 26: it was killed untouched (5,000 fills needed, a match limit of 1,000).
    for budget in (None, WORK_BUDGET):
        book = OrderBook(SYM, budget=budget)
        for i in range(5_000):
            book.submit(limit(f"a{i}", Side.SELL, 1, MID + i % 7))
        fok = limit("f", Side.BUY, 5_000, MID + 6, owner="bob", tif=TIF.FOK)
        assert len(book.submit(fok)) == 5_000 and fok.status is OrderStatus.FILLED and len(book) == 0


def test_self_match_cancels_are_not_limited() -> None:
    book = OrderBook(SYM, budget=3)
    for i in range(50):
        book.submit(limit(f"own{i}", Side.SELL, 1, MID, owner="x"))
    book.submit(limit("theirs", Side.SELL, 5, MID))
    buy = limit("b", Side.BUY, 10, MID + 1, owner="x", smp=SelfMatch.CANCEL_OLDEST)
    assert [t.qty for t in book.submit(buy)] == [5]
    assert [kind for kind, _ in book.events] == ["cancelled"] * 50 + ["trade"]  # the order's own work: all of it
    assert buy.status is OrderStatus.PARTIALLY_FILLED and book.get("b") is not None
    book.check_invariants()


def test_a_market_order_sweeps_up_to_its_protection_price_and_cancels_its_rest() -> None:
    book = ladder(1_500)
    trades = book.submit(market("m", Side.BUY, 10_000))
    assert len(trades) == PROTECTION_TICKS + 1 and trades[-1].price == MID + PROTECTION_TICKS
    m = book.events[-1][1]
    assert book.events[-1][0] == "cancelled" and m.id == "m" and m.cancel_reason is CancelReason.PRICE_PROTECTION
    assert (m.filled_qty, m.remaining_qty) == (PROTECTION_TICKS + 1, 10_000 - PROTECTION_TICKS - 1)
    assert book.best_ask() == MID + PROTECTION_TICKS + 1
    book.check_invariants()


def test_a_gtc_limit_stopped_by_its_protection_price_rests_there() -> None:
    for make in (OrderBook, NaiveBook):
        book = make(SYM, protection=3)
        for i in range(10):
            book.submit(limit(f"a{i}", Side.SELL, 1, MID + i))
        buy = limit("b", Side.BUY, 10, MID + 9, owner="bob")
        assert len(book.submit(buy)) == 4  # MID..MID+3
        assert buy.price == MID + 3 and buy.status is OrderStatus.PARTIALLY_FILLED and buy.remaining_qty == 6
        assert book.best_bid() == MID + 3 and book.best_ask() == MID + 4
        ioc = limit("i", Side.SELL, 20, MID - 50, owner="cat", tif=TIF.IOC)
        assert [t.price for t in book.submit(ioc)] == [MID + 3]  # the rest at MID+3 is a bid like any other
        assert ioc.cancel_reason is CancelReason.IOC_REMAINDER  # nothing left to cross: not cut
        book.check_invariants()


def test_an_ioc_stopped_by_its_protection_price_says_so() -> None:
    for make in (OrderBook, NaiveBook):
        book = make(SYM, protection=1)
        for i in range(3):
            book.submit(limit(f"a{i}", Side.SELL, 1, MID + 2 * i))
        ioc = limit("i", Side.BUY, 5, MID + 4, owner="bob", tif=TIF.IOC)
        assert [t.price for t in book.submit(ioc)] == [MID]
        assert ioc.cancel_reason is CancelReason.PRICE_PROTECTION and ioc.remaining_qty == 4


# ------------------------------------------------------------------ depth(k)


def test_popped_up_to_yields_the_keys_up_to_the_limit_in_order_and_leaves_the_rest_a_heap() -> None:
    rng = random.Random(7)
    for _ in range(200):
        heap = rng.sample(range(-500, 500), rng.randint(0, 60))
        book_module.heapify(heap)
        before = sorted(heap)
        bound = rng.randint(-600, 600)
        assert list(_popped_up_to(heap, bound)) == [k for k in before if k <= bound]
        assert sorted(heap) == [k for k in before if k > bound]
        assert all(heap[(i - 1) // 2] <= heap[i] for i in range(1, len(heap)))


def test_depth_of_k_levels_matches_the_full_sorted_depth() -> None:
    rng = random.Random(3)
    book = OrderBook(SYM)
    live: list[str] = []
    for i in range(3_000):
        side = rng.choice((Side.BUY, Side.SELL))
        price = MID + (rng.randint(1, 300) if side is Side.SELL else -rng.randint(1, 300))
        qty = rng.randint(1, 50)
        display = rng.randint(min_display_qty(qty), qty) if rng.random() < 0.2 else None
        book.submit(limit(f"o{i}", side, qty, price, owner=f"w{i % 7}", display_qty=display))
        live.append(f"o{i}")
        if rng.random() < 0.4:
            book.cancel(rng.choice(live))
        if i % 300 == 0:
            full_bids, full_asks = book.depth()
            for k in (0, 1, 2, 5, 20, 299, 301, 10_000):
                assert book.depth(k) == (full_bids[:k], full_asks[:k])
    book.check_invariants()


def test_depth_of_20_examines_about_20_entries_on_a_deep_book(examined: list[int]) -> None:
    # Issue 15: a snapshot sorted all 100k levels (3.6 ms) to return 20.
    book = ladder(5_000)
    book._bid_levels = CountingDict(book._bid_levels)
    book._ask_levels = CountingDict(book._ask_levels)
    bids, asks = book.depth(20)
    assert asks == [(MID + i, 1, 1) for i in range(20)] and bids == [(MID - 1 - i, 1, 1) for i in range(20)]
    assert len(examined) == 40 and book._bid_levels.passes == book._ask_levels.passes == 0


def test_depth_walks_prices_not_orders_when_the_top_is_crowded(examined: list[int]) -> None:
    book = OrderBook(SYM)
    for i in range(2_000):  # 2,000 orders at one price: a walk of the order heap would meet them all
        book.submit(limit(f"a{i}", Side.SELL, 1, MID))
    for i in range(1, 3_000):
        book.submit(limit(f"far{i}", Side.SELL, 1, MID + i))
    book._ask_levels = CountingDict(book._ask_levels)
    assert book.depth(2) == ([], [(MID, 2_000, 2_000), (MID + 1, 1, 1)])
    assert len(examined) == 2 and book._ask_levels.passes == 0


def test_stale_price_entries_are_walked_once_then_dropped(examined: list[int]) -> None:
    rng = random.Random(5)
    book = OrderBook(SYM)
    for i in range(400):
        book.submit(limit(f"keep{i}", Side.SELL, 1, MID + 1_000 + i))
    for round_ in range(30):  # levels made and emptied at the top, again and again
        ids = [f"t{round_}_{j}" for j in range(50)]
        for oid in ids:
            book.submit(limit(oid, Side.SELL, 1, MID + rng.randint(0, 300)))
        for oid in ids:
            book.cancel(oid)
        book.check_invariants()
        examined.clear()
        full = book.depth()[1]
        assert book.depth(5)[1] == full[:5]
        assert book.depth(5)[1] == full[:5]
        assert len(examined) <= 50 + 2 * 5, "the first walk drops what is stale; the second meets only the 5"
        assert len(book._ask_prices) <= 2 * 450 + 64 + 1


def test_levels_made_and_emptied_at_the_top_cost_depth_no_rebuild(monkeypatch: pytest.MonkeyPatch,
                                                                   examined: list[int]) -> None:
    # Review of the first version: 66 levels made and emptied at the top forced an O(L) rebuild of
    # the price heap on every depth(1) (8-11 ms at 100k levels, repeatable every 132 messages).
    rebuilds = []
    real = OrderBook._compact_prices
    monkeypatch.setattr(OrderBook, "_compact_prices", lambda self, is_bid: (rebuilds.append(is_bid), real(self, is_bid)))
    book = OrderBook(SYM)
    for i in range(20_000):
        book.submit(limit(f"k{i}", Side.SELL, 1, MID + 1_000 + i))
    for r in range(5):
        for j in range(66):
            book.submit(limit(f"t{r}_{j}", Side.SELL, 1, MID + j))
            book.cancel(f"t{r}_{j}")
        examined.clear()
        assert book.depth(1)[1] == [(MID + 1_000, 1, 1)]
        assert len(examined) == 66 + 1
    assert rebuilds == []


# ------------------------------------------------------------------ memory and the benchmark


def test_resting_order_bytes_is_measured_and_at_least_the_order_itself() -> None:
    import sys

    per_order = book_bounds.resting_order_bytes(2_000)
    assert per_order > sys.getsizeof(limit("x", Side.BUY, 1, 1))


def test_the_bounds_benchmark_runs_and_prints_every_row(capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(book_bounds, "QUICK_SIZES", (600, 1_200))  # behaviour, not figures
    monkeypatch.setattr(book_bounds, "QUICK_COMPACTION_SIZES", (600, 1_200))
    assert book_bounds.run(quick=True) == 0
    out = capsys.readouterr().out
    with capsys.disabled():
        print("\n" + out)
    for pattern in book_bounds.patterns():
        assert pattern.name in out and pattern.before in out
    assert out.count("    verdict: ") == len(book_bounds.patterns())
    assert out.count("without a budget: ") == 2 * len(book_bounds.patterns())
    for row in ("refused on entry", "into iceberg display_qty 100", "pending stops", "FOK 1 lot", "depth(20)",
                "one resting order", "quoted from its table", "griefing case", "filled 1,000,000 in 1,001 trades",
                "FOK for 5,000 against 5,000 one-lot orders: FILLED, 5,000 trades", "per trade"):
        assert row in out, row


def test_each_pattern_takes_a_budget_per_call_at_both_sizes() -> None:
    """Issue 26's patterns, counted: no call (the message, or one maintenance call) emits more than a
    budget's worth of frames plus one stop's own run, at either size; without a budget one call does it all."""
    for pattern in book_bounds.patterns()[:2]:  # the cascade and the mass cancel: the ones that leave work
        for n in (1_200, 3_000):
            run = pattern.build(n, WORK_BUDGET)
            assert run.events_max <= WORK_BUDGET + 3 and len(run.maintenance) >= n // WORK_BUDGET - 1
            unbounded = pattern.build(n, None)
            assert unbounded.maintenance == [] and unbounded.events_max >= n


def test_with_a_budget_compaction_goes_a_slice_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: the one cancel that broke the bound rebuilt every heap, O(live) (0.65-1.25 s at a million).
    With a budget it starts a pass; each maintain() removes at most a slice's worth, and the heaps end
    within the bound, a valid heap after every slice."""
    from edumatcher.book import COMPACT_INLINE_MAX, COMPACT_SLICE

    full = []
    monkeypatch.setattr(OrderBook, "_compact", lambda self: full.append(1))
    book = OrderBook(SYM, budget=WORK_BUDGET)
    n = 3 * COMPACT_INLINE_MAX
    for i in range(2 * n):
        book.submit(limit(f"o{i}", Side.BUY if i % 2 else Side.SELL, 1, MID + (-1 - i % 300 if i % 2 else 1 + i % 300)))
    i = 0
    while book._pass is None:
        assert book.cancel(f"o{i}")
        i += 1
    assert i > n and book.needs_maintenance() and full == []
    calls = 0
    while book.needs_maintenance():
        dead = book._dead
        book.maintain()
        calls += 1
        assert dead - book._dead <= COMPACT_SLICE // 8  # each removal moves at least one level
        book.check_invariants()
    assert full == [] and calls > 4 and book.heap_entries() == len(book)
