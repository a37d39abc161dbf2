"""``LeanBook`` (the speed goals' limit) does the same matching work as ``OrderBook`` on the bench workload.

Issue 26: a limit is fair only if it matches the same flow into the same fills. These
tests compare every trade (sequence, price, quantity, both ids, both owners, aggressor
side), every cancel's outcome and the live count after every operation, and the two
bench loops (``apply_lean``, ``apply_building``) feed both books the same operations.
"""

from __future__ import annotations

import pytest

from edumatcher import workloads
from edumatcher.benchmarks.heap_book_goal import apply_building
from edumatcher.benchmarks.lean_book import LeanBook, apply_lean
from edumatcher.book import OrderBook
from edumatcher.model import Side


def _trade_tuple(t) -> tuple:
    return (t.seq, t.price, t.qty, t.buy_order_id, t.sell_order_id, t.buy_owner, t.sell_owner, t.aggressor_side is Side.BUY)


@pytest.mark.parametrize("seed", [1, 2, 7])
def test_lean_book_gives_orderbooks_fills_op_by_op(seed: int) -> None:
    ops = workloads.standard(20_000, seed)
    lean, book = LeanBook(workloads.SYMBOL), OrderBook(workloads.SYMBOL)
    n_trades = 0
    for op in ops:
        if op[0] == workloads.NEW:
            got = lean.submit(op[1], op[2] == "BUY", op[5], op[6], op[7])
            want = [_trade_tuple(t) for t in book.submit(workloads.to_order(op))]
            assert got == want, op
            n_trades += len(got)
        else:
            assert op[0] == workloads.CANCEL
            assert lean.cancel(op[1]) is book.cancel(op[1]), op
        assert len(lean) == len(book)
        assert lean.last_price == book.last_price
    assert n_trades > 1_000  # the flow trades a lot: the comparison is not vacuous


def test_bench_loops_feed_both_books_the_same_work() -> None:
    ops = workloads.standard(20_000, 1)
    lean = apply_lean(LeanBook(workloads.SYMBOL), ops)
    full = apply_building(OrderBook(workloads.SYMBOL), ops)
    assert lean == full
    assert lean.trades > 0 and lean.cancelled > 0 and lean.cancel_misses > 0


def test_lean_book_compacts_and_still_agrees() -> None:
    # A cancel-heavy flow crosses the lean book's compaction bound many times.
    ops = workloads.cancel_heavy(20_000, 3)
    ops = [op for op in ops if op[0] in (workloads.NEW, workloads.CANCEL)
           and (op[0] != workloads.NEW or (op[3], op[4]) == ("LIMIT", "GTC"))]
    assert apply_lean(LeanBook(workloads.SYMBOL), ops) == apply_building(OrderBook(workloads.SYMBOL), ops)
