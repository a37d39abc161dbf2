"""``LeanBook``: the leanest heap book we could write in pure Python, the limit the speed goals are judged against.

Issue 26: ``BareBook`` strips ``OrderBook``'s features but keeps its data (``Order``
objects, ``Trade`` objects, int keys mapped to orders), so it shows what the features
cost, a fair lesson; it is not the fastest a pure-Python book can be. This one keeps
nothing a price-time book does not need:

* heap entries are tuples ``(k0, seq, order_id)`` (``k0`` is ``-price`` for bids,
  ``price`` for asks), compared by ``k0`` then ``seq`` (unique), so the id is never
  compared;
* the one dict maps an order id to its entry, a list ``[remaining, owner]`` built
  positionally; a cancel deletes the id, and its heap tuple is dropped when it reaches a
  top (lazy deletion, as in the other books) or by compaction (``2 * live + 64``);
* a trade is a tuple ``(seq, price, qty, buy_id, sell_id, buy_owner, sell_owner,
  aggressor_is_buy)``: what a ``Trade`` says, with no ``Trade``; no ``Order``, no
  enums, no events, no validation; GTC limit orders and cancels only.

It prints exactly the trades ``OrderBook`` and ``BareBook`` print on such a flow (the
benchmarks check the counts on every pass).

>>> book = LeanBook("XYZ")
>>> book.submit("s1", False, 101, 5, "ann")
[]
>>> book.submit("b1", True, 102, 3, "bob")
[(1, 101, 3, 'b1', 's1', 'bob', 'ann', True)]
>>> book.cancel("s1"), book.cancel("s1"), len(book)
(True, False, 0)
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush
from typing import Any

from .. import workloads

__all__ = ["LeanBook", "apply_lean"]


class LeanBook:
    """Price-time matching of GTC limit orders on two heaps of tuples; the caller guarantees valid input."""

    __slots__ = ("symbol", "last_price", "_bids", "_asks", "_orders", "_seq", "_trade_seq", "_dead")

    def __init__(self, symbol: str) -> None:
        self.symbol = symbol
        self.last_price: int | None = None
        self._bids: list[tuple[int, int, str]] = []
        self._asks: list[tuple[int, int, str]] = []
        self._orders: dict[str, list[Any]] = {}  # order id -> [remaining, owner]; an id not here is dead
        self._seq = 0
        self._trade_seq = 0
        self._dead = 0

    def submit(self, order_id: str, is_buy: bool, price: int, qty: int, owner: str) -> list[tuple[Any, ...]]:
        """Match a GTC limit order, rest its remainder; return the trades. O(log n) per trade and rest."""
        trades: list[tuple[Any, ...]] = []
        orders = self._orders
        if is_buy:
            heap, bound = self._asks, price
        else:
            heap, bound = self._bids, -price
        tseq = self._trade_seq
        while heap:
            k0, _, rid = heap[0]
            entry = orders.get(rid)
            if entry is None:  # cancelled: dropped on the way
                heappop(heap)
                self._dead -= 1
                continue
            if k0 > bound:
                break
            rest = entry[0]
            q = qty if qty < rest else rest
            tseq += 1
            if is_buy:
                trades.append((tseq, k0, q, order_id, rid, owner, entry[1], True))
            else:
                trades.append((tseq, -k0, q, rid, order_id, entry[1], owner, False))
            if q == rest:
                heappop(heap)
                del orders[rid]
            else:
                entry[0] = rest - q
            qty -= q
            if not qty:
                break
        if trades:
            self._trade_seq = tseq
            self.last_price = trades[-1][1]
        if qty:
            self._seq = seq = self._seq + 1
            orders[order_id] = [qty, owner]
            if is_buy:
                heappush(self._bids, (-price, seq, order_id))
            else:
                heappush(self._asks, (price, seq, order_id))
        return trades

    def cancel(self, order_id: str) -> bool:
        """Cancel a resting order: its id leaves the dict, its heap tuple is dead (lazy deletion). Amortised O(1)."""
        if self._orders.pop(order_id, None) is None:
            return False
        self._dead += 1
        if self._dead > len(self._orders) + 64:  # total entries > 2 * live + 64
            orders = self._orders
            for heap in (self._bids, self._asks):
                heap[:] = [e for e in heap if e[2] in orders]
                heapify(heap)
            self._dead = 0
        return True

    def __len__(self) -> int:
        """Resting orders. O(1)."""
        return len(self._orders)


def apply_lean(book: LeanBook, ops: list[workloads.Op]) -> workloads.Tally:
    """Apply ``"new"`` and ``"cancel"`` operations to a ``LeanBook``, straight from the operation tuples. O(n).

    The lean contender's loop in the issue's conditions: where the other books build an
    ``Order`` per operation (``heap_book_goal.apply_building``), it passes the fields
    positionally, because it has no order object to build.

    >>> apply_lean(LeanBook(workloads.SYMBOL), workloads.standard(200, seed=1)).trades > 0
    True
    """
    submit, cancel = book.submit, book.cancel
    trades = cancelled = misses = 0
    for op in ops:
        if op[0] == workloads.NEW:
            _, order_id, side, _type, _tif, price, qty, owner = op
            trades += len(submit(order_id, side == "BUY", price, qty, owner))
        elif op[0] == workloads.CANCEL:
            if cancel(op[1]):
                cancelled += 1
            else:
                misses += 1
        else:
            raise ValueError(f"the lean book takes new orders and cancels only, not {op!r}")
    return workloads.Tally(trades, 0, cancelled, misses, 0)
